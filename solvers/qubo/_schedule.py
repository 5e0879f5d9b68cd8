r"""The default temperature range of the annealer, from the problem's own local fields.

Flipping bit ``i`` changes the energy by ``(1 - 2 x_i) h_i``, ``h = a + W x``; the sizes
``|h_i|`` are the energy steps the chain meets. They are sampled, not bounded from the
coefficients:

- **hot end**: ``|h|`` over :data:`N_STATES` uniform random states (the high-temperature
  phase). ``beta_hot`` is the inverse temperature at which an uphill move of these sizes is
  accepted with probability :data:`HOT_ACCEPTANCE` on average, ``mean exp(-beta |h|)``.
- **cold end**: the same states after :data:`GREEDY_SWEEPS` greedy sweeps (at or near
  1-flip local minima, where annealing ends). ``beta_cold`` is the inverse temperature at
  which the expected number of accepted uphill moves per sweep of one read,
  ``sum_i exp(-beta |h_i|)`` over the nonzero fields, is :data:`COLD_UPHILL`. The smallest
  nonzero steps dominate that sum, so ``beta_cold ~ ln(k / COLD_UPHILL) / d_min`` where
  ``d_min`` is the smallest nonzero energy step and ``k`` the number of bits that have it.

Zero fields (free moves on plateaus) are left out of both sums. The states are drawn from a
fixed seed, so the range is a function of the problem alone.
"""
import math

import numpy as np

from .._lib import to_host

#: random states whose fields are sampled
N_STATES = 8
#: greedy (zero-temperature) sweeps that bring them to the low-energy landscape
GREEDY_SWEEPS = 16
#: mean acceptance probability of an uphill move at a random state, at ``beta_hot``
HOT_ACCEPTANCE = 0.3
#: expected number of accepted uphill moves per sweep at a local minimum, at ``beta_cold``
COLD_UPHILL = 0.01
#: fields are subsampled to this many values before the beta equations are solved
_MAX_FIELDS = 50_000


def sample_fields(make, n):
    """``|h|`` at random states and after greedy sweeps, as host arrays.

    ``make(X0)`` builds chains for the initial states ``X0`` (int8, ``(N_STATES, n)``).
    """
    X0 = np.random.default_rng(0).integers(0, 2, size=(N_STATES, n)).astype(np.int8)
    chains = make(X0)
    hot = _abs_fields(chains)
    chains.sweep(np.full(GREEDY_SWEEPS, np.inf))
    return hot, _abs_fields(chains)


def _abs_fields(chains):
    X, _ = chains.current()
    return np.abs(to_host(chains.fields_of(X))).ravel()


def beta_range_from_fields(hot, cold):
    """``(beta_hot, beta_cold)`` from sampled field sizes (see the module docstring)."""
    scale = float(np.max(hot)) if hot.size else 0.0
    if not scale > 0.0:
        return 1.0, 1.0
    tiny = 1e-9 * scale  # round-off of the incremental fields, not a real step
    hot, cold = hot[hot > tiny], cold[cold > tiny]
    beta_hot = _solve(*_compress(hot), HOT_ACCEPTANCE * hot.size)
    if cold.size == 0:
        return beta_hot, beta_hot
    beta_cold = _solve(*_compress(cold), COLD_UPHILL * N_STATES)
    return beta_hot, max(beta_cold, beta_hot)


def _compress(values):
    """``(values, weights)`` standing for the same sums: distinct values with their counts
    when there are few (integer weights), else every k-th sorted value with weight k."""
    distinct, counts = np.unique(values, return_counts=True)
    if distinct.size <= _MAX_FIELDS:
        return distinct, counts.astype(np.float64)
    k = values.size // _MAX_FIELDS + 1
    kept = np.sort(values)[::k]
    return kept, np.full(kept.size, values.size / kept.size)


def _solve(values, weights, total):
    """The ``beta`` with ``sum weights * exp(-beta * values) = total`` (bisection on
    ``log beta``; the sum decreases from ``sum weights`` to 0)."""
    lo = math.log(1e-6 / float(values[-1]))
    hi = math.log(1e3 / float(values[0]))
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if np.dot(weights, np.exp(-math.exp(mid) * values)) > total:
            lo = mid
        else:
            hi = mid
    return math.exp(hi)
