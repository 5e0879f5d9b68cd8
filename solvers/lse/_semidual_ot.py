r"""Semi-dual entropic OT (Genevay et al. 2016) with a large discrete target, by Safe-KL.

Written once against the Array API: :func:`semidual_ot` validates and returns; the pieces
it calls are :func:`_setup` (arrays in the computing namespace, host-side samplers of the
indices), :func:`_sgd_step` / :func:`_safe_kl_step` (one stochastic step), and
:func:`_finish` (exact value and c-transform at the answer). The scatter of the per-target
updates is the one kernel (``scatter_add`` in ``_safe_kl_kernels.py``).
"""
import math
import warnings

import numpy as np
from scipy.optimize import minimize as scipy_minimize

from .._lib.backend import resolve_backend
from .._lib.host import to_float, to_host
from .._lib.namespace import array_namespace
from .._lib.results import Status, call_callback, make_result, Progress
from .._lib.rng import check_rng
from .._lib.validation import (as_float_array, check_choice, check_finite, check_int,
                               check_positive, promote_float16)
from ._safe_kl_kernels import KERNELS
from ._safe_kl_solver import _check_rho, _terms_xp
from .logsumexp import logsumexp
from .safe_kl import _check_average

__all__ = ["semidual_ot", "semidual_ot_objective"]

#: steps between host checks for non-finite potentials
CHECK_EVERY = 16


def _epsilon(epsilon, eps):
    """``epsilon`` (or its deprecated alias ``eps``), checked positive."""
    if eps is not None:
        if epsilon is not None:
            raise TypeError("give epsilon only (eps is its deprecated alias)")
        warnings.warn("eps is deprecated; use epsilon", DeprecationWarning, stacklevel=3)
        epsilon = eps
    if epsilon is None:
        raise TypeError("missing required keyword argument: epsilon")
    return check_positive(epsilon, "epsilon")


def _sq_cost(Xb, Y, y2, xp):
    """Squared Euclidean cost block ``|x - y|^2`` (POT's ``ot.dist`` default)."""
    x2 = xp.sum(Xb * Xb, axis=1)
    C = x2[:, None] + y2[None, :] - 2.0 * (Xb @ Y.T)
    return xp.maximum(C, xp.zeros_like(C))


def _rows(A, name):
    if A.shape[0] == 0:
        raise ValueError(f"{name} must hold at least one point, got shape {tuple(A.shape)}")
    return A


def _weights(w, k, xp, dtype, name):
    if w is None:
        return xp.full((k,), 1.0 / k, dtype=dtype)
    w = as_float_array(w, xp, name, ndim=1, dtype=dtype)
    if w.shape[0] != k or not bool(xp.all(xp.isfinite(w) & (w > 0))):
        raise ValueError(f"{name} must hold {k} positive finite weights")
    return w / xp.sum(w)


def _ot_inputs(Y, b, xp):
    Y = promote_float16(_rows(as_float_array(Y, xp, "Y", ndim=2), "Y"), xp)
    check_finite(Y, xp, "Y")
    return Y, _weights(b, Y.shape[0], xp, Y.dtype, "b")


