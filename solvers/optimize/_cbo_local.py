r"""The local covariance run that polishes a CBO answer (host side, a hard budget).

Started at the best point ``m`` with a covariance ``C`` (the Gibbs-weighted covariance of
the swarm that found it) and a step ``s``, each generation draws ``lam`` points, weights
them with Gibbs weights whose effective sample size is a fixed share of ``lam`` (as the
covariance starts do), moves the mean to their consensus and adapts ``C`` and ``s``:

.. math::

   x_i = m + s\,y_i,\quad y_i \sim N(0, C),\qquad
   w = \mathrm{softmax}(-\alpha f(x)),\qquad
   m \leftarrow \textstyle\sum_i w_i x_i,

   C \leftarrow (1 - c_1 - c_\mu \textstyle\sum_i w_i^{\pm})\,C + c_1\,p_c p_c^\top
                + c_\mu \textstyle\sum_i w_i^{\pm}\,y_i y_i^\top,\qquad
   s \leftarrow s\,\exp\!\Big(\frac{c_\sigma}{d_\sigma}
                \big(\tfrac{\lVert p_\sigma\rVert}{E\lVert N(0, I)\rVert} - 1\big)\Big),

with the evolution paths :math:`p_c` and :math:`p_\sigma` and the learning rates of
Hansen's CMA-ES tutorial (the consensus replaces the recombination of the ``mu`` best);
the weights :math:`w_i^{\pm}` of the covariance update are the Gibbs weights plus active
CMA-ES's negative weights on the worse half (by rank, on the drawn directions, scaled by
``d / |z_i|^2``), which speed up learning an ill-conditioned shape (discus d = 10: 3 800
evaluations instead of 6 600 from a random start).
This is the covariance noise with memory: the consensus-based sampling step
``x ~ N(c, Sigma_w)`` re-estimates ``Sigma_w`` from scratch from the swarm every step and
needs ``N > d`` particles, while the run here keeps ``C`` across generations, so a small
population (``4 + 3 ln d``) suffices and, once ``C`` has been learned, the convergence rate
on an ill-conditioned valley no longer depends on its conditioning. As CMA-ES, the run is
invariant in distribution under affine maps ``x = A z + b`` given the mapped start
covariance ``A^{-1} C A^{-T}`` (the square roots come from eigendecompositions, so unlike
the covariance starts it is not the mapped run draw for draw). Finite differences
(L-BFGS-B) stall near ``1e-6`` on such valleys; this run does not.

Points leaving the box are repaired by the caller's ``reflect`` (CBO's refinement projects
them onto the box: every evaluated point is feasible, and a minimum on a face is reached)
and the mean and positive updates use the repaired points. The run ends by CMA-ES's rules
(see :data:`LOCAL_FTOL`) or when ``budget`` is spent.

References
----------
.. [1] N. Hansen, "The CMA evolution strategy: a tutorial", arXiv:1604.00772 (2016).
.. [2] J. A. Carrillo, F. Hoffmann, A. M. Stuart, U. Vaes, "Consensus-based sampling",
   Stud. Appl. Math. 148 (2022).
"""
import math

import numpy as np

__all__ = ["LocalRun", "local_run", "swarm_covariance"]

