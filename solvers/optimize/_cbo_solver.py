r"""The CBO solver: starts, steps, stopping rules, restarts and the refinement of answers.

:class:`CBOSolver` runs one :func:`~solvers.optimize.cbo.minimize_cbo` call on its validated
options (:func:`._cbo_config.configure`) and a :class:`~._cbo_config.Problem`. A *start* is a
swarm of ``M`` batched runs of ``N`` particles with one noise type; it steps until one
of its stopping rules fires (:meth:`CBOSolver._verdict`), then its best point is refined
(:mod:`._cbo_refine`) and, with restarts, the next start begins unless two starts ended
in the basin of the best answer (:meth:`CBOSolver._confirmed`). The hot inner operations
come from the kernel table (:mod:`._cbo_kernels`); nothing here asks which backend it
runs on.

Covariance noise draws :math:`X_i = c + \sigma_t\, v^{-1/2}\,\eta_i` with
:math:`\eta_i \sim N(0, \Sigma_w)` (:func:`covariance_noise`) and
:math:`v = \det(\Sigma_w)^{1/d}`: the swarm gives the shape, and the step size
:math:`\sigma_t` is adapted from the length of the consensus move in the coordinates of
the shape that drew it, :math:`y = \sqrt{\mu_w}\,\lVert (\Sigma_w / v)^{-1/2}
(c_{t+1} - c_t) \rVert / \sigma_t`, which is :math:`\chi_d = E\lVert N(0, I_d)\rVert`
under random selection: :math:`\sigma_{t+1} = \sigma_t \exp(\kappa (y / \chi_d - 1))`
(CMA-ES's cumulative step-size rule without the path, so the draws stay exactly affine
invariant).
"""
import math

import numpy as np

from .._lib.host import to_host, to_float
from .._lib.results import Progress, call_callback
from ._cbo_bounds import reflect
from ._cbo_config import reserve
from ._cbo_eval import Evaluator
from ._cbo_kernels import KERNELS, SYNC_EVERY, run_size
from ._cbo_refine import BASIN_FTOL, Refiner, same_basin
from ._cbo_result import build_result

__all__ = ["CBOSolver", "covariance_noise"]

#: per-noise defaults of (sigma, lam, dt); the diagonal ones calibrated on shifted
#: Rastrigin/Ackley/Levy-20, the covariance ones resample around the consensus
DIAG_DEFAULTS = (10.5, 0.4, 0.01)
COV_DEFAULTS = (1.0, 1.0, 1.0)
#: covariance starts: at least this many particles per dimension (the weighted covariance
#: needs an effective sample size above d) and this effective sample size share
COV_PER_DIM = 6
COV_ESS = 0.3
#: the cap of the growth schedule of alpha (diagonal noises) and of the ESS bisection
ALPHA_MAX = 1e5
ESS_ALPHA_MAX = 1e300
#: damping of the covariance step-size rule, times CMA-ES's c_sigma / d_sigma
CSA_DAMP = 4.0
#: with the default ``xtol``, a start has collapsed once its spread is below this share
#: of the start box: (covariance, diagonal noises); alpha_max caps the diagonal noises'
#: precision (about 1e-4 in x on a smooth bowl) and the refinement takes it from there
XTOL_SHARE = (1e-5, 1e-5)
#: stagnation patience, in units of 10 + 30 d / N steps: (covariance, diagonal noises); a
#: diagonal start's best can stall for long stretches before it hops to a better basin
PATIENCE = (3, 10)
#: the stagnation and ``ftol`` tests run at every this many checks (a delay of a few
#: steps in a test over tens of steps; the per-step cost stays that of the dynamics)
CHECK_EVERY = 10
#: with ``noise="mixed"`` the first start ends after this share of ``maxfev``
FIRST_SHARE = 0.025
#: the order of the starts with ``noise="mixed"``; each noise type doubles its own
#: population at its next start
MIXED_ORDER = ("covariance", "anisotropic")
#: with ``noise="mixed"``, a noise whose last start found no better value (lower by more
#: than the basin tolerance, BASIN_FTOL * (1 + |f|)) gives its turn to the other noise
#: while that one's last start did
MIXED_SKIP = True
#: a diagonal start ends once, above the best answer, its pace over DIAG_MISS_WINDOW
#: stagnation windows would not reach that answer with the evaluations left
DIAG_MISS = True
DIAG_MISS_WINDOW = 1
#: local runs from new points right after the first start (see :mod:`._cbo_refine`)
PROBES = 4
#: after every later swarm start, a local run from a new point whose population grows by
#: popsize_factor per such run (IPOP-CMA-ES's restarts, between CBO's)
LATE_PROBES = False
#: the probes right after the first start double their population one after another,
#: from the probe after this many (None: never)
PROBE_GROWTH = None
#: ends of a start that end the whole run
TERMINAL = ("maxfev", "maxiter", "target", "callback", "diverged")


