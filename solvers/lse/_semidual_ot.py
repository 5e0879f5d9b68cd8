r"""Semi-dual entropic OT (Genevay et al. 2016) with a large discrete target, by Safe-KL.

Written once against the Array API: :func:`semidual_ot` validates and returns; the pieces
it calls are :func:`_setup` (arrays in the computing namespace and the host-side samplers
of the indices, frozen in a :class:`_Problem`), :func:`_sgd_step` / :func:`_safe_kl_step`
(one stochastic step, reading the options from the frozen config), and :func:`_finish`
(exact value and c-transform at the answer). The scatter of the per-target updates is the
one kernel (``scatter_add`` in ``_safe_kl_kernels.py``).
"""
import dataclasses
import math
import warnings

import numpy as np
from scipy.optimize import minimize as scipy_minimize

from .._lib.backend import resolve_backend
from .._lib.docstrings import fill_doc
from .._lib.frames import unwrap_frame
from .._lib.host import to_float, to_host
from .._lib.namespace import array_namespace
from .._lib.params import COUNT, POSITIVE, PROBABILITY, Array, Choice, Options, Param
from .._lib.results import Progress, Status, call_callback, make_result
from .._lib.rng import check_rng
from .._lib.validation import promote_float16
from ._safe_kl_kernels import KERNELS
from ._safe_kl_solver import (AVERAGE, BACKEND_OPTION, CALLBACK_OPTION, PROGRESS, RNG,
                              terms_generic)
from .logsumexp import logsumexp

__all__ = ["semidual_ot", "semidual_ot_objective"]

#: steps between host checks for non-finite potentials
CHECK_EVERY = 16
#: how far from one the sum of the weights ``a`` and ``b`` may be (they are then rescaled)
WEIGHT_SUM_TOL = 1e-6

_EPSILON = Param("epsilon", POSITIVE, None, "entropic regularisation (required)")
_EPS = Param("eps", POSITIVE, None, "deprecated alias of epsilon")
_X = Param("X", Array(ndim=2, empty=False), doc="source points (n, d)")
_Y = Param("Y", Array(ndim=2, empty=False), doc="target points (m, d)")
_A = Param("a", Array(ndim=1), None, "source weights, positive, summing to one")
_B = Param("b", Array(ndim=1), None, "target weights, positive, summing to one")
_BLOCK = Param("block_size", COUNT, 1024, "source rows per block of the exact passes")

OBJECTIVE_OPTIONS = Options(
    "SemidualObjectiveOptions",
    Param("v", Array(ndim=1), doc="target potentials (m,)"),
    _X, _Y, _EPSILON, _A, _B, _BLOCK, _EPS)

SEMIDUAL_OPTIONS = Options(
    "SemidualOTOptions",
    _X, _Y, _EPSILON, _A, _B,
    Param("method", Choice("safe-kl", "sgd", "lbfgs"), "safe-kl", "solver"),
    Param("rho", PROBABILITY, 0.01, "Safe-KL cap parameter"),
    Param("batch_size", COUNT, 32, "source points per step"),
    Param("target_batch_size", COUNT, 32, "target points per step (safe-kl)"),
    Param("epochs", POSITIVE, None, "passes (default by method)"),
    Param("maxiter", COUNT, None, "steps (iterations for lbfgs)"),
    Param("lr", POSITIVE, 1.0, "step size in units of epsilon"),
    Param("shift_lr", POSITIVE, 1.0, "step on the shifts (safe-kl)"),
    AVERAGE,
    Param("x0", Array(ndim=1), None, "initial potentials (m,)"),
    RNG, CALLBACK_OPTION, PROGRESS, _BLOCK, BACKEND_OPTION, _EPS)

_REFERENCES = """
References
----------
.. [1] A. Genevay, M. Cuturi, G. Peyre, F. Bach, "Stochastic optimization for
   large-scale optimal transport", NeurIPS 2016.
.. [2] E. Gladin, A. Kroshnin, J. Zhu, P. Dvurechensky, "Improved stochastic
   optimization of LogSumExp", arXiv:2509.24894, 2025.
"""

_POINTS = """
X : array or pandas DataFrame, shape (n, d)
    Source points.
Y : array or pandas DataFrame, shape (m, d)
    Target points.
"""

