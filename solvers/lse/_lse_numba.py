"""Numba kernels for :func:`solvers.logsumexp`, :func:`softmax` and :func:`log_softmax`.

Two ideas make these kernels run near the speed of reading the array once:

1. :func:`fast_exp`, an ``exp`` written so that LLVM vectorises it (this llvmlite has no
   SVML, so ``math.exp`` in a loop is a scalar libm call). With :math:`x = n \\ln 2 + r`,
   :math:`|r| \\le \\tfrac12 \\ln 2`,

   .. math:: e^x = 2^n e^r, \\qquad e^r \\approx \\sum_{k=0}^{13} r^k / k!

   ``n`` comes from the round-to-nearest "shifter" trick (``x log2(e) + 1.5 * 2^52``), ``r``
   from a two-constant Cody-Waite reduction, the Taylor tail is below ``4e-18`` and the
   scale :math:`2^n = 2^{n_1} 2^{n_2}` is built from exponent bits in two halves, so
   subnormal results and overflow to ``inf`` come out right. Max error < 1 ulp over the
   whole double range (tested against ``np.exp`` and long double); NaN propagates.
   Other areas import it for their fused loops.
2. An online (single-pass) reduction in cache-sized chunks: per chunk the max is found,
   the running partial is rescaled once if the max grew, then ``exp`` is summed over the
   chunk while it is still in cache. Each lane keeps SciPy's three numbers: the max ``mx``,
   the total weight ``m`` of entries equal to it and the scaled sum ``s`` of the others, so
   ``out = mx + log|m| + log1p(s / m)`` keeps full relative accuracy near one.

The input is viewed as ``(pre, n, post)`` with the reduced axes in the middle. ``post == 1``
(reduction over contiguous memory) uses the row kernel; otherwise blocks of ``post`` columns
are walked in chunks of rows, so memory is read sequentially. Accumulation is float64 for
every input dtype. A lane whose stable result is not finite (inf or NaN input, all ``-inf``)
is recomputed by the naive formula, which gives SciPy's special values.

Threads (Numba's; serial twins below 32k elements): the row kernel runs in parallel over
lanes, and few long lanes are cut into segments reduced in parallel and merged in order;
the column kernel runs in parallel over (slab, column block) tasks and finishes its lanes
inside the task. Chunk sizes come from the L1 cache; what a thread count changes (the
column block width, who runs which task) never changes a lane's arithmetic, so results
have the same bits on any number of threads.

Each pass is a task function over a range of lanes (rows) or (slab, column block) tasks:
the parallel kernel calls it once per lane or task, and inputs below 32k elements call it
directly from Python on the whole range (inputs under a few thousand elements do not reach
these kernels under ``backend="auto"``: the generic code serves them). A small first call
thus compiles the task functions alone, never a parallel kernel (which takes longer to
compile: a first call on 20 000 elements spent about 2 CPU s more in compilation with the
parallel kernel alone, ``benchmarks/cold_start.py``, lse row: 7.3 against 5.4 s), and no
serial wrapper either: a Numba function that calls another re-optimises the callee's code
when it is linked in, so every extra level of calls costs compilation again.

The small per-lane helpers (``_rescale``, the chunk and column loops, the lane finishers)
are inlined into their callers at Numba's IR level (``inline="always"``): they compile
as part of the kernels that call them rather than one by one. Nesting such inlined
helpers two levels deep costs more than it saves (the row task with an inlined per-row
function took 2.6 CPU s to compile against 0.8), so each task function is written flat.
Together these cut a small first call from 16 compiled functions to 4
(``benchmarks/cold_start.py --compile-detail``, lse row) with no change in warm speed
(``benchmarks/peers/lse_kernels_vs_ref.py``). The row task :func:`fold_rows` folds into
running statistics rather than starting afresh, so :func:`solvers.logsumexp_matmul` folds
its ``A @ B`` tiles with the same compiled kernel.
"""
import functools
import math

import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from .._lib.numba_config import jit, jit_parallel, prange
from ._cpu import cache_sizes, floor_pow2


@intrinsic
def _f64_bits(typingctx, x):
    """Reinterpret a float64 as int64 (an LLVM bitcast; vectorises)."""
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.IntType(64))
    return types.int64(types.float64), codegen


