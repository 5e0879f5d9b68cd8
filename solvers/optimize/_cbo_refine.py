"""The end of a CBO start: its best point refined, and the probe restart.

When a start of :class:`~._cbo_solver.CBOSolver` ends, :meth:`Refiner.finish` refines the
best point of its best run until the refinement itself converges (or the budget ends),
starting from the shape of the swarm: the local covariance run of :mod:`._cbo_local`
(``polish=True``) or a SciPy method (``polish="L-BFGS-B"``, ...; :mod:`._polish`). With
restarts, a local run stops at a loose tolerance (:data:`LOOSE_FTOL`), enough to tell its
basin, and :meth:`Refiner.complete` resumes the one holding the best answer at the end. The
*probe* (:meth:`Refiner.probe`) is the restart right after the first start: a local
covariance run from a new uniform point with the shape of the best start so far. On a
unimodal problem it reaches the first start's basin and ends the run (it stops once its
best point is close to the first answer's and the function between the two is a smooth
bowl: see PROBE_NEAR_FTOL); elsewhere it is one more start.
"""
import math

import numpy as np

from .._lib.host import to_host, to_float
from ._cbo_kernels import KERNELS
from ._cbo_local import LOCAL_ESS, LOCAL_FTOL, LocalRun, swarm_covariance
from ._polish import polish as scipy_polish

__all__ = ["Refiner", "same_basin"]

