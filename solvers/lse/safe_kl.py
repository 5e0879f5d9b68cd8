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

import numpy as np

from .._lib.backend import resolve_backend
from .._lib.docstrings import fill_doc
from .._lib.frames import unwrap_frame
from .._lib.namespace import array_namespace
from .._lib.params import (CALLBACK, COUNT, FLAG, NONNEGATIVE, POSITIVE, PROBABILITY,
                           Array, Choice, Options, Param, Real)
from .._lib.rng import Draws
from .._lib.results import Progress
from .._lib.validation import check_axis, promote_float16
from . import _safe_kl_solver as _solver
from ._minibatch import as_rows, check_rows, is_partitioned, make_source
from ._safe_kl_kernels import KERNELS
from ._safe_kl_solver import (AVERAGE, BACKEND_OPTION, BETAS, CALLBACK_OPTION, PROGRESS,
                              RHO, RNG, scheduled, surrogate_rows, terms_generic)

__all__ = ["safe_logsumexp", "minimize_logsumexp", "safe_kl_terms"]

_REFERENCES = """
References
----------
.. [1] E. Gladin, A. Kroshnin, J. Zhu, P. Dvurechensky, "Improved stochastic
   optimization of LogSumExp", arXiv:2509.24894, 2025.
"""

TERMS_OPTIONS = Options(
    "SafeKLTermsOptions",
    Param("values", Array(finite=False), doc="the exponents phi_i"),
    Param("rho", POSITIVE, doc="cap parameter (the theory needs rho < 1)"),
    BACKEND_OPTION)

SAFE_LSE_OPTIONS = Options(
    "SafeLogSumExpOptions",
    Param("a", Array(finite=False), doc="real input"),
    Param("rho", PROBABILITY, doc="cap parameter: weights are at most mu_i / rho"),
    Param("b", Array(finite=False), None, "non-negative weights broadcastable to a"),
    Param("keepdims", FLAG, False, "keep the reduced axes with length one"),
    Param("return_shift", FLAG, False, "also return the optimal shift"),
    Param("tol", NONNEGATIVE, None, "last Newton step at which a solve stops"),
    Param("maxiter", COUNT, 100, "Newton iterations per slice"),
    BACKEND_OPTION)

MINIMIZE_OPTIONS = Options(
    "MinimizeLogSumExpOptions",
    Param("phi", CALLBACK, doc="phi(x, batch) -> (values, jac)"),
    Param("x0", Array(ndim=1, empty=False), doc="start"),
    Param("rho", RHO, 0.01, "cap parameter in (0, 1) or a schedule rho(k)"),
    Param("batch_size", COUNT, 64, "terms per minibatch"),
    Param("epochs", POSITIVE, None, "passes over the data"),
    Param("maxiter", COUNT, None, "number of steps (overrides epochs)"),
    Param("estimator", Choice("safe-kl", "naive"), "safe-kl", "gradient estimator"),
    Param("optimizer", Choice("adam", "sgd"), "adam", "update rule"),
    Param("lr", scheduled(POSITIVE), 0.01, "step size or a schedule lr(k)"),
    Param("betas", BETAS, (0.9, 0.999), "Adam's moment decay rates"),
    Param("s0", Real(), None, "initial shift"),
    AVERAGE,
    Param("epoch_size", COUNT, None, "terms per epoch for a sampler"),
    RNG, CALLBACK_OPTION, PROGRESS,
    Param("diagnose", FLAG, True, "run the end-of-run reliability pass"),
    BACKEND_OPTION)


@TERMS_OPTIONS.entry
@fill_doc(references=_REFERENCES)
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
        ``rho`` not finite or ``<= 0``, or an unknown or impossible ``backend``.
    TypeError
        ``rho`` that is not a real number, or complex or non-numeric ``values``.

    Notes
    -----
    A low-level function: ``rho < 1`` is not checked (``rho >= 1`` is accepted but outside
    the Safe-KL theory). Integer and boolean ``values`` are computed as float64. NaN in
    ``values`` or ``s`` propagates to ``w`` and ``h``.

    {{references}}

    Examples
    --------
    >>> import numpy as np
    >>> from solvers.lse import safe_kl_terms
    >>> w, h = safe_kl_terms(np.array([0.0, 1e4]), 0.0, 0.1)
    >>> w.round(6).tolist(), bool(np.isfinite(h).all())
    ([0.909091, 10.0], True)
    """
    cfg = TERMS_OPTIONS.validate(rho=rho, backend=backend)
    values, _ = unwrap_frame(values, "values")
    be = resolve_backend(cfg.backend, array_namespace(values))
    (values,) = TERMS_OPTIONS.arrays(be, values=values)
    kernel = KERNELS.get("terms", be, generic=terms_generic)
    w, h = kernel(values, s, cfg.rho)
    return be.to_input(w), be.to_input(h)


# --- deterministic surrogate over finite terms -------------------------------------------

@SAFE_LSE_OPTIONS.entry
@fill_doc(references=_REFERENCES)
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

    {{references}}
    """
    cfg = SAFE_LSE_OPTIONS.validate(rho=rho, keepdims=keepdims, return_shift=return_shift,
                                    tol=tol, maxiter=maxiter, backend=backend)
    (a, _), (b, _) = unwrap_frame(a, "a"), unwrap_frame(b, "b")
    be = resolve_backend(cfg.backend, array_namespace(a, b))
    a, b = _common_dtype(*SAFE_LSE_OPTIONS.arrays(be, a=a, b=b), be.xp)
    axes = check_axis(axis, a.ndim)
    if b is not None and bool(be.xp.any(b < 0)):
        raise ValueError("b must be non-negative (it defines a measure)")
    if cfg.tol is None:
        cfg = cfg.replace(tol=math.sqrt(float(be.xp.finfo(a.dtype).eps)))
    out, shift = _reduce(a, b, axes, cfg, be)
    out = _result(out, axes, cfg.keepdims, be)
    return (out, _result(shift, axes, cfg.keepdims, be)) if cfg.return_shift else out


