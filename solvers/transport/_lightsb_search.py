"""LightSB's candidate search: fits from several starts, advanced one iteration at a time.

A *candidate* is one way to reach a mixture of at most ``n_components`` components: the
split path (one component, then every component split in two and refitted, while the
held-out loss keeps dropping) or a fixed start (k-means++ or random means at the full
size). Each is a sequence of *stages*, one fit of a fixed-size mixture: :class:`StageFit`
(L-BFGS with held-out early stopping, advanced one iteration at a time) or
:class:`AdamStage`. :class:`Search` runs the candidates and, between two iterations,
drops the one that cannot overtake the best (:func:`cannot_overtake`).
"""
import math
import time

import numpy as np

from .._lib.host import to_host
from .._lib.results import Progress, Status, call_callback, STOPPED_BY_CALLBACK
from ._lightsb_fit import BUDGET, NONFINITE, SUCCESS, split_components
from ._lightsb_lbfgs import LBFGS
from ._lightsb_model import Params, loss_and_grad

#: L-BFGS curvature pairs kept (SciPy's ``maxcor``): 50 took 10-15 % fewer iterations
#: than 20 on recipe pairs at eps = 0.1 and the same elsewhere
MEMORY = 50
#: loss evaluations one line search may spend
MAX_EVALS = 40
#: the loss's relative accuracy in units of its dtype's epsilon (sums over many rows)
ROUNDING_ULPS = 1e4
#: the drop rule (:func:`cannot_overtake`): iterations before a fit can be judged, the
#: share of its iterations its recent drop is read over, and the factor on that drop.
#: Chosen on fits of recipe pairs (D = 2-128, eps = 0.1-10, seeds 1-7, 50 000 and
#: 150 000 samples per side) with both starts run to the end: over the 25 k-means++
#: starts that ended below the split path's score, the largest factor that would have
#: dropped one of them with this window was 2.08 (an eps = 0.1 start that stalls, then
#: drops again); shorter windows needed factors of 4.4-15 on the same starts. The
#: split-stage cut uses the same bound: the 202 recorded splits that lowered the score
#: by split_tol needed a factor of at most 0.32
WINDOW, WINDOW_SHARE, FACTOR = 15, 0.5, 2.5
#: iterations before a split stage can be judged against its parent: a split that
#: helps lowers the score early (on the same records, with 8 the largest factor a
#: helpful split needed was 0.62; with 6 it was 2.6), and the rejected splits ended
#: 22 % sooner than after ``patience`` iterations
SPLIT_WINDOW = 8
#: the kept fit goes on until its held-out loss has not improved for KEPT_PATIENCE times
#: ``patience`` iterations, for at most KEPT_SHARE of the race's cost (its iterations,
#: weighted by :func:`iteration_cost`): the race only needs to tell the candidates apart,
#: the returned fit is worth a later stop. At eps = 0.1 the held-out loss of a fit can
#: pause for ``patience`` iterations and then fall again. On recipe pairs (150 000
#: samples; D = 4, 16 and 64; seeds 1-6) going on without a cap lowered the kept fit's
#: cBW2-UVP by up to 3.5x (0.056 -> 0.016 % at D = 4, eps = 0.1) but for up to 2.2x the
#: CPU time; with a cap of 5 % most of the gain stayed (D = 16 seed 6: 0.024 -> 0.020 %,
#: D = 64 eps = 1 seed 3: 0.074 -> 0.032 %, D = 4: 0.056 -> 0.049 %), 15 % gained little
#: more; at eps = 1 and 10 the fit mostly stopped after ``patience`` iterations without a
#: new best
KEPT_PATIENCE = 2
KEPT_SHARE = 0.05
#: the per-iteration cost of a fit that does not grow with K, in components
FIXED_COST = 16


