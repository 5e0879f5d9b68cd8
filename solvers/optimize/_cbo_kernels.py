"""The CBO kernel table: one line per hot inner operation, resolved from the backend.

The algorithm (:mod:`._cbo_solver`) asks this table for an operation and never tests which
backend it runs on. Each entry names the Numba and CuPy implementations (imported on first
use) and the generic ``xp`` function of :mod:`._cbo_generic`, which is what a backend
without its own entry runs and the reference the fast ones are tested against.
``SYNC_EVERY`` says how often the host reads device scalars for the stopping tests (a GPU
run syncs every 10 steps).
"""
from .._lib.kernels import KernelTable

__all__ = ["KERNELS", "SYNC_EVERY"]

KERNELS = KernelTable(
    __package__,
    # Gibbs weights softmax(-alpha (E - min E)) per run, alpha by ESS bisection if asked
    gibbs_weights={"numba": "._cbo_numba:gibbs_weights",
                   "generic": "._cbo_generic:gibbs_weights"},
    # the same weights and the consensus sum_i w_i P_i in one pass
    gibbs_consensus={"numba": "._cbo_numba:gibbs_consensus",
                     "generic": "._cbo_generic:gibbs_consensus"},
    # drift toward the consensus plus diagonal / isotropic noise, and the spread
    move={"numba": "._cbo_numba:move", "cupy": "._cbo_cupy:move",
          "generic": "._cbo_generic:move"},
    # points reflected into the box [lb, ub]
    reflect={"numba": "._cbo_numba:reflect", "generic": "._cbo_bounds:reflect"},
    # non-finite energies -> +inf (counted), best point of each run of this start
    track_best={"numba": "._cbo_numba:track_best", "generic": "._cbo_generic:track_best"},
    # consensus points of (M, N, d) particles (the public ``consensus``)
    consensus={"numba": "._cbo_numba:consensus", "generic": "._cbo_generic:consensus"},
)

#: host syncs for the stopping tests every k steps, per backend name
SYNC_EVERY = {"cupy": 10}
