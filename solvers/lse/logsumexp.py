"""Stable log-sum-exp, softmax and exact partial merges on any Array API namespace.

For real ``a`` and weights ``b`` the value is

.. math:: \\operatorname{LSE}(a; b) = \\log \\sum_i b_i e^{a_i}
          = a^* + \\log m + \\operatorname{log1p}\\Big(\\frac{1}{m}
            \\sum_{i: a_i < a^*} b_i e^{a_i - a^*}\\Big),

where :math:`a^* = \\max_i a_i` and :math:`m = \\sum_{i: a_i = a^*} b_i`. Splitting off the
maximal terms and using ``log1p`` keeps full relative accuracy when the sum is close to
one (Blanchard, Higham & Higham 2021), and matches :func:`scipy.special.logsumexp`.
"""
import numpy as np

from .._lib.namespace import array_namespace
from .._lib.backend import resolve_backend
from .._lib.validation import as_float_array, check_axis
from ._core_options import (LOG_SOFTMAX_OPTIONS, LSE_OPTIONS, MERGE_OPTIONS, PARTIAL_OPTIONS,
                            SOFTMAX_OPTIONS, validated)
from ._lse_kernels import join_lazy, kernel


def _as_real(x, xp, name):
    """``x`` as an array of ``xp`` (arrays pass as they are, lists and scalars are
    converted), real (complex is a TypeError); integers stay integers here so that
    promotion against the other operand follows SciPy."""
    if not hasattr(x, "__array_namespace__"):
        x = xp.asarray(x)
    if xp.isdtype(x.dtype, "complex floating"):
        raise TypeError(f"{name} must be real, got complex dtype {x.dtype}")
    if not xp.isdtype(x.dtype, ("real floating", "integral", "bool")):
        raise TypeError(f"{name} must be numeric, got dtype {x.dtype}")
    return x


def _float_dtype(xp, *arrays):
    """SciPy's promotion: the namespace's result type of the inputs (numpy: float32 with
    int64 is float64; torch: float32), the floating inputs' type where the namespace
    refuses mixed kinds (with integers as float64, as SciPy), and float64 when nothing is
    floating."""
    try:
        dtype = xp.result_type(*arrays)
    except TypeError:   # array_api_strict: integers count as the default float
        floats = [x.dtype if xp.isdtype(x.dtype, "real floating") else xp.float64
                  for x in arrays]
        dtype = xp.result_type(*floats)
    return dtype if xp.isdtype(dtype, "real floating") else xp.float64


def _compute_dtype(dtype, xp):
    """float16 is computed in float32 (as SciPy does) and cast back at the end."""
    f16 = getattr(xp, "float16", None)
    return xp.float32 if f16 is not None and dtype == f16 else dtype


def _prepare_typed(a, b, xp):
    """Validate, promote (SciPy's rules) and broadcast; returns (a, b, user dtype)."""
    a = _as_real(a, xp, "a")
    if b is not None:
        b = _as_real(b, xp, "b")
    dtype = _float_dtype(xp, a) if b is None else _float_dtype(xp, a, b)
    work = _compute_dtype(dtype, xp)
    a = xp.astype(a, work, copy=False)
    if b is not None:
        b = xp.astype(b, work, copy=False)
        try:
            a, b = xp.broadcast_arrays(a, b)
        except ValueError:
            raise ValueError(f"b with shape {tuple(b.shape)} does not broadcast against a "
                             f"with shape {tuple(a.shape)}") from None
    if a.ndim == 0:
        a = xp.reshape(a, (1,))
        b = None if b is None else xp.reshape(b, (1,))
    return a, b, dtype


