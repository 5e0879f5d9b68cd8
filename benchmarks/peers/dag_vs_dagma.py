"""Side by side: official DAGMA (linear, pip ``dagma``) and solvers' COSMO on the same data.

Linear-Gaussian SEMs (ER-k graphs, weights U([-2,-0.5] u [0.5,2]), n = 1000 by default),
one process, BLAS pinned to one thread for both (multithreaded OpenBLAS made DAGMA 30x
slower per iteration on 2-core machines). For every setting and seed we run

- DAGMA: ``DagmaLinear("l2").fit(X, lambda1=0.02)`` (its defaults otherwise, threshold 0.3);
- COSMO with the library defaults (refinement on);
- COSMO with ``refine=False`` (the paper's method alone);

and print mean SHD (a reversal counts 1), TPR, FDR, wall time per fit and the time ratio
DAGMA / COSMO. Seeds 100.. are not the ones the defaults were tuned on (0..9).

    pip install dagma --no-deps   # DagmaLinear needs only numpy, scipy, tqdm
    OPENBLAS_NUM_THREADS=1 python benchmarks/peers/dag_vs_dagma.py --d 20 50 --graphs ER2 ER4
    OPENBLAS_NUM_THREADS=1 python benchmarks/peers/dag_vs_dagma.py --standardize --d 20
    OPENBLAS_NUM_THREADS=1 python benchmarks/peers/dag_vs_dagma.py --no-dagma --d 100
"""
import argparse
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # repo root: benchmarks._common
from benchmarks._common import pin_blas_threads  # noqa: E402

from solvers.dag import count_accuracy, is_dag, learn_dag, simulate_data  # noqa: E402


def _accuracy(B, E):
    """count_accuracy's counts; a cyclic estimate (a peer's thresholded weights can have
    one) is scored on the same definitions instead of being rejected."""
    if is_dag(E):
        return count_accuracy(B, E)
    skel_t, skel_e = np.triu(B | B.T, 1), np.triu(E | E.T, 1)
    extra, missing = int(np.sum(skel_e & ~skel_t)), int(np.sum(skel_t & ~skel_e))
    tp, rev = int(np.sum(E & B)), int(np.sum(E & B.T & ~B))
    pred = max(int(E.sum()), 1)
    return {"shd": extra + missing + rev, "tpr": tp / max(int(B.sum()), 1),
            "fdr": (pred - tp) / pred if E.sum() else 0.0}


def run_dagma(X):
    from dagma.linear import DagmaLinear

    model = DagmaLinear(loss_type="l2")
    return model.fit(X, lambda1=0.02)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--d", type=int, nargs="+", default=[20])
    parser.add_argument("--graphs", nargs="+", default=["ER2", "ER4"])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--first-seed", type=int, default=100)
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--standardize", action="store_true")
    parser.add_argument("--noise", default="gauss")
    parser.add_argument("--no-dagma", action="store_true")
    parser.add_argument("--methods", nargs="+", default=None,
                        help="subset of cosmo, cosmo-plain, dagma")
    parser.add_argument("--verbose", action="store_true", help="print every fit")
    parser.add_argument("--json", default=None, help="write all per-seed rows to this file")
    args = parser.parse_args()
    pin_blas_threads(user_api=None)
    # warm up the Numba kernels (compile or load from cache) outside the timings
    Xw, _, _ = simulate_data(5, 100, rng=0)
    learn_dag(Xw, rng=0, maxiter=10)

    methods = ["cosmo", "cosmo-plain"] + ([] if args.no_dagma else ["dagma"])
    if args.methods:
        methods = args.methods
    rows = []
    print(f"n={args.n} noise={args.noise} standardize={args.standardize} "
          f"seeds {args.first_seed}..{args.first_seed + args.seeds - 1}")
    header = (f"{'graph':>5} {'d':>4} {'method':>12} {'SHD':>6} {'TPR':>6} {'FDR':>6} "
              f"{'sec/fit':>8} {'cpu/fit':>8} {'DAG':>4}")
    print(header, flush=True)
    for graph in args.graphs:
        k = int(graph[2:])
        gtype = graph[:2]
        for d in args.d:
            res = {m: [] for m in methods}
            for seed in range(args.first_seed, args.first_seed + args.seeds):
                X, W, B = simulate_data(d, args.n, k=k, graph_type=gtype,
                                        noise_type=args.noise, standardize=args.standardize,
                                        rng=seed)
                for m in methods:
                    start, cpu = time.perf_counter(), time.process_time()
                    if m == "dagma":
                        W_hat = run_dagma(X)
                    elif m == "cosmo":
                        W_hat = learn_dag(X, rng=seed).W
                    else:
                        W_hat = learn_dag(X, rng=seed, refine=False).W
                    sec, cpu = time.perf_counter() - start, time.process_time() - cpu
                    acc = _accuracy(B, W_hat != 0)
                    row = {"graph": graph, "d": d, "seed": seed, "method": m, "sec": sec,
                           "cpu": cpu,
                           "dag": bool(is_dag(W_hat != 0)),
                           "standardize": args.standardize, **acc}
                    res[m].append(row)
                    rows.append(row)
                    if args.verbose:
                        print(f"    seed {seed} {m:>12} SHD {acc['shd']:4d} TPR {acc['tpr']:.3f} "
                              f"FDR {acc['fdr']:.3f} {sec:8.2f}s", flush=True)
            for m in methods:
                r = res[m]
                print(f"{graph:>5} {d:>4} {m:>12} {np.mean([x['shd'] for x in r]):6.1f} "
                      f"{np.mean([x['tpr'] for x in r]):6.3f} "
                      f"{np.mean([x['fdr'] for x in r]):6.3f} "
                      f"{np.mean([x['sec'] for x in r]):8.2f} "
                      f"{np.mean([x['cpu'] for x in r]):8.2f} "
                      f"{sum(x['dag'] for x in r)}/{len(r)}", flush=True)
            if "dagma" in res and "cosmo" in res:
                ratio = np.mean([x["sec"] for x in res["dagma"]]) / np.mean(
                    [x["sec"] for x in res["cosmo"]])
                cpu_ratio = np.mean([x["cpu"] for x in res["dagma"]]) / np.mean(
                    [x["cpu"] for x in res["cosmo"]])
                print(f"{graph:>5} {d:>4} time ratio DAGMA / COSMO (refined) = {ratio:.1f}x "
                      f"wall, {cpu_ratio:.1f}x CPU", flush=True)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=1)


if __name__ == "__main__":
    main()
