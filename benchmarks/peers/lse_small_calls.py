"""Warm small calls of the log-sum-exp core: the Numba kernels against the generic code.

Under ``backend="auto"`` a numpy input below a kernel's ``generic_below`` size runs the
generic code (nothing to compile). This script measures, in one process and interleaved,
the warm per-call time of both paths over a range of sizes for every core operation, so
that the thresholds can be checked: below a threshold the generic call should be at most
about 2x slower than the Numba call, or at most about 50 us slower.

    NUMBA_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/peers/lse_small_calls.py

Per-call process CPU time (microseconds), the best of ``--rounds`` batches; the columns:
``numba`` (``backend="numba"``), ``generic`` (``backend="numpy"``), ``auto`` (what
``backend="auto"`` runs), their ratio and difference, and which path ``"auto"`` takes.
Runs against older checkouts too (the ``auto`` column then shows whatever they do).
"""
import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # repo root: benchmarks._common
from benchmarks._common import pin_blas_threads  # noqa: E402
from solvers import log_softmax, logsumexp, logsumexp_matmul, softmax  # noqa: E402


def _per_call(fn, budget, rounds, clock=time.process_time):
    """Best per-call CPU seconds over ``rounds`` batches sized to take about ``budget``."""
    fn()
    start = clock()
    fn()
    once = max(clock() - start, 1e-6)
    calls = max(int(budget / once), 1)
    best = np.inf
    for _ in range(rounds):
        start = clock()
        for _ in range(calls):
            fn()
        best = min(best, (clock() - start) / calls)
    return best


def _cases(quick):
    rng = np.random.default_rng(0)
    sizes = [2 ** p for p in range(8, 19, 2 if quick else 1)]
    for size in sizes:
        v = rng.normal(size=size)
        yield "lse", "1-d", size, lambda be, v=v: logsumexp(v, backend=be)
        for lanes in (16, 256):
            if size < 4 * lanes:
                continue
            a = rng.normal(size=(lanes, size // lanes))
            w = np.abs(a)
            c = np.ascontiguousarray(a.T)     # lanes along a strided axis (C order)
            cw = np.abs(c)
            yield "lse", f"rows x{lanes}", size, lambda be, a=a: logsumexp(a, 1, backend=be)
            yield "lse", f"cols x{lanes}", size, lambda be, c=c: logsumexp(c, 0, backend=be)
            yield "lse", f"rows b x{lanes}", size, \
                lambda be, a=a, w=w: logsumexp(a, 1, b=w, backend=be)
            yield "lse", f"cols b x{lanes}", size, \
                lambda be, c=c, cw=cw: logsumexp(c, 0, b=cw, backend=be)
            yield "softmax", f"rows x{lanes}", size, lambda be, a=a: softmax(a, 1, backend=be)
            yield "softmax", f"cols x{lanes}", size, \
                lambda be, c=c: softmax(c, 0, backend=be)
            yield "log_softmax", f"rows x{lanes}", size, \
                lambda be, a=a: log_softmax(a, 1, backend=be)
        yield "softmax", "1-d", size, lambda be, v=v: softmax(v, backend=be)
    for k in (1, 4, 16, 64):
        for work in [2 ** p for p in range(12, 25, 2 if quick else 1)]:
            n = max(int(np.sqrt(work / k)), 1)      # square products: n x k by k x n
            A, B = rng.normal(size=(n, k)) / 2, rng.normal(size=(k, n)) / 2
            yield "matmul", f"k={k}", n * k * n, \
                lambda be, A=A, B=B: logsumexp_matmul(A, B, backend=be)


def _work(op, case, size):
    """The call's size in the unit of its kernel's ``generic_below`` (elements read for
    the reductions, ``n * m * max(k, 64)`` for matmul), from the case's shape."""
    if op == "matmul":
        k = int(case.split("=")[1])
        n = max(int(np.sqrt(size / k)), 1)
        return n * n * max(k, 64)
    return 2 * size if " b " in f" {case} " else size


def _auto_path(op, case, size):
    """'generic' or 'numba': what "auto" runs for this call (from the kernel table)."""
    try:
        from solvers.lse._lse_kernels import KERNELS
    except ImportError:
        return "?"
    name = {"lse": "lse_reduce", "softmax": "softmax", "log_softmax": "softmax",
            "matmul": "lse_matmul"}[op]
    below = KERNELS.generic_below(name) if hasattr(KERNELS, "generic_below") else 0
    return "generic" if _work(op, case, size) < below else "numba"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--budget", type=float, default=0.02,
                        help="CPU seconds per batch (default 0.02)")
    parser.add_argument("--quick", action="store_true", help="every other size")
    parser.add_argument("--ops", default="lse,softmax,log_softmax,matmul")
    args = parser.parse_args()
    pin_blas_threads()
    import numba

    ops = set(args.ops.split(","))
    print(f"# warm per-call CPU us, best of {args.rounds}; numba threads "
          f"{numba.get_num_threads()}, OPENBLAS_NUM_THREADS="
          f"{os.environ.get('OPENBLAS_NUM_THREADS')}, load {os.getloadavg()[0]:.2f}")
    print(f"{'op':12s} {'case':12s} {'size':>8s} {'numba':>9s} {'generic':>9s} "
          f"{'auto':>9s} {'gen/nb':>7s} {'gen-nb':>8s}  auto runs")
    for op, case, size, call in _cases(args.quick):
        if op not in ops:
            continue
        with np.errstate(all="ignore"):
            t = {be: _per_call(lambda: call(be), args.budget, 1) for be in
                 ("numba", "numpy", "auto")}
            for _ in range(args.rounds - 1):  # interleaved rounds
                for be in t:
                    t[be] = min(t[be], _per_call(lambda: call(be), args.budget, 1))
        nb, gen, auto = (1e6 * t[be] for be in ("numba", "numpy", "auto"))
        print(f"{op:12s} {case:12s} {size:8d} {nb:9.1f} {gen:9.1f} {auto:9.1f} "
              f"{gen / nb:7.2f} {gen - nb:8.1f}  {_auto_path(op, case, size)}", flush=True)
    print(f"# load after {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
