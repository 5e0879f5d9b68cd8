"""cBW2-UVP table of LightSB on recipe-built entropic OT benchmark pairs, with fit times.

For each dimension D and epsilon: build a pair with ``solvers.transport.benchmark.make_pair``
(the official benchmark files are not used; the pairs follow the same recipe), draw ``--n``
training samples per side, fit ``solvers.schrodinger_bridge`` with its defaults (diagonal
S, full-batch L-BFGS with held-out early stopping, the mixture grown by splits from one
component up to K = 50 while the held-out loss improves) and report

- exact-moment cBW2-UVP (%) on 1000 test inputs (analytic mixture moments on both sides),
- sample-moment cBW2-UVP (%) as published (1000 inputs x 1000 samples per side; it has a
  noise floor, printed as "floor": the true plan scored against itself),
- wall-clock and CPU seconds of the fit.

``--rotated`` adds pairs with randomly rotated potential covariances, fitted with
``covariance="full"`` (diagonal S cannot represent them). ``--compare-adam D EPS`` also runs
the reference schedule (Adam, 10k steps, batch 128, constant lr 1e-3/3e-3/6e-2 for
eps 0.1/1/10) on one cell. Cells not reached within ``--budget`` seconds are listed as
not run.

By default a quick run (D = 2, 4000 samples per side, about a minute); ``--full`` runs the
published grid with the sample sizes of the README table (about 27 minutes on one core;
more with ``--rotated``). Rows go to ``--out`` (JSON) when given.

    OPENBLAS_NUM_THREADS=1 python benchmarks/peers/lightsb_benchmark.py
    OPENBLAS_NUM_THREADS=1 python benchmarks/peers/lightsb_benchmark.py --full --no-sample-metric
    OPENBLAS_NUM_THREADS=1 python benchmarks/peers/lightsb_benchmark.py --full --rotated \
        --dims 2 16 --no-sample-metric

``--speed`` prints the speed table instead: the default fit on D = 16 eps = 1, D = 16
eps = 0.1 and D = 64 eps = 1 (``make_pair(D, eps, rng=0)``, 150 000 samples per side),
exact cBW2-UVP on 1000 test inputs and the fit's CPU seconds; ``--reach E ...`` adds the
CPU seconds until the iterate first reaches each error (monitoring excluded). It runs on
older versions of the library too (the iterate is then decoded from ``x``)::

    NUMBA_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/peers/lightsb_benchmark.py --speed

``--against CHECKOUT`` runs each case also on the library of another checkout (for example
an older commit in its own worktree) and prints both side by side, with the ratios of CPU
time and error; every fit runs in a fresh process and the two libraries alternate which
goes first::

    NUMBA_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/peers/lightsb_benchmark.py \\
        --speed --against ../lightsb-base
"""
import argparse
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

# the repo root (benchmarks._common, solvers) after the PYTHONPATH entries, so that
# PYTHONPATH=<another checkout> runs this script against that checkout's library
_n_pythonpath = len([p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])
sys.path.insert(1 + _n_pythonpath, str(Path(__file__).resolve().parents[2]))
from benchmarks._common import pin_blas_threads  # noqa: E402

from solvers import schrodinger_bridge  # noqa: E402
from solvers.transport.benchmark import (make_pair, cbw_uvp,  # noqa: E402
                                         PUBLISHED_LIGHTSB_CBW_UVP)

REFERENCE_LR = {0.1: 1e-3, 1.0: 3e-3, 10.0: 6e-2}


def run_cell(D, eps, n, *, rotated=False, sample_metric=True, fit_kwargs=None, seed=0):
    pair = make_pair(D, eps, rotated=rotated, rng=seed)
    rng = np.random.default_rng(seed + 1)
    x0, x1 = pair.sample_x0(n, rng), pair.sample_x1(n, rng)
    kw = dict(rng=seed)
    if rotated:
        kw["covariance"] = "full"
    kw.update(fit_kwargs or {})
    wall, cpu = time.perf_counter(), time.process_time()
    sb = schrodinger_bridge(x0, x1, eps, **kw)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    xt = pair.sample_x0(1000, np.random.default_rng(seed + 2))
    row = {"D": D, "eps": eps, "n": n, "rotated": rotated, "optimizer": sb.optimizer,
           "nit": int(sb.nit), "n_components": int(sb.n_components), "fit_wall_s": wall,
           "fit_cpu_s": cpu,
           "cbw_uvp_exact": cbw_uvp(sb, pair, x=xt, exact=True), "message": sb.message,
           "published": PUBLISHED_LIGHTSB_CBW_UVP[eps if eps != 1.0 else 1][D]
           if D in (2, 16, 64, 128) else None}
    if sample_metric:
        row["cbw_uvp_sample"] = cbw_uvp(sb, pair, x=xt, n_samples=1000, rng=seed + 3)
        row["sample_floor"] = cbw_uvp(pair.bridge(), pair, x=xt, n_samples=1000, rng=seed + 3)
    return row


