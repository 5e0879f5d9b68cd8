"""DAG learning: COSMO, DP-DAG, simulators, metrics and networkx conversion.

Convention: ``W[i, j] != 0`` is the edge ``i -> j`` (column ``j`` holds the parents of
``j``); the linear SEM is ``X = X W + noise``.

Learners load lazily (``learn_dag`` imports a method's module on first use), and so do the
DP-DAG names, so this package imports quickly and never imports numba or cupy.
"""
from .._lazy import lazy_exports
from .simulate import (simulate_dag, simulate_weights, simulate_linear_sem, simulate_data,
                       SEMData)
from .metrics import shd, tpr, fdr, f1_score, auroc, nhd, count_accuracy
from .graph import is_dag, topological_order, order_mask, to_networkx, from_networkx
from .learn import learn_dag, DAGResult, available_methods, check_data

# lazily loaded names: name -> module
_LAZY = {
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
])  # lazy names are left out so ``from solvers.dag import *`` works before they exist


__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
