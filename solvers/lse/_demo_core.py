"""Demo row for the log-sum-exp core: blocked matmul LSE vs the materialised one."""
import time

import numpy as np


def demo_rows(quick=True):
    from solvers import logsumexp_matmul, logsumexp

    rng = np.random.default_rng(0)
    n = 2000 if quick else 10000
    A, B = rng.normal(size=(n, 16)), rng.normal(size=(16, n))
    logsumexp_matmul(A[:4], B[:, :4], backend="numba")  # compile outside the timing
    start = time.perf_counter()
    got = logsumexp_matmul(A, B)
    seconds = time.perf_counter() - start
    err = float(np.max(np.abs(got - logsumexp(A @ B, axis=1))))
    return [{"method": "logsumexp_matmul", "problem": f"{n}x{n} Gibbs sums, k=16",
             "quality": f"max abs err vs dense {err:.1e}", "seconds": seconds}]
