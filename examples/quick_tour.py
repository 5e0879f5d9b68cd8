"""A quick tour: one call of every method in the library, on small built-in problems.
==================================================================================

Each block is what a new user types first; the docs' getting-started page shows this file.
Run: ``python examples/quick_tour.py`` from any directory (about a minute with a cold Numba
cache). It prints what each call returns and, with matplotlib installed, saves one figure
(the bridge's samples and the learned graph) to ``examples/figures/quick_tour.png`` next to
this script, or to the ``--out`` path.
"""
import argparse
import os

import numpy as np

import solvers


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="accepted for CI; the tour is small")
    parser.add_argument("--out", default=None, help="figure path (PNG) or folder")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)

    # --- the core: stable log-sum-exp and Gibbs weights ----------------------------------
    print("logsumexp([1000, 1000]) =", solvers.logsumexp(np.array([1000.0, 1000.0])))
    A, B = rng.normal(size=(3000, 8)), rng.normal(size=(8, 3000))
    blocked = solvers.logsumexp_matmul(A, B)          # never builds the 3000 x 3000 matrix
    print("logsumexp_matmul max error:", np.max(np.abs(blocked - solvers.logsumexp(A @ B, axis=1))))

    # --- global optimization: CBO, called like scipy.optimize ----------------------------
    def rastrigin(x):
        return float(10 * x.size + np.sum(x**2 - 10 * np.cos(2 * np.pi * x)))

    res = solvers.minimize(rastrigin, None, method="cbo", bounds=[(-3, 3)] * 5, rng=0)
    print(f"CBO on Rastrigin-5: f = {res.fun:.2e} after {res.nfev} evaluations")

    # --- Safe-KL: KL-distributionally robust logistic regression -------------------------
    from solvers.lse import dro_dataset

    X, y = dro_dataset(n=20000, d=10, loss="logistic", rng=0)
    dro = solvers.kl_dro(X, y, lam=0.3, loss="logistic", epochs=5, rng=0)
    print(f"KL-DRO (Safe-KL, 5 epochs): robust loss {dro.fun:.4f}")

    # --- LightSB: a Schrödinger bridge between two sample sets ---------------------------
    x0 = rng.normal(size=(2000, 2))
    x1 = rng.normal(size=(2000, 2)) * 0.5 + np.array([3.0, 0.0])
    bridge = solvers.schrodinger_bridge(x0, x1, epsilon=0.1, n_components=4, rng=0)
    y_samples = bridge.sample(x0[:5], n_samples=100, rng=1)
    print("LightSB: mean of samples from x0[0]:", np.round(y_samples[0].mean(axis=0), 2))

    # --- Gaussian dense associative memory ----------------------------------------------
    from solvers.memory import synthetic_patterns, perturb

    means, covs = synthetic_patterns(1000, 25, commuting=True, rng=0)   # 1000 stored, d = 25
    memory = solvers.GaussianMemory(means, covs, beta=1.0)
    qm, qc = perturb(means[:50], covs[:50], 1 / np.sqrt(1000), commuting=True, rng=1)
    out = memory.retrieve(qm, qc)
    print(f"Gaussian DAM: retrieved {np.mean(out.index == np.arange(50)):.0%} of 50 queries "
          f"({out.path} path)")

    # --- DAG learning: COSMO on simulated linear-Gaussian data ---------------------------
    from solvers.dag import simulate_data, count_accuracy

    Xd, W, B_true = simulate_data(d=10, n=1000, k=2, rng=0)
    dag = solvers.learn_dag(Xd, method="cosmo", rng=0)
    print("COSMO:", count_accuracy(B_true, dag.adjacency))

    # --- QUBO: exact moments and annealing -----------------------------------------------
    Q = rng.normal(size=(12, 12))
    Q = (Q + Q.T) / 2
    moments = solvers.qubo_moments(Q)
    best = solvers.minimize_qubo(Q, n_reads=8, n_sweeps=300, rng=0)
    print(f"QUBO: mean {moments.mean:.3f}, variance {moments.var:.3f}, annealed min {best.fun:.3f}")

    plot_tour(figure_path(args.out), x0, x1, bridge, B_true, dag.adjacency)


def figure_path(out=None, name="quick_tour.png"):
    """Where the figure is written: ``out`` (a file, or a folder to put ``name`` in), or by
    default ``figures/{name}`` next to this script, whatever the working directory."""
    if out is None:
        return os.path.join(os.path.dirname(os.path.abspath(__file__)), "figures", name)
    if os.path.isdir(out) or not os.path.splitext(out)[1]:
        return os.path.abspath(os.path.join(out, name))
    return os.path.abspath(out)


def plot_tour(path, x0, x1, bridge, B_true, B_learned):
    """Two panels: samples of the bridge from a few inputs; true and learned edges."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:  # the figure is optional: the tour's answers are printed above
        return
    fig, axes = plt.subplots(1, 2, figsize=(10, 4.2))
    ax = axes[0]
    ax.scatter(x1[:, 0], x1[:, 1], s=2, alpha=0.2, c="tab:orange", label="target samples")
    starts = x0[:4]
    samples = bridge.sample(starts, n_samples=200, rng=2)
    for k in range(len(starts)):
        ax.scatter(samples[k, :, 0], samples[k, :, 1], s=3, alpha=0.6)
    ax.scatter(starts[:, 0], starts[:, 1], s=40, c="k", marker="x", label="inputs")
    ax.set_title("LightSB: samples from four inputs")
    ax.legend(loc="lower right", markerscale=3)
    ax = axes[1]
    both = np.asarray(B_true, dtype=int) + 2 * np.asarray(B_learned, dtype=int)
    ax.imshow(both, cmap=matplotlib.colors.ListedColormap(
        ["white", "tab:red", "tab:blue", "black"]), vmin=0, vmax=3)
    ax.set_title("COSMO: edge i -> j found (black), missed (red), extra (blue)", fontsize=9)
    ax.set_xlabel("j")
    ax.set_ylabel("i")
    fig.tight_layout()
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fig.savefig(path, dpi=110)
    print(f"figure: {path}")


if __name__ == "__main__":
    main()