class StageFit:
    """One full-batch L-BFGS fit of a fixed-size mixture, held-out early stopping.

    The fit keeps the iterate with the lowest held-out loss (the starting point
    included); it stops after ``patience`` iterations without a new best, after
    ``maxiter`` iterations, or when the line search fails. Without a held-out part the
    training loss plays its role. ``rows`` gets ``(training loss, held-out loss,
    seconds)`` per iteration and ``curve`` the best held-out loss so far.
    """

    def __init__(self, fitter, params, clock):
        self.fitter, self.kind, self.xp, self.clock = fitter, params.kind, fitter.xp, clock
        self.dtype = params.r.dtype
        self.shapes = [tuple(a.shape) for a in params.arrays()]
        self.sizes = [math.prod(s) for s in self.shapes]
        self.n_components = self.shapes[1][0]
        host = np.float32 if self.dtype == self.xp.float32 else np.float64
        v0 = to_host(params.flat(self.xp)).astype(host).astype(np.float64)
        rounding = ROUNDING_ULPS * float(np.finfo(host).eps)
        self.opt = LBFGS(self._fun, v0, memory=MEMORY, max_evals=MAX_EVALS, rounding=rounding)
        self.loss = self.opt.f
        self.val = self._val(v0, self.opt.f) if math.isfinite(self.opt.f) else math.nan
        self.best_v, self.best_val, self.bad = v0, self.val, 0
        self.patience, self.maxiter = fitter.opts.patience, fitter.opts.maxiter
        self.stalled = False       # stopped by ``patience`` (it could go on)
        self.rows, self.curve = [], []
        self.status = self.message = None
        if not math.isfinite(self.val):
            self.best_val = math.inf
            self.status, self.message = NONFINITE

    def unpack(self, v):
        xp, out, off = self.xp, [], 0
        for shp, sz in zip(self.shapes, self.sizes):
            part = np.ascontiguousarray(v[off:off + sz])
            out.append(xp.reshape(xp.asarray(part, dtype=self.dtype), shp))
            off += sz
        return Params(*out, self.kind)

    def _fun(self, v):
        f = self.fitter
        loss, g = loss_and_grad(f.x0, f.x1, self.unpack(v), f.eps, self.xp, f.kernels,
                                f.chunk)
        return float(loss), to_host(g.flat(self.xp)).astype(np.float64)

    def _val(self, v, train_loss):
        if self.fitter.x0v is None:
            return train_loss
        return self.fitter.score(self.unpack(v))

    @property
    def done(self):
        return self.status is not None

    @property
    def params(self):
        """The current iterate."""
        return self.unpack(self.opt.x)

    @property
    def best_params(self):
        return self.unpack(self.best_v)

    def advance(self):
        """One L-BFGS iteration; False when none was made (the fit has stopped)."""
        if self.done:
            return False
        opt = self.opt
        if not opt.step():
            code = Status.CONVERGED if opt.converged else Status.MAXFEV
            self.status, self.message = int(code), opt.message
            return False
        self.loss = opt.f
        self.val = self._val(opt.x, opt.f)
        self.rows.append((self.loss, self.val, self.clock()))
        if not math.isfinite(self.val):
            self.status, self.message = NONFINITE
            self.curve.append(self.best_val)
            return True
        if self.val < self.best_val - 1e-12 * abs(self.val):
            self.best_v, self.best_val, self.bad = opt.x.copy(), self.val, 0
        else:
            self.bad += 1
        self.curve.append(self.best_val)
        if self.bad >= self.patience:
            what = "held-out" if self.fitter.x0v is not None else "training"
            self.status, self.stalled = int(Status.CONVERGED), True
            self.message = f"{what} loss stopped improving for {self.patience} iterations"
        elif opt.nit >= self.maxiter:
            self.status, self.message = BUDGET
        return True

    def resume(self, patience, extra):
        """Let a fit that stopped by ``patience`` go on until ``patience`` (the new
        value) iterations without a new best, for at most ``extra`` more iterations;
        False if it cannot go on."""
        if not self.stalled or patience <= self.patience or extra < 1:
            return False
        self.patience, self.stalled = patience, False
        self.maxiter = min(self.maxiter, self.opt.nit + extra)
        self.status = self.message = None
        return True


