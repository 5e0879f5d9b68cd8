"""Thread scaling of the log-sum-exp core: each thread count in its own fresh process.

Cases: ``logsumexp`` of a (1000, 10000) and a (2000, 20000) float64 array along axis 0 and
axis 1, ``softmax`` of the (1000, 10000) array along axis 1, and ``logsumexp_matmul`` of
A 20000 x 64 against B 64 x 20000 (never building the 20000 x 20000 product).

Usage (from a checkout; ``--repo`` picks the checkout whose ``solvers`` is timed)::

    python benchmarks/peers/lse_scaling.py                       # this checkout, 1/2/all
    python benchmarks/peers/lse_scaling.py --repo ../base --repo .   # two checkouts
    python benchmarks/peers/lse_scaling.py --threads 1,2,4,8,16 --rounds 5

For every round, one child process per (checkout, thread count) is started, in a rotating
order so that a change of machine load hits every configuration alike; each child sets
``NUMBA_NUM_THREADS = OPENBLAS_NUM_THREADS = MKL_NUM_THREADS = T`` (``--blas-threads`` fixes
the BLAS count instead), warms every case up once (JIT cache load, page faults), then times
each case ``--inner`` times with the wall clock. The table gives the best over all rounds
(and the median, to show the noise), the speed-up against one thread, and with several
checkouts the speed-up of each against the first at the same thread count. The load
average is printed before and after. Runs on checkouts that predate this script too (only
the public functions are called).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

CASES = {
    "lse (1000, 10000) axis 0": ("lse", "small", 0),
    "lse (1000, 10000) axis 1": ("lse", "small", 1),
    "lse (2000, 20000) axis 0": ("lse", "large", 0),
    "lse (2000, 20000) axis 1": ("lse", "large", 1),
    "softmax (1000, 10000) axis 1": ("softmax", "small", 1),
    "lse_matmul 20000x64 @ 64x20000": ("matmul", None, None),
}


# --- child: time every case once per inner repeat ----------------------------------------

def _child(inner):
    import numpy as np
    import solvers
    from solvers import logsumexp, logsumexp_matmul, softmax

    rng = np.random.default_rng(0)
    arrays = {"small": rng.normal(size=(1000, 10000)), "large": rng.normal(size=(2000, 20000))}
    A = rng.normal(size=(20000, 64)) / 8
    B = rng.normal(size=(64, 20000)) / 8
    calls = {}
    for name, (op, size, axis) in CASES.items():
        if op == "lse":
            calls[name] = (lambda a, ax: lambda: logsumexp(a, axis=ax))(arrays[size], axis)
        elif op == "softmax":
            calls[name] = (lambda a, ax: lambda: softmax(a, axis=ax))(arrays[size], axis)
        else:
            calls[name] = lambda: logsumexp_matmul(A, B)
    for call in calls.values():
        call()
    times = {name: [] for name in calls}
    cpu = {name: [] for name in calls}
    for _ in range(inner):
        for name, call in calls.items():
            start, start_cpu = time.perf_counter(), time.process_time()
            call()
            times[name].append(time.perf_counter() - start)
            cpu[name].append(time.process_time() - start_cpu)
    print(json.dumps({"times": times, "cpu": cpu, "info": _child_info(solvers)}))


def _child_info(solvers):
    import numba

    info = {"numba_threads": numba.get_num_threads(), "solvers": solvers.__file__}
    try:
        info["threading_layer"] = numba.threading_layer()
    except ValueError:   # no parallel kernel ran
        info["threading_layer"] = "none"
    try:
        from threadpoolctl import threadpool_info

        info["blas_threads"] = [p["num_threads"] for p in threadpool_info()
                                if p["user_api"] == "blas"]
    except ImportError:
        info["blas_threads"] = "threadpoolctl missing"
    return info


# --- parent: interleaved fresh processes -------------------------------------------------

def _commit(repo):
    try:
        return subprocess.run(["git", "-C", str(repo), "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "?"


def _run_child(repo, threads, blas_threads, inner):
    env = dict(os.environ)
    blas = str(blas_threads or threads)
    env.update(NUMBA_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=blas,
               MKL_NUM_THREADS=blas, PYTHONPATH=str(repo))
    proc = subprocess.run([sys.executable, __file__, "--child", "--inner", str(inner)],
                          cwd=repo, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"child failed ({repo}, {threads} threads):\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _autogroup():
    try:
        return Path("/proc/sys/kernel/sched_autogroup_enabled").read_text().strip() == "1"
    except OSError:
        return False


def _parse_threads(text):
    out = []
    for item in text.split(","):
        t = os.cpu_count() if item.strip() == "all" else int(item)
        if t not in out:
            out.append(t)
    return out


def _cell(values):
    """'best (median)' in ms."""
    return f"{1e3 * min(values):.1f} ({1e3 * statistics.median(values):.0f})"


def _print_table(repos, threads, results, blas_threads):
    first = repos[0]
    for repo in repos:
        print(f"\n== {repo}  (commit {_commit(repo)}) ==")
        head = f"{'case':<32}" + "".join(f"{f'T={t} ms':>16}" for t in threads)
        head += "".join(f"{f'x{t}/{threads[0]}':>7}" for t in threads[1:])
        head += "".join(f"{f'cpu T={t}':>10}" for t in threads)
        if repo != first:
            head += "".join(f"{f'1st/this T={t}':>15}" for t in threads) + f"{'cpu':>6}"
        print(head)
        for case in CASES:
            wall = {t: results[repo, t]["times"][case] for t in threads}
            cpu = {t: results[repo, t]["cpu"][case] for t in threads}
            line = f"{case:<32}" + "".join(f"{_cell(wall[t]):>16}" for t in threads)
            line += "".join(f"{min(wall[threads[0]]) / min(wall[t]):7.2f}"
                            for t in threads[1:])
            line += "".join(f"{1e3 * min(cpu[t]):10.1f}" for t in threads)
            if repo != first:
                line += "".join(f"{min(results[first, t]['times'][case]) / min(wall[t]):15.2f}"
                                for t in threads)
                ref = min(results[first, threads[0]]["cpu"][case])
                line += f"{ref / min(cpu[threads[0]]):6.2f}"
            print(line)
    print(f"\nms: best of the runs (median in brackets), wall clock; xT/{threads[0]}: speed-up "
          f"of T threads over {threads[0]}; cpu T: best process CPU time in ms (all threads; "
          f"at T={threads[0]} the steadier per-core figure under load, above it the work "
          "done including any spinning); 1st/this: the first checkout's best time over this "
          f"one's (> 1: this one is faster; 'cpu' at T={threads[0]}).")
    blas = "= T" if blas_threads is None else f"= {blas_threads}"
    print(f"each run: NUMBA_NUM_THREADS = T, OPENBLAS_NUM_THREADS = MKL_NUM_THREADS {blas}.")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repo", action="append", type=Path,
                        help="checkout to time (repeatable; default: this one)")
    parser.add_argument("--threads", default="1,2,all", help="comma list; 'all' = cpu_count")
    parser.add_argument("--rounds", type=int, default=5, help="fresh processes per setting")
    parser.add_argument("--inner", type=int, default=1, help="timed calls per process")
    parser.add_argument("--blas-threads", type=int, default=None,
                        help="fix OPENBLAS_NUM_THREADS (default: the thread count)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return _child(args.inner)
    repos = [r.resolve() for r in (args.repo or [Path(__file__).resolve().parents[2]])]
    threads = _parse_threads(args.threads)
    print(f"python {sys.version.split()[0]}; cpu_count {os.cpu_count()}; "
          f"load average before: {os.getloadavg()}")
    if _autogroup():
        print("note: kernel.sched_autogroup_enabled = 1: every busy session gets an equal "
              "share of the CPUs, so while other sessions are busy more threads cannot show "
              "their speed-up; compare thread counts on an idle machine")
    configs = [(repo, t) for repo in repos for t in threads]
    results = {c: {kind: {case: [] for case in CASES} for kind in ("times", "cpu")}
               for c in configs}
    infos = {}
    for r in range(args.rounds):
        shift = r % len(configs)
        for repo, t in configs[shift:] + configs[:shift]:
            out = _run_child(repo, t, args.blas_threads, args.inner)
            infos[repo, t] = out["info"]
            for kind in ("times", "cpu"):
                for case, ts in out[kind].items():
                    results[repo, t][kind][case].extend(ts)
        print(f"round {r + 1}/{args.rounds} done, load average {os.getloadavg()}", flush=True)
    for (repo, t), info in infos.items():
        print(f"{repo.name} T={t}: numba threads {info['numba_threads']} "
              f"({info['threading_layer']}), BLAS threads {info['blas_threads']}")
    _print_table(repos, threads, results, args.blas_threads)
    print(f"load average after: {os.getloadavg()}; best of {args.rounds * args.inner} "
          f"({args.rounds} processes x {args.inner}), wall clock")


if __name__ == "__main__":
    main()
