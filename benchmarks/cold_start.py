"""Cold and warm first calls, one fresh process per area.

A newcomer's first call of each area pays for Numba compilation unless the kernels are in
the on-disk cache. For every area this script runs one small, typical first call in a new
Python process twice with the same ``NUMBA_CACHE_DIR``: first with the directory empty
(cold: compilation), then again (warm: the cache is loaded). Each figure is the wall time
of the whole process (interpreter start and imports included), the median over
``--repeat`` fresh cache directories. It also counts the kernels and signatures the call
compiled.

    NUMBA_NUM_THREADS=2 OPENBLAS_NUM_THREADS=1 python benchmarks/cold_start.py --repeat 3

Run it from the checkout whose code you want to measure (it imports ``solvers`` from the
working directory).
"""
import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

#: one small first call per area (public API only)
CALLS = {
    "lse": """
r = np.random.default_rng(0)
a = r.normal(size=(200, 100))
s.logsumexp(a, axis=1); s.logsumexp(a, axis=0); s.softmax(a, axis=1)
s.logsumexp_matmul(a, r.normal(size=(100, 300)))
""",
    "cbo": """
s.minimize_cbo(lambda x: float(np.sum((x - 0.5) ** 2)), bounds=[(-3, 3)] * 5,
               maxfev=3000, rng=0)
""",
    "safe_kl": """
r = np.random.default_rng(0)
s.safe_logsumexp(r.normal(size=(50, 200)), rho=0.1, axis=1)
data = r.normal(size=(500, 3))
phi = lambda x, batch: (0.5 * np.sum((x - batch) ** 2, axis=1), x - batch)
s.minimize_logsumexp(phi, np.zeros(3), data, rho=0.1, batch_size=32, maxiter=50, rng=0)
""",
    "lightsb": """
r = np.random.default_rng(0)
x0, x1 = r.normal(size=(500, 2)), r.normal(size=(500, 2)) + 2.0
s.schrodinger_bridge(x0, x1, epsilon=1.0, n_components=4, maxiter=50, rng=0)
""",
    "dam": """
r = np.random.default_rng(0)
means = r.normal(size=(20, 3)) * 4
G = r.normal(size=(20, 3, 3))
covs = G @ np.swapaxes(G, 1, 2) / 3 + 0.5 * np.eye(3)
s.GaussianMemory(means, covs, beta=1.0).retrieve(means[:5] + 0.1, covs[:5])
""",
    "dag": """
from solvers.dag import simulate_data
data = simulate_data(5, 300, k=2, graph_type="ER", rng=0)
s.learn_dag(data.X, rng=0)
""",
    "qubo": """
r = np.random.default_rng(0)
Q = r.normal(size=(30, 30))
s.minimize_qubo((Q + Q.T) / 2, n_reads=4, maxiter=100, rng=0)
""",
}

#: further first calls, measured when named in ``--areas`` (not in the default table)
EXTRA_CALLS = {
    "kl_dro": """
from solvers.lse import dro_dataset, kl_dro
X, y = dro_dataset(2000, 5, "logistic", rng=0)
kl_dro(X, y, lam=0.3, loss="logistic", method="lbfgs")
kl_dro(X, y, lam=0.3, loss="logistic", epochs=1, batch_size=32, rng=0)
""",
    "semidual": """
r = np.random.default_rng(0)
s.semidual_ot(r.normal(size=(200, 2)), r.normal(size=(100, 2)) + 1.0, epsilon=0.5,
              maxiter=200, rng=0)
""",
    "bures": """
from solvers import transport as t
r = np.random.default_rng(0)
G = r.normal(size=(30, 4, 4))
S = G @ np.swapaxes(G, 1, 2) / 4 + 0.5 * np.eye(4)
t.bures_wasserstein_barycenter(r.normal(size=(30, 4)), S)
t.bures_wasserstein_cdist(r.normal(size=(5, 4)), S[:5], r.normal(size=(30, 4)), S)
""",
    "vector_dam": """
r = np.random.default_rng(0)
from solvers.memory import VectorMemory
VectorMemory(r.normal(size=(100, 8)), beta=2.0).retrieve(r.normal(size=(10, 8)))
""",
}

