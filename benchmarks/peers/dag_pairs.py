"""Cause-effect pairs: does ``learn_dag`` orient real two-variable data?

The Tuebingen cause-effect pairs (Mooij et al., JMLR 2016) are real measurements (altitude
and temperature, age and income, ...) with the known direction of the causal link. A
linear-Gaussian model cannot orient a pair (both directions fit equally well); an additive
noise model can, when the mechanism is nonlinear: ``mechanism="additive"`` scores each
direction by the penalized Gaussian likelihood of a spline regression of the effect on the
cause plus the cause's own marginal. This script reads the pairs as shipped in the ``cdt``
0.6.0 wheel (``cdt/data/resources/Tuebingen_pairs.csv`` and ``Tuebingen_targets.csv``,
1: A -> B, -1: B -> A), standardizes each variable, subsamples pairs with more than
``--max-n`` rows (a fixed generator), and counts per method:

- correct / wrong: the fitted graph has the edge in the true / reversed direction;
- no edge or not identified: the empty graph, or ``result.identified`` is False (the
  direction is not determined by the model; such a pair counts as a coin flip in the
  accuracy ``(correct + undecided / 2) / pairs``).

The accuracy has a 95 % Wilson interval; 0.5 is chance. DirectLiNGAM (``lingam``, pip),
which orients by non-Gaussianity, runs side by side when installed. Nothing here was used
to design the DAG defaults: a held-out real-data check (issue 16)::

    pip download --no-deps cdt==0.6.0 -d /tmp/cdt && unzip -q -o /tmp/cdt/*.whl -d /tmp/cdt
    OPENBLAS_NUM_THREADS=1 python benchmarks/peers/dag_pairs.py \\
        /tmp/cdt/cdt/data/resources/Tuebingen_pairs.csv
"""
import argparse
import csv
import math
import os
import sys
import time
from pathlib import Path

if __name__ == "__main__":  # as a script only: the tests import this module, and a
    # NUMBA_NUM_THREADS set after Numba launched its threads makes Numba refuse to run
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # repo root
from benchmarks._common import pin_blas_threads  # noqa: E402

from solvers.dag import learn_dag  # noqa: E402


def load_pairs(path, max_n, rng):
    """[(name, X (n, 2) standardized, direction +1 for A -> B)] from cdt's csv files."""
    path = Path(path)
    csv.field_size_limit(1 << 30)
    with open(path.with_name("Tuebingen_targets.csv")) as fh:
        target = {row[0]: float(row[1]) for row in list(csv.reader(fh))[1:]}
    pairs = []
    with open(path) as fh:
        for name, a, b in list(csv.reader(fh))[1:]:
            X = np.column_stack([np.asarray(a.split(), dtype=float),
                                 np.asarray(b.split(), dtype=float)])
            if X.shape[0] > max_n:
                X = X[np.sort(rng.choice(X.shape[0], max_n, replace=False))]
            std = X.std(0)
            if np.any(std == 0):
                continue
            pairs.append((name, (X - X.mean(0)) / std, int(np.sign(target[name]))))
    return pairs


def _ours(**options):
    def run(X):
        res = learn_dag(X, method="cosmo", rng=0, **options)
        return np.asarray(res.adjacency) != 0, bool(res.identified)
    return run


def _lingam(X):
    import lingam

    m = lingam.DirectLiNGAM()
    m.fit(X)
    order = list(m.causal_order_)
    B = np.zeros((2, 2), dtype=bool)
    B[order[0], order[1]] = True          # the order alone orients a pair
    return B, True


METHODS = {"default": _ours(), "additive": _ours(mechanism="additive"),
           "linear": _ours(mechanism="linear"), "lingam": _lingam}


def verdict(B, identified, direction):
    """'correct', 'wrong' or 'undecided' for a 2 x 2 adjacency."""
    if not identified or B[0, 1] == B[1, 0]:
        return "undecided"
    return "correct" if (B[0, 1] and direction > 0) or (B[1, 0] and direction < 0) \
        else "wrong"


def wilson(k, n, z=1.959963984540054):
    """95 % Wilson score interval of a binomial proportion."""
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("pairs", help="path to cdt's Tuebingen_pairs.csv (targets file beside)")
    ap.add_argument("--methods", nargs="+", default=list(METHODS), choices=list(METHODS))
    ap.add_argument("--max-n", type=int, default=2000)
    args = ap.parse_args(argv)
    pin_blas_threads(None)
    pairs = load_pairs(args.pairs, args.max_n, np.random.default_rng(0))
    print(f"{len(pairs)} pairs; accuracy = (correct + undecided / 2) / pairs")
    print(f"{'method':10s} {'correct':>7s} {'wrong':>6s} {'undec':>6s} {'accuracy':>8s} "
          f"{'95% interval':>14s} {'sec':>6s}")
    for meth in args.methods:
        counts = {"correct": 0, "wrong": 0, "undecided": 0}
        t = time.perf_counter()
        try:
            for _, X, direction in pairs:
                counts[verdict(*METHODS[meth](X), direction)] += 1
        except ImportError as exc:
            print(f"{meth:10s} skipped ({exc.name} missing)")
            continue
        k = counts["correct"] + 0.5 * counts["undecided"]
        lo, hi = wilson(k, len(pairs))
        print(f"{meth:10s} {counts['correct']:7d} {counts['wrong']:6d} "
              f"{counts['undecided']:6d} {k / len(pairs):8.3f}   [{lo:.2f}, {hi:.2f}] "
              f"{time.perf_counter() - t:6.1f}", flush=True)


if __name__ == "__main__":
    main()
