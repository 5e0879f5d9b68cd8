"""minimize_qubo against dwave-samplers SA, OpenJij SA and dwave-tabu: time to the best
known value, and nanoseconds per spin-flip attempt.

Instances, in the style of the public G-set (Max-Cut) and OR-Library (QUBO) sets, fixed
seeds (``--families`` picks some):

- ``rg-unit`` / ``rg-pm``: Max-Cut on a random graph, n = 800, edge probability 6%, unit or
  +-1 weights (Ising: minimize sum_ij w_ij s_i s_j);
- ``torus800`` / ``torus2000``: 2-D +-1 spin glass on a 20 x 40 and a 40 x 50 torus;
- ``dense1000``: dense integer QUBO, n = 1000, Q_ij uniform on {-100, ..., 100}.

**Time to target** (``--table ttt``): the target is the best-known value, the best energy
of every solver's long runs (and of anything seen later). For every solver, seed and
configuration the solver is called again and again (new seeds) until a call returns the
target or ``--cap`` CPU seconds are spent; the CPU time (``time.process_time``) of those
calls is the time to target. Median over ``--seeds`` seeds, one thread each, solvers
interleaved seed by seed. ``minimize_qubo`` runs with its defaults (16 reads x 1000
sweeps) and ``f_target`` (it returns at the first group of 8 reads that reaches it; on
code without ``f_target`` each default call is checked instead). The peers are called with
one read per call (so a lucky read is not kept waiting for others) at their default and a
longer schedule, the better of the two reported: SA with 1000 (default) and 10^4 sweeps;
tabu with its default 20 ms per read and with 1 s, both stopping at the target
(``energy_threshold``).

**Per sweep** (``--table sweep``): CPU nanoseconds per spin-flip attempt of the sweeps,
``(t(1100 sweeps) - t(100 sweeps)) / (8 reads x 1000 x n)`` (fixed costs cancel), every
solver on the same beta range (``minimize_qubo``'s default for the instance), without
``minimize_qubo``'s final descent; best of 3 interleaved repeats.

**Per call** (``--table overhead``): CPU seconds of a call with 1 read and 1 sweep, the
fixed cost (model conversion, set-up) every call of the time-to-target runs pays.

    pip install dimod dwave-samplers dwave-tabu openjij
    python benchmarks/peers/qubo_vs_dwave.py [--table ttt|sweep|both|overhead] [--quick]
"""
import argparse
import inspect
import json
import math
import os
import time

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numba  # noqa: E402
import numpy as np  # noqa: E402

from solvers import minimize_qubo  # noqa: E402
from solvers.qubo.anneal import default_beta_range  # noqa: E402

FAMILIES = ("rg-unit", "rg-pm", "torus800", "torus2000", "dense1000")
HAS_TARGET = "f_target" in inspect.signature(minimize_qubo).parameters


def _spin_bqm(dimod, n, i, j, w):
    bqm = dimod.BinaryQuadraticModel("SPIN")
    bqm.add_variables_from((k, 0.0) for k in range(n))
    bqm.add_quadratic_from(zip(i.tolist(), j.tolist(), w.tolist()))
    return bqm


def instance(dimod, family, seed=2025):
    """The dimod BQM of a family (fixed seed)."""
    rng = np.random.default_rng(seed)
    if family.startswith("rg"):
        n = 800
        iu, ju = np.triu_indices(n, 1)
        keep = rng.random(iu.size) < 0.06
        w = np.ones(keep.sum()) if family == "rg-unit" else rng.choice([-1.0, 1.0],
                                                                          keep.sum())
        return _spin_bqm(dimod, n, iu[keep], ju[keep], w)
    if family.startswith("torus"):
        rows, cols = (20, 40) if family == "torus800" else (40, 50)
        idx = np.arange(rows * cols).reshape(rows, cols)
        i = np.concatenate([idx.ravel(), idx.ravel()])
        j = np.concatenate([np.roll(idx, -1, 0).ravel(), np.roll(idx, -1, 1).ravel()])
        return _spin_bqm(dimod, rows * cols, i, j, rng.choice([-1.0, 1.0], i.size))
    Q = np.triu(rng.integers(-100, 101, size=(1000, 1000)).astype(np.float64))
    return dimod.BinaryQuadraticModel(np.diag(Q).copy(), np.triu(Q, 1), 0.0, "BINARY")


