"""Side by side, in one process: solvers.logsumexp (Numba single-pass kernel and generic
path) vs scipy.special.logsumexp, a plain numpy two-pass ``log(sum(exp(a - max)))`` and
``np.exp`` alone (the floor: one exp per element), then the blocked logsumexp_matmul vs the
materialised computation.

Usage: NUMBA_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/peers/lse_vs_scipy.py
       [--repeat 7] [--matmul-n 5000] [--dense] [--cpu-time]
Prints the best of ``--repeat`` times (wall clock, or process CPU time with --cpu-time,
which is steadier on a shared machine) and the ratios; the thread settings are printed.
"""
import argparse
import os
import resource
import sys
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import scipy  # noqa: E402
from scipy.special import logsumexp as scipy_lse  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # repo root: benchmarks._common
from benchmarks._common import pin_blas_threads  # noqa: E402
from solvers import logsumexp, logsumexp_matmul  # noqa: E402


def best_of(fn, repeat, clock):
    times = []
    for _ in range(repeat):
        start = clock()
        fn()
        times.append(clock() - start)
    return min(times)


def two_pass(a, axis):
    """The plain numpy baseline of issue 14."""
    mx = np.max(a, axis=axis, keepdims=True)
    return np.log(np.sum(np.exp(a - mx), axis=axis)) + np.squeeze(mx, axis)


def lse_table(a, repeat, clock):
    logsumexp(a[:100, :400], axis=0, backend="numba")
    logsumexp(a[:100, :400], axis=1, backend="numba")
    rows = []
    for axis in (0, 1):
        t = {
            "numba": best_of(lambda: logsumexp(a, axis=axis, backend="numba"), repeat, clock),
            "generic": best_of(lambda: logsumexp(a, axis=axis, backend="numpy"), repeat,
                               clock),
            "scipy": best_of(lambda: scipy_lse(a, axis=axis), repeat, clock),
            "two_pass": best_of(lambda: two_pass(a, axis), repeat, clock),
            "np_exp": best_of(lambda: np.exp(a), repeat, clock),
        }
        rows.append((axis, t))
    return rows


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--matmul-n", type=int, default=5000)
    parser.add_argument("--dense", action="store_true",
                        help="also time the materialised matmul LSE (needs ~n*n*40 bytes)")
    parser.add_argument("--cpu-time", action="store_true",
                        help="process CPU time instead of wall clock")
    args = parser.parse_args()
    pin_blas_threads()
    clock = time.process_time if args.cpu_time else time.perf_counter
    import numba

    print(f"threads: NUMBA_NUM_THREADS={numba.config.NUMBA_NUM_THREADS} "
          f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS')}; "
          f"numpy {np.__version__}, scipy {scipy.__version__}, numba {numba.__version__}; "
          f"clock: {'process CPU' if args.cpu_time else 'wall'}")
    a = np.random.default_rng(0).normal(size=(1000, 10000))
    print(f"logsumexp on a (1000, 10000) float64 array, best of {args.repeat}, ms")
    print(f"{'axis':>4}  {'ours':>7}  {'generic':>7}  {'scipy':>7}  {'2-pass':>7}  "
          f"{'np.exp':>7}  {'2-pass/ours':>11}  {'scipy/ours':>10}  {'ours/np.exp':>11}")
    for axis, t in lse_table(a, args.repeat, clock):
        ms = {k: 1e3 * v for k, v in t.items()}
        print(f"{axis:>4}  {ms['numba']:7.1f}  {ms['generic']:7.1f}  {ms['scipy']:7.1f}  "
              f"{ms['two_pass']:7.1f}  {ms['np_exp']:7.1f}  "
              f"{t['two_pass'] / t['numba']:11.2f}  {t['scipy'] / t['numba']:10.2f}  "
              f"{t['numba'] / t['np_exp']:11.2f}")

    n = args.matmul_n
    rng = np.random.default_rng(1)
    A, B = rng.normal(size=(n, 16)) / 4, rng.normal(size=(16, n)) / 4
    logsumexp_matmul(A[:8], B[:, :8])
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    t_blocked = best_of(lambda: logsumexp_matmul(A, B), 2, clock)
    rss1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"\nlogsumexp_matmul n = m = {n}, k = 16: blocked {t_blocked:.3f} s, "
          f"peak RSS growth {rss1 - rss0:.0f} MiB")
    if args.dense:
        t_dense = best_of(lambda: scipy_lse(A @ B, axis=1), 1, clock)
        rss2 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"materialised scipy logsumexp(A @ B): {t_dense:.3f} s, peak RSS growth "
              f"{rss2 - rss1:.0f} MiB; time ratio dense/blocked {t_dense / t_blocked:.1f}")


if __name__ == "__main__":
    main()
