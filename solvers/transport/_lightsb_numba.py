"""Numba kernels for LightSB with diagonal S: gate log-weights, exact sampling, and the
loss's sufficient statistics.

Each is one inner operation whose generic twin (the reference it is tested against) is in
:mod:`._lightsb_model`; they are reached through the table in :mod:`._lightsb_kernels`
and imported lazily (never at package import).
"""
import math

import numpy as np

from .._lib.numba_config import jit, jit_parallel, prange


@jit
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


@jit
def _softmax_accumulate(w, pts, i, acc, c):
    """Turn logits ``w`` into softmax weights ``exp(w - lse)`` in place, add the weighted
    0th/1st/2nd moments of point ``pts[i]`` to ``acc[c]``; return the row's log-sum-exp
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
        acc[c, k, 0] += wk
        for d in range(D):
            v = pts[i, d]
            acc[c, k, 1 + d] += wk * v
            acc[c, k, 1 + D + d] += wk * v * v
    return lse


@jit
def _diag_terms(r, s, eps):
    """Per-component terms shared by every chunk: ``1 / s``, half the log-determinant of
    each S_k, ``r_k^T S_k^{-1} r_k`` (the expanded quadratic form of the generic code), and
    the scalars ``1 / (2 eps)`` and the Gaussian normalising constant."""
    K, D = r.shape
    inv2e = 1.0 / (2.0 * eps)
    const = -0.5 * D * math.log(2.0 * math.pi * eps)
    inv_s = 1.0 / s
    half_logdet = np.zeros(K)
    rr = np.zeros(K)
    for k in range(K):
        t = 0.0
        for d in range(D):
            t += math.log(s[k, d])
            rr[k] += r[k, d] * r[k, d] * inv_s[k, d]
        half_logdet[k] = 0.5 * t
    return inv_s, half_logdet, rr, inv2e, const


@jit
def _diag_stats_chunk(x, y, la, r, s, terms, nchunks, c, acc_c, acc_v, lse_sum):
    """Sufficient statistics of chunk ``c`` (of ``nchunks``) of the rows of x and of y.

    acc_c[c, k, 0] = sum_i w_ik, acc_c[c, k, 1:D+1] = sum_i w_ik x_i,
    acc_c[c, k, D+1:] = sum_i w_ik x_i^2 (and the same for y in acc_v);
    lse_sum[c, 0] = sum_i log c(x_i), lse_sum[c, 1] = sum_j log v(y_j).
    ``terms`` is :func:`_diag_terms`'s tuple.
    """
    inv_s, half_logdet, rr, inv2e, const = terms
    n, D = x.shape
    m = y.shape[0]
    K = r.shape[0]
    w = np.empty(K)
    # --- x side: log c(x) ---
    i0 = (n * c) // nchunks
    i1 = (n * (c + 1)) // nchunks
    tot_lse = 0.0
    for i in range(i0, i1):
        for k in range(K):
            quad, lin = 0.0, 0.0
            for d in range(D):
                xv = x[i, d]
                quad += s[k, d] * xv * xv
                lin += xv * r[k, d]
            w[k] = la[k] + (quad + 2.0 * lin) * inv2e
        tot_lse += _softmax_accumulate(w, x, i, acc_c, c)
    lse_sum[c, 0] = tot_lse
    # --- y side: log v(y) ---
    j0 = (m * c) // nchunks
    j1 = (m * (c + 1)) // nchunks
    tot_lse = 0.0
    for j in range(j0, j1):
        for k in range(K):
            quad, lin = 0.0, 0.0
            for d in range(D):
                yv = y[j, d]
                quad += yv * yv * inv_s[k, d]
                lin += yv * (r[k, d] * inv_s[k, d])
            w[k] = la[k] + const - half_logdet[k] - (quad - 2.0 * lin + rr[k]) * inv2e
        tot_lse += _softmax_accumulate(w, y, j, acc_v, c)
    lse_sum[c, 1] = tot_lse


# Two distinct functions, not one compiled twice: Numba's cache index does not tell
# parallel=True from serial (numba#6845), so one Python function jitted both ways would
# share a cache entry and whichever compiled first would serve both.
@jit
def _diag_stats_serial(x, y, la, r, s, eps, nchunks, acc_c, acc_v, lse_sum):
    """Per-chunk statistics (see :func:`_diag_stats_chunk`), chunks in turn: for
    minibatches, where thread start-up dominates."""
    terms = _diag_terms(r, s, eps)
    for c in range(nchunks):
        _diag_stats_chunk(x, y, la, r, s, terms, nchunks, c, acc_c, acc_v, lse_sum)


@jit_parallel
def _diag_stats_parallel(x, y, la, r, s, eps, nchunks, acc_c, acc_v, lse_sum):
    """Parallel twin of :func:`_diag_stats_serial` (chunks over threads): full batches."""
    terms = _diag_terms(r, s, eps)
    for c in prange(nchunks):
        _diag_stats_chunk(x, y, la, r, s, terms, nchunks, c, acc_c, acc_v, lse_sum)


#: (rows x K x D) work below which one serial chunk runs (thread start-up dominates)
PARALLEL_WORK = 400_000


def diag_stats(x, y, la, r, s, eps, chunk=None, nchunks=None):
    """Sufficient statistics of the diagonal-S loss on a batch (float64 accumulation).

    Returns ``(sum log c(x), sum log v(y), stats_x, stats_y)`` with ``stats`` of shape
    (K, 1 + 2 D): weight sums, weighted first and second moments. ``chunk`` (rows per
    block in the generic twin) is ignored: the kernel streams rows. ``nchunks=None``: one
    chunk for minibatches, ``4 * threads`` chunks in parallel for full batches.
    """
    K, D = r.shape
    if nchunks is None:
        import numba

        work = (x.shape[0] + y.shape[0]) * K * D
        nchunks = 1 if work < PARALLEL_WORK else 4 * numba.get_num_threads()
    nchunks = max(1, min(int(nchunks), x.shape[0], y.shape[0]))
    acc_c = np.zeros((nchunks, K, 1 + 2 * D))
    acc_v = np.zeros((nchunks, K, 1 + 2 * D))
    lse_sum = np.zeros((nchunks, 2))
    f = np.float64
    kernel = _diag_stats_serial if nchunks == 1 else _diag_stats_parallel
    kernel(np.ascontiguousarray(x, dtype=f), np.ascontiguousarray(y, dtype=f),
                np.ascontiguousarray(la, dtype=f), np.ascontiguousarray(r, dtype=f),
                np.ascontiguousarray(s, dtype=f), float(eps), nchunks, acc_c, acc_v, lse_sum)
    tot = lse_sum.sum(axis=0)
    dt = np.result_type(x.dtype, r.dtype)
    return (dt.type(tot[0]), dt.type(tot[1]), acc_c.sum(axis=0).astype(dt, copy=False),
            acc_v.sum(axis=0).astype(dt, copy=False))
