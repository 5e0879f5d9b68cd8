"""SciPy's own logsumexp test suite, run against solvers (see conftest.py)."""