def _source_inputs(X, a, d, xp, dtype):
    X = _rows(as_float_array(X, xp, "X", ndim=2, dtype=dtype), "X")
    check_finite(X, xp, "X")
    if X.shape[1] != d:
        raise ValueError(f"X must have {d} columns like Y, got shape {tuple(X.shape)}")
    return X, _weights(a, X.shape[0], xp, dtype, "a")


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
    X : array, shape (n, d)
        Source points.
    Y : array, shape (m, d)
        Target points.
    epsilon : float
        Entropic regularisation (``eps`` is a deprecated alias).
    a, b : arrays, optional
        Source and target weights (uniform by default; normalised).
    block_size : int, optional

    Returns
    -------
    value : float
    grad : array, shape (m,)
        In the namespace of the inputs (numpy, cupy, array_api_strict, ...).

    Raises
    ------
    ValueError
        ``epsilon`` not finite or ``<= 0``; ``X`` or ``Y`` not 2-D, non-finite, or with
        different numbers of columns; weights ``a`` or ``b`` of the wrong length, not
        positive or not finite; ``v`` whose length is not ``m``; ``block_size = 0``.
    TypeError
        Complex or non-numeric ``X``, ``Y``, ``a`` or ``b``, or non-real ``epsilon``.

    Notes
    -----
    ``v`` and ``block_size`` are not validated beyond what the array operations enforce;
    a finite ``v`` and a positive integer ``block_size`` are assumed. Computations run in
    the inputs' namespace and dtype.

    References
    ----------
    .. [1] A. Genevay, M. Cuturi, G. Peyre, F. Bach, "Stochastic optimization for
       large-scale optimal transport", NeurIPS 2016.
    .. [2] E. Gladin, A. Kroshnin, J. Zhu, P. Dvurechensky, "Improved stochastic
       optimization of LogSumExp", arXiv:2509.24894, 2025.

    Examples
    --------
    >>> import numpy as np
    >>> from solvers.lse.applications import semidual_ot_objective
    >>> X = Y = np.zeros((3, 1))
    >>> value, grad = semidual_ot_objective(np.zeros(3), X, Y, epsilon=0.1)
    >>> round(value, 12), float(np.abs(grad).max())
    (0.0, 0.0)
    """
    eps = _epsilon(epsilon, eps)
    xp = array_namespace(v, X, Y, a, b)
    Y, b = _ot_inputs(Y, b, xp)
    X, a = _source_inputs(X, a, Y.shape[1], xp, Y.dtype)
    v = as_float_array(v, xp, "v", ndim=1, dtype=Y.dtype)
    block_size = check_int(block_size, "block_size", minimum=1)
    value, grad = _objective(v, X, Y, a, b, eps, block_size, xp)
    return to_float(value), grad


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
    X : array (n, d) or callable
        Source sample, or ``sampler(rng, size) -> (size, d)`` (``"sgd"`` only).
    Y : array, shape (m, d)
        Target points.
    epsilon : float
        Entropic regularisation (in units of the cost; ``eps`` is a deprecated alias).
    a, b : arrays, optional
        Source / target weights (uniform by default).
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
        (``success=False``, status 99).
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
        Bad shapes, weights or parameters; a sampler with a method other than ``"sgd"``.

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
    >>> from solvers.lse.applications import semidual_ot
    >>> rng = np.random.default_rng(0)
    >>> X, Y = rng.normal(size=(300, 2)), rng.normal(size=(40, 2)) + 1.0
    >>> exact = semidual_ot(X, Y, epsilon=0.5, method="lbfgs")
    >>> fast = semidual_ot(X, Y, epsilon=0.5, rng=0)
    >>> bool(exact.fun - fast.fun < 1e-3 * exact.fun)   # semi-dual values
    True
    >>> bool(np.std(fast.x - exact.x) < 0.1 * np.std(exact.x))   # potentials, up to a constant
    True

    References
    ----------
    .. [1] A. Genevay, M. Cuturi, G. Peyre, F. Bach, "Stochastic optimization for
       large-scale optimal transport", NeurIPS 2016.
    .. [2] E. Gladin, A. Kroshnin, J. Zhu, P. Dvurechensky, "Improved stochastic
       optimization of LogSumExp", arXiv:2509.24894, 2025.
    """
    eps = _epsilon(epsilon, eps)
    method = check_choice(method, ("safe-kl", "sgd", "lbfgs"), "method")
    sampler = callable(X)
    if sampler and method != "sgd":
        raise ValueError("a sampler source needs method='sgd' (safe-kl keeps one shift per "
                         "source point; lbfgs needs the whole sample)")
    batch_size = check_int(batch_size, "batch_size", minimum=1)
    target_batch_size = check_int(target_batch_size, "target_batch_size", minimum=1)
    block_size = check_int(block_size, "block_size", minimum=1)
    P = _setup(X, Y, a, b, x0, eps, block_size, backend, sampler)
    P.method, P.callback = method, callback
    if method == "lbfgs":
        iters = 1000 if maxiter is None else check_int(maxiter, "maxiter", minimum=1)
        return _lbfgs(P, iters)
    P.lr, P.shift_lr = check_positive(lr, "lr"), check_positive(shift_lr, "shift_lr")
    P.rho = _check_rho(rho) if method == "safe-kl" else None
    P.batch_size, P.target_batch_size = batch_size, target_batch_size
    P.gen = check_rng(rng)
    P.maxiter = _budget(P, method, epochs, maxiter, sampler)
    _check_average(average)
    P.avg_start = None if average is None else int(average * P.maxiter)
    with Progress(P.maxiter, desc=f"semidual_ot[{method}]", enabled=progress) as bar:
        return _stochastic(P, bar)


class _Problem:
    """Validated arrays (computing namespace) and the options of one run."""