_WEIGHTS = f"""
a, b : arrays, optional
    Source and target weights: positive, each summing to one within {WEIGHT_SUM_TOL:g}
    (then rescaled to sum exactly to one); uniform by default.
"""


def _epsilon(epsilon, eps):
    """``epsilon``, or its deprecated alias ``eps`` (both already checked positive)."""
    if eps is not None:
        if epsilon is not None:
            raise TypeError("give epsilon only (eps is its deprecated alias)")
        warnings.warn("eps is deprecated; use epsilon", DeprecationWarning, stacklevel=3)
        epsilon = eps
    if epsilon is None:
        raise TypeError("missing required keyword argument: epsilon")
    return epsilon


def _sq_cost(Xb, Y, y2, xp):
    """Squared Euclidean cost block ``|x - y|^2`` (POT's ``ot.dist`` default)."""
    x2 = xp.sum(Xb * Xb, axis=1)
    C = x2[:, None] + y2[None, :] - 2.0 * (Xb @ Y.T)
    return xp.maximum(C, xp.zeros_like(C))


def _weights(w, k, xp, dtype, name):
    """Weights of ``k`` points: uniform, or ``w`` checked (positive, summing to one within
    ``WEIGHT_SUM_TOL``) and rescaled to sum exactly to one in ``dtype``."""
    if w is None:
        return xp.full((k,), 1.0 / k, dtype=dtype)
    if w.shape[0] != k or not bool(xp.all(w > 0)):
        raise ValueError(f"{name} must hold {k} positive finite weights")
    total = float(xp.sum(xp.astype(w, xp.float64)))
    if not abs(total - 1.0) <= WEIGHT_SUM_TOL:
        raise ValueError(f"{name} must sum to 1 (within {WEIGHT_SUM_TOL:g}), got sum "
                         f"{total:.10g}; pass {name} / {name}.sum() to use these weights")
    w = xp.astype(w, dtype, copy=False)
    return w / xp.sum(w)


def _values(**arrays):
    """The arguments' values, pandas frames and series unwrapped (once, at the boundary)."""
    return tuple(unwrap_frame(value, name)[0] for name, value in arrays.items())


def _arrays(spec, be, X, Y, a, b, sampler=False):
    """``(X, Y, a, b)`` of either entry point converted to ``be.xp`` and checked; ``X``
    and ``a`` untouched for a sampler source."""
    Y, b = spec.arrays(be, Y=Y, b=b)
    Y = promote_float16(Y, be.xp)
    b = _weights(b, Y.shape[0], be.xp, Y.dtype, "b")
    if sampler:
        return X, Y, None, b
    X, a = spec.arrays(be, X=X, a=a)
    X = be.xp.astype(X, Y.dtype, copy=False)
    if X.shape[1] != Y.shape[1]:
        raise ValueError(f"X must have {Y.shape[1]} columns like Y, got shape "
                         f"{tuple(X.shape)}")
    return X, Y, _weights(a, X.shape[0], be.xp, Y.dtype, "a"), b


def _ctransform(v, Xb, Y, y2, log_b, eps, xp):
    """u(x) = -eps log sum_j b_j exp((v_j - c(x, y_j))/eps) and the conditional plan rows."""
    logits = (v[None, :] - _sq_cost(Xb, Y, y2, xp)) / eps + log_b[None, :]
    lse = logsumexp(logits, axis=1)
    return -eps * lse, xp.exp(logits - lse[:, None])


def _objective(v, X, Y, a, b, eps, block_size, xp, *, y2=None, log_b=None, u_blocks=None):
    """Semi-dual value and gradient over row blocks of ``X``.

    ``y2 = sum(Y * Y, axis=1)`` and ``log_b = log(b)`` are computed unless given (a run
    holds them already); a list ``u_blocks`` receives the c-transform of each row block.
    """
    if y2 is None:
        y2 = xp.sum(Y * Y, axis=1)
    if log_b is None:
        log_b = xp.log(b)
    value = xp.sum(b * v)
    grad = b
    for r0 in range(0, X.shape[0], block_size):
        r1 = min(r0 + block_size, X.shape[0])
        u, plan = _ctransform(v, X[r0:r1, ...], Y, y2, log_b, eps, xp)
        if u_blocks is not None:
            u_blocks.append(u)
        value = value + xp.sum(a[r0:r1] * u)
        grad = grad - a[r0:r1] @ plan
    return value, grad


