r"""Applications of Safe-KL stochastic LogSumExp: KL-DRO and semi-dual entropic OT.

- :func:`kl_dro`: distributionally robust regression / classification against a KL ball,
  in its penalised dual form :math:`\min_\theta \lambda \log \frac1n \sum_i
  e^{\ell_i(\theta)/\lambda} + \frac{\alpha}{2}\|\theta\|^2` (the worst case over
  :math:`Q` of :math:`\mathbb{E}_Q \ell - \lambda\,\mathrm{KL}(Q\|P_n)`), solved by the
  Safe-KL stochastic solver, the naive minibatch estimator, or full-batch L-BFGS.
- :func:`kl_dro_objective`: the exact objective and gradient (full batch).
- :func:`semidual_ot`: entropic OT from a source (sample or sampler) to a discrete target
  through the semi-dual of Genevay et al. (2016), by L-BFGS, averaged SGD, or doubly
  stochastic Safe-KL steps over (source, target) minibatches.
- :func:`semidual_ot_objective`: the exact semi-dual value and gradient.
"""
from ._kl_dro import kl_dro, kl_dro_objective, kl_dro_losses, dro_dataset
from ._semidual_ot import semidual_ot, semidual_ot_objective

__all__ = ["kl_dro", "kl_dro_objective", "kl_dro_losses", "dro_dataset", "semidual_ot",
           "semidual_ot_objective"]
