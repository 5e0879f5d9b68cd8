"""Record LightSB's two starts to the end on recipe pairs and replay drop rules on them.

The default ``init="auto"`` runs the split path, then the k-means++ start, and drops the
k-means++ start at the first iteration where its best held-out loss :math:`h_t`, minus
``factor`` times its drop over the last ``max(window, share * t)`` iterations, is still
above the split path's score (``solvers.transport._lightsb_search.cannot_overtake``). This
script is how that rule was chosen, on pairs other than the benchmark's seed 0:

``record``: for each pair, fit ``init="split"`` and ``init="kmeans++"`` (each alone, so
nothing is dropped) and keep every iteration's held-out loss and CPU seconds, the score and
the exact cBW2-UVP of each (500 test inputs). ``replay``: for each rule in a grid, the CPU
seconds the race would spend (split path, then k-means++ until dropped) against running
both to the end, the pairs where it drops a start that would have been kept, and the worst
ratio of the kept fit's error to the full race's.

    NUMBA_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/peers/lightsb_race_rule.py \\
        record --dims 2 8 16 32 64 128 --eps 0.1 1 10 --seeds 1 2 3 --n 50000 --out runs.json
    python benchmarks/peers/lightsb_race_rule.py replay runs.json
"""
import argparse
import itertools
import json
import math
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

# the repo root after the PYTHONPATH entries (see lightsb_benchmark.py)
_n_pythonpath = len([p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])
sys.path.insert(1 + _n_pythonpath, str(Path(__file__).resolve().parents[2]))
from benchmarks._common import pin_blas_threads  # noqa: E402

from solvers import schrodinger_bridge  # noqa: E402
from solvers.transport.benchmark import make_pair, cbw_uvp  # noqa: E402


def record_start(x0, x1, eps, init, seed, rotated):
    """One start fitted alone: per-iteration (n_components, held-out loss, CPU s)."""
    rows, t0 = [], time.process_time()

    def cb(res):
        rows.append((int(res.n_components), float(res.val_loss), time.process_time() - t0))

    kw = {"covariance": "full"} if rotated else {}
    sb = schrodinger_bridge(x0, x1, eps, init=init, rng=seed, callback=cb, **kw)
    return sb, rows


def record(args):
    pin_blas_threads()
    runs = json.load(open(args.out)) if args.out and os.path.exists(args.out) else []
    done = {(r["D"], r["eps"], r["seed"], r["rotated"]) for r in runs}
    cells = [(D, e, s, False) for s in args.seeds for D in args.dims for e in args.eps]
    cells += [(D, e, s, True) for s in args.seeds for D in args.rotated_dims for e in args.eps]
    for D, eps, seed, rot in cells:
        if (D, eps, seed, rot) in done:
            continue
        pair = make_pair(D, eps, rotated=rot, rng=seed)
        rng = np.random.default_rng(seed + 1)
        x0, x1 = pair.sample_x0(args.n, rng), pair.sample_x1(args.n, rng)
        xt = pair.sample_x0(500, np.random.default_rng(seed + 2))
        run = {"D": D, "eps": eps, "seed": seed, "rotated": rot, "n": args.n}
        for init in ("split", "kmeans++"):
            sb, rows = record_start(x0, x1, eps, init, seed, rot)
            run[init] = {"rows": rows, "score": float(sb.restart_scores[0]),
                         "n_components": int(sb.n_components),
                         "error": cbw_uvp(sb, pair, x=xt, exact=True)}
        runs.append(run)
        print(f"D={D} eps={eps} seed={seed} rotated={rot}: "
              + ", ".join(f"{k} {run[k]['score']:.4f} / {run[k]['error']:.4f} % / "
                          f"{run[k]['rows'][-1][2]:.1f} s" for k in ("split", "kmeans++")),
              flush=True)
        if args.out:
            with open(args.out, "w") as fh:
                json.dump(runs, fh)
    return runs


def cannot_overtake(curve, target, window, share, factor):
    """The rule of ``_lightsb_search.cannot_overtake`` with its constants as arguments."""
    t = len(curve)
    if t <= window or not math.isfinite(target):
        return False
    w = min(max(window, int(math.ceil(share * t))), t - 1)
    return curve[-1] - factor * (curve[t - 1 - w] - curve[-1]) > target


def replay_one(run, rule):
    """(CPU s of the race, CPU s of both to the end, error kept, error of the full race,
    whether the rule dropped the start the full race keeps)."""
    sp, km = run["split"], run["kmeans++"]
    t_split, t_km = sp["rows"][-1][2], km["rows"][-1][2]
    km_wins = km["score"] < sp["score"]
    full_err = km["error"] if km_wins else sp["error"]
    curve, best, t_spent = [], math.inf, t_km
    for K, val, t in km["rows"]:
        best = min(best, val)
        curve.append(best)
        if cannot_overtake(curve, sp["score"], *rule):
            t_spent = t
            return t_split + t_spent, t_split + t_km, sp["error"], full_err, km_wins
    return t_split + t_spent, t_split + t_km, full_err, full_err, False


def replay(args):
    runs = []
    for path in args.files:
        runs += json.load(open(path))
    print(f"{len(runs)} recorded pairs")
    print("| window | share | factor | CPU (race / both to the end) | wrong drops | "
          "worst error ratio |")
    print("|---|---|---|---|---|---|")
    for rule in itertools.product(args.windows, args.shares, args.factors):
        out = [replay_one(r, rule) for r in runs]
        race, both = sum(o[0] for o in out), sum(o[1] for o in out)
        wrong = [f"D={r['D']} eps={r['eps']} seed={r['seed']}"
                 for r, o in zip(runs, out) if o[4]]
        worst = max(o[2] / o[3] for o in out)
        print(f"| {rule[0]} | {rule[1]:g} | {rule[2]:g} | {race:.1f} / {both:.1f} = "
              f"{race / both:.2f} | {len(wrong)} {wrong if wrong else ''} | {worst:.2f} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    rec = sub.add_parser("record", help="fit both starts to the end on a grid of pairs")
    rec.add_argument("--dims", type=int, nargs="+", default=[2, 8, 16, 32, 64, 128])
    rec.add_argument("--rotated-dims", type=int, nargs="*", default=[],
                     help="also rotated pairs (full S) at these dimensions")
    rec.add_argument("--eps", type=float, nargs="+", default=[0.1, 1.0, 10.0])
    rec.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    rec.add_argument("--n", type=int, default=50_000, help="samples per side")
    rec.add_argument("--out", default=None, help="JSON file (resumed if it exists)")
    rep = sub.add_parser("replay", help="replay drop rules on recorded pairs")
    rep.add_argument("files", nargs="+")
    rep.add_argument("--windows", type=int, nargs="+", default=[5, 10, 15])
    rep.add_argument("--shares", type=float, nargs="+", default=[0.0, 0.25, 0.5])
    rep.add_argument("--factors", type=float, nargs="+", default=[2.0, 4.0, 8.0])
    args = ap.parse_args()
    record(args) if args.cmd == "record" else replay(args)


if __name__ == "__main__":
    main()
