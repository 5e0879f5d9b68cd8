"""Stable log-sum-exp, softmax and exact partial merges on any Array API namespace.

For real ``a`` and weights ``b`` the value is

.. math:: \\operatorname{LSE}(a; b) = \\log \\sum_i b_i e^{a_i}
          = a^* + \\log m + \\operatorname{log1p}\\Big(\\frac{1}{m}
            \\sum_{i: a_i < a^*} b_i e^{a_i - a^*}\\Big),

where :math:`a^* = \\max_i a_i` and :math:`m = \\sum_{i: a_i = a^*} b_i`. Splitting off the
maximal terms and using ``log1p`` keeps full relative accuracy when the sum is close to
one (Blanchard, Higham & Higham 2021), and matches :func:`scipy.special.logsumexp`.
"""
import math
from typing import NamedTuple

import numpy as np

from .._lib.frames import unwrap_frame
from .._lib.namespace import array_namespace
from .._lib.backend import resolve_backend
from .._lib.validation import as_float_array, check_axis
from ._core_options import (LOG_SOFTMAX_OPTIONS, LSE_OPTIONS, MERGE_OPTIONS, PARTIAL_OPTIONS,
                            SOFTMAX_OPTIONS, validated)
from ._lse_kernels import join_lazy, kernel, reduce_work
from .._lib.docstrings import fill_doc

#: a docstring block shared by several functions of this module (fill_doc)
_PARAM_X = """
Parameters
----------
x : array_like
    Real input of any Array API namespace (a pandas Series or DataFrame gives its
    float64 values; the result is then a numpy array).
"""


#: a docstring block shared by several functions of this module (fill_doc)
_SOFTMAX_BACKEND = """
backend : {"auto", "numpy", "numba", "cupy"}, optional
    ``"auto"``: the Numba kernel (one pass for the lane statistics, one for the
    output, with the vectorised exp) for numpy input of at least 65536 elements,
    the generic code otherwise (no compilation).
"""



#: a docstring block shared by several functions of this module (fill_doc)
_RAISES_REFERENCES = """
Raises
------
TypeError
    Complex or non-numeric input, or an ``axis`` that is not None or ints.

References
----------
.. [1] P. Blanchard, D. J. Higham, N. J. Higham, "Accurately computing the log-sum-exp
   and softmax functions", IMA Journal of Numerical Analysis 41(4), 2021.
"""


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
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if b is None:
            out, sgn = _lse_unweighted(a, axes, xp)
        else:
            out, sgn = _lse_weighted(a, b, axes, return_sign, xp)
        finite = xp.isfinite(out)
        if not bool(xp.all(finite)):
            # infinite or NaN input, or an overflow: the naive sum over the *unmasked* input
            # gives SciPy's answer (so b == 0 with a == inf in an all-masked slice is NaN)
            naive = xp.sum(xp.exp(a) if b is None else b * xp.exp(a),
                           axis=axes, keepdims=True)
            naive_out = xp.log(xp.abs(naive)) if return_sign else xp.log(naive)
            out = xp.where(finite, out, naive_out)
            sgn = xp.where(finite, sgn, xp.sign(naive))
    return out, sgn


def _lse_unweighted(a, axes, xp):
    """(out, sign) without weights, before the special values: the tie count ``m`` is at
    least one and the rest sum non-negative, so ``out = max + log m + log1p(s / m)`` and
    the sign is +1 (a NaN or infinite lane is not finite here and takes the fallback).
    Half the array operations of the weighted form: this path serves small calls."""
    a_max = xp.max(a, axis=axes, keepdims=True)
    is_max = a == a_max
    m = xp.sum(xp.astype(is_max, a.dtype), axis=axes, keepdims=True)
    rest = xp.where(is_max, xp.zeros_like(a_max), xp.exp(a - a_max))
    s = xp.sum(rest, axis=axes, keepdims=True)
    out = xp.log1p(s / m) + xp.log(m) + a_max
    return out, xp.ones_like(out)


