"""Optimal transport: Gaussian closed forms (Bures–Wasserstein) and LightSB bridges.

Names load lazily from their modules (this package is shared by the LightSB and the
associative-memory work: each adds its names to ``_EXPORTS`` and nothing else here).
"""
import importlib

_EXPORTS = {
    # Bures–Wasserstein geometry (bures.py)
    "sqrtm_psd": "solvers.transport.bures",
    "bures_wasserstein_distance": "solvers.transport.bures",
    "bures_wasserstein_barycenter": "solvers.transport.bures",
    "monge_map": "solvers.transport.bures",
    "weighted_monge_map": "solvers.transport.bures",
    "bures_wasserstein_cdist": "solvers.transport.bures",
    # entropic Gaussian OT (gaussian_entropic.py)
    "entropic_gaussian_plan": "solvers.transport.gaussian_entropic",
    # LightSB (lightsb.py)
    "schrodinger_bridge": "solvers.transport.lightsb",
    "SchrodingerBridgeResult": "solvers.transport.lightsb",
}

__all__ = sorted(_EXPORTS) + ["benchmark"]


def __getattr__(name):
    if name == "benchmark":
        return importlib.import_module("solvers.transport.benchmark")
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'solvers.transport' has no attribute {name!r}")
    try:
        value = getattr(importlib.import_module(module), name)
    except (ModuleNotFoundError, AttributeError) as exc:
        raise AttributeError(f"solvers.transport.{name} is not available yet ({exc})") from None
    globals()[name] = value
    return value


def __dir__():
    return __all__