class Solvers:
    """One call of every solver: ``call(name, config, bqm, seed, target) -> (energy, cpu)``."""

    def __init__(self):
        import openjij
        import tabu
        from dwave.samplers import SimulatedAnnealingSampler

        self.sa = SimulatedAnnealingSampler()
        self.oj = openjij.SASampler()
        self.tabu = tabu.TabuSampler()

    def configs(self):
        yield "minimize_qubo", "defaults"
        for sweeps in (1000, 10_000):
            yield "dwave SA", sweeps
            yield "OpenJij SA", sweeps
        for timeout in (20, 1000):
            yield "dwave-tabu", timeout

    def call(self, name, config, bqm, seed, target):
        start = time.process_time()
        if name == "minimize_qubo":
            kw = {"f_target": target} if HAS_TARGET else {}
            energy = minimize_qubo(bqm, rng=seed, **kw).fun
        elif name == "dwave SA":
            energy = self.sa.sample(bqm, num_reads=1, num_sweeps=config,
                                    seed=seed).first.energy
        elif name == "OpenJij SA":
            energy = self.oj.sample(bqm, num_reads=1, num_sweeps=config,
                                    seed=seed).first.energy
        else:
            energy = self.tabu.sample(bqm, num_reads=1, timeout=config, seed=seed,
                                      energy_threshold=target).first.energy
        return float(energy), time.process_time() - start


def long_runs(solvers, bqm):
    """Best energies of long runs of every solver (the best-known value is their min)."""
    out = {"minimize_qubo": float(minimize_qubo(bqm, n_reads=16, n_sweeps=20_000, rng=1).fun),
           "dwave SA": float(solvers.sa.sample(bqm, num_reads=4, num_sweeps=20_000,
                                                seed=1).first.energy),
           "OpenJij SA": float(solvers.oj.sample(bqm, num_reads=4, num_sweeps=20_000,
                                                  seed=1).first.energy),
           "dwave-tabu": float(solvers.tabu.sample(bqm, num_reads=2, timeout=10_000,
                                                    seed=1).first.energy)}
    return out


def time_to_target(solvers, name, config, bqm, seed, target, cap, seen):
    """CPU seconds of repeated calls until one reaches ``target`` (inf past ``cap``)."""
    spent, k = 0.0, 0
    while spent < cap:
        energy, cpu = solvers.call(name, config, bqm, 1000 * seed + k, target)
        seen.append(energy)
        spent, k = spent + cpu, k + 1
        if energy <= target:
            return spent if spent <= cap else math.inf
    return math.inf


def ttt_table(dimod, families, seeds, cap, best_file):
    solvers = Solvers()
    known = json.load(open(best_file)) if best_file and os.path.exists(best_file) else {}
    rows = []
    for family in families:
        bqm = instance(dimod, family)
        if family not in known:
            known[family] = long_runs(solvers, bqm)
            if best_file:
                json.dump(known, open(best_file, "w"), indent=1)
        target = min(known[family].values())
        seen, times = [], {}
        for seed in range(seeds):  # interleaved: every configuration once per seed
            for name, config in solvers.configs():
                times.setdefault((name, config), []).append(
                    time_to_target(solvers, name, config, bqm, seed, target, cap, seen))
        rows.append((family, target, min(seen), known[family], times))
        _print_ttt_row(*rows[-1], seeds)
    return rows


def _fmt(t, seeds):
    hits = sum(np.isfinite(t))
    med = float(np.median(t))
    return (f"{med:7.3f}" if np.isfinite(med) else "  never") + f" ({hits}/{seeds})"


def _print_ttt_row(family, target, best_seen, long, times, seeds):
    print(f"\n{family}: best-known {target:g} (long runs: "
          + ", ".join(f"{k} {v:g}" for k, v in long.items())
          + f"; best seen in the timed runs {best_seen:g}), load {os.getloadavg()}")
    best = {}
    for (name, config), t in times.items():
        print(f"  {name:14s} {str(config):>8s}  median CPU s to target {_fmt(t, seeds)}")
        med = float(np.median(t))
        if name not in best or med < best[name][0]:
            best[name] = (med, config)
    print("  best per solver: " + ", ".join(
        f"{k} {v[0]:.3f} s ({v[1]})" if np.isfinite(v[0]) else f"{k} never"
        for k, v in best.items()))


