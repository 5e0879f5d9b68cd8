r"""Semi-dual entropic OT (Genevay et al. 2016) with a large discrete target, by Safe-KL."""
import math

import numpy as np
from scipy.optimize import minimize as scipy_minimize

from .._lib.namespace import array_namespace, is_numpy_namespace
from .._lib.results import OptimizeResult, call_callback, Progress, STOPPED_BY_CALLBACK
from .._lib.validation import (as_float_array, check_choice, check_finite, check_int,
                               check_positive)
from .logsumexp import logsumexp
from .safe_kl import safe_kl_terms, _check_rho

__all__ = ["semidual_ot", "semidual_ot_objective"]


def _sq_cost(Xb, Y, y2):
    """Squared Euclidean cost block ``|x - y|^2`` (POT's ``ot.dist`` default)."""
    x2 = np.sum(Xb * Xb, axis=1)[:, None]
    return np.maximum(x2 + y2[None, :] - 2.0 * (Xb @ Y.T), 0.0)


def _ot_inputs(Y, b, eps):
    Y = np.asarray(as_float_array(Y, np, "Y", ndim=2), dtype=np.float64)
    check_finite(Y, np, "Y")
    m = Y.shape[0]
    if b is None:
        b = np.full(m, 1.0 / m)
    else:
        b = np.asarray(as_float_array(b, np, "b", ndim=1), dtype=np.float64)
        if b.shape[0] != m or np.any(b <= 0) or not np.isfinite(b).all():
            raise ValueError(f"b must hold {m} positive finite weights")
        b = b / b.sum()
    return Y, b, check_positive(eps, "eps")


def _source_inputs(X, a, d):
    X = np.asarray(as_float_array(X, np, "X", ndim=2), dtype=np.float64)
    check_finite(X, np, "X")
    if X.shape[1] != d:
        raise ValueError(f"X must have {d} columns like Y, got shape {X.shape}")
    n = X.shape[0]
    if a is None:
        a = np.full(n, 1.0 / n)
    else:
        a = np.asarray(as_float_array(a, np, "a", ndim=1), dtype=np.float64)
        if a.shape[0] != n or np.any(a <= 0) or not np.isfinite(a).all():
            raise ValueError(f"a must hold {n} positive finite weights")
        a = a / a.sum()
    return X, a


def _ctransform(v, Xb, Y, y2, log_b, eps):
    """u(x) = -eps log sum_j b_j exp((v_j - c(x, y_j))/eps) and the conditional plan rows."""
    logits = (v[None, :] - _sq_cost(Xb, Y, y2)) / eps + log_b[None, :]
    lse = logsumexp(logits, axis=1)
    return -eps * lse, np.exp(logits - lse[:, None])


