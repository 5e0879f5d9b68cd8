"""Command line: ``python -m solvers {demo, info}``."""
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
                          "times the solver call only (kernels are warmed first).")
    demo.add_argument("--full", action="store_true",
                      help="larger problems (slower) instead of the quick ones")
    demo.add_argument("--only", default=None, metavar="NAMES", help=_demo_help())
    sub.add_parser("info", help="versions and usable backends")
    args = parser.parse_args(argv)
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
