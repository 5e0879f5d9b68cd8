r"""Safe-KL stochastic LogSumExp (Gladin, Kroshnin, Zhu & Dvurechensky, 2025).

For a probability measure :math:`\mu` (a finite, possibly weighted, set of terms, or a
sampler) the log-mean-exp has the variational form

.. math:: F(\varphi) = \log \mathbb{E}_\mu e^{\varphi(X)}
          = \min_s \big\{ s - 1 + \mathbb{E}_\mu e^{\varphi(X) - s} \big\}.

The Safe-KL surrogate replaces :math:`e^u` by the softplus
:math:`h_\rho(u) = \rho^{-1}\log(1 + \rho e^u) \le e^u`, :math:`0 < \rho < 1`:

.. math:: F_\rho(\varphi) = \min_s \big\{ s - 1 + \mathbb{E}_\mu h_\rho(\varphi(X) - s) \big\}.

It is the convex conjugate of the f-divergence with generator
:math:`f_\rho(t) = t\log t + (\rho^{-1} - t)\log(1 - \rho t) + 1` on :math:`[0, 1/\rho]`:
density ratios are capped at :math:`1/\rho`, so no weight can overflow. It is convex in
:math:`\varphi`, :math:`F_\rho \le F`, and with :math:`\kappa = \mathbb{E}e^{2\varphi} /
(\mathbb{E}e^{\varphi})^2` and :math:`\rho\kappa < 1`

.. math:: F + \rho/2 + \log(1 - \rho\kappa) \le F_\rho \le F.

One sample gives an *unbiased* gradient of the joint objective in :math:`(\theta, s)`:
with :math:`w = 1/(\rho + e^{s - \varphi_\theta(x)}) \in (0, 1/\rho)`,
:math:`\nabla_\theta = w\,\nabla\varphi_\theta(x)` and :math:`\partial_s = 1 - w`.
"""
import math
import numbers

import numpy as np

from .._lib.namespace import array_namespace, is_numpy_namespace
from .._lib.backend import resolve_backend
from .._lib.rng import Draws
from .._lib.results import Progress
from .._lib.validation import (as_float_array, check_axis, check_callback, check_choice,
                               check_finite, check_int, check_positive, promote_float16)
from . import _safe_kl_solver as _solver
# the scalar building blocks live in the solver module (which cannot import this one);
# _softplus is re-exported with them for importers of this module
from ._safe_kl_solver import _check_rho, _softplus, _terms_xp  # noqa: F401
from ._minibatch import as_rows, check_rows, is_partitioned, make_source
from ._safe_kl_kernels import KERNELS
from .logsumexp import logsumexp, _prepare, _squeeze, _finish

__all__ = ["safe_logsumexp", "minimize_logsumexp", "safe_kl_terms"]


