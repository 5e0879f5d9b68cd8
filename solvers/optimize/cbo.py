r"""Consensus-based optimization (CBO): a derivative-free global minimizer.

``N`` particles :math:`X_i \in \mathbb{R}^d` move toward a Gibbs-weighted consensus point
and explore with noise scaled by their distance to it. One Euler--Maruyama step is

.. math::

   w_i = \frac{e^{-\alpha f(X_i)}}{\sum_j e^{-\alpha f(X_j)}}, \qquad
   c = \sum_i w_i X_i, \qquad
   X_i \leftarrow X_i - \lambda\,\Delta t\,(X_i - c) + \sigma \sqrt{\Delta t}\; \eta_i,

with the noise :math:`\eta_i = \operatorname{diag}(X_i - c)\,\xi_i` (anisotropic),
:math:`\lVert X_i - c \rVert_2\,\xi_i` (isotropic), :math:`\xi_i \sim N(0, I_d)`, or
(covariance noise, consensus-based sampling style) :math:`\eta_i = \sum_j \sqrt{w_j}\,
(X_j - c)\,\zeta_{ij}`, :math:`\zeta_i \sim N(0, I_N)`: a draw from
:math:`N(0, \Sigma_w)` with :math:`\Sigma_w = \sum_j w_j (X_j - c)(X_j - c)^\top` the
Gibbs-weighted covariance around the consensus. Its square root is the weighted deviation
matrix itself (a rank-``N`` factor, no Cholesky), so for ``x = A y + b`` the particles of
the mapped problem are exactly the mapped particles, draw for draw: the dynamics are affine
invariant, as CMA-ES is.

The algorithm is written against the Array API (``xp``); the hot inner operations come from
the kernel table :mod:`._cbo_kernels` (Numba on numpy input, CuPy on cupy input, the
generic functions here otherwise, which are the reference the kernels are tested against).
The restart loop, bounds and polish are in :func:`minimize_cbo`'s solver class.
"""
import inspect
import math

import numpy as np

from .._lib.namespace import array_namespace, is_numpy_namespace
from .._lib.backend import resolve_backend
from .._lib.rng import Draws
from .._lib.validation import (as_float_array, check_choice, check_finite, check_int,
                               check_positive)
from .._lib.validation import check_callback, promote_float16
from .._lib.host import to_host, to_float
from .._lib.results import Status, make_result, call_callback, Progress
from ..lse import softmax, logsumexp
from ._cbo_bounds import parse_bounds, reflect
from ._cbo_eval import Evaluator, check_cbo_workers
from ._cbo_kernels import KERNELS, SYNC_EVERY, _LOG_ALPHA_LO, _N_BISECT
from ._polish import polish as _polish_point, POLISH_METHODS
from ._cbo_local import local_run, swarm_covariance, LOCAL_ESS

__all__ = ["minimize_cbo", "consensus"]

_NOISES = ("mixed", "anisotropic", "isotropic", "covariance")
#: per-noise defaults of (sigma, lam, dt); the diagonal ones calibrated on shifted
#: Rastrigin/Ackley/Levy-20, the covariance ones on the black-box tuning suite
_DIAG_DEFAULTS = (10.5, 0.4, 0.01)
_COV_DEFAULTS = (1.0, 1.0, 1.0)
#: covariance starts: at least this many particles per dimension (the weighted covariance
#: needs an effective sample size above d), and the success rule of the noise scale
_COV_PER_DIM = 6
_COV_SCALE = (1.1, 0.9)
_COV_ESS = 0.5
#: the final polish (a share of ``maxfev`` reserved for it) in three stages: the polish
#: method (L-BFGS-B) with at most this share of it, the local covariance run
#: (:mod:`._cbo_local`) with the rest until it stalls, then Nelder-Mead (or the polish
#: method if derivative-free) with what is left. BBOB d = 10, instances 3-6, seed sets 0
#: and 1: 50 and 51 / 96 solved at 1e-8 against 47 and 42 with L-BFGS-B then Nelder-Mead
#: (1e-2: 64, 65 against 65, 65); shares (1/3, 1/3, rest): 50, 45; (0.5, 0.25, rest): 47, 47.
#: It costs a little elsewhere: d = 5 (instances 5-10) 100/144 at 1e-8 against 104, d = 20
#: (instances 5, 6) 15/48 against 16 (1e-2 unchanged at both)
_FINAL_STAGE = 0.5
#: start step of the local run, as a share of the start box (it grows within a few
#: generations where that is too small; a too-large start step costs many more)
_LOCAL_STEP = 1e-7
#: stall patience, in units of 10 + 30 d / N steps: (covariance, diagonal noises); a
#: diagonal start's best can stall for long stretches before it hops to a better basin,
#: so its patience is long (BBOB d = 5, instances 5-10: 111/144 at 1e-2 with 10 against
#: 100/144 without a stall test, 102-107 with 5, 7, 14 or 20)
_PATIENCE = (3, 10)
#: a diagonal-noise start (with restarts) has collapsed at this share of the start box
_DIAG_XTOL = 1e-5
#: with ``noise="mixed"`` the first start ends after this share of ``maxfev``
_FIRST_SHARE = 0.05
#: evaluations per dimension (+1) of the brief polish at each restart
_RESTART_POLISH = 100
#: the order of the starts with ``noise="mixed"``; each noise type doubles its own
#: population at its next start
_MIXED_ORDER = ("covariance", "anisotropic")

#: internal end of a run -> (shared Status, success, message); "budget" is the normal end
#: of a run with restarts, "maxfev" / "maxiter" of a single start
_ENDS = {
    "converged": (Status.CONVERGED, True, "converged: the particle spread fell below xtol "
                  "(or the energy spread below ftol)"),
    "maxiter": (Status.MAXITER, True, "maximum number of iterations reached"),
    "maxfev": (Status.MAXFEV, False, "maximum number of function evaluations reached"),
    "budget": (Status.MAXFEV, True, "the evaluation budget (maxfev / maxiter) was spent "
               "over the restarts"),
    "target": (Status.TARGET, True, "f_target reached"),
    "no_finite": (Status.NONFINITE, False, "no finite objective value was found"),
    "diverged": (Status.NONFINITE, False, "the particles diverged (non-finite positions)"),
    "callback": (Status.CALLBACK, False, Status.CALLBACK.message),
}


