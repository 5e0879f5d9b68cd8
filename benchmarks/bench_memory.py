"""asv benchmarks for the Gaussian dense associative memory and its Bures kernels.

``time_retrieve_*``: batched retrieval per backend on the full path (N patterns, d, Q
queries) and on the diagonal fast path (matrix products; the backends differ in the
log-sum-exp kernel; 1000 queries x 10^4 patterns is measured by
``benchmarks/peers/dam_vs_pot.py``); ``time_barycenter``: Álvarez-Esteban barycenter;
``track_retrieval_rate``: fraction of perturbed patterns retrieved on the synthetic
protocol (commuting patterns, beta = 1).
"""
import numpy as np

from benchmarks._common import pin_blas_threads
from solvers import GaussianMemory
from solvers.memory import synthetic_patterns, perturb, retrieval_rate
from solvers.transport import bures_wasserstein_barycenter


class FullRetrieval:
    params = (["numba", "numpy"], [(100, 8, 10), (200, 16, 4)])
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


class DiagonalRetrieval:
    params = (["numba", "numpy"], [1000, 10000], [16, 64], [100])
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