def safe_kl_terms(values, s, rho, *, backend="auto"):
    r"""Per-term Safe-KL weights and surrogate values at shift ``s``.

    .. math:: w_i = \frac{1}{\rho + e^{s - \varphi_i}} \in (0, 1/\rho), \qquad
              h_i = \rho^{-1}\log\big(1 + \rho e^{\varphi_i - s}\big).

    ``w`` is the derivative of ``h`` in ``varphi``; neither overflows for any finite (or
    infinite) ``values``. ``-inf`` values get ``w = h = 0``.

    Parameters
    ----------
    values : array
        The exponents :math:`\varphi_i` (any shape).
    s : float or array broadcastable to ``values``
        The shift.
    rho : float
        Cap parameter in (0, 1).
    backend : {"auto", "numpy", "numba", "cupy"}, optional
        ``"auto"`` follows ``values`` (a fused CuPy kernel for cupy arrays; numpy runs the
        generic code, there is nothing for Numba to fuse in two elementwise maps).

    Returns
    -------
    w, h : arrays
        Same shape and dtype as ``values``, in its namespace.

    Raises
    ------
    ValueError
        ``rho <= 0`` (from ``math.log``), or an unknown or impossible ``backend``.
    TypeError
        ``rho`` that is not a real number.

    Notes
    -----
    A low-level helper: ``rho < 1`` and a real floating ``values`` array are assumed, not
    checked (``rho >= 1`` is accepted but outside the Safe-KL theory). NaN in ``values`` or
    ``s`` propagates to ``w`` and ``h``.

    References
    ----------
    .. [1] E. Gladin, A. Kroshnin, J. Zhu, P. Dvurechensky, "Improved stochastic
       optimization of LogSumExp", arXiv:2509.24894, 2025.

    Examples
    --------
    >>> import numpy as np
    >>> from solvers.lse.safe_kl import safe_kl_terms
    >>> w, h = safe_kl_terms(np.array([0.0, 1e4]), 0.0, 0.1)
    >>> w.round(6).tolist(), bool(np.isfinite(h).all())
    ([0.909091, 10.0], True)
    """
    be = resolve_backend(backend, array_namespace(values))
    values = be.to_device(values)
    kernel = KERNELS.get("terms", be, generic=_terms_xp)
    w, h = kernel(values, s, rho)
    return be.to_input(w), be.to_input(h)


# --- deterministic surrogate over finite terms -------------------------------------------

def _row_means(x, mu, xp):
    if mu is None:
        return xp.mean(x, axis=1)
    return xp.sum(mu * x, axis=1)


def _solve_rows_generic(A, mu, rho, tol, maxiter):
    """Shift ``s`` with ``E_mu w = 1`` per row of finite-or--inf ``A`` (R, n); value F_rho.

    Safeguarded Newton on ``G(s) = log E w(s)`` (decreasing, root unique) inside a bracket
    ``[lo, hi]``: ``hi = F + log(1 - rho)`` (Jensen: ``G(hi) <= 0``), ``lo`` found by
    doubling the distance until ``G(lo) >= 0``. Steps leaving the bracket are bisections.
    """
    xp = array_namespace(A)
    # the generic twin stays generic: on numpy it must not reach (or import) Numba
    F = logsumexp(A, axis=1, b=mu, backend="numpy" if is_numpy_namespace(xp) else "auto")
    if mu is None:
        F = F - math.log(A.shape[1])
    F = xp.asarray(F, dtype=A.dtype)
    log1m = math.log1p(-rho)

    def stats(s):
        with np.errstate(over="ignore"):
            w = 1.0 / (rho + xp.exp(xp.reshape(s, (-1, 1)) - A))
        ew = _row_means(w, mu, xp)
        ev = _row_means(w * (1.0 - rho * w), mu, xp)
        return ew, ev

    hi = F + log1m
    ew_hi, _ = stats(hi)
    gap = xp.ones_like(F)
    lo = hi - gap
    for _ in range(64):
        ew_lo, _ = stats(lo)
        short = ew_lo < 1.0
        if not bool(xp.any(short)):
            break
        gap = xp.where(short, 2.0 * gap, gap)
        lo = xp.where(short, hi - gap, lo)
    s = hi
    done = ew_hi >= 1.0  # rounding put the root at hi already
    for _ in range(maxiter):
        ew, ev = stats(s)
        with np.errstate(divide="ignore", invalid="ignore"):
            g = xp.log(ew)
            lo = xp.where(g > 0, s, lo)
            hi = xp.where(g <= 0, s, hi)
            newton = s + g * ew / ev
        inside = (newton > lo) & (newton < hi) & xp.isfinite(newton)
        s_new = xp.where(inside, newton, 0.5 * (lo + hi))
        s_new = xp.where(done, s, s_new)
        step = xp.abs(s_new - s)
        s = s_new
        done = done | (step <= tol * (1.0 + xp.abs(s))) | (hi - lo <= tol * (1.0 + xp.abs(s)))
        if bool(xp.all(done)):
            break
    _, h = _terms_xp(A, xp.reshape(s, (-1, 1)), rho)
    value = s - 1.0 + _row_means(h, mu, xp)
    return s, value