def semidual_ot_objective(v, X, Y, *, eps, a=None, b=None, block_size=1024):
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
    eps : float
        Entropic regularisation.
    a, b : arrays, optional
        Source and target weights (uniform by default; normalised).
    block_size : int, optional

    Returns
    -------
    value : float
    grad : ndarray, shape (m,)

    Raises
    ------
    ValueError
        ``eps`` not finite or ``<= 0``; ``X`` or ``Y`` not 2-D, non-finite, or with
        different numbers of columns; weights ``a`` or ``b`` of the wrong length, not
        positive or not finite; ``v`` whose length is not ``m``; ``block_size = 0``.
    TypeError
        Complex or non-numeric ``X``, ``Y``, ``a`` or ``b``, or non-real ``eps``.

    Notes
    -----
    ``v`` and ``block_size`` are not validated beyond what the array operations enforce;
    a finite ``v`` and a positive integer ``block_size`` are assumed. Computations are in
    float64 numpy.

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
    >>> value, grad = semidual_ot_objective(np.zeros(3), X, Y, eps=0.1)
    >>> round(value, 12), float(np.abs(grad).max())
    (0.0, 0.0)
    """
    Y, b, eps = _ot_inputs(Y, b, eps)
    X, a = _source_inputs(X, a, Y.shape[1])
    v = np.asarray(v, dtype=np.float64)
    y2 = np.sum(Y * Y, axis=1)
    log_b = np.log(b)
    value = float(b @ v)
    grad = b.copy()
    for r0 in range(0, X.shape[0], block_size):
        u, plan = _ctransform(v, X[r0:r0 + block_size], Y, y2, log_b, eps)
        ar = a[r0:r0 + block_size]
        value += float(ar @ u)
        grad -= ar @ plan
    return value, grad


def semidual_ot(X, Y, *, eps, a=None, b=None, method="safe-kl", rho=0.01, batch_size=32,
                target_batch_size=32, epochs=None, maxiter=None, lr=1.0, shift_lr=1.0,
                average=0.5, x0=None, rng=None, callback=None, progress=False, block_size=1024):
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
    eps : float
        Entropic regularisation (in units of the cost).
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
        ``callback(intermediate_result)`` with ``x`` (current potentials) and ``nit``;
        ``StopIteration`` stops.
    progress : bool
    block_size : int
        Row block for the exact passes.

    Returns
    -------
    OptimizeResult
        ``x`` (target potentials ``v``, defined up to an additive constant), ``u`` (the
        c-transform at the source sample, arrays only), ``fun`` (exact semi-dual value at
        ``x`` for a finite source: the entropic OT cost at the optimum), ``nit``,
        ``nfev`` (cost entries evaluated), ``success``, ``message``.

    Raises
    ------
    ValueError
        Bad shapes, weights or parameters; a sampler with a method other than ``"sgd"``.

    Notes
    -----
    The optimal plan is :math:`\pi_{ij} = a_i b_j e^{(u_i + v_j - C_{ij})/\varepsilon}`,
    the same plan as POT's ``ot.sinkhorn(a, b, M, eps)`` (whose entropy term differs by a
    constant); POT's dual potential :math:`g = \varepsilon\log v_{\mathrm{POT}}` equals
    ``x + eps * log(b)`` up to a constant. Runs on numpy arrays.

    Examples
    --------
    >>> import numpy as np
    >>> from solvers.lse.applications import semidual_ot
    >>> rng = np.random.default_rng(0)
    >>> X, Y = rng.normal(size=(300, 2)), rng.normal(size=(40, 2)) + 1.0
    >>> exact = semidual_ot(X, Y, eps=0.5, method="lbfgs")
    >>> fast = semidual_ot(X, Y, eps=0.5, rng=0)
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
    from .._lib.rng import check_rng

    method = check_choice(method, ("safe-kl", "sgd", "lbfgs"), "method")
    Y, b, eps = _ot_inputs(Y, b, eps)
    m, d = Y.shape
    sampler = callable(X)
    if sampler and method != "sgd":
        raise ValueError("a sampler source needs method='sgd' (safe-kl keeps one shift per "
                         "source point; lbfgs needs the whole sample)")
    if not sampler:
        X, a = _source_inputs(X, a, d)
        n = X.shape[0]
    batch_size = check_int(batch_size, "batch_size", minimum=1)
    target_batch_size = check_int(target_batch_size, "target_batch_size", minimum=1)
    block_size = check_int(block_size, "block_size", minimum=1)
    v = np.zeros(m) if x0 is None else np.array(as_float_array(x0, np, "x0", ndim=1),
                                                  dtype=np.float64)
    if v.shape[0] != m:
        raise ValueError(f"x0 must have shape ({m},), got {v.shape}")
    y2 = np.sum(Y * Y, axis=1)
    log_b = np.log(b)

    def finish(v, nit, nfev, success=True, status=0, message="done", **extra):
        res = OptimizeResult(x=v, nit=nit, nfev=nfev, success=success, status=status,
                             message=message, method=method, **extra)
        if not sampler:
            res.fun, _ = semidual_ot_objective(v, X, Y, eps=eps, a=a, b=b,
                                               block_size=block_size)
            res.u = np.concatenate([_ctransform(v, X[r:r + block_size], Y, y2, log_b, eps)[0]
                                    for r in range(0, n, block_size)])
        return res

    if method == "lbfgs":
        opts = {"maxiter": 1000 if maxiter is None else check_int(maxiter, "maxiter",
                                                                  minimum=1),
                "gtol": 1e-12, "ftol": 1e-15}
        counter = [0]

        def neg(vv):
            counter[0] += 1
            val, grad = semidual_ot_objective(vv, X, Y, eps=eps, a=a, b=b,
                                              block_size=block_size)
            return -val, -grad

        res = scipy_minimize(neg, v, jac=True, method="L-BFGS-B", options=opts,
                             callback=None if callback is None else
                             (lambda xk: callback(OptimizeResult(x=xk))))
        return finish(res.x, res.nit, counter[0] * n * m, bool(res.success), res.status,
                      str(res.message))

    lr = check_positive(lr, "lr")
    if method == "safe-kl":
        rho = _check_rho(rho)
    gen = check_rng(rng)
    if maxiter is None:
        if method == "safe-kl":
            pairs = n * m
            per_step = batch_size * target_batch_size
            maxiter = max(1, int(round((50 if epochs is None else epochs) * pairs / per_step)))
        else:
            size = 1000 if sampler else n
            maxiter = max(1, int(round((20 if epochs is None else epochs) * size / batch_size)))
    maxiter = check_int(maxiter, "maxiter", minimum=1)
    avg_start = None if average is None else int(average * maxiter)
    v_avg, n_avg = None, 0
    status, message = 0, "maximum number of iterations reached"
    if method == "safe-kl":
        s = np.zeros(n)
        seen = np.zeros(n, dtype=bool)
        log_rho = math.log(rho)
    cdf_b = np.cumsum(b)
    cdf_a = None if sampler else np.cumsum(a)

    def draw(cdf, size):  # inverse-CDF sampling: O(size log n), no O(n) set-up per call
        return np.minimum(np.searchsorted(cdf, gen.random(size), side="right"), len(cdf) - 1)
    k = -1
    with Progress(maxiter, desc=f"semidual_ot[{method}]", enabled=progress) as bar:
        for k in range(maxiter):
            if method == "sgd":
                if sampler:
                    Xb = np.asarray(X(gen, batch_size), dtype=np.float64)
                    ab = np.full(Xb.shape[0], 1.0 / Xb.shape[0])
                else:
                    I = draw(cdf_a, batch_size)
                    Xb, ab = X[I], np.full(batch_size, 1.0 / batch_size)
                _, plan = _ctransform(v, Xb, Y, y2, log_b, eps)
                v = v + lr * eps * (1.0 - (ab @ plan) / b)
            else:
                I = draw(cdf_a, batch_size)
                J = draw(cdf_b, target_batch_size)
                phi = (v[J][None, :] - _sq_cost(X[I], Y[J], y2[J])) / eps
                fresh = ~seen[I]
                if np.any(fresh):  # first visit: start at the batch estimate of the shift
                    init = logsumexp(phi[fresh], axis=1) - math.log(len(J)) + math.log1p(-rho)
                    s[I[fresh]] = init
                    seen[I[fresh]] = True
                w, _ = safe_kl_terms(phi, s[I][:, None], rho)
                # step each sampled coordinate by its own batch mean (duplicates averaged):
                # the expected step of v_j is lr eps P(j sampled) (E_i w_ij - 1), a
                # diagonally rescaled gradient step with the same fixed point
                uj, inv = np.unique(J, return_inverse=True)
                v[uj] -= lr * eps * (np.bincount(inv, weights=np.mean(w, axis=0) - 1.0)
                                     / np.bincount(inv))
                ui, inv = np.unique(I, return_inverse=True)
                s[ui] -= shift_lr * (np.bincount(inv, weights=1.0 - np.mean(w, axis=1))
                                     / np.bincount(inv))
            if avg_start is not None and k >= avg_start:
                n_avg += 1
                v_avg = v.copy() if v_avg is None else v_avg + (v - v_avg) / n_avg
            bar.update(1)
            if call_callback(callback, x=v if v_avg is None else v_avg, x_last=v, nit=k + 1):
                status, message = STOPPED_BY_CALLBACK
                break
    nit = k + 1
    per = batch_size * (m if method == "sgd" else target_batch_size)
    return finish(v if v_avg is None else v_avg, nit, nit * per,
                  status in (0, STOPPED_BY_CALLBACK[0]), status, message, x_last=v)
