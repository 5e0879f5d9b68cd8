"""Dense associative memories: Gaussians in the Wasserstein geometry, and vectors.

- :class:`GaussianMemory`: stores Gaussians, retrieves them from perturbed query Gaussians
  by Gibbs-weighted Bures–Wasserstein barycenter steps (full, diagonal and commuting
  paths, batched over queries).
- :class:`VectorMemory`: the modern Hopfield network (vector DAM), the degenerate case.
- :func:`synthetic_patterns`, :func:`perturb`, :func:`retrieval_rate`: the synthetic
  retrieval protocol.

Stored patterns :math:`X_i = N(\\mu_i, \\Sigma_i)`, state :math:`\\xi = N(m, \\Omega)`:

.. math::

   E(\\xi) = -\\frac{1}{\\beta}\\log\\sum_i e^{-\\beta W_2^2(\\xi, X_i)}, \\qquad
   p_i = \\operatorname{softmax}_i(-\\beta W_2^2(\\xi, X_i)),

   m^+ = \\sum_i p_i \\mu_i, \\qquad \\Omega^+ = A\\,\\Omega\\,A, \\quad
   A = \\sum_i p_i A_i, \\quad
   A_i = \\Omega^{-1/2}(\\Omega^{1/2}\\Sigma_i\\Omega^{1/2})^{1/2}\\Omega^{-1/2}.

With the weights frozen a step is one Álvarez-Esteban barycenter step, so
:math:`\\sum_i p_i W_2^2(\\xi^+, X_i) \\le \\sum_i p_i W_2^2(\\xi, X_i)`; with the Gibbs
variational formula :math:`E(\\xi) = \\min_q \\sum_i q_i W_2^2(\\xi, X_i) + \\beta^{-1}
\\sum_i q_i \\log q_i + \\beta^{-1}\\log N` this gives :math:`E(\\xi^+) \\le E(\\xi)`: the
energy never increases along retrieval. Fixed points are barycenters weighted by their own
Gibbs weights.

When all covariances share an eigenbasis (diagonal ones, say),
:math:`W_2^2 = \\|m - \\mu_i\\|^2 + \\|\\sqrt{\\lambda} - \\sqrt{\\lambda_i}\\|^2` and the step is
the vector DAM on :math:`z = (m, \\sqrt{\\lambda})`: an :math:`O(Nd)` fast path.

The code: :mod:`._retrieval` (geometries, the batched loop, results), :mod:`.vector`
(:class:`VectorMemory`), :mod:`.gaussian` (:class:`GaussianMemory`), :mod:`._dask`
(retrieval over chunks of dask queries), :mod:`.synthetic` (the retrieval protocol).
"""
from .._lazy import lazy_exports

_EXPORTS = {
    "GaussianMemory": "solvers.memory.gaussian",
    "VectorMemory": "solvers.memory.vector",
    "synthetic_patterns": "solvers.memory.synthetic",
    "perturb": "solvers.memory.synthetic",
    "retrieval_rate": "solvers.memory.synthetic",
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
