"""Multi-objective QUBOs: Pareto fronts with and without unit-variance scaling.
============================================================================

Two bi-objective problems a user recognizes, each solved as a sweep of evenly spaced
weights ``w f1/s1 + (1 - w) f2/s2`` with simulated annealing (``solvers.minimize_qubo``):

1. graph bisection: split a network over two machines minimizing the traffic that crosses
   (the weighted cut; edge weights 10-100) against balancing the load, ``(sum x - n/2)^2``;
2. portfolio selection: maximize expected return against minimizing risk ``x^T S x``
   (equal holdings in the chosen assets);
3. vertex cover: the cost of the chosen vertices against the number of edges they leave
   uncovered.

The scales ``s_k`` are 1 (unscaled), the largest coefficient (max-abs, dimod's
``normalize``) or the exact standard deviation under uniform random assignments (unit
variance). For every problem and instance the fronts are plotted and the hypervolumes
printed, normalized with the ideal/nadir box of the combined front of all three sweeps,
reference point 1.1 (so 1.21 is the most possible).

    python examples/qubo_multiobjective.py [--quick] [--out PATH] [--workers N]

The figure goes to ``examples/figures/qubo_multiobjective.png`` (next to this script, from
any working directory) or where ``--out`` says.
"""
import argparse
import multiprocessing
import os
import time
from concurrent.futures import ProcessPoolExecutor

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from solvers.qubo import hypervolume, pareto_front, pareto_sweep  # noqa: E402

METHODS = ("none", "maxabs", "variance")
LABELS = {"none": "unscaled", "maxabs": "max-abs", "variance": "unit variance"}


def figure_path(out=None, name='qubo_multiobjective.png'):
    """Where the figure is written: ``out`` (a file, or a folder to put ``name`` in), or by
    default ``figures/{name}`` next to this script, whatever the working directory."""
    if out is None:
        return os.path.join(os.path.dirname(os.path.abspath(__file__)), "figures", name)
    if os.path.isdir(out) or not os.path.splitext(out)[1]:
        return os.path.abspath(os.path.join(out, name))
    return os.path.abspath(out)


def partition_problem(n, rng):
    """(weighted cut, imbalance) of a sparse random graph with edge weights 10..100."""
    A = np.triu(rng.uniform(size=(n, n)) < 4.0 / n, 1)
    Wt = np.where(A, rng.uniform(10, 100, size=(n, n)), 0.0)
    # cut(x) = sum_{i<j} w_ij (x_i + x_j - 2 x_i x_j)
    Q1 = -2.0 * Wt
    c1 = Wt.sum(axis=0) + Wt.sum(axis=1)
    # (sum x - n/2)^2 = x^T 1 1^T x - n 1^T x + n^2/4
    Q2 = np.ones((n, n))
    c2 = -float(n) * np.ones(n)
    return [(Q1, c1, 0.0), (Q2, c2, n * n / 4.0)], None, {}


def portfolio_problem(n, rng):
    """(-expected return, risk) of holding an equal amount of each chosen asset.

    Returns in %/year (2-15), covariance from three factors plus idiosyncratic risk, in
    (%/year)^2: the two objectives differ in scale by two orders of magnitude.
    """
    mu = rng.uniform(2, 15, size=n)
    F = rng.normal(size=(n, 3)) * rng.uniform(5, 20, size=(1, 3))
    S = F @ F.T / 3 + np.diag(rng.uniform(50, 400, size=n))
    return [(np.zeros((n, n)), -mu, 0.0), (S, np.zeros(n), 0.0)], None, {}


def cover_problem(n, rng):
    """(cost of the chosen vertices, number of edges left uncovered) on a random graph."""
    A = np.triu(rng.uniform(size=(n, n)) < 3.0 / n, 1).astype(float)
    cost = rng.uniform(1, 5, size=n)
    # uncovered(x) = sum_{i<j} A_ij (1 - x_i)(1 - x_j)
    Q2 = A
    c2 = -(A.sum(axis=0) + A.sum(axis=1))
    return [(np.zeros((n, n)), cost, 0.0), (Q2, c2, A.sum())], None, {}


