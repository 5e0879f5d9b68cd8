"""A quick tour: one call of every method in the library, on small built-in problems.
==================================================================================

Each block is what a new user types first; the docs' getting-started page shows this file.
Run: ``python examples/quick_tour.py`` from any directory (about a minute with a cold Numba
cache). It only prints; it writes no files.
"""
import argparse

import numpy as np

import solvers


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="accepted for CI; the tour is small")
    parser.add_argument("--out", default=None, help="accepted like the other examples; the "
                        "tour writes no files")
    parser.parse_args(argv)
    rng = np.random.default_rng(0)

    # --- the core: stable log-sum-exp and Gibbs weights ----------------------------------
    print("logsumexp([1000, 1000]) =", solvers.logsumexp(np.array([1000.0, 1000.0])))
    A, B = rng.normal(size=(3000, 8)), rng.normal(size=(8, 3000))
    blocked = solvers.logsumexp_matmul(A, B)          # never builds the 3000 x 3000 matrix
    print("logsumexp_matmul max error:", np.max(np.abs(blocked - solvers.logsumexp(A @ B, axis=1))))

    # --- global optimization: CBO, called like scipy.optimize ----------------------------
    def rastrigin(x):
        return float(10 * x.size + np.sum(x**2 - 10 * np.cos(2 * np.pi * x)))

    res = solvers.minimize(rastrigin, None, method="cbo", bounds=[(-3, 3)] * 5, rng=0)
    print(f"CBO on Rastrigin-5: f = {res.fun:.2e} after {res.nfev} evaluations")

    # --- Safe-KL: KL-distributionally robust logistic regression -------------------------
    from solvers.lse import dro_dataset

    X, y = dro_dataset(n=20000, d=10, loss="logistic", rng=0)
    dro = solvers.kl_dro(X, y, lam=0.3, loss="logistic", epochs=5, rng=0)
    print(f"KL-DRO (Safe-KL, 5 epochs): robust loss {dro.fun:.4f}")

    # --- LightSB: a Schrödinger bridge between two sample sets ---------------------------
    x0 = rng.normal(size=(2000, 2))
    x1 = rng.normal(size=(2000, 2)) * 0.5 + np.array([3.0, 0.0])
    bridge = solvers.schrodinger_bridge(x0, x1, epsilon=0.1, n_components=4, rng=0)
    y_samples = bridge.sample(x0[:5], n_samples=100, rng=1)
    print("LightSB: mean of samples from x0[0]:", np.round(y_samples[0].mean(axis=0), 2))

    # --- Gaussian dense associative memory ----------------------------------------------
    from solvers.memory import synthetic_patterns, perturb

    means, covs = synthetic_patterns(1000, 25, commuting=True, rng=0)   # 1000 stored, d = 25
    memory = solvers.GaussianMemory(means, covs, beta=1.0)
    qm, qc = perturb(means[:50], covs[:50], 1 / np.sqrt(1000), commuting=True, rng=1)
    out = memory.retrieve(qm, qc)
    print(f"Gaussian DAM: retrieved {np.mean(out.index == np.arange(50)):.0%} of 50 queries "
          f"({out.path} path)")

    # --- DAG learning: COSMO on simulated linear-Gaussian data ---------------------------
    from solvers.dag import simulate_data, count_accuracy

    Xd, W, B_true = simulate_data(d=10, n=1000, k=2, rng=0)
    dag = solvers.learn_dag(Xd, method="cosmo", rng=0)
    print("COSMO:", count_accuracy(B_true, dag.adjacency))

    # --- QUBO: exact moments and annealing -----------------------------------------------
    Q = rng.normal(size=(12, 12))
    Q = (Q + Q.T) / 2
    moments = solvers.qubo_moments(Q)
    best = solvers.minimize_qubo(Q, n_reads=8, n_sweeps=300, rng=0)
    print(f"QUBO: mean {moments.mean:.3f}, variance {moments.var:.3f}, annealed min {best.fun:.3f}")


if __name__ == "__main__":
    main()