def _common_dtype(a, b, xp):
    """``a`` and ``b`` in one floating dtype (float16 computed as float32), broadcast to
    one shape; a 0-d ``a`` becomes 1-d."""
    a = promote_float16(a, xp)
    if b is None:
        return (xp.reshape(a, (1,)) if a.ndim == 0 else a), None
    b = promote_float16(b, xp)
    dtype = xp.result_type(a.dtype, b.dtype)
    try:
        shape = np.broadcast_shapes(tuple(a.shape), tuple(b.shape)) or (1,)
    except ValueError:
        raise ValueError(f"b with shape {tuple(b.shape)} does not broadcast against a "
                         f"with shape {tuple(a.shape)}") from None
    return tuple(xp.broadcast_to(xp.astype(x, dtype, copy=False), shape) for x in (a, b))


def _result(x, axes, keepdims, be):
    """Reduced axes dropped (unless ``keepdims``), back in the user's namespace; a 0-d
    numpy result is a numpy scalar, as from :func:`scipy.special.logsumexp`."""
    if not keepdims:
        x = be.xp.reshape(x, tuple(n for i, n in enumerate(x.shape) if i not in axes))
    x = be.to_input(x)
    return x[()] if x.ndim == 0 else x


def _reduce(a, b, axes, cfg, be):
    """``(value, shift)`` with the reduced ``axes`` kept with length one."""
    xp = be.xp
    keep_shape = tuple(1 if i in axes else k for i, k in enumerate(a.shape))
    rest = [i for i in range(a.ndim) if i not in axes]
    n, R = math.prod(a.shape[ax] for ax in axes), math.prod(a.shape[ax] for ax in rest)
    if n == 0:
        empty = xp.full(keep_shape, -xp.inf, dtype=a.dtype)
        return empty, xp.asarray(empty, copy=True)
    perm = tuple(rest) + tuple(axes)
    A = xp.reshape(xp.permute_dims(a, perm), (R, n))
    Bw = None if b is None else xp.reshape(xp.permute_dims(b, perm), (R, n))
    val, s = _surrogate_slices(A, Bw, cfg, be)
    return xp.reshape(val, keep_shape), xp.reshape(s, keep_shape)


def _surrogate_slices(A, Bw, cfg, be):
    """Value and shift (log-sum units) of each row of ``A`` (R, n) under the weights
    ``Bw`` (``None``: unit weights), special rows (NaN, +inf, empty) as log-sum-exp's."""
    xp = be.xp
    R, n = A.shape
    ninf = xp.asarray(-xp.inf, dtype=A.dtype)
    if Bw is not None:
        A = xp.where(Bw == 0, ninf, A)
        total = xp.sum(Bw, axis=1)
    else:
        total = xp.full((R,), float(n), dtype=A.dtype)
    has_nan = xp.any(xp.isnan(A), axis=1)
    has_inf = xp.any(A == xp.inf, axis=1) | (total == xp.inf)  # an infinite weight
    empty = xp.all(A == -xp.inf, axis=1) | (total == 0)
    bad = has_nan | has_inf | empty
    A = xp.where(xp.reshape(bad, (-1, 1)), xp.zeros_like(A), A)
    A = xp.where(xp.isnan(A), ninf, A)  # unreachable after the row mask; keeps types
    safe_total = xp.where(bad, xp.ones_like(total), total)
    mu = None if Bw is None else Bw / xp.reshape(safe_total, (-1, 1))
    if mu is not None:
        mu = xp.where(xp.reshape(bad, (-1, 1)), xp.full_like(mu, 1.0 / n), mu)
    s, val = surrogate_rows(A, mu, cfg.rho, be, cfg.tol, cfg.maxiter)
    log_total = xp.log(safe_total)
    special = xp.where(has_nan, xp.asarray(xp.nan, dtype=A.dtype),
                       xp.where(has_inf, xp.asarray(xp.inf, dtype=A.dtype), ninf))
    return xp.where(bad, special, val + log_total), xp.where(bad, special, s + log_total)


