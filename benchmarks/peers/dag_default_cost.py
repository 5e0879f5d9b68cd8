"""Cost of the default ``learn_dag`` on raw linear ER4, d = 100 (the guide's cost figure).

Runs ``noise_variance="equal", mechanism="linear"`` and the default on one simulation
(n = 1000, seed 111) and prints SHD, the models kept and wall seconds. Run it on two
checkouts to compare versions (it imports the library of the checkout it lives in)::

    NUMBA_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/peers/dag_default_cost.py
"""
import os
import sys
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("NUMBA_NUM_THREADS", "1")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

from solvers.dag import learn_dag, shd, simulate_data  # noqa: E402


def main(d=100, k=4, seed=111):
    X, W, B = simulate_data(d=d, n=1000, k=k, rng=seed)
    for kw in (dict(noise_variance="equal", mechanism="linear"), {}):
        t = time.perf_counter()
        r = learn_dag(X, rng=0, **kw)
        print(kw or "default", "SHD", shd(B != 0, r.adjacency), r.noise_variance,
              getattr(r, "mechanism", None), "%.1f s" % (time.perf_counter() - t), flush=True)


if __name__ == "__main__":
    main()
