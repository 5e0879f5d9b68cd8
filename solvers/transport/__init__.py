"""Optimal transport: Gaussian closed forms (Bures–Wasserstein) and LightSB bridges."""
from .bures import sqrtm_psd, bures_wasserstein_distance

__all__ = ["sqrtm_psd", "bures_wasserstein_distance"]
