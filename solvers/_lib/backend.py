"""Backend resolution: which implementation of a kernel runs.

``backend`` is one of

``"auto"``
    follow the inputs: numpy arrays use the Numba kernels, cupy arrays the CuPy kernels,
    any other Array API namespace the generic ``xp`` code;
``"numpy"``
    the generic code on numpy (no compilation; the reference for the fast paths);
``"numba"``
    the Numba kernels; needs numpy inputs;
``"cupy"``
    the CuPy kernels; needs a usable CUDA GPU. numpy inputs are moved to the device and the
    results come back as numpy (the user asked for it explicitly).

A request that cannot be met raises a ``ValueError`` naming the reason; device arrays are
never converted to numpy silently.
"""
from dataclasses import dataclass
import functools
import importlib

from .namespace import is_numpy_namespace, is_cupy_namespace

BACKENDS = ("auto", "numpy", "numba", "cupy")


@dataclass(frozen=True)
class Backend:
    """A resolved backend.

    Attributes
    ----------
    name : str
        ``"numba"``, ``"cupy"`` or ``"generic"`` -- which kernel implementation runs.
    xp : module
        The namespace the computation runs in.
    input_xp : module
        The namespace of the user's arrays; results are returned in it.
    """

    name: str
    xp: object
    input_xp: object

    @property
    def moves_data(self):
        """True when inputs must be moved to ``xp`` and results moved back."""
        return self.xp is not self.input_xp

    def to_device(self, x):
        """Move an input array to the computing namespace (a no-op unless ``moves_data``)."""
        if x is None or not self.moves_data:
            return x
        return self.xp.asarray(x)

    def to_input(self, x):
        """Move a result back to the user's namespace (cupy -> numpy only when asked)."""
        if x is None or not self.moves_data:
            return x
        return _cupy().asnumpy(x)


@functools.cache
def gpu_available():
    """Whether cupy imports *and* a CUDA device runs a tiny kernel (probed once, cached).

    ``import cupy`` succeeds on machines without a GPU or driver, so an import is not proof.
    """
    try:
        cupy = importlib.import_module("cupy")
        if not cupy.cuda.is_available():
            return False
        x = cupy.arange(4, dtype=cupy.float64)
        return float((x * x).sum().get()) == 14.0
    except Exception:  # any failure (no driver, no device, broken install) means "no GPU"
        return False


@functools.cache
def numba_available():
    """Whether numba imports (it is a dependency, but a broken install should degrade)."""
    try:
        importlib.import_module("numba")
        return True
    except Exception:
        return False


def _cupy():
    import cupy  # lazy on purpose: never at package import

    return cupy


def resolve_backend(backend, xp):
    """Resolve the user's ``backend`` argument for inputs living in namespace ``xp``.

    Parameters
    ----------
    backend : {"auto", "numpy", "numba", "cupy"}
    xp : module
        Namespace of the inputs (from :func:`array_namespace`).

    Returns
    -------
    Backend

    Raises
    ------
    ValueError
        Unknown backend, cupy requested without a usable GPU, or numba requested for
        non-numpy arrays.
    """
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")
    on_numpy = is_numpy_namespace(xp)
    on_cupy = is_cupy_namespace(xp)
    if backend == "auto":
        if on_numpy:
            return Backend("numba" if numba_available() else "generic", xp, xp)
        if on_cupy:
            return Backend("cupy", xp, xp)
        return Backend("generic", xp, xp)
    if backend == "numpy":
        if not on_numpy:
            raise ValueError(
                f"backend='numpy' needs numpy arrays, got arrays from {xp.__name__}; "
                "use backend='auto' to run the generic code on them")
        return Backend("generic", xp, xp)
    if backend == "numba":
        if not on_numpy:
            raise ValueError(
                f"backend='numba' needs numpy arrays, got arrays from {xp.__name__}")
        if not numba_available():
            raise ValueError("backend='numba' requested but numba cannot be imported")
        return Backend("numba", xp, xp)
    # backend == "cupy"
    if not gpu_available():
        raise ValueError(
            "backend='cupy' requested but no usable CUDA GPU was found (cupy is not "
            "installed, or it cannot run a kernel on a device); install the 'gpu' extra "
            "on a machine with a GPU, or use backend='auto'")
    if on_cupy:
        return Backend("cupy", xp, xp)
    if on_numpy:
        import array_api_compat.cupy as cp_compat

        return Backend("cupy", cp_compat, xp)
    raise ValueError(f"backend='cupy' needs numpy or cupy arrays, got {xp.__name__}")


def backend_arg(be):
    """The ``backend=`` string that selects the resolved backend ``be`` again for arrays of
    ``be.xp`` (to hand on to another entry point, e.g. ``logsumexp(..., backend=...)``)."""
    if be.name == "generic":
        return "numpy" if is_numpy_namespace(be.xp) else "auto"
    return be.name
