"""Dense associative memories: Gaussians in the Wasserstein geometry, and vectors.

- :class:`GaussianMemory`: stores Gaussians, retrieves them from perturbed query Gaussians
  by Gibbs-weighted Bures–Wasserstein barycenter steps (full, diagonal and commuting
  paths, batched over queries).
- :class:`VectorMemory`: the modern Hopfield network (vector DAM), the degenerate case.
- :func:`synthetic_patterns`, :func:`perturb`: the synthetic retrieval protocol.
"""
from .dam import GaussianMemory, VectorMemory
from .synthetic import synthetic_patterns, perturb, retrieval_rate

__all__ = ["GaussianMemory", "VectorMemory", "synthetic_patterns", "perturb",
           "retrieval_rate"]