_PRELUDE = "import numpy as np\nimport solvers as s\n"
#: installed before the call: a ``numba:compile`` listener that times every compilation
#: (CPU seconds, less disturbed by a loaded machine than wall time). It is hooked onto the
#: import of ``numba.core.event``, so a call that never imports Numba does not pay for it.
#: Time spent compiling Numba internals (``np.linalg`` overloads, ...) is charged to the
#: nearest enclosing ``solvers`` kernel.
_LISTEN = """
import importlib.abc, importlib.machinery, sys, time
_compiles = {}
_stack = []

def _key(dispatcher):
    f = dispatcher.py_func
    return f"{f.__module__}:{f.__qualname__}"

def _install(event):
    class _Listener(event.Listener):
        def on_start(self, e):
            _stack.append([time.process_time(), 0.0, _key(e.data["dispatcher"])])

        def on_end(self, e):
            start, nested, key = _stack.pop()
            spent = time.process_time() - start
            mine = key.startswith("solvers")
            if mine or not _stack:
                d = e.data["dispatcher"]
                rec = _compiles.setdefault(key, [0.0, 0, bool(d.targetoptions.get("parallel"))])
                rec[0] += spent - nested
                rec[1] += 1
            if _stack and mine:
                _stack[-1][1] += spent

    event.register("numba:compile", _Listener())

class _Hook(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name != "numba.core.event":
            return None
        sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            _install(module)
        spec.loader.exec_module = exec_module
        return spec

sys.meta_path.insert(0, _Hook())
"""

#: printed after the call: kernels (``solvers`` dispatchers holding a signature, found in
#: module globals as before) and the compilations the listener saw
_COUNT = """
import json, sys
kernels = set()
signatures = 0
if "numba" in sys.modules:
    from numba.core.registry import CPUDispatcher
    for module in list(sys.modules.values()):
        if not (getattr(module, "__name__", "") or "").startswith("solvers"):
            continue
        for value in vars(module).values():
            if (isinstance(value, CPUDispatcher) and value.signatures
                    and id(value) not in kernels):
                kernels.add(id(value))
                signatures += len(value.signatures)
print("COUNT" + json.dumps([len(kernels), signatures]))
print("COMPILES" + json.dumps(_compiles))
"""


