"""Kernel tables: the one place where a backend chooses an implementation.

Each area declares its hot inner operations once, in a small module next to the algorithm
(``_cbo_kernels.py``, ``_lse_kernels.py``, ...)::

    KERNELS = KernelTable(__package__,
        consensus_update={"numba": "._cbo_numba:update", "cupy": "._cbo_cupy:update"},
        gibbs_weights={"numba": "._cbo_numba:weights"},      # no cupy entry -> generic
    )

and the algorithm, written once against ``xp``, asks the table::

    update = KERNELS.get("consensus_update", be, generic=_update_xp)

The algorithm never asks which backend it runs on. A kernel is one inner operation (a fused
update, a reduction), never a whole algorithm a second time; its generic twin is the
reference it is tested against (NaN, +-inf, empty and float32 inputs included).

Implementations are named as ``"module:attribute"`` strings (relative to the area's package
when they start with a dot) and imported on first use, so a Numba or CuPy module is never
imported unless its backend runs. A backend without an entry falls back to the generic
implementation.
"""
import importlib

__all__ = ["KernelTable"]

#: backend names a table may hold an entry for (``Backend.name`` values)
KERNEL_BACKENDS = ("numba", "cupy", "generic")


class KernelTable:
    """Operation name -> implementation per backend, resolved lazily and cached.

    Parameters
    ----------
    package : str
        The area's package (``__package__`` of the table module); relative module paths
        are resolved against it.
    **operations : dict
        ``name={"numba": "module:attr", "cupy": ..., "generic": ...}``; a value may also be
        the callable itself.
    """

    def __init__(self, package, **operations):
        for name, entries in operations.items():
            unknown = set(entries) - set(KERNEL_BACKENDS)
            if unknown:
                raise ValueError(f"kernel {name!r}: unknown backend(s) {sorted(unknown)}; "
                                 f"a table holds {KERNEL_BACKENDS}")
        self.package = package
        self.operations = {name: dict(entries) for name, entries in operations.items()}
        self._cache = {}

    def __contains__(self, name):
        return name in self.operations

    def names(self):
        """The operation names this table declares."""
        return tuple(self.operations)

    def has(self, name, backend):
        """True when ``backend`` (a :class:`Backend` or its name) has its own kernel."""
        return _backend_name(backend) in self.operations.get(name, {})

    def get(self, name, backend, generic=None):
        """The implementation of ``name`` for ``backend``.

        Parameters
        ----------
        name : str
            A declared operation.
        backend : Backend or str
            The resolved backend (``Backend.name`` is used).
        generic : callable, optional
            The generic ``xp`` implementation, used when the backend has no entry (and when
            the table declares no ``"generic"`` entry itself).

        Raises
        ------
        KeyError
            ``name`` is not declared.
        LookupError
            No entry for the backend and no generic implementation.
        """
        if name not in self.operations:
            raise KeyError(f"no kernel {name!r}; this table declares {self.names()}")
        entries = self.operations[name]
        backend_name = _backend_name(backend)
        target = entries.get(backend_name, entries.get("generic", generic))
        if target is None:
            raise LookupError(f"kernel {name!r} has no {backend_name!r} implementation "
                              "and no generic fallback")
        return self._load(target)

    def _load(self, target):
        if callable(target):
            return target
        if target not in self._cache:
            self._cache[target] = self._import(target)
        return self._cache[target]

    def _import(self, target):
        module_name, _, attribute = target.partition(":")
        module = importlib.import_module(module_name, self.package)
        return getattr(module, attribute)


def _backend_name(backend):
    return backend if isinstance(backend, str) else backend.name