#: effective sample size of the Gibbs weights, as a share of the population
LOCAL_ESS = 0.3
#: the stopping rules of the run (CMA-ES's, as in pycma): ``tolfun`` (the generations' best
#: values over the last 10 + 30 d / lam generations and the current population's values
#: agree within ``LOCAL_FTOL * (1 + |f|)``), stagnation (over the last
#: 100 + 100 d^1.5 / lam generations, the median value of the last fifth is no better than
#: that of the first fifth) and ``tolx`` (the step fell below 1e-13 of the scale of the
#: mean)
LOCAL_FTOL = 1e-12
ACTIVE = True
#: a run that stops (by any rule above) with its spread below REGROW_XTOL of the scale of
#: the mean (at or near the ``tolx`` floor), inside the box, has stopped on a kink, not in
#: a smooth minimum (where ``tolfun`` fires at a spread near the square root of its
#: tolerance): a small population converges prematurely on a sharp ridge (BBOB f13, whose
#: level sets grow ever thinner along the ridge as the value falls; stops at 1e-13 to
#: 3e-11), while rough local minima (Weierstrass's, BBOB's oscillating Rastrigin) stop at
#: 5e-12 to 2e-9 and a larger population gains nothing there. Between REGROW_XTOL and
#: REGROW_KINK_XTOL the spread alone cannot tell them apart, and the run also counts as
#: stopped on a kink when its values' spread shrank less than REGROW_ORDER times as fast
#: as its search's spread (in logarithms, over its last two ``tolfun`` windows, see
#: :meth:`LocalRun._order`): ``f - f(x*)`` falls as the square of the distance at a
#: smooth minimum, however steep (Weierstrass's minima, smooth below the finest of its
#: waves: 1.8 to 2.3), and as the distance itself on a kink (f13: 1.0 to 1.1 in d = 20;
#: some of its stops in d = 5, at 1.5 to 1.7, are not caught; the kinked local minima of
#: Schaffer's and Katsuura's functions: 0.6 to 1.3). Such a run *regrows*: it
#: goes on from its best point with REGROW times the population (IPOP-CMA-ES's remedy,
#: without leaving the basin), its learned shape and a step of REGROW_STEP of the scale of
#: its point, and no longer pauses at a loose tolerance. It regrows at most REGROW_MAX
#: times, again only if the last regrowth found a lower value; a regrown run ends when its
#: best has not fallen within REGROW_TRIAL of its ``tolfun`` windows (a rough local
#: minimum) or once it has spent REGROW_SHARE of the evaluations that were left when it
#: regrew (REGROW None: off). The regrown run first has to grow its tiny step and re-learn
#: the ever thinner shape of the ridge before its best falls: on BBOB f13 in d = 20 a
#: regrown run stalled at 1e-6 to 2 fell to 1e-10 with 8 times the population in 30 000
#: to 50 000 evaluations, where 4 times the population, or a trial of 4 windows (92
#: generations), ended many such runs as fruitless before they moved; a run on a kinked
#: local minimum (Schaffer's) that regrows in vain spends its trial, 12 windows (about
#: 20 000 evaluations in d = 20)
REGROW = 8
REGROW_MAX = 3
REGROW_XTOL = 3e-12
REGROW_KINK_XTOL = 1e-10
REGROW_ORDER = 1.5
REGROW_STEP = 1e-7
REGROW_TRIAL = 12
REGROW_SHARE = 0.7


def swarm_covariance(P, W, C):
    """Gibbs-weighted covariance ``sum_j w_j (P_j - c)(P_j - c)^T`` (host arrays)."""
    D = np.asarray(P, dtype=np.float64) - np.asarray(C, dtype=np.float64)[None, :]
    return (D * np.asarray(W, dtype=np.float64)[:, None]).T @ D


def _parameters(d, lam):
    mu_eff = max(1.0, LOCAL_ESS * lam)
    c_s = (mu_eff + 2.0) / (d + mu_eff + 5.0)
    d_s = 1.0 + 2.0 * max(0.0, math.sqrt((mu_eff - 1.0) / (d + 1.0)) - 1.0) + c_s
    c_c = (4.0 + mu_eff / d) / (d + 4.0 + 2.0 * mu_eff / d)
    c_1 = 2.0 / ((d + 1.3) ** 2 + mu_eff)
    c_mu = min(1.0 - c_1, 2.0 * (mu_eff - 2.0 + 1.0 / mu_eff) / ((d + 2.0) ** 2 + mu_eff))
    chi = math.sqrt(d) * (1.0 - 1.0 / (4.0 * d) + 1.0 / (21.0 * d * d))
    return mu_eff, c_s, d_s, c_c, c_1, c_mu, chi


def _negative_weights(d, lam, mu_eff, c_1, c_mu):
    """Active CMA-ES's negative recombination weights by rank (zero for the better half):
    ``ln((lam + 1) / 2) - ln i`` for the worse half, scaled as in Hansen's tutorial so
    that the covariance stays positive definite."""
    ranks = np.arange(1, lam + 1)
    raw = math.log((lam + 1) / 2.0) - np.log(ranks)
    neg = np.minimum(raw, 0.0)
    total = -float(np.sum(neg))
    if total <= 0:
        return np.zeros(lam)
    mu_neg = total ** 2 / float(np.sum(neg * neg))
    alpha = min(1.0 + c_1 / c_mu, 1.0 + 2.0 * mu_neg / (mu_eff + 2.0),
                (1.0 - c_1 - c_mu) / (d * c_mu))
    return alpha * neg / total


def _start_covariance(cov, d):
    """(C normalised to mean variance 1, the rms spread) from a swarm covariance."""
    if cov is None or not np.all(np.isfinite(cov)):
        return np.eye(d), None
    cov = 0.5 * (cov + cov.T)
    tr = float(np.trace(cov)) / d
    if not tr > 0:
        return np.eye(d), None
    return cov / tr + 1e-10 * np.eye(d), math.sqrt(tr)