def safe_logsumexp(a, rho, axis=None, b=None, keepdims=False, return_shift=False, *,
                   tol=None, maxiter=100, backend="auto"):
    r"""The Safe-KL surrogate of ``log(sum(b * exp(a)))``: a capped-weight log-sum-exp.

    With :math:`B = \sum_i b_i` and :math:`\mu_i = b_i / B`, the value is

    .. math:: \log B + \min_s \Big\{ s - 1 + \sum_i \mu_i\,
              \rho^{-1}\log\big(1 + \rho e^{a_i - s}\big) \Big\},

    i.e. :math:`\log B + F_\rho` where :math:`F_\rho \le F = \log \sum_i \mu_i e^{a_i}` is
    the Safe-KL surrogate of the log-mean-exp. The 1-D convex problem in ``s`` is solved by
    a safeguarded Newton method (bracket from Jensen's inequality, bisection fallback).
    As ``rho -> 0`` the value tends to :func:`solvers.logsumexp`.

    Parameters
    ----------
    a : array_like
        Real input (any Array API array).
    rho : float
        Cap parameter in (0, 1): weights :math:`\mu_i w_i` are at most :math:`\mu_i/\rho`.
        The bias is :math:`O(\rho)`, see Notes.
    axis : None, int or tuple of ints, optional
        Axes to reduce; ``None`` reduces all.
    b : array_like, optional
        Non-negative weights broadcastable to ``a``; ``b == 0`` drops a term.
    keepdims : bool, optional
        Keep the reduced axes with length one.
    return_shift : bool, optional
        Also return the optimal shift, in the same (log-sum) units as the value.
    tol : float, optional
        Relative size of the last Newton step at which the solve stops (default: the square
        root of the dtype's machine epsilon; Newton converges quadratically, so the shift is
        then accurate to about ``tol**2``).
    maxiter : int, optional
        Newton iterations per slice.
    backend : {"auto", "numpy", "numba", "cupy"}, optional
        ``"auto"`` runs a Numba kernel (one Newton solve per slice) on numpy input.

    Returns
    -------
    res : array
        The surrogate value; float32 input gives float32 output.
    shift : array
        Only with ``return_shift``: :math:`s^* + \log B`. The capped Gibbs weights are then
        :math:`p_i = b_i / (\rho B + e^{\mathrm{shift} - a_i})`; they sum to one and
        :math:`p_i \le \mu_i/\rho`.

    Raises
    ------
    TypeError
        A ``tol`` that is not a real number, or an ``axis`` that is not None or ints.
    ValueError
        ``rho`` outside (0, 1), negative weights, or ``tol`` negative or NaN.

    Notes
    -----
    Bias bound: with :math:`\kappa = \mathbb{E}_\mu e^{2a} / (\mathbb{E}_\mu e^a)^2` and
    :math:`\rho\kappa < 1`,
    :math:`\operatorname{LSE} + \rho/2 + \log(1 - \rho\kappa) \le \text{res} \le
    \operatorname{LSE}`. ``+inf`` in a slice gives ``+inf``, NaN gives NaN and an all
    ``-inf`` slice ``-inf``, as for :func:`solvers.logsumexp`. Unlike the exact
    log-sum-exp, the surrogate depends on the reference measure: a ``-inf`` term keeps its
    share :math:`\mu_i` of it (and so lowers the value slightly), a ``b == 0`` term does
    not. No exponential of a large
    positive number is ever formed, so ``a`` of order 1e4 (or 1e300) is fine; in float32
    the result is accurate to about ``eps32 * max|a|`` absolutely (the rounding of the
    input itself).

    Examples
    --------
    >>> import numpy as np
    >>> from solvers import safe_logsumexp, logsumexp
    >>> a = np.array([0.0, 1.0, 2.0, 1e4])
    >>> gap = float(logsumexp(a)) - float(safe_logsumexp(a, 1e-6))  # O(rho): 2e-06 here
    >>> 0.0 <= gap < 1e-5
    True
    >>> float(safe_logsumexp(np.zeros(4), 0.1)) <= float(logsumexp(np.zeros(4)))
    True

    References
    ----------
    .. [1] E. Gladin, A. Kroshnin, J. Zhu, P. Dvurechensky, "Improved stochastic
       optimization of LogSumExp", arXiv:2509.24894, 2025.
    """
    rho = _check_rho(rho)
    maxiter = check_int(maxiter, "maxiter", minimum=1)
    xp = array_namespace(a, b)
    be = resolve_backend(backend, xp)
    a, b = be.to_device(a), be.to_device(b)
    xpc = be.xp
    a, b = _prepare(a, b, xpc)
    axes = check_axis(axis, a.ndim)
    if b is not None and bool(xpc.any(b < 0)):
        raise ValueError("b must be non-negative (it defines a measure)")
    if tol is None:
        tol = math.sqrt(float(xpc.finfo(a.dtype).eps))
    tol = check_positive(tol, "tol", strict=False)
    keep_shape = tuple(1 if i in axes else k for i, k in enumerate(a.shape))
    rest = [i for i in range(a.ndim) if i not in axes]
    n = 1
    for ax in axes:
        n *= a.shape[ax]
    R = 1
    for ax in rest:
        R *= a.shape[ax]
    if n == 0:
        out = xpc.full(keep_shape, -xpc.inf, dtype=a.dtype)
        shift = xpc.full(keep_shape, -xpc.inf, dtype=a.dtype)
    else:
        perm = tuple(rest) + tuple(axes)
        A = xpc.reshape(xpc.permute_dims(a, perm), (R, n))
        ninf = xpc.asarray(-xpc.inf, dtype=a.dtype)
        if b is not None:
            Bw = xpc.reshape(xpc.permute_dims(b, perm), (R, n))
            A = xpc.where(Bw == 0, ninf, A)
            total = xpc.sum(Bw, axis=1)
        else:
            Bw = None
            total = xpc.full((R,), float(n), dtype=a.dtype)
        has_nan = xpc.any(xpc.isnan(A), axis=1)
        has_inf = xpc.any(A == xpc.inf, axis=1) | (total == xpc.inf)  # an infinite weight
        empty = xpc.all(A == -xpc.inf, axis=1) | (total == 0)
        bad = has_nan | has_inf | empty
        zero = xpc.zeros_like(A)
        A = xpc.where(xpc.reshape(bad, (-1, 1)), zero, A)
        A = xpc.where(xpc.isnan(A), ninf, A)  # unreachable after the row mask; keeps types
        safe_total = xpc.where(bad, xpc.ones_like(total), total)
        mu = None if Bw is None else Bw / xpc.reshape(safe_total, (-1, 1))
        if mu is not None:
            mu = xpc.where(xpc.reshape(bad, (-1, 1)), xpc.full_like(mu, 1.0 / n), mu)
        solve = KERNELS.get("solve_rows", be, generic=_solve_rows_generic)
        s, val = solve(A, mu, rho, tol, maxiter)
        s, val = xpc.astype(s, A.dtype, copy=False), xpc.astype(val, A.dtype, copy=False)
        log_total = xpc.log(safe_total)
        val = val + log_total
        s = s + log_total
        special = xpc.where(has_nan, xpc.asarray(xpc.nan, dtype=a.dtype),
                            xpc.where(has_inf, xpc.asarray(xpc.inf, dtype=a.dtype), ninf))
        val = xpc.where(bad, special, val)
        s = xpc.where(bad, special, s)
        out = xpc.reshape(val, keep_shape)
        shift = xpc.reshape(s, keep_shape)
    out = _finish(be.to_input(_squeeze(out, axes, keepdims, xpc)), xp)
    if return_shift:
        return out, _finish(be.to_input(_squeeze(shift, axes, keepdims, xpc)), xp)
    return out


