"""Consensus-based optimization on the Rastrigin function.
=======================================================

Left: 2-D particles over the shifted Rastrigin landscape at a few steps, with the
consensus point. Right: the success-rate table in d = 20 (shifted Rastrigin and Ackley,
start box [-3, 3]^20, success = sup-norm distance to the minimizer < 0.25) for the
defaults, n_runs seeded runs batched in one (M, N, d) array.

Run: ``python examples/cbo_rastrigin.py [--quick]`` (quick: 10 runs per problem instead of
100). Saves ``examples/figures/cbo_rastrigin.png`` (next to this script, from any working
directory) or where ``--out`` says.
"""
import argparse
import math
import os
import time

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from solvers import minimize_cbo  # noqa: E402

D = 20
SHIFT = np.random.default_rng(2024).uniform(-2.0, 2.0, D)


def rastrigin(x, shift):
    z = x - shift[:, None] if x.ndim == 2 else x - shift
    return 10.0 * z.shape[0] + np.sum(z * z - 10.0 * np.cos(2 * np.pi * z), axis=0)


def ackley(x, shift):
    z = x - shift[:, None] if x.ndim == 2 else x - shift
    return (-20.0 * np.exp(-0.2 * np.sqrt(np.mean(z * z, axis=0)))
            - np.exp(np.mean(np.cos(2 * np.pi * z), axis=0)) + 20.0 + math.e)


def figure_path(out=None, name='cbo_rastrigin.png'):
    """Where the figure is written: ``out`` (a file, or a folder to put ``name`` in), or by
    default ``figures/{name}`` next to this script, whatever the working directory."""
    if out is None:
        return os.path.join(os.path.dirname(os.path.abspath(__file__)), "figures", name)
    if os.path.isdir(out) or not os.path.splitext(out)[1]:
        return os.path.abspath(os.path.join(out, name))
    return os.path.abspath(out)


def snapshots_2d(steps=(0, 10, 40, 150)):
    """Particle positions of one 2-D run at the given steps (recorded by a callback)."""
    shift = np.array([1.3, -0.7])
    frames = {}

    def record(r):
        if r.nit - 1 in steps:
            frames[r.nit - 1] = (r.population.copy(), r.consensus.copy())

    # one anisotropic start, no restarts or refinement: the dynamics themselves
    minimize_cbo(rastrigin, bounds=[(-3, 3)] * 2, args=(shift,), vectorized=True,
                 n_particles=60, maxiter=max(steps) + 1, rng=1, callback=record, xtol=0.0,
                 ftol=0.0, noise="anisotropic", restarts=False, polish=False)
    return shift, frames


def success_table(runs):
    rows = []
    for name, f in (("Rastrigin", rastrigin), ("Ackley", ackley)):
        start = time.perf_counter()
        res = minimize_cbo(f, bounds=[(-3, 3)] * D, args=(SHIFT,), vectorized=True,
                           n_runs=runs, rng=0)
        seconds = time.perf_counter() - start
        ok = int(np.sum(np.max(np.abs(res.x_runs - SHIFT), axis=1) < 0.25))
        rows.append((f"{name}-{D}", f"{ok}/{runs}", f"{res.nfev // runs}", f"{seconds:.1f}"))
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description="CBO on Rastrigin")
    parser.add_argument("--quick", action="store_true", help="10 runs per problem")
    parser.add_argument("--out", default=None,
                    help="figure file or folder (default: figures/ next to this script)")
    args = parser.parse_args(argv)
    quick = args.quick
    shift, frames = snapshots_2d()
    rows = success_table(10 if quick else 100)

    fig = plt.figure(figsize=(13, 4.2))
    g = np.linspace(-3, 3, 300)
    G1, G2 = np.meshgrid(g, g)
    Z = rastrigin(np.stack([G1.ravel(), G2.ravel()]), shift).reshape(G1.shape)
    for k, (step, (pop, c)) in enumerate(sorted(frames.items())):
        ax = fig.add_subplot(1, 5, k + 1)
        ax.contourf(G1, G2, Z, levels=30, cmap="viridis")
        inside = np.all(np.abs(pop) <= 3, axis=1)
        ax.scatter(pop[inside, 0], pop[inside, 1], s=8, c="white", edgecolors="k",
                   linewidths=0.3)
        ax.plot(*c, "r*", ms=12, label="consensus")
        ax.plot(*shift, "x", color="orange", ms=9, mew=2, label="minimizer")
        ax.set_xlim(-3, 3)
        ax.set_ylim(-3, 3)
        ax.set_title(f"step {step}", fontsize=9)
        ax.set_xticks([])
        ax.set_yticks([])
        if k == 0:
            ax.legend(fontsize=7, loc="lower left")
    ax = fig.add_subplot(1, 5, 5)
    ax.axis("off")
    table = ax.table(cellText=rows, colLabels=["problem", "success", "nfev/run", "s"],
                     loc="center")
    table.scale(1.2, 1.6)
    ax.set_title("defaults, d = 20, box [-3,3]", fontsize=9)
    fig.tight_layout()
    path = figure_path(args.out)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fig.savefig(path, dpi=110)
    print("CBO defaults, d = 20, start box [-3, 3]^20, success = sup-norm distance < 0.25")
    for r in rows:
        print(f"  {r[0]:<14} success {r[1]:>7}  nfev/run {r[2]:>6}  {r[3]} s")
    print(f"figure: {path}")


if __name__ == "__main__":
    main()
