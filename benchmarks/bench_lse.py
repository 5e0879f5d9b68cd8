"""asv benchmarks for the log-sum-exp core.

- ``LogSumExp.time_logsumexp``: the Numba single-pass kernel, the generic path, SciPy, a
  plain numpy two-pass ``log(sum(exp(a - max)))`` and ``np.exp`` alone (the floor) on a
  (1000, 10000) float64 array along each axis; ``cupy`` where a GPU is usable.
- ``Accuracy.track_*``: max relative difference from :func:`scipy.special.logsumexp`
  (and from an exact ``math.fsum`` reference) over a fixed suite of inputs, and the max ulp
  error of the vectorised ``fast_exp`` over the double range.
- ``LogSumExpMatmul``: time and ``peakmem_`` of the blocked ``logsumexp_matmul`` (numba,
  numpy and cupy backends) -- peak memory near one tile instead of ``n x m``;
  ``LogSumExpMatmulDask.peakmem_``: the same on a dask array (skipped without dask).
- ``ThreadScaling.time_case``: the cases of ``benchmarks/peers/lse_scaling.py`` (logsumexp
  of (1000, 10000) and (2000, 20000) along each axis, softmax (1000, 10000) along axis 1,
  logsumexp_matmul of 20000 x 64 by 64 x 20000) on 1, 2 and all of Numba's threads (BLAS
  pinned to one thread; logsumexp_matmul runs its own row blocks in parallel). The peer
  script is the reference for speed-ups: it starts a fresh process per thread count.
"""
import math
import os

import numba
import numpy as np
from scipy.special import logsumexp as scipy_logsumexp

from benchmarks._common import pin_blas_threads
from solvers import logsumexp, logsumexp_matmul, softmax
from solvers._lib.backend import gpu_available

GPU = ["cupy"] if gpu_available() else []


def _sync():
    if GPU:
        import cupy

        cupy.cuda.Stream.null.synchronize()


def _two_pass(a, axis):
    mx = np.max(a, axis=axis, keepdims=True)
    return np.log(np.sum(np.exp(a - mx), axis=axis)) + np.squeeze(mx, axis)


class LogSumExp:
    params = (["numba", "numpy", "scipy", "two_pass", "np_exp"] + GPU, [0, 1])
    param_names = ["backend", "axis"]

    def setup(self, backend, axis):
        pin_blas_threads()
        self.a = np.random.default_rng(0).normal(size=(1000, 10000))
        if backend == "cupy":
            import cupy

            self.a = cupy.asarray(self.a)
            logsumexp(self.a[:50, :50], axis=axis)
        else:
            logsumexp(self.a[:50, :50], axis=axis, backend="numba")  # compile / load cache

    def time_logsumexp(self, backend, axis):
        if backend == "scipy":
            scipy_logsumexp(self.a, axis=axis)
        elif backend == "two_pass":
            _two_pass(self.a, axis)
        elif backend == "np_exp":
            np.exp(self.a)
        elif backend == "cupy":
            logsumexp(self.a, axis=axis)
            _sync()
        else:
            logsumexp(self.a, axis=axis, backend=backend)


def _accuracy_suite():
    rng = np.random.default_rng(42)
    cases = []
    for scale in (1e-3, 1.0, 30.0, 1e3):
        for shape, axis in (((200, 300), 0), ((200, 300), 1), ((5000,), None)):
            cases.append((rng.normal(scale=scale, size=shape), axis))
    near_one = np.full(2000, -60.0)
    near_one[7] = 0.0                       # log(1 + tiny): needs the log1p form
    cases.append((near_one, None))
    return cases


class Accuracy:
    """Max relative difference from references (smaller is better; ~1e-16 expected)."""

    params = (["numba", "numpy"],)
    param_names = ["backend"]

    def setup(self, backend):
        self.cases = _accuracy_suite()
        logsumexp(np.ones(3), backend="numba")

    def track_max_rel_diff_vs_scipy(self, backend):
        worst = 0.0
        for a, axis in self.cases:
            got = np.asarray(logsumexp(a, axis=axis, backend=backend))
            want = np.asarray(scipy_logsumexp(a, axis=axis))
            worst = max(worst, float(np.max(np.abs(got - want) / np.abs(want))))
        return worst

    track_max_rel_diff_vs_scipy.unit = "relative error"

    def track_max_rel_error_vs_fsum(self, backend):
        worst = 0.0
        for a, axis in self.cases:
            if axis is not None:
                continue
            vals = a.tolist()
            mx = max(vals)
            ties = vals.count(mx)
            rest = math.fsum(math.exp(v - mx) for v in vals if v != mx)
            want = mx + math.log(ties) + math.log1p(rest / ties)   # exact to rounding
            got = float(logsumexp(a, backend=backend))
            worst = max(worst, abs(got - want) / max(abs(want), 1e-300))
        return worst

    track_max_rel_error_vs_fsum.unit = "relative error"


