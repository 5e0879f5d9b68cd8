"""Time-to-target: solvers.minimize_qubo against dwave-samplers' SimulatedAnnealingSampler.

Same dense QUBO instances (n = 1000 by default, symmetric Gaussian couplings), same number of
reads per call. For every solver and sweep count we time one call (wall clock, in one
process, BLAS pinned to one thread) and count the reads that reach the target energy
``E_best + tol * |E_best|`` (``E_best``: the best energy any run found on that instance).
Time to target at 99 %:

    TTT = (t_call / reads) * ln(0.01) / ln(1 - p_success)     (t_call / reads when p = 1)

the best over sweep counts is reported, with the ratio dwave / solvers. dwave is run with
its own default schedule and also with ours (same beta range), so the ratio separates the
implementation from the schedule. Ours runs with one Numba thread (dwave-samplers is
single-threaded) and with all threads. Runs of the two libraries are interleaved, and for the
single-threaded runs the process CPU time is reported next to the wall time: on a shared
machine CPU time is the load-independent figure.

    pip install dwave-samplers
    OPENBLAS_NUM_THREADS=1 python benchmarks/peers/qubo_vs_dwave.py [--quick] [--n 1000]
"""
import argparse
import math
import os
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numba  # noqa: E402
import numpy as np  # noqa: E402

from solvers import minimize_qubo  # noqa: E402
from solvers.qubo.anneal import default_beta_range  # noqa: E402


def instance(n, seed):
    Q = np.random.default_rng(seed).normal(size=(n, n))
    return (Q + Q.T) / 2


def run_ours(Q, reads, sweeps, seed, threads):
    old = numba.get_num_threads()
    numba.set_num_threads(threads)
    try:
        t, c = time.perf_counter(), time.process_time()
        res = minimize_qubo(Q, n_reads=reads, n_sweeps=sweeps, rng=seed)
        return time.perf_counter() - t, time.process_time() - c, np.asarray(res.energies)
    finally:
        numba.set_num_threads(old)


def run_dwave(sampler, bqm, reads, sweeps, seed, beta_range=None):
    kw = {} if beta_range is None else {"beta_range": beta_range}
    t, c = time.perf_counter(), time.process_time()
    ss = sampler.sample(bqm, num_reads=reads, num_sweeps=sweeps, seed=seed, **kw)
    return time.perf_counter() - t, time.process_time() - c, np.asarray(ss.record.energy)


def ttt(t_call, reads, energies, target):
    p = float(np.mean(energies <= target))
    per_read = t_call / reads
    if p == 0:
        return math.inf, p
    if p == 1:
        return per_read, p
    return per_read * math.log(0.01) / math.log(1 - p), p


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--instances", type=int, default=2)
    ap.add_argument("--reads", type=int, default=16)
    ap.add_argument("--tol", type=float, default=1e-3, help="relative gap of the target")
    ap.add_argument("--quick", action="store_true", help="n = 300, one instance")
    args = ap.parse_args()
    import dimod
    from dwave.samplers import SimulatedAnnealingSampler

    if args.quick:
        args.n, args.instances = 300, 1
    sweeps_ours = [30, 100, 300, 1000, 3000]
    sweeps_dw = [100, 300, 1000]
    sampler = SimulatedAnnealingSampler()
    all_threads = numba.config.NUMBA_NUM_THREADS
    minimize_qubo(instance(20, 0), n_reads=2, n_sweeps=2, rng=0)  # load the Numba cache
    print(f"n = {args.n}, reads per call = {args.reads}, target gap = {args.tol:g}, "
          f"threads: 1 and {all_threads}")
    ratios = {}
    for inst in range(args.instances):
        Q = instance(args.n, inst)
        bqm = dimod.BQM.from_qubo(Q)  # built once, outside the timings
        beta = default_beta_range(Q)
        runs = []
        for k in range(max(len(sweeps_ours), len(sweeps_dw))):
            if k < len(sweeps_ours):
                s = sweeps_ours[k]
                for th in sorted({1, all_threads}):
                    runs.append((f"solvers[{th} thr]", s, *run_ours(Q, args.reads, s, inst, th)))
            if k < len(sweeps_dw):
                s = sweeps_dw[k]
                runs.append(("dwave default", s, *run_dwave(sampler, bqm, args.reads, s, inst)))
                runs.append(("dwave our-beta", s, *run_dwave(sampler, bqm, args.reads, s, inst,
                                                             beta_range=beta)))
        best = min(float(e.min()) for *_, e in runs)
        target = best + args.tol * abs(best)
        print(f"\ninstance {inst}: best energy {best:.3f}, target {target:.3f}")
        print(f"{'solver':18s} {'sweeps':>6s} {'wall s':>8s} {'cpu s':>8s} {'p_succ':>6s} "
              f"{'TTT99 wall':>10s} {'TTT99 cpu':>10s}")
        best_ttt = {}
        for name, s, t, c, e in runs:
            T, p = ttt(t, args.reads, e, target)
            Tc, _ = ttt(c, args.reads, e, target)
            best_ttt[name] = min(best_ttt.get(name, math.inf), T)
            if "1 thr" in name or name.startswith("dwave"):
                key = name + " cpu"
                best_ttt[key] = min(best_ttt.get(key, math.inf), Tc)
            print(f"{name:18s} {s:6d} {t:8.3f} {c:8.3f} {p:6.2f} {T:10.4f} {Tc:10.4f}")
        print("best TTT99: " + ", ".join(f"{k} {v:.4f} s" for k, v in best_ttt.items()))
        for name, v in best_ttt.items():
            if not name.startswith("dwave"):
                continue
            cpu = name.endswith(" cpu")
            for ours in best_ttt:
                if ours.startswith("solvers") and ours.endswith(" cpu") == cpu:
                    ratios.setdefault(f"{name} / {ours}", []).append(v / best_ttt[ours])
    print("\nratio of best TTT99 (dwave / solvers; > 1 means solvers is faster), per instance:")
    for k, v in ratios.items():
        print(f"  {k:42s} " + "  ".join(f"{x:7.1f}" for x in v))


if __name__ == "__main__":
    main()