def _s(t):
    return "not reached" if t is None else f"{t:.1f}"


def time_to_target(D, eps, n, seed=0):
    """CPU seconds each optimizer needs to reach the reference Adam schedule's final error.

    Both runs record (CPU seconds excluding the monitoring, exact cBW2-UVP) through the
    callback: every L-BFGS iteration, every 250 Adam steps.
    """
    from solvers.transport import bridge_from_parameters

    pair = make_pair(D, eps, rng=seed)
    rng = np.random.default_rng(seed + 1)
    x0, x1 = pair.sample_x0(n, rng), pair.sample_x1(n, rng)
    xt = pair.sample_x0(500, np.random.default_rng(seed + 2))
    curves = {}
    for name, kw, every in (("lbfgs", {}, 1),
                            ("adam-ref", dict(optimizer="adam", maxiter=10_000, lr_decay=1.0,
                                              lr=REFERENCE_LR[eps]), 250)):
        trace, spent = [], [0.0]
        t0 = time.process_time()

        def cb(res, trace=trace, spent=spent, every=every, t0=t0):
            if res.nit % every:
                return
            tin = time.process_time()
            # res.x = [log alpha (K), r (K D), log s (K D)] for diagonal S
            K = res.x.size // (1 + 2 * D)
            la, r, q = np.split(res.x, [K, K + K * D])
            sb = bridge_from_parameters(la, r.reshape(K, D), np.exp(q).reshape(K, D), eps)
            trace.append((tin - t0 - spent[0], cbw_uvp(sb, pair, x=xt, exact=True)))
            spent[0] += time.process_time() - tin

        schrodinger_bridge(x0, x1, eps, rng=seed, callback=cb, **kw)
        curves[name] = trace
    target = curves["adam-ref"][-1][1]
    first = {k: next((t for t, e in c if e <= target), None) for k, c in curves.items()}
    print(f"time to reach the reference schedule's final cBW2-UVP {target:.3f} % "
          f"(D={D}, eps={eps}, n={n}, CPU s without monitoring): "
          f"L-BFGS {_s(first['lbfgs'])}, Adam reference {_s(first['adam-ref'])} "
          f"(full schedule {curves['adam-ref'][-1][0]:.1f}); "
          f"best L-BFGS error {min(e for _, e in curves['lbfgs']):.3f} %", flush=True)
    return curves


#: the three cases of the speed table: (D, eps) on make_pair(D, eps, rng=0), 150k samples
SPEED_CASES = ((16, 1.0), (16, 0.1), (64, 1.0))


def _iterate_bridge(res, D, eps):
    """The callback's iterate as a bridge: ``res.bridge`` where the library provides it,
    else decoded from the flat ``res.x = [log alpha, r, log s]`` (diagonal S)."""
    from solvers.transport import bridge_from_parameters

    if "bridge" in res:
        return res.bridge
    K = res.x.size // (1 + 2 * D)
    la, r, q = np.split(np.asarray(res.x), [K, K + K * D])
    return bridge_from_parameters(la, r.reshape(K, D), np.exp(q).reshape(K, D), eps)


