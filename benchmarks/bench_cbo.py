"""asv benchmarks for consensus-based optimization.

``time_steps``: 20 steps of one start of ``minimize_cbo`` (objective, draws and the
kernels; no restarts, no polish) on shifted Rastrigin, per backend, noise and (N, d, M);
divide by 20 for the per-step time.
``track_success_*``: success rate (sup-norm distance < 0.25) of the defaults over 20
batched seeded runs on shifted Rastrigin and Ackley in d = 20 (80k evaluations per run).
``track_log10_error_rotated_ellipsoid10[_covariance]``: log10(f - f*) of the defaults (and of
``noise="covariance"``) on a rotated
ellipsoid (condition 1e6, d = 10, 20 000 evaluations): covariance noise, restarts and
polish together.
"""
import math

import numpy as np

from benchmarks._common import pin_blas_threads
from solvers import minimize_cbo

D = 20
SHIFT = np.random.default_rng(2024).uniform(-2.0, 2.0, D)


def rastrigin(x, shift):
    z = x - shift[:, None]
    return 10.0 * z.shape[0] + np.sum(z * z - 10.0 * np.cos(2 * np.pi * z), axis=0)


def ackley(x, shift):
    z = x - shift[:, None]
    return (-20.0 * np.exp(-0.2 * np.sqrt(np.mean(z * z, axis=0)))
            - np.exp(np.mean(np.cos(2 * np.pi * z), axis=0)) + 20.0 + math.e)


class CBOStep:
    params = (["numba", "numpy", "cupy"], ["anisotropic", "covariance"],
              [(40, 20, 1), (40, 20, 100), (400, 20, 1), (40, 100, 1)])
    param_names = ["backend", "noise", "N_d_M"]

    def setup(self, backend, noise, N_d_M):
        pin_blas_threads()
        if backend == "cupy":
            from solvers._lib.backend import gpu_available

            if not gpu_available():
                raise NotImplementedError("no usable GPU")  # asv: skipped
        N, d, M = N_d_M
        self.shift = np.linspace(-1.0, 1.0, d)
        self.kw = dict(bounds=[(-3.0, 3.0)] * d, args=(self.shift,), vectorized=True,
                       n_particles=N, n_runs=M, xtol=0.0, rng=0, backend=backend,
                       noise=noise, restarts=False, polish=False)
        minimize_cbo(rastrigin, maxiter=2, **self.kw)  # compile / load the Numba cache

    def time_steps(self, backend, noise, N_d_M):
        minimize_cbo(rastrigin, maxiter=20, **self.kw)


class CBOSuccess:
    timeout = 300
    unit = "successes of 20"

    def setup(self):
        pin_blas_threads()

    def _rate(self, f, seed):
        res = minimize_cbo(f, bounds=[(-3.0, 3.0)] * D, args=(SHIFT,), vectorized=True,
                           n_runs=20, rng=seed)
        return int(np.sum(np.max(np.abs(res.x_runs - SHIFT), axis=1) < 0.25))

    def track_success_rastrigin20(self):
        return self._rate(rastrigin, 0)

    def track_success_ackley20(self):
        return self._rate(ackley, 1)


class CBOBlackBox:
    timeout = 120
    unit = "log10(f - f*)"

    def setup(self):
        pin_blas_threads()
        rng = np.random.default_rng(7)
        self.Q, _ = np.linalg.qr(rng.normal(size=(10, 10)))
        self.scales = np.logspace(0, 6, 10)
        self.xopt = rng.uniform(-4.0, 4.0, 10)

    def _ellipsoid(self, x):
        z = self.Q @ (x - self.xopt[:, None])
        return np.sum(self.scales[:, None] * z * z, axis=0)

    def track_log10_error_rotated_ellipsoid10(self):
        res = minimize_cbo(self._ellipsoid, bounds=[(-5.0, 5.0)] * 10, vectorized=True,
                           maxfev=20_000, rng=0)
        return float(np.log10(max(res.fun, 1e-300)))

    def track_log10_error_rotated_ellipsoid10_covariance(self):
        res = minimize_cbo(self._ellipsoid, bounds=[(-5.0, 5.0)] * 10, vectorized=True,
                           maxfev=20_000, noise="covariance", rng=0)
        return float(np.log10(max(res.fun, 1e-300)))
