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

    rng = np.random.default_rng(0)
    # exact moments against enumeration (n = 14: uniform, Bernoulli, fixed weight)
    n = 14
    Q, c = rng.normal(size=(n, n)), rng.normal(size=n)
    X, f = _enumerate(Q, c)
    p = rng.uniform(size=n)
    w = np.prod(np.where(X == 1, p, 1 - p), axis=1)
    hw = X.sum(axis=1)
    exact = [f.var(), w @ (f - w @ f) ** 2, f[hw == 5].var()]
    t = time.perf_counter()
    got = [qubo_moments(Q, c).var, qubo_moments(Q, c, p=p).var,
           qubo_moments(Q, c, weight=5).var]
    seconds = time.perf_counter() - t
    err = max(abs(a - b) / b for a, b in zip(got, exact))
    yield {"method": "qubo_moments", "problem": f"dense n={n} vs enumeration (3 measures)",
           "quality": f"max rel err {err:.1e}", "seconds": seconds}
    # annealing on instances with a known optimum (enumeration outside the timing)
    n, k = (14, 3) if quick else (18, 10)
    problems = [(rng.normal(size=(n, n)), rng.normal(size=n)) for _ in range(k)]
    optima = [_enumerate(Q, c)[1].min() for Q, c in problems]
    minimize_qubo(*problems[0], n_reads=8, n_sweeps=2, rng=0)  # warm the Numba kernels
    t = time.perf_counter()
    found = [minimize_qubo(Q, c, n_reads=8, n_sweeps=200, rng=i).fun
             for i, (Q, c) in enumerate(problems)]
    seconds = time.perf_counter() - t
    hits = sum(abs(f - opt) < 1e-9 for f, opt in zip(found, optima))
    yield {"method": "minimize_qubo (anneal)", "problem": f"random dense n={n}, {k} instances",
           "quality": f"optimum {hits}/{k}", "seconds": seconds}
