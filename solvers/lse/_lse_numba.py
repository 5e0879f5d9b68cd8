"""Numba kernels for :func:`solvers.logsumexp` on numpy input.

The input is viewed as ``(pre, n, post)`` with the reduced axes in the middle (no copy when
the reduced axes are contiguous in a C-ordered array). Each output lane gets three numbers
in one pass over its ``n`` entries after the max pass: the max ``mx``, the weight of the
maximal entries ``m`` and the scaled sum of the others ``s``; then
``out = mx + log|m| + log1p(s/m)`` exactly as the generic code. Accumulation is in float64
for any input dtype.
"""
import math

import numpy as np

from .._lib.numba_config import jit, jit_parallel, prange


@jit
def _finish_lane(mx, m, s, has_nan, return_sign):
    """Turn (max, tie weight, rest sum) into (out, sign); NaN-safe; None-free."""
    if has_nan:
        return math.nan, math.nan
    if s != 0.0:
        s = s / m
    sgn = math.copysign(1.0, s + 1.0) * math.copysign(1.0, m)
    if s + 1.0 == 0.0 or m == 0.0:
        sgn = 0.0
    if s < -1.0:
        s = -s - 2.0
    out = math.log1p(s) + math.log(abs(m)) + mx
    if not return_sign and sgn < 0:
        out = math.nan
    return out, sgn


@jit
def _lane_rows(a, b, has_b, p, q, n):
    """max / tie weight / rest sum of lane (p, :, q) of a (pre, n, post) array."""
    mx = -math.inf
    has_nan = False
    for i in range(n):
        x = a[p, i, q]
        if has_b and b[p, i, q] == 0.0:
            continue
        if x != x:
            has_nan = True
        elif x > mx:
            mx = x
    m = 0.0
    s = 0.0
    for i in range(n):
        w = b[p, i, q] if has_b else 1.0
        if w == 0.0:
            continue
        x = a[p, i, q]
        if x == mx:
            m += w
        else:
            s += w * math.exp(x - mx)
    return mx, m, s, has_nan


@jit
def _naive_lane(a, b, has_b, p, q, n):
    """log|sum b exp(a)| and its sign: SciPy's answer when the stable formula is not finite."""
    t = 0.0
    for i in range(n):
        w = b[p, i, q] if has_b else 1.0
        t += w * math.exp(a[p, i, q])  # no skip of w == 0: 0 * inf is NaN, as in SciPy
    if t != t:
        return math.nan, math.nan
    sgn = 0.0 if t == 0.0 else math.copysign(1.0, t)
    return math.log(abs(t)), sgn


@jit
def _one_lane(a, b, has_b, p, q, n, return_sign):
    mx, m, s, has_nan = _lane_rows(a, b, has_b, p, q, n)
    out, sgn = _finish_lane(mx, m, s, has_nan, return_sign)
    if not has_nan and not math.isfinite(out):
        out, sgn = _naive_lane(a, b, has_b, p, q, n)
        if not return_sign and sgn < 0:
            out = math.nan
    return out, sgn


@jit_parallel
def _reduce_parallel(a, b, has_b, return_sign, out, sgn):
    pre, n, post = a.shape
    for k in prange(pre * post):
        p = k // post
        q = k - p * post
        o, g = _one_lane(a, b, has_b, p, q, n, return_sign)
        out[p, q] = o
        sgn[p, q] = g


@jit
def _reduce_serial(a, b, has_b, return_sign, out, sgn):
    pre, n, post = a.shape
    for p in range(pre):
        for q in range(post):
            o, g = _one_lane(a, b, has_b, p, q, n, return_sign)
            out[p, q] = o
            sgn[p, q] = g


@jit_parallel
def _reduce_columns(a, b, has_b, return_sign, out, sgn, block):
    """Reduction over the middle axis when ``post`` is long: blocks of columns per thread.

    Walking rows inside a block of contiguous columns keeps memory access sequential, which
    the lane-per-thread kernel does not for ``axis=0`` of a C-ordered matrix.
    """
    pre, n, post = a.shape
    nblocks = (post + block - 1) // block
    for task in prange(pre * nblocks):
        p = task // nblocks
        q0 = (task - p * nblocks) * block
        q1 = min(q0 + block, post)
        width = q1 - q0
        mx = np.full(width, -math.inf)
        nan = np.zeros(width, dtype=np.bool_)
        for i in range(n):
            for j in range(width):
                x = a[p, i, q0 + j]
                if has_b and b[p, i, q0 + j] == 0.0:
                    continue
                if x != x:
                    nan[j] = True
                elif x > mx[j]:
                    mx[j] = x
        m = np.zeros(width)
        s = np.zeros(width)
        for i in range(n):
            for j in range(width):
                w = b[p, i, q0 + j] if has_b else 1.0
                if w == 0.0:
                    continue
                x = a[p, i, q0 + j]
                if x == mx[j]:
                    m[j] += w
                else:
                    s[j] += w * math.exp(x - mx[j])
        for j in range(width):
            o, g = _finish_lane(mx[j], m[j], s[j], nan[j], return_sign)
            if not nan[j] and not math.isfinite(o):
                o, g = _naive_lane(a, b, has_b, p, q0 + j, n)
                if not return_sign and g < 0:
                    o = math.nan
            out[p, q0 + j] = o
            sgn[p, q0 + j] = g


def _as_three_axes(x, axes):
    """View ``x`` as (pre, n, post) with ``axes`` in the middle; copies only if needed."""
    ndim = x.ndim
    contiguous_block = list(axes) == list(range(axes[0], axes[-1] + 1))
    if not contiguous_block:
        rest = [i for i in range(ndim) if i not in axes]
        x = np.moveaxis(x, list(axes), list(range(ndim - len(axes), ndim)))
        axes = tuple(range(len(rest), ndim))
    shape = x.shape
    # math.prod on tuples: np.prod costs ~10 us a call, a third of a small reduction
    pre = math.prod(shape[:axes[0]])
    n = math.prod(shape[axes[0]:axes[-1] + 1])
    post = math.prod(shape[axes[-1] + 1:])
    return np.ascontiguousarray(x).reshape(pre, n, post)


# Below this many elements the thread start-up costs more than it saves.
_PARALLEL_MIN_SIZE = 1 << 15
_COLUMN_BLOCK = 256


def lse_reduce(a, b, axes, return_sign):
    """Reduce ``axes`` of numpy ``a`` (weights ``b`` or None); returns keepdims (out, sign)."""
    a3 = _as_three_axes(a, axes)
    has_b = b is not None
    b3 = _as_three_axes(b, axes) if has_b else np.empty((1, 1, 1), dtype=a3.dtype)
    pre, n, post = a3.shape
    out = np.empty((pre, post), dtype=np.float64)
    sgn = np.empty((pre, post), dtype=np.float64)
    if a3.size < _PARALLEL_MIN_SIZE:
        _reduce_serial(a3, b3, has_b, return_sign, out, sgn)
    elif post >= 64:
        _reduce_columns(a3, b3, has_b, return_sign, out, sgn, _COLUMN_BLOCK)
    else:
        _reduce_parallel(a3, b3, has_b, return_sign, out, sgn)
    keep_shape = tuple(1 if i in axes else k for i, k in enumerate(a.shape))
    return (out.astype(a.dtype, copy=False).reshape(keep_shape),
            sgn.astype(a.dtype, copy=False).reshape(keep_shape))