# --- stochastic minimisation ---------------------------------------------------------------

@MINIMIZE_OPTIONS.entry
@fill_doc(references=_REFERENCES)
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
        an infinite population (``rng`` is a ``numpy.random.Generator``). A pandas
        DataFrame or Series (alone or in the tuple) is taken as its values.
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
        An option outside its range (``rho`` outside (0, 1), ``lr`` or ``epochs`` not
        positive, ``average`` outside [0, 1), ...), an empty or non-finite ``x0``,
        ``batch_size`` larger than the data, arrays in ``data`` with different numbers of
        rows, or neither ``epochs`` nor ``maxiter`` given for a sampler.
    TypeError
        An option of the wrong type, ``phi`` not callable or not returning a real pair
        ``(values, jac)``, ``callback`` not callable, complex ``data``, or ``data`` of an
        unsupported type (a ragged list).

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

    {{references}}
    """
    cfg = MINIMIZE_OPTIONS.validate(
        phi=phi, rho=rho, batch_size=batch_size, epochs=epochs, maxiter=maxiter,
        estimator=estimator, optimizer=optimizer, lr=lr, betas=betas, s0=s0,
        average=average, epoch_size=epoch_size, rng=rng, callback=callback,
        progress=progress, diagnose=diagnose, backend=backend)
    cfg, plan, x, s, source = _configure(cfg, x0, data)
    with Progress(cfg.maxiter, desc=f"minimize_logsumexp[{cfg.estimator}]",
                  enabled=cfg.progress) as bar:
        return _solver.run(cfg, plan, x, s, source, bar)


def _configure(cfg, x0, data):
    """The arrays, the minibatch source and what the run derives from them:
    ``(cfg, plan, x, s, source)``, ``cfg`` with ``maxiter`` filled in."""
    x0, _ = unwrap_frame(x0, "x0")
    data, is_tuple, xp = _check_data(data, x0)
    be = resolve_backend(cfg.backend, xp)
    (x,) = MINIMIZE_OPTIONS.arrays(be, x0=x0)
    x = promote_float16(x, be.xp)
    draws = Draws(cfg.rng, be.xp)
    if not callable(data) and not is_partitioned(data):
        data = tuple(be.to_device(d) for d in data) if is_tuple else be.to_device(data)
    source = make_source(data, be, draws, is_tuple)
    n = source.n
    if n == 0:
        raise ValueError("data must hold at least one term (row), got none")
    if n is not None and cfg.batch_size > n:
        raise ValueError(f"batch_size={cfg.batch_size} is larger than the data ({n} terms)")
    cfg = cfg.replace(maxiter=_steps(cfg, n))
    epoch_terms = n if n is not None else (cfg.epoch_size or cfg.batch_size)
    record_every = max(1, cfg.maxiter // 100)
    steps_per_epoch = epoch_terms // cfg.batch_size if (n or cfg.epoch_size) else None
    plan = _solver.Plan(
        be=be, step_be=KERNELS.backend_for("step_terms", be, cfg.maxiter * cfg.batch_size),
        epoch_terms=epoch_terms,
        avg_start=None if cfg.average is None else int(cfg.average * cfg.maxiter),
        record_every=record_every, window=max(1, steps_per_epoch or record_every))
    s = None if cfg.s0 is None else be.xp.asarray(cfg.s0, dtype=x.dtype)
    return cfg, plan, x, s, source


def _check_data(data, x0):
    """``(data, is_tuple, xp)``: frames and lists made arrays, shapes checked, namespace
    found."""
    if callable(data):
        return data, False, array_namespace(x0)
    is_tuple = isinstance(data, tuple)
    items = tuple(as_rows(unwrap_frame(d, "data")[0]) for d in (data if is_tuple else (data,)))
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


def _steps(cfg, n):
    """The number of steps: ``maxiter``, or ``epochs`` passes over ``n`` terms (a sampler:
    over ``epoch_size``)."""
    if cfg.maxiter is not None:
        return cfg.maxiter
    if cfg.epochs is None:
        raise ValueError("give epochs or maxiter")
    terms = n if n is not None else cfg.epoch_size
    if terms is None:
        raise ValueError("with a sampler, give maxiter, or epochs and epoch_size")
    return max(1, int(round(cfg.epochs * (terms // cfg.batch_size))))
