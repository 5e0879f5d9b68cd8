"""asv benchmarks for DAG learning with COSMO.

``time_step`` times optimizer steps of COSMO against d (minibatch of 64 rows: the step
costs O(b d^2) for the data term and O(d^2) for the orientation; full batch on the Gram
matrix costs one d x d x d matrix product). ``time_fit`` is a whole default fit (with the
refinement) at d = 20; ``track_shd_*`` the SHD of the default fit on ER2 / ER4 data.

Fit the per-step exponent with ``python benchmarks/bench_dag.py`` (prints the slope of
log time vs log d).
"""
import time

import numpy as np

from benchmarks._common import pin_blas_threads
from solvers._lib.backend import gpu_available, resolve_backend
from solvers.dag import learn_dag, shd, simulate_data
try:                     # the training loop, wherever this version keeps it
    from solvers.dag._cosmo_train import train as _train_new
except ImportError:      # older layout: solvers.dag.cosmo._train(Xc, C, n, H, p, ...)
    from solvers.dag.cosmo import _train as _train_old

    def _train_new(Xc, C, H, p, **kw):
        return _train_old(Xc, C, Xc.shape[0], H, p, **kw)

GPU = ["cupy"] if gpu_available() else []
STEPS = 20


def _setup_step(d, backend, batch_size, n=1000, seed=0):
    import array_api_compat.numpy as xnp

    X, W, B = simulate_data(d, n, k=2, rng=seed)
    xp = xnp
    if backend == "cupy":
        import array_api_compat.cupy as xcp

        xp = xcp
        X = xcp.asarray(X)
    be = resolve_backend(backend, xp)
    Xc = X - xp.mean(X, axis=0)
    C = (Xc.T @ Xc) / n
    p = xp.asarray(np.log(np.diag(np.asarray(C.get() if hasattr(C, "get") else C))))
    state = dict(Xc=Xc, C=C, n=n, p=p, d=d, be=be, batch_size=batch_size,
                 rng=np.random.default_rng(0))
    _run(state, 2)  # compile / load the Numba cache
    return state


def _run(s, steps):
    xp = s["be"].xp
    H = xp.zeros((s["d"], s["d"]), dtype=xp.float64)
    p = xp.asarray(s["p"], copy=True)
    out = _train_new(s["Xc"], s["C"], H, p, be=s["be"], batch_size=s["batch_size"],
                 maxiter=steps, t_max=0.45, t_min=1e-3, eps=1e-2, l1=1e-3, l2=2e-3, lp=0.0,
                 lr=1e-2, optimizer="adam", rng=s["rng"], callback=None, progress=False,
                 record_every=10 ** 9)
    if s["be"].name == "cupy":
        import cupy

        cupy.cuda.Stream.null.synchronize()
    return out


class CosmoStep:
    """20 minibatch (b = 64) steps; divide by 20 for the per-step time."""

    params = ([50, 100, 200, 400], ["numba", "numpy"] + GPU)
    param_names = ["d", "backend"]
    timeout = 120

    def setup(self, d, backend):
        pin_blas_threads()
        self.s = _setup_step(d, backend, batch_size=64)

    def time_step(self, d, backend):
        _run(self.s, STEPS)


class CosmoStepFullBatch:
    """20 full-batch steps on the Gram matrix (the default training mode)."""

    params = ([50, 100, 200], ["numba"] + GPU)
    param_names = ["d", "backend"]
    timeout = 120

    def setup(self, d, backend):
        pin_blas_threads()
        self.s = _setup_step(d, backend, batch_size=None)

    def time_step(self, d, backend):
        _run(self.s, STEPS)


class CosmoFit:
    """A whole default fit (COSMO + refinement) and the SHD it reaches."""

    params = ([True, False],)
    param_names = ["refine"]
    timeout = 300

    def setup(self, refine):
        pin_blas_threads()
        self.data = {k: simulate_data(20, 1000, k=k, rng=100 + k) for k in (2, 4)}
        learn_dag(self.data[2].X[:, :5], maxiter=5)  # compile / load cache

    def time_fit(self, refine):
        learn_dag(self.data[2].X, rng=0, refine=refine)

    def track_shd_er2(self, refine):
        X, W, B = self.data[2]
        return shd(B, learn_dag(X, rng=0, refine=refine).adjacency)

    def track_shd_er4(self, refine):
        X, W, B = self.data[4]
        return shd(B, learn_dag(X, rng=0, refine=refine).adjacency)

    track_shd_er2.unit = "edges"
    track_shd_er4.unit = "edges"


