r"""Consensus-based optimization (CBO): a derivative-free global minimizer.

``N`` particles :math:`X_i \in \mathbb{R}^d` move toward a Gibbs-weighted consensus point
and explore with noise scaled by their distance to it. One Euler--Maruyama step is

.. math::

   w_i = \frac{e^{-\alpha f(X_i)}}{\sum_j e^{-\alpha f(X_j)}}, \qquad
   c = \sum_i w_i X_i, \qquad
   X_i \leftarrow X_i - \lambda\,\Delta t\,(X_i - c)
                 + \sigma \sqrt{\Delta t}\; D_i\, \xi_i, \quad \xi_i \sim N(0, I_d),

with :math:`D_i = \operatorname{diag}(X_i - c)` (anisotropic noise, the default) or
:math:`D_i = \lVert X_i - c \rVert_2` (isotropic). By the Laplace principle the consensus
tends to the best particle as :math:`\alpha \to \infty` and to the mean as
:math:`\alpha \to 0`; :math:`\alpha` grows during a run.

The algorithm here is written against the Array API (``xp``); on numpy input a fused Numba
kernel (:mod:`._cbo_numba`) runs each step, on cupy input a CuPy version
(:mod:`._cbo_cupy`). All three see the same random draws (taken from the host
``numpy.random.Generator``) and agree draw for draw.
"""
import inspect
import math
import multiprocessing
import numbers

import numpy as np

from .._lib.namespace import array_namespace, is_numpy_namespace
from .._lib.backend import resolve_backend
from .._lib.rng import Draws
from .._lib.validation import (as_float_array, check_choice, check_finite, check_int,
                               check_positive)
from .._lib.results import OptimizeResult, call_callback, Progress, STOPPED_BY_CALLBACK
from ..lse import softmax, logsumexp
from ._minimize import register_method

__all__ = ["minimize_cbo", "consensus"]

_LOG_ALPHA_LO = math.log(1e-12)
_N_BISECT = 50

_MESSAGES = {
    0: "converged: the particle spread fell below xtol (or the energy spread below ftol)",
    1: "maximum number of iterations reached (the alpha schedule ran to its end)",
    2: "maximum number of function evaluations reached",
    3: "f_target reached",
    4: "no finite objective value was found",
    5: "the particles diverged (non-finite positions)",
}


# --------------------------------------------------------------------------- consensus

def _consensus_generic(X, E, alpha, mask, xp):
    """Gibbs weights and consensus; ``E`` holds +inf for excluded or non-finite particles.

    Returns ``(c, g)`` with ``c`` of shape (M, d) and ``g = E - min E`` (M, N) (all zeros
    in a run without a finite energy, whose consensus is then the plain mean).
    """
    g, _ = _energy_gaps(E, mask, xp)
    c = _weighted_mean(X, g, alpha, xp)
    return c, g


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


def _weighted_mean(X, g, alpha, xp):
    excluded = g == xp.inf
    g0 = xp.where(excluded, xp.zeros_like(g), g)
    if isinstance(alpha, float):
        logits = -alpha * g0
    else:
        logits = -xp.reshape(alpha, (-1, 1)) * g0
    logits = xp.where(excluded, xp.asarray(-xp.inf, dtype=g.dtype), logits)
    w = softmax(logits, axis=1)
    return xp.sum(w[:, :, None] * X, axis=1)


def _ess_alpha_generic(g, ess, alpha_max, xp):
    """Per-run alpha with effective sample size 1/sum(w^2) = ess * (number of particles).

    Bisection on log(alpha) in [log 1e-12, log alpha_max], the same iteration as the Numba
    kernel.
    """
    M = g.shape[0]
    count = xp.sum(xp.astype(g < xp.inf, g.dtype), axis=1)
    log_target = xp.log(ess * count)
    lo = xp.full((M,), _LOG_ALPHA_LO, dtype=xp.float64)
    hi = xp.full((M,), math.log(alpha_max), dtype=xp.float64)
    g64 = xp.astype(g, xp.float64)
    for _ in range(_N_BISECT):
        mid = 0.5 * (lo + hi)
        la = -xp.exp(mid)[:, None] * g64
        log_ess = 2.0 * logsumexp(la, axis=1) - logsumexp(2.0 * la, axis=1)
        small = log_ess < xp.astype(log_target, xp.float64)
        hi = xp.where(small, mid, hi)
        lo = xp.where(small, lo, mid)
    alpha = xp.exp(0.5 * (lo + hi))
    return alpha


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
    cx = be.xp
    if be.name == "numba":
        from ._cbo_numba import consensus_kernel

        X = np.ascontiguousarray(x)
        C = np.empty((X.shape[0], X.shape[2]), dtype=X.dtype)
        consensus_kernel(X, np.ascontiguousarray(energies), alpha, C)
    else:
        E = cx.where(cx.isfinite(energies), energies, cx.asarray(cx.inf, dtype=x.dtype))
        C, _ = _consensus_generic(x, E, alpha, None, cx)
    if single:
        C = C[0, ...]
    return be.to_input(C)