@intrinsic
def _bits_f64(typingctx, x):
    """Reinterpret an int64 as float64."""
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.DoubleType())
    return types.float64(types.int64), codegen


_LOG2E = 1.4426950408889634
_LN2_HI = 0.693147180369123816490   # 0x3fe62e42fee00000: n * _LN2_HI is exact for |n| < 2^11
_LN2_LO = 1.90821492927058770002e-10
_SHIFT = 6755399441055744.0         # 1.5 * 2^52: x + _SHIFT rounds x to an integer


# Only "contract" (FMA): "reassoc" would fold (t + SHIFT) - SHIFT away. Instruction flags
# survive inlining into the fastmath loops of the callers.
@numba.njit(cache=True, fastmath={"contract"}, nogil=True)
def fast_exp(x):
    """``exp(x)`` for a float64 scalar, < 1 ulp, branch-free so loops calling it vectorise.

    Special values as ``math.exp``: ``exp(nan) = nan``, ``exp(inf) = inf``,
    ``exp(-inf) = 0``, overflow (``x > 709.78``) gives ``inf`` and underflow gives
    subnormals then ``0``.
    """
    x = 710.0 if x > 710.0 else x     # NaN passes both selects unchanged
    x = -746.0 if x < -746.0 else x
    t = x * _LOG2E + _SHIFT
    nf = t - _SHIFT
    ni = _f64_bits(t) - _f64_bits(_SHIFT)
    r = (x - nf * _LN2_HI) - nf * _LN2_LO
    p = 1.0 / 6227020800.0
    p = p * r + 1.0 / 479001600.0
    p = p * r + 1.0 / 39916800.0
    p = p * r + 1.0 / 3628800.0
    p = p * r + 1.0 / 362880.0
    p = p * r + 1.0 / 40320.0
    p = p * r + 1.0 / 5040.0
    p = p * r + 1.0 / 720.0
    p = p * r + 1.0 / 120.0
    p = p * r + 1.0 / 24.0
    p = p * r + 1.0 / 6.0
    p = p * r + 0.5
    p = p * r + 1.0
    p = p * r + 1.0
    n1 = ni >> 1
    n2 = ni - n1
    return p * _bits_f64((n1 + 1023) << 52) * _bits_f64((n2 + 1023) << 52)


@jit
def exp_into(x, out):
    """``out[i] = fast_exp(x[i])`` over 1-D arrays (used by tests and benchmarks)."""
    for i in range(x.shape[0]):
        out[i] = fast_exp(x[i])


# --- per-lane statistics: (max, tie weight, rest sum) --------------------------------------

@jit(inline='always')
def _rescale(mx, m, s, new_mx):
    """Move the partial (mx, m, s) to a larger max: old ties join the rest sum. A lane
    that held only -inf restarts from zero, keeping a NaN it met (NaN input)."""
    if new_mx > mx:
        if mx == -math.inf:
            return new_mx, 0.0 * m, 0.0 * s   # 0, or NaN kept (NaN input, inf weight)
        f = fast_exp(mx - new_mx)
        return new_mx, 0.0, (s + m) * f
    return mx, m, s