def run(name, objectives, penalty, measure, weights, solver, seed):
    out = {}
    for method in METHODS:
        t = time.perf_counter()
        res = pareto_sweep(objectives, weights=weights, scaling=method, penalty=penalty,
                           rng=seed, **measure, **solver)
        out[method] = (res, time.perf_counter() - t)
    pts = np.vstack([r.objective_values for r, _ in out.values()])
    pts = pts[pareto_front(pts)]  # the box of the combined front, not of dominated points
    ideal, nadir = pts.min(axis=0), pts.max(axis=0)
    span = np.where(nadir > ideal, nadir - ideal, 1.0)
    ref = np.full(2, 1.1)
    hv = {m: hypervolume((r.objective_values - ideal) / span, ref) for m, (r, _) in out.items()}
    return out, hv, (ideal, span)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smaller problems, fewer sweeps")
    ap.add_argument("--instances", type=int, default=None, help="random instances per problem")
    ap.add_argument("--workers", type=int, default=1,
                    help="processes solving the weights of the sweeps (same result; -1: all "
                    "cores)")
    ap.add_argument("--out", default=None,
                    help="figure file or folder (default: figures/ next to this script)")
    args = ap.parse_args(argv)
    n = 30 if args.quick else 80
    instances = args.instances or (1 if args.quick else 5)
    weights = 15 if args.quick else 41
    solver = dict(n_reads=8, maxiter=200 if args.quick else 1000)
    pool = None
    if args.workers != 1:  # one pool for every sweep, so the workers start (and load) once
        pool = ProcessPoolExecutor(None if args.workers == -1 else args.workers,
                                   mp_context=multiprocessing.get_context("spawn"))
        solver["workers"] = pool.map
    builders = [("bisection: cut vs imbalance", partition_problem),
                ("portfolio: -return vs risk", portfolio_problem),
                ("vertex cover: cost vs uncovered", cover_problem)]
    path = figure_path(args.out)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fig, axes = plt.subplots(1, len(builders), figsize=(15, 4.2))
    print(f"n = {n}, {weights} weights, {instances} instance(s) per problem, "
          f"{solver['n_reads']} reads x {solver['maxiter']} sweeps per weight")
    print(f"{'problem':34s} {'inst':>4s} " + " ".join(f"{LABELS[m]:>14s}" for m in METHODS)
          + "  (normalized hypervolume; front size)")
    summary = {name: {m: [] for m in METHODS} for name, _ in builders}
    for ax, (name, build) in zip(axes, builders):
        for inst in range(instances):
            rng = np.random.default_rng(1000 * inst + len(name))
            objectives, penalty, measure = build(n, rng)
            out, hv, _ = run(name, objectives, penalty, measure, weights, solver, seed=inst)
            cells = []
            for m in METHODS:
                summary[name][m].append(hv[m])
                cells.append(f"{hv[m]:8.4f} ({len(out[m][0].front):2d})")
            print(f"{name:34s} {inst:4d} " + " ".join(f"{c:>14s}" for c in cells))
            if inst == 0:
                for m, marker in zip(METHODS, ("s", "^", "o")):
                    front = out[m][0].front
                    front = front[np.argsort(front[:, 0])]
                    ax.plot(front[:, 0], front[:, 1], marker=marker, ms=5, lw=1, alpha=0.8,
                            label=f"{LABELS[m]} (HV {hv[m]:.3f}, {len(front)} pts)")
        ax.set_title(name, fontsize=10)
        ax.set_xlabel("objective 1")
        ax.set_ylabel("objective 2")
        ax.legend(fontsize=8)
    print("\nmean normalized hypervolume over instances (wins of unit variance):")
    for name, per in summary.items():
        means = {m: float(np.mean(v)) for m, v in per.items()}
        wins = sum(all(per["variance"][i] > per[m][i] for m in ("none", "maxabs"))
                   for i in range(instances))
        print(f"  {name:34s} " + "  ".join(f"{LABELS[m]} {means[m]:.4f}" for m in METHODS)
              + f"   variance best on {wins}/{instances}")
    fig.suptitle(f"Pareto fronts from {weights} evenly spaced weights (simulated annealing, "
                 "instance 0)", fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(f"figure: {path}")
    if pool is not None:
        pool.shutdown()


if __name__ == "__main__":
    main()