# --------------------------------------------------------------------------- inputs

def _parse_bounds(bounds, xp):
    """Bounds -> (lb, ub) host float64 numpy arrays, or None."""
    if bounds is None:
        return None
    from scipy.optimize import Bounds

    if isinstance(bounds, Bounds):
        lb = np.atleast_1d(np.asarray(bounds.lb, dtype=np.float64))
        ub = np.atleast_1d(np.asarray(bounds.ub, dtype=np.float64))
        lb, ub = np.broadcast_arrays(lb, ub)
    else:
        if hasattr(bounds, "__array_namespace__") and not isinstance(bounds, np.ndarray):
            shape = tuple(bounds.shape)
            if len(shape) != 2 or shape[1] != 2:
                raise ValueError(f"bounds must be a sequence of (low, high) pairs, shape "
                                 f"(d, 2), got shape {shape}")
            b = np.asarray([[float(bounds[i, k]) for k in range(2)] for i in range(shape[0])])
        else:
            try:
                b = np.asarray(bounds, dtype=np.float64)
            except (TypeError, ValueError):
                raise ValueError("bounds must be scipy.optimize.Bounds or a sequence of "
                                 "(low, high) pairs") from None
        if b.ndim != 2 or b.shape[1] != 2:
            raise ValueError(f"bounds must be a sequence of (low, high) pairs, shape (d, 2), "
                             f"got shape {b.shape}")
        lb, ub = b[:, 0], b[:, 1]
    if lb.size == 0:
        raise ValueError("bounds must describe at least one dimension")
    if not (np.all(np.isfinite(lb)) and np.all(np.isfinite(ub))):
        raise ValueError("bounds must be finite: CBO draws its start uniformly in them")
    if np.any(lb >= ub):
        k = int(np.argmax(lb >= ub))
        raise ValueError(f"bounds must have low < high in every dimension; dimension {k} "
                         f"has ({lb[k]}, {ub[k]})")
    return np.ascontiguousarray(lb), np.ascontiguousarray(ub)


class _Objective:
    """``fun(x, *args)`` as a picklable one-argument callable (for worker pools)."""

    def __init__(self, fun, args):
        self.fun = fun
        self.args = tuple(args)

    def __call__(self, x):
        return self.fun(x, *self.args)


