"""Capacity of the Gaussian dense associative memory, and the synthetic protocol.
==============================================================================

    python examples/gaussian_dam_capacity.py [--quick] [--protocol]

Sweep: fraction of perturbed patterns retrieved (the nearest stored pattern to the final
state is the source) against the number ``N`` of stored Gaussians, for several dimensions
``d`` and inverse temperatures ``beta``. Patterns follow the synthetic protocol (means on
the sphere of radius sqrt(d), covariance eigenvalues in [1, 1.1], a shared eigenbasis so
the commuting fast path applies); queries are moved by W2 = 1. Saves
``examples/figures/gaussian_dam_capacity.png``.

``--protocol`` also prints the figures of the synthetic protocol: commuting N = 5000,
d = 25, beta = 1 and the collapse at beta = 0.1; non-commuting N = 1000, d = 10, beta = 1
(full path: minutes on two cores; ``--noncommuting-queries`` sets how many). Each under
three pattern distributions: ours ("solvers"), the authors' code ("authors") and ours with a
minimum separation W2^2 >= 4/beta ("separated", not the paper's); for the non-commuting
case also the rate after the authors' budget of 10 iterations and the fraction of sources
with a neighbour inside the pitchfork W2^2 < 2/beta (not fixed points, see the docs).
"""
import argparse
import os
import time

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from solvers import GaussianMemory  # noqa: E402
from solvers.memory import synthetic_patterns, perturb, retrieval_rate  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def rate_at(N, d, beta, n_queries, radius, seed=0, commuting=True, maxiter=100):
    m, S = synthetic_patterns(N, d, commuting=commuting, diagonal=commuting, rng=seed)
    idx = np.random.default_rng(seed + 1).choice(N, min(N, n_queries), replace=False)
    qm, qS = perturb(m[idx], S[idx], radius, rng=seed + 2)
    mem = GaussianMemory(m, S, beta=beta)
    res = mem.retrieve(qm, qS, maxiter=maxiter)
    return retrieval_rate(mem, res, idx)[0], res


GENERATORS = {
    # name: (synthetic_patterns options, perturb method)
    "solvers": ({}, "exact"),
    "authors": ({"on_sphere": True}, "authors"),
}


def run_one(mem, qm, qS, idx, maxiter, split=None):
    """Retrieve; with ``split``, also report the rate after ``split`` iterations (the
    authors' budget) by continuing the same run from there."""
    t = time.perf_counter()
    early = None
    if split is not None and split < maxiter:
        first = mem.retrieve(qm, qS, maxiter=split)
        early = retrieval_rate(mem, first, idx)[0]
        res = mem.retrieve(first.means, first.covs, maxiter=maxiter - split)
        res.nit = res.nit + split
    else:
        res = mem.retrieve(qm, qS, maxiter=maxiter)
    return res, early, time.perf_counter() - t


def protocol(n_noncommuting):
    """The synthetic protocol under three pattern distributions: ours ("solvers"), the
    authors' code ("authors": spectra rescaled to trace d, their perturbation) and ours with
    a minimum squared-W2 separation 4/beta between patterns ("separated", not the paper's).
    A query is retrieved when the stored pattern nearest its final state is its source."""
    rows = []
    settings = [("commuting", 5000, 25, 1.0, True, 1000, name) for name in GENERATORS]
    settings += [("commuting", 5000, 25, 0.1, True, 1000, name) for name in GENERATORS]
    settings += [("non-commuting", 1000, 10, 1.0, False, n_noncommuting, name)
                 for name in ("solvers", "authors", "separated")]
    for kind, N, d, beta, comm, Q, gen in settings:
        opts, method = GENERATORS.get(gen, ({"min_separation": 4.0 / beta}, "exact"))
        m, S = synthetic_patterns(N, d, commuting=comm, rng=0, **opts)
        idx = np.random.default_rng(1).choice(N, Q, replace=False)
        mem = GaussianMemory(m, S, beta=beta)
        radii = [("1/sqrt(beta N)", 1 / np.sqrt(beta * N))]
        if comm or gen == "separated":
            radii.append(("1", 1.0))
        if not comm:   # the sources whose nearest neighbour is inside the pitchfork 2/beta
            D = mem.distances(m[idx], S[idx])
            D[np.arange(Q), idx] = np.inf
            cap = 1.0 - np.mean(D.min(axis=1) < 2.0 / beta)
        for label, radius in radii:
            qm, qS = perturb(m[idx], S[idx], radius, commuting=comm, method=method, rng=2)
            res, early, t = run_one(mem, qm, qS, idx, 100, split=None if comm else 10)
            rate, w2 = retrieval_rate(mem, res, idx)
            spread = np.abs(res.means - res.means.mean(0)).max()
            line = (f"{kind:13s} N={N} d={d} beta={beta} [{gen}]: W2 radius {label}: "
                    f"retrieved {rate:.1%} of {Q} (maxiter=100)")
            if early is not None:
                line += f", {early:.1%} after 10 iterations (the authors' budget)"
            if not comm:
                line += (f"; sources with no neighbour inside W2^2 < 2/beta: {cap:.1%}")
            line += (f"; converged {res.converged.mean():.0%}, median W2 to source "
                     f"{np.median(w2):.1e}, distinct final nearest "
                     f"{len(set(res.index.tolist()))}, spread of final means {spread:.1e}, "
                     f"|mean - global average| "
                     f"{np.linalg.norm(res.means.mean(0) - m.mean(0)):.1e} "
                     f"({res.path} path, {t:.1f} s)")
            print(line, flush=True)
            rows.append(line)
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(HERE, "figures", "gaussian_dam_capacity.png"),
                    help="figure path (PNG; default next to this script)")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--protocol", action="store_true")
    ap.add_argument("--noncommuting-queries", type=int, default=100)
    args = ap.parse_args(argv)
    if args.quick:
        dims, betas, Ns, nq = (5, 10), (1.0, 4.0), (10, 100, 1000), 50
    else:
        dims, betas, Ns, nq = (5, 10, 25), (0.5, 1.0, 4.0), (10, 30, 100, 300, 1000, 3000,
                                                            10000), 200
    fig, axes = plt.subplots(1, len(betas), figsize=(4.2 * len(betas), 3.8), sharey=True)
    start = time.perf_counter()
    for ax, beta in zip(axes, betas):
        for d in dims:
            rates = [rate_at(N, d, beta, nq, 1.0)[0] for N in Ns]
            ax.plot(Ns, rates, marker="o", label=f"d={d}")
            print(f"beta={beta} d={d}: " + ", ".join(f"N={N}: {r:.0%}" for N, r in
                                                    zip(Ns, rates)))
        ax.set_xscale("log")
        ax.set_xlabel("stored patterns N")
        ax.set_title(f"beta = {beta}")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("fraction retrieved (W2 perturbation 1)")
    axes[-1].legend()
    fig.tight_layout()
    out = args.out
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    fig.savefig(out, dpi=110)
    print(f"capacity sweep in {time.perf_counter() - start:.1f} s; figure: "
          f"{os.path.relpath(out)}")
    if args.protocol:
        protocol(args.noncommuting_queries)


if __name__ == "__main__":
    main()
