"""DP-DAG: sampled DAGs and VI-DP-DAG edge probabilities next to the truth.
========================================================================

Top row: three DAGs sampled from the fitted DP-DAG model (each one acyclic by
construction), drawn as adjacency matrices with nodes in the true causal order. Bottom
row: the true adjacency, the VI marginal edge probabilities ``P(A_ij = 1)`` as a heat map,
the Monte Carlo edge frequency of 2000 samples (which must match the heat map), and the
final graph. Data: a linear-Gaussian ER2 graph, d = 10 (quick) or 20, n = 1000.

Run: ``python examples/dpdag_sampling.py [--quick] [--out PATH]``. Saves
``examples/figures/dpdag_sampling.png`` (next to this script, from any working directory,
or where ``--out`` says) and prints SHD, time and the sampling check.
"""
import argparse
import os
import time

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from solvers.dag import count_accuracy, is_dag, learn_dag, simulate_data  # noqa: E402
from solvers.dag.graph import topological_order  # noqa: E402


def figure_path(out=None, name='dpdag_sampling.png'):
    """Where the figure is written: ``out`` (a file, or a folder to put ``name`` in), or by
    default ``figures/{name}`` next to this script, whatever the working directory."""
    if out is None:
        return os.path.join(os.path.dirname(os.path.abspath(__file__)), "figures", name)
    if os.path.isdir(out) or not os.path.splitext(out)[1]:
        return os.path.abspath(os.path.join(out, name))
    return os.path.abspath(out)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="d = 10 and fewer iterations")
    parser.add_argument("--out", default=None,
                    help="figure file or folder (default: figures/ next to this script)")
    args = parser.parse_args(argv)
    d = 10 if args.quick else 20
    X, W, B = simulate_data(d=d, n=1000, k=2, rng=100)
    start = time.perf_counter()
    res = learn_dag(X, method="dpdag", rng=0, maxiter=1000 if args.quick else 3000)
    seconds = time.perf_counter() - start
    acc = count_accuracy(B, res.adjacency)
    A = res.sample_dags(2000, rng=1)
    freq = A.mean(axis=0)
    gap = np.abs(freq - res.edge_probs).max()
    n_dag = sum(is_dag(a) for a in A)

    perm = topological_order(B)  # show nodes in the true causal order
    reorder = lambda M: np.asarray(M, dtype=float)[np.ix_(perm, perm)]  # noqa: E731
    fig, axes = plt.subplots(2, 4, figsize=(13, 6.6))
    for k in range(3):
        ax = axes[0, k]
        ax.imshow(reorder(A[k]), cmap="Greys", vmin=0, vmax=1)
        ax.set_title(f"sampled DAG {k + 1} ({int(A[k].sum())} edges)")
    axes[0, 3].axis("off")
    axes[0, 3].text(0.0, 0.5,
                    f"d = {d}, n = 1000, ER2\nVI-DP-DAG: SHD {acc['shd']}, "
                    f"TPR {acc['tpr']:.2f}, FDR {acc['fdr']:.2f}\n"
                    f"fit {seconds:.1f} s\n{n_dag}/2000 samples are DAGs\n"
                    f"max |freq - P(A_ij)| = {gap:.3f}", fontsize=11, va="center")
    panels = [(B, "true graph", "Greys"), (res.edge_probs, "VI edge probabilities", "viridis"),
              (freq, "edge frequency, 2000 samples", "viridis"),
              (res.adjacency, "final graph (refit on mode order)", "Greys")]
    for ax, (M, title, cmap) in zip(axes[1], panels):
        im = ax.imshow(reorder(M), cmap=cmap, vmin=0, vmax=1)
        ax.set_title(title)
        if cmap == "viridis":
            fig.colorbar(im, ax=ax, fraction=0.046)
    for ax in axes.ravel():
        ax.set_xticks([])
        ax.set_yticks([])
    fig.suptitle("DP-DAG: rows = parent, columns = child, nodes in the true causal order")
    fig.tight_layout()
    path = figure_path(args.out)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fig.savefig(path, dpi=110)
    print(f"VI-DP-DAG on ER2 d={d}, n=1000: SHD {acc['shd']} TPR {acc['tpr']:.2f} "
          f"FDR {acc['fdr']:.2f}, {seconds:.1f} s; {n_dag}/2000 sampled graphs are DAGs; "
          f"max |sample frequency - edge probability| = {gap:.3f}")
    print(f"saved {path}")


if __name__ == "__main__":
    main()
