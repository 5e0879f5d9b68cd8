"""Warm small calls of ``learn_dag``: the order search's numpy fits against the Numba ones.

Under ``backend="auto"`` a graph with fewer than ``SEARCH_GENERIC_BELOW`` nodes (see
``solvers/dag/_dag_kernels.py``) runs the order search's node fits (``local_fit``,
``add_gain``) with the numpy references, which need no compilation; COSMO's training steps
stay compiled at every size. This script times warm ``learn_dag`` calls both ways on
linear-Gaussian ER2 data of several sizes, CPU time (``time.process_time``), interleaved,
best of ``--repeat``, and prints the ratio and the difference per call, so the threshold
can be placed where the numpy fits cost at most about twice the compiled ones::

    NUMBA_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/peers/dag_small_calls.py

Both paths fit the same data with the same ``rng``; "same graph" says whether their
adjacency matrices agree (the fits agree to round-off).
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
from benchmarks._common import best_cpu_seconds, pin_blas_threads  # noqa: E402

import numpy as np  # noqa: E402



def _search_fits(generic):
    """Make "auto" run the order search's fits generically (True) or compiled (False) at
    every size, by moving the threshold of both table entries."""
    from solvers.dag._dag_kernels import KERNELS

    for name in ("local_fit", "add_gain"):
        KERNELS.operations[name]["generic_below"] = np.inf if generic else 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dims", default="4,5,6,8,9,10,12,15,20")
    ap.add_argument("--n", type=int, default=500)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    pin_blas_threads(None)
    os.environ.setdefault("TQDM_DISABLE", "1")
    from solvers import learn_dag
    from solvers.dag import simulate_data
    from solvers.dag._dag_kernels import SEARCH_GENERIC_BELOW

    print(f"# warm learn_dag calls, CPU s, best of {args.repeat}, interleaved; "
          f"NUMBA_NUM_THREADS={os.environ.get('NUMBA_NUM_THREADS')}, "
          f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS')}, "
          f"load {os.getloadavg()[0]:.1f}; SEARCH_GENERIC_BELOW = {SEARCH_GENERIC_BELOW}")
    print(f"# {'d':>3} {'n':>6} | {'numpy':>8} {'numba':>8} {'ratio':>6} {'diff ms':>8}"
          "  same graph  auto runs")
    for d in (int(v) for v in args.dims.split(",")):
        X = simulate_data(d, args.n, k=2, graph_type="ER", rng=d).X
        graphs, t = {}, {}
        for generic in (True, False):         # warm (and compile) both
            _search_fits(generic)
            graphs[generic] = learn_dag(X, rng=0).adjacency != 0
            t[generic] = np.inf
        for _ in range(args.repeat):          # interleaved
            for generic in (True, False):
                _search_fits(generic)
                t[generic] = min(t[generic], best_cpu_seconds(lambda: learn_dag(X, rng=0), 1))
        same = bool(np.array_equal(graphs[True], graphs[False]))
        auto = "numpy" if d < SEARCH_GENERIC_BELOW else "numba"
        print(f"  {d:>3} {args.n:>6} | {t[True]:8.4f} {t[False]:8.4f} "
              f"{t[True] / t[False]:6.2f} {1e3 * (t[True] - t[False]):8.1f}  {str(same):>10}"
              f"  {auto}", flush=True)
    print(f"# load after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
