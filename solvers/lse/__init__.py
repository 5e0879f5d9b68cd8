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
    # Safe-KL
    "safe_logsumexp": "solvers.lse.safe_kl",
    "safe_kl_terms": "solvers.lse.safe_kl",
    "minimize_logsumexp": "solvers.lse.safe_kl",
    "kl_dro": "solvers.lse._kl_dro",
    "kl_dro_objective": "solvers.lse._kl_dro",
    "kl_dro_losses": "solvers.lse._kl_dro",
    "dro_dataset": "solvers.lse._kl_dro",
    "semidual_ot": "solvers.lse._semidual_ot",
    "semidual_ot_objective": "solvers.lse._semidual_ot",
}

__all__ = ["logsumexp", "softmax", "log_softmax", "logsumexp_partial", "logsumexp_merge",
           "logsumexp_matmul",
           # Safe-KL
           "safe_logsumexp", "safe_kl_terms", "minimize_logsumexp", "kl_dro",
           "kl_dro_objective", "kl_dro_losses", "dro_dataset", "semidual_ot",
           "semidual_ot_objective"]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