def _setup(X, Y, a, b, x0, eps, block_size, backend, sampler):
    P = _Problem()
    xp_in = array_namespace(*((Y, b, x0) if sampler else (X, Y, a, b, x0)))
    P.be = be = resolve_backend(backend, xp_in)
    P.xp = xp = be.xp
    Y, b = _ot_inputs(be.to_device(Y), be.to_device(b), xp)
    P.Y, P.b, P.eps, P.block_size, P.sampler = Y, b, eps, block_size, sampler
    P.m, P.d = Y.shape
    if sampler:
        P.X, P.a, P.n = X, None, None
    else:
        P.X, P.a = _source_inputs(be.to_device(X), be.to_device(a), P.d, xp, Y.dtype)
        P.n = P.X.shape[0]
    if x0 is None:
        P.v0 = xp.zeros((P.m,), dtype=Y.dtype)
    else:
        P.v0 = xp.asarray(as_float_array(be.to_device(x0), xp, "x0", ndim=1, dtype=Y.dtype),
                          copy=True)
        if P.v0.shape[0] != P.m:
            raise ValueError(f"x0 must have shape ({P.m},), got {tuple(P.v0.shape)}")
        check_finite(P.v0, xp, "x0")
    P.y2 = xp.sum(Y * Y, axis=1)
    P.log_b = xp.log(b)
    # index samplers on the host (explicit copies of the two weight vectors, once)
    P.cdf_b = np.cumsum(to_host(b).astype(np.float64))
    P.cdf_a = None if sampler else np.cumsum(to_host(P.a).astype(np.float64))
    return P


def _budget(P, method, epochs, maxiter, sampler):
    if maxiter is not None:
        return check_int(maxiter, "maxiter", minimum=1)
    if method == "safe-kl":
        per_step = P.batch_size * P.target_batch_size
        n_ep = 50 if epochs is None else check_positive(epochs, "epochs")
        return max(1, int(round(n_ep * P.n * P.m / per_step)))
    size = 1000 if sampler else P.n
    n_ep = 20 if epochs is None else check_positive(epochs, "epochs")
    return max(1, int(round(n_ep * size / P.batch_size)))


def _draw(P, cdf, size):
    """Inverse-CDF indices on the host (O(size log n)), and their device copy."""
    idx = np.minimum(np.searchsorted(cdf, P.gen.random(size), side="right"), len(cdf) - 1)
    return idx, P.xp.asarray(idx)


def _dup_weights(idx, xp, dtype):
    """``1 / multiplicity`` of each drawn index: a scatter-add then averages duplicates.

    (A batch-size square comparison on the host: cheaper than sorting for small batches.)
    """
    counts = np.count_nonzero(idx[:, None] == idx[None, :], axis=1)
    return xp.asarray(1.0 / counts, dtype=dtype)


def _sgd_step(P, v):
    xp = P.xp
    if P.sampler:
        Xb = xp.asarray(P.X(P.gen, P.batch_size), dtype=P.Y.dtype)
    else:
        Xb = xp.take(P.X, _draw(P, P.cdf_a, P.batch_size)[1], axis=0)
    _, plan = _ctransform(v, Xb, P.Y, P.y2, P.log_b, P.eps, xp)
    return v + P.lr * P.eps * (1.0 - xp.mean(plan, axis=0) / P.b)


def _safe_kl_step(P, v, s, seen, scatter):
    """Doubly stochastic Safe-KL step on (v, s); ``seen`` is the host mask of visited i."""
    xp, dtype = P.xp, P.Y.dtype
    I, Id = _draw(P, P.cdf_a, P.batch_size)
    J, Jd = _draw(P, P.cdf_b, P.target_batch_size)
    YJ = xp.take(P.Y, Jd, axis=0)
    phi = (xp.take(v, Jd)[None, :]
           - _sq_cost(xp.take(P.X, Id, axis=0), YJ, xp.take(P.y2, Jd), xp)) / P.eps
    fresh_host = ~seen[I]
    s_old = xp.take(s, Id)
    s_I = s_old
    if fresh_host.any():  # first visit: start at the batch estimate of the shift
        seen[I] = True
        init = logsumexp(phi, axis=1) - math.log(len(J)) + math.log1p(-P.rho)
        s_I = xp.where(xp.asarray(fresh_host), init, s_old)
    w, _ = KERNELS.get("terms", P.be, generic=_terms_xp)(phi, s_I[:, None], P.rho)
    # each sampled coordinate moves by its own batch mean (duplicates averaged): the
    # expected step of v_j is lr eps P(j sampled) (E_i w_ij - 1), a diagonally rescaled
    # gradient step with the same fixed point
    dv = -P.lr * P.eps * (xp.mean(w, axis=0) - 1.0) * _dup_weights(J, xp, dtype)
    ds = (s_I - s_old - P.shift_lr * (1.0 - xp.mean(w, axis=1))) * _dup_weights(I, xp, dtype)
    return scatter(v, Jd, dv), scatter(s, Id, ds)