# --------------------------------------------------------------------------- generic kernels

def _energy_gaps(E, mask, xp):
    """``g = E - min E`` per run, +inf for excluded particles; zeros in a run without a
    finite energy. Returns ``(g, all_bad)`` with ``all_bad`` of shape (M, 1)."""
    inf = xp.asarray(xp.inf, dtype=E.dtype)
    zero = xp.asarray(0.0, dtype=E.dtype)
    if mask is not None:
        E = xp.where(mask, E, inf)
    fmin = xp.min(E, axis=1, keepdims=True)
    all_bad = ~xp.isfinite(fmin)
    g = xp.where(all_bad, zero, E - xp.where(all_bad, zero, fmin))
    if mask is not None:
        g = xp.where(mask, g, inf)
    return g, all_bad


def _ess_alpha(g, ess, alpha_max, xp):
    """Per-run alpha with effective sample size 1/sum(w^2) = ess * (finite particles).

    Bisection on log(alpha) in [log 1e-12, log alpha_max] (the Numba kernel's iteration).
    """
    M = g.shape[0]
    count = xp.sum(xp.astype(g < xp.inf, xp.float64), axis=1)
    log_target = xp.log(ess * count)
    lo = xp.full((M,), _LOG_ALPHA_LO, dtype=xp.float64)
    hi = xp.full((M,), math.log(alpha_max), dtype=xp.float64)
    g64 = xp.astype(g, xp.float64)
    for _ in range(_N_BISECT):
        mid = 0.5 * (lo + hi)
        la = -xp.exp(mid)[:, None] * g64
        log_ess = 2.0 * logsumexp(la, axis=1) - logsumexp(2.0 * la, axis=1)
        small = log_ess < log_target
        hi = xp.where(small, mid, hi)
        lo = xp.where(small, lo, mid)
    return xp.exp(0.5 * (lo + hi))


def _gibbs_weights_xp(E, mask, alpha, ess, alpha_max, xp):
    """Weights softmax(-alpha (E - min E)) per run over the batch ``mask`` and the finite
    energies (``E`` holds +inf for bad ones); uniform in a run without a finite energy.
    Returns ``(W, alpha_used)``; ``alpha_used`` is per run (M,) when ``ess`` is given."""
    if E.shape[1] == 0:  # no particles: no weights
        a = alpha if ess is None else xp.full((E.shape[0],), alpha, dtype=xp.float64)
        return xp.zeros(E.shape, dtype=E.dtype), a
    g, all_bad = _energy_gaps(E, mask, xp)
    if ess is None:
        a = alpha_used = alpha
        logits = -alpha * xp.where(g == xp.inf, xp.zeros_like(g), g)
    else:
        alpha_used = xp.where(all_bad[:, 0], xp.asarray(alpha, dtype=xp.float64),
                              _ess_alpha(g, ess, alpha_max, xp))
        a = xp.astype(alpha_used, g.dtype)[:, None]
        logits = -a * xp.where(g == xp.inf, xp.zeros_like(g), g)
    logits = xp.where(g == xp.inf, xp.asarray(-xp.inf, dtype=g.dtype), logits)
    return softmax(logits, axis=1), alpha_used


def _gibbs_consensus_xp(P, E, mask, alpha, ess, alpha_max, xp):
    """Gibbs weights (:func:`_gibbs_weights_xp`) and the consensus ``sum_i w_i P_i`` per run.
    Returns ``(W, C, alpha_used)``."""
    W, alpha_used = _gibbs_weights_xp(E, mask, alpha, ess, alpha_max, xp)
    return W, xp.sum(W[:, :, None] * P, axis=1), alpha_used


def _move_xp(X, C, xi, lam_dt, sig_sqdt, aniso, xp):
    """Drift toward ``C`` plus diagonal or isotropic noise; returns (X_new, spread)."""
    M, N, d = X.shape
    diff = X - C[:, None, :]
    spread = xp.max(xp.reshape(xp.abs(diff), (M, N * d)), axis=1) if N * d else \
        xp.zeros((M,), dtype=X.dtype)
    if aniso:
        return X - lam_dt * diff + sig_sqdt * diff * xi, spread
    nrm = xp.sqrt(xp.sum(diff * diff, axis=2, keepdims=True))
    return X - lam_dt * diff + (sig_sqdt * nrm) * xi, spread


def _consensus_xp(X, E, alpha, xp):
    """Consensus points of (M, N, d) particles; non-finite energies get weight zero."""
    E = xp.where(xp.isfinite(E), E, xp.asarray(xp.inf, dtype=E.dtype))
    W, _ = _gibbs_weights_xp(E, None, alpha, None, 1.0, xp)
    return xp.sum(W[:, :, None] * X, axis=1)


def _success_scale(scale, improved, xp):
    """Noise scale of covariance starts: a run whose best improved this step widens its
    noise (``max(scale, 1) * 1.1``), otherwise it narrows it (``* 0.9``): the weighted
    covariance shrinks by selection at every step, and this success rule (AMaLGaM's
    adaptive variance scaling, simplified) keeps the swarm from collapsing before it
    has found the bottom. Invariant under affine maps of ``x`` and monotone maps of ``f``.
    """
    inc, dec = _COV_SCALE
    grown = xp.maximum(scale, xp.ones_like(scale)) * inc
    return xp.minimum(xp.where(improved, grown, scale * dec), xp.full_like(scale, 1e6))


def _track_best_xp(X, F, BF, BX, best, xp):
    """Non-finite energies -> +inf; update the best point ever (``BF``, ``BX``, first
    minimiser as the kernel's strict '<') and the best value of this start (``best``).
    Returns ``(F, n_bad, BF, BX, best)``; ``n_bad`` may stay on the device."""
    M, N, _ = X.shape
    bad = ~xp.isfinite(F)
    n_bad = xp.sum(xp.astype(bad, xp.int64))
    F = xp.where(bad, xp.asarray(xp.inf, dtype=F.dtype), F)
    if N == 0:
        return F, n_bad, BF, BX, best
    idx = xp.argmin(F, axis=1)
    f_step = xp.min(F, axis=1)
    onehot = xp.reshape(xp.arange(N), (1, N)) == xp.reshape(idx, (M, 1))
    x_step = xp.sum(xp.where(onehot[:, :, None], X, xp.zeros_like(X)), axis=1)
    better = f_step < BF
    return (F, n_bad, xp.where(better, f_step, BF), xp.where(better[:, None], x_step, BX),
            xp.minimum(best, f_step))