def speed_case(D, eps, n, *, seed=0, reach=(), every=1):
    """One default fit on ``make_pair(D, eps, rng=seed)``: exact cBW2-UVP on 1000 test
    inputs and the fit's CPU seconds (``time.process_time``, no callback). With ``reach``:
    a second, monitored fit gives the CPU seconds (monitoring excluded) at which the
    current iterate first reaches each error in ``reach`` (checked every ``every``
    iterations, until all are reached)."""
    pair = make_pair(D, eps, rng=seed)
    rng = np.random.default_rng(seed + 1)
    x0, x1 = pair.sample_x0(n, rng), pair.sample_x1(n, rng)
    xt = pair.sample_x0(1000, np.random.default_rng(seed + 2))
    cpu = time.process_time()
    sb = schrodinger_bridge(x0, x1, eps, rng=seed)
    cpu = time.process_time() - cpu
    row = {"D": D, "eps": eps, "n": n, "cpu_s": cpu, "cbw_uvp_exact": cbw_uvp(sb, pair, x=xt,
                                                                           exact=True),
           "n_components": int(sb.n_components), "nit": int(sb.nit), "reach_cpu_s": {}}
    if not reach:
        return row
    todo, spent, calls = sorted(reach, reverse=True), [0.0], [0]
    t0 = time.process_time()

    def monitor(res):
        calls[0] += 1
        if not todo or calls[0] % every:
            return
        tin = time.process_time()
        err = cbw_uvp(_iterate_bridge(res, D, eps), pair, x=xt, exact=True)
        while todo and err <= todo[0]:
            row["reach_cpu_s"][todo.pop(0)] = tin - t0 - spent[0]
        spent[0] += time.process_time() - tin

    schrodinger_bridge(x0, x1, eps, rng=seed, callback=monitor)
    return row


def speed_table(cases, n, *, seed=0, reach=(), every=1, out=None):
    """Print the speed table: error, CPU seconds, CPU seconds to reach ``reach``."""
    import solvers

    print(f"solvers from {os.path.dirname(solvers.__file__)}; NUMBA_NUM_THREADS="
          f"{os.environ.get('NUMBA_NUM_THREADS')} OPENBLAS_NUM_THREADS="
          f"{os.environ.get('OPENBLAS_NUM_THREADS')}; load {os.getloadavg()}", flush=True)
    pair = make_pair(2, 1.0, rng=seed)   # load the Numba cache outside the timings
    warm = np.random.default_rng(0)
    schrodinger_bridge(pair.sample_x0(3000, warm), pair.sample_x1(3000, warm), 1.0, rng=0,
                       maxiter=5)
    rows = []
    for D, eps in cases:
        rows.append(speed_case(D, eps, n, seed=seed, reach=reach, every=every))
        if out:
            with open(out, "w") as fh:
                json.dump(rows, fh, indent=1)
    reach_txt = " | ".join(f"CPU s to {e:g} %" for e in sorted(reach))
    print("\n| case | cBW2-UVP % | CPU s | K | nit |" + (f" {reach_txt} |" if reach else ""))
    print("|---|---|---|---|---|" + "---|" * len(reach))
    for r in rows:
        hits = " | ".join(f"{r['reach_cpu_s'][e]:.1f}" if e in r["reach_cpu_s"]
                          else "not reached" for e in sorted(reach))
        print(f"| D = {r['D']}, eps = {r['eps']:g} | {r['cbw_uvp_exact']:.4f} | "
              f"{r['cpu_s']:.1f} | {r['n_components']} | {r['nit']} |"
              + (f" {hits} |" if reach else ""), flush=True)
    print(f"load {os.getloadavg()}")
    return rows


def _speed_rows_of(root, cases, n, seed):
    """The speed rows of the library at ``root`` (a checkout), from a fresh process of
    this script (``PYTHONPATH=root``): one process per case, so the two libraries of
    :func:`speed_against` alternate case by case."""
    import subprocess
    import tempfile

    rows = []
    for D, eps in cases:
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "rows.json")
            env = dict(os.environ, PYTHONPATH=str(root))
            subprocess.run([sys.executable, __file__, "--speed", "--case", str(D), str(eps),
                            "--n", str(n), "--seed", str(seed), "--out", out],
                           env=env, check=True, stdout=subprocess.DEVNULL)
            with open(out) as fh:
                rows += json.load(fh)
    return rows