def local_run(fb, weights, x, fx, cov, step, lb, ub, budget, normal, reflect, cap_step=True,
              lam=None, stop=None):
    """Run the local covariance search; returns ``(x, f, nfev)``, the best point seen.

    ``fb``: host batch objective ((k, d) -> (k,)); ``weights``: Gibbs weights of a host
    energy vector (+inf for non-finite values); ``x``, ``fx``: the start and its value;
    ``cov``: a swarm covariance (``C`` is it scaled to mean variance 1) or None (then
    ``C = I``); ``step``: the start step ``s``, capped by the swarm's rms spread (the
    cumulative step-size rule grows a small step within a few generations, while a large
    one costs many to shrink; ``cap_step=False`` keeps ``step``, for a run from a new start
    point); ``lam``: points per generation (default ``4 + 3 ln d``); ``lb``, ``ub``: host
    bounds or None; ``normal(shape)``: host standard normal
    draws; ``reflect(X)``: points into the box; ``stop(best_x, best_f, m, spread, gain)``
    (``gain``: how much the best fell over the last ``10 + 30 d / lam`` generations): an
    optional test after every generation that ends the run early. At most ``budget``
    evaluations; the run also ends by the rules of :data:`LOCAL_FTOL`.
    """
    run = LocalRun(fb, weights, x, fx, cov, step, lb, ub, normal, reflect,
                   cap_step=cap_step, lam=lam)
    return run.advance(budget, stop=stop)