def _covariance_noise(P, C, W, Z, xp):
    """``eta_i = sum_j sqrt(w_j) (P_j - c) Z_ij``: N(0, Sigma_w) draws, affine equivariant."""
    D = P - C[:, None, :]
    return xp.matmul(Z * xp.sqrt(W)[:, None, :], D)


def consensus(x, energies, alpha, *, backend="auto"):
    r"""Consensus point :math:`c = \sum_i w_i x_i`, :math:`w = \mathrm{softmax}(-\alpha f)`.

    The weights are computed after shifting by the smallest energy, so any spread of
    ``alpha * energies`` (1e6, 1e300) is safe, and adding a constant to the energies
    changes nothing. Non-finite energies (NaN, +-inf) give weight zero; if no energy of a
    set is finite, the consensus is the plain mean.

    Parameters
    ----------
    x : array, shape (N, d) or (M, N, d)
        Particles (``M`` independent sets).
    energies : array, shape (N,) or (M, N)
        Objective values of the particles.
    alpha : float
        Inverse temperature, ``0 <= alpha < inf``.
    backend : {"auto", "numpy", "numba", "cupy"}, optional
        ``"auto"`` runs the Numba kernel on numpy input and generic code otherwise.

    Returns
    -------
    c : array, shape (d,) or (M, d)
        The consensus point(s), in the namespace of ``x``.

    Raises
    ------
    ValueError
        ``x`` not 2-d or 3-d, ``energies`` not matching ``x.shape[:-1]``, non-finite
        particles, a negative, NaN or infinite ``alpha``, or an unknown ``backend`` (or
        ``"cupy"`` without a usable GPU).
    TypeError
        Complex or non-numeric ``x`` or ``energies``, or a non-real ``alpha``.

    References
    ----------
    .. [1] R. Pinnau, C. Totzeck, O. Tse, S. Martin, "A consensus-based model for global
       optimization and its mean-field limit", Math. Models Methods Appl. Sci. 27 (2017).
    .. [2] J. A. Carrillo, S. Jin, L. Li, Y. Zhu, "A consensus-based global optimization
       method for high dimensional machine learning problems", ESAIM: COCV 27 (2021).

    Examples
    --------
    >>> import numpy as np
    >>> from solvers.optimize.cbo import consensus
    >>> x = np.array([[0.0, 0.0], [1.0, 2.0]])
    >>> consensus(x, np.array([1.0, 0.0]), alpha=0.0).tolist()
    [0.5, 1.0]
    >>> consensus(x, np.array([1.0, 0.0]), alpha=1e9).tolist()
    [1.0, 2.0]
    """
    xp = array_namespace(x, energies)
    be = resolve_backend(backend, xp)
    x = as_float_array(be.to_device(x), be.xp, "x", ndim=(2, 3))
    energies = as_float_array(be.to_device(energies), be.xp, "energies", ndim=(1, 2),
                              dtype=x.dtype)
    alpha = check_positive(alpha, "alpha", strict=False)
    single = x.ndim == 2
    if single:
        x, energies = x[None, ...], energies[None, ...]
    if tuple(energies.shape) != tuple(x.shape[:2]):
        raise ValueError(f"energies must have shape {tuple(x.shape[:2])} to match x, "
                         f"got {tuple(energies.shape)}")
    check_finite(x, be.xp, "x")
    C = KERNELS.get("consensus", be, _consensus_xp)(x, energies, alpha, be.xp)
    if single:
        C = C[0, ...]
    return be.to_input(C)


# --------------------------------------------------------------------------- the solver


class _Swarm:
    """State of one (re)start: ``M`` runs of ``N`` particles, one noise type."""

    def __init__(self, X, noise, alpha, sigma, lam, dt, ess):
        self.X = X
        self.noise = noise
        self.alpha = alpha
        self.lam_dt = lam * dt
        self.sig_sqdt = sigma * math.sqrt(dt)
        self.ess = ess
        self.F = self.C = self.Y = self.FY = self.W = None
        self.spread = self.best = self.last = None
        self.scale = None  # covariance noise: per-run scale, adapted by success
        self.alpha_used = alpha
        self.steps = 0
        self.history = []  # host list of the best value of this start, per check


