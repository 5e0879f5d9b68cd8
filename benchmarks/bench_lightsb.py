"""asv benchmarks for LightSB (``solvers.schrodinger_bridge``).

``time_fit``: full-batch L-BFGS fit (default optimizer, 60 iterations cap) on a benchmark pair
with 4000 samples per side, per backend, dimension and epsilon. ``track_cbw_uvp``: the exact-
moment cBW2-UVP (%) of that fit. ``time_sample``: 20 000 exact conditional samples.
``peakmem_fit``: the fit's peak memory (the loss streams the samples in row blocks, so it
stays far below the (n, K, D) intermediates); ``peakmem_fit_full``: the same with full S
(blocks of vec(x x^T)). ``LightSBSearch``: the default candidate search without an
iteration cap (time, cBW2-UVP, iterations of all candidates). LightSB has no CuPy kernel:
on cupy the generic code runs (``gpu/bench.py`` times it).
"""
import numpy as np

from benchmarks._common import pin_blas_threads
from solvers import schrodinger_bridge
from solvers.transport.benchmark import make_pair, cbw_uvp


class LightSBFit:
    params = (["numba", "numpy"], [2, 16], [0.1, 1.0, 10.0])
    param_names = ["backend", "dim", "epsilon"]
    timeout = 120

    def setup(self, backend, dim, epsilon):
        pin_blas_threads()
        self.pair = make_pair(dim, epsilon, rng=0)
        rng = np.random.default_rng(1)
        self.x0 = self.pair.sample_x0(4000, rng)
        self.x1 = self.pair.sample_x1(4000, rng)
        self.xt = self.pair.sample_x0(200, np.random.default_rng(2))
        schrodinger_bridge(self.x0[:200], self.x1[:200], epsilon, maxiter=2, backend=backend,
                           rng=0)  # compile / load the Numba cache

    def _fit(self, backend, epsilon):
        return schrodinger_bridge(self.x0, self.x1, epsilon, maxiter=60, backend=backend, rng=0)

    def time_fit(self, backend, dim, epsilon):
        self._fit(backend, epsilon)

    def track_cbw_uvp(self, backend, dim, epsilon):
        return cbw_uvp(self._fit(backend, epsilon), self.pair, x=self.xt, exact=True)

    track_cbw_uvp.unit = "%"

    def peakmem_fit(self, backend, dim, epsilon):
        self._fit(backend, epsilon)


class LightSBFitFull:
    """Full S on a rotated pair, D = 16, 20 000 samples per side, 20 L-BFGS iterations."""

    params = (["numba", "numpy"],)
    param_names = ["backend"]
    timeout = 180

    def setup(self, backend):
        pin_blas_threads()
        self.pair = make_pair(16, 1.0, rotated=True, rng=0)
        rng = np.random.default_rng(1)
        self.x0, self.x1 = self.pair.sample_x0(20_000, rng), self.pair.sample_x1(20_000, rng)

    def _fit(self, backend):
        return schrodinger_bridge(self.x0, self.x1, 1.0, covariance="full", n_components=8,
                                  init="kmeans++", maxiter=20, backend=backend, rng=0)

    def peakmem_fit_full(self, backend):
        self._fit(backend)

    def track_cbw_uvp_full(self, backend):
        xt = self.pair.sample_x0(200, np.random.default_rng(2))
        return cbw_uvp(self._fit(backend), self.pair, x=xt, exact=True)

    track_cbw_uvp_full.unit = "%"


class LightSBSample:
    params = (["numba", "numpy"], [2, 64])
    param_names = ["backend", "dim"]

    def setup(self, backend, dim):
        pin_blas_threads()
        pair = make_pair(dim, 1.0, rng=0)
        from solvers.transport import bridge_from_parameters

        sb = pair.bridge()
        self.sb = bridge_from_parameters(sb.log_alpha, sb.r, sb.S, 1.0, backend=backend)
        self.x = pair.sample_x0(1000, np.random.default_rng(0))
        self.sb.sample(self.x[:5], 2, rng=0)

    def time_sample(self, backend, dim):
        self.sb.sample(self.x, 20, rng=0)


class LightSBSearch:
    """The default candidate search (split path, then the k-means++ start, dropped when it
    cannot overtake) on a recipe pair, D = 16, 20 000 samples per side, no iteration cap:
    its time, its error and how many iterations each candidate ran."""

    params = ([0.1, 1.0],)
    param_names = ["epsilon"]
    timeout = 300

    def setup(self, epsilon):
        pin_blas_threads()
        self.pair = make_pair(16, epsilon, rng=0)
        rng = np.random.default_rng(1)
        self.x0, self.x1 = self.pair.sample_x0(20_000, rng), self.pair.sample_x1(20_000, rng)
        self.xt = self.pair.sample_x0(200, np.random.default_rng(2))
        schrodinger_bridge(self.x0[:500], self.x1[:500], epsilon, maxiter=2, rng=0)

    def _fit(self, epsilon):
        return schrodinger_bridge(self.x0, self.x1, epsilon, rng=0)

    def time_search(self, epsilon):
        self._fit(epsilon)

    def track_search_cbw_uvp(self, epsilon):
        return cbw_uvp(self._fit(epsilon), self.pair, x=self.xt, exact=True)

    track_search_cbw_uvp.unit = "%"

    def track_search_nit(self, epsilon):
        return self._fit(epsilon).nit

    track_search_nit.unit = "iterations"
