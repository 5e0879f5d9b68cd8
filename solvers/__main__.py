"""Command line: ``python -m solvers {demo, warmup, info}``."""
import argparse
import platform
import sys


def _info():
    import numpy
    import scipy

    from solvers import __version__
    from solvers._lib.backend import gpu_available, numba_available

    lines = [f"solvers {__version__}", f"python {platform.python_version()}",
             f"numpy {numpy.__version__}", f"scipy {scipy.__version__}"]
    for name in ("numba", "ot", "networkx", "array_api_compat", "array_api_strict", "cupy"):
        try:
            module = __import__(name)
            lines.append(f"{name} {getattr(module, '__version__', '?')}")
        except Exception:
            lines.append(f"{name} not installed")
    usable = ["numpy"] + (["numba"] if numba_available() else []) + (
        ["cupy"] if gpu_available() else [])
    lines.append("backends usable: " + ", ".join(usable))
    print("\n".join(lines))
    return 0


def _demo_help():
    from solvers._demo import demo_names

    names = demo_names()
    areas = sorted({m.split(".")[1] for m in names.values()})
    return (f"comma-separated demos to run: {', '.join(names)}; an area name ("
            f"{', '.join(areas)}) runs all of its demos (default: all)")


def _warmup_help():
    from solvers._lib.warmup import UNITS

    areas = sorted({area for area, _, _ in UNITS.values()})
    return (f"solvers to warm up: {', '.join(UNITS)}; an area name ({', '.join(areas)}) "
            "selects all of its solvers (default: all)")


def _warmup(args, parser):
    from solvers._lib.warmup import select_units, warmup

    try:
        select_units(args.names)
    except ValueError as exc:
        parser.error(str(exc))  # exit status 2, like any other bad argument
    report = print if args.verbose else None
    warmup(args.names, float32=args.float32, progress=not args.no_progress, report=report)
    return 0


def main(argv=None):
    """Entry point of ``python -m solvers`` (and the ``solvers`` script); returns the exit code."""
    from solvers import __version__

    parser = argparse.ArgumentParser(
        prog="python -m solvers",
        description="solvers: log-sum-exp / Gibbs-weighted solvers.")
    parser.add_argument("--version", action="version", version=f"solvers {__version__}")
    sub = parser.add_subparsers(dest="command")
    demo = sub.add_parser("demo", help="run every solver on a small built-in problem",
                          description="Run every solver on a small built-in problem and "
                          "print one row per result as soon as it is ready. Each row "
                          "times the solver call only. Quick problems run on the generic "
                          "code where a solver has it for small inputs (nothing to "
                          "compile, so those rows come first); rows that run Numba "
                          "kernels compile or load them before the clock starts.")
    demo.add_argument("--full", action="store_true",
                      help="larger problems (slower) instead of the quick ones")
    demo.add_argument("--only", default=None, metavar="NAMES", help=_demo_help())
    warm = sub.add_parser(
        "warmup", help="compile the Numba kernels ahead of time (fills the on-disk cache)",
        description="Compile the Numba kernels of the chosen solvers now and store them in "
        "Numba's on-disk cache (NUMBA_CACHE_DIR), so that later first calls load them "
        "instead of compiling. Small calls under backend='auto' need no compilation; this "
        "is for the first large ones.")
    warm.add_argument("names", nargs="*", metavar="NAME", help=_warmup_help())
    warm.add_argument("--float32", action="store_true",
                      help="also compile the single-precision kernels")
    warm.add_argument("--no-progress", action="store_true", help="no progress bar")
    warm.add_argument("-v", "--verbose", action="store_true",
                      help="print one line per solver: compilations run and seconds")
    sub.add_parser("info", help="versions and usable backends")
    args = parser.parse_args(argv)
    if args.command == "warmup":
        return _warmup(args, warm)
    if args.command == "demo":
        from solvers._demo import run_demo, select_modules

        try:
            select_modules(args.only)
        except ValueError as exc:
            demo.error(str(exc))  # exit status 2, like any other bad argument
        return run_demo(quick=not args.full, only=args.only)
    if args.command == "info":
        return _info()
    parser.print_help()
    return 0


if __name__ == "__main__":
    sys.exit(main())
