"""The Numba kernels of this checkout against those of another commit, in one process.

Loads ``solvers/lse/_lse_numba.py`` and ``_matmul_numba.py`` of ``--ref`` (a git commit
of this repository, default ``main``) beside the current ones and times both on the same
arrays, interleaved: ``lse_reduce`` (rows, columns, weighted), ``softmax_numba``
(softmax, log_softmax) and ``lse_matmul_numba``, from small to large. Process CPU time
per call, best of ``--rounds`` batches, on one Numba thread and on all of them (CPU time
is summed over threads, so a ratio above 1 on many threads is lost per-core efficiency).

    NUMBA_NUM_THREADS=2 OPENBLAS_NUM_THREADS=1 python benchmarks/peers/lse_kernels_vs_ref.py

Ratios are new / ref (below 1: the current kernels are faster); results are checked to be
bit-identical between the two.
"""
import argparse
import importlib.util
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from benchmarks._common import pin_blas_threads  # noqa: E402


def _load_ref(commit, folder):
    """The reference kernels as modules ``solvers.lse._ref_lse_numba`` / ``_ref_matmul``."""
    import solvers.lse  # noqa: F401  (the package the relative imports resolve in)

    modules = {}
    for name, ref_name in (("_lse_numba", "_ref_lse_numba"), ("_matmul_numba", "_ref_matmul")):
        text = subprocess.run(["git", "-C", str(ROOT), "show", f"{commit}:solvers/lse/{name}.py"],
                              capture_output=True, text=True, check=True).stdout
        text = text.replace("from ._lse_numba import", "from ._ref_lse_numba import")
        path = Path(folder) / f"{ref_name}.py"
        path.write_text(text)
        spec = importlib.util.spec_from_file_location(f"solvers.lse.{ref_name}", path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
        modules[name] = module
    return modules


def _per_call(fn, budget):
    start = time.process_time()
    fn()
    once = max(time.process_time() - start, 1e-6)
    calls = max(int(budget / once), 1)
    start = time.process_time()
    for _ in range(calls):
        fn()
    return (time.process_time() - start) / calls


def _cases(new, ref, quick):
    rng = np.random.default_rng(0)
    sizes = (2 ** 14, 2 ** 17, 2 ** 20) if quick else (2 ** 12, 2 ** 14, 2 ** 16, 2 ** 18,
                                                         2 ** 20, 2 ** 22)
    L, R = new["_lse_numba"], ref["_lse_numba"]
    for size in sizes:
        for lanes in (16, 1024):
            if size < 16 * lanes:
                continue
            a = rng.normal(size=(lanes, size // lanes))
            w = np.abs(a)
            c = rng.normal(size=(size // lanes, lanes))
            for tag, args in ((f"rows {a.shape}", (a, None, (1,), False)),
                              (f"rows b {a.shape}", (a, w, (1,), False)),
                              (f"cols {c.shape}", (c, None, (0,), False)),
                              (f"cols b {c.shape}", (c, np.abs(c), (0,), False))):
                yield "lse", tag, lambda k, args=args: k.lse_reduce(*args), L, R
            for log in (False, True):
                op = "log_softmax" if log else "softmax"
                yield op, f"rows {a.shape}", \
                    lambda k, a=a, log=log: k.softmax_numba(a, (1,), log), L, R
                yield op, f"cols {c.shape}", \
                    lambda k, c=c, log=log: k.softmax_numba(c, (0,), log), L, R
        v = rng.normal(size=size)
        yield "lse", f"1-d {v.shape}", lambda k, v=v: k.lse_reduce(v, None, (0,), False), L, R
    M, MR = new["_matmul_numba"], ref["_matmul_numba"]
    for n, k in ((300, 8), (2000, 8), (2000, 64), (6000, 16)):
        A, B = rng.normal(size=(n, k)) / 2, rng.normal(size=(k, n)) / 2
        yield "matmul", f"{n}x{k}x{n}", \
            lambda mod, A=A, B=B: mod.lse_matmul_numba(A, B, None, None), M, MR


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ref", default="main", help="git commit of the reference kernels")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--budget", type=float, default=0.05, help="CPU s per batch")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    pin_blas_threads()
    import numba

    from solvers.lse import _lse_numba, _matmul_numba

    new = {"_lse_numba": _lse_numba, "_matmul_numba": _matmul_numba}
    with tempfile.TemporaryDirectory() as folder:
        ref = _load_ref(args.ref, folder)
        all_threads = numba.get_num_threads()
        print(f"# new / ref ({args.ref}) per-call CPU us, best of {args.rounds}; numba threads "
              f"1 and {all_threads}, OPENBLAS_NUM_THREADS="
              f"{os.environ.get('OPENBLAS_NUM_THREADS')}, load {os.getloadavg()[0]:.2f}")
        print(f"{'op':12s} {'case':22s} {'T':>2s} {'new':>10s} {'ref':>10s} {'new/ref':>8s}")
        ratios = []
        for op, case, call, mod, ref_mod in _cases(new, ref, args.quick):
            with np.errstate(all="ignore"):
                got, want = call(mod), call(ref_mod)
            for g, w in zip(got if isinstance(got, tuple) else (got,),
                            want if isinstance(want, tuple) else (want,)):
                assert np.array_equal(g, w, equal_nan=True), f"{op} {case}: results differ"
            for threads in sorted({1, all_threads}):
                numba.set_num_threads(threads)
                t = {"new": np.inf, "ref": np.inf}
                with np.errstate(all="ignore"):
                    for _ in range(args.rounds):
                        t["new"] = min(t["new"], _per_call(lambda: call(mod), args.budget))
                        t["ref"] = min(t["ref"], _per_call(lambda: call(ref_mod), args.budget))
                numba.set_num_threads(all_threads)
                ratios.append(t["new"] / t["ref"])
                print(f"{op:12s} {case:22s} {threads:2d} {1e6 * t['new']:10.1f} "
                      f"{1e6 * t['ref']:10.1f} {t['new'] / t['ref']:8.3f}", flush=True)
        print(f"# geometric mean new/ref {np.exp(np.mean(np.log(ratios))):.3f}; "
              f"load after {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
