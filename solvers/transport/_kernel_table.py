"""The kernel-table class for the transport and memory areas.

``solvers._lib.kernels.KernelTable`` is the one implementation (issue 14); until it is on
this branch a minimal stand-in with the same interface (``get``, ``has``, ``names``) is
used. Remove the fallback once ``_lib/kernels.py`` is merged.
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


__all__ = ["KernelTable", "backend_arg"]
