"""cupy vs Numba, one hot operation per area, at sizes where a GPU should win.

Run by ``gpu/check.py`` on the GPU machine (one process; Numba on the threads
``NUMBA_NUM_THREADS`` gives it, stated in the output). Each case builds its inputs once per
backend, runs once to compile / warm, then reports the best of ``--repeats`` runs (cupy
timings synchronise the device). A case that fails records its error and the table goes
on. Writes JSON (``--out``) and prints a table.
"""
import argparse
import json
import os
import time
import traceback

import numpy as np


def _sync(xp):
    if xp.__name__.startswith("cupy"):
        xp.cuda.Device().synchronize()


def _best(fn, xp, repeats):
    fn()
    _sync(xp)
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        _sync(xp)
        best = min(best, time.perf_counter() - start)
    return best


def case_logsumexp(xp, quick):
    import solvers

    n = 2000 if quick else 8000
    a = xp.asarray(np.random.default_rng(0).normal(size=(n, 20000)))
    return f"logsumexp ({n}, 20000) axis 1", lambda: solvers.logsumexp(a, axis=1)


def case_lse_matmul(xp, quick):
    import solvers

    n = 8000 if quick else 20000
    rng = np.random.default_rng(1)
    A, B = xp.asarray(rng.normal(size=(n, 16))), xp.asarray(rng.normal(size=(16, n)))
    return f"logsumexp_matmul n = m = {n}, k = 16", lambda: solvers.logsumexp_matmul(A, B)


def case_safe_lse(xp, quick):
    import solvers

    n = 1000 if quick else 4000
    a = xp.asarray(np.random.default_rng(2).normal(size=(n, 10000)))
    return (f"safe_logsumexp ({n}, 10000) rho 0.01",
            lambda: solvers.safe_logsumexp(a, 0.01, axis=1))


def case_cbo(xp, quick):
    import solvers

    d, runs = 50, (10 if quick else 50)

    def rastrigin(x):  # vectorized: x of shape (d, S)
        return 10 * d + (x**2 - 10 * np.cos(2 * np.pi * x)).sum(axis=0)

    if not xp.__name__.startswith("numpy"):
        def rastrigin(x):  # noqa: F811 -- the same objective on the device
            return 10 * d + (x**2 - 10 * xp.cos(2 * np.pi * x)).sum(axis=0)
    bounds = [(-5.0, 5.0)] * d
    backend = "numba" if xp is np else "cupy"
    return (f"minimize_cbo d = {d}, {runs} runs x 500 particles, 100 steps",
            lambda: solvers.minimize_cbo(rastrigin, bounds, n_particles=500, n_runs=runs,
                                         maxiter=100, vectorized=True, rng=0,
                                         backend=backend))


def case_dam(xp, quick):
    from solvers.memory import GaussianMemory

    rng = np.random.default_rng(3)
    N, d, q = (500, 16, 200) if quick else (2000, 32, 1000)
    means = rng.normal(size=(N, d))
    covs = np.broadcast_to(np.eye(d), (N, d, d)) * rng.uniform(0.5, 2, size=(N, 1, 1))
    qm = means[:q] + 0.1 * rng.normal(size=(q, d))
    qc = covs[:q].copy()
    mem = GaussianMemory(xp.asarray(means), xp.asarray(covs), beta=1.0)
    qm, qc = xp.asarray(qm), xp.asarray(qc)
    return (f"GaussianMemory.retrieve N = {N}, d = {d}, {q} queries",
            lambda: mem.retrieve(qm, qc, maxiter=5))


def case_cosmo(xp, quick):
    from solvers.dag import learn_dag, simulate_data

    d = 30 if quick else 100
    X, _, _ = simulate_data(d=d, n=2000, k=2, rng=0)
    X = xp.asarray(X)
    return f"learn_dag cosmo d = {d}, n = 2000", lambda: learn_dag(X, method="cosmo", rng=0)


def case_qubo(xp, quick):
    import solvers

    n = 500 if quick else 2000
    rng = np.random.default_rng(4)
    Q = rng.normal(size=(n, n))
    Q = xp.asarray((Q + Q.T) / 2)
    backend = "numba" if xp is np else "cupy"
    return (f"minimize_qubo dense n = {n}, 256 reads x 200 sweeps",
            lambda: solvers.minimize_qubo(Q, n_reads=256, n_sweeps=200, rng=0,
                                          backend=backend))


CASES = [case_logsumexp, case_lse_matmul, case_safe_lse, case_cbo, case_dam, case_cosmo,
         case_qubo]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="gpu/_bench.json")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    import numba

    namespaces = [("numba", np)]
    try:
        import cupy

        namespaces.append(("cupy", cupy))
    except ImportError:
        pass
    rows = []
    for case in CASES:
        row = {"case": case.__name__}
        for label, xp in namespaces:
            try:
                row["name"], fn = case(xp, args.quick)
                row[label + "_s"] = round(_best(fn, xp, args.repeats), 5)
            except Exception as exc:  # keep going: the report says what broke
                row[label + "_error"] = "".join(traceback.format_exception_only(exc)).strip()
                row[label + "_trace"] = traceback.format_exc()[-1500:]
        if "numba_s" in row and "cupy_s" in row:
            row["speedup"] = round(row["numba_s"] / row["cupy_s"], 2)
        rows.append(row)
        print(json.dumps({k: v for k, v in row.items() if not k.endswith("_trace")}),
              flush=True)
    out = {"numba_threads": numba.get_num_threads(),
           "blas_threads": os.environ.get("OPENBLAS_NUM_THREADS"), "rows": rows}
    with open(args.out, "w") as fh:
        json.dump(out, fh, indent=1)


if __name__ == "__main__":
    main()
