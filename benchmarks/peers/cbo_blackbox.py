"""CBO on the 24 noiseless BBOB families, side by side with SciPy and CMA-ES, one process.

The problems are the COCO/BBOB functions with their random shifts and rotations per
instance, from pip ``ioh`` (``ioh.get_problem(fid, instance, dimension, BBOB)``). Every
solver gets the same budget of point evaluations on the box [-5, 5]^d with its defaults;
a problem is solved at ``tol`` when the best value among the first ``budget`` evaluations
is within ``tol`` of the optimum. Printed: solved counts at 1e-2 and 1e-8, and the median
evaluations to reach each target over the solved problems.

Held-out measurement (issue 15), d = 10, instances 1-2, 50 000 evaluations::

    OPENBLAS_NUM_THREADS=1 NUMBA_NUM_THREADS=1 python benchmarks/peers/cbo_blackbox.py \\
        --dims 10 --instances 1,2 --budget 50000

The defaults of ``minimize_cbo`` were chosen on other settings (``--dims 5,20
--instances 5,6,...``); ``--solvers`` picks a subset, ``--json`` saves the raw errors,
``--reps K`` repeats every solver with K seed sets (the counts move by a few problems
from one seed set to the next), ``--plot FILE`` draws the ECDF of the evaluations to
each target (the fraction of problems solved within a budget) per solver.
``--unimodal`` prints the other table: on the unimodal families f1, f2, f8, f10, f11
(``--dims``, ``--instances``), ``minimize_cbo`` with its defaults and no ``maxfev`` (its
stopping rules end the run) beside plain CMA-ES (``cma.fmin2`` with its default stopping),
each until it stops by itself: the evaluations each used, the error it ended at, and
their ratio::

    OPENBLAS_NUM_THREADS=1 NUMBA_NUM_THREADS=1 python benchmarks/peers/cbo_blackbox.py \\
        --unimodal --dims 10 --instances 1,2,3,4,5

Peers (pip): ``ioh``, ``cma``.
"""
import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
from benchmarks._common import pin_blas_threads  # noqa: E402

import numpy as np  # noqa: E402

TOLS = (1e-2, 1e-8)


class Tracked:
    """The problem with a hard budget: records the best value among the first ``budget``
    evaluations and the evaluation count at which each target was first reached."""

    def __init__(self, problem, budget):
        self.p = problem
        self.fopt = problem.optimum.y
        self.budget = budget
        self.n = 0
        self.best = np.inf
        self.hit = {t: None for t in TOLS}

    def _record(self, values):
        for v in values:
            if self.n >= self.budget:
                return
            self.n += 1
            if v < self.best:
                self.best = v
                for t in TOLS:
                    if self.hit[t] is None and v - self.fopt < t:
                        self.hit[t] = self.n

    def point(self, x):
        v = float(self.p(np.asarray(x, dtype=np.float64)))
        self._record([v])
        return v

    def columns(self, X):  # SciPy's vectorized contract: (d, S) -> (S,)
        v = np.asarray(self.p(np.ascontiguousarray(np.asarray(X).T)), dtype=np.float64)
        self._record(v.tolist())
        return v


def run_cbo(t, d, budget, seed, **options):
    from solvers import minimize_cbo

    minimize_cbo(t.columns, bounds=[(-5.0, 5.0)] * d, maxfev=budget, vectorized=True,
                 rng=seed, **options)


def run_da(t, d, budget, seed):
    from scipy.optimize import dual_annealing

    dual_annealing(t.point, [(-5.0, 5.0)] * d, maxfun=budget, rng=seed)


