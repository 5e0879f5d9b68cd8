"""Demo row for COSMO: a linear-Gaussian ER2 graph, default fit vs the paper's method."""
import time


def demo_rows(quick=True):
    from solvers.dag import count_accuracy, learn_dag, simulate_data

    d = 20 if quick else 50
    X, W, B = simulate_data(d, 1000, k=2, rng=100)
    learn_dag(X[:, :4], maxiter=5)  # compile / load the Numba cache outside the timing
    rows = []
    for label, refine in (("cosmo (+refine)", True), ("cosmo (paper, refine=False)", False)):
        start = time.perf_counter()
        res = learn_dag(X, method="cosmo", rng=0, refine=refine,
                        maxiter=2000 if quick else 5000)
        seconds = time.perf_counter() - start
        acc = count_accuracy(B, res.adjacency)
        rows.append({"method": f"learn_dag {label}",
                     "problem": f"ER2 linear-Gauss d={d} n=1000",
                     "quality": f"SHD {acc['shd']} TPR {acc['tpr']:.2f} FDR {acc['fdr']:.2f} "
                                f"DAG {res.is_dag()}",
                     "seconds": seconds})
    return rows