@OBJECTIVE_OPTIONS.entry
@fill_doc(points=_POINTS, weights=_WEIGHTS, references=_REFERENCES)
def semidual_ot_objective(v, X, Y, *, epsilon=None, a=None, b=None, block_size=1024,
                          eps=None):
    r"""Exact entropic semi-dual value and gradient in the target potentials ``v``.

    .. math:: H(v) = \sum_i a_i v^{c,\varepsilon}(x_i) + \sum_j b_j v_j, \qquad
              v^{c,\varepsilon}(x) = -\varepsilon \log \sum_j b_j
              e^{(v_j - \|x - y_j\|^2)/\varepsilon},

    maximal (concave) at the optimal potentials; its maximum is the entropic OT cost
    :math:`\min_\pi \langle \pi, C\rangle + \varepsilon\,\mathrm{KL}(\pi\|a\otimes b)`.
    :math:`\nabla H = b - \sum_i a_i \pi(\cdot|x_i)`. Rows are processed in blocks, so
    memory is ``block_size * m``.

    Parameters
    ----------
    v : array, shape (m,)
        Target potentials (finite).
    {{points}}
    epsilon : float
        Entropic regularisation (``eps`` is a deprecated alias).
    {{weights}}
    block_size : int, optional

    Returns
    -------
    value : float
    grad : array, shape (m,)
        In the namespace of the inputs (numpy, cupy, array_api_strict, ...).

    Raises
    ------
    ValueError
        ``epsilon`` not finite or ``<= 0``; ``X`` or ``Y`` not 2-D, empty, non-finite, or
        with different numbers of columns; weights ``a`` or ``b`` of the wrong length, not
        positive, not finite or not summing to one; ``v`` not 1-D, not finite or whose
        length is not ``m``; ``block_size < 1``.
    TypeError
        Complex or non-numeric ``v``, ``X``, ``Y``, ``a`` or ``b``, non-real ``epsilon``,
        or ``epsilon`` missing.

    Notes
    -----
    Computations run in the inputs' namespace and dtype.

    {{references}}

    Examples
    --------
    >>> import numpy as np
    >>> from solvers.lse import semidual_ot_objective
    >>> X = Y = np.zeros((3, 1))
    >>> value, grad = semidual_ot_objective(np.zeros(3), X, Y, epsilon=0.1)
    >>> round(value, 12), float(np.abs(grad).max())
    (0.0, 0.0)
    """
    cfg = OBJECTIVE_OPTIONS.validate(epsilon=epsilon, block_size=block_size, eps=eps)
    epsilon = _epsilon(cfg.epsilon, cfg.eps)
    v, X, Y, a, b = _values(v=v, X=X, Y=Y, a=a, b=b)
    be = resolve_backend("auto", array_namespace(v, X, Y, a, b))
    X, Y, a, b = _arrays(OBJECTIVE_OPTIONS, be, X, Y, a, b)
    (v,) = OBJECTIVE_OPTIONS.arrays(be, v=v)
    if v.shape[0] != Y.shape[0]:
        raise ValueError(f"v must have shape ({Y.shape[0]},), one potential per point of "
                         f"Y, got {tuple(v.shape)}")
    v = be.xp.astype(v, Y.dtype, copy=False)
    value, grad = _objective(v, X, Y, a, b, epsilon, cfg.block_size, be.xp)
    return to_float(value), grad


