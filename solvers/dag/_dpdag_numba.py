"""Numba kernels for batched DP-DAG sampling (imported lazily by :mod:`.dpdag`).

Each sample ``b`` has its own counter-based random stream (SplitMix64 seeded with
``seed + b * GOLDEN``), so the ``prange`` loop gives the same DAGs for a seed whatever the
number of threads. Per sample: ``d`` Gumbel keys for the order (``theta_i + g_i`` sorted
in descending order), then one 53-bit uniform per *allowed* pair (``i`` before ``j``),
compared with the integer threshold ``floor(q_ij 2^53)``; pairs against the order are never
drawn, which halves the work.
"""
import numpy as np

from .._lib.numba_config import jit, jit_parallel, prange

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)
_S11 = np.uint64(11)
_TWO53_INV = 1.0 / 9007199254740992.0


@jit
def _next(state):
    """SplitMix64: returns (new state, 64 random bits)."""
    state = state + _GOLDEN
    z = state
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return state, z ^ (z >> _S31)


@jit
def _order_one(theta, state, keys):
    d = theta.shape[0]
    for i in range(d):
        state, z = _next(state)
        u = (np.float64(z >> _S11) + 0.5) * _TWO53_INV  # in (0, 1)
        keys[i] = -(theta[i] - np.log(-np.log(u)))  # negated: ascending argsort
    return state, np.argsort(keys)


@jit_parallel
def sample_dags(theta, thresholds, n, seed, out, orders):
    """Fill ``out`` (n, d, d) uint8 (zeroed) with DAGs and ``orders`` (n, d) int64.

    theta : (d,) float64 order log-weights; thresholds : (d, d) uint64 ``floor(q 2^53)``.
    """
    d = theta.shape[0]
    base = np.uint64(seed)
    for b in prange(n):
        state = base + np.uint64(b) * _GOLDEN
        state, _ = _next(state)  # decorrelate neighbouring streams
        keys = np.empty(d)
        state, order = _order_one(theta, state, keys)
        for k in range(d):
            orders[b, k] = order[k]
        for k in range(d - 1):
            i = order[k]
            for m in range(k + 1, d):
                j = order[m]
                state, z = _next(state)
                if (z >> _S11) < thresholds[i, j]:
                    out[b, i, j] = 1


@jit_parallel
def dags_from_orders(orders, thresholds, seed, out):
    """Edges for given orders (used with the Sinkhorn order sampler): same edge stream."""
    n, d = orders.shape
    base = np.uint64(seed)
    for b in prange(n):
        state = base + np.uint64(b) * _GOLDEN
        state, _ = _next(state)
        for k in range(d - 1):
            i = orders[b, k]
            for m in range(k + 1, d):
                j = orders[b, m]
                state, z = _next(state)
                if (z >> _S11) < thresholds[i, j]:
                    out[b, i, j] = 1
