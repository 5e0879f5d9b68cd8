"""Numba kernels for the batched Bures–Wasserstein operations (numpy input).

Every pair (query q, stored Gaussian i) needs the eigenvalues of ``C = R_q S_i R_q`` with
``R_q = Omega_q^{1/2}``: ``tr C^{1/2}`` is the cross term of W2^2, and ``C^{1/2}`` (with
eigenvectors) enters the Gibbs-weighted map average. The kernels loop over pairs in
parallel (``prange``) with one LAPACK call per pair, so no ``(Q, N, d, d)`` stack is ever
materialised, and:

- :func:`cdist_full` computes the exact ``(Q, N)`` W2^2 matrix;
- :func:`screened_cdist` skips pairs whose spectral lower bound
  ``|m - mu|^2 + |sqrt(eig(Omega)) - sqrt(eig(S))|^2`` (sorted eigenvalues; von Neumann's
  trace inequality) exceeds the best exact distance found so far by ``cut``; skipped
  pairs get ``+inf`` (a Gibbs weight below ``exp(-beta * cut)``, i.e. zero);
- :func:`weighted_root_sum` accumulates ``sum_i w_qi C_qi^{1/2}`` over pairs with
  nonzero weight only (after a Gibbs softmax, usually a handful per query).

Compared against the generic Array API code in ``bures.py`` in the tests.
"""
import math

import numpy as np

from .._lib.numba_config import jit, jit_parallel, prange


@jit
def _cross_trace(Rq, Si):
    C = Rq @ Si @ Rq
    C = 0.5 * (C + C.T)
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


@jit_parallel
def _cdist_full_kernel(qm, R, trq, m, S, trS, out):
    Q, N = out.shape
    for t in prange(Q * N):
        q = t // N
        i = t - q * N
        d2 = _sq(qm[q], m[i]) + trq[q] + trS[i] - 2.0 * _cross_trace(R[q], S[i])
        out[q, i] = d2 if d2 > 0.0 else 0.0


def cdist_full(qm, R, trq, m, S, trS):
    """Exact W2^2 for all (query, pattern) pairs; shape (Q, N)."""
    dtype = np.result_type(qm, m, S)
    out = np.empty((qm.shape[0], m.shape[0]), dtype=dtype)
    _cdist_full_kernel(np.ascontiguousarray(qm), np.ascontiguousarray(R),
                       np.ascontiguousarray(trq), np.ascontiguousarray(m),
                       np.ascontiguousarray(S), np.ascontiguousarray(trS), out)
    return out


@jit_parallel
def _screened_kernel(qm, R, trq, rq, m, S, trS, rS, cut, out):
    Q, N = out.shape
    d = rq.shape[1]
    for q in prange(Q):
        lb = np.empty(N)
        best_i = 0
        for i in range(N):
            s = _sq(qm[q], m[i])
            for k in range(d):
                t = rq[q, k] - rS[i, k]
                s += t * t
            lb[i] = s
            if s < lb[best_i]:
                best_i = i
        order = np.argsort(lb)
        best = math.inf
        for j in range(N):
            i = order[j]
            if lb[i] > best + cut:
                out[q, i] = math.inf
                continue
            d2 = _sq(qm[q], m[i]) + trq[q] + trS[i] - 2.0 * _cross_trace(R[q], S[i])
            d2 = d2 if d2 > 0.0 else 0.0
            out[q, i] = d2
            if d2 < best:
                best = d2


def screened_cdist(qm, R, trq, rq, m, S, trS, rS, cut):
    """W2^2 (Q, N) with ``+inf`` where the spectral lower bound rules a pair out.

    ``rq`` (Q, d) and ``rS`` (N, d) are the square roots of the ascending eigenvalues.
    Every finite entry is exact, and the minimum of each row is always exact.
    """
    dtype = np.result_type(qm, m, S)
    out = np.empty((qm.shape[0], m.shape[0]), dtype=dtype)
    c = np.ascontiguousarray
    _screened_kernel(c(qm), c(R), c(trq), c(rq), c(m), c(S), c(trS), c(rS), float(cut), out)
    return out


@jit_parallel
def _root_sum_kernel(R, S, W, K, acc):
    Q, N = W.shape
    d = S.shape[1]
    size = (N + K - 1) // K
    for t in prange(Q * K):
        q = t // K
        k = t - q * K
        for i in range(k * size, min(N, (k + 1) * size)):
            w = W[q, i]
            if w == 0.0:
                continue
            C = R[q] @ S[i] @ R[q]
            C = 0.5 * (C + C.T)
            lam, V = np.linalg.eigh(C)
            for j in range(d):
                lam[j] = w * math.sqrt(lam[j]) if lam[j] > 0.0 else 0.0
            for a in range(d):
                for b in range(a, d):
                    s = 0.0
                    for j in range(d):
                        s += V[a, j] * lam[j] * V[b, j]
                    acc[q, k, a, b] += s
        for a in range(d):
            for b in range(a + 1, d):
                acc[q, k, b, a] = acc[q, k, a, b]


def weighted_root_sum(R, S, W, threads=None):
    """``M_q = sum_i W[q, i] (R_q S_i R_q)^{1/2}``, skipping zero weights; (Q, d, d)."""
    import numba

    Q, N = W.shape
    d = S.shape[-1]
    threads = numba.get_num_threads() if threads is None else threads
    K = max(1, min(N, -(-2 * threads // Q)))  # split patterns when there are few queries
    dtype = np.result_type(R, S, W)
    acc = np.zeros((Q, K, d, d), dtype=dtype)
    c = np.ascontiguousarray
    _root_sum_kernel(c(R), c(S), c(W), K, acc)
    return acc.sum(axis=1)
