"""CuPy path of the annealer: one GPU thread per read (imported lazily, only on a GPU).

The kernel is the Numba kernel transcribed: sequential sweeps over the bits, Metropolis
acceptance, the same counter-based stream per read (:mod:`solvers._lib._prng`, so a read
sees the same random numbers as on the CPU), then optional steepest descent. ``X`` and
``H`` are stored transposed, ``(n, n_reads)``, so the threads of a warp touch consecutive
addresses when they update the same bit of their fields.
"""
import numpy as np

from .._lib._prng import CUDA_SOURCE as _PRNG_SOURCE

SOURCE = _PRNG_SOURCE + r"""
extern "C" __global__ void anneal_dense(const double* W, const int n, const double* betas,
                                        const int n_betas, signed char* X, double* H,
                                        unsigned long long* states, const int n_reads,
                                        const int polish)
{
    const int r = blockDim.x * blockIdx.x + threadIdx.x;
    if (r >= n_reads) return;
    unsigned long long s = states[r];
    for (int t = 0; t < n_betas; ++t) {
        const double beta = betas[t];
        for (int i = 0; i < n; ++i) {
            const signed char xi = X[(size_t)i * n_reads + r];
            const double hi = H[(size_t)i * n_reads + r];
            const double d = (xi == 0) ? hi : -hi;
            bool accept = d <= 0.0;
            if (!accept && beta * d < 40.0) {
                accept = prng_next_uniform(&s) < exp(-beta * d);
            }
            if (accept) {
                const double sign = (xi == 0) ? 1.0 : -1.0;
                X[(size_t)i * n_reads + r] = (signed char)(1 - xi);
                const double* row = W + (size_t)i * n;
                for (int j = 0; j < n; ++j) H[(size_t)j * n_reads + r] += sign * row[j];
            }
        }
    }
    states[r] = s;
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

    def __init__(self, a, W, c0, X0, base, first=0, single=False, xp=None):
        import cupy
        import scipy.sparse as sps

        from ._anneal_numba import start_states

        W = W.toarray() if sps.issparse(W) else W
        self.W = cupy.ascontiguousarray(cupy.asarray(W, dtype=cupy.float64))
        self.a = cupy.asarray(a, dtype=cupy.float64)
        self.c0 = float(c0)
        self.n_reads, self.n = X0.shape
        self.Xt = cupy.ascontiguousarray(cupy.asarray(np.ascontiguousarray(X0.T),
                                                      dtype=cupy.int8))
        self.Ht = cupy.ascontiguousarray(self.a[:, None]
                                         + self.W @ self.Xt.astype(cupy.float64))
        self.states = cupy.asarray(start_states(np.uint64(base), np.int64(first),
                                                self.n_reads))

    def _launch(self, betas, polish):
        import cupy

        b = cupy.asarray(np.ascontiguousarray(betas, dtype=np.float64))
        grid = ((self.n_reads + THREADS - 1) // THREADS,)
        _kernel()(grid, (THREADS,), (self.W, np.int32(self.n), b, np.int32(b.shape[0]),
                                      self.Xt, self.Ht, self.states, np.int32(self.n_reads),
                                      np.int32(polish)))

    def sweep(self, betas):
        self._launch(betas, False)

    def descend(self):
        self._launch(np.empty(0), True)

    def current(self):
        import cupy

        X = cupy.ascontiguousarray(self.Xt.T)
        Xf = X.astype(cupy.float64)
        return X, self.c0 + 0.5 * cupy.sum(Xf * (self.a + self.Ht.T), axis=1)

    def finish(self):
        import cupy

        X = cupy.ascontiguousarray(self.Xt.T)
        Xf = X.astype(cupy.float64)
        return X, self.c0 + Xf @ self.a + 0.5 * cupy.sum(Xf * (Xf @ self.W), axis=1)