class _Evaluator:
    """Evaluates the (K, d) population: vectorized, serially, or through a map-like."""

    def __init__(self, fun, args, vectorized, workers, xp, dtype):
        self.obj = _Objective(fun, args)
        self.vectorized = vectorized
        self.xp = xp
        self.dtype = dtype
        self.pool = None
        if workers is None or (isinstance(workers, numbers.Integral) and not
                               isinstance(workers, bool) and int(workers) == 1):
            self.map = map
        elif callable(workers):
            self.map = workers
        else:
            n = check_int(workers, "workers")
            if n == 0 or n < -1:
                raise ValueError(f"workers must be a positive int, -1 (all cores) or a "
                                 f"map-like callable, got {n}")
            self.pool = multiprocessing.get_context("spawn").Pool(None if n == -1 else n)
            self.map = self.pool.map
        self.parallel = self.map is not map
        if vectorized and self.parallel:
            raise ValueError("use either vectorized=True or workers, not both: a vectorized "
                             "objective is evaluated in one call per step")

    def close(self):
        if self.pool is not None:
            self.pool.close()
            self.pool.join()
            self.pool = None

    def __call__(self, X):
        xp = self.xp
        K = X.shape[0]
        if self.vectorized:
            out = self.obj(X.T)
            if is_numpy_namespace(xp):
                out = np.asarray(out, dtype=self.dtype)
                if out.shape != (K,):
                    raise ValueError(f"a vectorized fun must map x of shape (d, S) to shape "
                                     f"(S,); got shape {out.shape} for S = {K}")
                return out
            if not hasattr(out, "__array_namespace__"):
                out = np.asarray(out, dtype=np.float64)
                if not is_numpy_namespace(xp):
                    out = xp.asarray(out.tolist())
            out = xp.asarray(out)
            if tuple(out.shape) != (K,):
                raise ValueError(f"a vectorized fun must map x of shape (d, S) to shape (S,); "
                                 f"got shape {tuple(out.shape)} for S = {K}")
            return xp.astype(out, self.dtype)
        rows = [X[i, :] for i in range(K)]
        results = list(self.map(self.obj, rows))
        if results and callable(getattr(results[0], "result", None)):
            client = getattr(results[0], "client", None)
            if client is not None and hasattr(client, "gather"):
                results = list(client.gather(results))  # dask futures: one round trip
            else:
                results = [r.result() for r in results]
        try:
            values = [float(v) for v in results]
        except (TypeError, ValueError):
            raise TypeError("fun must return a real scalar (use vectorized=True for an "
                            "objective that takes the whole population)") from None
        if is_numpy_namespace(xp):
            return np.asarray(values, dtype=self.dtype)
        return xp.asarray(values, dtype=self.dtype)


# --------------------------------------------------------------------------- the solver

