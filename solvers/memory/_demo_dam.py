"""Demo rows for the Gaussian dense associative memory."""
import time

import numpy as np


def demo_rows(quick=True):
    from solvers import GaussianMemory
    from solvers.memory import synthetic_patterns, perturb, retrieval_rate

    rows = []
    for commuting, N, d, Q in ((True, 5000 if not quick else 1000, 25, 200),
                               (False, 150 if quick else 1000, 10, 10 if quick else 100)):
        m, S = synthetic_patterns(N, d, commuting=commuting, rng=0)
        idx = np.random.default_rng(1).choice(N, Q, replace=False)
        qm, qS = perturb(m[idx], S[idx], 1.0 / np.sqrt(N), commuting=commuting, rng=2)
        mem = GaussianMemory(m, S, beta=1.0)
        mem.retrieve(qm, qS, maxiter=1)  # warm the kernels outside the timing
        start = time.perf_counter()
        res = mem.retrieve(qm, qS, maxiter=30 if quick else 100)
        seconds = time.perf_counter() - start
        rate, _ = retrieval_rate(mem, res, idx)
        rows.append({"method": f"GaussianMemory ({res.path})",
                     "problem": f"retrieve {Q} perturbed of N={N} Gaussians, d={d}, beta=1",
                     "quality": f"retrieved {rate:.0%}", "seconds": seconds})
    return rows