def _lse_generic(a, b, axes, return_sign, xp):
    """Reduce ``axes`` with keepdims; returns (out, sign)."""
    ninf = -xp.inf
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        a_input = a
        if b is not None:
            a = xp.where(b == 0, xp.asarray(ninf, dtype=a.dtype, device=_device(a)), a)
        a_max = xp.max(a, axis=axes, keepdims=True)
        is_max = a == a_max
        ones = xp.ones_like(a) if b is None else b
        zero = xp.zeros_like(a)
        m = xp.sum(xp.where(is_max, ones, zero), axis=axes, keepdims=True)
        terms = xp.exp(a - a_max) if b is None else b * xp.exp(a - a_max)
        s = xp.sum(xp.where(is_max, zero, terms), axis=axes, keepdims=True)
        s = xp.where(s == 0, s, s / m)
        sgn = xp.sign(s + 1) * xp.sign(m)
        s = xp.where(s < -1, -s - 2, s)
        out = xp.log1p(s) + xp.log(xp.abs(m)) + a_max
        if not return_sign:
            out = xp.where(sgn < 0, xp.asarray(xp.nan, dtype=out.dtype, device=_device(out)), out)
        finite = xp.isfinite(out)
        if not bool(xp.all(finite)):
            # infinite or NaN input, or an overflow: the naive sum over the *unmasked* input
            # gives SciPy's answer (so b == 0 with a == inf in an all-masked slice is NaN)
            naive = xp.sum(xp.exp(a_input) if b is None else b * xp.exp(a_input),
                           axis=axes, keepdims=True)
            naive_out = xp.log(xp.abs(naive)) if return_sign else xp.log(naive)
            out = xp.where(finite, out, naive_out)
            sgn = xp.where(finite, sgn, xp.sign(naive))
    return out, sgn


def _squeeze(x, axes, keepdims, xp):
    if keepdims:
        return x
    shape = tuple(n for i, n in enumerate(x.shape) if i not in axes)
    return xp.reshape(x, shape)


def _prepare(a, b, xp):
    """(a, b) validated, promoted and broadcast, in the compute dtype (used by Safe-KL)."""
    a, b, _ = _prepare_typed(a, b, xp)
    return a, b


def _finish(x, xp, dtype=None):
    """Cast back to the user's dtype (float16); a numpy result of a full reduction is a
    numpy scalar, as from :func:`scipy.special.logsumexp`."""
    if dtype is not None and x.dtype != dtype:
        x = xp.astype(x, dtype)
    if isinstance(x, np.ndarray) and x.ndim == 0:
        return x[()]
    return x


@LSE_OPTIONS.entry
def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False, *, backend="auto"):
    """Compute ``log(sum(b * exp(a)))`` stably, with SciPy's semantics.

    Parameters
    ----------
    a : array_like
        Real input (any Array API array; lists are treated as numpy).
    axis : None, int or tuple of ints, optional
        Axes to reduce; ``None`` reduces all.
    b : array_like, optional
        Weights broadcastable to ``a``; may be negative. Terms with ``b == 0`` are ignored
        even where ``a`` is infinite.
    keepdims : bool, optional
        Keep the reduced axes with length one.
    return_sign : bool, optional
        Also return the sign of the sum; otherwise a negative sum gives NaN.
    backend : {"auto", "numpy", "numba", "cupy"}, optional
        ``"auto"`` uses the Numba kernel for numpy input and the generic code otherwise.

    Returns
    -------
    res : array
        The log of the (absolute) sum; float32 input gives float32 output.
    sgn : array
        Only with ``return_sign``: +1, 0 or -1 (NaN where the input had NaN).

    Notes
    -----
    ``+inf`` entries give ``+inf``, an all ``-inf`` slice gives ``-inf``, and any NaN gives
    NaN, as in :func:`scipy.special.logsumexp`. The Numba path accumulates in float64 even
    for float32 input. Complex input is not supported.

    Raises
    ------
    TypeError
        Complex or non-numeric input, or a non-integer axis.
    ValueError
        An axis out of bounds or repeated, ``b`` that does not broadcast against ``a``, or an
        unknown / unusable ``backend``.

    References
    ----------
    .. [1] P. Blanchard, D. J. Higham, N. J. Higham, "Accurately computing the log-sum-exp
       and softmax functions", IMA Journal of Numerical Analysis 41(4), 2021.

    Examples
    --------
    >>> import numpy as np
    >>> from solvers import logsumexp
    >>> float(logsumexp(np.array([1000.0, 1000.0])))
    1000.6931471805599
    >>> logsumexp([1.0, 2.0], b=[1.0, -1.0], return_sign=True)
    (np.float64(1.5413248546129181), np.float64(-1.0))
    """
    cfg = validated(LSE_OPTIONS, axis=axis, keepdims=keepdims, return_sign=return_sign,
                    backend=backend)
    a, b = join_lazy(a, b)
    xp = array_namespace(a, b)
    be = resolve_backend(cfg.backend, xp)
    a, b = be.to_device(a), be.to_device(b)
    a, b, dtype = _prepare_typed(a, b, be.xp)
    axes = check_axis(axis, a.ndim)
    keepdims, return_sign = cfg.keepdims, cfg.return_sign
    if a.size == 0 or any(a.shape[ax] == 0 for ax in axes):
        shape = tuple(1 if i in axes else n for i, n in enumerate(a.shape))
        out = be.xp.full(shape, -be.xp.inf, dtype=a.dtype, device=_device(a))
        sgn = be.xp.zeros(shape, dtype=a.dtype, device=_device(a))
    else:
        reduce = kernel("lse_reduce", be, generic=_lse_generic)
        out, sgn = reduce(a, b, axes, return_sign, be.xp)
    out = _finish(be.to_input(_squeeze(out, axes, keepdims, be.xp)), xp, dtype)
    if return_sign:
        return out, _finish(be.to_input(_squeeze(sgn, axes, keepdims, be.xp)), xp, dtype)
    return out


