"""Numba kernels for simulated annealing on a binary QUBO, and the chains that hold them.

The objective is ``f(x) = c0 + a^T x + x^T W x / 2`` with ``W`` symmetric, zero diagonal.
Each read keeps its state ``x`` (int8), the local field ``h = a + W x`` and its energy;
flipping bit ``i`` changes ``f`` by ``(1 - 2 x_i) h_i`` and costs one row of ``W`` to update
``h``. Reads come in groups of :data:`GROUP` (see :mod:`._anneal_kernels` for the group
and random-stream conventions); groups run in parallel (``prange``). Dense calls under
:data:`SERIAL_BELOW` flips call the parallel kernels' per-read task on the whole range of
reads instead (same reads, same bits, and no parallel kernel to compile).

- Dense ``W``: the reads of a group take their sweeps in turn (without a target every
  read runs on its own, in parallel over reads), each flip adds a row of ``W`` to ``h``
  (a contiguous, vectorized loop).
- CSR ``W``: the reads of a group run in lockstep, one SIMD lane per read: the fields are
  stored ``(n, GROUP)``, the uniforms of a sweep are drawn for every lane at once before
  the sweep, the acceptance test runs on all lanes together, and a flip in any lane walks
  the CSR row once, updating all lanes' fields with one vector operation per neighbour.
  The neighbour lists are read once per group instead of once per read.

With integer weights whose fields stay below ``2**24`` the fields and couplings are float32
(exact, and half the memory traffic). The acceptance probability ``exp(-y)`` is a short
polynomial (relative error below 1e-10, see :func:`exp_neg`) that vectorizes.
"""
import numpy as np
import scipy.sparse as sps

from .._lib._prng import uniform_at
from .._lib.numba_config import jit, jit_parallel, prange
from ._anneal_generic import stream_starts
from ._anneal_groups import ABANDONED, GROUP, RUNNING

#: ``beta * delta`` above which a move is always rejected (``exp(-40) ~ 4e-18`` is below
#: the smallest uniform the generator returns, ``2**-54``)
_CUTOFF = 40.0


@jit
def exp_neg(y):
    """``exp(-y)`` for ``0 <= y <= 40`` (``y`` is clamped to that range).

    ``exp(-y) = exp(-y / 256) ** 256``: a degree-8 Taylor polynomial on ``[-0.157, 0]``
    (truncation below 2e-13 relative) then eight squarings (which multiply the relative
    error by 256). Only arithmetic, so a loop over lanes vectorizes.
    """
    y = min(max(y, 0.0), _CUTOFF)
    z = y * (-1.0 / 256.0)
    p = 1.0 + z * (1.0 + z * (0.5 + z * (1.0 / 6.0 + z * (1.0 / 24.0 + z * (
        1.0 / 120.0 + z * (1.0 / 720.0 + z * (1.0 / 5040.0 + z * (1.0 / 40320.0))))))))
    for _ in range(8):
        p = p * p
    return p


@jit
def _group_hit(E, n_real, target):
    for r in range(n_real):
        if E[r] <= target:
            return True
    return False


@jit
def _lower_group_stopped(stops, g):
    for k in range(g):
        if stops[k] >= 0:
            return True
    return False


@jit
def _group_end(E, n_real, target, stops, g, sweeps_done):
    """After a sweep: ``sweeps_done`` when a read of group ``g`` met the target,
    ABANDONED when a lower-numbered group has already stopped, else RUNNING."""
    if _group_hit(E, n_real, target):
        return sweeps_done
    if _lower_group_stopped(stops, g):
        return ABANDONED
    return RUNNING


@jit
def _sweep_dense(W, x, h, beta, start, counter):
    """One sweep of one read; returns the energy change."""
    n = x.shape[0]
    change = 0.0
    for i in range(n):
        step = 1.0 - 2.0 * x[i]
        d = step * h[i]
        accept = d <= 0.0
        if not accept and beta * d < _CUTOFF:
            accept = uniform_at(start, counter + i) < exp_neg(beta * d)
        if accept:
            x[i] = 1 - x[i]
            change += d
            row = W[i]
            s = h.dtype.type(step)
            for j in range(n):
                h[j] += s * row[j]
    return change


@jit
def _group_dense(W, X, H, E, betas, t0, starts, n_real, target, stops, g):
    """Sweeps of the reads of group ``g`` (rows of ``X``, ``H``, ``E``, ``starts``); the
    schedule ``betas`` ends early at a NaN."""
    n = X.shape[1]
    for t in range(betas.shape[0]):
        if np.isnan(betas[t]):
            break
        counter = (t0 + t) * n
        for r in range(n_real):  # padding rows stay as they are
            E[r] += _sweep_dense(W, X[r], H[r], betas[t], starts[r], counter)
        end = _group_end(E, n_real, target, stops, g, t0 + t + 1)
        if end != RUNNING:
            return end
    return RUNNING


