"""Root conftest: doctest collection over solvers/ skips the CuPy kernel modules, which
import cupy and only run on a GPU machine (their code is exercised by gpu/check.py), and the
dask modules where dask is not installed (the package itself never needs it)."""
import importlib.util

collect_ignore_glob = ["solvers/*/_*_cupy.py", "benchmarks/*", "examples/*", "gpu/*", "docs/*"]

try:
    _have_dask = importlib.util.find_spec("dask") is not None
except (ImportError, ValueError):
    _have_dask = False
if not _have_dask:
    collect_ignore_glob += ["solvers/*/_*dask.py"]