#: start step of the refinement, as a share of the start box (it grows within a few
#: generations where that is too small; a too-large start step costs many more), capped
#: by the swarm's spread
LOCAL_STEP = 1e-4
#: start step of the probe, as a share of the start box
PROBE_STEP = 0.2
#: evaluations per dimension (+1) of the L-BFGS-B step from a point on a bound
BOUND_POLISH = 100
#: the start shape of the refinement of a diagonal-noise start: "diagonal" (the
#: particles' spread per coordinate) or "isotropic" (its mean, on every coordinate)
DIAG_SHAPE = "isotropic"
#: the start shape of the refinement of the first covariance start, which ends after
#: FIRST_SHARE of ``maxfev`` before it has collapsed: "swarm" (the Gibbs-weighted
#: covariance) or "isotropic" (its mean variance, on every coordinate); and its start
#: step, as a share of the start box, capped by the swarm's spread (None: LOCAL_STEP).
#: The shape of that swarm is the one of a swarm still crossing the landscape, and a
#: refinement that starts with the swarm's width, from the identity, behaves as a fresh
#: CMA-ES run from the best point (Schaffer's and Gallagher's functions, Rosenbrock's
#: valley in d = 20), while a tiny step inside that shape creeps on for tens of thousands
#: of evaluations
COV_SHAPE = "isotropic"
COV_STEP = 1.0
#: a probe ends early once it matches the best answer or has missed it (see
#: :meth:`Refiner._probe_verdict`): PROBE_MISS is the spread / distance ratio, PROBE_GAP
#: the relative value gap of a miss, PROBE_STALL the share of its excess value that the
#: probe's best still gains per ``tolfun`` window (10 + 30 d / lam generations) below
#: which it no longer falls. A probe that learns an ill-conditioned valley crawls while
#: its shape adapts: on BBOB's bent cigar (f12, condition 1e6) in d = 20 its best gains
#: as little as 3e-4 to 9e-4 of its excess per window after a few hundred generations and
#: then falls fast again, so with PROBE_STALL 1e-3 every probe there was taken for a miss
#: and the run went on with a swarm start until its final reserve (1e-8 reached after
#: about 92 000 evaluations; with 1e-4 the probe matches the first answer after about
#: 1 000 generations and the run ends after 35 000 to 50 000), while a probe converging
#: on another local minimum gains a shrinking share per window and stops a few windows
#: later (Schaffer's F7)
PROBE_EARLY = True
PROBE_MISS = 0.01
PROBE_GAP = 1e-6
PROBE_STALL = 1e-4
#: a probe has also *reached* the best answer's basin once its best point lies within
#: PROBE_NEAR_XTOL of the box of the best answer's point (sup-norm) with a value within
#: PROBE_NEAR_FTOL (relative) of it, and the function is a smooth bowl between the two:
#: at PROBE_NEAR_POINTS evenly spaced points ``t`` of the segment from the best answer to
#: the probe's best, the excess over the best answer is at most ``t^2 + PROBE_NEAR_SLACK``
#: times the probe's (a few evaluations; tried at most PROBE_NEAR_TRIES times per probe).
#: The probe is then converging onto that point, and the decades of its value between
#: there and BASIN_FTOL cost about 5 % of a unimodal run (BBOB f1, f2, f8, f10, f11 in
#: d = 5 and 20) without saying anything new about the basins. Without the bowl's test,
#: Schaffer's functions (f17, f18 in d = 5), whose rings of kinked local minima lie closer
#: together than that, lost runs that had been solved (PROBE_NEAR_FTOL None: off)
PROBE_NEAR_FTOL = 1e-3
PROBE_NEAR_XTOL = 1e-2
PROBE_NEAR_POINTS = 3
PROBE_NEAR_TRIES = 3
PROBE_NEAR_SLACK = 0.05
#: ... and a probe that reaches, by that test, the basin of an answer worse than the best
#: has missed (it ends and counts as a start that ended there): a probe that falls into
#: Rosenbrock's poorer basin, found before, no longer converges there to LOOSE_FTOL while
#: the miss test waits for its best to stall (BBOB f8, d = 20, instance 8: 16 900 -> 15 500
#: evaluations)
PROBE_NEAR_ALL = True
#: the last refinement (the final reserve) refines the best point of all starts when the
#: last start's best is worse (else the last start's best, as every other refinement)
FINAL_BEST = True
#: two answers lie in the same basin when their points are this close (share of the box)
#: and their values agree within BASIN_FTOL (relative, or ``ftol`` if that is larger): a
#: converging local run spends many generations on the last digits of a basin it has
#: already found, which tell nothing about where the basins are
BASIN_XTOL = 1e-3
BASIN_FTOL = 1e-6
#: IPOP doublings of the refinement of the first (covariance) start
FIRST_GROWTH = 0
#: a local run whose values' spread shrank less than KINK_ORDER times as fast as its
#: search's (:meth:`._cbo_local.LocalRun._order`, about 2 at a smooth minimum) or that
#: regrew has stopped on a kink; after such a run the probes grow their population, by
#: KINK_GROWTH doublings and one more per further kinked run (IPOP-CMA-ES's remedy on the
#: rings of kinked local minima of Schaffer's functions), and go on while the runs find
#: kinks, up to PROBES, however many basins they found (KINK_ORDER None: off)
KINK_ORDER = 1.3
KINK_GROWTH = 3
KINK_PROBES = True
#: ... and once a run has stopped on a kink (KINK_TIGHT), answers no longer share a basin
#: by their loose tolerances, nor probes reach one by the looser test of PROBE_NEAR_*
#: (both relative to ``1 + |f|``: with BBOB's offsets, f near 273, 1e-3 of it joined
#: Schaffer's rings); basins are told apart at KINK_BASIN_FTOL, a lower value being
#: another basin, and the later local runs pause at KINK_PAUSE_FTOL
KINK_TIGHT = True
KINK_BASIN_FTOL = 1e-9
KINK_PAUSE_FTOL = 1e-9
#: with restarts, every refinement and probe stops once its values agree within
#: LOOSE_FTOL (relative; CMA-ES's ``tolfun`` test), far below BASIN_FTOL: that is enough
#: to tell its basin; only the best answer is finished to full precision, at the end,
#: resuming its local run (None: every refinement runs to full precision). On Rosenbrock's
#: function, whose first answer often lies in the poorer basin, the last digits of the
#: answers the run discards cost a third of its evaluations
LOOSE_FTOL = 1e-7
#: ... and the first start's refinement pauses sooner, at FIRST_PAUSE_FTOL (None: at
#: LOOSE_FTOL): until a probe has found that answer's basin again (its looser test,
#: PROBE_NEAR_*), nothing is compared with it that needs more digits, and when the probe
#: finds a better basin instead (Rosenbrock's function, whose first answer often lies in
#: the poorer one), the digits between are never paid: on BBOB's Rosenbrock in d = 20
#: (instances 5 and 8, first answers in the poorer basin) they were 10-12 % of that
#: refinement (1 700-2 000 evaluations), in d = 5 up to a quarter. Its answer
#: carries that tolerance, so that the restarts' agreement (:func:`same_basin`) does not
#: tell it apart from a more precise answer in its basin
FIRST_PAUSE_FTOL = 1e-4
#: ... once its values also converge geometrically (their range over the last ``tolfun``
#: window at most FIRST_PAUSE_FALL of the one before; None: not asked): with |f| large a
#: relative 1e-4 is coarse, and an ill-conditioned run that still crept on along its
#: flattest axis (BBOB's ellipsoid f10, f near -490: 0.5 above its minimum, 0.4 away from
#: it) paused there, and the probe that then reached the minimum counted as a second basin
FIRST_PAUSE_FALL = 0.1
#: ... and once the local run's spread is at least LOOSE_SPREAD of the box: on a sharp
#: ridge (BBOB f13) a local run shrinks to 1e-9 of the box with its values flat to 1e-7
#: while still well above the minimum, and moves on later
LOOSE_SPREAD = 1e-7


