"""solvers: log-sum-exp / Gibbs-weighted solvers, called like SciPy.

Public names are loaded lazily from their areas on first access, so ``import solvers``
stays light (it never imports cupy, and imports numba kernels only when they run).
"""
from ._lazy import lazy_exports

__version__ = "0.1.0.dev0"

# public name -> module that defines it. Each area adds its names here.
_EXPORTS = {
    # core log-sum-exp primitives
    "logsumexp": "solvers.lse",
    "softmax": "solvers.lse",
    "log_softmax": "solvers.lse",
    "logsumexp_matmul": "solvers.lse",
    "logsumexp_partial": "solvers.lse",
    "logsumexp_merge": "solvers.lse",
    # Safe-KL stochastic LogSumExp
    "safe_logsumexp": "solvers.lse.safe_kl",
    "minimize_logsumexp": "solvers.lse.safe_kl",
    "kl_dro": "solvers.lse",
    "semidual_ot": "solvers.lse",
    # optimization
    "minimize": "solvers.optimize",
    "minimize_cbo": "solvers.optimize.cbo",
    # transport
    "schrodinger_bridge": "solvers.transport.lightsb",
    # associative memory
    "GaussianMemory": "solvers.memory",
    "VectorMemory": "solvers.memory",
    # DAG learning
    "learn_dag": "solvers.dag",
    # QUBO
    "qubo_moments": "solvers.qubo",
    "scale_qubos": "solvers.qubo",
    "minimize_qubo": "solvers.qubo",
}

_SUBMODULES = ("lse", "optimize", "transport", "memory", "dag", "qubo")

__all__ = sorted(_EXPORTS) + list(_SUBMODULES)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, _SUBMODULES)