@jit(inline='always')
def _chunk_max(x, w):
    """max of x (entries with weight 0 skipped, NaN ignored) with eight independent
    accumulators: a single select-chain does not vectorise without ``nnan``. ``w`` is None
    or the weights (Numba compiles the two cases separately)."""
    a0 = a1 = a2 = a3 = a4 = a5 = a6 = a7 = -math.inf
    n = x.shape[0]
    n8 = n - n % 8
    for i in range(0, n8, 8):
        v0, v1, v2, v3 = x[i], x[i + 1], x[i + 2], x[i + 3]
        v4, v5, v6, v7 = x[i + 4], x[i + 5], x[i + 6], x[i + 7]
        if w is not None:
            v0 = -math.inf if w[i] == 0.0 else v0
            v1 = -math.inf if w[i + 1] == 0.0 else v1
            v2 = -math.inf if w[i + 2] == 0.0 else v2
            v3 = -math.inf if w[i + 3] == 0.0 else v3
            v4 = -math.inf if w[i + 4] == 0.0 else v4
            v5 = -math.inf if w[i + 5] == 0.0 else v5
            v6 = -math.inf if w[i + 6] == 0.0 else v6
            v7 = -math.inf if w[i + 7] == 0.0 else v7
        a0 = v0 if v0 > a0 else a0
        a1 = v1 if v1 > a1 else a1
        a2 = v2 if v2 > a2 else a2
        a3 = v3 if v3 > a3 else a3
        a4 = v4 if v4 > a4 else a4
        a5 = v5 if v5 > a5 else a5
        a6 = v6 if v6 > a6 else a6
        a7 = v7 if v7 > a7 else a7
    bm = np.float64(max(max(max(a0, a1), max(a2, a3)), max(max(a4, a5), max(a6, a7))))
    for i in range(n8, n):
        v = np.float64(x[i])
        if w is not None:
            v = -math.inf if w[i] == 0.0 else v
        bm = v if v > bm else bm
    return bm


@jit(inline='always')
def _chunk_sums(x, w, mx):
    """(tie weight, rest sum) of x against ``mx``.

    Ties with the max are split off by a 0/1 factor rather than a branch, so the loop
    vectorises. The shift is ``mx``, or 0 when ``mx`` is infinite (so -inf - -inf never
    makes a NaN); a lane with an infinite max takes the naive fallback anyway.
    """
    m = 0.0
    s = 0.0
    sh = mx if math.isfinite(mx) else 0.0   # -inf - -inf would be NaN
    if w is None:
        for i in range(x.shape[0]):
            v = np.float64(x[i])
            t = np.float64(v == mx)
            m += t
            s += (1.0 - t) * fast_exp(v - sh)
    else:
        for i in range(x.shape[0]):
            wi = np.float64(w[i])
            v = -math.inf if wi == 0.0 else np.float64(x[i])
            t = np.float64(v == mx)
            m += wi * t
            s += wi * (1.0 - t) * fast_exp(v - sh)
    return m, s


@jit(inline='always')
def _cols_max(row, wrow, bm):
    """bm = max(bm, row) elementwise (weight-0 entries skipped). Indices start at 0: an
    offset index defeats LLVM's proof that it is non-negative, and with it vectorisation."""
    for j in range(bm.shape[0]):
        v = np.float64(row[j])
        if wrow is not None:
            v = -math.inf if wrow[j] == 0.0 else v
        bm[j] = v if v > bm[j] else bm[j]


@jit(inline='always')
def _cols_sums(row, wrow, mx, sh, m, s):
    """Tie weight and rest sum of one row against the column maxima ``mx`` (``sh``: the
    maxima with non-finite ones replaced by 0, so -inf - -inf never makes a NaN)."""
    if wrow is None:
        for j in range(mx.shape[0]):
            v = np.float64(row[j])
            t = np.float64(v == mx[j])
            m[j] += t
            s[j] += (1.0 - t) * fast_exp(v - sh[j])
    else:
        for j in range(mx.shape[0]):
            wi = np.float64(wrow[j])
            v = -math.inf if wi == 0.0 else np.float64(row[j])
            t = np.float64(v == mx[j])
            m[j] += wi * t
            s[j] += wi * (1.0 - t) * fast_exp(v - sh[j])


# --- finishing a lane ----------------------------------------------------------------------

#: what a lane pass does once a lane's statistics are known (a runtime argument, so one
#: compiled kernel serves every mode): keep them (dask partials), finish the log-sum-exp
#: into (out, sign), or leave the (shift, denominator) of softmax / log_softmax in (mx, s)
STATS, LSE, SOFTMAX, LOG_SOFTMAX = 0, 1, 2, 3


@jit(inline='always')
def _finish_lane(mx, m, s, return_sign):
    """(max, tie weight, rest sum) -> (out, sign) by the log1p formula; NaN (hence the
    naive fallback) when the tie weights cancel."""
    if m == 0.0:
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