def _lse_weighted(a, b, axes, return_sign, xp):
    """(out, sign) with weights ``b`` (any sign), before the special values."""
    ninf = xp.full((), -xp.inf, dtype=a.dtype, device=_device(a))
    a = xp.where(b == 0, ninf, a)
    a_max = xp.max(a, axis=axes, keepdims=True)
    is_max = a == a_max
    zero = xp.zeros_like(a_max)
    m = xp.sum(xp.where(is_max, b, zero), axis=axes, keepdims=True)
    s = xp.sum(xp.where(is_max, zero, b * xp.exp(a - a_max)), axis=axes, keepdims=True)
    s = xp.where(s == 0, s, s / m)
    sgn = xp.sign(s + 1) * xp.sign(m)
    s = xp.where(s < -1, -s - 2, s)
    out = xp.log1p(s) + xp.log(xp.abs(m)) + a_max
    if not return_sign:
        out = xp.where(sgn < 0, xp.full((), xp.nan, dtype=out.dtype, device=_device(out)),
                       out)
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
        Real input (any Array API array; lists are treated as numpy; a pandas Series or
        DataFrame gives its float64 values, and the result is a numpy array).
    axis : None, int or tuple of ints, optional
        Axes to reduce; ``None`` reduces all.
    b : array_like, optional
        Weights broadcastable to ``a``; may be negative (a pandas Series or DataFrame too).
        Terms with ``b == 0`` are ignored even where ``a`` is infinite.
    keepdims : bool, optional
        Keep the reduced axes with length one.
    return_sign : bool, optional
        Also return the sign of the sum; otherwise a negative sum gives NaN.
    backend : {"auto", "numpy", "numba", "cupy"}, optional
        ``"auto"`` uses the Numba kernel for numpy input and the generic code otherwise,
        also for small numpy input, where it answers without compiling (fewer than 4096
        elements of ``a``, or 2048 with ``b``).

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
    a, b = join_lazy(unwrap_frame(a, "a")[0], unwrap_frame(b, "b")[0])
    xp = array_namespace(a, b)
    be = resolve_backend(cfg.backend, xp)
    a, b = be.to_device(a), be.to_device(b)
    a, b, dtype = _prepare_typed(a, b, be.xp)
    axes = check_axis(axis, a.ndim)
    keepdims, return_sign = cfg.keepdims, cfg.return_sign
    if math.prod(a.shape) == 0 or any(a.shape[ax] == 0 for ax in axes):
        shape = tuple(1 if i in axes else n for i, n in enumerate(a.shape))
        out = be.xp.full(shape, -be.xp.inf, dtype=a.dtype, device=_device(a))
        sgn = be.xp.zeros(shape, dtype=a.dtype, device=_device(a))
    else:
        reduce = kernel("lse_reduce", be, generic=_lse_generic, size=reduce_work(a, b))
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


@fill_doc(raises_references=_RAISES_REFERENCES, softmax_backend=_SOFTMAX_BACKEND,
          param_x=_PARAM_X)
@LOG_SOFTMAX_OPTIONS.entry
def log_softmax(x, axis=None, *, backend="auto"):
    """Logarithm of :func:`softmax`: ``(x - max) - log(sum(exp(x - max)))``.

    Shifting by the max before the subtraction keeps full precision even when ``x`` is of
    order 1e300 (where ``x - logsumexp(x)`` would round the ``log 2`` away).

    {{param_x}}
    axis : None, int or tuple of ints, optional
        Axes along which the weights are normalised; ``None`` uses all.
    {{softmax_backend}}

    Returns
    -------
    array
        Same shape and dtype as ``x``; ``logsumexp`` of it along ``axis`` is zero. An
        empty ``x`` (or one empty along ``axis``) gives an empty array of its shape.

    {{raises_references}}


    Examples
    --------
    >>> import numpy as np
    >>> from solvers import log_softmax
    >>> np.exp(log_softmax(np.array([0.0, 0.0]))).tolist()
    [0.5, 0.5]
    """
    return _softmax_any(x, axis, True, backend)


@fill_doc(raises_references=_RAISES_REFERENCES, softmax_backend=_SOFTMAX_BACKEND,
          param_x=_PARAM_X)