def _device(x):
    import array_api_compat

    return array_api_compat.device(x)


def _shifted(x, axis, xp):
    """``x - max(x)`` along ``axis`` with non-finite maxima replaced by 0 (SciPy's shift)."""
    x_max = xp.max(x, axis=axis, keepdims=True)
    x_max = xp.where(xp.isfinite(x_max), x_max, xp.zeros_like(x_max))
    return x - x_max


@LOG_SOFTMAX_OPTIONS.entry
def log_softmax(x, axis=None, *, backend="auto"):
    """Logarithm of :func:`softmax`: ``(x - max) - log(sum(exp(x - max)))``.

    Shifting by the max before the subtraction keeps full precision even when ``x`` is of
    order 1e300 (where ``x - logsumexp(x)`` would round the ``log 2`` away).

    Parameters
    ----------
    x : array_like
        Real input of any Array API namespace.
    axis : None, int or tuple of ints, optional
        Axes along which the weights are normalised; ``None`` uses all.
    backend : {"auto", "numpy", "numba", "cupy"}, optional
        ``"auto"``: the Numba kernel (one pass for the lane statistics, one for the
        output, with the vectorised exp) for numpy input, the generic code otherwise.

    Returns
    -------
    array
        Same shape and dtype as ``x``; ``logsumexp`` of it along ``axis`` is zero.

    Raises
    ------
    TypeError
        Complex or non-numeric input, or an ``axis`` that is not None or ints.

    References
    ----------
    .. [1] P. Blanchard, D. J. Higham, N. J. Higham, "Accurately computing the log-sum-exp
       and softmax functions", IMA Journal of Numerical Analysis 41(4), 2021.


    Examples
    --------
    >>> import numpy as np
    >>> from solvers import log_softmax
    >>> np.exp(log_softmax(np.array([0.0, 0.0]))).tolist()
    [0.5, 0.5]
    """
    return _softmax_any(x, axis, True, backend)


