"""CBO side by side with CBXpy (pip ``cbx``), SciPy ``dual_annealing`` and
``differential_evolution`` on the same problems, in one process.

Prints, for shifted Rastrigin and Ackley in d = 20 (start box [-3, 3]^20, success = sup-norm
distance to the minimizer below 0.25):

1. per-step time of ``solvers.minimize_cbo`` vs CBXpy's ``CBO`` at equal (M, N, d) and
   their ratio (same vectorized objective, same number of steps; each the median of
   ``--repeats`` timings, 5 by default, taken in turn with the other library's);
2. success rate, point evaluations and wall time per run for each method, and the time
   to one success (total time / successes).

Run: ``OPENBLAS_NUM_THREADS=1 python benchmarks/peers/cbo_vs_peers.py [--quick]``.
``--quick`` uses 5 runs and fewer steps in the timing part (a smoke test).

``--rates OPTIONS_JSON`` instead measures success rates of ``minimize_cbo`` alone (the
calibration of the defaults): for each ``name:d:box`` in ``--problems`` and each seed, a
shift drawn from ``default_rng(1000 + seed)`` uniformly in +-0.4 box, ``--runs`` batched
runs started in [-box, box]^d with ``rng=seed``; e.g.
``python benchmarks/peers/cbo_vs_peers.py --rates '{}' --problems rastrigin:20:3 --runs 100
--seeds 3 --first-seed 10``.
"""
import argparse
import math
import os
import sys
import time

# the checkout this script lives in, not an installed copy of the library
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from scipy.optimize import dual_annealing, differential_evolution  # noqa: E402

from solvers import minimize_cbo  # noqa: E402

D = 20
BOX = 3.0
SHIFT = np.random.default_rng(2024).uniform(-2.0, 2.0, D)


def rastrigin_last(z):
    """Rastrigin over the last axis of z - SHIFT."""
    z = z - SHIFT
    return 10.0 * D + np.sum(z * z - 10.0 * np.cos(2 * np.pi * z), axis=-1)


def ackley_last(z):
    z = z - SHIFT
    return (-20.0 * np.exp(-0.2 * np.sqrt(np.mean(z * z, axis=-1)))
            - np.exp(np.mean(np.cos(2 * np.pi * z), axis=-1)) + 20.0 + math.e)


def sphere_last(z):
    """A nearly free objective: the per-step time is then the solver's own overhead."""
    return np.einsum("...i,...i->...", z, z)


PROBLEMS = {"rastrigin": rastrigin_last, "ackley": ackley_last}


def columns(f):
    """SciPy's vectorized contract: x of shape (d, S) -> (S,)."""
    return lambda x: f(x.T)


def success(x):
    return bool(np.max(np.abs(np.asarray(x) - SHIFT)) < 0.25)


# --- CBXpy ---------------------------------------------------------------------------------

def cbx_dynamic(f, M, N, steps, seed, **kw):
    from cbx.dynamics import CBO

    x0 = np.random.default_rng(seed).uniform(-BOX, BOX, (M, N, D))
    return CBO(f, f_dim="3D", x=x0, M=M, N=N, d=D, max_it=steps, verbosity=0, seed=seed,
               **kw)


CBX_TUNED = dict(alpha=30.0, sigma=10.1, dt=0.01, noise="anisotropic")


def cbx_run(f, M, N, steps, seed):
    from cbx.scheduler import multiply

    dyn = cbx_dynamic(f, M, N, steps, seed, **CBX_TUNED)
    dyn.optimize(sched=multiply(name="alpha", factor=1.05, maximum=1e5))
    return np.asarray(dyn.best_particle), dyn.num_f_eval


def cbx_step_time(f, M, N, steps):
    dyn = cbx_dynamic(f, M, N, steps, 0, **CBX_TUNED)
    dyn.step()
    start = time.perf_counter()
    for _ in range(steps):
        dyn.step()
    return (time.perf_counter() - start) / steps