class LocalRun:
    """The state of one local covariance run (:func:`local_run`), which can stop at a
    loose tolerance and be resumed later: :meth:`advance` runs generations until a
    stopping rule fires or its budget is spent. ``done`` is True once a rule that a
    resumed run would fire again has ended it (full ``tolfun``, stagnation, ``tolx``, a
    vanished step, non-finite values)."""

    def __init__(self, fb, weights, x, fx, cov, step, lb, ub, normal, reflect,
                 cap_step=True, lam=None):
        d = x.shape[0]
        self.fb, self.weights, self.normal, self.reflect = fb, weights, normal, reflect
        self.lb, self.ub = lb, ub
        self._population(d, 4 + int(3 * math.log(d)) if lam is None else int(lam))
        self.C, spread = _start_covariance(cov, d)
        self.s = step if spread is None or not cap_step else min(spread, step)
        self.m = np.array(x, dtype=np.float64)
        self.best_x, self.best_f = np.array(x, dtype=np.float64), fx
        self.p_s, self.p_c = np.zeros(d), np.zeros(d)
        # the step never grows beyond the box (a linear slope would grow it without end)
        self.s_cap = math.inf if lb is None else float(np.max(np.asarray(ub) - np.asarray(lb)))
        self.g = 0
        self.done = False
        self.regrows, self.regrow_left, self.regrown_from = 0, math.inf, math.inf

    def _population(self, d, lam):
        """``lam`` points per generation in ``d`` dimensions: their learning rates,
        weights and windows (the record of recent values restarts)."""
        self.lam = lam
        self.par = _parameters(d, lam)
        mu_eff, _, _, _, c_1, c_mu, _ = self.par
        self.neg_by_rank = _negative_weights(d, lam, mu_eff, c_1, c_mu) if ACTIVE else \
            np.zeros(lam)
        self.window = 10 + math.ceil(30 * d / lam)
        self.span = int(100 + 100 * d ** 1.5 / lam)
        self.bests, self.medians, self.spreads = [], [], []

    def advance(self, budget, stop=None, ftol=LOCAL_FTOL, min_spread=0.0, fall=None):
        """Generations until a stopping rule fires, ``stop`` (see :func:`local_run`) says
        so or ``budget`` evaluations are spent; ``ftol`` above LOCAL_FTOL is a loose
        ``tolfun`` that ends the call but leaves the run resumable, once the search's
        spread is at least ``min_spread`` (a search shrunk far below that while its values
        still agree sits on a kink, as a sharp ridge, and may still move on) and, with
        ``fall``, once the range of its generations' best values over the last window is
        at most ``fall`` times the one over the window before (:meth:`_falling`). Returns
        ``(best x, best f, evaluations of this call)``."""
        nfev = 0
        while nfev < budget and not self.done:
            if not (self.s > 0 and math.isfinite(self.s)):
                self.done = True
                break
            k = min(self.lam, budget - nfev)
            F, spread = self._generation(k)
            nfev += k
            self.regrow_left -= k
            if F is None:
                break
            if self._flat(F, LOCAL_FTOL) or self._stagnant() or \
                    spread <= 1e-13 * self._scale():
                if self._can_regrow(spread):
                    self._regrow(budget - nfev)
                    continue
                self.done = True
                break
            if self._fruitless():
                self.done = True
                break
            if self._pause(F, spread, stop, ftol, min_spread, fall):
                break
        return self.best_x, self.best_f, nfev

    def _scale(self):
        """The scale of the mean that the spread and the regrowth step are measured in."""
        return 1.0 + float(np.max(np.abs(self.m)))

    def _fruitless(self):
        """Whether a regrown run ends (see :data:`REGROW`): its best has not fallen
        within REGROW_TRIAL windows, or it has spent its share of the evaluations."""
        if not self.regrows:
            return False
        if REGROW_SHARE is not None and self.regrow_left <= 0:
            return True
        return REGROW_TRIAL is not None and len(self.bests) >= REGROW_TRIAL * self.window \
            and not self._regrowth_gained()

    def _regrowth_gained(self):
        """Whether the best fell since the last regrowth, by more than ``tolfun``'s
        tolerance (a search on a rough local minimum still finds lower values in the
        last digits)."""
        return self.best_f < self.regrown_from - LOCAL_FTOL * (1.0 + abs(self.regrown_from))

    def kinked(self, order):
        """Whether the run has met a kink: it regrew, or its values' spread shrank less
        than ``order`` times as fast as its search's (:meth:`_order`)."""
        return self.regrows > 0 or self._order() < order

    def _can_regrow(self, spread):
        """Whether a stopped run sits on a kink and may regrow (see :data:`REGROW`)."""
        if REGROW is None or self.regrows >= REGROW_MAX:
            return False
        if spread > REGROW_XTOL * self._scale() and not (
                REGROW_KINK_XTOL is not None and spread <= REGROW_KINK_XTOL * self._scale()
                and self._order() < REGROW_ORDER):
            return False
        if self.regrows and not self._regrowth_gained():
            return False  # the last regrowth found nothing lower: a kinked local minimum
        if self.lb is None:
            return True
        # a run stopped on a face of the box has met the box, not a kink
        x, lb, ub = self.best_x, np.asarray(self.lb), np.asarray(self.ub)
        tol = 1e-9 * (ub - lb)
        return not bool(np.any((x - lb <= tol) | (ub - x <= tol)))

    def _order(self):
        """How the values' spread shrinks with the search's spread over the last two
        windows: ``log(gap_1 / gap_2) / log(spread_1 / spread_2)`` with the medians over
        each window of the spread and of ``median(F) - min(F)``; about 2 at a smooth
        minimum, about 1 on a kink (inf when it cannot be told)."""
        w = self.window
        if len(self.spreads) < 2 * w:
            return math.inf
        gap = np.asarray(self.medians[-2 * w:]) - np.asarray(self.bests[-2 * w:])
        g1, g2 = float(np.median(gap[:w])), float(np.median(gap[w:]))
        s1, s2 = float(np.median(self.spreads[-2 * w:-w])), float(np.median(self.spreads[-w:]))
        if not (g1 > g2 > 0 and s1 > s2 > 0):
            return math.inf
        return math.log(g1 / g2) / math.log(s1 / s2)

    def _regrow(self, left):
        """Go on from the best point with REGROW times the population (see
        :data:`REGROW`): the learning rates and windows of that population, new paths,
        the learned shape (scaled to mean variance 1)."""
        d = self.m.shape[0]
        self.regrows += 1
        self.regrown_from = self.best_f
        self.regrow_left = math.inf if REGROW_SHARE is None else REGROW_SHARE * left
        self._population(d, self.lam * REGROW)
        self.C, _ = _start_covariance(self.C, d)
        self.m = self.best_x.copy()
        self.s = REGROW_STEP * self._scale()
        self.p_s, self.p_c = np.zeros(d), np.zeros(d)

    def _pause(self, F, spread, stop, ftol, min_spread, fall=None):
        """Whether the call ends with the run resumable: the loose ``tolfun`` or
        ``stop`` (see :meth:`advance`)."""
        if ftol > LOCAL_FTOL and spread >= min_spread and not self.regrows and \
                self._flat(F, ftol) and (fall is None or self._falling(fall)):
            return True
        return stop is not None and len(self.bests) >= self.window and \
            stop(self.best_x, self.best_f, self.m, spread,
                 self.bests[-self.window] - self.best_f)

    def _generation(self, k):
        """Draw, evaluate the first ``k`` points and update; returns ``(F, spread)``, or
        ``(None, None)`` when the generation was cut short by the budget (``k < lam``)
        or has no finite value."""
        lam, m, s, C = self.lam, self.m, self.s, self.C
        d = m.shape[0]
        mu_eff, c_s, d_s, c_c, c_1, c_mu, chi = self.par
        vals, B = np.linalg.eigh(C)
        D = np.sqrt(np.maximum(vals, 1e-300))
        Z = self.normal((lam, d))
        X = m + s * (Z * D) @ B.T
        if self.lb is not None:
            X = self.reflect(X)
        F = np.asarray(self.fb(X[:k]), dtype=np.float64)
        F = np.where(np.isfinite(F), F, np.inf)
        i = int(np.argmin(F))
        if F[i] < self.best_f:
            self.best_f, self.best_x = float(F[i]), X[i].copy()
        if k < lam or not np.isfinite(F[i]):
            self.done = self.done or not np.isfinite(F[i])
            return None, None
        w = self.weights(F)
        Y = (X - m) / s
        y_w = w @ Y
        self.m = m + s * y_w
        self.g = g = self.g + 1
        inv_sqrt = (B / D) @ B.T
        p_s = (1 - c_s) * self.p_s + math.sqrt(c_s * (2 - c_s) * mu_eff) * (inv_sqrt @ y_w)
        norm_ps = float(np.linalg.norm(p_s))
        h_s = norm_ps / math.sqrt(1 - (1 - c_s) ** (2 * g)) < (1.4 + 2 / (d + 1)) * chi
        p_c = (1 - c_c) * self.p_c + h_s * math.sqrt(c_c * (2 - c_c) * mu_eff) * y_w
        w_neg = np.empty(lam)
        w_neg[np.argsort(F, kind="stable")] = self.neg_by_rank
        # negative weights act on the drawn directions, Mahalanobis-normalised (active
        # CMA-ES); not on the reflected points, which may lie close to the mean
        drawn = (Z * D) @ B.T
        w_neg = w_neg * d / np.maximum(np.sum(Z * Z, axis=1), 1e-300)
        rank_mu = (Y * w[:, None]).T @ Y + (drawn * w_neg[:, None]).T @ drawn
        decay = 1 - c_1 - c_mu * (1.0 + float(np.sum(self.neg_by_rank)))
        C = decay * C + c_1 * (np.outer(p_c, p_c) + (not h_s) * c_c * (2 - c_c) * C) \
            + c_mu * rank_mu
        self.C, self.p_s, self.p_c = 0.5 * (C + C.T), p_s, p_c
        s *= math.exp(min(1.0, c_s / d_s * (norm_ps / chi - 1)))
        self.s = min(s, self.s_cap / math.sqrt(max(float(np.max(vals)), 1e-300)))
        spread = self.s * math.sqrt(float(np.max(vals)))
        self.bests.append(float(F[i]))
        self.medians.append(float(np.median(F)))
        self.spreads.append(spread)
        return F, spread

    def _falling(self, fall):
        """Whether the generations' best values converge geometrically: their range over
        the last window is at most ``fall`` times the one over the window before. A run
        that creeps on at a steady pace (a shape still being learned) loses as much per
        window as before, however flat its values look against ``1 + |f|``."""
        w = self.window
        if len(self.bests) < 2 * w:
            return False
        last, before = self.bests[-w:], self.bests[-2 * w:-w]
        return max(last) - min(last) <= fall * (max(before) - min(before))

    def _flat(self, F, ftol):
        """CMA-ES's ``tolfun``: the generations' best values over the last ``window``
        and the current values agree within ``ftol * (1 + |f|)``."""
        if len(self.bests) < self.window:
            return False
        recent = self.bests[-self.window:]
        spread = max(max(recent), float(np.max(F))) - min(min(recent), float(np.min(F)))
        return spread <= ftol * (1.0 + abs(self.best_f))

    def _stagnant(self):
        """CMA-ES's stagnation test: the median value of the last fifth of ``span``
        generations is no better than that of the first fifth."""
        span, medians = self.span, self.medians
        if len(medians) < span:
            return False
        fifth = max(1, span // 5)
        return float(np.median(medians[-fifth:])) >= \
            float(np.median(medians[-span:-span + fifth]))