@SOFTMAX_OPTIONS.entry
def softmax(x, axis=None, *, backend="auto"):
    """Gibbs weights ``exp(x) / sum(exp(x))`` along ``axis``, computed after a max shift.

    Stable for any spread of ``x`` (no overflow for ``x`` of order 1e300). ``-inf`` entries
    get weight 0; a slice holding +inf, or only -inf, gives NaN, as in SciPy.

    {{param_x}}
    axis : None, int or tuple of ints, optional
        Axes along which the weights sum to one; ``None`` uses all.
    {{softmax_backend}}

    Returns
    -------
    array
        Non-negative weights, same shape and dtype as ``x``. An empty ``x`` (or one empty
        along ``axis``) gives an empty array of its shape (SciPy raises there).

    {{raises_references}}


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
    x, _ = unwrap_frame(x, "x")
    xp = array_namespace(x)
    be = resolve_backend(cfg.backend, xp)
    x = _as_real(be.to_device(x), be.xp, "x")
    dtype = _float_dtype(be.xp, x)
    x = be.xp.astype(x, _compute_dtype(dtype, be.xp), copy=False)
    axes = check_axis(axis, x.ndim)
    size = math.prod(x.shape)
    if size == 0:       # no weights to normalise: an empty result of the same shape
        out = be.xp.zeros_like(x)
    elif x.ndim == 0:
        out = _softmax_generic(x, axes, log, be.xp)
    else:
        softmax_kernel = kernel("softmax", be, generic=_softmax_generic, size=size)
        out = softmax_kernel(x, axes, log, be.xp)
    if out.dtype != dtype:
        out = be.xp.astype(out, dtype)
    return be.to_input(out)


class LogsumexpPartial(NamedTuple):
    """The exact partial of a log-sum-exp over a chunk: ``(max, sum)``.

    A tuple of two arrays (``m, s = partial`` unpacks it), returned by
    :func:`logsumexp_partial` and :func:`logsumexp_merge`, taken by
    :func:`logsumexp_merge`; ``log(sum) + max`` is the chunk's log-sum-exp.

    Attributes
    ----------
    max : array
        The chunk's maximum (``-inf`` for an empty or all ``-inf`` chunk).
    sum : array
        ``sum(exp(a - max))`` (between 1 and the number of terms, or 0).
    """

    max: object
    sum: object


@PARTIAL_OPTIONS.entry
def logsumexp_partial(a, axis=None, *, xp=None):
    """Exact partial of a log-sum-exp: ``(m, s)`` with ``m = max a`` and ``s = sum exp(a - m)``.

    Partials of disjoint chunks combine with :func:`logsumexp_merge` into the log-sum-exp
    of the union, without loss (``log(s) + m``). A chunk of only ``-inf``, or an empty
    one, gives ``(-inf, 0)``.

    Parameters
    ----------
    a : array_like
        Real input (a pandas Series or DataFrame gives its float64 values).
    axis : None, int or tuple of ints, optional
        Axes to reduce; ``None`` reduces all.
    xp : module, optional
        Namespace to use (detected from ``a`` by default).

    Returns
    -------
    LogsumexpPartial
        The named tuple ``(max, sum)``:

        max : array
            The maximum along ``axis``.
        sum : array
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
    a, _ = unwrap_frame(a, "a")
    xp = array_namespace(a) if xp is None else xp
    a = as_float_array(a, xp, "a")
    axes = check_axis(axis, a.ndim)
    if any(a.shape[ax] == 0 for ax in axes):        # the empty sum: (-inf, 0)
        shape = tuple(n for i, n in enumerate(a.shape) if i not in axes)
        return LogsumexpPartial(xp.full(shape, -xp.inf, dtype=a.dtype, device=_device(a)),
                                xp.zeros(shape, dtype=a.dtype, device=_device(a)))
    with np.errstate(invalid="ignore"):
        m = xp.max(a, axis=axes, keepdims=True)
        safe_m = xp.where(xp.isfinite(m), m, xp.zeros_like(m))
        s = xp.sum(xp.exp(a - safe_m), axis=axes, keepdims=True)
        s = xp.where(xp.isfinite(m), s, xp.where(m > 0, s, xp.zeros_like(s)))
    return LogsumexpPartial(_squeeze(m, axes, False, xp), _squeeze(s, axes, False, xp))


def _is_pair(x):
    """A partial: a :class:`LogsumexpPartial`, or a tuple / list of two items (not an
    array, whose rows would be read as chunks)."""
    return isinstance(x, LogsumexpPartial) or (isinstance(x, (tuple, list)) and len(x) == 2)


def _partials_of(maxes, sums):
    """The partials that ``logsumexp_merge(maxes, sums)`` was given, or None for the
    stacked form: two :class:`LogsumexpPartial`, one, or one sequence of pairs."""
    first, second = isinstance(maxes, LogsumexpPartial), isinstance(sums, LogsumexpPartial)
    if first and (second or sums is None):
        return [maxes] if sums is None else [maxes, sums]
    if first or second:
        raise TypeError("logsumexp_merge got a partial of logsumexp_partial together with "
                        "an array; pass two partials, a sequence of partials, or the "
                        "stacked maxes and sums")
    if sums is None and isinstance(maxes, (tuple, list)) and all(map(_is_pair, maxes)):
        return list(maxes)
    if sums is None:
        raise TypeError("logsumexp_merge needs sums with stacked maxes; or pass two "
                        "partials of logsumexp_partial, or a sequence of them")
    if all(type(x) is tuple and len(x) == 2 for x in (maxes, sums)):
        # (m1, s1), (m2, s2) unpacked by hand, or the stacked (m1, m2), (s1, s2)?
        raise TypeError("logsumexp_merge got two plain tuples of two, which could be two "
                        "(max, sum) partials or two stacked chunks: pass the partials in "
                        "a list, logsumexp_merge([(m1, s1), (m2, s2)]), or the stacked "
                        "maxes and sums as arrays")
    return None


