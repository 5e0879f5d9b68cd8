"""asv benchmarks for the QUBO area.

- ``Moments`` / ``MomentsSparse``: exact variance time vs n, dense (numpy) and sparse
  (scipy, ~10 nonzeros per row), uniform and fixed-Hamming-weight measures;
- ``Anneal``: one ``minimize_qubo`` call per backend on a dense n = 200 instance, and the
  sweeps per second it sustains (``track_sweeps_per_second``, read-sweeps per second; the
  cupy parameter appears where a GPU is usable, results come back to the host so the
  timing includes the device work);
- ``AnnealSparse``: the CSR kernel (reads in lockstep groups of 8) on a +-1 torus of 2000
  spins and a random +-1 graph (n = 800, 6% density): one call, and the CPU nanoseconds
  per spin-flip attempt (``track_ns_per_flip_attempt``, fixed costs subtracted);
- ``AnnealQuality``: share of random n = 16 instances whose enumerated optimum is found.
"""
import itertools
import time

import numpy as np
import scipy.sparse as sps

from benchmarks._common import pin_blas_threads
from solvers import minimize_qubo, qubo_moments
from solvers._lib.backend import gpu_available

_BACKENDS = ["numba", "numpy"] + (["cupy"] if gpu_available() else [])


class Moments:
    """Dense moments (numpy)."""

    params = ([300, 1000, 3000], ["uniform", "weight"])
    param_names = ["n", "measure"]
    kind = "dense"

    def setup(self, n, measure):
        pin_blas_threads()
        rng = np.random.default_rng(0)
        if self.kind == "dense":
            self.Q = rng.normal(size=(n, n))
        else:
            self.Q = sps.random(n, n, density=10.0 / n, random_state=rng, format="csr")
        self.c = rng.normal(size=n)
        self.kw = {} if measure == "uniform" else {"weight": n // 10}

    def time_variance(self, n, measure):
        qubo_moments(self.Q, self.c, **self.kw)


class MomentsSparse(Moments):
    """Sparse moments (scipy CSR, about 10 nonzeros per row, general pattern)."""

    params = ([1000, 10000, 100000], ["uniform", "weight"])
    kind = "sparse"


class Anneal:
    params = (_BACKENDS,)
    param_names = ["backend"]
    n, reads, sweeps = 200, 8, 50

    def setup(self, backend):
        pin_blas_threads()
        Q = np.random.default_rng(1).normal(size=(self.n, self.n))
        self.Q = (Q + Q.T) / 2
        minimize_qubo(self.Q[:20, :20], n_reads=2, n_sweeps=2, rng=0, backend=backend)

    def time_anneal(self, backend):
        minimize_qubo(self.Q, n_reads=self.reads, n_sweeps=self.sweeps, rng=0,
                      backend=backend)

    def track_sweeps_per_second(self, backend):
        t = time.perf_counter()
        minimize_qubo(self.Q, n_reads=self.reads, n_sweeps=self.sweeps, rng=0,
                      backend=backend, polish=False)
        return self.reads * self.sweeps / (time.perf_counter() - t)

    track_sweeps_per_second.unit = "read-sweeps/s"


def _torus(rows, cols, rng):
    idx = np.arange(rows * cols).reshape(rows, cols)
    i = np.concatenate([idx.ravel(), idx.ravel()])
    j = np.concatenate([np.roll(idx, -1, 0).ravel(), np.roll(idx, -1, 1).ravel()])
    w = rng.choice([-1.0, 1.0], i.size)
    return sps.csr_matrix((w, (i, j)), shape=(rows * cols, rows * cols))


def _random_graph(n, p, rng):
    J = np.triu(rng.choice([-1.0, 1.0], size=(n, n)) * (rng.random((n, n)) < p), 1)
    return sps.csr_matrix(J)


class AnnealSparse:
    params = (["torus2000", "graph800"],)
    param_names = ["instance"]
    reads = 8

    def setup(self, instance):
        pin_blas_threads()
        rng = np.random.default_rng(3)
        self.J = _torus(40, 50, rng) if instance == "torus2000" else _random_graph(800, 0.06,
                                                                                  rng)
        self.kw = dict(vartype="spin", n_reads=self.reads, polish=False, rng=0,
                       beta_range=(0.1, 3.0))
        minimize_qubo(self.J, n_sweeps=2, **self.kw)

    def time_anneal(self, instance):
        minimize_qubo(self.J, n_sweeps=200, **self.kw)

    def track_ns_per_flip_attempt(self, instance):
        def cpu(sweeps):
            t = time.process_time()
            minimize_qubo(self.J, n_sweeps=sweeps, **self.kw)
            return time.process_time() - t

        extra = min(cpu(300) for _ in range(3)) - min(cpu(50) for _ in range(3))
        return extra / (self.reads * 250 * self.J.shape[0]) * 1e9

    track_ns_per_flip_attempt.unit = "ns"


class AnnealQuality:
    n, instances = 16, 10

    def setup(self):
        pin_blas_threads()
        rng = np.random.default_rng(2)
        X = np.array(list(itertools.product([0.0, 1.0], repeat=self.n)))
        self.cases = []
        for _ in range(self.instances):
            Q = rng.normal(size=(self.n, self.n))
            best = float(np.min(np.einsum("si,ij,sj->s", X, Q, X)))
            self.cases.append((Q, best))
        minimize_qubo(self.cases[0][0], n_reads=2, n_sweeps=2, rng=0)

    def track_success_rate(self):
        hits = sum(abs(minimize_qubo(Q, n_reads=4, n_sweeps=100, rng=i).fun - best) < 1e-9
                   for i, (Q, best) in enumerate(self.cases))
        return hits / self.instances

    track_success_rate.unit = "fraction"


if __name__ == "__main__":
    # python -m benchmarks.bench_qubo: CPU time of each moments case (load-independent)
    for cls in (Moments, MomentsSparse):
        for n, measure in itertools.product(*cls.params):
            bench = cls()
            bench.setup(n, measure)
            bench.time_variance(n, measure)
            start = time.process_time()
            for _ in range(20):
                bench.time_variance(n, measure)
            print(f"moments {cls.kind:6s} n={n:6d} {measure:8s} "
                  f"{(time.process_time() - start) / 20 * 1e3:7.2f} ms CPU")