class _CBOSolver:
    """Restarts (IPOP: the population doubles), steps, stopping tests and polish."""

    def __init__(self, fun, o, be, box, start, dtype, draws):
        self.o, self.be, self.xp = o, be, be.xp
        self.box, self.start, self.dtype, self.draws = box, start, dtype, draws
        self.evaluate = Evaluator(fun, o["args"], o["vectorized"], o["workers"], be.xp, dtype)
        self.weights = KERNELS.get("gibbs_consensus", be, _gibbs_consensus_xp)
        self.move = KERNELS.get("move", be, _move_xp)
        self.reflect = KERNELS.get("reflect", be, reflect)
        self.track = KERNELS.get("track_best", be, _track_best_xp)
        # the local run (:meth:`_local`) weights host numpy arrays: the solver's backend
        # on numpy, the numpy one otherwise (cupy or another namespace)
        host_be = be if is_numpy_namespace(be.xp) else resolve_backend("auto", np)
        self.host_weights = KERNELS.get("gibbs_weights", host_be, _gibbs_weights_xp)
        self.sync_every = SYNC_EVERY.get(be.name, 1)
        xp = self.xp
        M, d = o["n_runs"], start[0].shape[0]
        self.d = d
        if box is not None:
            self.lb = xp.asarray(box[0].tolist(), dtype=dtype)
            self.ub = xp.asarray(box[1].tolist(), dtype=dtype)
        self.BF = xp.full((M,), xp.inf, dtype=dtype)
        self.BX = None
        self.nfev = self.nit = self.n_bad = self.n_restarts = 0
        self.status = None
        self.width = float(np.max(start[1]))
        self.swarm = None
        self.started = {}  # noise type -> number of starts so far
        self.cov, self.cov_best = None, math.inf  # start shape of the local run

    # ---- one start
    def new_swarm(self):
        o, xp = self.o, self.xp
        M, d = o["n_runs"], self.d
        low, width, x0 = self.start
        noise = o["noise"]
        if noise == "mixed":
            noise = _MIXED_ORDER[self.n_restarts % 2]
        n_same = self.started.get(noise, 0)
        self.started[noise] = n_same + 1
        N0 = o["n_particles"]
        if noise == "covariance":
            N0 = max(N0, _COV_PER_DIM * d)
        N = int(N0 * o["popsize_factor"] ** n_same)
        u = self.draws.uniform(0.0, 1.0, (M, N, d), dtype=self.dtype)
        X = xp.asarray(low.tolist(), dtype=self.dtype) + \
            xp.asarray(width.tolist(), dtype=self.dtype) * u
        if x0 is not None:
            X = X + x0
            if self.n_restarts == 0:  # particle 0 of the first start is x0 itself
                X = xp.where(xp.reshape(xp.arange(N), (1, N, 1)) == 0, x0, X)
        if self.box is not None:
            X = reflect(X, self.lb, self.ub, xp)
        defaults = _COV_DEFAULTS if noise == "covariance" else _DIAG_DEFAULTS
        sigma, lam, dt = (o[k] if o[k] is not None else v
                          for k, v in zip(("sigma", "lam", "dt"), defaults))
        ess = o["ess"] if o["ess"] is not None or noise != "covariance" else _COV_ESS
        if self.BX is None:
            self.BX = X[:, 0, :]
        return _Swarm(X, noise, o["alpha"], sigma, lam, dt, ess)

    def step(self, s):
        o, xp = self.o, self.xp
        M, N, d = s.X.shape
        F = xp.reshape(self.evaluate(xp.reshape(s.X, (M * N, d))), (M, N))
        self.nfev += M * N
        self.nit += 1
        s.steps += 1
        if s.best is None:
            s.best = xp.full((M,), xp.inf, dtype=F.dtype)
            s.scale = xp.ones((M,), dtype=F.dtype)
        prev_best = s.best
        F, n_bad, self.BF, self.BX, s.best = self.track(s.X, F, self.BF, self.BX, s.best, xp)
        self.n_bad += n_bad  # stays on the device
        E, P = F, s.X
        if o["memory"]:
            if s.Y is None:
                s.Y, s.FY = s.X, F
            imp = F < s.FY
            s.FY = xp.where(imp, F, s.FY)
            s.Y = xp.where(imp[:, :, None], s.X, s.Y)
            E, P = s.FY, s.Y
        mask = None
        if o["batch_size"] is not None:
            ub = self.draws.uniform(0.0, 1.0, (M, N), dtype=self.dtype)
            b = o["batch_size"]
            mask = ub <= xp.sort(ub, axis=1)[:, b - 1:b]
        W, C, s.alpha_used = self.weights(P, E, mask, s.alpha, s.ess, o["alpha_max"], xp)
        if s.noise == "covariance":
            Z = self.draws.normal((M, N, N), dtype=self.dtype)
            eta = _covariance_noise(P, C, W, Z, xp)
            s.scale = _success_scale(s.scale, s.best < prev_best, xp)
            X_new, spread = self.move(s.X, C, xp.zeros_like(s.X), s.lam_dt, 0.0, True, xp)
            X_new = X_new + (s.sig_sqdt * s.scale)[:, None, None] * eta
        else:
            xi = self.draws.normal((M, N, d), dtype=self.dtype)
            X_new, spread = self.move(s.X, C, xi, s.lam_dt, s.sig_sqdt,
                                      s.noise == "anisotropic", xp)
        if self.box is not None:
            X_new = self.reflect(X_new, self.lb, self.ub, xp)
        s.X_eval, s.F, s.C, s.spread, s.X, s.W, s.P = s.X, F, C, spread, X_new, W, P
        s.alpha = min(s.alpha * o["alpha_growth"], o["alpha_max"])

    # ---- stopping and restart tests (host syncs: every ``sync_every`` steps)
    def check(self, s):
        """None to go on, "restart", or "stop" (``self.status`` set)."""
        o, xp = self.o, self.xp
        max_spread = to_float(xp.max(s.spread))
        best = to_float(xp.min(self.BF))
        if not math.isfinite(max_spread):
            self.status = "diverged"
            return "stop"
        if o["f_target"] is not None and best <= o["f_target"]:
            self.status = "target"
            return "stop"
        if o["restarts"]:
            s.history.append(np.asarray(to_host(s.best), dtype=np.float64))
        collapsed = max_spread <= o["xtol"]
        if o["restarts"] and s.noise != "covariance":
            # alpha_max caps the diagonal noises' precision (about 1e-4 in x on a smooth
            # bowl): such a start has collapsed once its spread is below _DIAG_XTOL of
            # the start box; the polish takes it from there
            collapsed = collapsed or max_spread <= _DIAG_XTOL * self.width
        if not collapsed and o["ftol"] > 0:
            fin = xp.where(xp.isfinite(s.F), s.F, xp.asarray(xp.inf, dtype=s.F.dtype))
            fmin, fmax = xp.min(fin, axis=1), xp.max(fin, axis=1)
            collapsed = bool(xp.all(fmax - fmin <= o["ftol"] * (1.0 + xp.abs(fmin))))
        if not o["restarts"]:
            if collapsed:
                self.status = "converged"
                return "stop"
            return None
        base = 10 + math.ceil(30 * self.d / s.X.shape[1])
        factor = _PATIENCE[s.noise != "covariance"]
        pat = max(1, (factor * base) // self.sync_every)
        h = s.history
        stalled = False
        if len(h) > pat:  # no run improved over the last ``pat`` steps
            gain = h[-pat - 1] - h[-1]
            stalled = not bool(np.any(gain > 1e-12 * (1.0 + np.abs(h[-1]))))
        capped = self.n_restarts == 0 and o["noise"] == "mixed" and o["maxfev"] is not None \
            and s.steps * s.X.shape[0] * s.X.shape[1] >= _FIRST_SHARE * o["maxfev"]
        return "restart" if (collapsed or stalled or capped) else None

    # ---- the run
    def solve(self):
        o = self.o
        M = o["n_runs"]
        maxfev, reserve = o["maxfev"], o["polish_budget"]
        loop_budget = None if maxfev is None else maxfev - reserve
        try:
            with Progress(o["maxiter"] or loop_budget or 1, desc="cbo",
                          enabled=o["progress"]) as bar:
                self.swarm = s = self.new_swarm()
                while self.status is None:
                    if loop_budget is not None and self.nfev + M * s.X.shape[1] > loop_budget:
                        self.status = "budget" if o["restarts"] else "maxfev"
                        break
                    if o["maxiter"] is not None and self.nit >= o["maxiter"]:
                        self.status = "budget" if o["restarts"] else "maxiter"
                        break
                    self.step(s)
                    bar.update(1 if o["maxiter"] else M * s.X.shape[1])
                    if o["callback"] is not None and self._call_back(s):
                        self.status = "callback"
                        break
                    if s.steps % self.sync_every:
                        continue  # device scalars are read every sync_every steps
                    verdict = self.check(s)
                    if verdict == "restart":
                        self._keep_shape(s)
                        self._restart_polish(loop_budget)
                        self.n_restarts += 1
                        last = s
                        self.swarm = s = self.new_swarm()
                        s.last = last
        finally:
            self.polish_end()
            self.evaluate.close()
        return self.result()

    def _call_back(self, s):
        xp, be = self.xp, self.be
        ib = int(xp.argmin(self.BF))
        single = self.o["n_runs"] == 1
        return call_callback(
            self.o["callback"], x=be.to_input(self.BX[ib, :]), fun=float(self.BF[ib]),
            nit=self.nit, nfev=self.nfev, n_restarts=self.n_restarts,
            consensus=be.to_input(s.C[0, ...] if single else s.C),
            population=be.to_input(s.X_eval[0, ...] if single else s.X_eval),
            alpha=s.alpha_used if isinstance(s.alpha_used, float) else be.to_input(s.alpha_used))

    def _host_fun(self):
        xp, dtype = self.xp, self.dtype

        def f(z):
            X = xp.asarray(z.tolist(), dtype=dtype)[None, :]
            return to_float(self.evaluate(X)[0])
        return f

    def _best_host(self):
        """(run index, host float64 point, value) of the best point so far."""
        ib = int(self.xp.argmin(self.BF))
        return ib, np.asarray(to_host(self.BX[ib, :]), dtype=np.float64), \
            to_float(self.BF[ib])

    def _take(self, ib, x, f):
        """Make ``x`` (host, value ``f``) the best point of run ``ib``."""
        xp, M = self.xp, self.o["n_runs"]
        hit = xp.reshape(xp.arange(M), (M, 1)) == ib
        self.BX = xp.where(hit, xp.asarray(x.tolist(), dtype=self.dtype), self.BX)
        self.BF = xp.where(hit[:, 0], xp.asarray(f, dtype=self.dtype), self.BF)

    def _polish(self, budget, method=None):
        """Polish the best point with at most ``budget`` evaluations (counted)."""
        ib, x, fx = self._best_host()
        if budget <= 0 or not math.isfinite(fx):
            return
        lb, ub = self.box if self.box is not None else (None, None)
        xn, fn, used = _polish_point(self._host_fun(), x, fx, lb, ub, budget,
                                     method or self.o["polish"])
        self.nfev += used
        if fn < fx:
            self._take(ib, xn, fn)

    def _restart_polish(self, loop_budget):
        if self.o["polish"] is None:
            return
        cap = _RESTART_POLISH * (self.d + 1)
        left = cap if loop_budget is None else min(cap, loop_budget - self.nfev)
        self._polish(left)

    def _keep_shape(self, s):
        """Keep the shape of start ``s`` for the local run if it holds the best value so
        far: its Gibbs-weighted covariance (covariance noise) or the diagonal of its
        particles' spread around the consensus (diagonal noises), best run only."""
        if s.W is None or self.o["polish"] is None:
            return
        best = np.asarray(to_host(s.best), dtype=np.float64)
        ib = int(np.argmin(best))
        if not best[ib] < self.cov_best:
            return
        P = np.asarray(to_host(s.P[ib, ...]), dtype=np.float64)
        C = np.asarray(to_host(s.C[ib, :]), dtype=np.float64)
        if s.noise == "covariance":
            W = np.asarray(to_host(s.W[ib, :]), dtype=np.float64)
            self.cov = swarm_covariance(P, W, C)
        else:
            self.cov = np.diag(np.mean((P - C) ** 2, axis=0))
        self.cov_best = float(best[ib])

    def _local(self, budget):
        """The local covariance run (:mod:`._cbo_local`) from the best point, started with
        the shape kept by :meth:`_keep_shape`."""
        xp, dtype = self.xp, self.dtype
        ib, x, fx = self._best_host()
        if budget <= 0 or not math.isfinite(fx):
            return

        def fb(X):
            return np.asarray(to_host(self.evaluate(xp.asarray(X, dtype=dtype))),
                              dtype=np.float64)

        def weights(F):
            W, _ = self.host_weights(F[None, :], None, 1.0, LOCAL_ESS, 1e300, np)
            return W[0]

        def normal(shape):
            return np.asarray(to_host(self.draws.normal(shape, dtype=xp.float64)),
                              dtype=np.float64)

        lb, ub = self.box if self.box is not None else (None, None)
        xn, fn, used = local_run(fb, weights, x, fx, self.cov, _LOCAL_STEP * self.width, lb,
                                 ub, budget, normal, lambda X: reflect(X, lb, ub, np))
        self.nfev += used
        if fn < fx:
            self._take(ib, xn, fn)

    def polish_end(self):
        if self.o["polish"] is None or self.status in ("callback", "diverged") or \
                self.BX is None:
            return
        maxfev = self.o["maxfev"]
        if self.swarm is not None:
            self._keep_shape(self.swarm)
        budget = self.o["polish_budget"] if maxfev is None else maxfev - self.nfev
        used0 = self.nfev
        method = self.o["polish"]
        self._polish(int(_FINAL_STAGE * budget))
        self._local(budget - (self.nfev - used0))
        last = "Nelder-Mead" if method == "L-BFGS-B" else method
        self._polish(budget - (self.nfev - used0), method=last)

    def result(self):
        s, xp, be = self.swarm, self.xp, self.be
        if s.F is None and s.last is not None:  # a fresh start the budget did not reach
            s = s.last
        if s.F is None:
            raise ValueError(f"maxfev={self.o['maxfev']} is below one step "
                             f"({self.o['n_runs'] * s.X.shape[1]} evaluations)")
        ib = int(xp.argmin(self.BF))
        best_f = to_float(self.BF[ib])
        end = self.status
        if not math.isfinite(best_f) and end not in ("diverged", "callback"):
            end = "no_finite"
        status, success, message = _ENDS[end]
        if end == "budget":
            message += f" ({self.n_restarts} restart(s))"
        single = self.o["n_runs"] == 1
        alpha = s.alpha_used if isinstance(s.alpha_used, float) else be.to_input(s.alpha_used)
        return make_result(
            status, success=success, message=message,
            x=be.to_input(self.BX[ib, :]), fun=best_f, nfev=self.nfev, nit=self.nit,
            n_restarts=self.n_restarts,
            population=be.to_input(s.X_eval[0, ...] if single else s.X_eval),
            population_energies=be.to_input(s.F[0, ...] if single else s.F),
            consensus=be.to_input(s.C[0, ...] if single else s.C),
            x_runs=be.to_input(self.BX), fun_runs=be.to_input(self.BF),
            n_nonfinite=int(to_float(self.n_bad)), alpha=alpha)


def _check_options(o, d):
    """Validate and complete the option dict ``o`` in place (``d``: the dimension)."""
    o["n_particles"] = check_int(o["n_particles"], "n_particles", minimum=2)
    o["n_runs"] = check_int(o["n_runs"], "n_runs", minimum=1)
    for k in ("alpha", "sigma", "lam"):
        if o[k] is not None:
            o[k] = check_positive(o[k], k, strict=False)
    for k in ("alpha_growth", "alpha_max", "dt"):
        if o[k] is not None:
            o[k] = check_positive(o[k], k)
    if o["ess"] is not None:
        o["ess"] = check_positive(o["ess"], "ess")
        if o["ess"] > 1:
            raise ValueError(f"ess must be in (0, 1], got {o['ess']}")
    check_choice(o["noise"], _NOISES, "noise")
    b = o["batch_size"]
    if b is not None:
        b = check_int(b, "batch_size", minimum=1)
        if b > o["n_particles"]:
            raise ValueError(f"batch_size must be <= n_particles ({o['n_particles']}), got {b}")
        o["batch_size"] = None if b == o["n_particles"] else b
    o["xtol"] = check_positive(o["xtol"], "xtol", strict=False)
    o["ftol"] = check_positive(o["ftol"], "ftol", strict=False)
    if o["f_target"] is not None:
        o["f_target"] = float(o["f_target"])
    if not isinstance(o["args"], tuple):
        o["args"] = (o["args"],)
    r = o["restarts"]
    if r not in (True, False, None, "ipop"):
        raise ValueError(f"restarts must be 'ipop', True or False, got {r!r}")
    o["restarts"] = bool(r)
    o["popsize_factor"] = check_positive(o["popsize_factor"], "popsize_factor")
    if o["popsize_factor"] < 1:
        raise ValueError(f"popsize_factor must be >= 1, got {o['popsize_factor']}")
    p = o["polish"]
    if p is True:
        p = "L-BFGS-B"
    elif p is False or p is None:
        p = None
    elif not (isinstance(p, str) and p in POLISH_METHODS):
        raise ValueError(f"polish must be True, False or one of {POLISH_METHODS}, got {p!r}")
    o["polish"] = p
    if o["maxiter"] is not None:
        o["maxiter"] = check_int(o["maxiter"], "maxiter", minimum=1)
    if o["maxfev"] is not None:
        o["maxfev"] = check_int(o["maxfev"], "maxfev", minimum=1)
    elif o["maxiter"] is None:
        o["maxfev"] = o["n_runs"] * 20 * max(4000, 200 * d)
    share = check_positive(o["polish_share"], "polish_share", strict=False)
    if share >= 1:
        raise ValueError(f"polish_share must be in [0, 1), got {share}")
    if p is None:
        o["polish_budget"] = 0
    elif o["maxfev"] is None:
        o["polish_budget"] = 1000 * (d + 1)
    else:
        # the final polish refines one point (the best run's): reserve a share of one
        # run's budget, as each run of the mapped ``n_runs`` (``workers``) reserves
        o["polish_budget"] = int(share * o["maxfev"] / o["n_runs"])


def _start_box(x0, box, x0_spread, d):
    """(low, width, x0) of the start: uniform in the bounds, or around ``x0``."""
    if x0 is None:
        return box[0], box[1] - box[0], None
    if x0_spread is None:
        if box is not None and np.all(np.isfinite(box[1] - box[0])):
            spread0 = 0.25 * (box[1] - box[0])
        else:
            spread0 = np.ones(d)
    else:
        try:
            spread0 = np.broadcast_to(np.asarray(x0_spread, dtype=np.float64), (d,))
        except ValueError:
            raise ValueError(f"x0_spread must be a scalar or have length {d}") from None
        if not np.all(np.isfinite(spread0)) or np.any(spread0 <= 0):
            raise ValueError("x0_spread must be positive and finite")
    return -spread0, 2.0 * spread0, x0


def minimize_cbo(fun, bounds=None, x0=None, *, args=(), n_particles=20, maxiter=None,
                 alpha=30.0, alpha_growth=1.05, alpha_max=1e5, ess=None, sigma=None,
                 lam=None, dt=None, noise="mixed", batch_size=None, memory=False,
                 n_runs=1, x0_spread=None, maxfev=None, xtol=1e-8, ftol=0.0, f_target=None,
                 restarts="ipop", popsize_factor=2.0, polish=True, polish_share=0.1,
                 vectorized=False, workers=1, rng=None, callback=None, backend="auto",
                 progress=False):
    r"""Minimize a function with consensus-based optimization (CBO), restarts and polish.

    Particles start uniformly in ``bounds`` (or around ``x0``) and follow

    .. math::

       X_i \leftarrow X_i - \lambda\,\Delta t\,(X_i - c_\alpha)
                     + \sigma\sqrt{\Delta t}\,\eta_i,\qquad
       c_\alpha = \sum_i \frac{e^{-\alpha f(X_i)}}{\sum_j e^{-\alpha f(X_j)}}\,X_i,

    with the noise :math:`\eta_i` of :mod:`solvers.optimize.cbo` (anisotropic,
    isotropic or Gibbs-weighted covariance). The noise is scaled by
    :math:`\sigma\sqrt{\Delta t}` (CBXpy's convention; ConsensusBasedX.jl uses
    :math:`\sqrt{2\Delta t}`). For the diagonal noises ``alpha`` grows by ``alpha_growth``
    per step up to ``alpha_max``; covariance noise sets alpha per step so that the
    effective sample size :math:`1/\sum w_i^2` is ``ess * N`` (0.5 N by default).

    A start ends when it has collapsed (spread below ``xtol``; for the diagonal noises,
    below 1e-5 of the start box) or when no run's best improved for
    :math:`k(10 + \lceil 30 d / N \rceil)` steps (``k = 3`` for covariance noise, 10 for
    the diagonal noises); its best point is polished briefly
    and a new start begins with ``popsize_factor`` times the particles of the previous
    start of the same noise (IPOP), until ``maxfev`` (or ``maxiter``) is spent.
    ``noise="mixed"`` (the default) alternates covariance starts (affine invariant:
    rotated, ill-conditioned valleys; the first gets at most 5 % of ``maxfev``) and
    anisotropic starts (separable and Rastrigin-like landscapes). The answer is finally
    polished with the ``polish_share`` of ``maxfev`` reserved for it, in three stages: the
    polish method (L-BFGS-B) on at most half of it, then a local covariance run from the
    best point until it stalls (:mod:`solvers.optimize._cbo_local`: ``4 + 3 ln d`` points
    per generation drawn from :math:`N(m, s^2 C)`, :math:`m` moved to their Gibbs
    consensus, :math:`C` and :math:`s` adapted with memory as in CMA-ES, :math:`C`
    starting from the shape of the swarm that found the point), then adaptive
    Nelder--Mead with what is left. Every evaluated
    point lies in ``bounds`` (particles leaving the box are reflected back, see
    :mod:`solvers.optimize._cbo_bounds`). The defaults were chosen on the BBOB suite at
    d = 5, 10 and 20 (instances 5-10, 3-6 and 5-6) and on shifted Rastrigin-20; see the
    user guide.

    Parameters
    ----------
    fun : callable
        ``fun(x, *args) -> float`` for ``x`` of shape ``(d,)``; with ``vectorized=True``,
        ``x`` has shape ``(d, S)`` and the result shape ``(S,)`` (SciPy's contract), in the
        namespace of the computation. NaN or infinite values count as the worst particle
        (``n_nonfinite`` reports how many).
    bounds : scipy.optimize.Bounds or sequence of (low, high) pairs, optional
        Hard box constraints and the start box. Scalar ``Bounds`` broadcast to ``x0``'s
        dimension; open sides are allowed only with ``x0``; ``keep_feasible`` is always
        honoured (every point is feasible). Needed unless ``x0`` is given.
    x0 : array_like, shape (d,), optional
        Start: particle 0 of the first start is ``x0``, the others uniform in
        ``x0 +- x0_spread`` (restarts too). Must lie in ``bounds``.
    args : tuple, optional
        Extra arguments passed to ``fun``.
    n_particles : int, optional
        Particles per run in the first start, ``N >= 2``.
    maxiter : int, optional
        Cap on the steps over all starts (default: none; ``maxfev`` decides).
    alpha, alpha_growth, alpha_max : float, optional
        Initial inverse temperature, its growth per step and its cap.
    ess : float in (0, 1], optional
        Set alpha per run and step by bisection so that the effective sample size is
        ``ess * N`` (default for covariance noise: 0.5; diagonal noises: the schedule).
    sigma, lam, dt : float, optional
        Noise strength, drift strength, time step. ``None`` picks the per-noise default:
        (10.5, 0.4, 0.01) for the diagonal noises, (1.5, 1.0, 0.1) for covariance noise.
    noise : {"mixed", "anisotropic", "isotropic", "covariance"}, optional
        The noise of every start, or ``"mixed"``: anisotropic and covariance alternately.
    batch_size : int, optional
        Random mini-batch consensus over ``batch_size`` particles per step.
    memory : bool, optional
        Each particle keeps its personal best; the consensus is taken over those.
    n_runs : int, optional
        Independent runs batched in one ``(M, N, d)`` array (one objective call per step
        with ``vectorized=True``); a restart happens when every run has stalled.
    x0_spread : float or array_like, optional
        Half-width of the start box around ``x0``; default a quarter of the bounds' width,
        or 1 without finite bounds.
    maxfev : int, optional
        Budget of point evaluations over all runs, restarts and polish; never exceeded.
        Default ``n_runs * 20 * max(4000, 200 d)`` unless ``maxiter`` is given.
    xtol : float, optional
        A start has collapsed once all particles are within ``xtol`` (sup-norm) of the
        consensus (then restart, or stop with ``restarts=False``).
    ftol : float, optional
        Also collapsed once the energies differ by at most ``ftol * (1 + |f_min|)``.
    f_target : float, optional
        Stop as soon as a value ``<= f_target`` has been found.
    restarts : {"ipop", False}, optional
        IPOP restarts (the default) or a single start.
    popsize_factor : float, optional
        Population growth per restart (>= 1).
    polish : bool or {"L-BFGS-B", "Powell", "Nelder-Mead"}, optional
        Local refinement of the best point (``True``: L-BFGS-B with finite differences,
        within ``bounds``; a derivative-free method for nonsmooth ``fun``), at each restart
        (at most ``100 (d + 1)`` evaluations) and at the end (that method, the local
        covariance run, then Nelder-Mead, or the method again if derivative-free).
    polish_share : float in [0, 1), optional
        Share of one run's budget (``maxfev / n_runs``) reserved for the final polish of
        the best point (it also gets what is left).
    vectorized : bool, optional
        ``fun`` takes the whole population at once.
    workers : int or map-like callable, optional
        ``1``: serial; an int > 1 (-1: all cores): a process pool (fork start method where
        available); any ``map``-like callable (``Executor.map``, dask ``Client.map``).
        Results are identical to serial evaluation. With ``n_runs > 1`` the runs are
        mapped instead: each is a full run (restarts, polish, its share of ``maxfev``)
        with a generator spawned from ``rng``, so ``workers=map``, a pool and a dask
        cluster give identical answers (``callback`` is then not supported).
    rng : None, int or numpy.random.Generator, optional
        Source of all random draws.
    callback : callable, optional
        ``callback(intermediate_result)`` after every step (fields ``x``, ``fun``, ``nit``,
        ``nfev``, ``n_restarts``, ``consensus``, ``population``, ``alpha``); raising
        ``StopIteration`` stops the run (``success=False``, status 99).
    backend : {"auto", "numpy", "numba", "cupy"}, optional
        Which kernels run (:mod:`solvers.optimize._cbo_kernels`).
    progress : bool, optional
        Show a progress bar on stderr.

    Returns
    -------
    res : OptimizeResult
        ``x``, ``fun`` (best point evaluated, polished), ``nfev`` (point evaluations),
        ``nit`` (steps over all starts), ``n_restarts``, ``success``, ``status``,
        ``message``, ``population`` / ``population_energies`` / ``consensus`` (last start),
        ``x_runs`` / ``fun_runs`` (best of each run), ``n_nonfinite``, ``alpha``. Spending the
        budget over the restarts is the normal end (status 6, ``success=True``).

    Raises
    ------
    ValueError
        Missing or malformed ``bounds``/``x0`` (shape, NaN, low >= high, ``x0`` outside the
        bounds), invalid option values, ``workers`` with ``vectorized=True``, ``maxfev``
        below one step, or a vectorized ``fun`` returning the wrong shape.
    TypeError
        ``fun`` not callable or not returning a real scalar, or options of the wrong type.

    See Also
    --------
    solvers.minimize : the router (``method="cbo"``).
    scipy.optimize.differential_evolution, scipy.optimize.dual_annealing

    References
    ----------
    .. [1] R. Pinnau, C. Totzeck, O. Tse, S. Martin, "A consensus-based model for global
       optimization and its mean-field limit", Math. Models Methods Appl. Sci. 27 (2017).
    .. [2] J. A. Carrillo, S. Jin, L. Li, Y. Zhu, "A consensus-based global optimization
       method for high dimensional machine learning problems", ESAIM: COCV 27 (2021).
    .. [3] J. A. Carrillo, F. Hoffmann, A. M. Stuart, U. Vaes, "Consensus-based sampling",
       Stud. Appl. Math. 148 (2022) (the covariance noise).
    .. [4] A. Auger, N. Hansen, "A restart CMA evolution strategy with increasing
       population size", CEC 2005 (IPOP restarts).
    .. [5] R. Bailo et al., "CBX: Python and Julia packages for consensus-based interacting
       particle methods", J. Open Source Softw. 9 (2024) (CBXpy's noise convention).

    Examples
    --------
    >>> import numpy as np
    >>> from solvers import minimize_cbo
    >>> def rastrigin(x):
    ...     return 10 * x.shape[0] + np.sum(x**2 - 10 * np.cos(2 * np.pi * x), axis=0)
    >>> res = minimize_cbo(rastrigin, bounds=[(-3, 3)] * 5, vectorized=True, rng=0,
    ...                    maxfev=50_000)
    >>> bool(np.max(np.abs(res.x)) < 1e-6), res.nfev <= 50_000
    (True, True)
    """
    if not callable(fun):
        raise TypeError(f"fun must be callable, got {type(fun).__name__}")
    check_callback(callback)
    if bounds is None and x0 is None:
        raise ValueError("minimize_cbo needs bounds (the start box) or x0")
    o = {k: v for k, v in locals().items() if k not in ("fun", "bounds", "x0")}
    xp = array_namespace(x0 if hasattr(x0, "__array_namespace__") else None,
                         bounds if hasattr(bounds, "__array_namespace__") else None)
    be = resolve_backend(backend, xp)
    cx, dtype, x0_dev = be.xp, be.xp.float64, None
    if x0 is not None:
        x0_dev = promote_float16(as_float_array(be.to_device(x0), cx, "x0", ndim=1), cx)
        check_finite(x0_dev, cx, "x0")
        dtype, d = x0_dev.dtype, x0_dev.shape[0]
        if d == 0:
            raise ValueError("x0 must have at least one entry")
        box = parse_bounds(bounds, d)
        if box is not None:
            x0_h = np.asarray([float(v) for v in x0_dev.tolist()])
            if np.any(x0_h < box[0]) or np.any(x0_h > box[1]):
                raise ValueError("x0 must lie within bounds")
    else:
        box = parse_bounds(bounds)
        d = box[0].shape[0]
    _check_options(o, d)
    if o["n_runs"] > 1 and check_cbo_workers(workers) is not None:
        return _map_runs(fun, bounds, x0, o)
    start = _start_box(x0_dev, box, x0_spread, d)
    solver = _CBOSolver(fun, o, be, box, start, dtype, Draws(rng, cx))
    return solver.solve()


def _map_runs(fun, bounds, x0, o):
    """``n_runs`` independent runs over ``workers`` (see :mod:`._cbo_runs`)."""
    from ._cbo_runs import map_runs

    if o["callback"] is not None:
        raise ValueError("callback is not supported when workers maps the n_runs runs; "
                         "use workers=1 (batched runs) to follow the iterations")
    keys = [k for k in inspect.signature(minimize_cbo).parameters if k not in
            ("fun", "bounds", "x0", "n_runs", "workers", "rng", "maxfev", "polish",
             "restarts")]
    kwargs = {k: o[k] for k in keys}
    kwargs.update(bounds=bounds, x0=x0, polish=o["polish"] or False, restarts=o["restarts"])
    return map_runs(fun, kwargs, o["n_runs"], o["maxfev"], o["workers"], o["rng"])