# --- stochastic minimisation ---------------------------------------------------------------

def minimize_logsumexp(phi, x0, data, *, rho=0.01, batch_size=64, epochs=None, maxiter=None,
                       estimator="safe-kl", optimizer="adam", lr=0.01, betas=(0.9, 0.999),
                       s0=None, average=0.5, epoch_size=None, rng=None, callback=None,
                       progress=False, diagnose=True, backend="auto"):
    r"""Minimize :math:`\theta \mapsto \log \mathbb{E}_\mu e^{\varphi_\theta(X)}` with minibatches.

    Runs SGD or Adam jointly on :math:`(\theta, s)` for the Safe-KL objective

    .. math:: \Phi_\rho(\theta, s) = s - 1 + \mathbb{E}_\mu\,
              \rho^{-1}\log\big(1 + \rho e^{\varphi_\theta(X) - s}\big),

    whose minibatch gradient is unbiased:
    :math:`\nabla_\theta = \overline{w\,\nabla\varphi}`,
    :math:`\partial_s = 1 - \overline{w}`, with capped weights
    :math:`w = 1/(\rho + e^{s - \varphi}) < 1/\rho`. :math:`\min_s \Phi_\rho = F_\rho`, the
    surrogate of :func:`safe_logsumexp`, within :math:`O(\rho)` of the exact log-mean-exp.
    ``estimator="naive"`` instead follows the gradient of the minibatch log-mean-exp (softmax
    weights over the batch), which is *biased*; it is the usual baseline.

    Parameters
    ----------
    phi : callable
        ``phi(x, batch) -> (values, jac)`` with shapes ``(B,)`` and ``(B, p)``: the exponents
        of the batch's terms and their gradients in ``x``.
    x0 : array, shape (p,)
        Start (finite; float32 stays float32, float16 is promoted to float32).
    data : array, list, tuple of arrays, dask collection, or callable
        Terms to draw minibatches from (rows of an array or list, or rows of several arrays
        with a common first axis, passed to ``phi`` as a tuple), drawn without replacement
        and reshuffled every epoch; or a dask array / dataframe (or a tuple of them with
        the same partitions), read partition by partition so that the data never has to
        fit in memory (partition order shuffled per epoch from ``rng``, rows shuffled
        within each partition; ``phi`` receives numpy arrays -- a dataframe partition
        through ``to_numpy()``; see Notes); or ``sampler(rng, batch_size) -> batch`` for
        an infinite population (``rng`` is a ``numpy.random.Generator``).
    rho : float or callable, optional
        Cap parameter in (0, 1), or a schedule ``rho(k)`` of the iteration ``k``.
    batch_size : int, optional
    epochs : float, optional
        Passes over ``data`` (``n // batch_size`` steps each). With a sampler, an epoch is
        ``epoch_size`` terms.
    maxiter : int, optional
        Number of steps (overrides ``epochs``).
    estimator : {"safe-kl", "naive"}, optional
        The unbiased Safe-KL gradient, or the biased minibatch softmax baseline.
    optimizer : {"adam", "sgd"}, optional
    lr : float or callable, optional
        Step size or schedule ``lr(k)``.
    betas : (float, float), optional
        Adam's moment decay rates.
    s0 : float, optional
        Initial shift; default: ``log(1 - rho)`` plus the log-mean-exp of the first batch.
    average : float or None, optional
        Return the average of the iterates from step ``average * maxiter`` on (suffix
        averaging); ``None`` returns the last iterate.
    epoch_size : int, optional
        Terms per epoch for a sampler (used by ``epochs`` and the history).
    rng : None, int or numpy.random.Generator, optional
    callback : callable, optional
        ``callback(intermediate_result)`` after every step, with fields ``x`` (the
        returned iterate so far: the running average once it started), ``x_last``, ``s``,
        ``nit``, ``nfev``, ``epoch`` (terms drawn / ``n``; for a sampler, / ``epoch_size``
        or, without it, / ``batch_size``) and ``fun`` (the minibatch estimate). Raise
        ``StopIteration`` to stop.
    progress : bool, optional
        Show a progress bar on stderr.
    diagnose : bool, optional
        After the run, evaluate ``phi`` once on every term at the returned ``x`` (for a
        sampler: on ``epoch_size`` fresh draws, skipped without ``epoch_size``) and report
        ``diagnostics`` (see Returns); a Safe-KL run whose surrogate is unreliable there
        ends with ``success=False``.
    backend : {"auto", "numpy", "numba", "cupy"}, optional
        Kernel for the per-batch weights and gradient (Numba on numpy input by default).
        With ``"cupy"``, ``x0`` and ``data`` are moved to the GPU and ``phi`` receives cupy
        arrays.

    Returns
    -------
    OptimizeResult
        ``x``, ``s`` (shift, approximately the log-mean-exp at ``x``), ``fun`` (mean of
        the minibatch estimates over the last epoch: the surrogate for Safe-KL, the biased
        minibatch log-mean-exp for ``"naive"``), ``nit``, ``nfev`` (terms evaluated
        by the steps; the diagnostic pass adds ``diagnostics["n_terms"]``), ``x_last``,
        ``history`` (dict of lists ``nit``, ``epoch``, ``fun``, ``s``, ``rho`` recorded
        about 100 times), ``diagnostics``
        (``None`` without the pass, else a dict: ``lme`` the exact log-mean-exp :math:`F`
        at ``x``, ``surrogate`` :math:`F_\rho`, ``gap`` :math:`F - F_\rho`, ``kappa``
        :math:`\mathbb{E}e^{2\varphi}/(\mathbb{E}e^\varphi)^2`, ``rho_kappa``,
        ``capped_mass`` -- the Gibbs mass of the terms whose density ratio
        :math:`e^{\varphi_i - F}` exceeds the cap :math:`1/\rho` -- and ``n_terms``),
        ``success``, ``status`` and ``message``, under the shared contract
        (:class:`solvers._lib.results.Status`): ``MAXITER`` (1) when every step ran --
        ``success=True``, unless the diagnostic pass finds the Safe-KL surrogate
        unreliable at ``x`` (:math:`\rho\kappa \ge 1`, see Notes: ``success=False`` and a
        message saying why); ``NONFINITE`` (4) when ``phi`` returned a non-finite value or
        gradient (the returned ``x`` is the last iterate checked finite); ``CALLBACK``
        (99) when the callback stopped the run. Both of these have ``success=False``.

    Raises
    ------
    ValueError
        Bad ``rho``, an empty ``x0``, ``batch_size`` larger than the data, arrays in
        ``data`` with different numbers of rows, or neither ``epochs`` nor ``maxiter`` given
        for a sampler.
    TypeError
        ``phi`` not callable or not returning a real pair ``(values, jac)``, ``callback``
        not callable, complex ``data``, or ``data`` of an unsupported type (a ragged list).

    Notes
    -----
    *Reliability.* The bias bound :math:`F + \rho/2 + \log(1 - \rho\kappa) \le F_\rho
    \le F` needs :math:`\rho\kappa < 1`. With heavy-tailed exponents (a few terms
    dominating the sum) :math:`\kappa` approaches the number of terms, the capped weights
    cannot follow, and the minimiser of the surrogate can be far from that of :math:`F`;
    the diagnostic pass detects this at the returned ``x`` and reports ``success=False``
    instead of a silent wrong answer.

    *Synchronisation.* The loop never copies to the host, except every 16 steps to check
    for non-finite values (and whatever ``callback`` / ``progress`` ask for); ``x``,
    ``s`` and the estimates stay on the device.

    *Partitioned data.* At the start of an epoch the partition order is
    ``rng.permutation(P)`` (not drawn when ``P == 1``); each partition, when read, gets its
    row order ``rng.permutation(n_j)``; batches are consecutive slices of that stream and
    an epoch's last ``n % batch_size`` rows are dropped, as in memory. So a dask collection
    with one partition gives exactly the in-memory result with the same ``rng``, and the
    result never depends on the scheduler or the number of workers. At most two
    partitions are in memory at once, and the diagnostic pass streams exact (max, sum)
    partials instead of keeping a value per term, so on partitioned data it reports
    ``lme``, ``kappa`` and ``rho_kappa`` (the reliability check) and leaves
    ``surrogate``, ``gap`` and ``capped_mass`` as None. In memory, the pass keeps one
    float per term.

    Examples
    --------
    Minimize :math:`\log \mathbb{E}\, e^{-x A + x^2/2}` with :math:`A \sim N(1, 1)`
    (that is :math:`x^2 - x`, minimal at 0.5) from 4000 samples:

    >>> import numpy as np
    >>> from solvers import minimize_logsumexp
    >>> a = np.random.default_rng(0).normal(1.0, 1.0, size=4000)
    >>> phi = lambda x, batch: (-x[0] * batch + x[0] ** 2 / 2, (x[0] - batch)[:, None])
    >>> res = minimize_logsumexp(phi, np.zeros(1), a, rho=0.01, batch_size=32, epochs=3,
    ...                          lr=0.05, rng=0)
    >>> bool(abs(res.x[0] - 0.5) < 0.05)
    True

    References
    ----------
    .. [1] E. Gladin, A. Kroshnin, J. Zhu, P. Dvurechensky, "Improved stochastic
       optimization of LogSumExp", arXiv:2509.24894, 2025.
    """
    cfg, x, s, source = _configure(
        phi, x0, data, rho=rho, batch_size=batch_size, epochs=epochs, maxiter=maxiter,
        estimator=estimator, optimizer=optimizer, lr=lr, betas=betas, s0=s0,
        average=average, epoch_size=epoch_size, rng=rng, callback=callback,
        diagnose=diagnose, backend=backend)
    with Progress(cfg.maxiter, desc=f"minimize_logsumexp[{cfg.estimator}]",
                  enabled=progress) as bar:
        return _solver.run(cfg, x, s, source, bar)