def speed_against(cases, n, other, *, seed=0, out=None):
    """The speed table of this library side by side with the checkout ``other`` (e.g.
    an older commit in its own worktree): per case, both fits in fresh processes,
    alternating which runs first, and the ratios this / other."""
    import solvers

    here = Path(solvers.__file__).resolve().parents[1]
    print(f"this: {here}; other: {Path(other).resolve()}; NUMBA_NUM_THREADS="
          f"{os.environ.get('NUMBA_NUM_THREADS')} OPENBLAS_NUM_THREADS="
          f"{os.environ.get('OPENBLAS_NUM_THREADS')}; load {os.getloadavg()}", flush=True)
    pairs = []
    for i, case in enumerate(cases):
        order = (here, other) if i % 2 == 0 else (other, here)
        got = {root: _speed_rows_of(root, [case], n, seed)[0] for root in order}
        pairs.append((got[other], got[here]))
        print(f"D = {case[0]}, eps = {case[1]:g}: other {got[other]['cbw_uvp_exact']:.4f} % / "
              f"{got[other]['cpu_s']:.1f} s, this {got[here]['cbw_uvp_exact']:.4f} % / "
              f"{got[here]['cpu_s']:.1f} s; load {os.getloadavg()}", flush=True)
        if out:
            with open(out, "w") as fh:
                json.dump([{"other": a, "this": b} for a, b in pairs], fh, indent=1)
    print("\n| case | other: cBW2-UVP % / CPU s | this: cBW2-UVP % / CPU s "
          "| CPU this / other | error this / other |")
    print("|---|---|---|---|---|")
    for a, b in pairs:
        print(f"| D = {b['D']}, eps = {b['eps']:g} | {a['cbw_uvp_exact']:.4f} / "
              f"{a['cpu_s']:.1f} | {b['cbw_uvp_exact']:.4f} / {b['cpu_s']:.1f} | "
              f"{b['cpu_s'] / a['cpu_s']:.2f} | "
              f"{b['cbw_uvp_exact'] / a['cbw_uvp_exact']:.2f} |", flush=True)
    print(f"load {os.getloadavg()}")
    return pairs


