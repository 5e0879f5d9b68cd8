"""Lazy log-sum-exp on dask arrays: tree reductions of exact partials.

Imported only when a dask array reaches :func:`solvers.logsumexp` or
:func:`logsumexp_matmul` (through the kernel table), so the package never imports dask
otherwise (:func:`softmax` and :func:`log_softmax` run their generic formulas, which are
lazy on dask). Nothing here calls ``compute()``: every function returns a dask array, and
each task holds one input chunk plus small partials.

Each chunk is reduced to the partial of :func:`solvers.logsumexp_partial`, extended by the
tie weight and a naive sum so that SciPy's special values survive the merge:

.. math:: (\\mu, m, s, t) = \\Big(\\max_i a_i,\\; \\sum_{a_i = \\mu} b_i,\\;
          \\sum_{a_i < \\mu} b_i e^{a_i - \\mu},\\; \\sum_i b_i e^{a_i}\\Big),

and partials merge exactly (``logsumexp_merge``): with :math:`M = \\max_j \\mu_j`,
:math:`m = \\sum_{\\mu_j = M} m_j`, :math:`s = \\sum_j s_j e^{\\mu_j - M} +
\\sum_{\\mu_j < M} m_j e^{\\mu_j - M}`, :math:`t = \\sum_j t_j`. The result is
``M + log|m| + log1p(s / m)``, or ``log|t|`` where that is not finite (inf / NaN input),
exactly as the in-memory paths. An unweighted chunk whose partial is finite sends ``t = 0``
instead of its naive sum, which could not change that inf or NaN.
"""
import functools

import numpy as np

import dask.array as da
from dask.array.core import _concatenate2
from dask.utils import deepmap

_FIELDS = ("mx", "m", "s", "t")


def _chunk(x, weights=None, axis=None, keepdims=True, computing_meta=False):
    """Partial (mx, m, s, t) of one numpy block over ``axis`` (kept as length-1 axes)."""
    if computing_meta:
        return x
    from ._lse_numba import _as_three_axes, lane_stats

    axes = tuple(sorted(axis))
    x3 = _as_three_axes(x, axes)
    w3 = None if weights is None else _as_three_axes(np.broadcast_to(weights, x.shape), axes)
    mx, m, s = lane_stats(x3, w3)
    if w3 is None and np.isfinite(mx).all() and np.isfinite(s).all():
        # t is read only where the merged stable result is not finite, which needs a
        # non-finite partial somewhere; there its t is inf or NaN, and a finite chunk's
        # (non-negative) naive sum cannot change inf or NaN: 0 stands in for it
        t = np.zeros(mx.shape)
    else:
        with np.errstate(over="ignore", invalid="ignore"):
            e = np.exp(x3.astype(np.float64))
            t = np.sum(e if w3 is None else w3 * e, axis=1)
    shape = tuple(1 if i in axes else n for i, n in enumerate(x.shape))
    return {k: v.reshape(shape) for k, v in zip(_FIELDS, (mx, m, s, t))}


def _merge(parts, axis):
    """Concatenate nested partials along ``axis`` and merge them (keepdims)."""
    mx, m, s, t = (_concatenate2(deepmap(lambda p, k=k: p[k], parts), axes=axis)
                   for k in _FIELDS)
    M = np.max(mx, axis=axis, keepdims=True)
    tie = mx == M
    with np.errstate(invalid="ignore"):
        scale = np.where(tie, 1.0, np.exp(mx - M))
        m_new = np.sum(np.where(tie, m, 0.0), axis=axis, keepdims=True)
        s_new = np.sum(s * scale + np.where(tie, 0.0, m * scale), axis=axis, keepdims=True)
    return M, m_new, s_new, np.sum(t, axis=axis, keepdims=True)


def _combine(parts, axis=None, keepdims=True, computing_meta=False):
    if computing_meta:
        return parts
    return dict(zip(_FIELDS, _merge(parts, axis)))


def _finish_numpy(mx, m, s, t, return_sign):
    """The log1p formula with the naive fallback, as the generic path."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        s = np.where(s == 0, s, s / m)
        sgn = np.sign(s + 1) * np.sign(m)
        s = np.where(s < -1, -s - 2, s)
        out = np.log1p(s) + np.log(np.abs(m)) + mx
        if not return_sign:
            out = np.where(sgn < 0, np.nan, out)
        bad = ~np.isfinite(out)
        naive = np.log(np.abs(t)) if return_sign else np.log(t)
    return np.where(bad, naive, out), np.where(bad, np.sign(t), sgn)


def _aggregate(parts, axis=None, keepdims=True, return_sign=False, computing_meta=False):
    """Final merge; the value and the sign travel together as one complex number."""
    if computing_meta:
        return np.empty((0,) * len(axis), dtype=np.complex128)
    out, sgn = _finish_numpy(*_merge(parts, axis), return_sign)
    return out + 1j * sgn


def lse_reduce(a, b, axes, return_sign, xp=None):
    """Lazy (out, sign) with keepdims for dask ``a`` (weights ``b`` or None)."""
    kwargs = {} if b is None else {"weights": b}
    res = da.reduction(a, _chunk, functools.partial(_aggregate, return_sign=return_sign),
                       combine=_combine, axis=axes, keepdims=True, dtype=np.complex128,
                       concatenate=False, name="logsumexp", **kwargs)
    return res.real.astype(a.dtype), res.imag.astype(a.dtype)


def _rows_lse_matmul(a_blk, b_full, lb_full, block_size):
    """One row chunk of ``A`` against all of ``B``: the blocked in-memory Numba kernel
    (the chunks arrive as numpy arrays, already of the result's dtype)."""
    from ._matmul_numba import lse_matmul_numba

    return lse_matmul_numba(a_blk, b_full, lb_full, block_size)


def lse_matmul(A, B, log_b, block_size, xp=None):
    """Lazy row-wise ``logsumexp(A @ B + log_b)``: one task per row chunk of ``A``.

    Each task holds one chunk of ``A``, all of ``B`` and one ``block_size`` tile, never the
    ``n x m`` product: ``A`` of 10^7 rows streams through the workers chunk by chunk.
    ``B`` must fit in a worker's memory (it is the small factor in the intended use).
    """
    A = da.asarray(A)
    B = da.asarray(B).rechunk({0: -1, 1: -1})
    A = A.rechunk({1: -1})
    dtype = np.result_type(A.dtype, B.dtype)
    if log_b is None:
        return da.blockwise(_rows_lse_matmul, "i", A, "ik", B, "kj", None, None,
                            block_size, None, dtype=dtype, concatenate=True,
                            meta=np.empty((0,), dtype=dtype))
    lb = da.asarray(log_b).rechunk(-1)
    return da.blockwise(_rows_lse_matmul, "i", A, "ik", B, "kj", lb, "j", block_size, None,
                        dtype=dtype, concatenate=True, meta=np.empty((0,), dtype=dtype))