def minimize_cbo(fun, bounds=None, x0=None, *, args=(), n_particles=20, maxiter=None,
                 alpha=30.0, alpha_growth=1.05, alpha_max=1e5, ess=None, sigma=10.5,
                 lam=0.4, dt=0.01, noise="anisotropic", batch_size=None, memory=False,
                 n_runs=1, x0_spread=None, maxfev=None, xtol=1e-8, ftol=0.0, f_target=None,
                 polish=False, vectorized=False, workers=1, rng=None, callback=None,
                 backend="auto", progress=False):
    r"""Minimize a function with consensus-based optimization (CBO).

    Particles start uniformly in ``bounds`` (or around ``x0``) and follow

    .. math::

       X_i \leftarrow X_i - \lambda\,\Delta t\,(X_i - c_\alpha)
                     + \sigma\sqrt{\Delta t}\,D_i\,\xi_i,\qquad
       c_\alpha = \sum_i \frac{e^{-\alpha f(X_i)}}{\sum_j e^{-\alpha f(X_j)}}\,X_i,

    with :math:`D_i = \operatorname{diag}(X_i - c_\alpha)` (``noise="anisotropic"``) or
    :math:`\lVert X_i - c_\alpha\rVert_2` (``"isotropic"``), :math:`\xi_i \sim N(0, I)`.
    The noise is scaled by :math:`\sigma\sqrt{\Delta t}` (CBXpy's convention; the Julia
    package ConsensusBasedX.jl uses :math:`\sqrt{2\Delta t}`). ``alpha`` is multiplied by
    ``alpha_growth`` after every step, up to ``alpha_max``.

    The defaults (20 particles, 4000 steps = 80 000 evaluations up to d = 20 and
    ``200 d`` steps above, ``sigma=10.5``,
    ``lam=0.4``, ``dt=0.01``, alpha from 30 growing by 5 % per step to 1e5, anisotropic
    noise) were calibrated on shifted Rastrigin, Ackley and Levy functions in d = 20; see
    the user guide for the measured success rates and the parameter guide.

    Parameters
    ----------
    fun : callable
        ``fun(x, *args) -> float`` for ``x`` of shape ``(d,)``; with ``vectorized=True``,
        ``fun(x, *args)`` takes ``x`` of shape ``(d, S)`` and returns shape ``(S,)`` (SciPy's
        contract). ``x`` lives in the namespace the computation runs in (cupy arrays for
        the cupy backend). NaN or infinite values are allowed: such a particle counts as
        the worst one, and the number of them is reported in ``n_nonfinite``.
    bounds : scipy.optimize.Bounds or sequence of (low, high) pairs, optional
        The box the particles start in (uniformly). Particles may leave it: CBO does not
        constrain them. Needed unless ``x0`` is given.
    x0 : array_like, shape (d,), optional
        Start: particle 0 of every run is ``x0``; the others are uniform in
        ``x0 +- x0_spread``.
    args : tuple, optional
        Extra arguments passed to ``fun``.
    n_particles : int, optional
        Particles per run, ``N >= 2``.
    maxiter : int, optional
        Steps per run; each step evaluates the ``N`` particles of each run once. Default
        ``max(4000, 200 * d)``.
    alpha : float, optional
        Initial inverse temperature of the Gibbs weights.
    alpha_growth : float, optional
        Factor applied to alpha after each step (1 keeps it constant).
    alpha_max : float, optional
        Cap on alpha (and the upper end of the ``ess`` bisection).
    ess : float in (0, 1], optional
        If given, alpha is set at every step, per run, by bisection so that the effective
        sample size :math:`1/\sum_i w_i^2` is ``ess * N``; ``alpha`` and ``alpha_growth``
        are then unused.
    sigma : float, optional
        Noise strength.
    lam : float, optional
        Drift strength toward the consensus.
    dt : float, optional
        Time step.
    noise : {"anisotropic", "isotropic"}, optional
        Componentwise noise (scales to high dimension) or one scale per particle.
    batch_size : int, optional
        Random mini-batch consensus: at every step the consensus of each run is taken
        over ``batch_size`` particles drawn without replacement (all particles move).
    memory : bool, optional
        Each particle keeps its personal best; the consensus is taken over those.
    n_runs : int, optional
        Independent runs batched in one ``(M, N, d)`` array: one objective call per step
        evaluates all of them (with ``vectorized=True``). The result is the best run;
        ``x_runs`` / ``fun_runs`` hold every run's answer.
    x0_spread : float or array_like, optional
        Half-width of the start box around ``x0``; default a quarter of the bounds' width,
        or 1 without bounds.
    maxfev : int, optional
        Budget of point evaluations (over all runs); a step that would exceed it is not
        taken.
    xtol : float, optional
        Stop once, in every run, all particles are within ``xtol`` (sup-norm) of the
        consensus: the dynamics have collapsed and nothing moves any more.
    ftol : float, optional
        Stop once, in every run, the energies of the particles differ by at most
        ``ftol * (1 + |f_min|)`` (0, the default, disables it).
    f_target : float, optional
        Stop as soon as a value ``<= f_target`` has been found (known optimum).
    polish : bool, optional
        Refine the answer with L-BFGS-B (within ``bounds``), as SciPy's
        ``differential_evolution`` does; kept only if it improves. Its evaluations are
        counted in ``nfev`` and limited by what is left of ``maxfev``. Off by default: the objectives CBO is for are often
        nonsmooth.
    vectorized : bool, optional
        ``fun`` takes the whole population at once (see ``fun``).
    workers : int or map-like callable, optional
        ``1``: serial evaluation; an int > 1 (or -1 for all cores): a multiprocessing pool
        (``fun`` must be picklable); any ``map(func, iterable)``-like callable, such as
        ``concurrent.futures.Executor.map`` or dask.distributed's ``Client.map`` (its
        futures are gathered). Results are identical to serial evaluation.
    rng : None, int or numpy.random.Generator, optional
        Source of all random draws (start, noise, mini-batches).
    callback : callable, optional
        ``callback(intermediate_result)`` after every step with fields ``x``, ``fun``,
        ``nit``, ``nfev``, ``consensus``, ``population``, ``alpha``; raise
        ``StopIteration`` (or return True) to stop.
    backend : {"auto", "numpy", "numba", "cupy"}, optional
        ``"auto"``: the fused Numba step on numpy input, CuPy on cupy input, generic
        Array API code otherwise.
    progress : bool, optional
        Show a progress bar on stderr.

    Returns
    -------
    res : OptimizeResult
        ``x`` (best point evaluated, or its polished version), ``fun``, ``nfev`` (point
        evaluations, not calls), ``nit`` (steps), ``success``, ``status``, ``message``,
        ``population`` (the last evaluated particles, ``(N, d)``, or ``(M, N, d)`` with
        ``n_runs > 1``), ``population_energies`` (their values), ``consensus`` (``(d,)`` or
        ``(M, d)``), ``x_runs`` ``(M, d)`` and ``fun_runs`` ``(M,)`` (best of each run),
        ``n_nonfinite`` (NaN/inf objective values seen) and ``alpha`` (its final value).
        ``success`` is False when the evaluation budget ran out, a callback stopped the
        run, no finite value was found or the particles diverged; reaching ``maxiter`` is
        the normal end of the alpha schedule (status 1, ``success=True``).

    Raises
    ------
    ValueError
        Missing or malformed ``bounds``/``x0`` (shape, NaN or inf, low >= high, bounds and
        ``x0`` of different dimensions), an invalid option value (e.g. ``n_particles < 2``,
        ``ess`` outside ``(0, 1]``, ``batch_size > n_particles``, a non-positive
        ``x0_spread``, an unknown ``noise`` or ``backend``), ``workers`` together with
        ``vectorized=True``, ``maxfev`` below one step (``n_runs * n_particles``
        evaluations), or a vectorized ``fun`` returning the wrong shape.
    TypeError
        ``fun`` not callable or not returning a real scalar, or options of the wrong type
        (e.g. a float ``n_particles``, an invalid ``rng``).

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
    .. [3] M. Fornasier, T. Klock, K. Riedl, "Convergence of anisotropic consensus-based
       optimization in mean-field law", EvoApplications 2022, LNCS 13224 (2022),
       arXiv:2111.08136 (2021).
    .. [4] M. Fornasier, T. Klock, K. Riedl, "Consensus-based optimization methods converge
       globally", SIAM J. Optim. (2024).
    .. [5] R. Bailo, A. Barbaro, S. N. Gomes, K. Riedl, T. Roith, C. Totzeck, U. Vaes,
       "CBX: Python and Julia packages for consensus-based interacting particle methods",
       J. Open Source Softw. 9 (2024) (CBXpy, whose noise convention is used here).

    Examples
    --------
    >>> import numpy as np
    >>> from solvers import minimize_cbo
    >>> def rastrigin(x):
    ...     return 10 * x.shape[0] + np.sum(x**2 - 10 * np.cos(2 * np.pi * x), axis=0)
    >>> res = minimize_cbo(rastrigin, bounds=[(-3, 3)] * 5, vectorized=True, rng=0)
    >>> bool(np.max(np.abs(res.x)) < 0.25), res.nfev <= 80_000
    (True, True)
    """
    if not callable(fun):
        raise TypeError(f"fun must be callable, got {type(fun).__name__}")
    if bounds is None and x0 is None:
        raise ValueError("minimize_cbo needs bounds (the start box) or x0")
    xp = array_namespace(x0 if hasattr(x0, "__array_namespace__") else None,
                         bounds if hasattr(bounds, "__array_namespace__") else None)
    be = resolve_backend(backend, xp)
    cx = be.xp

    # ---- options
    N = check_int(n_particles, "n_particles", minimum=2)
    M = check_int(n_runs, "n_runs", minimum=1)
    alpha = check_positive(alpha, "alpha", strict=False)
    alpha_growth = check_positive(alpha_growth, "alpha_growth")
    alpha_max = check_positive(alpha_max, "alpha_max")
    if ess is not None:
        ess = check_positive(ess, "ess")
        if ess > 1:
            raise ValueError(f"ess must be in (0, 1], got {ess}")
    sigma = check_positive(sigma, "sigma", strict=False)
    lam = check_positive(lam, "lam", strict=False)
    dt = check_positive(dt, "dt")
    check_choice(noise, ("anisotropic", "isotropic"), "noise")
    if batch_size is not None:
        batch_size = check_int(batch_size, "batch_size", minimum=1)
        if batch_size > N:
            raise ValueError(f"batch_size must be <= n_particles ({N}), got {batch_size}")
        if batch_size == N:
            batch_size = None
    if maxfev is not None:
        maxfev = check_int(maxfev, "maxfev", minimum=1)
    xtol = check_positive(xtol, "xtol", strict=False)
    ftol = check_positive(ftol, "ftol", strict=False)
    if f_target is not None:
        f_target = float(f_target)
    if not isinstance(args, tuple):
        args = (args,)

    # ---- start box
    box = _parse_bounds(bounds, xp)
    dtype = cx.float64
    x0_dev = None
    if x0 is not None:
        x0_dev = as_float_array(be.to_device(x0), cx, "x0", ndim=1)
        check_finite(x0_dev, cx, "x0")
        dtype = x0_dev.dtype
        d = x0_dev.shape[0]
        if d == 0:
            raise ValueError("x0 must have at least one entry")
        if box is not None and box[0].shape[0] != d:
            raise ValueError(f"bounds describe {box[0].shape[0]} dimension(s) but x0 has {d}")
    else:
        d = box[0].shape[0]
    if x0_dev is not None:
        if x0_spread is None:
            spread0 = 0.25 * (box[1] - box[0]) if box is not None else np.ones(d)
        else:
            spread0 = np.broadcast_to(np.asarray(x0_spread, dtype=np.float64), (d,))
            if not np.all(np.isfinite(spread0)) or np.any(spread0 <= 0):
                raise ValueError("x0_spread must be positive and finite")
        low_h, width_h = -spread0, 2.0 * spread0
    else:
        low_h, width_h = box[0], box[1] - box[0]

    maxiter = max(4000, 200 * d) if maxiter is None else check_int(maxiter, "maxiter",
                                                                     minimum=1)
    draws = Draws(rng, cx)
    u = draws.uniform(0.0, 1.0, (M, N, d), dtype=dtype)
    low = cx.asarray(low_h.tolist(), dtype=dtype) if not is_numpy_namespace(cx) else \
        low_h.astype(dtype)
    width = cx.asarray(width_h.tolist(), dtype=dtype) if not is_numpy_namespace(cx) else \
        width_h.astype(dtype)
    X = low + width * u
    if x0_dev is not None:
        X = X + x0_dev
        first = cx.reshape(cx.arange(N), (1, N, 1)) == 0
        X = cx.where(first, x0_dev, X)

    evaluate = _Evaluator(fun, args, bool(vectorized), workers, cx, dtype)
    use_numba = be.name == "numba"
    use_cupy = be.name == "cupy"
    if use_cupy:
        from . import _cbo_cupy  # noqa: F401  (fail before any evaluation if cupy kernels break)
    lam_dt = lam * dt
    sig_sqdt = sigma * math.sqrt(dt)
    aniso = noise == "anisotropic"

    inf = cx.asarray(cx.inf, dtype=dtype)
    F = C = None
    BF = cx.full((M,), cx.inf, dtype=dtype)
    BX = X[:, 0, :]
    Y = FY = None
    if use_numba:
        from ._cbo_numba import cbo_step, empty_like_state

        X = np.ascontiguousarray(X)
        X_out, C, spread_arr, alphas, G = empty_like_state(X)
        BF = np.full(M, np.inf, dtype=dtype)
        BX = X[:, 0, :].copy()
        Y, FY = (X.copy(), np.full((M, N), np.inf, dtype=dtype)) if memory else \
            (np.empty((1, 1, 1), dtype=dtype), np.empty((1, 1), dtype=dtype))
        empty_mask = np.ones((M, N), dtype=np.bool_)
    elif memory:
        Y, FY = X, cx.full((M, N), cx.inf, dtype=dtype)

    nfev = 0
    nit = 0
    n_bad = 0
    status = 1
    alpha_now = alpha
    alpha_used = alpha
    try:
        with Progress(maxiter, desc="cbo", enabled=progress) as bar:
            for k in range(maxiter):
                if maxfev is not None and nfev + M * N > maxfev:
                    status = 2
                    break
                if use_numba:  # plain numpy methods: no wrapper overhead per step
                    F = evaluate(X.reshape(M * N, d)).reshape(M, N)
                else:
                    F = cx.reshape(evaluate(cx.reshape(X, (M * N, d))), (M, N))
                nfev += M * N
                nit = k + 1
                # draws for this step, in a fixed order on every backend
                mask = None
                if batch_size is not None:
                    ub = draws.uniform(0.0, 1.0, (M, N), dtype=dtype)
                    thresh = cx.sort(ub, axis=1)[:, batch_size - 1:batch_size]
                    mask = ub <= thresh
                xi = draws.normal((M, N, d), dtype=dtype)

                if use_numba:
                    F = np.array(F, dtype=dtype)  # the kernel cleans it in place
                    n_bad += cbo_step(X, F, Y, FY, BX, BF, bool(memory), alpha_now,
                                      -1.0 if ess is None else ess, alpha_max, xi,
                                      mask if mask is not None else empty_mask,
                                      mask is not None, lam_dt, sig_sqdt, aniso,
                                      X_out, C, spread_arr, alphas, G)
                    spread = spread_arr
                    alpha_used = alphas if ess is not None else alpha_now
                    X_eval, X, X_out = X, X_out, X
                else:
                    X_eval = X
                    with np.errstate(over="ignore", invalid="ignore"):
                        X, C, spread, F, BX, BF, Y, FY, bad, alpha_used = _step_generic(
                            cx, X, F, BX, BF, Y, FY, bool(memory), alpha_now, ess,
                            alpha_max, xi, mask, lam_dt, sig_sqdt, aniso, use_cupy)
                    n_bad += bad
                alpha_now = min(alpha_now * alpha_growth, alpha_max)

                best_f = float(BF.min() if use_numba else cx.min(BF))
                bar.update(1, fun=best_f)
                if callback is not None:
                    ib = int(cx.argmin(BF))
                    pop = X_eval.copy() if use_numba else X_eval
                    if call_callback(callback, x=be.to_input(BX[ib, :]), fun=best_f, nit=nit,
                                     nfev=nfev,
                                     consensus=be.to_input(C[0, ...] if M == 1 else C),
                                     population=be.to_input(pop[0, ...] if M == 1 else pop),
                                     alpha=alpha_used):
                        status = STOPPED_BY_CALLBACK[0]
                        break
                max_spread = float(spread.max() if use_numba else cx.max(spread))
                if not math.isfinite(max_spread):
                    status = 5
                    break
                if f_target is not None and best_f <= f_target:
                    status = 3
                    break
                if max_spread <= xtol:
                    status = 0
                    break
                if ftol > 0:
                    Fc = cx.where(cx.isfinite(F), F, inf)
                    fmin = cx.min(Fc, axis=1)
                    fmax = cx.max(Fc, axis=1)
                    if bool(cx.all(fmax - fmin <= ftol * (1.0 + cx.abs(fmin)))):
                        status = 0
                        break
    finally:
        evaluate.close()

    if F is None:  # maxfev below one step
        raise ValueError(f"maxfev={maxfev} is below one step ({M * N} evaluations)")
    X_eval = X_eval if nit else X
    ib = int(cx.argmin(BF))
    best_f = float(BF[ib])
    best_x = BX[ib, :]
    if not math.isfinite(best_f) and status not in (5, STOPPED_BY_CALLBACK[0]):
        status = 4
    nfev_polish = 0
    budget = None if maxfev is None else maxfev - nfev
    if polish and math.isfinite(best_f) and (budget is None or budget > 0):
        best_x, best_f, nfev_polish = _polish(evaluate.obj, best_x, best_f, box, cx, dtype,
                                              budget)
    nfev += nfev_polish
    message = STOPPED_BY_CALLBACK[1] if status == STOPPED_BY_CALLBACK[0] else _MESSAGES[status]
    single = M == 1
    alpha_out = alpha_used if isinstance(alpha_used, float) else be.to_input(alpha_used)
    return OptimizeResult(
        x=be.to_input(best_x), fun=best_f, nfev=nfev, nit=nit,
        success=status in (0, 1, 3), status=status, message=message,
        population=be.to_input(X_eval[0, ...] if single else X_eval),
        population_energies=be.to_input(F[0, ...] if single else F),
        consensus=be.to_input(C[0, ...] if single else C),
        x_runs=be.to_input(BX), fun_runs=be.to_input(BF),
        n_nonfinite=int(n_bad), alpha=alpha_out)


