"""Gaussian dense associative memory: retrieve stored 2-D Gaussians from perturbed ones.
=====================================================================================

    python examples/gaussian_dam_retrieval.py [--quick]

Stores eight 2-D Gaussians with different orientations, perturbs each by a W2 distance of
0.6 (half in the mean, half in the covariance), retrieves them with
``GaussianMemory.retrieve`` and draws the 1-sigma ellipses: stored (solid), perturbed
queries (dashed) and retrieved states (dotted, on top of the stored ones), with the energy
along each retrieval. Saves ``examples/figures/gaussian_dam_retrieval.png``.
"""
import argparse
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from solvers import GaussianMemory  # noqa: E402
from solvers.memory import perturb, retrieval_rate  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def ellipse(ax, m, S, **kw):
    lam, U = np.linalg.eigh(S)
    t = np.linspace(0, 2 * np.pi, 100)
    pts = m[:, None] + U @ (np.sqrt(lam)[:, None] * np.stack([np.cos(t), np.sin(t)]))
    ax.plot(pts[0], pts[1], **kw)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(HERE, "figures", "gaussian_dam_retrieval.png"),
                    help="figure path (PNG; default next to this script)")
    ap.add_argument("--quick", action="store_true", help="(same problem; it is small)")
    ap.add_argument("--beta", type=float, default=1.0)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(0)
    N = 8
    angles = np.linspace(0, 2 * np.pi, N, endpoint=False)
    means = 4.0 * np.stack([np.cos(angles), np.sin(angles)], axis=1)
    covs = []
    for k in range(N):
        th = rng.uniform(0, np.pi)
        U = np.array([[np.cos(th), -np.sin(th)], [np.sin(th), np.cos(th)]])
        covs.append(U @ np.diag(rng.uniform([0.8, 0.15], [1.5, 0.4])) @ U.T)
    covs = np.array(covs)
    qm, qS = perturb(means, covs, 0.6, rng=1)
    mem = GaussianMemory(means, covs, beta=args.beta)
    res = mem.retrieve(qm, qS)
    rate, w2 = retrieval_rate(mem, res, np.arange(N))

    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(11, 5))
    for k in range(N):
        ellipse(ax, means[k], covs[k], color="C0", lw=2, label="stored" if k == 0 else None)
        ellipse(ax, qm[k], qS[k], color="C3", ls="--", label="query" if k == 0 else None)
        ellipse(ax, res.means[k], res.covs[k], color="k", ls=":", lw=1.5,
                label="retrieved" if k == 0 else None)
        ax.annotate("", res.means[k], qm[k], arrowprops=dict(arrowstyle="->", color="0.5"))
    ax.set_aspect("equal")
    ax.legend(loc="upper right")
    ax.set_title(f"GaussianMemory, beta={args.beta}: {rate:.0%} retrieved ({res.path} path)")
    ax2.plot(np.maximum(res.energy - res.energy[-1], 1e-16), marker=".")
    ax2.set_yscale("log")
    ax2.set_xlabel("iteration")
    ax2.set_ylabel("E(xi_t) - E(final)")
    ax2.set_title("energy along retrieval (never increases)")
    out = args.out
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    print(f"stored {N} Gaussians in 2-D, queries perturbed by W2 = 0.6, beta = {args.beta}")
    print(f"retrieved {rate:.0%}; iterations per query {res.nit.tolist()}; "
          f"max W2 to the stored pattern {w2.max():.1e}; "
          f"energy increase max {np.diff(res.energy, axis=0).max():.1e}")
    print(f"figure: {os.path.relpath(out)}")
    return res


if __name__ == "__main__":
    main()