@SEMIDUAL_OPTIONS.entry
@fill_doc(weights=_WEIGHTS, references=_REFERENCES)
def semidual_ot(X, Y, *, epsilon=None, a=None, b=None, method="safe-kl", rho=0.01,
                batch_size=32, target_batch_size=32, epochs=None, maxiter=None, lr=1.0,
                shift_lr=1.0, average=0.5, x0=None, rng=None, callback=None, progress=False,
                block_size=1024, backend="auto", eps=None):
    r"""Entropic OT from a source (sample or sampler) to a discrete target, semi-dual.

    Maximizes the semi-dual :math:`H(v)` of Genevay et al. (2016) over the target
    potentials :math:`v \in \mathbb{R}^m` (see :func:`semidual_ot_objective`), for the
    squared Euclidean cost. Methods:

    ``"lbfgs"``
        L-BFGS on the exact semi-dual of a finite source sample (each step touches all
        ``n * m`` pairs, in row blocks); the reference.
    ``"sgd"``
        Genevay et al.'s averaged stochastic ascent: source minibatches (from ``X`` or a
        sampler, the continuous case), the exact c-transform over all ``m`` targets.
    ``"safe-kl"``
        Doubly stochastic: minibatches of source points *and* of targets (drawn from
        ``b``), with one Safe-KL shift :math:`s_i` per source point, so a step costs
        ``batch_size * target_batch_size`` pairs whatever ``m``. Per pair
        :math:`w_{ij} = 1/(\rho + e^{s_i - (v_j - C_{ij})/\varepsilon})`, capped at
        :math:`1/\rho`. Each sampled coordinate moves by its batch mean,
        :math:`v_j \mathrel{-}= \eta\varepsilon\,(\overline{w_{\cdot j}} - 1)`,
        :math:`s_i \mathrel{-}= \eta_s(1 - \overline{w_{i\cdot}})`: in expectation a
        diagonally rescaled gradient step on the Safe-KL semi-dual (jointly convex in
        :math:`(v, s)`), whose fixed point is :math:`O(\rho)` from the exact potentials.

    Parameters
    ----------
    X : array, pandas DataFrame (n, d) or callable
        Source sample, or ``sampler(rng, size) -> (size, d)`` (``"sgd"`` only).
    Y : array or pandas DataFrame, shape (m, d)
        Target points.
    epsilon : float
        Entropic regularisation (in units of the cost; ``eps`` is a deprecated alias).
    {{weights}}
    method : {"safe-kl", "sgd", "lbfgs"}
    rho : float
        Safe-KL cap parameter in (0, 1).
    batch_size, target_batch_size : int
        Source and target minibatch sizes.
    epochs : float, optional
        Passes over the ``n * m`` pairs (``"safe-kl"``) or over the ``n`` source points
        (``"sgd"``; with a sampler an epoch is 1000 draws). Default 50 (safe-kl), 20 (sgd).
    maxiter : int, optional
        Steps (overrides ``epochs``; iterations for ``"lbfgs"``).
    lr : float, optional
        Step size, in units of ``eps`` (default 1.0).
    shift_lr : float, optional
        Step on the shifts (``"safe-kl"``): the curvature of the shift subproblem is
        :math:`\mathbb{E}\,w(1 - \rho w) \approx 1`, so 1 is a (noisy) Newton step.
    average : float or None
        Average ``v`` over the steps after ``average * maxiter``.
    x0 : array, shape (m,), optional
        Initial potentials (zeros).
    rng : None, int or numpy.random.Generator
    callback : callable, optional
        ``callback(intermediate_result)`` with ``x`` (the potentials returned so far, an
        array of the input namespace) and ``nit``; ``StopIteration`` stops the run
        (``success=False``, status ``CALLBACK``).
    progress : bool
    block_size : int
        Row block for the exact passes.
    backend : {"auto", "numpy", "numba", "cupy"}, optional
        Where the scatter of the stochastic updates runs (``"auto"`` follows the inputs:
        numpy, CuPy, or the generic code on any other namespace, whose scatter is a
        one-hot product costing ``O(m)`` per sampled target).

    Returns
    -------
    OptimizeResult
        ``x`` (target potentials ``v``, defined up to an additive constant), ``u`` (the
        c-transform at the source sample, arrays only), ``fun`` (exact semi-dual value at
        ``x`` for a finite source: the entropic OT cost at the optimum), ``nit``,
        ``nfev`` (cost entries evaluated), ``x_last``, ``success``, ``status``,
        ``message`` (shared contract: a stochastic run that spends its budget succeeds with
        status ``MAXITER``; non-finite potentials end it with ``NONFINITE``, the last
        finite iterate returned; L-BFGS reports ``CONVERGED`` or ``MAXITER``).

    Raises
    ------
    ValueError
        Bad shapes, weights (not positive, or not summing to one) or parameters; a
        sampler with a method other than ``"sgd"``.
    TypeError
        Options of the wrong type; complex or non-numeric arrays; ``epsilon`` missing.

    Notes
    -----
    The optimal plan is :math:`\pi_{ij} = a_i b_j e^{(u_i + v_j - C_{ij})/\varepsilon}`,
    the same plan as POT's ``ot.sinkhorn(a, b, M, eps)`` (whose entropy term differs by a
    constant); POT's dual potential :math:`g = \varepsilon\log v_{\mathrm{POT}}` equals
    ``x + epsilon * log(b)`` up to a constant. Runs on any Array API namespace: inputs
    in array_api_strict or cupy give results in the same namespace (the minibatch indices
    are drawn on the host with ``rng`` and moved over, so every namespace sees the same
    draws; L-BFGS moves only the ``m``-vector of potentials and its gradient between
    SciPy and the device each iteration).

    Examples
    --------
    >>> import numpy as np
    >>> from solvers import semidual_ot
    >>> rng = np.random.default_rng(0)
    >>> X, Y = rng.normal(size=(300, 2)), rng.normal(size=(40, 2)) + 1.0
    >>> exact = semidual_ot(X, Y, epsilon=0.5, method="lbfgs")
    >>> fast = semidual_ot(X, Y, epsilon=0.5, rng=0)
    >>> bool(exact.fun - fast.fun < 1e-3 * exact.fun)   # semi-dual values
    True
    >>> bool(np.std(fast.x - exact.x) < 0.1 * np.std(exact.x))   # potentials, up to a constant
    True

    {{references}}
    """
    cfg = SEMIDUAL_OPTIONS.validate(
        epsilon=epsilon, method=method, rho=rho, batch_size=batch_size,
        target_batch_size=target_batch_size, epochs=epochs, maxiter=maxiter, lr=lr,
        shift_lr=shift_lr, average=average, rng=rng, callback=callback, progress=progress,
        block_size=block_size, backend=backend, eps=eps)
    cfg = cfg.replace(epsilon=_epsilon(cfg.epsilon, cfg.eps), eps=None)
    sampler = callable(X)
    if sampler and cfg.method != "sgd":
        raise ValueError("a sampler source needs method='sgd' (safe-kl keeps one shift per "
                         "source point; lbfgs needs the whole sample)")
    P = _setup(X, Y, a, b, x0, cfg, sampler)
    if cfg.method == "lbfgs":
        return _lbfgs(P, cfg.replace(maxiter=1000 if cfg.maxiter is None else cfg.maxiter))
    cfg = cfg.replace(maxiter=_budget(P, cfg))
    with Progress(cfg.maxiter, desc=f"semidual_ot[{cfg.method}]",
                  enabled=cfg.progress) as bar:
        return _stochastic(P, cfg, check_rng(cfg.rng), bar)


