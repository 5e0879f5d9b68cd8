"""Demo row for consensus-based optimization: shifted Rastrigin in d = 20, defaults.

The timed call (5 or 50 batched runs of 80 000 evaluations) is large enough for the Numba
kernels under ``backend="auto"``; a small explicit ``backend="numba"`` call compiles (or
loads) them first, outside the timing.
"""
import time

import numpy as np


def _rastrigin(x, shift):
    z = x - shift[:, None]
    return 10.0 * z.shape[0] + np.sum(z * z - 10.0 * np.cos(2 * np.pi * z), axis=0)


def demo_rows(quick=True):
    from solvers import minimize_cbo

    d, runs = 20, (5 if quick else 50)
    shift = np.random.default_rng(2024).uniform(-2.0, 2.0, d)
    kw = dict(bounds=[(-3.0, 3.0)] * d, args=(shift,), vectorized=True)
    # compile / load the kernels the timed call runs (a small "auto" call would run the
    # generic code and warm nothing)
    minimize_cbo(_rastrigin, maxiter=2, polish=False, backend="numba", **kw)
    start = time.perf_counter()
    res = minimize_cbo(_rastrigin, n_runs=runs, rng=0, **kw)
    seconds = time.perf_counter() - start
    ok = int(np.sum(np.max(np.abs(res.x_runs - shift), axis=1) < 0.25))
    return [{"method": "minimize_cbo", "problem": f"shifted Rastrigin d={d}, {runs} runs",
             "quality": f"success {ok}/{runs} at {res.nfev // runs} evals/run",
             "seconds": seconds}]