@jit(inline='always')
def _naive_lane(a, b, p, q, return_sign):
    """log|sum b exp(a)| over lane (p, :, q): SciPy's answer when the stable one is not
    finite. No skip of b == 0: 0 * exp(inf) is NaN, as in SciPy."""
    t = 0.0
    for i in range(a.shape[1]):
        w = 1.0 if b is None else np.float64(b[p, i, q])
        t += w * math.exp(np.float64(a[p, i, q]))
    if t != t:
        return math.nan, math.nan
    sgn = 0.0 if t == 0.0 else math.copysign(1.0, t)
    out = math.log(abs(t))
    if not return_sign and sgn < 0:
        out = math.nan
    return out, sgn


@jit(inline='always')
def _softmax_lane(a, mx, m, s, p, q, log):
    """Lane (p, q)'s (shift, denominator) by SciPy's rules: softmax divides exp(a - mx) by
    m + s (NaN for a non-finite max); log_softmax subtracts log(m) + log1p(s / m), or
    shifts by 0 and subtracts log(sum exp(a)) when the max is not finite."""
    if not log:
        s[p, q] = m[p, q] + s[p, q] if math.isfinite(mx[p, q]) else math.nan
    elif math.isfinite(mx[p, q]) and m[p, q] > 0.0:
        s[p, q] = math.log(m[p, q]) + math.log1p(s[p, q] / m[p, q])
    else:
        t = 0.0
        for i in range(a.shape[1]):
            t += math.exp(np.float64(a[p, i, q]))
        mx[p, q] = 0.0
        s[p, q] = math.log(t)


@jit
def _finish_lse_lanes(a, b, mx, m, s, p0, p1, q0, q1, return_sign, out, sgn):
    """Finish lanes (p0:p1, q0:q1) into (out, sgn) (one call for many lanes: a call per
    lane, with a dozen array arguments, would cost more than the finishing itself)."""
    for p in range(p0, p1):
        for q in range(q0, q1):
            o, g = _finish_lane(mx[p, q], m[p, q], s[p, q], return_sign)
            if not math.isfinite(o):
                o, g = _naive_lane(a, b, p, q, return_sign)
            out[p, q] = o
            sgn[p, q] = g


@jit
def _finish_softmax_lanes(a, mx, m, s, p0, p1, q0, q1, log):
    """Leave the (shift, denominator) of softmax / log_softmax of lanes (p0:p1, q0:q1) in
    (mx, s)."""
    for p in range(p0, p1):
        for q in range(q0, q1):
            _softmax_lane(a, mx, m, s, p, q, log)


def _finish_lanes(a, b, mx, m, s, p0, p1, q0, q1, mode, return_sign, out, sgn):
    """Finish lanes (p0:p1, q0:q1) as ``mode`` says. Two kernels, one per kind of
    finishing, so that a first call compiles only the one it needs."""
    if mode == LSE:
        _finish_lse_lanes(a, b, mx, m, s, p0, p1, q0, q1, return_sign, out, sgn)
    elif mode != STATS:
        _finish_softmax_lanes(a, mx, m, s, p0, p1, q0, q1, mode == LOG_SOFTMAX)


# --- lane passes: statistics, then finishing, per task -------------------------------------

# Rows are finished in a separate serial pass (_finish_lanes over all lanes, ~20 ns a lane):
# finishing code inside the row kernel made its statistics loop 10-15% slower on short
# lanes (measured).
# The parallel loops pass their index as np.int64: Numba types a prange index int64 in the
# kernel and uint64 in the parallel body it builds, which compiled each task twice (the
# serial passes call the same tasks with int64 bounds). The softmax loop keeps its
# raw index: with the cast (np.int64 or np.uint64) its exp loop over a strided axis ran at
# half the speed (measured; the reason was not found), so its task compiles twice.