def _scatter_xp(v, idx, vals):
    """Generic twin of ``scatter_add``: a one-hot product, ``O(len(v) len(idx))``."""
    xp = array_namespace(v, vals)
    hit = idx[:, None] == xp.arange(v.shape[0], dtype=idx.dtype)[None, :]
    return v + xp.sum(xp.where(hit, vals[:, None], xp.zeros_like(vals)[:, None]), axis=0)


def _stochastic(P, bar):
    xp = P.xp
    v, s = P.v0, None
    seen = None
    if P.method == "safe-kl":
        s = xp.zeros((P.n,), dtype=P.Y.dtype)
        seen = np.zeros(P.n, dtype=bool)
    scatter = KERNELS.get("scatter_add", P.be, generic=_scatter_xp)
    v_avg, n_avg, good = None, 0, (xp.asarray(v, copy=True), None, 0)
    status, message, nit = Status.MAXITER, None, 0
    for k in range(P.maxiter):
        with np.errstate(over="ignore", invalid="ignore"):  # checked below, explicitly
            if P.method == "sgd":
                v = _sgd_step(P, v)
            else:
                v, s = _safe_kl_step(P, v, s, seen, scatter)
        if P.avg_start is not None and k >= P.avg_start:
            n_avg += 1
            v_avg = xp.asarray(v, copy=True) if v_avg is None else v_avg + (v - v_avg) / n_avg
        nit = k + 1
        if nit % CHECK_EVERY == 0 or nit == P.maxiter:
            if not bool(xp.all(xp.isfinite(v))):
                v, v_avg, nit = good
                status = Status.NONFINITE
                message = (f"non-finite potentials after a step in ({nit}, {k + 1}]; the "
                           f"returned x is the iterate after step {nit}")
                break
            good = (xp.asarray(v, copy=True), v_avg, nit)
        bar.update(1)
        ret = v if v_avg is None else v_avg
        if P.callback is not None and call_callback(
                P.callback, x=P.be.to_input(xp.asarray(ret, copy=True)), nit=nit):
            status = Status.CALLBACK
            break
    per = P.batch_size * (P.m if P.method == "sgd" else P.target_batch_size)
    return _finish(P, v if v_avg is None else v_avg, nit, nit * per, status, message,
                   x_last=P.be.to_input(v))


def _lbfgs(P, iters):
    """L-BFGS (SciPy, on the host) on the exact semi-dual evaluated in the namespace."""
    xp, counter = P.xp, [0]

    def neg(vv):
        counter[0] += 1
        val, grad = _objective(xp.asarray(vv, dtype=P.Y.dtype), P.X, P.Y, P.a, P.b, P.eps,
                               P.block_size, xp, y2=P.y2, log_b=P.log_b)
        return -to_float(val), -np.asarray(to_host(grad), dtype=np.float64)

    cb = None
    if P.callback is not None:
        def cb(intermediate_result):
            x = P.be.to_input(xp.asarray(intermediate_result.x, dtype=P.Y.dtype))
            if call_callback(P.callback, x=x, nit=getattr(intermediate_result, "nit", None)):
                raise StopIteration

    res = scipy_minimize(neg, np.asarray(to_host(P.v0), dtype=np.float64), jac=True,
                         method="L-BFGS-B", callback=cb,
                         options={"maxiter": iters, "gtol": 1e-12, "ftol": 1e-15})
    if res.status == 99:
        status, success = Status.CALLBACK, False
    else:
        status = Status.CONVERGED if res.success else Status.MAXITER
        success = bool(res.success)
    v = xp.asarray(res.x, dtype=P.Y.dtype)
    return _finish(P, v, res.nit, counter[0] * P.n * P.m, status, str(res.message),
                   success=success)


def _finish(P, v, nit, nfev, status, message, success=None, **extra):
    xp, be = P.xp, P.be
    if status == Status.MAXITER and success is None:
        success = True  # a fixed-budget stochastic run that spent its budget
    fields = dict(x=be.to_input(v), nit=nit, nfev=nfev, method=P.method, **extra)
    if not P.sampler:
        u = []
        value, _ = _objective(v, P.X, P.Y, P.a, P.b, P.eps, P.block_size, xp, y2=P.y2,
                              log_b=P.log_b, u_blocks=u)
        fields["fun"] = to_float(value)
        fields["u"] = be.to_input(xp.concat(u) if len(u) > 1 else u[0])
    return make_result(status, success=success, message=message, **fields)
