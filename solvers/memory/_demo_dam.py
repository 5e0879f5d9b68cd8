"""Demo rows for the Gaussian dense associative memory.

Quick: problems small enough for the generic code under ``backend="auto"`` (nothing to
compile). Full: larger ones on the Numba kernels, warmed by a small explicit
``backend="numba"`` retrieval outside the timing.
"""
import time

import numpy as np

#: the quick rows run on the generic code: the demo may show them before compiling anything
QUICK_COMPILES = False


def demo_rows(quick=True):
    from solvers import GaussianMemory
    from solvers.memory import synthetic_patterns, perturb, retrieval_rate

    rows = []
    for commuting, N, d, Q in ((True, 500 if quick else 5000, 25, 50 if quick else 200),
                               (False, 60 if quick else 1000, 8 if quick else 10,
                                10 if quick else 100)):
        m, S = synthetic_patterns(N, d, commuting=commuting, rng=0)
        idx = np.random.default_rng(1).choice(N, Q, replace=False)
        qm, qS = perturb(m[idx], S[idx], 1.0 / np.sqrt(N), commuting=commuting, rng=2)
        mem = GaussianMemory(m, S, beta=1.0)
        if not quick:  # compile (or load) the kernels the timed call runs
            GaussianMemory(m, S, beta=1.0, backend="numba").retrieve(qm[:2], qS[:2],
                                                                     maxiter=1)
        start = time.perf_counter()
        res = mem.retrieve(qm, qS, maxiter=30 if quick else 100)
        seconds = time.perf_counter() - start
        rate, _ = retrieval_rate(mem, res, idx)
        rows.append({"method": f"GaussianMemory ({res.path})",
                     "problem": f"retrieve {Q} perturbed of N={N} Gaussians, d={d}, beta=1",
                     "quality": f"retrieved {rate:.0%}", "seconds": seconds})
    return rows
