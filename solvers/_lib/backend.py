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

Small inputs under ``"auto"``
-----------------------------
A Numba kernel costs a compilation (a fraction of a second to a few seconds) the first
time it runs on a machine; the generic code costs nothing up front. So a backend chosen by
``"auto"`` records it (``Backend.auto``), and a kernel table may then serve inputs below a
declared size with the kernel's generic twin (see :mod:`solvers._lib.kernels`): a small
first call answers at once instead of waiting for the compiler. An explicit
``backend="numba"`` always runs the Numba kernels. :meth:`Backend.for_size` applies the
same rule where a step hands its arrays on to another entry point, and
:func:`backend_arg` keeps ``"auto"`` for it, so the callee decides with its own thresholds.
"""
from dataclasses import dataclass
import functools
import importlib
import importlib.util

import numpy as np

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
    auto : bool
        True when ``backend="auto"`` chose it: kernel tables may then serve small inputs
        with the generic twin (:meth:`for_size`). False for an explicit request (the
        default, so ``Backend(name, xp, input_xp)`` keeps its meaning).
    """

    name: str
    xp: object
    input_xp: object
    auto: bool = False

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

    @property
    def on_host(self):
        """True when the computation runs on host numpy arrays (Numba or generic numpy)."""
        return is_numpy_namespace(self.xp)

    def host(self):
        """The backend for the same call on host numpy arrays.

        This backend when it already computes on numpy; otherwise Numba on numpy (generic
        numpy when Numba cannot be imported). For steps that run on the host on purpose (a
        small local search, a topological sort) whatever the user's arrays are.
        """
        if self.on_host:
            return self
        xp = _numpy_namespace()
        return Backend("numba" if numba_available() else "generic", xp, xp, self.auto)

    def generic(self):
        """The generic ``xp`` code on the same namespaces (no Numba or CuPy kernels): what
        a kernel's generic twin calls so that it stays the reference. Derived from a
        kernel backend it is an explicit choice (``auto`` False), so :func:`backend_arg`
        hands on ``"numpy"`` for it on numpy arrays."""
        return self if self.name == "generic" else Backend("generic", self.xp, self.input_xp)

    def for_size(self, size, generic_below):
        """This backend, or :meth:`generic` for a small input under ``"auto"``.

        The rule of the kernel tables' ``generic_below`` thresholds
        (:meth:`solvers._lib.kernels.KernelTable.get`), for a step that hands its arrays on
        to another entry point as a whole: Numba chosen by ``"auto"`` with ``size <
        generic_below`` gives the generic code (nothing to compile); any other backend,
        an explicit one included, is returned unchanged.
        """
        if self.auto and self.name == "numba" and size < generic_below:
            return self.generic()
        return self

    def asarray(self, values, dtype=None):
        """Host values (a list, a numpy array, Python scalars) as an array of ``xp``."""
        if self.on_host:
            return np.asarray(values, dtype=dtype)
        return self.xp.asarray(values, dtype=dtype)

    def to_result(self, x, dtype=None):
        """An output as an array of the user's namespace ``input_xp``.

        ``x`` may be an array of ``xp`` (moved back as :meth:`to_input` does) or a host
        numpy array computed on purpose on the host (then converted into the user's
        namespace: a cupy user gets a cupy array). ``dtype`` (a dtype of ``input_xp``)
        casts it; ``None`` keeps the dtype.
        """
        if x is None:
            return None
        if is_numpy_namespace(self.input_xp):
            x = self.to_input(x) if not isinstance(x, np.ndarray) else x
            return np.asarray(x, dtype=dtype)
        out = self.input_xp.asarray(x) if isinstance(x, np.ndarray) else x
        return out if dtype is None else self.input_xp.astype(out, dtype, copy=False)


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
    """Whether numba is installed (a dependency, but an install without it degrades to the
    generic code).

    Found, not imported: importing numba costs a quarter of a second, and a small first
    call under ``"auto"`` may need none of it (the kernel tables import it with the first
    kernel that runs).
    """
    try:
        return importlib.util.find_spec("numba") is not None
    except (ImportError, ValueError):
        return False


def _numpy_namespace():
    import array_api_compat.numpy as np_compat

    return np_compat


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
            return Backend("numba" if numba_available() else "generic", xp, xp, auto=True)
        if on_cupy:
            return Backend("cupy", xp, xp, auto=True)
        return Backend("generic", xp, xp, auto=True)
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
    ``be.xp`` (to hand on to another entry point, e.g. ``logsumexp(..., backend=...)``).

    ``"auto"`` for a backend ``"auto"`` chose (it resolves to the same kernels there, and
    lets the callee serve small inputs without compiling); the explicit name otherwise.
    """
    if be.auto and be.xp is be.input_xp:
        return "auto"
    if be.name == "generic":
        return "numpy" if is_numpy_namespace(be.xp) else "auto"
    return be.name
