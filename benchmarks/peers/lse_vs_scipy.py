"""Side by side: solvers.logsumexp (Numba and generic paths) vs scipy.special.logsumexp,
and the blocked logsumexp_matmul vs the materialised computation, in one process.

Usage: OPENBLAS_NUM_THREADS=1 python benchmarks/peers/lse_vs_scipy.py [--matmul-n 20000]
Prints best-of-5 times and the ratios (machines here are shared and noisy: compare ratios).
"""
import argparse
import os
import resource
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from scipy.special import logsumexp as scipy_lse  # noqa: E402

from solvers import logsumexp, logsumexp_matmul  # noqa: E402


def best_of(fn, repeat=5):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--matmul-n", type=int, default=5000)
    parser.add_argument("--dense", action="store_true",
                        help="also time the materialised matmul LSE (needs ~n*n*40 bytes)")
    args = parser.parse_args()
    a = np.random.default_rng(0).normal(size=(1000, 10000))
    logsumexp(a[:100, :400], axis=0, backend="numba")
    logsumexp(a[:100, :400], axis=1, backend="numba")
    print("logsumexp on a (1000, 10000) float64 array, best of 5")
    print(f"{'axis':>4}  {'scipy s':>9}  {'numba s':>9}  {'generic s':>9}  {'scipy/numba':>11}")
    for axis in (0, 1):
        t_scipy = best_of(lambda: scipy_lse(a, axis=axis))
        t_numba = best_of(lambda: logsumexp(a, axis=axis, backend="numba"))
        t_gen = best_of(lambda: logsumexp(a, axis=axis, backend="numpy"))
        print(f"{axis:>4}  {t_scipy:9.4f}  {t_numba:9.4f}  {t_gen:9.4f}  {t_scipy / t_numba:11.1f}")

    n = args.matmul_n
    rng = np.random.default_rng(1)
    A, B = rng.normal(size=(n, 16)) / 4, rng.normal(size=(16, n)) / 4
    logsumexp_matmul(A[:8], B[:, :8])
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    t_blocked = best_of(lambda: logsumexp_matmul(A, B), repeat=2)
    rss1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"\nlogsumexp_matmul n = m = {n}, k = 16: blocked {t_blocked:.3f} s, "
          f"peak RSS growth {rss1 - rss0:.0f} MiB")
    if args.dense:
        t_dense = best_of(lambda: scipy_lse(A @ B, axis=1), repeat=1)
        rss2 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"materialised scipy logsumexp(A @ B): {t_dense:.3f} s, peak RSS growth "
              f"{rss2 - rss1:.0f} MiB; time ratio dense/blocked {t_dense / t_blocked:.1f}")


if __name__ == "__main__":
    main()
