"""CBO on CEC 2017 functions (pip ``opfunu``), side by side with IPOP-CMA-ES, one process.

A second black-box suite beside BBOB (:mod:`cbo_blackbox`): the CEC 2017 single-objective
functions as implemented by ``opfunu.cec_based.cec2017`` (shifted and rotated, box
[-100, 100]^d), by default the unimodal and simple multimodal ones, with the
competition's budget of 10 000 d evaluations. ``opfunu`` leaves out the competition's
withdrawn F2 and numbers the rest from there, so its ``F1``-``F9`` (``--functions``) are the
competition's F1 and F3-F10: bent cigar, Zakharov, Rosenbrock, Rastrigin, Schaffer F7,
Lunacek bi-Rastrigin, non-continuous Rastrigin, Levy and Schwefel. Each solver runs with
its defaults on the same seeds; a function is solved at ``tol`` when the best value among
the first ``budget`` evaluations is within ``tol`` of ``f_global``. Printed: the error of each run
and the solved counts at 1e-2 and 1e-8::

    OPENBLAS_NUM_THREADS=1 NUMBA_NUM_THREADS=1 python benchmarks/peers/cbo_cec.py --dim 10

Peers (pip): ``opfunu``, ``cma``. ``opfunu`` 1.0 imports ``pkg_resources`` (setuptools)
for one path lookup; where setuptools no longer ships it, this script stands in for it.
"""
import argparse
import importlib
import os
import sys
import time
import types

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
from benchmarks._common import pin_blas_threads  # noqa: E402

import numpy as np  # noqa: E402

TOLS = (1e-2, 1e-8)


def _opfunu_cec2017():
    try:
        import pkg_resources  # noqa: F401
    except ImportError:  # only resource_filename is used, for the data files' folder
        shim = types.ModuleType("pkg_resources")
        shim.resource_filename = lambda package, name: os.path.join(
            os.path.dirname(importlib.import_module(package).__file__), name)
        sys.modules["pkg_resources"] = shim
    from opfunu.cec_based import cec2017

    return cec2017


class Tracked:
    """The function with a hard budget: the best value among the first ``budget``."""

    def __init__(self, problem, budget):
        self.p, self.budget, self.n, self.best = problem, budget, 0, np.inf

    def point(self, x):
        v = float(self.p.evaluate(np.asarray(x, dtype=np.float64)))
        if self.n < self.budget:
            self.n += 1
            self.best = min(self.best, v)
        return v

    def columns(self, X):  # (d, S) -> (S,)
        return np.asarray([self.point(X[:, k]) for k in range(X.shape[1])])


def run(solver, problem, d, budget, seed):
    t = Tracked(problem, budget)
    lo, hi = problem.bounds[0]
    if solver == "cbo":
        from solvers import minimize_cbo

        minimize_cbo(t.columns, bounds=[(lo, hi)] * d, maxfev=budget, vectorized=True,
                     rng=seed)
    else:
        import cma

        x0 = np.random.default_rng(seed).uniform(0.8 * lo, 0.8 * hi, d)
        cma.fmin2(t.point, x0, 0.2 * (hi - lo), {"maxfevals": budget, "bounds": [lo, hi],
                                                 "verbose": -9, "seed": seed + 1,
                                                 "tolfun": 1e-11},
                  restarts=9, incpopsize=2)
    return t.best - problem.f_global


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dim", type=int, default=10)
    ap.add_argument("--functions", default="1,2,3,4,5,6,7,8,9",
                    help="opfunu numbers; the default is the competition's F1, F3-F10")
    ap.add_argument("--budget", type=int, default=None, help="default 10 000 d")
    ap.add_argument("--solvers", default="cbo,ipop-cma-es")
    ap.add_argument("--seeds", type=int, default=1)
    args = ap.parse_args(argv)
    pin_blas_threads(None)
    cec2017 = _opfunu_cec2017()
    d, budget = args.dim, args.budget or 10_000 * args.dim
    fids = [int(v) for v in args.functions.split(",")]
    print(f"# CEC 2017 (opfunu) F{fids}, d = {d}, budget {budget}, {args.seeds} seed(s)")
    for fid in fids:
        print(f"#   opfunu {getattr(cec2017, f'F{fid}2017')(ndim=d).name}")
    for name in args.solvers.split(","):
        start, errors = time.perf_counter(), []
        for fid in fids:
            for seed in range(args.seeds):
                problem = getattr(cec2017, f"F{fid}2017")(ndim=d)
                errors.append(run(name, problem, d, budget, 100 * fid + seed))
                print(f"#   {name} F{fid} seed {seed}: error {errors[-1]:.2e}", flush=True)
        e = np.asarray(errors)
        print(f"{name:<14} solved {int(np.sum(e < TOLS[0]))}/{e.size} at 1e-2, "
              f"{int(np.sum(e < TOLS[1]))}/{e.size} at 1e-8 | "
              f"{time.perf_counter() - start:.0f} s", flush=True)


if __name__ == "__main__":
    main()