def ours_step_time(f, M, N, steps):
    kw = dict(bounds=[(-BOX, BOX)] * D, vectorized=True, n_particles=N, n_runs=M, xtol=0.0,
              rng=0, restarts=False, polish=False,
              noise="anisotropic")  # the same step as CBXpy's CBO
    # the same call once untimed: it compiles or loads from the Numba cache every kernel
    # the run uses (some load only after the first steps, e.g. once particles leave the box)
    minimize_cbo(columns(f), maxiter=steps, **kw)
    start = time.perf_counter()
    res = minimize_cbo(columns(f), maxiter=steps, **kw)
    # divided by the steps made (a stopping rule may end the start before maxiter)
    return (time.perf_counter() - start) / res.nit


def step_times(obj, M, steps, repeats):
    """Per-step times (ours, CBXpy's), each the median of ``repeats`` timings taken in
    turn, one library then the other, so that a drift in the machine's speed reaches both."""
    ours, theirs = [], []
    for _ in range(repeats):
        theirs.append(cbx_step_time(obj, M, 40, steps))
        ours.append(ours_step_time(obj, M, 40, steps))
    return float(np.median(ours)), float(np.median(theirs))


def main(quick=False, problems=("rastrigin", "ackley"), batched=100, repeats=5):
    runs = 5 if quick else 20
    batched = 5 if quick else batched
    steps = 50 if quick else 500
    repeats = 1 if quick else repeats
    print(f"# per-step time at equal (M, N, d), d=20, vectorized objective; median of "
          f"{repeats} alternating timings")
    print(f"{'objective':>10} {'(M, N, d)':>14} {'solvers ms':>11} {'CBXpy ms':>9} "
          f"{'ratio':>6}")
    for oname, obj in (("rastrigin", rastrigin_last), ("sphere", sphere_last)):
        for M in (1, 100):
            t_ours, t_cbx = step_times(obj, M, steps if M == 1 else steps // 5, repeats)
            print(f"{oname:>10} {str((M, 40, D)):>14} {1e3 * t_ours:11.3f} "
                  f"{1e3 * t_cbx:9.3f} {t_cbx / t_ours:6.1f}")

    print(f"\n# success (sup-norm < 0.25), box [-3,3]^20; {runs} seeded runs one by one, "
          f"{batched} batched")
    print(f"{'problem':>10} {'method':<44} {'success':>8} {'nfev/run':>9} "
          f"{'s/run':>7} {'s/success':>9}")
    for name in problems:
        f = PROBLEMS[name]
        rows = []
        # ours: defaults, one run at a time (as a user calls it), and batched
        t = time.perf_counter()
        ok, nfev = 0, 0
        for seed in range(runs):
            res = minimize_cbo(columns(f), bounds=[(-BOX, BOX)] * D, vectorized=True, rng=seed)
            ok += success(res.x)
            nfev += res.nfev
        rows.append(("solvers.minimize_cbo defaults", ok, nfev / runs,
                     (time.perf_counter() - t) / runs))
        t = time.perf_counter()
        res = minimize_cbo(columns(f), bounds=[(-BOX, BOX)] * D, vectorized=True,
                           n_runs=batched, rng=0)
        ok = sum(success(x) for x in res.x_runs)
        rows.append((f"solvers.minimize_cbo defaults, n_runs={batched}", ok,
                     res.nfev / batched, (time.perf_counter() - t) / batched, batched))
        # CBXpy, the spec's best published-style setting (N=40, 2000 steps = 80k)
        t = time.perf_counter()
        ok, nfev = 0, 0
        for seed in range(runs):
            best, nf = cbx_run(f, 1, 40, 2000, seed)
            ok += success(best[0])
            nfev += int(np.sum(nf))
        rows.append(("CBXpy CBO N=40 a30x1.05 s10.1 aniso 2000it", ok, nfev / runs,
                     (time.perf_counter() - t) / runs))
        t = time.perf_counter()
        best, nf = cbx_run(f, batched, 40, 2000, 0)
        ok = sum(success(b) for b in best)
        rows.append((f"CBXpy same setting, M={batched}", ok, float(np.mean(nf)),
                     (time.perf_counter() - t) / batched, batched))
        # SciPy dual_annealing, defaults
        n_da = max(runs // 2, 3)
        t = time.perf_counter()
        ok, nfev = 0, 0
        for seed in range(n_da):
            res = dual_annealing(f, [(-BOX, BOX)] * D, rng=seed)
            ok += success(res.x)
            nfev += res.nfev
        rows.append(("scipy dual_annealing defaults", ok, nfev / n_da,
                     (time.perf_counter() - t) / n_da))
        rows[-1] = rows[-1] + (n_da,)
        # SciPy differential_evolution, defaults (vectorized to make it affordable)
        n_de = 2 if quick else 3
        t = time.perf_counter()
        ok, nfev = 0, 0
        for seed in range(n_de):
            points = [0]

            def counted(x, f=f, points=points):
                points[0] += x.shape[1]
                return f(x.T)

            res = differential_evolution(counted, [(-BOX, BOX)] * D, rng=seed,
                                         vectorized=True, updating="deferred", polish=False)
            ok += success(res.x)
            nfev += points[0]
        rows.append(("scipy differential_evolution (vectorized)", ok, nfev / n_de,
                     (time.perf_counter() - t) / n_de, n_de))
        for row in rows:
            label, ok, nf, sec = row[:4]
            n = row[4] if len(row) > 4 else runs
            per_success = sec * n / ok if ok else float("inf")
            print(f"{name:>10} {label:<44} {ok:>3}/{n:<4} {nf:9.0f} {sec:7.2f} "
                  f"{per_success:9.2f}")


# --- success rates of minimize_cbo alone (calibration) -------------------------------------

def _rastrigin_cols(x, s):
    z = x - s[:, None]
    return 10.0 * z.shape[0] + np.sum(z * z - 10.0 * np.cos(2 * np.pi * z), axis=0)


def _ackley_cols(x, s):
    z = x - s[:, None]
    d = z.shape[0]
    return (-20.0 * np.exp(-0.2 * np.sqrt(np.sum(z * z, axis=0) / d))
            - np.exp(np.sum(np.cos(2 * np.pi * z), axis=0) / d) + 20.0 + math.e)


def _levy_cols(x, s):
    z = x - s[:, None]
    w = 1 + z / 4
    return (np.sin(np.pi * w[0]) ** 2
            + np.sum((w[:-1] - 1) ** 2 * (1 + 10 * np.sin(np.pi * w[:-1] + 1) ** 2), axis=0)
            + (w[-1] - 1) ** 2 * (1 + np.sin(2 * np.pi * w[-1]) ** 2))


RATE_FUNS = {"rastrigin": _rastrigin_cols, "ackley": _ackley_cols, "levy": _levy_cols}


def rates(options, problems, runs, seeds, first_seed):
    for p in problems:
        name, d, box = p.split(":")
        d, box = int(d), float(box)
        ok, seconds, nfev = 0, 0.0, 0
        for seed in range(first_seed, first_seed + seeds):
            shift = np.random.default_rng(1000 + seed).uniform(-0.4 * box, 0.4 * box, d)
            start = time.perf_counter()
            res = minimize_cbo(RATE_FUNS[name], bounds=[(-box, box)] * d, args=(shift,),
                               vectorized=True, n_runs=runs, rng=seed, **options)
            seconds += time.perf_counter() - start
            ok += int(np.sum(np.max(np.abs(res.x_runs - shift), axis=1) < 0.25))
            nfev = res.nfev // runs
        print(f"{options} {p}: {ok}/{runs * seeds} nfev/run {nfev} {seconds:.1f}s",
              flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--problems", default=None,
                        help="comma-separated subset of: " + ",".join(PROBLEMS)
                        + " (with --rates: name:d:box entries, name in "
                        + ",".join(RATE_FUNS) + ")")
    parser.add_argument("--rates", metavar="OPTIONS_JSON", default=None)
    parser.add_argument("--runs", type=int, default=100,
                        help="batched runs (and runs per seed with --rates)")
    parser.add_argument("--seeds", type=int, default=1)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=5,
                        help="alternating timings per row of the per-step table")
    args = parser.parse_args()
    if args.rates is not None:
        import json

        rates(json.loads(args.rates), (args.problems or "rastrigin:20:3").split(","),
              args.runs, args.seeds, args.first_seed)
    else:
        main(args.quick, tuple((args.problems or "rastrigin,ackley").split(",")), args.runs,
             args.repeats)