def run_de(t, d, budget, seed):
    from scipy.optimize import differential_evolution

    maxiter = max(1, budget // (15 * d) - 1)
    differential_evolution(t.point, [(-5.0, 5.0)] * d, maxiter=maxiter, rng=seed)


def _cma(t, d, budget, seed, restarts):
    import cma

    x0 = np.random.default_rng(seed).uniform(-4.0, 4.0, d)
    opts = {"maxfevals": budget, "bounds": [-5.0, 5.0], "verbose": -9, "seed": seed + 1,
            "tolfun": 1e-11}
    kw = dict(restarts=9, incpopsize=2) if restarts else {}
    cma.fmin2(t.point, x0, 2.0, opts, **kw)


SOLVERS = {
    "cbo": run_cbo,
    "dual_annealing": run_da,
    "differential_evolution": run_de,
    "cma-es": lambda t, d, b, s: _cma(t, d, b, s, False),
    "ipop-cma-es": lambda t, d, b, s: _cma(t, d, b, s, True),
}


def measure(solver, dims, instances, budget, options=None, rep=0, functions=None):
    """{(d, fid, instance): (error, evals to 1e-2, evals to 1e-8)} for one solver
    (``rep`` > 0: another seed for every run, to see the spread of the counts;
    ``functions``: the BBOB function ids, default all 24)."""
    import ioh

    out = {}
    for d in dims:
        for fid in functions or range(1, 25):
            for inst in instances:
                p = ioh.get_problem(fid, instance=inst, dimension=d,
                                    problem_class=ioh.ProblemClass.BBOB)
                t = Tracked(p, budget)
                seed = 1000 * inst + fid + 100_000 * rep
                try:
                    if solver == "cbo":
                        run_cbo(t, d, budget, seed, **(options or {}))
                    else:
                        SOLVERS[solver](t, d, budget, seed)
                except Exception as exc:  # a peer failing on a problem counts as unsolved
                    print(f"# {solver} f{fid} i{inst}: {type(exc).__name__}: {exc}",
                          file=sys.stderr)
                out[(d, fid, inst)] = (t.best - t.fopt, t.hit[TOLS[0]], t.hit[TOLS[1]])
    return out


def summary(name, out):
    n = len(out)
    cells = [f"{name:<24}"]
    for k, tol in enumerate(TOLS):
        hits = [v[1 + k] for v in out.values() if v[1 + k] is not None]
        med = f"{int(np.median(hits)):>7}" if hits else "      -"
        cells.append(f"{len(hits):>3}/{n} {med}")
    return " | ".join(cells)


def per_function(out):
    by = {}
    for (d, fid, inst), v in out.items():
        by.setdefault(fid, []).append(v)
    return " ".join(f"f{f}:{sum(v[1] is not None for v in vs)}/{sum(v[2] is not None for v in vs)}"
                    for f, vs in sorted(by.items()))


def plot_ecdf(raw, budget, path):
    """Fraction of problems solved vs evaluations, per solver and target (matplotlib)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(TOLS), figsize=(10, 4), sharey=True)
    for ax, (k, tol) in zip(axes, enumerate(TOLS)):
        for name, out in raw.items():
            hits = np.sort([v[1 + k] for v in out.values() if v[1 + k] is not None])
            n = len(out)
            xs = np.concatenate([[1], hits, [budget]])
            ys = np.concatenate([[0], np.arange(1, len(hits) + 1), [len(hits)]]) / n
            ax.step(xs, ys, where="post", label=name)
        ax.set_xscale("log")
        ax.set_xlabel("evaluations")
        ax.set_title(f"target f - f* < {tol:g}")
    axes[0].set_ylabel("fraction of problems solved")
    axes[-1].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


UNIMODAL = (1, 2, 8, 10, 11)


def _until_stop(solver, p, d, seed):
    """(evaluations, error at the end) of one run that ends by its own stopping rules."""
    t = Tracked(p, 10**9)
    if solver == "cbo":
        from solvers import minimize_cbo

        minimize_cbo(t.columns, bounds=[(-5.0, 5.0)] * d, vectorized=True, rng=seed)
    else:
        import cma

        x0 = np.random.default_rng(seed).uniform(-4.0, 4.0, d)
        cma.fmin2(t.point, x0, 2.0, {"bounds": [-5.0, 5.0], "verbose": -9, "seed": seed + 1})
    return t.n, t.best - t.fopt


def unimodal_table(dims, instances):
    """The unimodal table: evaluations to the stop, CBO defaults vs plain CMA-ES."""
    import ioh

    print(f"# {'problem':<14} | minimize_cbo evals, error | CMA-ES evals, error | ratio")
    ratios, reached = [], 0
    for d in dims:
        for fid in UNIMODAL:
            for inst in instances:
                p = ioh.get_problem(fid, instance=inst, dimension=d,
                                    problem_class=ioh.ProblemClass.BBOB)
                seed = 1000 * inst + fid
                n_cbo, e_cbo = _until_stop("cbo", p, d, seed)
                p = ioh.get_problem(fid, instance=inst, dimension=d,
                                    problem_class=ioh.ProblemClass.BBOB)
                n_cma, e_cma = _until_stop("cma", p, d, seed)
                ratios.append(n_cbo / n_cma)
                reached += e_cbo < 1e-8
                print(f"  d={d:<2} f{fid:<2} i{inst:<3}  | {n_cbo:>8} {e_cbo:9.1e}       | "
                      f"{n_cma:>7} {e_cma:9.1e}  | {n_cbo / n_cma:5.2f}", flush=True)
    r = np.asarray(ratios)
    print(f"# minimize_cbo reached 1e-8 in {reached}/{len(r)} runs; evaluations / CMA-ES's: "
          f"median {np.median(r):.2f}, max {r.max():.2f}; within 3x in {int(np.sum(r <= 3))}"
          f"/{len(r)}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dims", default="10")
    ap.add_argument("--instances", default="1,2")
    ap.add_argument("--budget", type=int, default=50_000)
    ap.add_argument("--functions", default=None,
                    help="BBOB function ids, e.g. 12,13,17,18 (default: all 24)")
    ap.add_argument("--errors", action="store_true",
                    help="print the final error of every run")
    ap.add_argument("--solvers", default=",".join(SOLVERS))
    ap.add_argument("--cbo-options", default="{}", help="JSON options for minimize_cbo")
    ap.add_argument("--reps", type=int, default=1,
                    help="repeat every solver with this many seeds (counts per seed, mean)")
    ap.add_argument("--json", default=None, help="save the raw errors here")
    ap.add_argument("--plot", default=None, help="save the ECDF figure here")
    ap.add_argument("--unimodal", action="store_true",
                    help="evaluations to the stop on f1, f2, f8, f10, f11 vs plain CMA-ES")
    args = ap.parse_args(argv)
    pin_blas_threads(None)
    dims = [int(v) for v in args.dims.split(",")]
    insts = [int(v) for v in args.instances.split(",")]
    fids = None if args.functions is None else [int(v) for v in args.functions.split(",")]
    if args.unimodal:
        return unimodal_table(dims, insts)
    print(f"# BBOB {args.functions or 'f1-f24'} (ioh), d = {dims}, instances {insts}, "
          f"budget {args.budget} evaluations, box [-5, 5]")
    print(f"# {'solver':<22} | solved 1e-2, median evals | solved 1e-8, median evals")
    raw = {}
    for name in args.solvers.split(","):
        counts = []
        for rep in range(args.reps):
            start = time.perf_counter()
            out = measure(name, dims, insts, args.budget, json.loads(args.cbo_options), rep,
                          fids)
            label = name if args.reps == 1 else f"{name} (seed set {rep})"
            print(summary(label, out) + f" | {time.perf_counter() - start:.0f} s", flush=True)
            print(f"#   {per_function(out)}", flush=True)
            if args.errors:
                for (d, fid, inst), v in sorted(out.items()):
                    print(f"#   d={d} f{fid} i{inst}: {v[0]:.2e}", flush=True)
            counts.append([sum(v[1 + k] is not None for v in out.values())
                           for k in range(len(TOLS))])
            raw[label] = {f"{k[0]}-{k[1]}-{k[2]}": v for k, v in out.items()}
        if args.reps > 1:
            c = np.asarray(counts)
            print(f"# {name}: mean solved {c[:, 0].mean():.1f} (range {c[:, 0].min()}-"
                  f"{c[:, 0].max()}) at 1e-2, {c[:, 1].mean():.1f} ({c[:, 1].min()}-"
                  f"{c[:, 1].max()}) at 1e-8 over {args.reps} seed sets", flush=True)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(raw, fh)
    if args.plot:
        plot_ecdf(raw, args.budget, args.plot)


if __name__ == "__main__":
    main()