def same_basin(f, x, f_ref, x_ref, ftol, scale, kinked=False):
    """Whether the answer ``(f, x)`` lies in the basin of ``(f_ref, x_ref)``: ``f`` at
    most ``max(ftol, BASIN_FTOL) * (1 + |f_ref|)`` above ``f_ref`` and ``x`` within
    ``BASIN_XTOL * scale`` of ``x_ref`` (sup-norm; symmetric local minima, as
    Rastrigin's, share values but not points). ``ftol``: the user's, or the looser
    tolerance an answer stopped at (FIRST_PAUSE_FTOL). On a ``kinked`` problem (see
    KINK_TIGHT) the tolerance is ``max(ftol, KINK_BASIN_FTOL)`` and ``f`` must not lie
    more than it below ``f_ref`` either: a lower value is another ring."""
    floor = KINK_BASIN_FTOL if kinked else BASIN_FTOL
    tol = max(ftol, floor) * (1.0 + abs(f_ref))
    return (not kinked or f >= f_ref - tol) and f <= f_ref + tol and \
        float(np.max(np.abs(x - x_ref))) <= BASIN_XTOL * scale


class Refiner:
    """Refinement and probe for one solver (host side: the local run works on numpy)."""

    def __init__(self, solver):
        self.solver = solver
        # the local run weights host numpy arrays: the solver's kernels on numpy, the
        # host ones otherwise (cupy or another namespace), with the run's size rule
        self.host_weights = KERNELS.get("gibbs_weights", solver.be.host(), size=solver.size)
        box = solver.problem.box
        self.lb, self.ub = box if box is not None else (None, None)
        self.shape, self.shape_value = None, math.inf  # the shape of the best start
        self.resumable = []  # local runs stopped at LOOSE_FTOL, to finish the best one
        self.unfinished = []  # answers of paused runs polished on a bound (finish_best)
        self.loose_bound_step = False  # whether the last refinement ended so
        self.reached = None  # the answer whose basin the running probe reached (PROBE_NEAR_*)
        self.near_tries = 0  # the running probe's segment tests so far
        self.kinks = 0  # local runs that stopped on a kink (KINK_ORDER)
        self.kinked = False  # whether the last local run did

    # ---- host views of the objective and the draws
    def _batch(self, X):
        sv = self.solver
        X = np.asarray(X, dtype=np.float64)
        F = sv.evaluate(sv.be.asarray(X if sv.be.on_host else X.tolist(), dtype=sv.dtype))
        return np.asarray(to_host(F), dtype=np.float64)

    def _point(self, z):
        return float(self._batch(np.asarray(z)[None, :])[0])

    def _weights(self, F):
        W, _ = self.host_weights(F[None, :], None, 1.0, LOCAL_ESS, 1e300, np)
        return W[0]

    def _normal(self, shape):
        sv = self.solver
        return np.asarray(to_host(sv.draws.normal(shape, dtype=sv.xp.float64)),
                          dtype=np.float64)

    def _clip(self, X):
        # the local run projects its points onto the box (the swarm reflects them): a
        # point on a face is what a bound-constrained minimum needs
        return np.minimum(np.maximum(X, self.lb), self.ub)

    def _local(self, x, fx, shape, step, budget, cap_step=True, growth=0, stop=None,
               pause=None):
        """A local run (:class:`._cbo_local.LocalRun`); returns ``(x, f, nfev, run)``.
        ``pause``: the loose ``tolfun`` it stops at, resumable (None: full precision)."""
        d = x.shape[0]
        lam = int((4 + int(3 * math.log(d))) * self.solver.cfg.popsize_factor ** growth)
        run = LocalRun(self._batch, self._weights, x, fx, shape, step, self.lb, self.ub,
                       self._normal, self._clip, cap_step=cap_step, lam=lam)
        # a pause looser than LOOSE_FTOL (the first start's) also asks for a geometric fall
        looser = pause is not None and pause > LOOSE_FTOL
        xn, fn, used = run.advance(budget, stop=stop,
                                   ftol=LOCAL_FTOL if pause is None else pause,
                                   min_spread=LOOSE_SPREAD * self.solver.problem.scale,
                                   fall=FIRST_PAUSE_FALL if looser else None)
        self.kinked = KINK_ORDER is not None and run.kinked(KINK_ORDER)
        self.kinks += self.kinked
        return xn, fn, used, run

    def kink_growth(self):
        """The IPOP doublings of the next probe's population for the kinks found so far
        (see :data:`KINK_ORDER`)."""
        return 0 if not self.kinks else KINK_GROWTH + self.kinks - 1

    def tight(self):
        """Whether basins are told apart at the kinks' tolerance (KINK_TIGHT)."""
        return KINK_TIGHT and self.kinks > 0

    def kink_probes(self):
        """Whether the probes go on, however many basins they found (KINK_PROBES)."""
        return KINK_PROBES and self.kinks > 0

    def _pause_ftol(self, final, first=False):
        """The loose tolerance a refinement stops at, or None (full precision): with
        restarts and local runs, unless it is the last refinement, LOOSE_FTOL
        (FIRST_PAUSE_FTOL for the ``first`` start's); never when LOOSE_FTOL is None."""
        cfg = self.solver.cfg
        if LOOSE_FTOL is None or not cfg.restarts or cfg.polish != "local" or final:
            return None
        if self.kinks:  # only counted with KINK_ORDER set
            return KINK_PAUSE_FTOL
        return FIRST_PAUSE_FTOL if first and FIRST_PAUSE_FTOL is not None else LOOSE_FTOL

    # ---- the end of a start
    def finish(self, s, end):
        """Refine the best point of start ``s`` (ended by ``end``) and fold it in."""
        sv = self.solver
        self.loose_bound_step = False
        final = end in ("maxfev", "maxiter")
        if s.F is None:  # the budget did not reach this start: go on with the best point
            if final:
                self.refine_best()
            return
        refine = sv.cfg.polish is not None and end not in ("callback", "diverged", "target")
        # a covariance start capped before it collapsed: refined from its width (COV_SHAPE)
        wide = s.noise == "covariance" and end == "capped"
        shape = self._shape_of(s, wide) if refine or sv.cfg.polish == "local" else None
        pause = None
        if refine and final and FINAL_BEST and \
                to_float(sv.xp.min(sv.BF)) < to_float(sv.xp.min(s.BF)):
            self.refine_best()  # the last refinement goes to the best point of all starts
        elif refine:
            growth = s.growth if sv.answers else s.growth + FIRST_GROWTH
            step = COV_STEP if wide and COV_STEP is not None else LOCAL_STEP
            pause = self._pause_ftol(final, first=not sv.answers)
            s.BF, s.BX = self._refine(s.BF, s.BX, shape, sv.left(final=final), growth, step,
                                      pause=pause)
        sv.merge(s)
        ib = int(sv.xp.argmin(s.BF))
        value = to_float(s.BF[ib])
        # an answer: (value, host point, the tolerance its value stopped at)
        sv.answers.append((value, np.asarray(to_host(s.BX[ib, :]), dtype=np.float64),
                           self._answer_tol(pause)))
        if self.loose_bound_step:
            self.unfinished.append(sv.answers[-1])
        if shape is not None and value < self.shape_value:
            self.shape, self.shape_value = shape, value

    def _answer_tol(self, pause):
        """The tolerance an answer's value stopped at: the pause's, unless its local run
        stopped on a kink (its value, paused, may lie far above the kink's, and relative
        to ``1 + |f|`` a loose tolerance would join distinct rings of Schaffer's kinked
        minima)."""
        return 0.0 if pause is None or (self.tight() and self.kinked) else pause

    def refine_best(self):
        """The last refinement, on the best point of all starts (the final reserve): the
        local run that found it resumed to full precision when it stopped at LOOSE_FTOL
        (:meth:`complete`), else a new refinement from it."""
        sv = self.solver
        if sv.cfg.polish is not None and sv.BX is not None and not self.complete():
            sv.BF, sv.BX = self._refine(sv.BF, sv.BX, self.shape, sv.left(final=True))

    def complete(self):
        """Resume, to full precision and with what is left of ``maxfev``, the loose local
        run that holds the best point of all starts; returns whether there was one."""
        sv = self.solver
        best = sv.best_value()
        runs = [r for r in self.resumable if not r.done and r.best_f <= best]
        self.resumable = []
        if not runs:
            return False
        xn, fn, _ = runs[0].advance(sv.left(final=True))
        sv.BF, sv.BX = self._put(sv.BF, sv.BX, int(sv.xp.argmin(sv.BF)), xn, fn)
        return True

    def finish_best(self):
        """The best answer, to full precision, once the starts agree: the loose local run
        that holds it resumed (:meth:`complete`), or, when no such run is left (its point
        went on from a paused local run to the bound step's L-BFGS-B, which stalls near
        1e-6), a new refinement from the best point with what is left of ``maxfev``."""
        sv = self.solver
        if self.complete() or not sv.answers:
            return
        best = min(sv.answers, key=lambda a: a[0])
        if any(a is best for a in self.unfinished):
            sv.BF, sv.BX = self._refine(sv.BF, sv.BX, self.shape, sv.left(final=True))

    def _on_bounds(self, x):
        """Whether a coordinate of ``x`` lies on a bound (within 1e-9 of the box)."""
        if self.lb is None:
            return False
        tol = 1e-9 * (self.ub - self.lb)
        return bool(np.any((x - self.lb <= tol) | (self.ub - x <= tol)))

    def _shape_of(self, s, wide=False):
        """The swarm's shape around its consensus, best run: the Gibbs-weighted covariance
        (covariance noise; its mean variance on every coordinate for a ``wide`` start,
        one that ended before it collapsed) or the particles' spread (diagonal noises)."""
        ib = int(np.argmin(np.asarray(to_host(s.BF), dtype=np.float64)))
        P = np.asarray(to_host(s.P[ib, ...]), dtype=np.float64)
        C = np.asarray(to_host(s.C[ib, :]), dtype=np.float64)
        if s.noise == "covariance":
            cov = swarm_covariance(P, np.asarray(to_host(s.W[ib, :]), dtype=np.float64), C)
            if COV_SHAPE == "swarm" or not wide:
                return cov
            return np.eye(P.shape[1]) * (float(np.trace(cov)) / P.shape[1])
        var = np.mean((P - C) ** 2, axis=0)
        if DIAG_SHAPE == "isotropic":
            return np.eye(P.shape[1]) * float(np.mean(var))
        return np.diag(var)

    def _refine(self, BF, BX, shape, budget, growth=0, step=LOCAL_STEP, pause=None):
        """Refine the best of the per-run points ``(BF, BX)`` with at most ``budget``
        evaluations (the local run's population grows as the swarm's did, ``growth``
        IPOP doublings; ``pause``: see :meth:`_pause_ftol`); returns the updated ``(BF, BX)``."""
        sv, xp = self.solver, self.solver.xp
        ib = int(xp.argmin(BF))
        fx = to_float(BF[ib])
        if budget <= 0 or not math.isfinite(fx):
            return BF, BX
        x = np.asarray(to_host(BX[ib, :]), dtype=np.float64)
        if sv.cfg.polish == "local":
            xn, fn = self._local_and_bounds(x, fx, shape, budget, growth, step, pause)
        else:
            xn, fn, _ = scipy_polish(self._point, x, fx, self.lb, self.ub, budget,
                                     sv.cfg.polish)
        return self._put(BF, BX, ib, xn, fn)

    def _local_and_bounds(self, x, fx, shape, budget, growth, step=LOCAL_STEP, pause=None):
        """The local covariance run from ``x``, then, if its answer lies on a bound, a
        projected quasi-Newton run (L-BFGS-B): the covariance run creeps along a face,
        L-BFGS-B moves onto it at once (a linear slope). A start point already on a bound
        leaves a share of the budget for that step. A run that pauses (``pause``) inside
        the box is kept to be resumed."""
        d = x.shape[0]
        share = min(budget // 4, BOUND_POLISH * (d + 1)) if self._on_bounds(x) else 0
        xn, fn, used, run = self._local(x, fx, shape, step * self.solver.problem.scale,
                                        budget - share, growth=growth, pause=pause)
        on_bounds = self._on_bounds(xn)
        if pause is not None and not on_bounds:
            self.resumable.append(run)
        # a paused run's answer polished on a bound is not resumable: finish_best refines it
        self.loose_bound_step = pause is not None and not run.done and on_bounds
        if on_bounds:
            xn, fn, _ = scipy_polish(self._point, xn, fn, self.lb, self.ub,
                                     min(budget - used, share + BOUND_POLISH * (d + 1)),
                                     "L-BFGS-B")
        return xn, fn

    def _put(self, BF, BX, ib, x, f):
        """``(BF, BX)`` with run ``ib`` holding the host point ``x`` (value ``f``) if
        that is better."""
        sv, xp = self.solver, self.solver.xp
        if not f < to_float(BF[ib]):
            return BF, BX
        hit = xp.reshape(xp.arange(BF.shape[0]), (-1, 1)) == ib
        return (xp.where(hit[:, 0], xp.asarray(f, dtype=sv.dtype), BF),
                xp.where(hit, xp.asarray(x.tolist(), dtype=sv.dtype), BX))

    # ---- the probe
    def _probe_verdict(self):
        """The early end of a probe, given the best answer so far ``(f_ref, x_ref)``: the
        probe has *matched* it once its best point lies in the same basin
        (:func:`same_basin`, the test the restarts' agreement asks); it has *missed* once
        its search has shrunk onto another point (its spread below PROBE_MISS of its
        distance to ``x_ref``) whose value is worse by more than PROBE_GAP and no longer
        falls (by less than PROBE_STALL of that excess over the last generations). It has
        also matched once it has *reached* that basin by the looser test of PROBE_NEAR_*
        (:meth:`_near`); it then counts as a start that ended there. It has missed, too,
        once it has reached the basin of a worse answer by that test (PROBE_NEAR_ALL), and
        counts as a start that ended in that one. Either way the rest of its convergence
        would tell nothing new."""
        sv = self.solver
        if not (PROBE_EARLY and sv.answers):
            return None
        f_ref, x_ref, tol_ref = best = min(sv.answers, key=lambda a: a[0])
        if not math.isfinite(f_ref):
            return None
        gap = PROBE_GAP * (1.0 + abs(f_ref))
        # each worse answer once (a probe that reached one is recorded as that very tuple)
        worse = list({id(a): a for a in sv.answers
                      if a is not best and math.isfinite(a[0])}.values())

        def verdict(best_x, best_f, m, spread, gain):
            if same_basin(best_f, best_x, f_ref, x_ref, max(sv.cfg.ftol, tol_ref),
                          sv.problem.scale, kinked=self.tight()):
                return True
            for answer in [best] + (worse if PROBE_NEAR_ALL else []):
                if self._near(best_f, best_x, answer[0], answer[1]):
                    self.reached = answer
                    return True
            excess = best_f - f_ref
            return excess > gap and gain < PROBE_STALL * excess and \
                spread < PROBE_MISS * float(np.linalg.norm(m - x_ref))
        return verdict

    def _near(self, f, x, f_ref, x_ref):
        """Whether a probe's best ``(f, x)`` has reached the basin of ``(f_ref, x_ref)``
        by the looser test of PROBE_NEAR_FTOL and PROBE_NEAR_XTOL, with no barrier on the
        segment between the two points (a few evaluations, PROBE_NEAR_TRIES times)."""
        if PROBE_NEAR_FTOL is None or self.near_tries >= PROBE_NEAR_TRIES or self.tight():
            return False
        scale = self.solver.problem.scale
        if not (f <= f_ref + PROBE_NEAR_FTOL * (1.0 + abs(f_ref)) and
                float(np.max(np.abs(x - x_ref))) <= PROBE_NEAR_XTOL * scale):
            return False
        self.near_tries += 1
        t = np.arange(1, PROBE_NEAR_POINTS + 1) / (PROBE_NEAR_POINTS + 1.0)
        on_segment = self._batch(x_ref + t[:, None] * (x - x_ref))
        return bool(np.all(on_segment - f_ref <= (t * t + PROBE_NEAR_SLACK) * (f - f_ref)))

    def probe(self, growth=0):
        """A local covariance run from a new uniform start point (its population grown by
        ``growth`` IPOP doublings); returns "probed" (or "maxfev" when no evaluation is
        left for it)."""
        sv, xp = self.solver, self.solver.xp
        budget = sv.left()
        if budget <= 0:
            self.refine_best()
            return "maxfev"
        x = np.asarray(to_host(sv.start_points((1,))[0, :]), dtype=np.float64)
        pause = self._pause_ftol(False)
        self.reached, self.near_tries = None, 0
        xn, fn, _, run = self._local(x, math.inf, None, PROBE_STEP * sv.problem.scale,
                                     budget, cap_step=False, growth=growth,
                                     stop=self._probe_verdict(), pause=pause)
        if pause is not None:
            self.resumable.append(run)
        sv.BF, sv.BX = self._put(sv.BF, sv.BX, int(xp.argmin(sv.BF)), xn, fn)
        # a probe that reached the best answer's basin by the looser test ends in that
        # basin: it is recorded with that answer, which its own would join at full precision
        sv.answers.append(self.reached if self.reached is not None else
                          (fn, np.asarray(xn, dtype=np.float64), self._answer_tol(pause)))
        return "probed"