def covariance_noise(P, C, W, Z, xp):
    """``eta_i = sum_j sqrt(w_j) (P_j - c) Z_ij``: N(0, Sigma_w) draws, affine equivariant."""
    D = P - C[:, None, :]
    return xp.matmul(Z * xp.sqrt(W)[:, None, :], D)


def weighted_shape(P, C, W, xp):
    """Eigen-decomposition of ``Sigma_w = sum_j w_j (P_j - c)(P_j - c)^T`` per run:
    ``(eigenvalues clamped at 1e-20 of the largest, eigenvectors, det^(1/d))``."""
    D = P - C[:, None, :]
    sigma = xp.matmul(xp.permute_dims(D * W[:, :, None], (0, 2, 1)), D)
    sigma = xp.where(xp.isfinite(sigma), sigma, xp.zeros_like(sigma))  # diverged: caught later
    vals, vecs = xp.linalg.eigh(sigma)
    top = xp.max(vals, axis=1, keepdims=True)
    tiny = xp.asarray(xp.finfo(vals.dtype).smallest_normal, dtype=vals.dtype)
    vals = xp.maximum(vals, xp.maximum(1e-20 * top, tiny))
    return vals, vecs, xp.exp(xp.mean(xp.log(vals), axis=1))


class Swarm:
    """State of one start: ``M`` runs of ``N`` particles, one noise type."""

    def __init__(self, X, noise, alpha, dynamics, ess, alpha_max, xp):
        sigma, lam, dt = dynamics
        self.X, self.noise, self.alpha, self.ess, self.alpha_max = X, noise, alpha, ess, \
            alpha_max
        self.lam_dt, self.sig_sqdt = lam * dt, sigma * math.sqrt(dt)
        self.BF = xp.full((X.shape[0],), xp.inf, dtype=X.dtype)  # best of this start, per run
        self.BX = X[:, 0, :]
        self.F = self.C = self.W = self.P = self.X_eval = self.spread = None
        self.Y = self.FY = None  # memory: personal bests
        self.level = self.prev = None  # covariance: step size, previous (c, shape)
        self.alpha_used = alpha
        self.growth = 0
        self.steps = self.checks = 0
        self.history = []  # host copies of BF, one per CHECK_EVERY checks

    @property
    def size(self):
        return self.X.shape[0] * self.X.shape[1]


