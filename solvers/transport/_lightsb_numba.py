"""Numba kernels for LightSB with diagonal S: gate log-weights, exact sampling, and the
loss's sufficient statistics.

Each is one inner operation whose generic twin (the reference it is tested against) is in
:mod:`._lightsb_model`; they are reached through the table in :mod:`._lightsb_kernels`
and imported lazily (never at package import).
"""
import math

import numba
import numpy as np

from .._lib.numba_config import jit, jit_parallel, prange


@jit(inline='always')
def _row_lse(w, K):
    """Log-sum-exp of ``w[:K]`` with SciPy's special values: NaN if any entry is NaN,
    ``+-inf`` when the largest entry is infinite; also returns the row maximum."""
    mx = -np.inf
    for k in range(K):
        v = w[k]
        if v != v:
            return np.nan, np.nan
        if v > mx:
            mx = v
    if mx == np.inf or mx == -np.inf:
        return mx, mx
    tot = 0.0
    for k in range(K):
        tot += math.exp(w[k] - mx)
    return mx + math.log(tot), mx


@jit_parallel
def _log_weights_diag(x, la, r, s, eps, out):
    n, D = x.shape
    K = r.shape[0]
    inv2e = 1.0 / (2.0 * eps)
    for i in prange(n):
        for k in range(K):
            quad, lin = 0.0, 0.0
            for d in range(D):
                xv = x[i, d]
                quad += s[k, d] * xv * xv
                lin += xv * r[k, d]
            out[i, k] = la[k] + (quad + 2.0 * lin) * inv2e
        lse, _ = _row_lse(out[i], K)
        for k in range(K):
            out[i, k] -= lse


def log_weights_diag(x, la, r, s, eps):
    """log gamma_k(x) for diagonal S, shape (n, K), normalised over k (float64 inside)."""
    out = np.empty((x.shape[0], r.shape[0]), dtype=np.float64)
    _log_weights_diag(np.ascontiguousarray(x, dtype=np.float64),
                      np.ascontiguousarray(la, dtype=np.float64),
                      np.ascontiguousarray(r, dtype=np.float64),
                      np.ascontiguousarray(s, dtype=np.float64), float(eps), out)
    return out.astype(x.dtype, copy=False)


@jit_parallel
def _sample_diag(x, logits, r, s, eps, u, z, out):
    n, ns = u.shape
    K = logits.shape[1]
    D = x.shape[1]
    se = math.sqrt(eps)
    for i in prange(n):
        mx = -np.inf
        for k in range(K):
            if logits[i, k] > mx:
                mx = logits[i, k]
        w = np.empty(K)
        tot = 0.0
        for k in range(K):
            tot += math.exp(logits[i, k] - mx)
            w[k] = tot
        for j in range(ns):
            target = u[i, j] * tot
            k = 0
            while k < K - 1 and w[k] <= target:
                k += 1
            for d in range(D):
                sk = s[k, d]
                out[i, j, d] = r[k, d] + sk * x[i, d] + se * math.sqrt(sk) * z[i, j, d]


def sample_diag(x, logits, r, s, eps, u, z):
    """Exact draws from the mixture pi(.|x) (diagonal S) by inverse-CDF component choice.

    ``u`` (n, ns) uniforms pick the component, ``z`` (n, ns, D) standard normals the
    Gaussian; the generic code uses the same draws the same way.
    """
    n, ns = u.shape
    out = np.empty((n, ns, x.shape[1]), dtype=np.float64)
    _sample_diag(np.ascontiguousarray(x, dtype=np.float64),
                 np.ascontiguousarray(logits, dtype=np.float64),
                 np.ascontiguousarray(r, dtype=np.float64),
                 np.ascontiguousarray(s, dtype=np.float64), float(eps),
                 np.ascontiguousarray(u, dtype=np.float64),
                 np.ascontiguousarray(z, dtype=np.float64), out)
    return out.astype(x.dtype, copy=False)