@dataclasses.dataclass(frozen=True)
class _Problem:
    """The validated arrays of one run, in the computing namespace, and what the steps
    derive from them once (squared norms, log weights, host CDFs of the index samplers)."""

    be: object
    X: object  # an array, or the sampler callable
    Y: object
    a: object  # None for a sampler
    b: object
    v0: object
    sampler: bool
    y2: object
    log_b: object
    cdf_a: object
    cdf_b: object

    @property
    def xp(self):
        return self.be.xp

    @property
    def n(self):
        return None if self.sampler else self.X.shape[0]

    @property
    def m(self):
        return self.Y.shape[0]


def _setup(X, Y, a, b, x0, cfg, sampler):
    X, Y, a, b, x0 = _values(X=X, Y=Y, a=a, b=b, x0=x0)
    inputs = (Y, b, x0) if sampler else (X, Y, a, b, x0)
    be = resolve_backend(cfg.backend, array_namespace(*inputs))
    xp = be.xp
    X, Y, a, b = _arrays(SEMIDUAL_OPTIONS, be, X, Y, a, b, sampler)
    m = Y.shape[0]
    if x0 is None:
        v0 = xp.zeros((m,), dtype=Y.dtype)
    else:
        (v0,) = SEMIDUAL_OPTIONS.arrays(be, x0=x0)
        if v0.shape[0] != m:
            raise ValueError(f"x0 must have shape ({m},), got {tuple(v0.shape)}")
        v0 = xp.asarray(xp.astype(v0, Y.dtype, copy=False), copy=True)
    # index samplers on the host (explicit copies of the two weight vectors, once)
    return _Problem(be=be, X=X, Y=Y, a=a, b=b, v0=v0, sampler=sampler,
                    y2=xp.sum(Y * Y, axis=1), log_b=xp.log(b),
                    cdf_a=None if sampler else np.cumsum(to_host(a).astype(np.float64)),
                    cdf_b=np.cumsum(to_host(b).astype(np.float64)))