class AdamStage:
    """A minibatch Adam fit with the :class:`StageFit` interface: one :meth:`advance`
    runs the whole schedule (there is no held-out loss to race on); its score is the
    full-data loss of the final iterate (held-out without one)."""

    stalled = False     # a schedule that ran to its end cannot go on

    def __init__(self, fitter, params, clock, draws, monitor):
        self.fitter, self.start, self.clock = fitter, params, clock
        self.draws, self.monitor = draws, monitor
        self.n_components = params.r.shape[0]
        self.params = self.best_params = params
        self.loss = self.val = self.best_val = math.nan
        self.rows, self.curve = [], []
        self.status = self.message = None

    @property
    def done(self):
        return self.status is not None

    def advance(self):
        if self.done:
            return False
        def monitor(p, loss, nit):
            self.params, self.loss = p, loss
            return self.monitor is not None and self.monitor(self, p, loss, nit)
        p, history, _, status, message = self.fitter.minibatch_adam(
            self.start, self.draws, monitor if self.monitor is not None else None)
        now = self.clock()
        self.rows = [(h, math.nan, now) for h in history]
        self.params = self.best_params = p
        self.loss = history[-1] if history else math.nan
        self.status, self.message = status, message
        if status != NONFINITE[0]:
            self.val = self.best_val = self.fitter.score(p)
        self.curve = [self.best_val]
        return True

    def resume(self, patience, extra):
        return False


class Candidate:
    """One start of the search: its stages, its best fit so far and its history.

    ``history`` gets one row per iteration, ``(n_components, training loss, held-out
    loss, seconds since the fit began)``, ``stages`` one ``(n_components, score)`` per
    finished stage; ``outcome`` ends as ``"finished"``, ``"dropped"`` (it could not
    overtake the best) or ``"stopped"`` (by the callback).
    """

    def __init__(self, label, search, make_start, draws):
        self.label, self.search, self.draws = label, search, draws
        self.make_start = make_start    # the first stage's parameters, drawn when it starts
        self.stages, self.history = [], []
        self.best = None            # (score, params, status, message) of the best stage
        self.best_stage = None      # that stage (the kept fit can go on from it: its
                                    # L-BFGS state stays, one fit per candidate) ...
        self.best_index = None      # ... and its entry in ``stages``
        self.nit, self.seconds, self.outcome = 0, 0.0, None
        self.stage = None

    @property
    def done(self):
        return self.outcome is not None

    @property
    def best_val(self):
        """The score of the fit it would return if it ended now (inf before any)."""
        if self.stage is None:
            return math.inf
        now = self.stage.best_val if not self.done else math.inf
        now = now if math.isfinite(now) else math.inf
        if self.best is None:
            return now
        return now if now < self.best[0] - self.tolerance() else self.best[0]

    def advance(self):
        """One iteration of the current stage, moving to the next stage when it ends;
        returns that stage and the history rows it added."""
        t0 = time.perf_counter()
        if self.stage is None:
            self.stage = self.search.new_stage(self, self.make_start())
        st = self.stage
        new = self.advance_stage(st)
        if st.status == STOPPED_BY_CALLBACK[0]:     # an Adam stage's callback said stop
            self.stop("stopped")
        elif st.done:
            self._end_stage()
        self.seconds += time.perf_counter() - t0
        return st, new

    def advance_stage(self, st):
        """One :meth:`advance` of stage ``st``; its new rows, counted and kept in
        ``history``."""
        seen = len(st.rows)
        st.advance()
        new = st.rows[seen:]
        self.nit += len(new)
        self.history += [(st.n_components,) + row for row in new]
        return new

    def _end_stage(self):
        st = self.stage
        score = st.best_val
        self.stages.append((st.n_components, score))
        if self.best is None or score < self.best[0] - self.tolerance():
            self.best, self.best_stage = (score, st.best_params, st.status, st.message), st
            self.best_index = len(self.stages) - 1
            # a failed line search still leaves a usable fit to grow from
            usable = st.status in SUCCESS or st.status == int(Status.MAXFEV)
            nxt = self.next_stage() if usable else None
        else:
            nxt = None
        if nxt is None:
            self.outcome = "finished"
        else:
            self.stage = self.search.new_stage(self, nxt)

    def stop(self, outcome):
        """End the candidate now; its best fit so far (the current stage's best
        iterate included) is its result."""
        st = self.stage
        self.stages.append((st.n_components, st.best_val))
        if self.best is None or st.best_val < self.best[0] - self.tolerance():
            status, message = (STOPPED_BY_CALLBACK if outcome == "stopped" else
                               (int(Status.CONVERGED), "dropped: it could not overtake the "
                                "best candidate"))
            self.best, self.best_stage = (st.best_val, st.best_params, status, message), st
            self.best_index = len(self.stages) - 1
        self.outcome = outcome

    def judge(self, bar):
        """Drop the candidate if, in its last stage, it cannot get below ``bar`` (the
        best score of the others)."""
        st = self.stage
        if not self.done and st is not None and st.curve and self.final_stage() \
                and cannot_overtake(st.curve, bar):
            self.stop("dropped")

    def tolerance(self):
        """How much a later stage must lower the score to replace an earlier one."""
        return 0.0

    def final_stage(self):
        """Whether the current stage is its last (later ones could still go lower)."""
        return True

    def next_stage(self):
        """The start of the next stage, or None when the candidate is finished."""
        return None


