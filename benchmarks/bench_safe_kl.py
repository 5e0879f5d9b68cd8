"""asv benchmarks for Safe-KL stochastic LogSumExp.

- ``SafeLogSumExp``: the deterministic surrogate (one Newton solve per row) next to the exact
  ``logsumexp`` on a (200, 20000) array, Numba kernel vs generic code.
- ``EpochTime``: one epoch of ``minimize_logsumexp`` (Safe-KL estimator) on the 20k-row KL-DRO
  logistic problem, per batch size and backend (``cupy`` moves the data to the GPU; skipped
  without one).
- ``DROGap``: relative optimality gap (percent) of the KL-DRO objective after a fixed budget
  of 5 epochs (100k per-sample loss evaluations) for Safe-KL, the naive minibatch softmax
  estimator, and full-batch L-BFGS limited to 5 gradient evaluations (its best value
  among them).
"""
import numpy as np

from benchmarks._common import pin_blas_threads
from solvers import logsumexp, safe_logsumexp
from solvers._lib.backend import gpu_available
try:
    from solvers.lse import dro_dataset, kl_dro, kl_dro_objective
except ImportError:  # versions that exported them from solvers.lse.applications
    from solvers.lse.applications import dro_dataset, kl_dro, kl_dro_objective


def full_batch_best(X, y, passes, lam=0.3, loss="logistic"):
    """Best exact objective among the first ``passes`` evaluations of full-batch L-BFGS
    (each evaluation touches every term once: one epoch)."""
    from scipy.optimize import minimize

    seen = []

    def fun(theta):
        value, grad = kl_dro_objective(theta, X, y, lam=lam, loss=loss)
        seen.append(value)
        return value, grad

    minimize(fun, np.zeros(X.shape[1]), jac=True, method="L-BFGS-B",
             options={"maxfun": passes + 2, "maxiter": passes + 2})
    return min(seen[:passes])


class SafeLogSumExp:
    params = (["numba", "numpy", "cupy", "exact-lse"],)
    param_names = ["backend"]

    def setup(self, backend):
        if backend == "cupy" and not gpu_available():
            raise NotImplementedError("no usable GPU")
        pin_blas_threads()
        self.a = np.random.default_rng(0).normal(size=(200, 20000))
        safe_logsumexp(self.a[:4, :50], 0.01, axis=1, backend="numba")  # serial kernel
        safe_logsumexp(self.a[:2], 0.01, axis=1, backend="numba")  # parallel kernel

    def time_safe_logsumexp(self, backend):
        if backend == "exact-lse":
            logsumexp(self.a, axis=1)
        else:
            safe_logsumexp(self.a, 0.01, axis=1, backend=backend)


class EpochTime:
    params = ([16, 64, 256], ["numba", "numpy", "cupy"])
    param_names = ["batch_size", "backend"]
    timeout = 120

    def setup(self, batch_size, backend):
        if backend == "cupy" and not gpu_available():
            raise NotImplementedError("no usable GPU")
        pin_blas_threads()
        self.X, self.y = dro_dataset(20000, 10, "logistic", rng=0)
        kl_dro(self.X[:512], self.y[:512], lam=0.3, loss="logistic", epochs=1,
               batch_size=16, rng=0, backend="numba")

    def time_epoch(self, batch_size, backend):
        kl_dro(self.X, self.y, lam=0.3, loss="logistic", epochs=1, batch_size=batch_size,
               rng=0, backend=backend)


class DROGap:
    params = (["safe-kl", "naive", "full-batch"],)
    param_names = ["estimator"]
    timeout = 120

    def setup_cache(self):
        X, y = dro_dataset(20000, 10, "logistic", rng=0)
        exact = kl_dro(X, y, lam=0.3, loss="logistic", method="lbfgs")
        return X, y, exact.fun

    def track_gap_percent_after_5_epochs(self, cache, estimator):
        pin_blas_threads()
        X, y, best = cache
        if estimator == "full-batch":
            return 100.0 * (full_batch_best(X, y, 5) - best) / best
        else:
            res = kl_dro(X, y, lam=0.3, loss="logistic", method=estimator, epochs=5,
                         batch_size=32, lr=0.05, rho=0.005, rng=0)
        return 100.0 * (res.fun - best) / best

    track_gap_percent_after_5_epochs.unit = "%"