def _run(code, cache_dir):
    """Run ``code`` in a fresh interpreter; returns wall seconds, seconds until the first
    demo row (None for an area call), the counts and the compilations it reported."""
    env = {**os.environ, "NUMBA_CACHE_DIR": cache_dir, "PYTHONPATH": os.getcwd()}
    start = time.perf_counter()
    cpu_before = _children_cpu()
    proc = subprocess.Popen([sys.executable, "-c", code], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    lines, first_row = [], None
    for line in proc.stdout:  # the demo flushes each row: time the first one
        lines.append(line)
        if first_row is None and len(lines) == 3 and not line.startswith(("COUNT", "COMP")):
            first_row = time.perf_counter() - start
    err = proc.stderr.read()
    if proc.wait():
        raise RuntimeError(f"the first call failed:\n{code}\n{err[-2000:]}")
    seconds = time.perf_counter() - start
    cpu = _children_cpu() - cpu_before
    tagged = {tag: json.loads(line[len(tag):]) for line in lines
              for tag in ("COUNT", "COMPILES") if line.startswith(tag)}
    return (seconds, cpu), first_row, tagged.get("COUNT"), tagged.get("COMPILES", {})


def _children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _demo_code():
    return "from solvers.__main__ import main\nmain(['demo'])\n"


def _warmup(cache_dir):
    """Fill ``cache_dir`` with ``python -m solvers warmup`` (all solvers)."""
    env = {**os.environ, "NUMBA_CACHE_DIR": cache_dir, "PYTHONPATH": os.getcwd()}
    subprocess.run([sys.executable, "-m", "solvers", "warmup", "--no-progress"], env=env,
                   check=True, capture_output=True)


def measure(name, repeat, warmed=None):
    """Median cold and warm figures of one area (or the demo) over ``repeat`` caches
    (``warmed``: a cache directory each one starts as a copy of)."""
    call = {**CALLS, **EXTRA_CALLS}[name] if name != "demo" else _demo_code()
    code = _LISTEN + _PRELUDE + call + _COUNT
    cold, warm, cold_cpu, warm_cpu, first, compile_s, warm_compiles = ([] for _ in range(7))
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as cache:
            if warmed is not None:
                shutil.copytree(warmed, cache, dirs_exist_ok=True)
            (seconds, cpu), first_row, counts, compiles = _run(code, cache)
            cold.append(seconds)
            cold_cpu.append(cpu)
            first.append(first_row)
            compile_s.append(sum(c[0] for c in compiles.values()))
            (seconds, cpu), _, _, again = _run(code, cache)
            warm.append(seconds)
            warm_cpu.append(cpu)
            warm_compiles.append(sum(c[1] for c in again.values()))
    first = statistics.median(first) if None not in first else None
    return {"cold": statistics.median(cold), "warm": statistics.median(warm),
            "cold_cpu": statistics.median(cold_cpu), "warm_cpu": statistics.median(warm_cpu),
            "first_row": first, "counts": counts, "compile_s": statistics.median(compile_s),
            "compiles": compiles, "warm_compiles": max(warm_compiles)}


def _print_detail(name, compiles):
    """One line per compiled function of the last cold run (slowest first)."""
    rows = sorted(compiles.items(), key=lambda kv: -kv[1][0])
    for key, (seconds, n_sigs, parallel) in rows:
        print(f"    {name:8s} {seconds:7.2f} s  {n_sigs:2d} sig  "
              f"{'parallel' if parallel else 'serial  '}  {key}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--areas", nargs="*", default=list(CALLS) + ["demo"],
                        choices=list(CALLS) + list(EXTRA_CALLS) + ["demo"],
                        help="the first calls to measure (default: every area and the "
                        "demo; the sum counts the areas of the default table only)")
    parser.add_argument("--compile-detail", action="store_true",
                        help="also print the compile seconds of every compiled function")
    parser.add_argument("--after-warmup", action="store_true",
                        help="fill each fresh cache with 'python -m solvers warmup' before "
                        "the cold run (which should then compile nothing)")
    args = parser.parse_args(argv)
    threads = {k: os.environ.get(k, "unset") for k in
               ("NUMBA_NUM_THREADS", "OPENBLAS_NUM_THREADS")}
    print(f"# cold / warm first call, one fresh process each, median of {args.repeat}; "
          f"{threads}; load average {os.getloadavg()[0]:.2f}"
          + ("; cold = after 'python -m solvers warmup'" if args.after_warmup else ""))
    print("# s: wall seconds of the process; cpu: its CPU seconds (steadier on a loaded "
          "machine); compile: CPU seconds inside Numba compilations (cold run); warm comp: "
          "compilations in the warm run (0: the cache served everything); 1st row: seconds "
          "until the demo printed its first row")
    print(f"{'area':10s} {'cold s':>7s} {'warm s':>7s} {'cold cpu':>8s} {'warm cpu':>8s} "
          f"{'kernels':>7s} {'sigs':>5s} {'compile':>7s} {'warm comp':>9s} {'1st row':>7s}")
    totals = dict.fromkeys(("cold", "warm", "cold_cpu", "warm_cpu", "compile_s"), 0.0)
    warmed = None
    if args.after_warmup:
        warmed = tempfile.mkdtemp(prefix="solvers-warmed-")
        _warmup(warmed)
    for name in args.areas:
        try:
            m = measure(name, args.repeat, warmed)
        except RuntimeError as exc:  # a call this checkout does not support: say so, go on
            print(f"{name:10s} skipped: {str(exc).strip().splitlines()[-1]}", flush=True)
            continue
        kernels, sigs = m["counts"] if m["counts"] else ("-", "-")
        if name in CALLS:
            totals = {k: v + m[k] for k, v in totals.items()}
        first = f"{m['first_row']:7.2f}" if m["first_row"] is not None else f"{'-':>7s}"
        print(f"{name:10s} {m['cold']:7.2f} {m['warm']:7.2f} {m['cold_cpu']:8.2f} "
              f"{m['warm_cpu']:8.2f} {kernels!s:>7s} {sigs!s:>5s} {m['compile_s']:7.2f} "
              f"{m['warm_compiles']:9d} {first}", flush=True)
        if args.compile_detail:
            _print_detail(name, m["compiles"])
    t = totals
    print(f"{'sum':10s} {t['cold']:7.2f} {t['warm']:7.2f} {t['cold_cpu']:8.2f} "
          f"{t['warm_cpu']:8.2f} {'':7s} {'':5s} {t['compile_s']:7.2f}   "
          "(areas, demo excluded)")
    print(f"# load average after: {os.getloadavg()[0]:.2f}")
    if warmed is not None:
        shutil.rmtree(warmed, ignore_errors=True)


if __name__ == "__main__":
    main()
