"""CuPy path of the annealer: one GPU thread per read (imported lazily, only on a GPU).

The kernel is the Numba kernel transcribed: sequential sweeps over the bits, Metropolis
acceptance, the same xorshift64* stream per read (so a read sees the same random numbers as
on the CPU), then optional steepest descent. ``X`` and ``H`` are stored transposed,
``(n, n_reads)``, so the threads of a warp touch consecutive addresses when they update the
same bit of their fields.
"""
import numpy as np

SOURCE = r"""
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
                s ^= s >> 12;
                s ^= s << 25;
                s ^= s >> 27;
                const double u = (double)((s * 2685821657736338717ULL) >> 11)
                                 * (1.0 / 9007199254740992.0);
                accept = u < exp(-beta * d);
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


def _chunks(total, progress):
    if not progress:
        return [(0, total)]
    step = max(1, total // 50)
    return [(s, min(s + step, total)) for s in range(0, total, step)]


def run_cupy(be, a, W, c0, betas, X0, seeds, polish, progress):
    """Anneal on the GPU; returns (samples (n_reads, n) int8, energies) in ``be.xp``."""
    import cupy

    from solvers._lib import Progress

    kernel = _kernel()
    Wd = cupy.ascontiguousarray(cupy.asarray(W, dtype=cupy.float64))
    ad = cupy.asarray(a, dtype=cupy.float64)
    n_reads, n = X0.shape
    Xt = cupy.ascontiguousarray(cupy.asarray(X0.T, dtype=cupy.int8))
    Ht = cupy.ascontiguousarray(ad[:, None] + Wd @ Xt.astype(cupy.float64))
    states = cupy.asarray(np.asarray(seeds, dtype=np.uint64))
    grid = ((n_reads + THREADS - 1) // THREADS,)
    pieces = _chunks(betas.shape[0], progress)
    with Progress(betas.shape[0], "anneal", enabled=progress) as bar:
        for k, (lo, hi) in enumerate(pieces):
            last = bool(polish) and k == len(pieces) - 1
            b = cupy.asarray(np.ascontiguousarray(betas[lo:hi], dtype=np.float64))
            kernel(grid, (THREADS,), (Wd, np.int32(n), b, np.int32(hi - lo), Xt, Ht, states,
                                       np.int32(n_reads), np.int32(last)))
            bar.update(hi - lo)
    X = cupy.ascontiguousarray(Xt.T)
    Xf = X.astype(cupy.float64)
    energies = c0 + Xf @ ad + 0.5 * cupy.sum(Xf * (Xf @ Wd), axis=1)
    if be.moves_data:
        return cupy.asnumpy(X), cupy.asnumpy(energies)
    return X, energies
