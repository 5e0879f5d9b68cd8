"""The one script a GPU machine runs: the cupy tests, then a short cupy-vs-Numba table.

It is written for a GPU machine without a package index: the few pure-Python packages such
a machine may lack are downloaded beforehand as wheels into the ignored ``.whl/`` folder
(``--fetch-wheels``, where an index is reachable) and installed there with
``pip install --no-index --no-deps --target``; the whole check takes under 8 minutes, and
the package runs from the checkout through ``PYTHONPATH`` (no ``pip install -e``).

Usage (from the repository root)::

    python gpu/check.py --fetch-wheels      # here, with a package index: fill .whl/
    python gpu/check.py --dry-run           # anywhere: print the plan and its time budget
    python gpu/check.py                     # on the GPU machine: tests + table -> JSON

Steps and their caps (seconds; the whole stays under 10 minutes):

1. install the wheels of ``.whl/`` into ``gpu/_site`` (seconds);
2. ``pytest -m gpu -x`` with ``SOLVERS_TEST_CUPY=1`` (the cupy parameters of every
   ``xp`` / ``backend`` fixture and the tests marked ``gpu``), capped at ``--test-timeout``;
3. ``gpu/bench.py``: each area's hot operation at a size where a GPU should win, cupy vs
   Numba in one process (Numba threads stated), capped at ``--bench-timeout``.

The report (``--out``, JSON) holds the device, the test counts and failures, and the table.
"""
import argparse
import glob
import json
import os
import platform
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WHEELS = os.path.join(ROOT, ".whl")
SITE = os.path.join(ROOT, "gpu", "_site")
#: pure-Python packages the GPU machine lacks (it has numpy, scipy, numba, cupy, networkx,
#: pytest, hypothesis); tests needing anything else (POT, dask) skip or are not selected
CARRIED = ("array-api-compat", "array-api-strict", "tqdm")
BUDGET_S = 480  # seconds for the whole check, well under 10 minutes


def plan(args):
    """The commands the check runs, as (name, argv, env additions, timeout)."""
    env = {"PYTHONPATH": os.pathsep.join([SITE, ROOT]), "SOLVERS_TEST_CUPY": "1",
           "OPENBLAS_NUM_THREADS": "1"}
    junit = os.path.join(ROOT, "gpu", "junit.xml")
    return [
        ("install wheels", [sys.executable, "-m", "pip", "install", "--no-index", "--no-deps",
                            "--quiet", "--upgrade", "--target", SITE]
         + sorted(glob.glob(os.path.join(WHEELS, "*.whl"))), {}, 30),
        ("tests", [sys.executable, "-m", "pytest", "-q", "-x", "-m", "gpu",
                   "-p", "no:cacheprovider", "--no-header", f"--junitxml={junit}",
                   "tests"], env, args.test_timeout),
        ("bench", [sys.executable, os.path.join(ROOT, "gpu", "bench.py"),
                   "--out", os.path.join(ROOT, "gpu", "_bench.json")]
         + (["--quick"] if args.quick else []), env, args.bench_timeout),
    ]


def run(argv, env, timeout):
    start = time.perf_counter()
    try:
        proc = subprocess.run(argv, cwd=ROOT, env=dict(os.environ, **env),
                              capture_output=True, text=True, timeout=timeout)
        rc, out = proc.returncode, proc.stdout + proc.stderr
    except subprocess.TimeoutExpired as exc:
        rc, out = "timeout", (exc.stdout or b"").decode(errors="replace")
    return rc, out, round(time.perf_counter() - start, 1)


def device_info():
    info = {"python": platform.python_version()}
    try:
        import cupy

        info["cupy"] = cupy.__version__
        info["cuda_runtime"] = cupy.cuda.runtime.runtimeGetVersion()
        props = cupy.cuda.runtime.getDeviceProperties(0)
        name = props["name"]
        info["device"] = name.decode() if isinstance(name, bytes) else name
        info["memory_gib"] = round(props["totalGlobalMem"] / 2**30, 1)
    except Exception as exc:  # report, do not crash: the report says why nothing ran
        info["cupy_error"] = repr(exc)
    return info


def junit_summary(path):
    if not os.path.exists(path):
        return {}
    counts = {"passed": 0, "failed": 0, "skipped": 0}
    failed = []
    for case in ET.parse(path).getroot().iter("testcase"):
        name = f"{case.get('classname')}::{case.get('name')}"
        if case.find("failure") is not None or case.find("error") is not None:
            counts["failed"] += 1
            failed.append(name)
        elif case.find("skipped") is not None:
            counts["skipped"] += 1
        else:
            counts["passed"] += 1
    return dict(counts, failed_cases=failed)


def fetch_wheels():
    os.makedirs(WHEELS, exist_ok=True)
    subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary",
                    ":all:", "-d", WHEELS, *CARRIED], check=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.path.join(ROOT, "gpu", "report.json"))
    parser.add_argument("--test-timeout", type=int, default=240)
    parser.add_argument("--bench-timeout", type=int, default=150)
    parser.add_argument("--quick", action="store_true", help="smaller benchmark sizes")
    parser.add_argument("--dry-run", action="store_true", help="print the plan, run nothing")
    parser.add_argument("--fetch-wheels", action="store_true",
                        help="download the wheels a GPU machine may lack into .whl/ "
                        "(needs an index)")
    args = parser.parse_args()
    if args.fetch_wheels:
        fetch_wheels()
        return 0
    steps = plan(args)
    total = sum(step[3] for step in steps)
    if args.dry_run:
        for name, argv, env, timeout in steps:
            extra = " ".join(f"{k}={v}" for k, v in env.items())
            print(f"[{name}, cap {timeout} s] {extra} {' '.join(argv)}".strip())
        print(f"total cap {total} s (budget {BUDGET_S} s): "
              f"{'fits' if total <= BUDGET_S else 'DOES NOT FIT'}")
        return 0 if total <= BUDGET_S else 1
    report = {"device": device_info(), "steps": {}}
    for name, argv, env, timeout in steps:
        rc, out, seconds = run(argv, env, timeout)
        report["steps"][name] = {"rc": rc, "seconds": seconds, "tail": out[-4000:]}
        print(f"== {name}: rc={rc} in {seconds} s\n{out[-2500:]}", flush=True)
    report["tests"] = junit_summary(os.path.join(ROOT, "gpu", "junit.xml"))
    bench = os.path.join(ROOT, "gpu", "_bench.json")
    if os.path.exists(bench):
        with open(bench) as fh:
            report["bench"] = json.load(fh)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as fh:
        json.dump(report, fh, indent=1, default=str)
    print(f"tests: {report['tests']}; report: {args.out}")
    return 0 if report["steps"]["tests"]["rc"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