@jit(inline='always')
def _softmax_accumulate(w, pts, i, acc):
    """Turn logits ``w`` into softmax weights ``exp(w - lse)`` in place, add the weighted
    0th/1st/2nd moments of point ``pts[i]`` to ``acc``; return the row's log-sum-exp
    (special values as :func:`solvers.logsumexp`)."""
    K = w.shape[0]
    D = pts.shape[1]
    lse, mx = _row_lse(w, K)
    if math.isfinite(lse):
        tot = 0.0
        for k in range(K):
            w[k] = math.exp(w[k] - mx)
            tot += w[k]
        for k in range(K):
            w[k] /= tot
    else:
        for k in range(K):
            w[k] = math.exp(w[k] - lse)
    for k in range(K):
        wk = w[k]
        acc[k, 0] += wk
        for d in range(D):
            v = pts[i, d]
            acc[k, 1 + d] += wk * v
            acc[k, 1 + D + d] += wk * v * v
    return lse


@jit
def _diag_terms(r, s, eps):
    """Per-component terms shared by every chunk: ``1 / s``, half the log-determinant of
    each S_k, ``r_k^T S_k^{-1} r_k`` (the expanded quadratic form of the generic code), and
    the scalars ``1 / (2 eps)`` and the Gaussian normalising constant."""
    K, D = r.shape
    inv2e = 1.0 / (2.0 * eps)
    const = -0.5 * D * math.log(2.0 * math.pi * eps)
    # loops rather than ``1.0 / s`` and np.zeros: the same arithmetic, but each numpy form
    # is compiled anew on a first call (a tenth of a second or more each)
    inv_s = np.empty((K, D))
    half_logdet = np.empty(K)
    rr = np.empty(K)
    for k in range(K):
        t = 0.0
        q = 0.0
        for d in range(D):
            inv_s[k, d] = 1.0 / s[k, d]
            t += math.log(s[k, d])
            q += r[k, d] * r[k, d] * inv_s[k, d]
        half_logdet[k] = 0.5 * t
        rr[k] = q
    return inv_s, half_logdet, rr, inv2e, const


@jit
def _diag_stats_rows(x, y, la, r, s, terms, rows_x, rows_y, acc_c, acc_v, lse_x, lse_y):
    """The statistics of rows ``rows_x = (i0, i1)`` of x and ``rows_y`` of y in one fused
    pass (logits, softmax and moments per row), added to ``acc_c``, ``acc_v``.

    acc_c[k, 0] = sum_i w_ik, acc_c[k, 1:D+1] = sum_i w_ik x_i,
    acc_c[k, D+1:] = sum_i w_ik x_i^2 (and the same for y in acc_v); returns
    ``(sum_i log c(x_i), sum_j log v(y_j))`` over those rows. ``terms`` is
    :func:`_diag_terms`'s tuple. ``lse_x`` / ``lse_y``: empty, or arrays that receive
    each row's ``log c(x_i)`` / ``log v(y_j)`` (the held-out score of small batches).
    """
    inv_s, half_logdet, rr, inv2e, const = terms
    D = x.shape[1]
    K = r.shape[0]
    w = np.empty(K)
    lc = 0.0
    for i in range(rows_x[0], rows_x[1]):
        for k in range(K):
            quad, lin = 0.0, 0.0
            for d in range(D):
                xv = x[i, d]
                quad += s[k, d] * xv * xv
                lin += xv * r[k, d]
            w[k] = la[k] + (quad + 2.0 * lin) * inv2e
        lse = _softmax_accumulate(w, x, i, acc_c)
        lc += lse
        if lse_x.shape[0]:
            lse_x[i] = lse
    lv = 0.0
    for j in range(rows_y[0], rows_y[1]):
        for k in range(K):
            quad, lin = 0.0, 0.0
            for d in range(D):
                yv = y[j, d]
                quad += yv * yv * inv_s[k, d]
                lin += yv * (r[k, d] * inv_s[k, d])
            w[k] = la[k] + const - half_logdet[k] - (quad - 2.0 * lin + rr[k]) * inv2e
        lse = _softmax_accumulate(w, y, j, acc_v)
        lv += lse
        if lse_y.shape[0]:
            lse_y[j] = lse
    return lc, lv


