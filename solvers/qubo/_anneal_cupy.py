"""CuPy path of the annealer: one GPU thread per read (imported lazily, only on a GPU).

The kernel is the Numba dense kernel transcribed: sequential sweeps over the bits,
Metropolis acceptance with the uniform of proposal ``i`` of sweep ``t`` taken from position
``t n + i`` of the read's counter-based stream (:mod:`solvers._lib._prng`, so a read sees
the same random numbers as on the CPU), then optional steepest descent. ``X`` and ``H`` are
stored transposed, ``(n, n_reads)``, so the threads of a warp touch consecutive addresses
when they update the same bit of their fields. With a target energy the sweeps are
launched one at a time and the group bookkeeping (see :mod:`._anneal_kernels`) runs on the
host between launches on the ``n_reads`` tracked energies.
"""
import numpy as np

from .._lib._prng import CUDA_SOURCE as _PRNG_SOURCE
from ._anneal_groups import GROUP, RUNNING, update_stops

SOURCE = _PRNG_SOURCE + r"""
__device__ __forceinline__ double uniform_at(unsigned long long start, long long counter) {
    /* output number `counter` of the stream starting at `start` */
    const unsigned long long z = prng_stream_start(start, (unsigned long long)counter + 1ULL);
    return ((double)(z >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

extern "C" __global__ void anneal_dense(const double* W, const int n, const double* betas,
                                        const int n_betas, const long long t0,
                                        signed char* X, double* H, double* E,
                                        const unsigned long long* starts,
                                        const signed char* running, const int n_reads,
                                        const int polish)
{
    const int r = blockDim.x * blockIdx.x + threadIdx.x;
    if (r >= n_reads || !running[r]) return;
    const unsigned long long s = starts[r];
    double e = E[r];
    for (int t = 0; t < n_betas; ++t) {
        const double beta = betas[t];
        const long long counter = (t0 + t) * (long long)n;
        for (int i = 0; i < n; ++i) {
            const signed char xi = X[(size_t)i * n_reads + r];
            const double step = (xi == 0) ? 1.0 : -1.0;
            const double d = step * H[(size_t)i * n_reads + r];
            bool accept = d <= 0.0;
            if (!accept && beta * d < 40.0) {
                accept = uniform_at(s, counter + i) < exp(-beta * d);
            }
            if (accept) {
                e += d;
                X[(size_t)i * n_reads + r] = (signed char)(1 - xi);
                const double* row = W + (size_t)i * n;
                for (int j = 0; j < n; ++j) H[(size_t)j * n_reads + r] += step * row[j];
            }
        }
    }
    E[r] = e;
    if (!polish) return;
    for (int it = 0; it < 10 * n + 10; ++it) {
        double best = 0.0;
        int arg = -1;
        for (int i = 0; i < n; ++i) {
            const double hi = H[(size_t)i * n_reads + r];
            const double d = (X[(size_t)i * n_reads + r] == 0) ? hi : -hi;
            if (d < best) { best = d; arg = i; }
        }
        if (arg < 0) return;
        const signed char xa = X[(size_t)arg * n_reads + r];
        const double sign = (xa == 0) ? 1.0 : -1.0;
        X[(size_t)arg * n_reads + r] = (signed char)(1 - xa);
        const double* row = W + (size_t)arg * n;
        for (int j = 0; j < n; ++j) H[(size_t)j * n_reads + r] += sign * row[j];
    }
}
"""

_KERNEL = None
THREADS = 128


def _kernel():
    global _KERNEL
    if _KERNEL is None:
        import cupy

        _KERNEL = cupy.RawKernel(SOURCE, "anneal_dense")
    return _KERNEL


class CupyChains:
    """The reads of one annealing run on the GPU (same interface as ``NumbaChains``).

    ``W`` is dense (a sparse ``Q`` is densified); the fields are float64. Arrays stay on
    the device; ``current`` / ``finish`` return cupy arrays.
    """

    @staticmethod
    def prepare(a, W, single=False, xp=None):
        """``W`` and ``a`` on the device once (float64)."""
        import cupy
        import scipy.sparse as sps

        W = W.toarray() if sps.issparse(W) else W
        return (cupy.ascontiguousarray(cupy.asarray(W, dtype=cupy.float64)),
                cupy.asarray(a, dtype=cupy.float64))

    def __init__(self, a, W, c0, X0, base, first=0, single=False, xp=None, prepared=None):
        import cupy

        from ._anneal_generic import stream_starts

        self.W, self.a = self.prepare(a, W) if prepared is None else prepared
        self.c0 = float(c0)
        self.n_reads, self.n = X0.shape
        self.Xt = cupy.ascontiguousarray(cupy.asarray(np.ascontiguousarray(X0.T),
                                                      dtype=cupy.int8))
        self.Ht = cupy.ascontiguousarray(self.a[:, None]
                                         + self.W @ self.Xt.astype(cupy.float64))
        Xf = self.Xt.astype(cupy.float64)
        self.E = cupy.ascontiguousarray(
            cupy.sum(Xf * (self.a[:, None] + 0.5 * (self.Ht - self.a[:, None])), axis=0))
        self.starts = cupy.asarray(stream_starts(int(base), int(first), self.n_reads))
        self.stops = np.full(-(-self.n_reads // GROUP), RUNNING, dtype=np.int64)
        self.group = np.arange(self.n_reads) // GROUP
        self.t = 0

    def _launch(self, betas, polish, running):
        import cupy

        b = cupy.asarray(np.ascontiguousarray(betas, dtype=np.float64))
        grid = ((self.n_reads + THREADS - 1) // THREADS,)
        _kernel()(grid, (THREADS,), (self.W, np.int32(self.n), b, np.int32(b.shape[0]),
                                      np.int64(self.t), self.Xt, self.Ht, self.E,
                                      self.starts, cupy.asarray(running.astype(np.int8)),
                                      np.int32(self.n_reads), np.int32(polish)))

    def sweep(self, betas, target=None):
        import cupy

        if target is None:
            self._launch(betas, False, self.stops[self.group] == RUNNING)
            self.t += len(betas)
            return
        goal = float(target) - self.c0
        for beta in np.asarray(betas, dtype=np.float64):
            self._launch([beta], False, self.stops[self.group] == RUNNING)
            self.t += 1
            update_stops(self.stops, cupy.asnumpy(self.E <= goal), self.t)

    def descend(self):
        self._launch(np.empty(0), True, np.ones(self.n_reads, dtype=bool))

    def fields_of(self, X):
        import cupy

        return self.a + cupy.asarray(X, dtype=cupy.float64) @ self.W

    def current(self):
        import cupy

        return cupy.ascontiguousarray(self.Xt.T), self.c0 + self.E

    def finish(self):
        import cupy

        X = cupy.ascontiguousarray(self.Xt.T)
        Xf = X.astype(cupy.float64)
        return X, self.c0 + Xf @ self.a + 0.5 * cupy.sum(Xf * (Xf @ self.W), axis=1)
