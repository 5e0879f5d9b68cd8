"""Root conftest: doctest collection over solvers/ skips the CuPy kernel modules, which
import cupy and only run on a GPU machine (their code is exercised by gpu/check.py)."""
collect_ignore_glob = ["solvers/*/_*_cupy.py", "benchmarks/*", "examples/*", "gpu/*", "docs/*"]