# A distinct function from the serial pass, not one compiled twice: Numba's cache index
# does not tell parallel=True from serial (numba#6845).
@jit_parallel
def _diag_stats_fused_parallel(x, y, la, r, s, eps, nchunks, acc_c, acc_v, lse_sum):
    """The fused pass over ``nchunks`` row chunks in parallel (chunk c into acc_c[c],
    acc_v[c], lse_sum[c]): for full batches on many threads."""
    terms = _diag_terms(r, s, eps)
    n, m = x.shape[0], y.shape[0]
    no_rows = np.empty(0)
    for c in prange(nchunks):
        rows_x = ((n * c) // nchunks, (n * (c + 1)) // nchunks)
        rows_y = ((m * c) // nchunks, (m * (c + 1)) // nchunks)
        lc, lv = _diag_stats_rows(x, y, la, r, s, terms, rows_x, rows_y, acc_c[c], acc_v[c],
                                  no_rows, no_rows)
        lse_sum[c, 0] = lc
        lse_sum[c, 1] = lv


def fused_parallel_stats(x, y, la, r, s, eps, nchunks):
    """:func:`_diag_stats_fused_parallel` on float64 contiguous arrays, summed over
    chunks: ``(sum log c, sum log v, stats_x, stats_y)``."""
    K, D = r.shape
    nchunks = max(1, min(int(nchunks), x.shape[0], y.shape[0]))
    acc_c, acc_v = np.zeros((nchunks, K, 1 + 2 * D)), np.zeros((nchunks, K, 1 + 2 * D))
    lse_sum = np.zeros((nchunks, 2))
    _diag_stats_fused_parallel(x, y, la, r, s, float(eps), nchunks, acc_c, acc_v, lse_sum)
    tot = lse_sum.sum(axis=0)
    return tot[0], tot[1], acc_c.sum(axis=0), acc_v.sum(axis=0)


@jit
def _shift_rows(w, mx):
    """Subtract each row's maximum from ``w`` (n, K) in place, the maxima into ``mx``: NaN
    for a row holding a NaN, +-inf for a row whose largest entry is infinite (the
    shifted row is then ``w - mx``: NaN, 0 or -inf, as ``exp(w - logsumexp)`` has it)."""
    n, K = w.shape
    for i in range(n):
        top = -np.inf
        nan = False
        for k in range(K):
            v = w[i, k]
            nan |= v != v
            top = max(top, v)
        if nan:
            top = np.nan
        mx[i] = top
        for k in range(K):
            w[i, k] -= top


@jit
def _normalize_rows(w, mx, lse):
    """Rows of ``w = exp(logits - max)`` to softmax weights in place and the row
    log-sum-exps ``max + log(sum)`` into ``lse``; rows with a non-finite maximum keep
    ``exp(logits - max)`` and the maximum as log-sum-exp (SciPy's special values)."""
    n, K = w.shape
    for i in range(n):
        tot = 0.0
        for k in range(K):
            tot += w[i, k]
        top = mx[i]
        if math.isfinite(top):
            lse[i] = top + math.log(tot)
            inv = 1.0 / tot
            for k in range(K):
                w[i, k] *= inv
        else:
            lse[i] = top


def _softmax_rows(w, mx, lse):
    """Row softmax of ``w`` in place and its row log-sum-exps into ``lse``. The
    exponentials go through numpy's SIMD ``exp`` (Numba's scalar ``math.exp`` was 6x
    slower here), the two passes around it through Numba."""
    _shift_rows(w, mx)
    np.exp(w, out=w)
    _normalize_rows(w, mx, lse)


def _features(pts, f):
    """``f = [1, p, p^2]`` for the rows ``pts``, in place."""
    D = pts.shape[1]
    f[:, 0] = 1.0
    f[:, 1:D + 1] = pts
    np.multiply(pts, pts, out=f[:, D + 1:])


def _blocked_side(pts, coef, nblocks):
    """One side of :func:`diag_stats` through BLAS: per block of rows the features
    ``f = [1, p, p^2]``, the logits ``f @ coef`` (one GEMM; the first row of ``coef``
    holds the per-component constants), the softmax (Numba) and the moments ``w^T f``
    (one GEMM)."""
    n, D = pts.shape
    K = coef.shape[1]
    stats = np.zeros((K, 1 + 2 * D))
    total = 0.0
    rows = -(-n // nblocks) if n else 0
    feats = np.empty((rows, 1 + 2 * D))
    logits = np.empty((rows, K))
    lse, mx = np.empty(rows), np.empty(rows)
    for a in range(0, n, max(rows, 1)):
        b = min(a + rows, n)
        f, w = feats[:b - a], logits[:b - a]
        _features(pts[a:b], f)
        np.matmul(f, coef, out=w)
        _softmax_rows(w, mx[:b - a], lse[:b - a])
        total += lse[:b - a].sum()
        stats += w.T @ f
    return total, stats


def _blocked_lse(pts, coef, rows):
    """One side of :func:`diag_lse`: per block of ``rows`` rows the logits (one GEMM, as
    in :func:`_blocked_side`) and their row log-sum-exps, without the moments."""
    n, D = pts.shape
    K = coef.shape[1]
    out = np.empty(n)
    rows = max(1, min(rows, n))
    feats = np.empty((rows, 1 + 2 * D))
    logits = np.empty((rows, K))
    mx = np.empty(rows)
    for a in range(0, n, rows):
        b = min(a + rows, n)
        f, w = feats[:b - a], logits[:b - a]
        _features(pts[a:b], f)
        np.matmul(f, coef, out=w)
        _softmax_rows(w, mx[:b - a], out[a:b])
    return out


def _side_coefficients(la, r, s, eps):
    """The logits of ``log c`` and ``log v`` as ``[1, p, p^2] @ coef``: (1 + 2D, K)
    each (the expanded quadratic forms; the first row the per-component constants)."""
    D = r.shape[1]
    inv2e = 1.0 / (2.0 * eps)
    inv_s = 1.0 / s
    off_v = (la - 0.5 * D * math.log(2.0 * math.pi * eps) - 0.5 * np.log(s).sum(axis=1)
             - inv2e * (r * r * inv_s).sum(axis=1))
    coef_c = np.concatenate([la[None, :], (2.0 * inv2e) * r.T, inv2e * s.T], axis=0)
    coef_v = np.concatenate([off_v[None, :], (2.0 * inv2e) * (r * inv_s).T,
                             -inv2e * inv_s.T], axis=0)
    return coef_c, coef_v


def _blocked_stats(x, y, la, r, s, eps, nblocks_x, nblocks_y):
    """Both sides of :func:`diag_stats` in row blocks: the logits of ``log c`` and
    ``log v`` are linear in ``[p, p^2]`` (the expanded quadratic forms)."""
    coef_c, coef_v = _side_coefficients(la, r, s, eps)
    lc, sx = _blocked_side(x, coef_c, nblocks_x)
    lv, sy = _blocked_side(y, coef_v, nblocks_y)
    return lc, lv, sx, sy


#: (rows x K x D) work below which one fused serial pass runs (minibatches: the call
#: overhead of the blocked BLAS path dominates there)
FUSED_WORK = 400_000
#: rows per block of the blocked path: the most, and the fewest
BLOCK_ROWS, MIN_BLOCK_ROWS = 1024, 512
#: feature entries (rows x (1 + 2 D)) per block above which blocks get fewer rows: one
#: thread, 135 000 rows a side, K = 50, blocks of 512 against 1024 rows took 4 and 2 %
#: longer at D = 8 and 24, 3, 5 and 4 % less at D = 48, 96 and 128
BLOCK_FEATURES = 1 << 16


def block_rows(D):
    """Rows per block of the blocked path for dimension ``D``."""
    return max(MIN_BLOCK_ROWS, min(BLOCK_ROWS, BLOCK_FEATURES // (1 + 2 * D)))
#: Numba threads from which full batches take the fused pass in parallel instead of the
#: blocked path: on one thread the blocked path was 3x faster (D = 16 and 64, K = 50,
#: 135 000 rows: 77 vs 232 ms and 201 vs 583 ms), and the fused pass scales with threads
PARALLEL_THREADS = 4


def _float64_inputs(x, y, la, r, s):
    """The kernels' operands: C-contiguous float64 (accumulation is float64 throughout)."""
    f = np.float64
    return (np.ascontiguousarray(x, dtype=f), np.ascontiguousarray(y, dtype=f),
            np.ascontiguousarray(la, dtype=f), np.ascontiguousarray(r, dtype=f),
            np.ascontiguousarray(s, dtype=f))


def _fused_serial(x, y, la, r, s, eps, lse_x, lse_y):
    """All rows in one serial fused pass: ``(sum log c, sum log v, stats_x, stats_y)``,
    and each row's log-sum-exp into ``lse_x`` / ``lse_y`` unless they are empty. The
    terms and the rows kernel are called from here rather than by one kernel doing both:
    a kernel that calls another compiles the callee's code again (0.4 CPU s on a first
    call), against about 2 us a call."""
    K, D = r.shape
    sx, sy = np.zeros((K, 1 + 2 * D)), np.zeros((K, 1 + 2 * D))
    lc, lv = _diag_stats_rows(x, y, la, r, s, _diag_terms(r, s, float(eps)), (0, x.shape[0]),
                              (0, y.shape[0]), sx, sy, lse_x, lse_y)
    return lc, lv, sx, sy


def diag_lse(x, y, la, r, s, eps, chunk=None):
    """The row log-sum-exps ``log c(x_i)`` (n,) and ``log v(y_j)`` (m,) of the
    diagonal-S loss, without the moments of :func:`diag_stats` (the held-out score):
    blocks of :func:`block_rows` rows through one BLAS GEMM each, or for small batches
    (under :data:`FUSED_WORK`) the fused pass of :func:`diag_stats`, which a fit has
    compiled already. ``chunk`` (rows per block in the generic twin) is ignored."""
    dt = np.result_type(x.dtype, r.dtype)
    x, y, la, r, s = _float64_inputs(x, y, la, r, s)
    K, D = r.shape
    if (x.shape[0] + y.shape[0]) * K * D < FUSED_WORK:
        lc, lv = np.empty(x.shape[0]), np.empty(y.shape[0])
        _fused_serial(x, y, la, r, s, eps, lc, lv)
    else:
        with np.errstate(all="ignore"):  # inf - inf in the logits: NaN, as the generic code
            coef_c, coef_v = _side_coefficients(la, r, s, float(eps))
            lc = _blocked_lse(x, coef_c, block_rows(D))
            lv = _blocked_lse(y, coef_v, block_rows(D))
    return lc.astype(dt, copy=False), lv.astype(dt, copy=False)


def diag_stats(x, y, la, r, s, eps, chunk=None, nchunks=None):
    """Sufficient statistics of the diagonal-S loss on a batch (float64 accumulation).

    Returns ``(sum log c(x), sum log v(y), stats_x, stats_y)`` with ``stats`` of shape
    (K, 1 + 2 D): weight sums, weighted first and second moments. ``chunk`` (rows per
    block in the generic twin) is ignored. ``nchunks=None``: one fused pass for
    minibatches; for full batches, blocks of :func:`block_rows` rows through BLAS GEMMs,
    or with :data:`PARALLEL_THREADS` Numba threads or more the fused pass over row chunks
    in parallel. An integer: that many blocks per side through BLAS.
    """
    K, D = r.shape
    dt = np.result_type(x.dtype, r.dtype)
    x, y, la, r, s = _float64_inputs(x, y, la, r, s)
    work = (x.shape[0] + y.shape[0]) * K * D
    threads = numba.get_num_threads()
    if nchunks is None and work < FUSED_WORK:
        no_rows = np.empty(0)
        lc, lv, sx, sy = _fused_serial(x, y, la, r, s, eps, no_rows, no_rows)
    elif nchunks is None and threads >= PARALLEL_THREADS:
        lc, lv, sx, sy = fused_parallel_stats(x, y, la, r, s, eps, 4 * threads)
    else:
        def blocks(n):
            return max(1, -(-n // block_rows(D))) if nchunks is None else max(1, int(nchunks))
        with np.errstate(all="ignore"):  # inf - inf in the logits: NaN, as the generic code
            lc, lv, sx, sy = _blocked_stats(x, y, la, r, s, float(eps),
                                            blocks(x.shape[0]), blocks(y.shape[0]))
    return (dt.type(lc), dt.type(lv), sx.astype(dt, copy=False), sy.astype(dt, copy=False))
