"""Warm small calls of ``minimize_cbo``: the generic code against the Numba kernels.

Under ``backend="auto"`` a run whose size (``maxfev * d``, see
``solvers/optimize/_cbo_kernels.py``) is below ``GENERIC_BELOW`` runs the generic code,
which needs no compilation. This script times warm calls of both paths on small problems
(sphere and Rastrigin, scalar and vectorized objectives, several ``d`` and ``maxfev``),
CPU time (``time.process_time``), interleaved, best of ``--repeat``, and prints the ratio
and the difference per call, with the run size, so the threshold can be placed where the
generic code costs at most about twice Numba's time (or about 50 us more per call). Each
timed call runs ``--seeds`` seeds (the two paths' trajectories part after a few steps, as
round-off grows in chaotic dynamics, so one seed may restart more often on one path than
on the other)::

    NUMBA_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/peers/cbo_small_calls.py

Both paths get the same ``rng``; their results agree to round-off.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
from benchmarks._common import best_cpu_seconds, pin_blas_threads  # noqa: E402

import numpy as np  # noqa: E402


def sphere(x):
    return np.sum((x - 0.5) ** 2, axis=0)


def rastrigin(x):
    z = x - 0.5
    return 10.0 * z.shape[0] + np.sum(z * z - 10.0 * np.cos(2 * np.pi * z), axis=0)


def scalar_sphere(x):
    return float(np.sum((x - 0.5) ** 2))


CASES = {"sphere (vectorized)": (sphere, True), "rastrigin (vectorized)": (rastrigin, True),
         "sphere (scalar)": (scalar_sphere, False)}



def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dims", default="2,5,10,20")
    ap.add_argument("--maxfev", default="500,2000,5000,20000")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--cases", default=",".join(CASES))
    args = ap.parse_args(argv)
    pin_blas_threads(None)
    from solvers import minimize_cbo
    from solvers.optimize._cbo_kernels import GENERIC_BELOW

    print(f"# warm minimize_cbo calls, CPU s, best of {args.repeat}, interleaved; "
          f"NUMBA_NUM_THREADS={os.environ.get('NUMBA_NUM_THREADS')}, "
          f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS')}, "
          f"load {os.getloadavg()[0]:.1f}; GENERIC_BELOW = {GENERIC_BELOW:g}")
    print(f"# {'case':<24} {'d':>3} {'maxfev':>7} {'size':>9} {'nfev':>13} | {'generic':>8} "
          f"{'numba':>8} {'ratio':>6} {'diff ms':>8}  auto runs   (times per call, "
          f"{args.seeds} seeds; nfev: their mean, generic / numba)")
    for name in args.cases.split(","):
        fun, vectorized = CASES[name]
        for d in (int(v) for v in args.dims.split(",")):
            for maxfev in (int(v) for v in args.maxfev.split(",")):
                kw = dict(bounds=[(-3.0, 3.0)] * d, maxfev=maxfev, vectorized=vectorized)
                runs = {b: (lambda b=b: [minimize_cbo(fun, backend=b, rng=seed, **kw)
                                         for seed in range(args.seeds)])
                        for b in ("numpy", "numba")}
                res = {b: run() for b, run in runs.items()}  # warm (and compile) both
                t = {b: np.inf for b in runs}
                for _ in range(args.repeat):  # interleaved
                    for b, run in runs.items():
                        t[b] = min(t[b], best_cpu_seconds(run, 1))
                size = maxfev * d
                auto = "generic" if size < GENERIC_BELOW else "numba"
                nfev = {b: np.mean([r.nfev for r in out]) for b, out in res.items()}
                t = {b: v / args.seeds for b, v in t.items()}
                print(f"  {name:<24} {d:>3} {maxfev:>7} {size:>9} {nfev['numpy']:>6.0f} "
                      f"{nfev['numba']:>6.0f} | {t['numpy']:8.4f} {t['numba']:8.4f} "
                      f"{t['numpy'] / t['numba']:6.2f} {1e3 * (t['numpy'] - t['numba']):8.2f}"
                      f"  {auto}", flush=True)
    print(f"# load after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
