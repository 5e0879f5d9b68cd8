"""The generic annealer: all reads at once, bit by bit, in any Array API namespace.

The reference the Numba and CuPy chains are tested against (same interface, same group and
stream conventions, see :mod:`._anneal_kernels`). The uniforms are the library's
counter-based streams computed on the host with numpy integer arithmetic and moved to the
namespace, so a read gives the same samples here as in the Numba kernels (up to a last-bit
difference of ``exp``, which changes a decision with probability ~1e-10 per proposal).
"""
import math

import numpy as np

from .._lib import _prng, to_host
from ._anneal_groups import GROUP, RUNNING, update_stops

_TWO53_INV = 1.0 / 9007199254740992.0


def _mix(z):
    """SplitMix64's finalizer on uint64 arrays (numpy twin of ``_lib._prng``'s)."""
    z = (z ^ (z >> np.uint64(30))) * _prng._M1
    z = (z ^ (z >> np.uint64(27))) * _prng._M2
    return z ^ (z >> np.uint64(31))


def stream_starts(base, first, n_reads):
    """Stream starts of reads ``first, ..., first + n_reads - 1`` (uint64; the bits of
    ``_lib._prng.stream_start`` per read, which the Numba and CuPy chains use too)."""
    index = np.arange(first, first + n_reads, dtype=np.uint64)
    return _mix(np.full(n_reads, base, dtype=np.uint64) + index * _prng.GOLDEN)


def stream_uniforms(starts, counter, n):
    """``(len(starts), n)`` uniforms: outputs ``counter, ..., counter + n - 1`` of each
    stream (numpy's uint64 arithmetic on arrays wraps around, as the kernels' does)."""
    steps = np.arange(1, n + 1, dtype=np.uint64) + np.uint64(counter)
    z = _mix(starts[:, None] + steps[None, :] * _prng.GOLDEN)
    return ((z >> np.uint64(11)).astype(np.float64) + 0.5) * _TWO53_INV


class GenericChains:
    """The reads of one annealing run as ``xp`` arrays (see ``NumbaChains``).

    ``W`` must be dense (an ``xp`` array of namespace ``xp``); ``single`` is ignored (the
    dtype of ``W`` is used).
    """

    @staticmethod
    def prepare(a, W, single=False, xp=None):
        return (a, W)

    def __init__(self, a, W, c0, X0, base, first=0, single=False, xp=None, prepared=None):
        if prepared is not None:
            a, W = prepared
        self.xp = xp
        self.W = W
        self.a = a
        self.c0 = float(c0)
        self.dtype = W.dtype
        host = np.float64 if self.dtype == xp.float64 else np.float32
        self.host = host
        self.n_reads, self.n = X0.shape
        self.X = xp.asarray(X0.astype(host))
        self.H = a + xp.matmul(self.X, W)
        self.E = xp.sum(self.X * a, axis=1) + 0.5 * xp.sum(self.X * (self.H - a), axis=1)
        self.starts = stream_starts(int(base), int(first), self.n_reads)
        self.group = np.arange(self.n_reads) // GROUP
        self.stops = np.full(-(-self.n_reads // GROUP), RUNNING, dtype=np.int64)
        self.t = 0
        self.zero = xp.asarray(0.0, dtype=self.dtype)

    def sweep(self, betas, target=None):
        for beta in np.asarray(betas, dtype=np.float64):
            running = self.stops[self.group] == RUNNING
            if running.any():
                self._sweep(float(beta), self.xp.asarray(running))
            self.t += 1
            if target is not None:
                self._check(float(target) - self.c0)

    def _sweep(self, beta, running):
        xp, W, zero = self.xp, self.W, self.zero
        X, H, E = self.X, self.H, self.E
        U = xp.asarray(stream_uniforms(self.starts, self.t * self.n, self.n)
                       .astype(self.host))
        for i in range(self.n):
            xi = X[:, i]
            step = 1.0 - 2.0 * xi
            d = step * H[:, i]
            if math.isinf(beta):
                accept = d <= 0.0
            else:
                accept = (d <= 0.0) | (U[:, i] < xp.exp(xp.minimum(-beta * d, zero)))
            accept = accept & running
            move = xp.where(accept, step, zero)
            E = E + xp.where(accept, d, zero)
            X[:, i] = xi + move
            H = H + move[:, None] * W[i, :][None, :]
        self.X, self.H, self.E = X, H, E

    def _check(self, goal):
        update_stops(self.stops, np.asarray(to_host(self.E <= goal), dtype=bool), self.t)

    def descend(self):
        xp, W, X, H = self.xp, self.W, self.X, self.H
        n = X.shape[1]
        for _ in range(10 * n + 10 if n else 0):
            D = (1.0 - 2.0 * X) * H
            best = xp.min(D, axis=1)
            if not bool(xp.any(best < 0.0)):
                break
            arg = xp.argmin(D, axis=1)
            onehot = xp.astype(xp.arange(n)[None, :] == arg[:, None], X.dtype)
            move = xp.where(best < 0.0, xp.sum(onehot * (1.0 - 2.0 * X), axis=1), self.zero)
            X = X + move[:, None] * onehot
            H = H + move[:, None] * xp.matmul(onehot, W)
        self.X, self.H = X, H

    def fields_of(self, X):
        return self.a + self.xp.matmul(self.xp.astype(X, self.dtype), self.W)

    def current(self):
        xp = self.xp
        return xp.astype(self.X, xp.int8), self.c0 + self.E

    def finish(self):
        xp, X = self.xp, self.X
        energies = (self.c0 + xp.sum(X * self.a, axis=1)
                    + 0.5 * xp.sum(X * xp.matmul(X, self.W), axis=1))
        return xp.astype(X, xp.int8), energies