def _step_generic(xp, X, F, BX, BF, Y, FY, memory, alpha, ess, alpha_max, xi, mask,
                  lam_dt, sig_sqdt, aniso, use_cupy=False):
    """The generic ``xp`` step (the reference for the Numba and CuPy ones)."""
    M, N, d = X.shape
    inf = xp.asarray(xp.inf, dtype=F.dtype)
    zero = xp.asarray(0.0, dtype=X.dtype)
    bad = ~xp.isfinite(F)
    n_bad = int(xp.sum(xp.astype(bad, xp.int64)))
    F = xp.where(bad, inf, F)
    # best point ever evaluated (first minimiser, as the kernel's strict '<')
    idx = xp.argmin(F, axis=1)
    f_step = xp.min(F, axis=1)
    onehot = xp.reshape(xp.arange(N), (1, N)) == xp.reshape(idx, (M, 1))
    x_step = xp.sum(xp.where(onehot[:, :, None], X, zero), axis=1)
    better = f_step < BF
    BF = xp.where(better, f_step, BF)
    BX = xp.where(better[:, None], x_step, BX)
    if memory:
        imp = F < FY
        FY = xp.where(imp, F, FY)
        Y = xp.where(imp[:, :, None], X, Y)
        E, P = FY, Y
    else:
        E, P = F, X
    g, all_bad = _energy_gaps(E, mask, xp)
    if ess is not None:
        a = _ess_alpha_generic(g, ess, alpha_max, xp)
        a = xp.where(all_bad[:, 0], xp.asarray(alpha, dtype=a.dtype), a)
        alpha_used = a
        a = xp.astype(a, X.dtype)
    else:
        a = alpha_used = alpha
    C = _weighted_mean(P, g, a, xp)
    if use_cupy:
        from ._cbo_cupy import update

        X_new, spread = update(X, C, xi, lam_dt, sig_sqdt, aniso)
    else:
        diff = X - C[:, None, :]
        spread = xp.max(xp.reshape(xp.abs(diff), (M, N * d)), axis=1)
        if aniso:
            X_new = X - lam_dt * diff + sig_sqdt * diff * xi
        else:
            nrm = xp.sqrt(xp.sum(diff * diff, axis=2, keepdims=True))
            X_new = X - lam_dt * diff + (sig_sqdt * nrm) * xi
    return X_new, C, spread, F, BX, BF, Y, FY, n_bad, alpha_used


