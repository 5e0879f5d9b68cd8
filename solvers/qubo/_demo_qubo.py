"""Demo rows for ``python -m solvers demo``: QUBO moments and annealing."""
import itertools
import time

import numpy as np


def _enumerate(Q, c):
    n = Q.shape[0]
    X = np.array(list(itertools.product([0.0, 1.0], repeat=n)))
    return X, np.einsum("si,ij,sj->s", X, Q, X) + X @ c


def demo_rows(quick=True):
    from solvers import minimize_qubo, qubo_moments

    rows = []
    rng = np.random.default_rng(0)
    # exact moments against enumeration (n = 14: uniform, Bernoulli, fixed weight)
    t = time.perf_counter()
    n = 14
    Q, c = rng.normal(size=(n, n)), rng.normal(size=n)
    X, f = _enumerate(Q, c)
    p = rng.uniform(size=n)
    w = np.prod(np.where(X == 1, p, 1 - p), axis=1)
    hw = X.sum(axis=1)
    checks = [(qubo_moments(Q, c).var, f.var()),
              (qubo_moments(Q, c, p=p).var, w @ (f - w @ f) ** 2),
              (qubo_moments(Q, c, weight=5).var, f[hw == 5].var())]
    err = max(abs(a - b) / b for a, b in checks)
    rows.append({"method": "qubo_moments", "problem": f"dense n={n} vs enumeration (3 measures)",
                 "quality": f"max rel err {err:.1e}", "seconds": time.perf_counter() - t})
    # annealing on instances with a known optimum
    t = time.perf_counter()
    n, k = (14, 3) if quick else (18, 10)
    hits = 0
    for i in range(k):
        Q, c = rng.normal(size=(n, n)), rng.normal(size=n)
        _, f = _enumerate(Q, c)
        res = minimize_qubo(Q, c, n_reads=8, n_sweeps=200, rng=i)
        hits += abs(res.fun - f.min()) < 1e-9
    rows.append({"method": "minimize_qubo (anneal)",
                 "problem": f"random dense n={n}, {k} instances",
                 "quality": f"optimum {hits}/{k}", "seconds": time.perf_counter() - t})
    return rows
