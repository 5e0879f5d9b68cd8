"""Numba kernels for the batched Bures–Wasserstein operations (numpy input).

Every pair (query q, stored Gaussian i) needs the eigenvalues of ``C = R_q S_i R_q`` with
``R_q = Omega_q^{1/2}``: ``tr C^{1/2}`` is the cross term of W2^2, and ``C^{1/2}`` (with
eigenvectors) enters the Gibbs-weighted map average. The kernels loop over pairs in
parallel (``prange``) with one LAPACK call per pair, so no ``(Q, N, d, d)`` stack is ever
materialised, and:

- :func:`cdist_full` computes the exact ``(Q, N)`` W2^2 matrix (the screened kernel with
  ``cut = inf``);
- :func:`screened_cdist` skips pairs whose spectral lower bound
  ``|m - mu|^2 + |sqrt(eig(Omega)) - sqrt(eig(S))|^2`` (sorted eigenvalues; von Neumann's
  trace inequality) exceeds the best exact distance found so far by ``cut``; skipped
  pairs get ``+inf`` (a Gibbs weight below ``exp(-beta * cut)``, i.e. zero);
- :func:`weighted_root_sum` accumulates ``sum_i w_qi C_qi^{1/2}`` over pairs with
  nonzero weight only (after a Gibbs softmax, usually a handful per query).

Inputs are cast to float64 (float32 callers get float32 results back): one compiled
signature per kernel keeps the first-call compile time down. For the same reason each
operation is one parallel kernel (no serial twin): small batches run it on the calling
thread alone (:func:`solvers._lib.numba_config.threads_for`).

Compared against the generic Array API code in ``bures_kernels.py`` in the tests.
"""
import contextlib
import math

import numpy as np

from .._lib.numba_config import jit, jit_parallel, kernel_array, prange, single_thread


@jit
def _finite(C):
    for a in range(C.shape[0]):
        for b in range(C.shape[1]):
            if not math.isfinite(C[a, b]):
                return False
    return True


@jit
def _cross_trace(Rq, Si):
    C = Rq @ Si @ Rq
    C = 0.5 * (C + C.T)
    if not _finite(C):  # NaN/inf input: NaN, as the generic code (LAPACK would raise)
        return np.nan
    lam = np.linalg.eigvalsh(C)
    t = 0.0
    for k in range(lam.shape[0]):
        if lam[k] > 0.0:
            t += math.sqrt(lam[k])
    return t


@jit
def _sq(a, b):
    s = 0.0
    for k in range(a.shape[0]):
        t = a[k] - b[k]
        s += t * t
    return s


#: pairs x d^3 below which the kernels run on the calling thread alone: on a busy 2-core
#: machine a parallel region's barrier cost ~30 ms, far more than a small batch (measured
#: 0.13 ms on one thread vs 35 ms parallel for 90 pairs at d = 3)
PARALLEL_WORK = 2e6


def _use_parallel(n_pairs, d, parallel):
    if parallel is None:
        return n_pairs * d ** 3 >= PARALLEL_WORK
    return bool(parallel)


