"""Optimal transport: Gaussian closed forms (Bures–Wasserstein) and LightSB bridges.

Names load lazily from their modules (this package is shared by the LightSB and the
associative-memory work: each adds its names to ``_EXPORTS`` and nothing else here).
"""
from .._lazy import lazy_exports

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
    "bridge_from_parameters": "solvers.transport.lightsb",
}

__all__ = sorted(_EXPORTS) + ["benchmark"]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, ("benchmark",))
