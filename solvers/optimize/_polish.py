"""Local refinement ("polish") of a CBO answer with a hard evaluation budget.

SciPy's local methods treat ``maxfun`` as a soft limit (L-BFGS-B may overshoot it by a line
search). Here the objective is wrapped in a counter that stops the method the moment the
budget is spent, and the best point evaluated so far is kept, so the caller's ``maxfev``
is never exceeded.
"""
import math

import numpy as np

__all__ = ["polish", "POLISH_METHODS"]

#: local methods accepted by ``polish=``: gradient-based for smooth objectives (finite
#: differences), derivative-free for nonsmooth ones
POLISH_METHODS = ("L-BFGS-B", "Powell", "Nelder-Mead")


class _BudgetSpent(Exception):
    pass


class _Counted:
    """``f`` with a budget; remembers the best point it evaluated."""

    def __init__(self, f, budget):
        self.f = f
        self.budget = budget
        self.nfev = 0
        self.best_x = None
        self.best_f = math.inf

    def __call__(self, z):
        if self.nfev >= self.budget:
            raise _BudgetSpent
        self.nfev += 1
        v = float(self.f(z))
        if not math.isfinite(v):
            # a huge finite value, not inf: L-BFGS-B's line search needs finite values,
            # and Nelder-Mead's convergence test subtracts values (inf - inf warns)
            return 1e300
        if v < self.best_f:
            self.best_f, self.best_x = v, np.array(z, dtype=np.float64)
        return v


def _run(method, counted, x, bnds, budget):
    from scipy.optimize import minimize as scipy_minimize

    options = {"maxiter": 10**6}
    if method == "L-BFGS-B":
        options.update(maxfun=int(budget) + 1, ftol=1e-16, gtol=1e-14)
    elif method == "Powell":
        options.update(maxfev=int(budget) + 1, xtol=1e-12, ftol=1e-15)
    else:
        options.update(maxfev=int(budget) + 1, xatol=1e-13, fatol=1e-16, adaptive=True)
    try:
        scipy_minimize(counted, np.asarray(x, dtype=np.float64), method=method, bounds=bnds,
                       options=options)
    except _BudgetSpent:
        pass


def polish(f, x, fx, lb, ub, budget, method="L-BFGS-B"):
    """Refine ``x`` (host float64, value ``fx``) within ``[lb, ub]`` using at most ``budget``
    evaluations of ``f`` (host float64 vector -> float).

    The final polish of :func:`~solvers.optimize.cbo.minimize_cbo` calls this twice (L-BFGS-B,
    then adaptive Nelder-Mead after the local covariance run of :mod:`._cbo_local`):
    finite-difference gradients stall near ``1e-6`` relative accuracy on ill-conditioned
    problems, where the covariance run and the simplex go on.

    Returns ``(x, f, nfev)``: the better of the start and the best point evaluated.
    """
    budget = int(budget)
    counted = _Counted(f, budget)
    bnds = None
    if lb is not None:
        bnds = [(None if not math.isfinite(lo) else lo, None if not math.isfinite(hi) else hi)
                for lo, hi in zip(lb.tolist(), ub.tolist())]
    if budget > 0:
        _run(method, counted, x, bnds, budget)
    if counted.best_x is not None and counted.best_f < fx:
        x_new = counted.best_x
        if lb is not None:
            x_new = np.minimum(np.maximum(x_new, lb), ub)
        return x_new, counted.best_f, counted.nfev
    return x, fx, counted.nfev