def _budget(P, cfg):
    """Steps of a stochastic run: ``maxiter``, or ``epochs`` (default by method)."""
    if cfg.maxiter is not None:
        return cfg.maxiter
    if cfg.method == "safe-kl":
        per_step = cfg.batch_size * cfg.target_batch_size
        n_ep = 50 if cfg.epochs is None else cfg.epochs
        return max(1, int(round(n_ep * P.n * P.m / per_step)))
    size = 1000 if P.sampler else P.n
    n_ep = 20 if cfg.epochs is None else cfg.epochs
    return max(1, int(round(n_ep * size / cfg.batch_size)))


def _draw(P, gen, cdf, size):
    """Inverse-CDF indices on the host (O(size log n)), and their device copy."""
    idx = np.minimum(np.searchsorted(cdf, gen.random(size), side="right"), len(cdf) - 1)
    return idx, P.xp.asarray(idx)


def _dup_weights(idx, xp, dtype):
    """``1 / multiplicity`` of each drawn index: a scatter-add then averages duplicates.

    (A batch-size square comparison on the host: cheaper than sorting for small batches.)
    """
    counts = np.count_nonzero(idx[:, None] == idx[None, :], axis=1)
    return xp.asarray(1.0 / counts, dtype=dtype)


def _sgd_step(P, cfg, gen, v):
    xp = P.xp
    if P.sampler:
        Xb = xp.asarray(P.X(gen, cfg.batch_size), dtype=P.Y.dtype)
    else:
        Xb = xp.take(P.X, _draw(P, gen, P.cdf_a, cfg.batch_size)[1], axis=0)
    _, plan = _ctransform(v, Xb, P.Y, P.y2, P.log_b, cfg.epsilon, xp)
    return v + cfg.lr * cfg.epsilon * (1.0 - xp.mean(plan, axis=0) / P.b)


def _safe_kl_step(P, cfg, gen, v, s, seen, scatter):
    """Doubly stochastic Safe-KL step on (v, s); ``seen`` is the host mask of visited i."""
    xp, dtype, rho = P.xp, P.Y.dtype, cfg.rho
    I, Id = _draw(P, gen, P.cdf_a, cfg.batch_size)
    J, Jd = _draw(P, gen, P.cdf_b, cfg.target_batch_size)
    YJ = xp.take(P.Y, Jd, axis=0)
    phi = (xp.take(v, Jd)[None, :]
           - _sq_cost(xp.take(P.X, Id, axis=0), YJ, xp.take(P.y2, Jd), xp)) / cfg.epsilon
    fresh_host = ~seen[I]
    s_old = xp.take(s, Id)
    s_I = s_old
    if fresh_host.any():  # first visit: start at the batch estimate of the shift
        seen[I] = True
        init = logsumexp(phi, axis=1) - math.log(len(J)) + math.log1p(-rho)
        s_I = xp.where(xp.asarray(fresh_host), init, s_old)
    w, _ = KERNELS.get("terms", P.be, generic=terms_generic)(phi, s_I[:, None], rho)
    # each sampled coordinate moves by its own batch mean (duplicates averaged): the
    # expected step of v_j is lr eps P(j sampled) (E_i w_ij - 1), a diagonally rescaled
    # gradient step with the same fixed point
    dv = -cfg.lr * cfg.epsilon * (xp.mean(w, axis=0) - 1.0) * _dup_weights(J, xp, dtype)
    ds = (s_I - s_old - cfg.shift_lr * (1.0 - xp.mean(w, axis=1))) \
        * _dup_weights(I, xp, dtype)
    return scatter(v, Jd, dv), scatter(s, Id, ds)


def _scatter_xp(v, idx, vals):
    """Generic twin of ``scatter_add``: a one-hot product, ``O(len(v) len(idx))``."""
    xp = array_namespace(v, vals)
    hit = idx[:, None] == xp.arange(v.shape[0], dtype=idx.dtype)[None, :]
    return v + xp.sum(xp.where(hit, vals[:, None], xp.zeros_like(vals)[:, None]), axis=0)