class CBOSolver:
    """One run of CBO on ``problem`` with the options ``cfg`` (the objective is
    ``cfg.fun``); :meth:`solve` returns the OptimizeResult."""

    def __init__(self, cfg, problem, draws):
        self.cfg, self.problem, self.draws = cfg, problem, draws
        be = self.be = problem.be
        xp = self.xp = be.xp
        self.dtype = problem.dtype
        self.evaluator = Evaluator(cfg.fun, cfg.args, cfg.vectorized, cfg.workers, be,
                                   problem.dtype)
        self.reserve = reserve(cfg, problem.d)  # evaluations kept for the last refinement
        # the kernels' backend, chosen once for the whole run from its size: a small run
        # under backend="auto" runs the generic twins (nothing to compile)
        size = self.size = run_size(cfg, problem.d)
        self.weights = KERNELS.get("gibbs_consensus", be, size=size)
        self.move = KERNELS.get("move", be, size=size)
        self.reflect = KERNELS.get("reflect", be, size=size)
        self.track = KERNELS.get("track_best", be, size=size)
        self.consensus_move = KERNELS.get("consensus_move", be, size=size)
        self.sync_every = SYNC_EVERY.get(be.name, 1)
        self.scale = problem.scale
        self.max_level = 1e3 * self.scale  # covariance step size: far beyond the box
        if problem.box is not None:
            self.lb = xp.asarray(problem.box[0].tolist(), dtype=self.dtype)
            self.ub = xp.asarray(problem.box[1].tolist(), dtype=self.dtype)
        self.box = None if problem.box is None else (self.lb, self.ub)
        M = cfg.n_runs
        self.BF = xp.full((M,), xp.inf, dtype=self.dtype)  # best over all starts, per run
        self.BX = None
        self.nfev = self.nit = self.n_bad = self.n_restarts = 0
        self.started = {}  # noise type -> starts so far
        self.swarm = None  # the last swarm that stepped
        self.answers = []  # (value, host point, its tolerance) of each start, refined
        self.probes = 0  # probe restarts so far
        self.late_probes = 0  # probes after later swarm starts
        self.gained = {}  # noise type -> whether its last start lowered the best value
        self.last_kind = None
        self.bar = None
        self.refiner = Refiner(self)

    # ------------------------------------------------------------------ evaluations
    def evaluate(self, X):
        """Values of the (K, d) points ``X`` (counted, shown on the progress bar)."""
        F = self.evaluator(X)
        self.nfev += X.shape[0]
        self.bar.update(X.shape[0])
        return F

    @property
    def loop_budget(self):
        """Evaluations the starts may use (``maxfev`` less the final reserve), or None."""
        cfg = self.cfg
        return None if cfg.maxfev is None else cfg.maxfev - self.reserve

    def left(self, final=False):
        """Evaluations left to the starts (``final``: to the last refinement)."""
        cfg = self.cfg
        if cfg.maxfev is None:
            return self.reserve
        return (cfg.maxfev if final else self.loop_budget) - self.nfev

    # ------------------------------------------------------------------ the run
    def solve(self):
        cfg = self.cfg
        total = cfg.maxfev or (cfg.maxiter * cfg.n_runs * cfg.n_particles + self.reserve)
        try:
            with Progress(total, desc="cbo", enabled=cfg.progress) as self.bar:
                end = self._starts()
        finally:
            self.evaluator.close()
        return build_result(self, end)

    def _starts(self):
        """Start after start until one ends the run; returns the end (a key of
        :data:`._cbo_result.ENDS`)."""
        cfg = self.cfg
        kind = self._next_kind()
        while True:
            self.last_kind = kind
            if kind == "probe":
                growth = 0 if PROBE_GROWTH is None else max(0, self.probes - PROBE_GROWTH)
                end = self.refiner.probe(growth=growth + self.refiner.kink_growth())
            elif kind == "late probe":
                end = self.refiner.probe(growth=self.late_probes)
            else:
                before = self.best_value()
                s = self._new_swarm(kind)
                end = self._run(s)
                self.refiner.finish(s, end)
                after = self.best_value()
                self.gained[kind] = after < before - BASIN_FTOL * (1.0 + abs(after))
            if end in TERMINAL:
                return end
            if cfg.f_target is not None and self.best_value() <= cfg.f_target:
                return "target"
            if not cfg.restarts:
                return end
            if self._confirmed():
                self.refiner.finish_best()  # the best answer, to full precision
                if cfg.f_target is not None and self.best_value() <= cfg.f_target:
                    return "target"
                return "agreed"
            kind = self._next_kind()
            self.n_restarts += 1

    def _next_kind(self):
        """The noise of the next start, or "probe": a local run from a new point (when
        the refinement is the local run), right after the first start, while the starts
        have found at most two basins (Rosenbrock's two) or a local run has stopped on a
        kink (:data:`._cbo_refine.KINK_PROBES`), at least once and at most PROBES times.
        ``noise="mixed"`` alternates its two noises, but a noise whose last start lowered
        nothing gives its turn to the other while the other's last start did (MIXED_SKIP:
        on a rotated Rastrigin function the anisotropic starts stall, the covariance ones
        go on descending)."""
        n = sum(self.started.values())
        if n == 1 and self.cfg.restarts and self.cfg.polish == "local" and \
                self.probes < PROBES and (self.probes == 0 or len(self._basins()) <= 2 or
                                          self.refiner.kink_probes()):
            self.probes += 1
            return "probe"
        if LATE_PROBES and n >= 2 and self.cfg.restarts and self.cfg.polish == "local" and \
                self.last_kind not in ("probe", "late probe"):
            self.late_probes += 1
            return "late probe"
        noise = self.cfg.noise
        if noise != "mixed":
            return noise
        turn, other = MIXED_ORDER[n % 2], MIXED_ORDER[(n + 1) % 2]
        if MIXED_SKIP and not self.gained.get(turn, True) and self.gained.get(other, False):
            return other
        return turn

    def _basins(self):
        """The answers of the starts grouped by basin, best first: ``[value, point,
        count, tolerance]`` (:func:`._cbo_refine.same_basin`: values that agree within
        ``ftol`` or the looser tolerance of either answer, points that lie close
        together)."""
        basins = []
        for value, x, tol in sorted(self.answers, key=lambda a: a[0]):
            for b in basins:
                if same_basin(value, x, b[0], b[1], max(self.cfg.ftol, tol, b[3]),
                              self.problem.scale, kinked=self.refiner.tight()):
                    b[2] += 1
                    break
            else:
                basins.append([value, x, 1, tol])
        return basins

    def _confirmed(self):
        """True when the starts have found at most two basins and the best of them twice
        (unless the user asked to spend the whole budget, or the batched runs, whose
        answers other than the best run's are not refined, all run to ``maxfev``)."""
        if self.cfg.spend_budget or self.cfg.n_runs > 1:
            return False
        basins = self._basins()
        return basins[0][2] >= 2 and len(basins) <= 2

    def best_value(self):
        return to_float(self.xp.min(self.BF))

    # ------------------------------------------------------------------ one start
    def _new_swarm(self, noise):
        cfg, xp, pb = self.cfg, self.xp, self.problem
        n_same = self.started.get(noise, 0)
        self.started[noise] = n_same + 1
        N0 = cfg.n_particles
        if noise == "covariance":
            N0 = max(N0, COV_PER_DIM * pb.d)
        N = int(N0 * cfg.popsize_factor ** n_same)
        X = self.start_points((cfg.n_runs, N), first=not self.answers)
        cov = noise == "covariance"
        dynamics = tuple(v if v is not None else default for v, default in
                         zip((cfg.sigma, cfg.lam, cfg.dt), COV_DEFAULTS if cov else
                             DIAG_DEFAULTS))
        ess = cfg.ess if cfg.ess is not None or not cov else COV_ESS
        alpha_max = cfg.alpha_max or (ESS_ALPHA_MAX if ess is not None else ALPHA_MAX)
        if self.BX is None:
            self.BX = X[:, 0, :]
        s = Swarm(X, noise, cfg.alpha, dynamics, ess, alpha_max, xp)
        s.growth = n_same  # IPOP doublings of this noise so far
        s.xtol = cfg.xtol if cfg.xtol is not None else XTOL_SHARE[not cov] * self.scale
        base = 10 + math.ceil(30 * pb.d / N)
        # the stagnation window in history entries (one per CHECK_EVERY checks)
        s.patience = max(1, (PATIENCE[not cov] * base) // (self.sync_every * CHECK_EVERY))
        return s

    def start_points(self, shape, first=False):
        """Points uniform in the start box, shape ``shape + (d,)``, inside the bounds;
        with ``x0``, point 0 of the first start is ``x0`` itself."""
        xp, pb = self.xp, self.problem
        u = self.draws.uniform(0.0, 1.0, shape + (pb.d,), dtype=self.dtype)
        X = xp.asarray(pb.low.tolist(), dtype=self.dtype) + \
            xp.asarray(pb.width.tolist(), dtype=self.dtype) * u
        if pb.x0 is not None:
            X = X + pb.x0
            if first:
                first_point = xp.reshape(xp.arange(shape[-1]), (1,) * (len(shape) - 1) +
                                         (shape[-1], 1)) == 0
                X = xp.where(first_point, pb.x0, X)
        if pb.box is not None:
            X = reflect(X, self.lb, self.ub, xp)
        return X

    def _run(self, s):
        """Step the swarm until a stopping rule fires; returns the end of the start."""
        cfg = self.cfg
        budget = self.loop_budget
        while True:
            if budget is not None and self.nfev + s.size > budget:
                return "maxfev"
            if cfg.maxiter is not None and self.nit >= cfg.maxiter:
                return "maxiter"
            self._step(s)
            self.swarm = s
            if cfg.callback is not None and self._call_back(s):
                return "callback"
            if s.steps % self.sync_every:
                continue  # device scalars are read every sync_every steps
            end = self._verdict(s)
            if end is not None:
                return end

    def _step(self, s):
        cfg, xp = self.cfg, self.xp
        M, N, d = s.X.shape
        F = xp.reshape(self.evaluate(xp.reshape(s.X, (M * N, d))), (M, N))
        self.nit += 1
        s.steps += 1
        F, n_bad, s.BF, s.BX = self.track(s.X, F, s.BF, s.BX, xp)
        self.n_bad += n_bad  # stays on the device
        E, P = F, s.X
        if cfg.memory:
            if s.Y is None:
                s.Y, s.FY = s.X, F
            better = F < s.FY
            s.FY = xp.where(better, F, s.FY)
            s.Y = xp.where(better[:, :, None], s.X, s.Y)
            E, P = s.FY, s.Y
        mask = None
        if cfg.batch_size is not None:
            u = self.draws.uniform(0.0, 1.0, (M, N), dtype=self.dtype)
            b = cfg.batch_size
            mask = u <= xp.sort(u, axis=1)[:, b - 1:b]
        if s.noise == "covariance":
            W, C, s.alpha_used = self.weights(P, E, mask, s.alpha, s.ess, s.alpha_max, xp)
            X_new, spread = self._covariance_move(s, P, C, W)
            if self.box is not None:
                X_new = self.reflect(X_new, self.lb, self.ub, xp)
        else:  # weights, consensus, move and reflection in one kernel call
            xi = self.draws.normal((M, N, d), dtype=self.dtype)
            W, C, s.alpha_used, X_new, spread = self.consensus_move(
                P, E, mask, s.alpha, s.ess, s.alpha_max, s.X, xi, s.lam_dt, s.sig_sqdt,
                s.noise == "anisotropic", self.box, xp)
        s.X_eval, s.F, s.C, s.spread, s.X, s.W, s.P = s.X, F, C, spread, X_new, W, P
        s.alpha = min(s.alpha * cfg.alpha_growth, s.alpha_max)

    def _covariance_move(self, s, P, C, W):
        """Drift plus covariance noise scaled by the adapted step size (module doc)."""
        xp = self.xp
        M, N, d = P.shape
        vals, vecs, v = weighted_shape(P, C, W, xp)
        if s.prev is None:
            s.level = xp.sqrt(v)  # the first step draws from Sigma_w itself
        else:
            c0, vecs0, vals0, v0 = s.prev
            proj = xp.sum(vecs0 * (C - c0)[:, :, None], axis=1)
            mu = 1.0 / xp.sum(W * W, axis=1)
            mu_e = s.ess * N
            c_s = (mu_e + 2.0) / (d + mu_e + 5.0)
            d_s = 1.0 + 2.0 * max(0.0, math.sqrt((mu_e - 1.0) / (d + 1.0)) - 1.0) + c_s
            chi = math.sqrt(d) * (1.0 - 1.0 / (4.0 * d) + 1.0 / (21.0 * d * d))
            whitened = v0 * xp.sum(proj * proj / vals0, axis=1)
            y = xp.sqrt(mu * whitened) / s.level
            rate = xp.minimum(CSA_DAMP * c_s / d_s * (y / chi - 1.0), xp.ones_like(y))
            s.level = xp.minimum(s.level * xp.exp(rate), xp.full_like(y, self.max_level))
        s.prev = (C, vecs, vals, v)
        Z = self.draws.normal((M, N, N), dtype=self.dtype)
        eta = covariance_noise(P, C, W, Z, xp)
        X_new, spread = self.move(s.X, C, xp.zeros_like(s.X), s.lam_dt, 0.0, True, xp)
        factor = s.sig_sqdt * s.level / xp.sqrt(v)
        return X_new + factor[:, None, None] * eta, spread

    # ------------------------------------------------------------------ stopping rules
    def _verdict(self, s):
        """None to go on, else the end of the start (host syncs: every sync_every)."""
        cfg, xp = self.cfg, self.xp
        spread = to_float(xp.max(s.spread))
        if not math.isfinite(spread):
            return "diverged"
        if cfg.f_target is not None and \
                min(to_float(xp.min(s.BF)), self.best_value()) <= cfg.f_target:
            return "target"
        if spread <= s.xtol:
            return "collapsed"
        s.checks += 1
        if s.checks % CHECK_EVERY == 0:  # the slower tests, on every CHECK_EVERY-th check
            s.history.append(np.asarray(to_host(s.BF), dtype=np.float64))
            h, back = s.history, s.patience
            if len(h) > back:  # no run improved over the last ``patience`` checks
                gain = h[-back - 1] - h[-1]
                if not bool(np.any(gain > 1e-12 * (1.0 + np.abs(h[-1])))):
                    return "stalled"
            if cfg.ftol > 0 and self._flat(s):
                return "flat"
            if DIAG_MISS and self._hopeless(s):
                return "stalled"
        if cfg.restarts and not self.answers and cfg.noise == "mixed" and \
                cfg.maxfev is not None and s.steps * s.size >= FIRST_SHARE * cfg.maxfev:
            return "capped"
        return None

    def _hopeless(self, s):
        """Whether a diagonal start, still above the best answer so far, would need more
        than the evaluations left to reach it at the pace of its last stagnation window
        (the best run's fall over that window, extrapolated linearly)."""
        if s.noise == "covariance" or not self.answers or self.cfg.maxfev is None:
            return False
        h, back = s.history, s.patience * DIAG_MISS_WINDOW
        if len(h) <= back:
            return False
        target = min(a[0] for a in self.answers)
        now, then = float(np.min(h[-1])), float(np.min(h[-back - 1]))
        excess = now - target
        if excess <= BASIN_FTOL * (1.0 + abs(target)):
            return False
        evals = back * CHECK_EVERY * self.sync_every * s.size
        return (then - now) * self.left() < excess * evals

    def _flat(self, s):
        """Whether every run's particles' values agree within ``ftol * (1 + |f_min|)``."""
        xp = self.xp
        fin = xp.where(xp.isfinite(s.F), s.F, xp.asarray(xp.inf, dtype=s.F.dtype))
        fmin, fmax = xp.min(fin, axis=1), xp.max(fin, axis=1)
        finite = xp.isfinite(fmax)  # a run holding non-finite values is not flat
        zero = xp.zeros_like(fmax)
        hi, lo = xp.where(finite, fmax, zero), xp.where(finite, fmin, zero)
        return bool(xp.all(finite & (hi - lo <= self.cfg.ftol * (1.0 + xp.abs(lo)))))

    def _call_back(self, s):
        be = self.be
        x, f = self.best_point(s)
        single = self.cfg.n_runs == 1
        alpha = s.alpha_used if isinstance(s.alpha_used, float) else be.to_input(s.alpha_used)
        return call_callback(
            self.cfg.callback, x=be.to_input(x), fun=f, nit=self.nit, nfev=self.nfev,
            n_restarts=self.n_restarts,
            consensus=be.to_input(s.C[0, ...] if single else s.C),
            population=be.to_input(s.X_eval[0, ...] if single else s.X_eval), alpha=alpha)

    def best_point(self, s=None):
        """(point, value) of the best evaluation so far (the start ``s`` included)."""
        xp = self.xp
        BF, BX = self.BF, self.BX
        if s is not None:
            better = s.BF < BF
            BF = xp.where(better, s.BF, BF)
            BX = xp.where(better[:, None], s.BX, BX)
        ib = int(xp.argmin(BF))
        return BX[ib, :], to_float(BF[ib])

    def merge(self, s):
        """Fold the best points of start ``s`` into the best over all starts."""
        xp = self.xp
        better = s.BF < self.BF
        self.BF = xp.where(better, s.BF, self.BF)
        self.BX = xp.where(better[:, None], s.BX, self.BX)