def _polish(obj, x, fx, box, xp, dtype, budget=None):
    """L-BFGS-B from ``x`` (host float64); returns (x, f, nfev), keeping the better point."""
    from scipy.optimize import minimize as scipy_minimize

    d = x.shape[0]
    x_host = np.asarray([float(x[i]) for i in range(d)], dtype=np.float64)
    on_numpy = is_numpy_namespace(xp)

    def f_host(z):
        arg = z.astype(dtype) if on_numpy else xp.asarray(z.tolist(), dtype=dtype)
        v = float(obj(arg))
        return v if math.isfinite(v) else np.inf

    bnds = list(zip(box[0], box[1])) if box is not None else None
    options = {} if budget is None else {"maxfun": int(budget)}
    res = scipy_minimize(f_host, x_host, method="L-BFGS-B", bounds=bnds, options=options)
    if math.isfinite(res.fun) and res.fun < fx:
        xn = res.x.astype(dtype) if on_numpy else xp.asarray(res.x.tolist(), dtype=dtype)
        return xn, float(res.fun), int(res.nfev)
    return x, fx, int(res.nfev)


# --------------------------------------------------------------------------- router

_SIG = inspect.signature(minimize_cbo)


def _minimize_cbo_adapter(fun, x0=None, **options):
    """``solvers.minimize(fun, x0, method="cbo", ...)`` -> :func:`minimize_cbo`."""
    return minimize_cbo(fun, x0=x0, **options)


_adapter_params = [p for name, p in _SIG.parameters.items() if name not in ("fun", "x0")]
_minimize_cbo_adapter.__signature__ = inspect.Signature(
    [inspect.Parameter("fun", inspect.Parameter.POSITIONAL_OR_KEYWORD),
     inspect.Parameter("x0", inspect.Parameter.POSITIONAL_OR_KEYWORD, default=None)]
    + [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in _adapter_params])

register_method("cbo", _minimize_cbo_adapter, takes_x0=False)
