"""Optimization: the SciPy-style :func:`minimize` router and the CBO family."""
from ._minimize import minimize, register_method, available_methods

__all__ = ["minimize", "register_method", "available_methods"]
