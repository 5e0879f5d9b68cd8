"""L-BFGS advanced one iteration at a time, for LightSB's candidate search.

SciPy's ``minimize(method="L-BFGS-B")`` runs a fit to its end; the candidate search
interleaves several fits and drops the ones that cannot win, so it needs an optimizer it
can pause between iterations. :class:`LBFGS` is the textbook method (Nocedal & Wright,
*Numerical Optimization*, 2nd ed., Algorithms 7.4 and 3.5-3.6): the two-loop recursion
over the last ``memory`` curvature pairs, the initial Hessian scaled by
:math:`s^\\top y / y^\\top y`, and a line search for the strong Wolfe conditions with
cubic interpolation. It works on host float64 vectors; ``fun(v)`` returns the loss and
its gradient.
"""
import math

import numpy as np

#: sufficient decrease and curvature constants of the strong Wolfe conditions
C1, C2 = 1e-4, 0.9



class LBFGS:
    """Unconstrained L-BFGS on ``fun(v) -> (f, g)``; :meth:`step` does one iteration.

    ``rounding`` is the relative accuracy of ``f``: a line search that finds no decrease
    where the step's predicted gain is below it ends the run as converged.

    Attributes
    ----------
    x, f, g : the current iterate, its value and gradient
    nit, nfev : iterations done and function evaluations spent
    message : why the last :meth:`step` returned False (``None`` while it can go on)
    converged : True when it stopped because the loss cannot decrease further at
        floating-point precision (the step's predicted gain is below the rounding of the
        loss), not because the line search failed
    """

    def __init__(self, fun, x0, *, memory=20, max_evals=40, rounding=1e-10):
        self.fun, self.memory, self.max_evals = fun, memory, max_evals
        self.rounding = rounding
        self.x = np.array(x0, dtype=np.float64)
        self.f, self.g = self._eval(self.x)
        self.nfev, self.nit = 1, 0
        self.pairs = []            # (s, y, 1 / s^T y), oldest first
        self.converged = False
        self.message = None if math.isfinite(self.f) else "non-finite loss at the start"

    def _eval(self, x):
        f, g = self.fun(x)
        return float(f), np.asarray(g, dtype=np.float64)

    def direction(self):
        """-H g by the two-loop recursion (steepest descent without curvature pairs)."""
        q = -self.g
        if not self.pairs:
            return q.copy()
        alphas = []
        for s, y, rho in reversed(self.pairs):
            a = rho * float(s @ q)
            q = q - a * y
            alphas.append(a)
        s, y, _ = self.pairs[-1]
        q = q * (float(s @ y) / float(y @ y))
        for (s, y, rho), a in zip(self.pairs, reversed(alphas)):
            q = q + (a - rho * float(y @ q)) * s
        return q

    def step(self):
        """One iteration; False (with :attr:`message`) when no step could be taken."""
        if self.message is not None:
            return False
        d = self.direction()
        slope = float(self.g @ d)
        if not slope < 0:                      # lost descent: forget the curvature pairs
            self.pairs.clear()
            d, slope = -self.g, -float(self.g @ self.g)
            if not slope < 0:
                self.message = "the gradient vanished"
                return False
        t0 = 1.0 if self.pairs else min(1.0, 1.0 / math.sqrt(-slope))
        found = self._line_search(d, slope, t0)
        if found is None or not found[1] < self.f:
            # at the rounding floor the loss cannot tell better points from worse ones
            self.converged = -slope * t0 <= self.rounding * max(abs(self.f), 1.0)
            self.message = ("the loss stopped decreasing at floating-point precision"
                            if self.converged else
                            "the line search found no step with sufficient decrease")
            return False
        t, f, g = found
        s, y = t * d, g - self.g
        sy = float(s @ y)
        if sy > 1e-12 * float(y @ y):          # keep only pairs of positive curvature
            self.pairs.append((s, y, 1.0 / sy))
            if len(self.pairs) > self.memory:
                self.pairs.pop(0)
        self.x, self.f, self.g = self.x + s, f, g
        self.nit += 1
        return True

    def _trial(self, d, t):
        f, g = self._eval(self.x + t * d)
        self.nfev += 1
        return f, g, float(g @ d)

    def _line_search(self, d, slope, t):
        """A step ``(t, f, g)`` meeting the strong Wolfe conditions (or, when the
        evaluations run out, the best one with sufficient decrease), else None."""
        f0 = self.f
        prev = (0.0, f0, self.g, slope)
        best = None
        for i in range(self.max_evals):
            f, g, gd = self._trial(d, t)
            if math.isfinite(f) and f <= f0 + C1 * t * slope and (best is None or f < best[1]):
                best = (t, f, g)
            if not math.isfinite(f) or f > f0 + C1 * t * slope or (i > 0 and f >= prev[1]):
                return self._zoom(d, slope, prev, (t, f, g, gd), best, self.max_evals - i - 1)
            if abs(gd) <= -C2 * slope:
                return t, f, g
            if gd >= 0:
                return self._zoom(d, slope, (t, f, g, gd), prev, best, self.max_evals - i - 1)
            prev, t = (t, f, g, gd), 4.0 * t
        return best

    def _zoom(self, d, slope, lo, hi, best, evals):
        """Shrink the bracket [lo, hi] (lo: the lower value, sufficient decrease) by
        safeguarded cubic interpolation until a strong Wolfe step is found."""
        f0 = self.f
        for _ in range(evals):
            if abs(hi[0] - lo[0]) <= 1e-12 * abs(lo[0] + hi[0]):
                break                          # the bracket collapsed in rounding
            t = _cubic_min(lo, hi)
            f, g, gd = self._trial(d, t)
            if math.isfinite(f) and f <= f0 + C1 * t * slope and (best is None or f < best[1]):
                best = (t, f, g)
            if not math.isfinite(f) or f > f0 + C1 * t * slope or f >= lo[1]:
                hi = (t, f, g, gd)
                continue
            if abs(gd) <= -C2 * slope:
                return t, f, g
            if gd * (hi[0] - lo[0]) >= 0:
                hi = lo
            lo = (t, f, g, gd)
        return best


def _cubic_min(a, b):
    """Minimiser of the cubic through the values and slopes at two step lengths, kept at
    least a tenth of the interval from either end (bisection when values are not finite)."""
    (ta, fa, _, da), (tb, fb, _, db) = a, b
    lo, hi = min(ta, tb), max(ta, tb)
    width = hi - lo
    t = 0.5 * (ta + tb)
    if math.isfinite(fa) and math.isfinite(fb) and math.isfinite(da) and math.isfinite(db):
        d1 = da + db - 3.0 * (fa - fb) / (ta - tb)
        disc = d1 * d1 - da * db
        if disc >= 0:
            d2 = math.copysign(math.sqrt(disc), tb - ta)
            denom = db - da + 2.0 * d2
            if denom != 0:
                t = tb - (tb - ta) * (db + d2 - d1) / denom
    if not (lo + 0.1 * width <= t <= hi - 0.1 * width):
        t = 0.5 * (ta + tb)
    return t
