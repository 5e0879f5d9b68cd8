"""Numba kernels for simulated annealing on a binary QUBO.

The objective is ``f(x) = c0 + a^T x + x^T W x / 2`` with ``W`` symmetric, zero diagonal.
Each read keeps its state ``x`` (int8) and the local field ``h = a + W x``; flipping bit
``i`` changes ``f`` by ``(1 - 2 x_i) h_i`` and costs one row of ``W`` (dense, ``O(n)``) or
its nonzeros (CSR, ``O(deg i)``) to update ``h``. Reads run in parallel (``prange``); each
has its own xorshift64* stream seeded from the user's ``rng``, so results do not depend on
the number of threads.
"""
import numpy as np

from solvers._lib.numba_config import jit, jit_parallel, prange

_MULT = np.uint64(2685821657736338717)
_S11 = np.uint64(11)
_S12 = np.uint64(12)
_S25 = np.uint64(25)
_S27 = np.uint64(27)
_INV53 = 1.0 / 9007199254740992.0
#: moves with beta * delta above this are rejected without drawing (exp(-40) ~ 4e-18)
_CUTOFF = 40.0


@jit
def _next(state):
    s = state
    s ^= s >> _S12
    s ^= s << _S25
    s ^= s >> _S27
    return s, float((s * _MULT) >> _S11) * _INV53


@jit
def _sweeps_dense(W, x, h, betas, state):
    n = x.shape[0]
    s = state
    for t in range(betas.shape[0]):
        beta = betas[t]
        for i in range(n):
            d = h[i] if x[i] == 0 else -h[i]
            accept = d <= 0.0
            if not accept and beta * d < _CUTOFF:
                s, u = _next(s)
                accept = u < np.exp(-beta * d)
            if accept:
                if x[i] == 0:
                    x[i] = 1
                    row = W[i]
                    for j in range(n):
                        h[j] += row[j]
                else:
                    x[i] = 0
                    row = W[i]
                    for j in range(n):
                        h[j] -= row[j]
    return s


@jit
def _sweeps_csr(indptr, indices, data, x, h, betas, state):
    n = x.shape[0]
    s = state
    for t in range(betas.shape[0]):
        beta = betas[t]
        for i in range(n):
            d = h[i] if x[i] == 0 else -h[i]
            accept = d <= 0.0
            if not accept and beta * d < _CUTOFF:
                s, u = _next(s)
                accept = u < np.exp(-beta * d)
            if accept:
                sign = 1.0 if x[i] == 0 else -1.0
                x[i] = 1 - x[i]
                for k in range(indptr[i], indptr[i + 1]):
                    h[indices[k]] += sign * data[k]
    return s


@jit
def _descend_dense(W, x, h, max_flips):
    """Steepest descent: flip the most improving bit until none improves."""
    n = x.shape[0]
    for _ in range(max_flips):
        best, arg = 0.0, -1
        for i in range(n):
            d = h[i] if x[i] == 0 else -h[i]
            if d < best:
                best, arg = d, i
        if arg < 0:
            return
        sign = 1.0 if x[arg] == 0 else -1.0
        x[arg] = 1 - x[arg]
        row = W[arg]
        for j in range(n):
            h[j] += sign * row[j]


@jit
def _descend_csr(indptr, indices, data, x, h, max_flips):
    n = x.shape[0]
    for _ in range(max_flips):
        best, arg = 0.0, -1
        for i in range(n):
            d = h[i] if x[i] == 0 else -h[i]
            if d < best:
                best, arg = d, i
        if arg < 0:
            return
        sign = 1.0 if x[arg] == 0 else -1.0
        x[arg] = 1 - x[arg]
        for k in range(indptr[arg], indptr[arg + 1]):
            h[indices[k]] += sign * data[k]


@jit_parallel
def anneal_dense(W, X, H, betas, states, polish):
    """Run ``len(betas)`` sweeps on every read (rows of ``X``, ``H``, ``states``) in place."""
    for r in prange(X.shape[0]):
        states[r] = _sweeps_dense(W, X[r], H[r], betas, states[r])
        if polish:
            _descend_dense(W, X[r], H[r], 10 * X.shape[1] + 10)


@jit_parallel
def anneal_csr(indptr, indices, data, X, H, betas, states, polish):
    """CSR version of :func:`anneal_dense`."""
    for r in prange(X.shape[0]):
        states[r] = _sweeps_csr(indptr, indices, data, X[r], H[r], betas, states[r])
        if polish:
            _descend_csr(indptr, indices, data, X[r], H[r], 10 * X.shape[1] + 10)
