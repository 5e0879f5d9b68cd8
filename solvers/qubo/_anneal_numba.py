"""Numba kernels for simulated annealing on a binary QUBO, and the chains that hold them.

The objective is ``f(x) = c0 + a^T x + x^T W x / 2`` with ``W`` symmetric, zero diagonal.
Each read keeps its state ``x`` (int8) and the local field ``h = a + W x``; flipping bit
``i`` changes ``f`` by ``(1 - 2 x_i) h_i`` and costs one row of ``W`` (dense, ``O(n)``) or
its nonzeros (CSR, ``O(deg i)``) to update ``h``. Reads run in parallel (``prange``); read
``r`` draws from stream ``r`` of the library's counter-based generator
(:mod:`solvers._lib._prng`), so results depend neither on the number of threads nor on how
the reads are split between processes.
"""
import numpy as np
import scipy.sparse as sps

from .._lib._prng import next_uniform, stream_start
from .._lib.numba_config import jit, jit_parallel, prange

#: moves with beta * delta above this are rejected without drawing (exp(-40) ~ 4e-18)
_CUTOFF = 40.0


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
                s, u = next_uniform(s)
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
                s, u = next_uniform(s)
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
def start_states(base, first, n_reads):
    """Generator states of reads ``first, ..., first + n_reads - 1`` of a run seeded ``base``."""
    out = np.empty(n_reads, dtype=np.uint64)
    for r in prange(n_reads):
        out[r] = stream_start(base, first + r)
    return out


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


class NumbaChains:
    """The reads of one annealing run on the CPU: states ``X``, fields ``H``, generators.

    Parameters
    ----------
    a, W, c0 : numpy arrays / CSR matrix, float
        The binary canonical form.
    X0 : numpy.ndarray of int8, shape (n_reads, n)
        Initial states.
    base : numpy.uint64
        Seed of the run's generator; read ``r`` uses stream ``first + r``.
    first : int
        Global index of the first read (reads split over workers keep their streams).
    single : bool
        Sweep with float32 couplings (dense only; the descent and energies use float64).
    xp : module, optional
        Ignored (numpy); the generic chains need it.
    """

    def __init__(self, a, W, c0, X0, base, first=0, single=False, xp=None):
        self.a = np.ascontiguousarray(a, dtype=np.float64)
        self.c0 = float(c0)
        self.X = np.array(X0, dtype=np.int8, order="C")
        self.dense = not sps.issparse(W) or W.nnz > 0.25 * W.shape[0] ** 2
        self.single = bool(single) and self.dense
        if self.dense:
            self.W = np.ascontiguousarray(W.toarray() if sps.issparse(W) else W,
                                          dtype=np.float64)
            self.Wk = self.W.astype(np.float32) if self.single else self.W
        else:
            self.W = sps.csr_matrix(W, dtype=np.float64)
        self.H = np.ascontiguousarray(self._fields())
        self.states = start_states(np.uint64(base), np.int64(first), self.X.shape[0])

    def _fields(self):
        Xf = self.X.astype(np.float64)
        return self.a + (Xf @ self.W if self.dense else (self.W @ Xf.T).T)

    def _run(self, Wk, betas, polish):
        betas = np.ascontiguousarray(betas, dtype=np.float64)
        if self.dense:
            anneal_dense(Wk, self.X, self.H, betas, self.states, polish)
        else:
            W = self.W
            anneal_csr(W.indptr, W.indices, W.data, self.X, self.H, betas, self.states,
                       polish)

    def sweep(self, betas):
        """Run one sweep per entry of ``betas`` on every read."""
        self._run(self.Wk if self.dense else None, betas, False)

    def descend(self):
        """Steepest descent of every read to a 1-flip local minimum (float64 couplings)."""
        if self.single:  # exact fields first: the sweeps accumulated float32 rows
            self.H = np.ascontiguousarray(self._fields())
        self._run(self.W if self.dense else None, np.empty(0), True)

    def current(self):
        """A copy of ``X`` and the energies from the fields: ``c0 + (a + h) . x / 2``."""
        Xf = self.X.astype(np.float64)
        return self.X.copy(), self.c0 + 0.5 * np.sum(Xf * (self.a + self.H), axis=1)

    def finish(self):
        """``(X, energies)`` with the energies recomputed from the samples (no drift)."""
        Xf = self.X.astype(np.float64)
        WX = Xf @ self.W if self.dense else (self.W @ Xf.T).T
        return self.X, self.c0 + Xf @ self.a + 0.5 * np.sum(Xf * WX, axis=1)