def ns_per_attempt(run, reads, n):
    """Best of 3 of ``(t(1100) - t(100)) / (reads * 1000 * n)``, in ns."""
    short = min(run(100) for _ in range(3))
    long = min(run(1100) for _ in range(3))
    return (long - short) / (reads * 1000 * n) * 1e9


def sweep_table(dimod, families):
    solvers = Solvers()
    reads = 8
    print(f"\nns per spin-flip attempt (CPU), {reads} reads, same beta range for all, "
          f"load {os.getloadavg()}")
    print(f"{'instance':10s} {'beta range':>18s} {'minimize_qubo':>14s} {'dwave SA':>9s} "
          f"{'OpenJij SA':>11s}")
    for family in families:
        bqm = instance(dimod, family)
        n = bqm.num_variables
        hot, cold = default_beta_range(bqm)

        def ours(s):
            t = time.process_time()
            minimize_qubo(bqm, n_reads=reads, n_sweeps=s, beta_range=(hot, cold),
                          polish=False, rng=0)
            return time.process_time() - t

        def dwave(s):
            t = time.process_time()
            solvers.sa.sample(bqm, num_reads=reads, num_sweeps=s, beta_range=(hot, cold),
                              seed=0)
            return time.process_time() - t

        def openjij(s):
            t = time.process_time()
            solvers.oj.sample(bqm, num_reads=reads, num_sweeps=s, beta_min=hot,
                              beta_max=cold, seed=0)
            return time.process_time() - t

        figures = [ns_per_attempt(f, reads, n) for f in (ours, dwave, openjij)]
        print(f"{family:10s} ({hot:7.3g}, {cold:7.3g}) " + "".join(
            f"{v:{w}.1f}" for v, w in zip(figures, (15, 10, 12))))


def overhead_table(dimod, families):
    """CPU seconds of one call that does almost no annealing (1 read, 1 sweep): the fixed
    cost each call of the time-to-target runs pays (conversion of the model, set-up)."""
    solvers = Solvers()
    print(f"\nfixed CPU s per call (1 read, 1 sweep; median of 5), load {os.getloadavg()}")
    print(f"{'instance':10s} {'minimize_qubo':>14s} {'dwave SA':>9s} {'OpenJij SA':>11s}")
    calls = (lambda b: minimize_qubo(b, n_reads=1, n_sweeps=1, polish=False, rng=0),
             lambda b: solvers.sa.sample(b, num_reads=1, num_sweeps=1, seed=0),
             lambda b: solvers.oj.sample(b, num_reads=1, num_sweeps=1, seed=0))
    for family in families:
        bqm = instance(dimod, family)
        figures = []
        for call in calls:
            times = []
            for _ in range(5):
                start = time.process_time()
                call(bqm)
                times.append(time.process_time() - start)
            figures.append(float(np.median(times)))
        print(f"{family:10s} " + "".join(f"{v:{w}.4f}" for v, w in zip(figures, (15, 10, 12))))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--table", choices=("ttt", "sweep", "both", "overhead"), default="both")
    ap.add_argument("--families", default=",".join(FAMILIES))
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--cap", type=float, default=10.0, help="CPU seconds per seed")
    ap.add_argument("--best-known", default=None,
                    help="JSON file caching the long runs (read if present, else written)")
    ap.add_argument("--quick", action="store_true", help="torus800 only, 2 seeds, cap 2 s")
    args = ap.parse_args()
    import dimod

    families = args.families.split(",")
    if args.quick:
        families, args.seeds, args.cap = ["torus800"], 2, 2.0
    numba.set_num_threads(1)
    minimize_qubo(instance(dimod, "torus800"), n_reads=8, n_sweeps=2)  # load the cache
    print(f"threads: Numba {numba.get_num_threads()}, OMP/BLAS "
          f"{os.environ['OMP_NUM_THREADS']}/{os.environ['OPENBLAS_NUM_THREADS']}; "
          f"minimize_qubo f_target: {HAS_TARGET}; load {os.getloadavg()}")
    if args.table == "overhead":
        overhead_table(dimod, families)
    if args.table in ("sweep", "both"):
        sweep_table(dimod, families)
    if args.table in ("ttt", "both"):
        ttt_table(dimod, families, args.seeds, args.cap, args.best_known)


if __name__ == "__main__":
    main()