@SOFTMAX_OPTIONS.entry
def softmax(x, axis=None, *, backend="auto"):
    """Gibbs weights ``exp(x) / sum(exp(x))`` along ``axis``, computed after a max shift.

    Stable for any spread of ``x`` (no overflow for ``x`` of order 1e300). ``-inf`` entries
    get weight 0; a slice holding +inf, or only -inf, gives NaN, as in SciPy.

    Parameters
    ----------
    x : array_like
        Real input of any Array API namespace.
    axis : None, int or tuple of ints, optional
        Axes along which the weights sum to one; ``None`` uses all.
    backend : {"auto", "numpy", "numba", "cupy"}, optional
        ``"auto"``: the Numba kernel (one pass for the lane statistics, one for the
        output, with the vectorised exp) for numpy input, the generic code otherwise.

    Returns
    -------
    array
        Non-negative weights, same shape and dtype as ``x``.

    Raises
    ------
    TypeError
        Complex or non-numeric input, or an ``axis`` that is not None or ints.

    References
    ----------
    .. [1] P. Blanchard, D. J. Higham, N. J. Higham, "Accurately computing the log-sum-exp
       and softmax functions", IMA Journal of Numerical Analysis 41(4), 2021.


    Examples
    --------
    >>> import numpy as np
    >>> from solvers import softmax
    >>> softmax(np.array([1e300, 1e300, 0.0])).tolist()
    [0.5, 0.5, 0.0]
    """
    return _softmax_any(x, axis, False, backend)


