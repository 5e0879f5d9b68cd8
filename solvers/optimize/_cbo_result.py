"""The one status table of CBO and the OptimizeResult of a run.

Every end of :func:`~solvers.optimize.cbo.minimize_cbo` maps to one shared
:class:`~solvers._lib.results.Status` with one ``success``, whatever ``restarts`` says:

==========  ===========  ======================================================
status      success      end
==========  ===========  ======================================================
CONVERGED   True         two starts ended in the basin of the best answer
                         (the restarts' agreement); without restarts, the start's
                         particles collapsed (``xtol``), their values agreed
                         (``ftol``) or its best value stagnated
TARGET      True         a value ``<= f_target`` was found
MAXFEV      False        the next step would exceed ``maxfev``
MAXITER     False        ``maxiter`` steps were made
CALLBACK    False        the callback raised ``StopIteration``
NONFINITE   False        no finite value was found, or the particles diverged
==========  ===========  ======================================================

The message names the rule and the evaluations used.
"""
import math

from .._lib.host import to_float
from .._lib.results import Status, make_result

__all__ = ["ENDS", "build_result"]

#: end of a run -> (Status, success, message)
ENDS = {
    "agreed": (Status.CONVERGED, True,
               "converged: two starts ended in the basin of the best answer"),
    "collapsed": (Status.CONVERGED, True,
                  "converged: the particles collapsed onto the consensus (xtol)"),
    "flat": (Status.CONVERGED, True,
             "converged: the particles' values agree within ftol"),
    "stalled": (Status.CONVERGED, True, "converged: the best value stagnated"),
    "target": (Status.TARGET, True, "f_target reached"),
    "maxfev": (Status.MAXFEV, False,
               "stopped: the next step would exceed maxfev before a stopping rule fired"),
    "maxiter": (Status.MAXITER, False,
                "stopped: maxiter steps were made before a stopping rule fired"),
    "callback": (Status.CALLBACK, False, Status.CALLBACK.message),
    "diverged": (Status.NONFINITE, False, "the particles diverged (non-finite positions)"),
    "no_finite": (Status.NONFINITE, False, "no finite objective value was found"),
}


def build_result(solver, end):
    """The OptimizeResult of ``solver`` (a finished :class:`~._cbo_solver.CBOSolver`)
    that ended by ``end``."""
    s, be, cfg = solver.swarm, solver.be, solver.cfg
    if s is None:
        N = cfg.n_runs * max(cfg.n_particles, 2)
        raise ValueError(f"maxfev={cfg.maxfev} is below one step (at least {N} "
                         "evaluations)")
    x, best_f = solver.best_point()
    if not math.isfinite(best_f) and end not in ("diverged", "callback"):
        end = "no_finite"
    status, success, message = ENDS[end]
    starts = solver.n_restarts + 1
    message += (f"; {solver.nfev} evaluations, {starts} start{'s' * (starts > 1)}, "
                f"{solver.nit} steps")
    single = cfg.n_runs == 1
    alpha = s.alpha_used if isinstance(s.alpha_used, float) else be.to_input(s.alpha_used)
    return make_result(
        status, success=success, message=message,
        x=be.to_input(x), fun=best_f, nfev=solver.nfev, nit=solver.nit,
        n_restarts=solver.n_restarts,
        population=be.to_input(s.X_eval[0, ...] if single else s.X_eval),
        population_energies=be.to_input(s.F[0, ...] if single else s.F),
        consensus=be.to_input(s.C[0, ...] if single else s.C),
        x_runs=be.to_input(solver.BX), fun_runs=be.to_input(solver.BF),
        n_nonfinite=int(to_float(solver.n_bad)), alpha=alpha)