@jit_parallel
def anneal_dense(W, X, H, E, betas, t0, starts, n_real, target, stops):
    """Sweeps ``t0, t0 + 1, ...`` of every running group, in place.

    ``X``, ``H``: ``(n_groups * GROUP, n)``; ``E``, ``starts``: ``(n_groups * GROUP,)``;
    ``n_real``, ``stops``: ``(n_groups,)``; ``betas``: ``(1, sweeps)`` for all groups or
    ``(n_groups, sweeps)``, one schedule per group (NaN-padded when shorter).
    """
    for g in prange(stops.shape[0]):
        if stops[g] == RUNNING:
            lo, hi = g * GROUP, (g + 1) * GROUP
            row = betas[g] if betas.shape[0] > 1 else betas[0]
            stops[g] = _group_dense(W, X[lo:hi], H[lo:hi], E[lo:hi], row, t0,
                                    starts[lo:hi], n_real[g], target, stops, g)


@jit
def anneal_reads_range(W, X, H, E, betas, t0, starts, r0, r1):
    """Sweeps of reads r0:r1 on their own (no target): the serial pass over every read of
    a small call, and the parallel kernel's task for one read."""
    n = X.shape[1]
    for r in range(r0, r1):
        for t in range(betas.shape[0]):
            E[r] += _sweep_dense(W, X[r], H[r], betas[t], starts[r], (t0 + t) * n)


@jit_parallel
def anneal_dense_reads(W, X, H, E, betas, t0, starts, n_reads):
    """:func:`anneal_dense` without a target: every read on its own (the same sweeps, in
    parallel over reads rather than groups)."""
    for r in prange(n_reads):
        k = np.int64(r)
        anneal_reads_range(W, X, H, E, betas, t0, starts, k, k + 1)


@jit
def _draw_lanes(U, starts, counter):
    n, lanes = U.shape
    for i in range(n):
        for r in range(lanes):
            U[i, r] = uniform_at(starts[r], counter + i)


@jit
def _sweep_lanes(indptr, indices, data, X, H, E, U, M, beta):
    """One lockstep sweep of a group: ``X``, ``H`` are ``(n, lanes)``, ``E`` ``(lanes,)``."""
    n, lanes = X.shape
    for i in range(n):
        moved = False
        for r in range(lanes):
            step = 1.0 - 2.0 * X[i, r]
            d = step * H[i, r]
            accept = (d <= 0.0) | (U[i, r] < exp_neg(beta * d))
            M[r] = step if accept else 0.0
            E[r] += d if accept else 0.0
            X[i, r] += np.int8(M[r])
            moved |= accept
        if moved:
            for k in range(indptr[i], indptr[i + 1]):
                j = indices[k]
                w = data[k]
                for r in range(lanes):
                    H[j, r] += M[r] * w


@jit
def _group_csr(indptr, indices, data, X, H, E, betas, t0, starts, n_real, target, stops, g):
    n, lanes = X.shape
    U = np.empty((n, lanes))
    M = np.empty(lanes, dtype=H.dtype)
    for t in range(betas.shape[0]):
        if np.isnan(betas[t]):
            break
        _draw_lanes(U, starts, (t0 + t) * n)
        _sweep_lanes(indptr, indices, data, X, H, E, U, M, betas[t])
        end = _group_end(E, n_real, target, stops, g, t0 + t + 1)
        if end != RUNNING:
            return end
    return RUNNING


@jit_parallel
def anneal_csr(indptr, indices, data, X, H, E, betas, t0, starts, n_real, target, stops):
    """CSR version of :func:`anneal_dense`; ``X``, ``H`` are ``(n_groups, n, GROUP)``,
    ``E``, ``starts`` ``(n_groups, GROUP)``."""
    for g in prange(stops.shape[0]):
        if stops[g] == RUNNING:
            row = betas[g] if betas.shape[0] > 1 else betas[0]
            stops[g] = _group_csr(indptr, indices, data, X[g], H[g], E[g], row, t0,
                                  starts[g], n_real[g], target, stops, g)


@jit
def _best_flip(x, h):
    best, arg = 0.0, -1
    for i in range(x.shape[0]):
        d = h[i] if x[i] == 0 else -h[i]
        if d < best:
            best, arg = d, i
    return arg