def _stochastic(P, cfg, gen, bar):
    xp = P.xp
    v, s = P.v0, None
    seen = None
    if cfg.method == "safe-kl":
        s = xp.zeros((P.n,), dtype=P.Y.dtype)
        seen = np.zeros(P.n, dtype=bool)
    scatter = KERNELS.get("scatter_add", P.be, generic=_scatter_xp)
    avg_start = None if cfg.average is None else int(cfg.average * cfg.maxiter)
    v_avg, n_avg, good = None, 0, (xp.asarray(v, copy=True), None, 0)
    status, message, nit = Status.MAXITER, None, 0
    for k in range(cfg.maxiter):
        with np.errstate(over="ignore", invalid="ignore"):  # checked below, explicitly
            if cfg.method == "sgd":
                v = _sgd_step(P, cfg, gen, v)
            else:
                v, s = _safe_kl_step(P, cfg, gen, v, s, seen, scatter)
        if avg_start is not None and k >= avg_start:
            n_avg += 1
            v_avg = xp.asarray(v, copy=True) if v_avg is None else v_avg + (v - v_avg) / n_avg
        nit = k + 1
        if nit % CHECK_EVERY == 0 or nit == cfg.maxiter:
            if not bool(xp.all(xp.isfinite(v))):
                v, v_avg, nit = good
                status = Status.NONFINITE
                message = (f"non-finite potentials after a step in ({nit}, {k + 1}]; the "
                           f"returned x is the iterate after step {nit}")
                break
            good = (xp.asarray(v, copy=True), v_avg, nit)
        bar.update(1)
        ret = v if v_avg is None else v_avg
        if cfg.callback is not None and call_callback(
                cfg.callback, x=P.be.to_input(xp.asarray(ret, copy=True)), nit=nit):
            status = Status.CALLBACK
            break
    per = cfg.batch_size * (P.m if cfg.method == "sgd" else cfg.target_batch_size)
    return _finish(P, cfg, v if v_avg is None else v_avg, nit, nit * per, status, message,
                   x_last=P.be.to_input(v))


def _lbfgs(P, cfg):
    """L-BFGS (SciPy, on the host) on the exact semi-dual evaluated in the namespace."""
    xp, counter = P.xp, [0]

    def neg(vv):
        counter[0] += 1
        val, grad = _objective(xp.asarray(vv, dtype=P.Y.dtype), P.X, P.Y, P.a, P.b,
                               cfg.epsilon, cfg.block_size, xp, y2=P.y2, log_b=P.log_b)
        return -to_float(val), -np.asarray(to_host(grad), dtype=np.float64)

    cb = None
    if cfg.callback is not None:
        def cb(intermediate_result):
            x = P.be.to_input(xp.asarray(intermediate_result.x, dtype=P.Y.dtype))
            if call_callback(cfg.callback, x=x,
                             nit=getattr(intermediate_result, "nit", None)):
                raise StopIteration

    res = scipy_minimize(neg, np.asarray(to_host(P.v0), dtype=np.float64), jac=True,
                         method="L-BFGS-B", callback=cb,
                         options={"maxiter": cfg.maxiter, "gtol": 1e-12, "ftol": 1e-15})
    if res.status == Status.CALLBACK:  # SciPy's status when the callback stopped it
        status, success = Status.CALLBACK, False
    else:
        status = Status.CONVERGED if res.success else Status.MAXITER
        success = bool(res.success)
    v = xp.asarray(res.x, dtype=P.Y.dtype)
    return _finish(P, cfg, v, res.nit, counter[0] * P.n * P.m, status, str(res.message),
                   success=success)


def _finish(P, cfg, v, nit, nfev, status, message, success=None, **extra):
    xp, be = P.xp, P.be
    if status == Status.MAXITER and success is None:
        success = True  # a fixed-budget stochastic run that spent its budget
    fields = dict(x=be.to_input(v), nit=nit, nfev=nfev, method=cfg.method, **extra)
    if not P.sampler:
        u = []
        value, _ = _objective(v, P.X, P.Y, P.a, P.b, cfg.epsilon, cfg.block_size, xp,
                              y2=P.y2, log_b=P.log_b, u_blocks=u)
        fields["fun"] = to_float(value)
        fields["u"] = be.to_input(xp.concat(u) if len(u) > 1 else u[0])
    return make_result(status, success=success, message=message, **fields)