class BeyondVarsortable:
    """Issue 16: standardized linear data (noise model ``auto`` / ``nonequal``) and
    nonlinear additive data (``mechanism="additive"``); held-out seed 500."""

    timeout = 300

    def setup(self):
        pin_blas_threads()
        self.std = simulate_data(20, 1000, k=2, rng=500, standardize=True)
        self.add = simulate_data(10, 1000, k=2, rng=500, sem_type="additive",
                                 standardize=True)
        learn_dag(self.std.X[:, :5], maxiter=5)  # compile / load cache

    def time_fit_additive(self):
        learn_dag(self.add.X, rng=0, mechanism="additive")

    def track_shd_standardized(self):
        return shd(self.std.B, learn_dag(self.std.X, rng=0).adjacency)

    def track_cpdag_shd_nonequal(self):
        from solvers.dag import count_accuracy

        res = learn_dag(self.std.X, rng=0, noise_variance="nonequal")
        return count_accuracy(self.std.B, res.adjacency, cpdag=True)["shd"]

    def track_shd_additive(self):
        return shd(self.add.B, learn_dag(self.add.X, rng=0, mechanism="additive").adjacency)

    track_shd_standardized.unit = "edges"
    track_cpdag_shd_nonequal.unit = "edges"
    track_shd_additive.unit = "edges"


class Stability:
    """Adjacency entries that change when the data are multiplied by 3 or by 1 + 1e-12
    (standardized ER2, d = 20, n = 1000, seed 500): the default fit is meant not to
    depend on round-off, so both should be 0."""

    timeout = 300

    def setup(self):
        pin_blas_threads()
        self.X = simulate_data(20, 1000, k=2, rng=500, standardize=True).X
        self.base = np.asarray(learn_dag(self.X, rng=0).adjacency)

    def time_fit_standardized(self):
        learn_dag(self.X, rng=0)

    def track_changes_times_3(self):
        return int(np.sum(np.asarray(learn_dag(self.X * 3.0, rng=0).adjacency) != self.base))

    def track_changes_times_1_plus_1e12(self):
        other = learn_dag(self.X * (1.0 + 1e-12), rng=0).adjacency
        return int(np.sum(np.asarray(other) != self.base))

    track_changes_times_3.unit = "entries"
    track_changes_times_1_plus_1e12.unit = "entries"


def fit_exponent(ds=(50, 100, 200, 400, 800), batch_size=64, backend="numba", repeat=5,
                 steps=STEPS):
    """Best-of-``repeat`` time per step for each d and the log-log slope."""
    pin_blas_threads()
    times = []
    for d in ds:
        s = _setup_step(d, backend, batch_size=batch_size)
        best = np.inf
        for _ in range(repeat):
            start = time.perf_counter()
            _run(s, steps)
            best = min(best, (time.perf_counter() - start) / steps)
        times.append(best)
    slope = np.polyfit(np.log(ds), np.log(times), 1)[0]
    return list(ds), times, float(slope)


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description="COSMO per-step cost exponent")
    parser.add_argument("--d", type=int, nargs="+", default=[50, 100, 200, 400, 800])
    parser.add_argument("--full-batch", action="store_true")
    parser.add_argument("--backend", default="numba")
    args = parser.parse_args()
    bs = None if args.full_batch else 64
    ds, ts, slope = fit_exponent(args.d, batch_size=bs, backend=args.backend)
    for d, t in zip(ds, ts):
        print(f"d={d:5d}  {t * 1e3:8.3f} ms/step")
    print(f"exponent (slope of log time vs log d): {slope:.2f}"
          f"  [{'full batch' if bs is None else f'minibatch {bs}'}, {args.backend}]")
