"""The shared ``_lib`` plumbing the transport and memory areas use, in one import place.

``solvers._lib.kernels.KernelTable`` and ``solvers._lib.host.to_host`` are the one
implementations (issue 14); until they are on this branch minimal stand-ins with the same
interface are used. Remove the fallbacks once ``_lib/kernels.py`` / ``_lib/host.py`` are
merged.
"""
try:
    from .._lib.kernels import KernelTable
except ImportError:  # pragma: no cover - only before the shared module lands
    import importlib

    class KernelTable:
        """Operation name -> ``"module:attr"`` (or callable) per backend name."""

        def __init__(self, package, **operations):
            self.package = package
            self.operations = {k: dict(v) for k, v in operations.items()}
            self._cache = {}

        def names(self):
            return tuple(self.operations)

        def has(self, name, backend):
            b = backend if isinstance(backend, str) else backend.name
            return b in self.operations.get(name, {})

        def get(self, name, backend, generic=None):
            if name not in self.operations:
                raise KeyError(f"no kernel {name!r}; this table declares {self.names()}")
            entries = self.operations[name]
            b = backend if isinstance(backend, str) else backend.name
            target = entries.get(b, entries.get("generic", generic))
            if target is None:
                raise LookupError(f"kernel {name!r} has no {b!r} implementation")
            if callable(target):
                return target
            if target not in self._cache:
                mod, _, attr = target.partition(":")
                self._cache[target] = getattr(importlib.import_module(mod, self.package), attr)
            return self._cache[target]



def backend_arg(be):
    """The ``backend=`` string that selects the resolved backend ``be`` again for arrays
    of ``be.xp`` (to pass on to another entry point, e.g. ``logsumexp``)."""
    from .._lib.namespace import is_numpy_namespace

    if be.name == "generic":
        return "numpy" if is_numpy_namespace(be.xp) else "auto"
    return be.name


try:
    from .._lib.host import to_host
except ImportError:  # pragma: no cover - only before the shared module lands
    def to_host(x):
        """A numpy array holding the values of ``x`` (explicit device -> host copy)."""
        import numpy as np

        if x is None or isinstance(x, np.ndarray):
            return x
        get = getattr(x, "get", None)
        if callable(get) and type(x).__module__.startswith("cupy"):
            return get()
        if hasattr(x, "__dlpack__"):
            return np.from_dlpack(x)
        return np.asarray(x)


__all__ = ["KernelTable", "backend_arg", "to_host"]