class FastExp:
    def setup(self):
        from solvers.lse._lse_numba import exp_into

        self.exp_into = exp_into
        rng = np.random.default_rng(7)
        self.x = np.concatenate([rng.uniform(-708.0, 709.7, 200_000),
                                 rng.uniform(-1.0, 1.0, 100_000)])
        self.out = np.empty_like(self.x)
        exp_into(self.x, self.out)

    def track_max_ulp_vs_np_exp(self):
        self.exp_into(self.x, self.out)
        want = np.exp(self.x)
        return float(np.max(np.abs(self.out - want) / np.spacing(want)))

    track_max_ulp_vs_np_exp.unit = "ulp"

    def time_fast_exp_300k(self):
        self.exp_into(self.x, self.out)


class LogSumExpMatmul:
    params = ([2000, 20000], ["numba", "numpy"] + GPU)
    param_names = ["n", "backend"]
    timeout = 300

    def setup(self, n, backend):
        pin_blas_threads()
        rng = np.random.default_rng(1)
        self.A = rng.normal(size=(n, 16)) / 4
        self.B = rng.normal(size=(16, n)) / 4
        if backend == "cupy":
            import cupy

            self.A, self.B = cupy.asarray(self.A), cupy.asarray(self.B)
        logsumexp_matmul(self.A[:8], self.B[:, :8], backend=backend)

    def time_blocked(self, n, backend):
        logsumexp_matmul(self.A, self.B, backend=backend)
        if backend == "cupy":
            _sync()

    def peakmem_blocked(self, n, backend):
        logsumexp_matmul(self.A, self.B, backend=backend)


class LogSumExpMatmulDask:
    """A dask A of 200k rows x 16 against 16 x 2000: the dense product would be 3.2 GB;
    the local scheduler with one thread holds one 20k-row chunk and one tile."""

    timeout = 300

    def setup(self):
        try:
            import dask
            import dask.array as da
        except ImportError:
            raise NotImplementedError("dask is not installed")
        pin_blas_threads()
        dask.config.set(scheduler="synchronous")
        self.A = da.random.default_rng(1).normal(size=(200_000, 16), chunks=(20_000, 16)) / 4
        self.B = np.random.default_rng(2).normal(size=(16, 2000)) / 4
        logsumexp_matmul(self.A[:8].compute(), self.B[:, :8])

    def peakmem_dask_blocked(self):
        logsumexp_matmul(self.A, self.B).compute()


class LogSumExpMatmulMaterialized:
    """The dense baseline. At n = 20000 it peaks near 20 GB (SciPy's temporaries on a
    3.2 GB matrix), too close to a 24 GB CI machine to run on every commit; the README
    records that figure from one manual run (see the performance table)."""

    params = ([2000, 10000],)
    param_names = ["n"]
    timeout = 300

    def setup(self, n):
        LogSumExpMatmul.setup(self, n, "numba")

    def peakmem_materialized(self, n):
        scipy_logsumexp(self.A @ self.B, axis=1)

    def time_materialized(self, n):
        scipy_logsumexp(self.A @ self.B, axis=1)


_SCALING_CASES = {
    "lse (1000, 10000) axis 0": ((1000, 10000), lambda a: logsumexp(a, axis=0)),
    "lse (1000, 10000) axis 1": ((1000, 10000), lambda a: logsumexp(a, axis=1)),
    "lse (2000, 20000) axis 0": ((2000, 20000), lambda a: logsumexp(a, axis=0)),
    "lse (2000, 20000) axis 1": ((2000, 20000), lambda a: logsumexp(a, axis=1)),
    "softmax (1000, 10000) axis 1": ((1000, 10000), lambda a: softmax(a, axis=1)),
    "lse_matmul 20000x64 @ 64x20000": (None, None),
}


class ThreadScaling:
    """One case of the thread-scaling table on ``threads`` Numba threads."""

    params = (list(_SCALING_CASES), sorted({1, 2, os.cpu_count() or 1}))
    param_names = ["case", "threads"]
    timeout = 300

    def setup(self, case, threads):
        if threads > numba.config.NUMBA_NUM_THREADS:
            raise NotImplementedError(f"NUMBA_NUM_THREADS is below {threads}")
        pin_blas_threads()
        numba.set_num_threads(threads)
        rng = np.random.default_rng(0)
        shape, fn = _SCALING_CASES[case]
        if shape is None:
            A = rng.normal(size=(20000, 64)) / 8
            B = rng.normal(size=(64, 20000)) / 8
            self.call = lambda: logsumexp_matmul(A, B)
        else:
            a = rng.normal(size=shape)
            self.call = lambda: fn(a)
        self.call()                       # compile / load the cache, touch the pages

    def teardown(self, case, threads):
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)

    def time_case(self, case, threads):
        self.call()
