"""asv benchmarks for DP-DAG.

``time_sample`` draws 1000 DAGs per call (so DAGs per second = 1000 / time) for d = 10,
50, 100, 200 on every backend (Numba kernel, generic numpy, CuPy where a GPU is usable);
the reference implementation needs 1.66 ms per DAG at d = 100. ``track_shd_er2_d20``
is the SHD of VI-DP-DAG (library defaults, 1500 steps to fit the CI budget) on one
linear-Gaussian ER2 graph, d = 20, n = 1000 (seed 100), and ``track_shd_er2_d20_elbo``
the same with one ELBO for every parameter (``order_objective="elbo"``,
``support="edges"``).
"""
import numpy as np

from benchmarks._common import pin_blas_threads
from solvers._lib.backend import gpu_available
from solvers.dag.dpdag import DPDAG

_BACKENDS = ["numba", "numpy"] + (["cupy"] if gpu_available() else [])


class DPDAGSampling:
    params = (_BACKENDS, [10, 50, 100, 200])
    param_names = ["backend", "d"]

    def setup(self, backend, d):
        pin_blas_threads()
        rng = np.random.default_rng(d)
        self.model = DPDAG(rng.normal(size=d), rng.normal(size=(d, d)))
        self.model.sample_dags(10, rng=0, backend=backend)  # compile / load cache / warm GPU

    def time_sample(self, backend, d):
        self.model.sample_dags(1000, rng=1, backend=backend)

    def track_dags_per_second(self, backend, d):
        import time

        best = np.inf
        for rep in range(3):
            t = time.perf_counter()
            self.model.sample_dags(1000, rng=rep, backend=backend)
            best = min(best, time.perf_counter() - t)
        return 1000 / best

    track_dags_per_second.unit = "DAGs/s"


class VIDPDAG:
    timeout = 120

    def setup(self):
        pin_blas_threads()
        from solvers.dag import simulate_data

        self.X, _, self.B = simulate_data(d=20, n=1000, k=2, rng=100)

    def track_shd_er2_d20(self):
        from solvers.dag import learn_dag, shd

        return shd(self.B, learn_dag(self.X, method="dpdag", rng=0, maxiter=1500).adjacency)

    def track_shd_er2_d20_elbo(self):
        from solvers.dag import learn_dag, shd

        res = learn_dag(self.X, method="dpdag", rng=0, maxiter=1500, order_objective="elbo",
                        support="edges")
        return shd(self.B, res.adjacency)

    track_shd_er2_d20.unit = "SHD"
    track_shd_er2_d20_elbo.unit = "SHD"
