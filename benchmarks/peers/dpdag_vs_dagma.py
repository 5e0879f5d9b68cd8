"""DP-DAG side by side with official DAGMA, and DP-DAG sampling throughput.

1. Structure learning on linear-Gaussian ER2 (n = 1000, seeds 100.., weights
   U([-2,-0.5] u [0.5,2])), one process, BLAS pinned to one thread:

   - VI-DP-DAG with the library defaults (score-function order gradient on the collapsed
     "profile" order objective, KL to the uniform order prior, the proper Bernoulli KL;
     final graph = every predecessor in the mode order, least-squares refit, |W| > 0.3);
   - VI-DP-DAG with ``order_objective="elbo"``, ``support="edges"`` (one ELBO for all
     parameters; final graph = mode DAG refit);
   - VI-DP-DAG with ``order_grad="st"``, ``order_kl=False`` (the paper's estimator);
   - VI-DP-DAG (ELBO order) + ``refine=True`` (order search with ``refine_order``);
   - ``refine_order`` alone from a random order (ablation: what the search does without VI);
   - DAGMA ``DagmaLinear("l2").fit(X, lambda1=0.02)`` when ``dagma`` is installed.

2. Sampling throughput at d = 100 (and other d), DAGs per second per backend, against the
   1.66 ms per DAG of the reference implementation (Charpentier et al. 2022).

    OPENBLAS_NUM_THREADS=1 python benchmarks/peers/dpdag_vs_dagma.py --d 20 --seeds 3
    OPENBLAS_NUM_THREADS=1 python benchmarks/peers/dpdag_vs_dagma.py --throughput-only
    OPENBLAS_NUM_THREADS=1 python benchmarks/peers/dpdag_vs_dagma.py --d 50 --seeds 2 \
        --defaults-only --no-throughput

3. ``--posterior``: on d = 3 (ER1, prior_p = 0.3, 1500 steps, seeds 0-2, n = 30, 100,
   1000), the largest gap between the VI edge marginals and the exact posterior of the
   same model (enumeration, :func:`solvers.dag.dpdag.exact_edge_posterior`), for the
   score-function order gradient on the ELBO, for the defaults (profile order objective)
   and for the paper's straight-through estimator.
"""
import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # repo root: benchmarks._common
from benchmarks._common import pin_blas_threads  # noqa: E402

from solvers.dag import count_accuracy, is_dag, learn_dag, simulate_data  # noqa: E402
from solvers.dag.dpdag import DPDAG  # noqa: E402


def throughput(ds=(10, 50, 100, 200), n=2000, backends=("numba", "numpy")):
    rows = []
    for d in ds:
        rng = np.random.default_rng(d)
        model = DPDAG(rng.normal(size=d), rng.normal(size=(d, d)))
        model.sample_dags(10, rng=0, backend="numba")  # compile / load the cache
        for be in backends:
            m = n  # the same batch for every backend (fresh-memory costs scale with it)
            best = np.inf
            for rep in range(3):
                t = time.perf_counter()
                model.sample_dags(m, rng=rep, backend=be)
                best = min(best, (time.perf_counter() - t) / m)
            rows.append((d, be, best))
            print(f"d={d:4d} {be:6s} {best * 1e6:9.1f} us/DAG  {1 / best:10.0f} DAGs/s"
                  + (f"  reference/ours = {1.66e-3 / best:.0f}x" if d == 100 else ""),
                  flush=True)
    return rows


def posterior(settings=(("score gradient, ELBO order", {"order_objective": "elbo"}),
                        ("defaults (profile order)", {}),
                        ("ST, no order KL, lr 0.03",
                         {"order_grad": "st", "order_kl": False, "lr": 0.03}))):
    from solvers.dag.dpdag import exact_edge_posterior

    for label, kw in settings:
        for n in (30, 100, 1000):
            gaps = []
            for seed in range(3):
                X, W, B = simulate_data(d=3, n=n, k=1, rng=seed)
                res = learn_dag(X, method="dpdag", rng=seed, maxiter=1500, prior_p=0.3, **kw)
                post = exact_edge_posterior(X, res.W_vi, res.sigma2, 0.3)
                gaps.append(float(np.abs(post - res.edge_probs).max()))
            print(f"d=3 n={n:5d} {label:26s} max gap per seed: "
                  + ", ".join(f"{g:.3f}" for g in gaps), flush=True)


def run(name, fit, B):
    t = time.perf_counter()
    A = fit()
    dt = time.perf_counter() - t
    acc = count_accuracy(B, A)
    return name, acc["shd"], acc["tpr"], acc["fdr"], dt, is_dag(A)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--d", type=int, nargs="+", default=[20])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--no-dagma", action="store_true")
    parser.add_argument("--throughput-only", action="store_true")
    parser.add_argument("--no-throughput", action="store_true")
    parser.add_argument("--posterior", action="store_true")
    parser.add_argument("--defaults-only", action="store_true",
                        help="only VI-DP-DAG with the defaults (and DAGMA)")
    args = parser.parse_args()
    pin_blas_threads(user_api=None)
    if args.posterior:
        posterior()
        return
    if not args.no_throughput:
        throughput()
    if args.throughput_only:
        return
    try:
        from dagma.linear import DagmaLinear
    except ImportError:
        DagmaLinear = None
    for d in args.d:
        table = {}
        for seed in range(100, 100 + args.seeds):
            X, W, B = simulate_data(d=d, n=args.n, k=2, rng=seed)
            fits = [
                ("VI-DP-DAG (defaults)",
                 lambda: learn_dag(X, method="dpdag", rng=seed).adjacency),
                ("VI-DP-DAG (ELBO order, edge support)",
                 lambda: learn_dag(X, method="dpdag", rng=seed, order_objective="elbo",
                                   support="edges").adjacency),
                ("VI-DP-DAG (paper: ST, no order KL)",
                 lambda: learn_dag(X, method="dpdag", rng=seed, order_grad="st",
                                   order_kl=False, support="edges").adjacency),
                ("VI-DP-DAG (ELBO order) + refine",
                 lambda: learn_dag(X, method="dpdag", rng=seed, order_objective="elbo",
                                   refine=True).adjacency),
            ]

            def refine_alone():
                from solvers.dag.refine import refine_order

                order = np.random.default_rng(seed).permutation(d)
                return refine_order(X, order, threshold=0.3)[1] != 0

            fits.append(("refine_order alone (random start)", refine_alone))
            if args.defaults_only:
                fits = fits[:1]
            if DagmaLinear is not None and not args.no_dagma:
                fits.append(("DAGMA (official, lambda1=0.02)",
                             lambda: DagmaLinear(loss_type="l2").fit(X, lambda1=0.02) != 0))
            for name, fit in fits:
                row = run(name, fit, B)
                table.setdefault(name, []).append(row[1:])
                print(f"  d={d} seed={seed} {name:36s} SHD={row[1]:3d} TPR={row[2]:.3f} "
                      f"FDR={row[3]:.3f} time={row[4]:6.2f}s dag={row[5]}", flush=True)
        print(f"\nER2 d={d} n={args.n}, {args.seeds} seeds (means)")
        for name, rows in table.items():
            r = np.array([[s, t, f, dt] for s, t, f, dt, _ in rows], dtype=float)
            print(f"  {name:36s} SHD {r[:, 0].mean():5.1f}  TPR {r[:, 1].mean():.3f}  "
                  f"FDR {r[:, 2].mean():.3f}  time {r[:, 3].mean():6.2f} s")


if __name__ == "__main__":
    main()