@jit
def _descend_csr(indptr, indices, data, x, h, max_flips):
    for _ in range(max_flips):
        arg = _best_flip(x, h)
        if arg < 0:
            return
        s = h.dtype.type(1.0 - 2.0 * x[arg])
        x[arg] = 1 - x[arg]
        for k in range(indptr[arg], indptr[arg + 1]):
            h[indices[k]] += s * data[k]


@jit
def descend_rows_range(W, X, H, r0, r1):
    """Steepest descent of reads r0:r1 (rows of ``X``, ``H``) to a 1-flip local minimum,
    flipping the most improving bit until none improves: the serial pass of a small call,
    and the parallel kernel's task for one read."""
    n = X.shape[1]
    for r in range(r0, r1):
        x, h = X[r], H[r]
        for _ in range(10 * n + 10):
            arg = _best_flip(x, h)
            if arg < 0:
                break
            s = h.dtype.type(1.0 - 2.0 * x[arg])
            x[arg] = 1 - x[arg]
            row = W[arg]
            for j in range(n):
                h[j] += s * row[j]


@jit_parallel
def descend_dense(W, X, H):
    """Steepest descent of every read, in parallel over reads."""
    for r in prange(X.shape[0]):
        k = np.int64(r)
        descend_rows_range(W, X, H, k, k + 1)


#: flips (reads x variables x sweeps, or reads x variables^2 for a descent) under which
#: a dense call runs its reads serially: at this size threads save less than their start-up,
#: and a small first call compiles no parallel kernel (these compile about 3x slower)
SERIAL_BELOW = 1 << 18


@jit_parallel
def descend_csr(indptr, indices, data, X, H):
    """:func:`descend_dense` for the lockstep layout ``(n_groups, n, GROUP)``."""
    n_groups, n, lanes = X.shape
    for k in prange(n_groups * lanes):
        g, r = k // lanes, k % lanes
        _descend_csr(indptr, indices, data, X[g, :, r], H[g, :, r], 10 * n + 10)


def exact_in_float32(a, W):
    """True when every field ``a + W x`` is an integer below ``2**24`` in magnitude, so
    float32 fields and couplings give exactly the float64 arithmetic."""
    vals = W.data if sps.issparse(W) else W
    if not (np.all(a == np.round(a)) and np.all(vals == np.round(vals))):
        return False
    rows = np.asarray(abs(W).sum(axis=1)).ravel() if sps.issparse(W) else \
        np.abs(W).sum(axis=1)
    return a.size == 0 or float(np.max(np.abs(a) + rows)) < 2.0 ** 24


class Couplings:
    """The couplings of one problem in the kernels' formats, prepared once per run and
    shared by every batch of reads (:meth:`NumbaChains.prepare`)."""

    def __init__(self, a, W, single):
        self.a = np.ascontiguousarray(a, dtype=np.float64)
        self.dense = not sps.issparse(W) or W.nnz > 0.25 * W.shape[0] ** 2
        W = (W.toarray() if sps.issparse(W) else W) if self.dense else sps.csr_matrix(W)
        exact = exact_in_float32(self.a, W)
        self.field = np.float32 if exact else np.float64
        self.single = self.dense and bool(single) and not exact
        if self.dense:
            self.W = np.ascontiguousarray(W, dtype=np.float64)
            self.Wk = self.W.astype(np.float32) if (exact or self.single) else self.W
            self.Wd = self.Wk if exact else self.W  # the descent's couplings
        else:
            self.W = W.astype(np.float64)
            self.csr = (W.indptr.astype(np.int64), W.indices.astype(np.uint32),
                        W.data.astype(self.field))

    def fields_of(self, Xf):
        """``W x`` of float64 states (rows)."""
        return Xf @ self.W if self.dense else (self.W @ Xf.T).T