@jit
def fold_rows(a, b, mx, m, s, chunk, ncols, k0, k1, lane0, fresh):
    """Fold columns ``0:ncols`` of rows ``k0:k1`` of a C-contiguous 2-D array ``a`` (weights
    ``b`` or None), ``chunk`` columns at a time, into the running statistics
    (mx, m, s)[lane0 + k, 0] of those rows (``fresh``: into empty statistics, whatever
    the arrays held).

    The one row kernel: the serial pass over every lane of a small reduction, the parallel
    kernel's task for one lane, and the fold of each ``A @ B`` tile of
    :func:`solvers.logsumexp_matmul` into its rows' partials.
    """
    for k in range(k0, k1):
        row = a[k]
        lane = lane0 + k
        if fresh:
            mx[lane, 0], m[lane, 0], s[lane, 0] = -math.inf, 0.0, 0.0
        big, ties, rest = mx[lane, 0], m[lane, 0], s[lane, 0]
        for c0 in range(0, ncols, chunk):
            c1 = min(c0 + chunk, ncols)
            xc = row[c0:c1]
            wc = None if b is None else b[k][c0:c1]   # b, an argument: Numba prunes it
            big, ties, rest = _rescale(big, ties, rest, _chunk_max(xc, wc))
            dm, ds = _chunk_sums(xc, wc, big)
            ties += dm
            rest += ds
        mx[lane, 0], m[lane, 0], s[lane, 0] = big, ties, rest


@jit_parallel
def _rows_pass(a, b, mx, m, s, chunk):
    """Statistics (mx, m, s) of every lane of a (lanes, n) array, in parallel over lanes."""
    n = a.shape[1]
    # typed values, not the literals 0 and True: those would compile fold_rows a second
    # time beside the serial pass's call from Python
    lane0, fresh = np.int64(0), np.bool_(True)
    for k in prange(a.shape[0]):
        i = np.int64(k)
        fold_rows(a, b, mx, m, s, chunk, n, i, i + 1, lane0, fresh)


def _rows_pass_serial(a, b, mx, m, s, chunk):
    """Serial twin of :func:`_rows_pass` for small inputs (no thread start-up)."""
    fold_rows(a, b, mx, m, s, chunk, a.shape[1], 0, a.shape[0], 0, True)


@jit
def _cols_tasks(a, b, mx, m, s, block, rows, t0, t1):
    """Statistics of tasks t0:t1 of a (pre, n, post) array: task t is the columns
    [q0, q0 + block) of slab p, numbering the (slab, column block) pairs.

    Rows are taken in chunks of ``rows``: a chunk's column maxima, one rescale per
    column, then the exp pass over the chunk while it is in cache. Loops run over
    contiguous row slices (``a[p, i, q0:q1]``) so that LLVM vectorises them.
    """
    n, post = a.shape[1], a.shape[2]
    nblocks = (post + block - 1) // block
    for task in range(t0, t1):
        p = task // nblocks
        q0 = (task - p * nblocks) * block
        q1 = min(q0 + block, post)
        # np.empty and loops: np.full and np.zeros are compiled anew the first time a
        # process meets them
        bmx, bm, bs = np.empty(q1 - q0), np.empty(q1 - q0), np.empty(q1 - q0)
        for j in range(q1 - q0):
            bmx[j], bm[j], bs[j] = -math.inf, 0.0, 0.0
        chunk_mx = np.empty(q1 - q0)
        sh = np.empty(q1 - q0)
        for r0 in range(0, n, rows):
            r1 = min(r0 + rows, n)
            chunk_mx[:] = -math.inf
            for i in range(r0, r1):
                wrow = None if b is None else b[p, i, q0:q1]   # b an argument: pruned
                _cols_max(a[p, i, q0:q1], wrow, chunk_mx)
            for j in range(q1 - q0):
                bmx[j], bm[j], bs[j] = _rescale(bmx[j], bm[j], bs[j], chunk_mx[j])
                sh[j] = bmx[j] if math.isfinite(bmx[j]) else 0.0
            for i in range(r0, r1):
                wrow = None if b is None else b[p, i, q0:q1]
                _cols_sums(a[p, i, q0:q1], wrow, bmx, sh, bm, bs)
        # an element loop, not slice assignment: copying an array into a slice costs about
        # 1.8 s of compilation the first time a process meets it (measured)
        for j in range(q1 - q0):
            mx[p, q0 + j] = bmx[j]
            m[p, q0 + j] = bm[j]
            s[p, q0 + j] = bs[j]


