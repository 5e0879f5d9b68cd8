"""The CBO kernel table: one line per hot inner operation, resolved from the backend.

The algorithm (:mod:`._cbo_solver`) asks this table for an operation and never tests which
backend it runs on. Each entry names the Numba and CuPy implementations (imported on first
use) and the generic ``xp`` function of :mod:`._cbo_generic`, which is what a backend
without its own entry runs and the reference the fast ones are tested against.
``SYNC_EVERY`` says how often the host reads device scalars for the stopping tests (a GPU
run syncs every 10 steps).

Small runs compile nothing: under ``backend="auto"`` a run whose size, ``maxfev * d``
(the evaluations it may make times the dimension; :func:`run_size`), is below
:data:`GENERIC_BELOW` runs every kernel's generic twin. The backend is chosen once per
run from that size, so a run is reproducible from its ``rng``; an explicit
``backend="numba"`` always runs the Numba kernels.
"""
from .._lib.kernels import KernelTable

__all__ = ["KERNELS", "SYNC_EVERY", "GENERIC_BELOW", "CONSENSUS_GENERIC_BELOW", "run_size"]

#: run size (``maxfev * d``) under which ``"auto"`` runs the generic code (calibrated with
#: ``benchmarks/peers/cbo_small_calls.py``)
GENERIC_BELOW = 1e5
#: particles x d of a :func:`~solvers.optimize.cbo.consensus` call under which ``"auto"``
#: computes it with the generic code
CONSENSUS_GENERIC_BELOW = 1 << 13


def run_size(cfg, d):
    """The size of a run, compared with :data:`GENERIC_BELOW`: its evaluation budget
    (``maxfev``, or ``maxiter`` steps of the first start's swarm) times ``d``."""
    if cfg.maxfev is not None:
        return cfg.maxfev * d
    return cfg.maxiter * cfg.n_runs * cfg.n_particles * d


KERNELS = KernelTable(
    __package__,
    # Gibbs weights softmax(-alpha (E - min E)) per run, alpha by ESS bisection if asked
    gibbs_weights={"numba": "._cbo_numba:gibbs_weights",
                   "generic": "._cbo_generic:gibbs_weights",
                   "generic_below": GENERIC_BELOW},
    # the same weights and the consensus sum_i w_i P_i in one pass
    gibbs_consensus={"numba": "._cbo_numba:gibbs_consensus",
                     "generic": "._cbo_generic:gibbs_consensus",
                     "generic_below": GENERIC_BELOW},
    # drift toward the consensus plus diagonal / isotropic noise, and the spread
    move={"numba": "._cbo_numba:move", "cupy": "._cbo_cupy:move",
          "generic": "._cbo_generic:move", "generic_below": GENERIC_BELOW},
    # a diagonal-noise step in one call: gibbs_consensus, move, reflect
    consensus_move={"numba": "._cbo_numba:consensus_move",
                    "cupy": "._cbo_cupy:consensus_move",
                    "generic": "._cbo_generic:consensus_move",
                    "generic_below": GENERIC_BELOW},
    # points reflected into the box [lb, ub]
    reflect={"numba": "._cbo_numba:reflect", "generic": "._cbo_bounds:reflect",
             "generic_below": GENERIC_BELOW},
    # non-finite energies -> +inf (counted), best point of each run of this start
    track_best={"numba": "._cbo_numba:track_best", "generic": "._cbo_generic:track_best",
                "generic_below": GENERIC_BELOW},
    # consensus points of (M, N, d) particles (the public ``consensus``)
    consensus={"numba": "._cbo_numba:consensus", "generic": "._cbo_generic:consensus",
               "generic_below": CONSENSUS_GENERIC_BELOW},
)

#: host syncs for the stopping tests every k steps, per backend name
SYNC_EVERY = {"cupy": 10}
