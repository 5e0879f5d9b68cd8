"""The generic annealer: all reads at once, bit by bit, in any Array API namespace.

The reference the Numba and CuPy chains are tested against (same interface). Uniforms are
drawn on the host from a generator seeded by ``(base, first)`` and moved to the namespace,
so the result is identical on every namespace.
"""
import math

import numpy as np

from .._lib import Draws


class GenericChains:
    """The reads of one annealing run as ``xp`` arrays (see ``NumbaChains``).

    ``W`` must be dense (an ``xp`` array of namespace ``xp``); ``single`` is ignored (the
    dtype of ``W`` is used).
    """

    def __init__(self, a, W, c0, X0, base, first=0, single=False, xp=None):
        self.xp = xp
        self.W = W
        self.a = a
        self.c0 = float(c0)
        self.dtype = W.dtype
        host = np.float64 if self.dtype == xp.float64 else np.float32
        self.X = xp.asarray(X0.astype(host))
        self.H = a + xp.matmul(self.X, W)
        self.draws = Draws(np.random.default_rng([int(base), int(first)]), xp)
        self.zero = xp.asarray(0.0, dtype=self.dtype)

    def sweep(self, betas):
        xp, W, zero = self.xp, self.W, self.zero
        n_reads, n = self.X.shape
        X, H = self.X, self.H
        for beta in np.asarray(betas, dtype=np.float64):
            beta = float(beta)
            U = self.draws.uniform(0.0, 1.0, (n_reads, n), dtype=self.dtype)
            for i in range(n):
                xi = X[:, i]
                step = 1.0 - 2.0 * xi
                d = step * H[:, i]
                if math.isinf(beta):
                    accept = d <= 0.0
                else:
                    accept = (d <= 0.0) | (U[:, i] < xp.exp(xp.minimum(-beta * d, zero)))
                move = xp.where(accept, step, zero)
                X[:, i] = xi + move
                H = H + move[:, None] * W[i, :][None, :]
        self.X, self.H = X, H

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

    def current(self):
        xp = self.xp
        return (xp.astype(self.X, xp.int8),
                self.c0 + 0.5 * xp.sum(self.X * (self.a + self.H), axis=1))

    def finish(self):
        xp, X = self.xp, self.X
        energies = (self.c0 + xp.sum(X * self.a, axis=1)
                    + 0.5 * xp.sum(X * xp.matmul(X, self.W), axis=1))
        return xp.astype(X, xp.int8), energies