class NumbaChains:
    """The reads of one annealing run on the CPU: states, fields, energies, streams.

    Parameters
    ----------
    a, W, c0 : numpy arrays / CSR matrix, float
        The binary canonical form (ignored when ``prepared`` is given).
    X0 : numpy.ndarray of int8, shape (n_reads, n)
        Initial states.
    base : numpy.uint64
        Seed of the run's generator; read ``r`` uses stream ``first + r``.
    first : int
        Global index of the first read (a multiple of ``GROUP`` when reads are split).
    single : bool
        Dense only: sweep with float32 couplings (the descent and energies use float64).
    xp : module, optional
        Ignored (numpy); the generic chains need it.
    prepared : Couplings, optional
        The output of :meth:`prepare` for this ``a``, ``W``, ``single`` (reused by batches).
    """

    @staticmethod
    def prepare(a, W, single=False, xp=None):
        return Couplings(a, W, single)

    def __init__(self, a, W, c0, X0, base, first=0, single=False, xp=None, prepared=None):
        cp = Couplings(a, W, single) if prepared is None else prepared
        self.cp, self.a, self.dense, self.field = cp, cp.a, cp.dense, cp.field
        self.single, self.W = cp.single, cp.W
        self.c0 = float(c0)
        self.n_reads, self.n = X0.shape
        n_groups = -(-self.n_reads // GROUP)
        pad = n_groups * GROUP
        X = np.zeros((pad, self.n), dtype=np.int8)
        X[:self.n_reads] = X0
        self.n_real = np.minimum(GROUP, self.n_reads - GROUP * np.arange(n_groups))
        self.stops = np.full(n_groups, RUNNING, dtype=np.int64)
        # numpy's twin of the stream starts: a few microseconds once per run, where a
        # compiled loop cost a fifth of a CPU second on a first call
        self.starts = stream_starts(int(base), int(first), pad)
        self.t = 0
        if self.dense:
            self.Wk, self.Wd, self.X = cp.Wk, cp.Wd, X
        else:
            self.csr = cp.csr
            self.X = np.ascontiguousarray(X.reshape(n_groups, GROUP, self.n)
                                          .transpose(0, 2, 1))
        Xf = X.astype(np.float64)
        WX = cp.fields_of(Xf)
        self.H = self._lanes((self.a + WX).astype(self.field))
        self.E = self._lanes(Xf @ self.a + 0.5 * np.sum(Xf * WX, axis=1))

    def states(self):
        """``(n_groups * GROUP, n)`` int8 states, padding lanes included."""
        if self.dense:
            return self.X
        return self.X.transpose(0, 2, 1).reshape(self.stops.shape[0] * GROUP, self.n)

    def _lanes(self, rows):
        """Rows ``(n_groups * GROUP, ...)`` in the kernel's layout."""
        if self.dense:
            return np.ascontiguousarray(rows)
        g = self.stops.shape[0]
        if rows.ndim == 1:
            return rows.reshape(g, GROUP)
        return np.ascontiguousarray(rows.reshape(g, GROUP, self.n).transpose(0, 2, 1))

    def fields_of(self, X):
        """Local fields ``a + W x`` of states ``X`` (rows), float64."""
        return self.a + self.cp.fields_of(np.asarray(X, dtype=np.float64))

    def _fields(self):
        Xf = self.states().astype(np.float64)
        return self._lanes((self.a + self.cp.fields_of(Xf)).astype(self.field))

    def sweep(self, betas, target=None):
        """Run one sweep per entry of ``betas`` on every running group; with ``target``,
        a group stops at the end of the first sweep at which a read reaches it. ``betas``
        may also be ``(n_groups, sweeps)``: one schedule per group, NaN-padded."""
        betas = np.ascontiguousarray(betas, dtype=np.float64)
        goal = -np.inf if target is None else float(target) - self.c0
        args = (self.X, self.H, self.E, np.atleast_2d(betas), np.int64(self.t),
                self._lanes(self.starts), self.n_real, goal, self.stops)
        if self.dense and target is None and betas.ndim == 1:
            reads = (self.Wk, self.X, self.H, self.E, betas, np.int64(self.t), self.starts)
            if self.n_reads * self.n * betas.shape[0] < SERIAL_BELOW:
                anneal_reads_range(*reads, 0, self.n_reads)
            else:
                anneal_dense_reads(*reads, self.n_reads)
        elif self.dense:
            anneal_dense(self.Wk, *args)
        else:
            anneal_csr(*self.csr, *args)
        self.t += betas.shape[-1]

    def descend(self):
        """Steepest descent of every read to a 1-flip local minimum (exact couplings)."""
        if self.single:  # exact fields first: the sweeps accumulated float32 rows
            self.H = self._fields()
        if self.dense:
            k = self.n_reads  # not the padding rows
            if k * self.n * self.n < SERIAL_BELOW:
                descend_rows_range(self.Wd, self.X, self.H, 0, k)
            else:
                descend_dense(self.Wd, self.X[:k], self.H[:k])
        else:
            descend_csr(*self.csr, self.X, self.H)

    def current(self):
        """A copy of ``X`` and the tracked energies (``(n_reads, ...)``)."""
        E = self.E.reshape(-1)[:self.n_reads]
        return self.states()[:self.n_reads].copy(), self.c0 + E

    def finish(self):
        """``(X, energies)`` with the energies recomputed from the samples (no drift)."""
        X = np.ascontiguousarray(self.states()[:self.n_reads])
        Xf = X.astype(np.float64)
        return X, self.c0 + Xf @ self.a + 0.5 * np.sum(Xf * self.cp.fields_of(Xf), axis=1)