class SplitPath(Candidate):
    """Grow 1 -> 2 -> 4 -> ... -> n_components components while each split lowers the
    score by more than ``split_tol``."""

    def tolerance(self):
        return self.search.fitter.opts.split_tol

    def next_stage(self):
        f = self.search.fitter
        K = f.opts.n_components
        parent = self.best[1]
        if parent.r.shape[0] >= K:
            return None
        x_gate = f.x0v if f.x0v is not None else f.x0
        return split_components(parent, x_gate, f.eps, self.draws, f.xp, K, f.kernels.lse)

    def final_stage(self):
        return self.stage.n_components >= self.search.fitter.opts.n_components

    def judge(self, bar):
        """As :meth:`Candidate.judge`; besides, a split whose fit cannot beat its
        parent's score by ``split_tol`` ends now (the parent is kept), judged from
        :data:`SPLIT_WINDOW` iterations on."""
        super().judge(bar)
        st = self.stage
        if self.done or self.best is None or not st.curve:
            return
        if cannot_overtake(st.curve, self.best[0] - self.tolerance(), window=SPLIT_WINDOW):
            st.status = int(Status.CONVERGED)
            st.message = "the split could not lower the held-out loss by split_tol"
            self._end_stage()


def iteration_cost(n_components):
    """The CPU cost of one iteration of a fit with ``n_components`` components, in units
    of one component's share: one GEMM column per component on top of a fixed part
    (building the features, the held-out score) worth about :data:`FIXED_COST`
    components (one thread, 135 000 rows a side: 16 ms at K = 2 against 64 ms at K = 50
    for D = 16, 65 against 204 ms for D = 64)."""
    return n_components + FIXED_COST


def cannot_overtake(curve, target, *, window=WINDOW, share=WINDOW_SHARE, factor=FACTOR):
    """True when a fit whose best held-out loss per iteration is ``curve`` is not on
    course to go below ``target``.

    The bound is read from the loss curve: its recent drop (over the last
    ``max(window, share * len(curve))`` iterations) times ``factor`` is taken as all the
    fit has left to gain; L-BFGS curves flatten, so this is optimistic. Before ``window``
    iterations nothing is decided.
    """
    t = len(curve)
    if t <= window or not math.isfinite(target):
        return False
    w = max(window, int(math.ceil(share * t)))
    w = min(w, t - 1)
    drop = curve[t - 1 - w] - curve[t - 1]
    return curve[t - 1] - factor * drop > target


