"""Optimization: the SciPy-style :func:`minimize` router and the CBO family."""
from .._lazy import lazy_exports

_EXPORTS = {
    "minimize": "solvers.optimize._minimize",
    "register_method": "solvers.optimize._minimize",
    "available_methods": "solvers.optimize._minimize",
}

__all__ = ["minimize", "register_method", "available_methods"]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
