"""Demo rows for DP-DAG: batched DAG sampling at d = 100, and VI-DP-DAG on a small ER2."""
import time


def demo_rows(quick=True):
    import numpy as np

    from solvers.dag import count_accuracy, is_dag, learn_dag, simulate_data
    from solvers.dag.dpdag import DPDAG

    rows = []
    d, n = 100, 2000 if quick else 100_000
    rng = np.random.default_rng(0)
    model = DPDAG(rng.normal(size=d), rng.normal(size=(d, d)))
    model.sample_dags(n, rng=0)  # compile / load the Numba cache outside the timing
    start = time.perf_counter()
    A = model.sample_dags(n, rng=1)
    seconds = time.perf_counter() - start
    checked = min(n, 200)
    ok = sum(is_dag(a) for a in A[:checked])
    rows.append({"method": "DPDAG.sample_dags (numba)",
                 "problem": f"d={d}, {n} DAGs",
                 "quality": f"{1e6 * seconds / n:.1f} us/DAG (reference 1660), "
                            f"{ok}/{checked} checked are DAGs",
                 "seconds": seconds})
    d = 10 if quick else 20
    X, W, B = simulate_data(d, 1000, k=2, rng=100)
    learn_dag(X, method="dpdag", rng=0, maxiter=2)  # warm the kernels outside the timing
    start = time.perf_counter()
    res = learn_dag(X, method="dpdag", rng=0, maxiter=1000 if quick else 3000)
    seconds = time.perf_counter() - start
    acc = count_accuracy(B, res.adjacency)
    rows.append({"method": "learn_dag dpdag (VI-DP-DAG)",
                 "problem": f"ER2 linear-Gauss d={d} n=1000",
                 "quality": f"SHD {acc['shd']} TPR {acc['tpr']:.2f} FDR {acc['fdr']:.2f} "
                            f"DAG {res.is_dag()}",
                 "seconds": seconds})
    return rows