def fmt(row):
    s = f"{row['cbw_uvp_exact']:.3f}"
    if "cbw_uvp_sample" in row:
        s += f" / {row['cbw_uvp_sample']:.3f} (floor {row['sample_floor']:.3f})"
    return s + f", {row['fit_wall_s']:.0f} s wall / {row['fit_cpu_s']:.0f} s CPU"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--full", action="store_true",
                    help="the published grid at the README's sample sizes (default: quick)")
    ap.add_argument("--quick", action="store_true",
                    help="D = 2 only, 4000 samples per side (the default without --full)")
    ap.add_argument("--dims", type=int, nargs="+", default=None,
                    help="default 2 16 64 128 with --full, 2 otherwise")
    ap.add_argument("--eps", type=float, nargs="+", default=[0.1, 1.0, 10.0])
    ap.add_argument("--n", type=int, default=None,
                    help="training samples per side (150000 with --full, 4000 otherwise)")
    ap.add_argument("--n-high-dim", type=int, default=None,
                    help="training samples per side for D >= 64 (fit cost is O(n K D))")
    ap.add_argument("--seed", type=int, default=0,
                    help="pair, data, fit and test-input seed (make_pair(..., rng=seed))")
    ap.add_argument("--n-rotated", type=int, default=None,
                    help="training samples per side for rotated pairs (full S, O(n K D^2))")
    ap.add_argument("--rotated", action="store_true", help="also rotated pairs (full S)")
    ap.add_argument("--rotated-max-dim", type=int, default=16)
    ap.add_argument("--no-sample-metric", action="store_true")
    ap.add_argument("--compare-adam", nargs=2, type=float, metavar=("D", "EPS"))
    ap.add_argument("--time-to-target", nargs=2, type=float, metavar=("D", "EPS"))
    ap.add_argument("--speed", action="store_true",
                    help="the speed table: default fits on D = 16 eps = 1, D = 16 eps = 0.1, "
                         "D = 64 eps = 1 (150000 samples per side unless --n), exact "
                         "cBW2-UVP and CPU seconds")
    ap.add_argument("--case", nargs=2, type=float, action="append", metavar=("D", "EPS"),
                    help="with --speed: this case instead of the three (repeatable)")
    ap.add_argument("--against", default=None, metavar="CHECKOUT",
                    help="with --speed: also run each case on the library of this checkout "
                         "(its root directory) in fresh processes and print both side by "
                         "side with the ratios")
    ap.add_argument("--reach", type=float, nargs="+", default=(),
                    help="with --speed: also the CPU seconds until the iterate first reaches "
                         "these errors (%%, a second, monitored fit)")
    ap.add_argument("--reach-every", type=int, default=1,
                    help="with --reach: check the error every this many iterations")
    ap.add_argument("--budget", type=float, default=float("inf"), help="seconds")
    ap.add_argument("--out", default=None, help="write the rows as JSON to this path")
    args = ap.parse_args()
    pin_blas_threads()
    if args.speed:
        cases = [(int(D), e) for D, e in args.case] if args.case else SPEED_CASES
        if args.against:
            speed_against(cases, args.n if args.n else 150_000, args.against, seed=args.seed,
                          out=args.out)
            return
        speed_table(cases, args.n if args.n else 150_000, seed=args.seed, reach=args.reach,
                    every=args.reach_every, out=args.out)
        return
    full = args.full and not args.quick
    defaults = (dict(dims=[2, 16, 64, 128], n=150_000, n_high_dim=150_000, n_rotated=100_000)
                if full else dict(dims=[2], n=4000, n_high_dim=4000, n_rotated=4000))
    for name, value in defaults.items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    if args.out:
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    if args.time_to_target:
        D = int(args.time_to_target[0])
        time_to_target(D, args.time_to_target[1], args.n if D < 64 else args.n_high_dim)
        return
    start = time.perf_counter()
    rows, skipped = [], []
    if args.compare_adam:
        D, eps = int(args.compare_adam[0]), float(args.compare_adam[1])
        n = args.n if D < 64 else args.n_high_dim
        for name, kw in (("lbfgs (default)", {}),
                         ("adam, reference schedule", dict(optimizer="adam", maxiter=10_000,
                                                           batch_size=128, lr_decay=1.0,
                                                           lr=REFERENCE_LR[eps]))):
            row = run_cell(D, eps, n, fit_kwargs=kw, sample_metric=False)
            print(f"compare D={D} eps={eps} n={n} {name}: {fmt(row)} ({row['nit']} it)",
                  flush=True)
    # cheap cells first, so a budget cut drops the expensive high-dimensional ones
    low = [D for D in args.dims if D < 64]
    high = [D for D in args.dims if D >= 64]
    rot_dims = [D for D in args.dims if D <= args.rotated_max_dim] if args.rotated else []
    cells = [(D, eps, False) for D in low for eps in args.eps]
    cells += [(D, eps, True) for D in rot_dims if D <= 2 for eps in args.eps]
    cells += [(D, eps, False) for D in high for eps in args.eps]
    cells += [(D, eps, True) for D in rot_dims if D > 2 for eps in args.eps]
    for D, eps, rot in cells:
        if time.perf_counter() - start > args.budget:
            skipped.append((D, eps, rot))
            continue
        n = args.n_rotated if rot else (args.n if D < 64 else args.n_high_dim)
        row = run_cell(D, eps, n, rotated=rot, sample_metric=not args.no_sample_metric,
                       seed=args.seed)
        rows.append(row)
        print(f"D={D:4d} eps={eps:5.1f} n={n} {'rotated/full' if rot else 'aligned/diag'}: "
              f"cBW2-UVP exact / sample % = {fmt(row)}  (published {row['published']}; "
              f"K = {row['n_components']}, {row['nit']} it, {row['message']})", flush=True)
        if args.out:
            with open(args.out, "w") as fh:
                json.dump(rows, fh, indent=1)

    print("\n| pair | eps | " + " | ".join(f"D={D}" for D in args.dims) + " |")
    print("|---|---|" + "---|" * len(args.dims))
    for rot in ([False, True] if args.rotated else [False]):
        for eps in args.eps:
            cells_txt = []
            for D in args.dims:
                hit = [r for r in rows if r["D"] == D and r["eps"] == eps and r["rotated"] == rot]
                cells_txt.append(f"{hit[0]['cbw_uvp_exact']:.3f} ({hit[0]['fit_wall_s']:.0f} s)"
                                 if hit else "not run")
            kind = "rotated, full S" if rot else "axis-aligned, diag S"
            print(f"| {kind} | {eps:g} | " + " | ".join(cells_txt) + " |")
        if not rot:
            for eps in args.eps:
                pub = PUBLISHED_LIGHTSB_CBW_UVP[eps if eps != 1.0 else 1]
                print(f"| published LightSB | {eps:g} | "
                      + " | ".join(str(pub.get(D, "-")) for D in args.dims) + " |")
    if skipped:
        print(f"not run (budget {args.budget:.0f} s reached): {skipped}")
    saved = f"; rows saved to {args.out}" if args.out else ""
    print(f"total {time.perf_counter() - start:.0f} s{saved}")


if __name__ == "__main__":
    main()
