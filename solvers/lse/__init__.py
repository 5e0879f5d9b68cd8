"""Log-sum-exp primitives (the core every solver uses) and Safe-KL stochastic LogSumExp.

- :func:`logsumexp`, :func:`softmax`, :func:`log_softmax`: SciPy's semantics on any Array
  API namespace, with a Numba fast path for numpy input.
- :func:`logsumexp_matmul`: ``logsumexp(A @ B, axis=1)`` in blocks, never building the
  ``n x m`` matrix.
- :func:`logsumexp_partial` / :func:`logsumexp_merge`: exact (max, scaled sum) partials of
  disjoint chunks and their merge.
"""
from .._lazy import lazy_exports

_EXPORTS = {
    "logsumexp": "solvers.lse.logsumexp",
    "softmax": "solvers.lse.logsumexp",
    "log_softmax": "solvers.lse.logsumexp",
    "logsumexp_partial": "solvers.lse.logsumexp",
    "logsumexp_merge": "solvers.lse.logsumexp",
    "logsumexp_matmul": "solvers.lse.matmul",
}

__all__ = ["logsumexp", "softmax", "log_softmax", "logsumexp_partial", "logsumexp_merge",
           "logsumexp_matmul"]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