def _softmax_generic(x, axes, log, xp):
    """SciPy's formulas: log_softmax shifts by the max with non-finite maxima replaced by
    0; softmax shifts by the max itself (a lane holding +inf or only -inf is NaN)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        if log:
            z = _shifted(x, axes, xp)
            return z - xp.log(xp.sum(xp.exp(z), axis=axes, keepdims=True))
        e = xp.exp(x - xp.max(x, axis=axes, keepdims=True))
        return e / xp.sum(e, axis=axes, keepdims=True)


def _softmax_any(x, axis, log, backend):
    """softmax / log_softmax through the kernel table (SciPy's semantics)."""
    cfg = validated(LOG_SOFTMAX_OPTIONS if log else SOFTMAX_OPTIONS, axis=axis,
                    backend=backend)
    xp = array_namespace(x)
    be = resolve_backend(cfg.backend, xp)
    x = _as_real(be.to_device(x), be.xp, "x")
    dtype = _float_dtype(be.xp, x)
    x = be.xp.astype(x, _compute_dtype(dtype, be.xp), copy=False)
    axes = check_axis(axis, x.ndim)
    if x.ndim == 0 or x.size == 0:
        out = _softmax_generic(x, axes, log, be.xp)
    else:
        out = kernel("softmax", be, generic=_softmax_generic)(x, axes, log, be.xp)
    if out.dtype != dtype:
        out = be.xp.astype(out, dtype)
    return be.to_input(out)


@PARTIAL_OPTIONS.entry
def logsumexp_partial(a, axis=None, *, xp=None):
    """Exact partial of a log-sum-exp: ``(m, s)`` with ``m = max a`` and ``s = sum exp(a - m)``.

    Partials of disjoint chunks combine with :func:`logsumexp_merge` into the log-sum-exp
    of the union, without loss (``log(s) + m``). A chunk of only ``-inf`` gives
    ``(-inf, 0)``.

    Parameters
    ----------
    a : array_like
        Real input.
    axis : None or int, optional
        Axis to reduce; ``None`` reduces all.
    xp : module, optional
        Namespace to use (detected from ``a`` by default).

    Returns
    -------
    m : array
        The maximum along ``axis``.
    s : array
        ``sum(exp(a - m))`` along ``axis`` (between 1 and the number of terms, or 0).

    Raises
    ------
    TypeError
        Complex or non-numeric input, or an ``axis`` that is not None or ints.

    See Also
    --------
    logsumexp_merge

    References
    ----------
    .. [1] M. Milakov, N. Gimelshein, "Online normalizer calculation for softmax",
       arXiv:1805.02867, 2018 (the streaming (max, sum) merge).

    Examples
    --------
    >>> import numpy as np
    >>> from solvers import logsumexp_partial
    >>> m, s = logsumexp_partial(np.array([0.0, 0.0, -np.inf]))
    >>> float(m), float(s)
    (0.0, 2.0)
    """
    validated(PARTIAL_OPTIONS, axis=axis)
    xp = array_namespace(a) if xp is None else xp
    a = as_float_array(a, xp, "a")
    axes = check_axis(axis, a.ndim)
    with np.errstate(invalid="ignore"):
        m = xp.max(a, axis=axes, keepdims=True)
        safe_m = xp.where(xp.isfinite(m), m, xp.zeros_like(m))
        s = xp.sum(xp.exp(a - safe_m), axis=axes, keepdims=True)
        s = xp.where(xp.isfinite(m), s, xp.where(m > 0, s, xp.zeros_like(s)))
    return _squeeze(m, axes, False, xp), _squeeze(s, axes, False, xp)


@MERGE_OPTIONS.entry
def logsumexp_merge(maxes, sums, axis=0):
    """Merge partials ``(m_j, s_j)`` along ``axis`` into one ``(m, s)``.

    .. math:: m = \\max_j m_j, \\qquad s = \\sum_j s_j e^{m_j - m}

    so that ``log(s) + m`` is the log-sum-exp over all chunks. Chunks with ``m_j = -inf``
    contribute nothing.

    Parameters
    ----------
    maxes : array_like
        Chunk maxima ``m_j`` (from :func:`logsumexp_partial`), stacked along ``axis``.
    sums : array_like
        Matching scaled sums ``s_j``.
    axis : int, optional
        The axis along which chunks are stacked.

    Returns
    -------
    m : array
        The overall maximum.
    s : array
        The overall scaled sum.

    Raises
    ------
    TypeError
        Complex or non-numeric input, boolean ``maxes``, or an ``axis`` that is not an int.
    ValueError
        ``maxes`` and ``sums`` that do not broadcast together, or ``axis`` out of bounds.

    References
    ----------
    .. [1] M. Milakov, N. Gimelshein, "Online normalizer calculation for softmax",
       arXiv:1805.02867, 2018.

    Examples
    --------
    >>> import numpy as np
    >>> from solvers import logsumexp, logsumexp_partial, logsumexp_merge
    >>> a = np.arange(10.0)
    >>> parts = [logsumexp_partial(c) for c in (a[:3], a[3:])]
    >>> m, s = logsumexp_merge(np.array([p[0] for p in parts]), np.array([p[1] for p in parts]))
    >>> bool(np.isclose(np.log(s) + m, logsumexp(a)))
    True
    """
    validated(MERGE_OPTIONS, axis=axis)
    xp = array_namespace(maxes, sums)
    if xp.isdtype(xp.asarray(maxes).dtype, "bool"):
        raise TypeError("maxes must be real numbers (chunk maxima), got dtype bool")
    maxes = as_float_array(maxes, xp, "maxes")
    sums = as_float_array(sums, xp, "sums")
    try:
        maxes, sums = xp.broadcast_arrays(maxes, sums)
    except ValueError:
        raise ValueError(f"maxes with shape {tuple(maxes.shape)} does not broadcast against "
                         f"sums with shape {tuple(sums.shape)}") from None
    axes = check_axis(axis, maxes.ndim)
    if any(maxes.shape[ax] == 0 for ax in axes):  # no chunk: the empty sum (-inf, 0)
        shape = tuple(n for i, n in enumerate(maxes.shape) if i not in axes)
        return (xp.full(shape, -xp.inf, dtype=maxes.dtype),
                xp.zeros(shape, dtype=sums.dtype))
    with np.errstate(invalid="ignore"):
        m = xp.max(maxes, axis=axes, keepdims=True)
        safe_m = xp.where(xp.isfinite(m), m, xp.zeros_like(m))
        scale = xp.where(maxes == -xp.inf, xp.zeros_like(maxes), xp.exp(maxes - safe_m))
        s = xp.sum(sums * scale, axis=axes, keepdims=True)
    return _squeeze(m, axes, False, xp), _squeeze(s, axes, False, xp)
