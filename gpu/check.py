"""The one script a GPU machine runs: the test suite with the cupy backend enabled, then the
asv benchmarks (which add a "cupy" backend parameter when a GPU is usable), written to one
JSON report.

Usage (from the repository root, on a machine with a CUDA GPU):

    python -m pip install -e ".[test,bench,gpu]"
    python gpu/check.py [--out gpu/report.json] [--skip-bench] [--bench REGEX]

It must keep running unchanged as CuPy kernels are added: tests opt in through the ``xp``
and ``backend`` fixtures (SOLVERS_TEST_CUPY=1 adds the cupy parameters), benchmarks through
their ``backend`` parameter lists.
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


def run(cmd, env=None, timeout=None):
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=timeout)
    return proc, time.perf_counter() - start


def device_info():
    info = {"python": platform.python_version()}
    try:
        import cupy

        info["cupy"] = cupy.__version__
        info["cuda_runtime"] = cupy.cuda.runtime.runtimeGetVersion()
        props = cupy.cuda.runtime.getDeviceProperties(0)
        info["device"] = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
        info["memory_gib"] = round(props["totalGlobalMem"] / 2**30, 1)
    except Exception as exc:  # report, do not crash: the report says why nothing ran
        info["cupy_error"] = repr(exc)
    from solvers._lib.backend import gpu_available

    info["gpu_available"] = gpu_available()
    return info


def run_tests(timeout):
    env = dict(os.environ, SOLVERS_TEST_CUPY="1")
    junit = os.path.join(ROOT, "gpu", "junit.xml")
    proc, seconds = run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                         f"--junitxml={junit}"], env=env, timeout=timeout)
    summary = {"returncode": proc.returncode, "seconds": round(seconds, 1),
               "tail": proc.stdout[-3000:]}
    if os.path.exists(junit):
        root = ET.parse(junit).getroot()
        cases = root.iter("testcase")
        failed, cupy_cases, cupy_passed = [], 0, 0
        for case in cases:
            name = f"{case.get('classname')}::{case.get('name')}"
            bad = case.find("failure") is not None or case.find("error") is not None
            if "cupy" in name:
                cupy_cases += 1
                cupy_passed += (not bad) and case.find("skipped") is None
            if bad:
                failed.append(name)
        summary.update(cupy_cases=cupy_cases, cupy_passed=cupy_passed, failed=failed)
    return summary


def run_benchmarks(regex, timeout):
    run([sys.executable, "-m", "asv", "machine", "--yes"])
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip()
    cmd = [sys.executable, "-m", "asv", "run", "--python=same", "--quick", "--show-stderr",
           f"--set-commit-hash={commit}"]
    if regex:
        cmd += ["--bench", regex]
    proc, seconds = run(cmd, timeout=timeout)
    results = {}
    for path in glob.glob(os.path.join(ROOT, ".asv", "results", "*", f"{commit[:8]}*.json")):
        with open(path) as fh:
            data = json.load(fh)
        results.update(data.get("results", {}))
    return {"returncode": proc.returncode, "seconds": round(seconds, 1),
            "tail": proc.stdout[-4000:], "results": results}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.path.join(ROOT, "gpu", "report.json"))
    parser.add_argument("--skip-bench", action="store_true")
    parser.add_argument("--bench", default=None, help="asv --bench regex (default: all)")
    parser.add_argument("--test-timeout", type=int, default=1200)
    parser.add_argument("--bench-timeout", type=int, default=1800)
    args = parser.parse_args()
    report = {"device": device_info()}
    report["tests"] = run_tests(args.test_timeout)
    if not args.skip_bench:
        report["benchmarks"] = run_benchmarks(args.bench, args.bench_timeout)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as fh:
        json.dump(report, fh, indent=1, default=str)
    t = report["tests"]
    print(f"tests rc={t['returncode']} cupy cases {t.get('cupy_passed')}/{t.get('cupy_cases')} "
          f"passed; failed: {len(t.get('failed', []))}; report: {args.out}")
    return 0 if t["returncode"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
