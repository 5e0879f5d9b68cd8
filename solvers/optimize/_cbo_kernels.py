"""The CBO kernel table: one line per hot inner operation, resolved from the backend.

The algorithm (:mod:`solvers.optimize.cbo`) asks this table for an operation and never
tests which backend it runs on. Each entry names the Numba and CuPy implementations
(``"module:function"``, imported on first use); a backend without one gets the generic
``xp`` function, which is the reference the fast ones are tested against.

``kernel_table`` is a local stand-in for the shared ``solvers._lib.kernels`` helper.
"""
import importlib

__all__ = ["KERNELS", "kernel_table"]


class _KernelTable:
    def __init__(self, entries, settings):
        self._entries = entries
        self._settings = settings

    def get(self, name, backend, generic):
        """The implementation of ``name`` for ``backend`` (a resolved Backend), else
        ``generic``."""
        spec = self._entries[name].get(backend.name)
        if spec is None:
            return generic
        module, func = spec.split(":")
        return getattr(importlib.import_module(module, __package__), func)

    def setting(self, name, backend, default):
        """A per-backend tunable (e.g. how often the host syncs)."""
        return self._settings.get(name, {}).get(backend.name, default)


def kernel_table(settings=None, **entries):
    """Build a table ``op name -> {backend name: "module:function"}``."""
    return _KernelTable(entries, settings or {})


KERNELS = kernel_table(
    settings={"sync_every": {"cupy": 10}},
    # Gibbs weights softmax(-alpha (E - min E)) per run, alpha by ESS bisection if asked
    gibbs_weights={"numba": "._cbo_numba:gibbs_weights"},
    # drift toward the consensus plus diagonal / isotropic noise, and the spread
    move={"numba": "._cbo_numba:move", "cupy": "._cbo_cupy:move"},
    # points reflected into the box [lb, ub]
    reflect={"numba": "._cbo_numba:reflect"},
    # non-finite energies -> +inf (counted), best point ever and best of this start
    track_best={"numba": "._cbo_numba:track_best"},
    # consensus points of (M, N, d) particles (the public ``consensus``)
    consensus={"numba": "._cbo_numba:consensus"},
)