class Search:
    """Candidates fitted in turn, each dropped as soon as it cannot overtake the best.

    Candidates run in the order given (the split path first: its small early stages are
    cheap and it is the better start more often); the best held-out loss reached so far
    by any candidate is the mark a later one must beat. A split stage that cannot beat
    its parent by ``split_tol`` ends early the same way.
    """

    def __init__(self, fitter, *, callback, progress, start_time, to_bridge):
        self.fitter, self.callback, self.progress = fitter, callback, progress
        self.start_time, self.to_bridge = start_time, to_bridge
        self.candidates = []
        self.nit = 0
        self.stopped = False
        self._bar = None

    def clock(self):
        return time.perf_counter() - self.start_time

    # -- building ---------------------------------------------------------------------
    def new_bar(self, candidate, n_components, total, note=""):
        if self._bar is not None:
            self._bar.close()
        label = f"lightsb {candidate.label} K={n_components}{note}"
        self._bar = Progress(total, label, enabled=self.progress)

    def new_stage(self, candidate, params):
        o = self.fitter.opts
        self.new_bar(candidate, params.r.shape[0], o.maxiter)
        if o.optimizer == "adam":
            monitor = None if self.callback is None else (
                lambda st, p, loss, nit: self._report(candidate, p, loss, math.nan,
                                                      self.nit + nit))
            return AdamStage(self.fitter, params, self.clock, candidate.draws, monitor)
        return StageFit(self.fitter, params, self.clock)

    def add(self, kind, label, draws, x0_all, x1_all):
        """A candidate: the split path or a fixed start (``"kmeans++"``, ``"random"``).
        Its start is drawn from ``draws`` when it first runs."""
        f = self.fitter
        K = 1 if kind == "split" else f.opts.n_components
        cls = SplitPath if kind == "split" else FixedStart
        self.candidates.append(
            cls(label, self, lambda: f.initial(K, x0_all, x1_all, kind, draws), draws))
        return self.candidates[-1]

    # -- running ----------------------------------------------------------------------
    def run(self):
        for c in self.candidates:
            while not c.done:
                self._step(c)
                if self.stopped:
                    break
            if self.stopped:
                for other in self.candidates:
                    if not other.done:
                        other.outcome = "not run"
                break
        if not self.stopped:
            self._continue_kept(self.winner())
        if self._bar is not None:
            self._bar.close()
        return self.candidates

    def winner(self):
        """The candidate with the lowest score (the one whose fit is returned)."""
        ran = [c for c in self.candidates if c.best is not None]
        return min(ran, key=lambda c: c.best[0] if math.isfinite(c.best[0]) else math.inf)

    def _step(self, c):
        st, new = c.advance()      # (c.stage may have moved on to the next stage)
        if self._record(c, st, new):
            c.stop("stopped")
        if c.outcome == "stopped":          # by the callback (Adam reports from inside)
            self.stopped = True
            return
        c.judge(self._bar_for(c))

    def _record(self, c, st, new):
        """Count the iterations ``new`` of stage ``st`` of ``c``, show them and report the
        iterate to the callback; True if it asked to stop."""
        self.nit += len(new)
        if new and self._bar is not None:
            self._bar.update(len(new), loss=new[-1][0])
        return bool(new) and self.callback is not None and isinstance(st, StageFit) \
            and self._report(c, st.params, st.loss, st.val)

    def _continue_kept(self, c):
        """Let the kept fit go on to ``KEPT_PATIENCE * patience`` iterations without a
        new best (the same iterates as had it run with that patience from the start)."""
        st = c.best_stage
        if st is None:
            return
        race_cost = sum(iteration_cost(row[0]) for cand in self.candidates
                        for row in cand.history)
        extra = int(KEPT_SHARE * race_cost / iteration_cost(st.n_components))
        race_message = st.message
        if not st.resume(KEPT_PATIENCE * self.fitter.opts.patience, extra):
            return
        t0, first = time.perf_counter(), len(st.rows)
        self.new_bar(c, st.n_components, st.maxiter - st.opt.nit, " (kept, continued)")
        while not st.done and not self.stopped:
            self.stopped = self._record(c, st, c.advance_stage(st))
        status, message = STOPPED_BY_CALLBACK if self.stopped else (st.status, st.message)
        if status == BUDGET[0] and st.opt.nit < self.fitter.opts.maxiter:   # the share
            status = int(Status.CONVERGED)
            message = (f"{race_message}; the kept fit then went on for {len(st.rows) - first} "
                       f"iterations (its share of the search)")
        c.best = (st.best_val, st.best_params, status, message)
        c.stages[c.best_index] = (st.n_components, st.best_val)
        c.seconds += time.perf_counter() - t0

    def _bar_for(self, c):
        """The best held-out loss of the other candidates."""
        others = [o.best_val for o in self.candidates if o is not c]
        return min(others, default=math.inf)

    def _report(self, c, params, loss, val, nit=None):
        """Call the user's callback with the iterate; True if it asked to stop."""
        xp = self.fitter.xp
        return call_callback(
            self.callback, x=self.fitter.be.to_input(params.flat(xp)), fun=float(loss),
            nit=self.nit if nit is None else nit, candidate=c.label,
            n_components=int(params.r.shape[0]), val_loss=float(val), elapsed=self.clock(),
            bridge=self.to_bridge(params))


class FixedStart(Candidate):
    """A single fit from a fixed start of ``n_components`` components."""
