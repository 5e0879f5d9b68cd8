r"""Safe-KL measurements quoted in docs/guide/safe_kl.rst (not asv benchmarks).

    OPENBLAS_NUM_THREADS=1 NUMBA_NUM_THREADS=1 python benchmarks/safe_kl_checks.py reliability
    OPENBLAS_NUM_THREADS=1 NUMBA_NUM_THREADS=1 \
        python benchmarks/safe_kl_checks.py out-of-core --n 8000000

``reliability``: on a grid of KL-DRO regimes (``dro_dataset(20000, 10)``, seeds
21-23, 5 epochs), the relative gap of the Safe-KL answer to the exact (L-BFGS) optimum for
the runs reported as successes and for those flagged unreliable (rho * kappa >= 1).

``out-of-core`` (needs dask): one epoch of ``minimize_logsumexp`` at batch 4096 on a lazily
generated dask array (16 columns, 250 000-row partitions) plus the end-of-run pass; prints
the peak of traced allocations, which stays flat as ``--n`` grows.
"""
import argparse
import os
import sys

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def reliability():
    try:
        from solvers.lse import dro_dataset, kl_dro
    except ImportError:  # versions that exported them from solvers.lse.applications
        from solvers.lse.applications import dro_dataset, kl_dro

    rows = []
    for seed in (21, 22, 23):
        for loss, lam, scale in (("logistic", 0.3, 1), ("logistic", 0.1, 1),
                                 ("squared", 10.0, 1), ("squared", 30.0, 1),
                                 ("squared", 1.0, 1), ("squared", 1.0, 10),
                                 ("squared", 0.01, 100)):
            X, y = dro_dataset(20000, 10, loss, rng=seed)
            y = y * scale if loss == "squared" else y
            exact = kl_dro(X, y, lam=lam, loss=loss, method="lbfgs")
            res = kl_dro(X, y, lam=lam, loss=loss, epochs=5, rng=seed)
            err = (res.fun - exact.fun) / abs(exact.fun)
            rows.append((res.success, err))
            print(f"seed={seed} {loss:8s} lam={lam:<5g} scale={scale:<3d} "
                  f"success={res.success!s:5s} err={100 * err:8.3f}% "
                  f"rho_kappa={res.diagnostics['rho_kappa']:.3g}", flush=True)
    ok = [e for s, e in rows if s]
    bad = [e for s, e in rows if not s]
    print(f"success: {len(ok)} runs, max err {100 * max(ok):.2f}%; "
          f"flagged: {len(bad)} runs, min err {100 * min(bad):.2f}%")


def out_of_core(n, chunk):
    import tracemalloc

    import dask
    import dask.array as da
    import numpy as np

    from solvers import minimize_logsumexp

    d = 16
    X = da.random.RandomState(0).normal(size=(n, d), chunks=(chunk, d))
    tracemalloc.start()
    with dask.config.set(scheduler="synchronous"):
        res = minimize_logsumexp(lambda x, b: (b @ x / 4, b / 4), np.zeros(d), X, epochs=1,
                                 batch_size=4096, rng=0)
    peak = tracemalloc.get_traced_memory()[1]
    print(f"n={n} rows x {d} ({n * d * 8 / 2**20:.0f} MiB of data, partitions of "
          f"{chunk * d * 8 / 2**20:.0f} MiB): traced peak {peak / 2**20:.0f} MiB, "
          f"success={res.success}, rho_kappa={res.diagnostics['rho_kappa']:.3g}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("what", choices=["reliability", "out-of-core"])
    parser.add_argument("--n", type=int, default=2_000_000)
    parser.add_argument("--chunk", type=int, default=250_000)
    args = parser.parse_args()
    reliability() if args.what == "reliability" else out_of_core(args.n, args.chunk)