def _stack_partials(partials):
    """(maxes, sums) of ``partials`` stacked along a new first axis (broadcast first)."""
    arrays = [x for p in partials for x in p]
    xp = array_namespace(*arrays)
    arrays = [as_float_array(x, xp, "a partial") for x in arrays]
    try:
        arrays = xp.broadcast_arrays(*arrays)
    except ValueError:
        shapes = [tuple(x.shape) for x in arrays]
        raise ValueError(f"the partials' arrays do not broadcast together: {shapes}") from None
    return xp.stack(arrays[0::2]), xp.stack(arrays[1::2])


@MERGE_OPTIONS.entry
def logsumexp_merge(maxes, sums=None, axis=0):
    """Merge partials ``(m_j, s_j)`` of disjoint chunks into one ``(m, s)``.

    .. math:: m = \\max_j m_j, \\qquad s = \\sum_j s_j e^{m_j - m}

    so that ``log(s) + m`` is the log-sum-exp over all chunks. Chunks with ``m_j = -inf``
    (empty or all ``-inf``) contribute nothing.

    Two forms are accepted:

    - the partials themselves, as :func:`logsumexp_partial` (or this function) returns
      them: ``logsumexp_merge(p1, p2)`` or ``logsumexp_merge([p1, p2, ...])`` (any number;
      plain ``(m, s)`` tuples are accepted inside the list). The partials' arrays must
      broadcast together; ``axis`` must be left at 0.
    - stacked arrays: ``logsumexp_merge(maxes, sums, axis)`` with the chunk maxima and
      scaled sums stacked along ``axis``.

    ``logsumexp_merge((m1, s1), (m2, s2))`` with two plain tuples of two is ambiguous (two
    partials, or two stacked chunks) and raises: put partials in a list,
    ``logsumexp_merge([(m1, s1), (m2, s2)])``, and stacked chunks in arrays.

    Parameters
    ----------
    maxes : LogsumexpPartial, sequence of partials, or array_like
        A partial (then ``sums`` is the second one), a sequence of partials (then ``sums``
        is None), or the chunk maxima ``m_j`` stacked along ``axis``.
    sums : LogsumexpPartial or array_like, optional
        The second partial, or the scaled sums ``s_j`` matching stacked ``maxes``.
    axis : int, optional
        The axis along which stacked chunks lie.

    Returns
    -------
    LogsumexpPartial
        The named tuple ``(max, sum)`` of the union: the overall maximum and scaled sum.
        It merges again like any partial.

    Raises
    ------
    TypeError
        Complex or non-numeric input, boolean ``maxes``, an ``axis`` that is not an int,
        a partial mixed with an array, stacked ``maxes`` without ``sums``, or two plain
        tuples of two (ambiguous).
    ValueError
        ``maxes`` and ``sums`` (or the partials' arrays) that do not broadcast together,
        ``axis`` out of bounds, or an ``axis`` other than 0 with partials.

    References
    ----------
    .. [1] M. Milakov, N. Gimelshein, "Online normalizer calculation for softmax",
       arXiv:1805.02867, 2018.

    Examples
    --------
    >>> import numpy as np
    >>> from solvers import logsumexp, logsumexp_partial, logsumexp_merge
    >>> a = np.arange(10.0)
    >>> m, s = logsumexp_merge(logsumexp_partial(a[:3]), logsumexp_partial(a[3:]))
    >>> bool(np.isclose(np.log(s) + m, logsumexp(a)))
    True
    >>> parts = [logsumexp_partial(c) for c in np.split(a, 5)]
    >>> m, s = logsumexp_merge(np.stack([p.max for p in parts]), np.stack([p.sum for p in parts]))
    >>> bool(np.isclose(np.log(s) + m, logsumexp(a)))
    True
    """
    validated(MERGE_OPTIONS, axis=axis)
    partials = _partials_of(maxes, sums)
    if partials is not None:
        if axis != 0:
            raise ValueError(f"axis={axis!r} applies to stacked maxes and sums; partials "
                             "are merged elementwise (leave axis at 0)")
        if not partials:
            return LogsumexpPartial(np.float64(-np.inf), np.float64(0.0))
        maxes, sums = _stack_partials(partials)
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
        return LogsumexpPartial(xp.full(shape, -xp.inf, dtype=maxes.dtype),
                                xp.zeros(shape, dtype=sums.dtype))
    with np.errstate(invalid="ignore"):
        m = xp.max(maxes, axis=axes, keepdims=True)
        safe_m = xp.where(xp.isfinite(m), m, xp.zeros_like(m))
        scale = xp.where(maxes == -xp.inf, xp.zeros_like(maxes), xp.exp(maxes - safe_m))
        s = xp.sum(sums * scale, axis=axes, keepdims=True)
    return LogsumexpPartial(_squeeze(m, axes, False, xp), _squeeze(s, axes, False, xp))