@jit_parallel
def _cols_pass(a, b, mx, m, s, block, rows, mode, return_sign, out, sgn):
    """Every lane of a (pre, n, post) array, reducing the middle axis, in parallel over
    (slab, column block) tasks, each finishing its own lanes. A column's result depends
    on ``rows`` only, never on ``block``, so ``block`` may follow the thread count."""
    post = a.shape[2]
    nblocks = (post + block - 1) // block
    for task in prange(a.shape[0] * nblocks):
        t = np.int64(task)
        _cols_tasks(a, b, mx, m, s, block, rows, t, t + 1)
        p = t // nblocks
        q0 = (t - p * nblocks) * block
        q1 = min(q0 + block, post)
        if mode == LSE:
            _finish_lse_lanes(a, b, mx, m, s, p, p + 1, q0, q1, return_sign, out, sgn)
        elif mode != STATS:
            _finish_softmax_lanes(a, mx, m, s, p, p + 1, q0, q1, mode == LOG_SOFTMAX)


def _cols_pass_serial(a, b, mx, m, s, block, rows, mode, return_sign, out, sgn):
    """Serial twin of :func:`_cols_pass` for small inputs: the statistics of every task,
    then every lane finished (two calls from here: a task function that called the
    finisher would compile the finisher's code again)."""
    ntasks = a.shape[0] * ((a.shape[2] + block - 1) // block)
    _cols_tasks(a, b, mx, m, s, block, rows, 0, ntasks)
    _finish_lanes(a, b, mx, m, s, 0, a.shape[0], 0, a.shape[2], mode, return_sign, out, sgn)


@jit
def _merge_stats(smx, sm, ss, mx, m, s, k):
    """Lane k of (mx, m, s): the partials of its consecutive segments (rows of smx, sm,
    ss) merged in order, exactly as the online pass merges chunks (NaN kept)."""
    big, ties, rest = -math.inf, 0.0, 0.0
    for j in range(smx.shape[0]):
        big, ties, rest = _rescale(big, ties, rest, smx[j, 0])
        if smx[j, 0] == big:
            ties += sm[j, 0]
            rest += ss[j, 0]
        else:
            rest += (sm[j, 0] + ss[j, 0]) * fast_exp(smx[j, 0] - big)
    mx[k, 0], m[k, 0], s[k, 0] = big, ties, rest


# --- softmax / log_softmax: one elementwise pass after the lane statistics -----------------

@jit
def _softmax_row(x, shift, den, log, out):
    if log:
        for i in range(x.shape[0]):
            out[i] = (np.float64(x[i]) - shift) - den
    else:
        inv = 1.0 / den
        for i in range(x.shape[0]):
            out[i] = fast_exp(np.float64(x[i]) - shift) * inv


@jit
def _softmax_task(a, mx, den, log, out, task):
    """Output of one task over contiguous memory: lane ``task`` when the lanes are rows
    (post == 1), else row i of slab p (task = p * n + i) across its post lanes."""
    pre, n, post = a.shape
    if post == 1:
        _softmax_row(a[task].reshape(n), mx[task, 0], den[task, 0], log,
                     out[task].reshape(n))
        return
    p = task // n
    row = a[p, task - p * n]
    orow = out[p, task - p * n]
    for q in range(post):
        z = np.float64(row[q]) - mx[p, q]
        orow[q] = z - den[p, q] if log else fast_exp(z) / den[p, q]


@jit_parallel
def _softmax_apply(a, mx, den, log, out):
    """The softmax output of a (pre, n, post) array, in parallel over rows of contiguous
    memory."""
    ntasks = a.shape[0] if a.shape[2] == 1 else a.shape[0] * a.shape[1]
    for task in prange(ntasks):
        _softmax_task(a, mx, den, log, out, task)


@jit
def _softmax_apply_serial(a, mx, den, log, out):
    ntasks = a.shape[0] if a.shape[2] == 1 else a.shape[0] * a.shape[1]
    for task in range(ntasks):
        _softmax_task(a, mx, den, log, out, task)


# --- python drivers ------------------------------------------------------------------------

def _as_three_axes(x, axes):
    """View ``x`` as (pre, n, post) with ``axes`` in the middle; copies only if needed."""
    ndim = x.ndim
    if list(axes) != list(range(axes[0], axes[-1] + 1)):
        x = np.moveaxis(x, list(axes), list(range(ndim - len(axes), ndim)))
        axes = tuple(range(ndim - len(axes), ndim))
    shape = x.shape
    # math.prod on tuples: np.prod costs ~10 us a call, a third of a small reduction
    pre = math.prod(shape[:axes[0]])
    n = math.prod(shape[axes[0]:axes[-1] + 1])
    post = math.prod(shape[axes[-1] + 1:])
    return np.ascontiguousarray(x).reshape(pre, n, post)


# Below this many elements the thread start-up costs more than it saves: serial twins run.
_PARALLEL_MIN_SIZE = 1 << 15
# Widest column block of one task along a strided axis; narrower when the blocks would be
# too few to keep every thread busy (at least _TASKS_PER_THREAD each, for balance).
_COL_BLOCK = 256
_COL_BLOCK_MIN = 64
_TASKS_PER_THREAD = 4
# Fewer lanes than this, each at least two segments long, are cut into segments of
# _SEGMENT_CHUNKS chunks (64k float64 for 1024-entry chunks), reduced in parallel and
# merged in order, so that a full reduction uses every thread. The cut depends on the
# sizes only, so the bits do not depend on the thread count.
_FEW_LANES = 64
_SEGMENT_CHUNKS = 64


@functools.cache
def chunk_sizes():
    """(row chunk, column rows) from the L1 data cache: a chunk of a contiguous lane is a
    quarter of L1 (the max pass and the sums pass both read it there), and a column
    kernel chunk of ``rows x _COL_BLOCK`` float64 is at most L1."""
    l1, _ = cache_sizes()
    chunk = min(max(floor_pow2(l1 // 32), 256), 8192)
    rows = min(max(floor_pow2(l1 // (8 * _COL_BLOCK)), 4), 64)
    return chunk, rows


def _col_block_width(pre, post, threads):
    """Columns per task: _COL_BLOCK, or fewer on several threads (down to _COL_BLOCK_MIN,
    a multiple of 8) so that there are _TASKS_PER_THREAD tasks per thread."""
    if threads == 1:
        return _COL_BLOCK
    per_slab = -(-_TASKS_PER_THREAD * threads // pre)
    block = -(-post // per_slab)
    block = -(-block // 8) * 8
    return min(max(block, _COL_BLOCK_MIN), _COL_BLOCK)


def _segmented(pre, n, chunk):
    """Whether the lanes are few and long enough to be cut into segments."""
    return pre < _FEW_LANES and n >= 2 * _SEGMENT_CHUNKS * chunk


def _segments(x, seg):
    """A contiguous 1-d lane as (its full segments as rows, the tail as one row)."""
    full = x.shape[0] // seg * seg
    return x[:full].reshape(-1, seg), x[full:].reshape(1, -1)


def _segment_stats(a2, b2, mx, m, s, chunk):
    """Statistics of a few long lanes: each lane's segments reduced in parallel by the row
    kernel, its tail serially, the partials merged in order."""
    seg = _SEGMENT_CHUNKS * chunk
    for k in range(a2.shape[0]):
        head, tail = _segments(a2[k], seg)
        whead, wtail = (None, None) if b2 is None else _segments(b2[k], seg)
        parts = head.shape[0] + (tail.shape[1] > 0)
        smx, sm, ss = np.empty((parts, 1)), np.empty((parts, 1)), np.empty((parts, 1))
        _rows_pass(head, whead, smx, sm, ss, chunk)
        if tail.shape[1]:
            full = head.shape[0]
            _rows_pass_serial(tail, wtail, smx[full:], sm[full:], ss[full:], chunk)
        _merge_stats(smx, sm, ss, mx, m, s, k)


def _segment_softmax(x3, mx, den, log, out3, chunk):
    """softmax output of a few long lanes, each lane's segments in parallel (the same
    shift and denominator per element as the plain pass, hence the same bits)."""
    pre, n, _ = x3.shape
    seg = _SEGMENT_CHUNKS * chunk
    for k in range(pre):
        head, tail = _segments(x3[k].reshape(n), seg)
        ohead, otail = _segments(out3[k].reshape(n), seg)
        rows = head.shape[0]
        _softmax_apply(head.reshape(rows, seg, 1), np.full((rows, 1), mx[k, 0]),
                       np.full((rows, 1), den[k, 0]), log, ohead.reshape(rows, seg, 1))
        if tail.shape[1]:
            t = tail.shape[1]
            _softmax_apply_serial(tail.reshape(1, t, 1), mx[k:k + 1], den[k:k + 1], log,
                                  otail.reshape(1, t, 1))


def _lane_pass(a3, b3, mode, return_sign=False):
    """One pass over the lanes of a (pre, n, post) array (weights ``b3`` or None): the
    statistics (mx, m, s) of every lane, finished as ``mode`` says; returns
    (mx, m, s, out, sgn), ``out`` and ``sgn`` filled only for ``LSE``."""
    pre, n, post = a3.shape
    mx = np.empty((pre, post))
    m = np.empty((pre, post))
    s = np.empty((pre, post))
    shape = (pre, post) if mode == LSE else (1, 1)
    out, sgn = np.empty(shape), np.empty(shape)
    # the parallel kernels run even on one thread: their compiled loops are a few per cent
    # faster than the serial twins', whose place is below the thread start-up cost
    small = a3.size < _PARALLEL_MIN_SIZE
    threads = 1 if small else numba.get_num_threads()
    chunk, rows = chunk_sizes()
    if post == 1:
        a2 = a3.reshape(pre, n)
        b2 = None if b3 is None else b3.reshape(pre, n)
        if _segmented(pre, n, chunk):
            _segment_stats(a2, b2, mx, m, s, chunk)
        else:
            (_rows_pass_serial if small else _rows_pass)(a2, b2, mx, m, s, chunk)
        _finish_lanes(a3, b3, mx, m, s, 0, pre, 0, post, mode, return_sign, out, sgn)
    else:
        block = _col_block_width(pre, post, threads)
        kernel = _cols_pass_serial if small else _cols_pass
        kernel(a3, b3, mx, m, s, block, rows, mode, return_sign, out, sgn)
    return mx, m, s, out, sgn


def lane_stats(a3, b3):
    """(mx, m, s) arrays of shape (pre, post) for a (pre, n, post) array and weights."""
    mx, m, s, _, _ = _lane_pass(a3, b3, STATS)
    return mx, m, s


def lse_reduce(a, b, axes, return_sign, xp=None):
    """Reduce ``axes`` of numpy ``a`` (weights ``b`` or None); returns keepdims (out, sign)."""
    a3 = _as_three_axes(a, axes)
    b3 = None if b is None else _as_three_axes(b, axes)
    _, _, _, out, sgn = _lane_pass(a3, b3, LSE, return_sign)
    keep_shape = tuple(1 if i in axes else k for i, k in enumerate(a.shape))
    return (out.astype(a.dtype, copy=False).reshape(keep_shape),
            sgn.astype(a.dtype, copy=False).reshape(keep_shape))


def softmax_numba(x, axes, log, xp=None):
    """softmax (or log_softmax) of numpy ``x`` over ``axes`` with SciPy's semantics."""
    x3 = _as_three_axes(x, axes)
    # mx becomes the shift and s the denominator (or its log)
    mx, _, den, _, _ = _lane_pass(x3, None, LOG_SOFTMAX if log else SOFTMAX)
    out3 = np.empty(x3.shape, dtype=np.float64)
    small = x3.size < _PARALLEL_MIN_SIZE
    pre, n, post = x3.shape
    if post == 1 and _segmented(pre, n, chunk_sizes()[0]):
        _segment_softmax(x3, mx, den, log, out3, chunk_sizes()[0])
    else:
        (_softmax_apply_serial if small else _softmax_apply)(x3, mx, den, log, out3)
    ndim = x.ndim
    if list(axes) == list(range(axes[0], axes[-1] + 1)):
        out = out3.reshape(x.shape)
    else:
        moved = [i for i in range(ndim) if i not in axes] + list(axes)
        out = np.moveaxis(out3.reshape(tuple(x.shape[i] for i in moved)),
                          list(range(ndim - len(axes), ndim)), list(axes))
    return out.astype(x.dtype, copy=False)
