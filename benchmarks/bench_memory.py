"""asv benchmarks for the Gaussian dense associative memory and its Bures kernels.

``time_retrieve_*``: batched retrieval per backend on the full path (N patterns, d, Q
queries) and on the diagonal fast path (matrix products; the backends differ in the
log-sum-exp kernel; 1000 queries x 10^4 patterns is measured by
``benchmarks/peers/dam_vs_pot.py``); ``time_barycenter``: Álvarez-Esteban barycenter;
``track_retrieval_rate``: fraction of perturbed patterns retrieved on the synthetic
protocol (commuting patterns, beta = 1); ``track_full_retrieval_rate``: the same on the
full path. ``peakmem_*``: the chunked Bures distance matrix (the generic path holds at
most one block of the (Q, N, d, d) pair stack, 32 MB, where the whole stack is 84 MB) and
a full-path retrieval. The ``cupy`` backend is a parameter only where a GPU is usable.
"""
import numpy as np

from benchmarks._common import pin_blas_threads
from solvers import GaussianMemory
from solvers._lib.backend import gpu_available
from solvers.memory import synthetic_patterns, perturb, retrieval_rate
from solvers.transport import bures_wasserstein_barycenter, bures_wasserstein_cdist

BACKENDS = ["numba", "numpy"] + (["cupy"] if gpu_available() else [])


class FullRetrieval:
    params = (BACKENDS, [(100, 8, 10), (200, 16, 4)])
    param_names = ["backend", "N_d_Q"]
    timeout = 120

    def setup(self, backend, N_d_Q):
        pin_blas_threads()
        N, d, Q = N_d_Q
        self.m, self.S = synthetic_patterns(N, d, commuting=False, eig_range=(0.5, 2.0),
                                            rng=0)
        self.m *= 2.0
        self.qm, self.qS = perturb(self.m[:Q], self.S[:Q], 0.5, rng=1)
        self.mem = GaussianMemory(self.m, self.S, beta=1.0, backend=backend)
        self.mem.retrieve(self.qm[:1], self.qS[:1], maxiter=2)  # Numba warm-up

    def time_retrieve_full(self, backend, N_d_Q):
        self.mem.retrieve(self.qm, self.qS, maxiter=20)

    def time_step_full(self, backend, N_d_Q):
        self.mem.step(self.qm, self.qS)

    def peakmem_retrieve_full(self, backend, N_d_Q):
        self.mem.retrieve(self.qm, self.qS, maxiter=20)

    def track_full_retrieval_rate(self, backend, N_d_Q):
        Q = self.qm.shape[0]
        res = self.mem.retrieve(self.qm, self.qS, maxiter=100)
        return retrieval_rate(self.mem, res, np.arange(Q))[0]

    track_full_retrieval_rate.unit = "fraction"


class ChunkedCdist:
    """Exact W2^2 of 20 queries to 2000 Gaussians at d = 16 (the pair stack is 84 MB)."""

    params = (BACKENDS,)
    param_names = ["backend"]
    timeout = 120

    def setup(self, backend):
        pin_blas_threads()
        self.m, self.S = synthetic_patterns(2000, 16, commuting=False, rng=0)
        self.qm, self.qS = perturb(self.m[:20], self.S[:20], 0.5, rng=1)
        bures_wasserstein_cdist(self.qm[:1], self.qS[:1], self.m[:2], self.S[:2],
                                backend=backend)

    def time_cdist(self, backend):
        bures_wasserstein_cdist(self.qm, self.qS, self.m, self.S, backend=backend)

    def peakmem_cdist(self, backend):
        bures_wasserstein_cdist(self.qm, self.qS, self.m, self.S, backend=backend)


class DiagonalRetrieval:
    params = (BACKENDS, [1000, 10000], [16, 64], [100])
    param_names = ["backend", "N", "d", "Q"]
    timeout = 120

    def setup(self, backend, N, d, Q):
        pin_blas_threads()
        rng = np.random.default_rng(0)
        self.m, self.v = rng.normal(size=(N, d)), rng.uniform(0.5, 2.0, (N, d))
        self.qm, self.qv = perturb(self.m[:Q], self.v[:Q], 0.3, rng=1)
        self.mem = GaussianMemory(self.m, self.v, beta=1.0, backend=backend)
        self.mem.retrieve(self.qm[:1], self.qv[:1], maxiter=1)  # Numba warm-up (LSE)

    def time_retrieve_diagonal(self, backend, N, d, Q):
        self.mem.retrieve(self.qm, self.qv)

    def peakmem_retrieve_diagonal(self, backend, N, d, Q):
        self.mem.retrieve(self.qm, self.qv)


class Barycenter:
    params = ([16, 64],)
    param_names = ["d"]
    timeout = 120

    def setup(self, d):
        pin_blas_threads()
        rng = np.random.default_rng(0)
        A = rng.normal(size=(50, d, d)) / np.sqrt(d)
        self.S = A @ A.transpose(0, 2, 1) + 0.5 * np.eye(d)
        self.m = rng.normal(size=(50, d))
        bures_wasserstein_barycenter(self.m[:2], self.S[:2])

    def time_barycenter(self, d):
        bures_wasserstein_barycenter(self.m, self.S, tol=1e-10)


class Protocol:
    """The synthetic protocol on the commuting fast path (N = 5000, d = 25, beta = 1)."""

    timeout = 300

    def setup(self):
        pin_blas_threads()
        N, d = 5000, 25
        self.m, self.S = synthetic_patterns(N, d, commuting=True, rng=0)
        self.idx = np.random.default_rng(1).choice(N, 200, replace=False)
        self.qm, self.qS = perturb(self.m[self.idx], self.S[self.idx], 1.0, commuting=True,
                                   rng=2)
        self.mem = GaussianMemory(self.m, self.S, beta=1.0)

    def track_retrieval_rate(self):
        res = self.mem.retrieve(self.qm, self.qS)
        return retrieval_rate(self.mem, res, self.idx)[0]

    track_retrieval_rate.unit = "fraction"
