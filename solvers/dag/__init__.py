"""DAG learning: COSMO, DP-DAG, simulators, metrics and networkx conversion.

Convention: ``W[i, j] != 0`` is the edge ``i -> j`` (column ``j`` holds the parents of
``j``); the linear SEM is ``X = X W + noise``.

Every name loads lazily from its module on first use (``learn_dag`` imports a method's
module only when it runs), so this package imports quickly and never imports numba or
cupy.
"""
from .._lazy import lazy_exports

# public name -> module that defines it
_EXPORTS = {
    "simulate_dag": "solvers.dag.simulate",
    "simulate_weights": "solvers.dag.simulate",
    "simulate_linear_sem": "solvers.dag.simulate",
    "simulate_data": "solvers.dag.simulate",
    "SEMData": "solvers.dag.simulate",
    "shd": "solvers.dag.metrics",
    "tpr": "solvers.dag.metrics",
    "fdr": "solvers.dag.metrics",
    "f1_score": "solvers.dag.metrics",
    "auroc": "solvers.dag.metrics",
    "nhd": "solvers.dag.metrics",
    "count_accuracy": "solvers.dag.metrics",
    "is_dag": "solvers.dag.graph",
    "topological_order": "solvers.dag.graph",
    "order_mask": "solvers.dag.graph",
    "to_networkx": "solvers.dag.graph",
    "from_networkx": "solvers.dag.graph",
    "learn_dag": "solvers.dag.learn",
    "DAGResult": "solvers.dag.learn",
    "available_methods": "solvers.dag.learn",
    "check_data": "solvers.dag.learn",
    "learn_cosmo": "solvers.dag.cosmo",
    "refine_order": "solvers.dag.refine",
    "refit_parents": "solvers.dag.refine",
    "varsortability": "solvers.dag.simulate_nonlinear",
    "simulate_nonlinear_sem": "solvers.dag.simulate_nonlinear",
    "dag_to_cpdag": "solvers.dag.cpdag",
    "bootstrap": "solvers.dag.bootstrap",
    "BootstrapResult": "solvers.dag.bootstrap",
    "CPDAG": "solvers.dag.cpdag",
    "sample_dags": "solvers.dag.dpdag",
    "DPDAG": "solvers.dag.dpdag",
    "soft_sort": "solvers.dag.permutations",
    "gumbel_top_k": "solvers.dag.permutations",
    "sinkhorn": "solvers.dag.permutations",
}

__all__ = sorted([
    "simulate_dag", "simulate_weights", "simulate_linear_sem", "simulate_data", "SEMData",
    "shd", "tpr", "fdr", "f1_score", "auroc", "nhd", "count_accuracy",
    "is_dag", "topological_order", "order_mask", "to_networkx", "from_networkx",
    "learn_dag", "DAGResult", "available_methods", "check_data",
])  # the learners' building blocks (learn_cosmo, DPDAG, ...) load by name, not with *


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
