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

_PRELUDE = "import numpy as np\nimport solvers as s\n"
_COUNT = """
import json, sys
from numba.core.registry import CPUDispatcher
kernels = set()
signatures = 0
for module in list(sys.modules.values()):
    if not (getattr(module, "__name__", "") or "").startswith("solvers"):
        continue
    for value in vars(module).values():
        if isinstance(value, CPUDispatcher) and value.signatures and id(value) not in kernels:
            kernels.add(id(value))
            signatures += len(value.signatures)
print("COUNT" + json.dumps([len(kernels), signatures]))
"""


def _run(code, cache_dir):
    env = {**os.environ, "NUMBA_CACHE_DIR": cache_dir, "PYTHONPATH": os.getcwd()}
    start = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True)
    if out.returncode:
        raise RuntimeError(f"the first call failed:\n{code}\n{out.stderr[-2000:]}")
    seconds = time.perf_counter() - start
    counts = [json.loads(line[5:]) for line in out.stdout.splitlines()
              if line.startswith("COUNT")]
    return seconds, (counts[0] if counts else None)


def _demo_code():
    return "import sys\nfrom solvers.__main__ import main\nmain(['demo'])\n"


def measure(name, repeat):
    code = (_PRELUDE + CALLS[name] + _COUNT) if name != "demo" else _demo_code()
    cold, warm, counts = [], [], None
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as cache:
            t, counts = _run(code, cache)
            cold.append(t)
            warm.append(_run(code, cache)[0])
    return statistics.median(cold), statistics.median(warm), counts


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--areas", nargs="*", default=list(CALLS) + ["demo"])
    args = parser.parse_args(argv)
    threads = {k: os.environ.get(k, "unset") for k in
               ("NUMBA_NUM_THREADS", "OPENBLAS_NUM_THREADS")}
    print(f"# cold / warm first call, one fresh process each, median of {args.repeat}; "
          f"{threads}; load average {os.getloadavg()[0]:.2f}")
    print(f"{'area':10s} {'cold s':>8s} {'warm s':>8s} {'kernels':>8s} {'signatures':>10s}")
    total_cold = total_warm = 0.0
    for name in args.areas:
        cold, warm, counts = measure(name, args.repeat)
        kernels, sigs = counts if counts else ("-", "-")
        if name != "demo":
            total_cold, total_warm = total_cold + cold, total_warm + warm
        print(f"{name:10s} {cold:8.2f} {warm:8.2f} {kernels!s:>8s} {sigs!s:>10s}", flush=True)
    print(f"{'sum':10s} {total_cold:8.2f} {total_warm:8.2f}   (areas, demo excluded)")
    print(f"# load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