def _configure(phi, x0, data, *, rho, batch_size, epochs, maxiter, estimator, optimizer,
               lr, betas, s0, average, epoch_size, rng, callback, diagnose, backend):
    """Validate the options of :func:`minimize_logsumexp`: ``(cfg, x, s, source)``."""
    if not callable(phi):
        raise TypeError("phi must be callable: phi(x, batch) -> (values, jac)")
    cfg = _Config(phi=phi, callback=check_callback(callback))
    cfg.estimator = check_choice(estimator, ("safe-kl", "naive"), "estimator")
    cfg.optimizer = check_choice(optimizer, ("adam", "sgd"), "optimizer")
    cfg.batch_size = check_int(batch_size, "batch_size", minimum=1)
    cfg.rho = rho
    if not callable(rho):
        _check_rho(rho)
    cfg.lr = lr if callable(lr) else check_positive(lr, "lr")
    cfg.betas = _check_betas(betas)
    _check_average(average)
    cfg.diagnose = _check_diagnose(diagnose)
    data, is_tuple, xp = _check_data(data, x0)
    cfg.be = be = resolve_backend(backend, xp)
    xpc = be.xp
    x = promote_float16(as_float_array(be.to_device(x0), xpc, "x0", ndim=1), xpc)
    check_finite(x, xpc, "x0")
    if x.shape[0] == 0:
        raise ValueError("x0 must hold at least one parameter, got shape (0,)")
    draws = Draws(rng, xpc)
    if not callable(data) and not is_partitioned(data):
        data = tuple(be.to_device(d) for d in data) if is_tuple else be.to_device(data)
    source = make_source(data, be, draws, is_tuple)
    n = source.n
    if n == 0:
        raise ValueError("data must hold at least one term (row), got none")
    if n is not None and cfg.batch_size > n:
        raise ValueError(f"batch_size={cfg.batch_size} is larger than the data ({n} terms)")
    if epoch_size is not None:
        epoch_size = check_int(epoch_size, "epoch_size", minimum=1)
    cfg.maxiter = _steps(maxiter, epochs, n, epoch_size, cfg.batch_size)
    cfg.epoch_terms = n if n is not None else (epoch_size or cfg.batch_size)
    cfg.diag_size = epoch_size
    cfg.avg_start = None if average is None else int(average * cfg.maxiter)
    cfg.record_every = max(1, cfg.maxiter // 100)
    steps_per_epoch = cfg.epoch_terms // cfg.batch_size if (n or epoch_size) else None
    cfg.window = max(1, steps_per_epoch or cfg.record_every)
    s = None if s0 is None else xpc.asarray(float(s0), dtype=x.dtype)
    return cfg, x, s, source


class _Config:
    """The validated options of one run (read by :mod:`._safe_kl_solver`)."""

    def __init__(self, **kw):
        self.__dict__.update(kw)


def _check_betas(betas):
    try:
        b1, b2 = (float(b) for b in betas)
    except (TypeError, ValueError):
        raise TypeError(f"betas must be a pair of floats, got {betas!r}") from None
    if not (0 <= b1 < 1 and 0 <= b2 < 1):
        raise ValueError(f"betas must lie in [0, 1), got {betas!r}")
    return b1, b2


def _check_average(average):
    if average is not None:
        if isinstance(average, bool) or not isinstance(average, numbers.Real) \
                or not 0 <= average < 1:
            raise ValueError(f"average must be None or a fraction in [0, 1), got {average!r}")


def _check_diagnose(diagnose):
    if not isinstance(diagnose, (bool, np.bool_)):
        raise TypeError(f"diagnose must be True or False, got {diagnose!r}")
    return bool(diagnose)


def _check_data(data, x0):
    """``(data, is_tuple, xp)``: lists made arrays, shapes checked, namespace found."""
    if callable(data):
        return data, False, array_namespace(x0)
    is_tuple = isinstance(data, tuple)
    items = tuple(as_rows(d) for d in data) if is_tuple else (as_rows(data),)
    if not items:
        raise ValueError("data must not be an empty tuple")
    if is_partitioned(items):
        metas = [getattr(d, "_meta", None) for d in items]
        metas = [m for m in metas if hasattr(m, "__array_namespace__")]
        return (items if is_tuple else items[0]), is_tuple, array_namespace(x0, *metas)
    for d in items:
        if not hasattr(d, "shape"):
            raise TypeError(f"data must be an array, a tuple of arrays, a list, a dask "
                            f"collection or a sampler callable, got {type(d).__name__}")
    xp = array_namespace(x0, *items)
    for d in items:
        if xp.isdtype(d.dtype, "complex floating"):
            raise TypeError(f"data must be real, got complex dtype {d.dtype}")
    check_rows(items)
    return (items if is_tuple else items[0]), is_tuple, xp


def _steps(maxiter, epochs, n, epoch_size, batch_size):
    if maxiter is not None:
        return check_int(maxiter, "maxiter", minimum=1)
    if epochs is None:
        raise ValueError("give epochs or maxiter")
    terms = n if n is not None else epoch_size
    if terms is None:
        raise ValueError("with a sampler, give maxiter, or epochs and epoch_size")
    return max(1, int(round(check_positive(epochs, "epochs") * (terms // batch_size))))