def _spans(n, parts):
    size = -(-n // parts)
    return np.array([min(n, k * size) for k in range(parts + 1)], dtype=np.int64)


def _c(x):
    return kernel_array(x, np.float64)


def _threads():
    import numba

    return numba.get_num_threads()


def _threads_for(parallel):
    """The thread setting of one kernel call: all threads, or the calling one alone."""
    return contextlib.nullcontext() if parallel else single_thread()


def cdist_full(qm, R, trq, m, S, trS, parallel=None):
    """Exact W2^2 for all (query, pattern) pairs; shape (Q, N) (the screened kernel with
    screening off, so one compiled kernel serves both)."""
    d = m.shape[1]
    zq, zs = np.zeros((qm.shape[0], d)), np.zeros((m.shape[0], d))
    return screened_cdist(qm, R, trq, zq, m, S, trS, zs, math.inf, parallel=parallel)


@jit
def _screened_rows(qm, R, trq, rq, m, S, trS, rS, cut, out, lo, hi):
    Q, N = out.shape
    d = rq.shape[1]
    lb = np.empty(N)
    for q in range(lo, hi):
        for i in range(N):
            s = _sq(qm[q], m[i])
            for k in range(d):
                t = rq[q, k] - rS[i, k]
                s += t * t
            lb[i] = s
        order = np.argsort(lb)
        best = math.inf
        for j in range(N):
            i = order[j]
            if lb[i] - cut > best:  # never true for cut = inf: every pair is exact
                out[q, i] = math.inf
                continue
            d2 = _sq(qm[q], m[i]) + trq[q] + trS[i] - 2.0 * _cross_trace(R[q], S[i])
            if d2 < 0.0:  # rounding; NaN stays NaN
                d2 = 0.0
            out[q, i] = d2
            if d2 < best:
                best = d2


@jit_parallel
def _screened(qm, R, trq, rq, m, S, trS, rS, cut, out, spans):
    for k in prange(spans.shape[0] - 1):
        _screened_rows(qm, R, trq, rq, m, S, trS, rS, cut, out, spans[k], spans[k + 1])


def screened_cdist(qm, R, trq, rq, m, S, trS, rS, cut, parallel=None):
    """W2^2 (Q, N) with ``+inf`` where the spectral lower bound rules a pair out.

    ``rq`` (Q, d) and ``rS`` (N, d) are the square roots of the ascending eigenvalues.
    Every finite entry is exact, and the minimum of each row is always exact.
    """
    dtype = np.result_type(qm, m, S)
    Q, N, d = qm.shape[0], m.shape[0], m.shape[1]
    out = np.empty((Q, N))
    args = (_c(qm), _c(R), _c(trq), _c(rq), _c(m), _c(S), _c(trS), _c(rS), float(cut), out)
    parallel = Q > 1 and _use_parallel(Q * N, d, parallel)
    with _threads_for(parallel):
        _screened(*args, _spans(Q, min(Q, 4 * _threads()) if parallel else 1))
    return out.astype(dtype, copy=False)


@jit
def _root_sum_span(R, S, W, acc, q, lo, hi):
    d = S.shape[1]
    for i in range(lo, hi):
        w = W[q, i]
        if w == 0.0:
            continue
        C = R[q] @ S[i] @ R[q]
        C = 0.5 * (C + C.T)
        if not _finite(C):  # NaN/inf in C: NaN out, as the generic twin
            for a in range(d):
                for b in range(d):
                    acc[a, b] = np.nan
            continue
        lam, V = np.linalg.eigh(C)
        for j in range(d):
            lam[j] = w * math.sqrt(lam[j]) if lam[j] > 0.0 else 0.0
        for a in range(d):
            for b in range(a, d):
                s = 0.0
                for j in range(d):
                    s += V[a, j] * lam[j] * V[b, j]
                acc[a, b] += s
    for a in range(d):
        for b in range(a + 1, d):
            acc[b, a] = acc[a, b]


@jit_parallel
def _root_sum(R, S, W, K, acc):
    Q, N = W.shape
    size = (N + K - 1) // K
    for t in prange(Q * K):
        q = t // K
        k = t - q * K
        _root_sum_span(R, S, W, acc[q, k], q, min(N, k * size), min(N, (k + 1) * size))


def weighted_root_sum(R, S, W, threads=None, parallel=None):
    """``M_q = sum_i W[q, i] (R_q S_i R_q)^{1/2}``, skipping zero weights; (Q, d, d)."""
    Q, N = W.shape
    d = S.shape[-1]
    dtype = np.result_type(R, S, W)
    parallel = _use_parallel(int(np.count_nonzero(W)), d, parallel)
    K = 1
    if parallel and Q > 0:  # split patterns when there are few queries
        threads = _threads() if threads is None else threads
        K = max(1, min(N, -(-2 * threads // Q)))
    acc = np.zeros((Q, K, d, d))
    with _threads_for(parallel):
        _root_sum(_c(R), _c(S), _c(W), K, acc)
    return (acc[:, 0] if K == 1 else acc.sum(axis=1)).astype(dtype, copy=False)
