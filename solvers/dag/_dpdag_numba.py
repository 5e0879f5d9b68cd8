"""Numba kernels for batched DP-DAG sampling (the kernel-table entry ``sample_dags``).

Each sample ``b`` has its own counter-based random stream (the shared SplitMix64 of
:mod:`solvers._lib._prng`, stream ``b`` of the run's ``seed``), so the ``prange`` loop
gives the same DAGs for a seed whatever the number of threads. Per sample: ``d`` Gumbel keys
for the order (``theta_i + g_i`` sorted
in descending order), then one 53-bit uniform per *allowed* pair (``i`` before ``j``),
compared with the integer threshold ``floor(q_ij 2^53)``; pairs against the order are never
drawn, which halves the work.
"""
import numpy as np

from .._lib._prng import next_u64, next_uniform, stream_start
from .._lib.numba_config import jit, jit_parallel, prange

_S11 = np.uint64(11)


@jit(inline='always')
def _argsort(keys):
    """Indices that sort ``keys`` ascending (insertion sort: O(d^2), like the edge draws
    that follow; np.argsort costs about 1 s of compilation on a first call). The keys
    are continuous draws, so ties (where sorts may differ) have probability zero."""
    d = keys.shape[0]
    order = np.empty(d, dtype=np.int64)
    for i in range(d):
        k = keys[i]
        j = i
        while j > 0 and keys[order[j - 1]] > k:
            order[j] = order[j - 1]
            j -= 1
        order[j] = i
    return order


@jit(inline='always')
def _edges(b, order, thresholds, state, out):
    d = order.shape[0]
    for k in range(d - 1):
        i = order[k]
        for m in range(k + 1, d):
            j = order[m]
            state, z = next_u64(state)
            # branch-free store: the comparison is a coin flip the predictor cannot learn
            out[b, i, j] = (z >> _S11) < thresholds[i, j]


# The helpers above are inlined (at Numba's IR level) into the two range functions below,
# which are the parallel kernels' tasks (one sample each) and the serial passes (the whole
# range, called from Python): every extra level of compiled calls would be optimised again
# by its caller on a first call.

@jit
def _dags_range(theta, thresholds, base, out, orders, b0, b1):
    """Samples b0:b1 into ``out`` (n, d, d) uint8 (zeroed) and ``orders`` (n, d) int64:
    Gumbel keys for the order, then the edges it allows."""
    d = theta.shape[0]
    keys = np.empty(d)
    for b in range(b0, b1):
        state = stream_start(base, b)
        for i in range(d):
            state, u = next_uniform(state)  # in (0, 1)
            keys[i] = -(theta[i] - np.log(-np.log(u)))  # negated: ascending argsort
        order = _argsort(keys)
        for k in range(d):
            orders[b, k] = order[k]
        _edges(b, order, thresholds, state, out)


@jit
def _edges_range(orders, thresholds, base, out, b0, b1):
    """Edges of samples b0:b1 for given orders (the Sinkhorn order sampler): the same
    per-sample streams as :func:`_dags_range`."""
    for b in range(b0, b1):
        _edges(b, orders[b], thresholds, stream_start(base, b), out)


@jit_parallel
def sample_dags_parallel(theta, thresholds, n, seed, out, orders):
    """:func:`_dags_range` over all ``n`` samples in parallel (theta : (d,) float64 order
    log-weights; thresholds : (d, d) uint64 ``floor(q 2^53)``)."""
    base = np.uint64(seed)
    for b in prange(n):
        # an int64 index, as in the serial pass: Numba types a prange index uint64 inside
        # the parallel body, which would compile the task a second time
        k = np.int64(b)
        _dags_range(theta, thresholds, base, out, orders, k, k + 1)


@jit_parallel
def dags_from_orders_parallel(orders, thresholds, seed, out):
    """:func:`_edges_range` over all samples in parallel."""
    base = np.uint64(seed)
    for b in prange(orders.shape[0]):
        k = np.int64(b)     # as in sample_dags_parallel
        _edges_range(orders, thresholds, base, out, k, k + 1)


def sample_dags_serial(theta, thresholds, n, seed, out, orders):
    """Serial twin of :func:`sample_dags_parallel` (same streams, same output)."""
    _dags_range(theta, thresholds, np.uint64(seed), out, orders, 0, n)


def dags_from_orders_serial(orders, thresholds, seed, out):
    """Serial twin of :func:`dags_from_orders_parallel`."""
    _edges_range(orders, thresholds, np.uint64(seed), out, 0, orders.shape[0])


#: below this many pair draws in one call the serial kernel runs (thread start-up and
#: barrier costs dominate small batches; measured on 2 busy cores)
PARALLEL_MIN_PAIRS = 2_000_000


def sample_dags(theta, thresholds, n, seed, out, orders):
    d = theta.shape[0]
    if n * d * (d - 1) // 2 >= PARALLEL_MIN_PAIRS:
        sample_dags_parallel(theta, thresholds, n, seed, out, orders)
    else:
        sample_dags_serial(theta, thresholds, n, seed, out, orders)


def dags_from_orders(orders, thresholds, seed, out):
    n, d = orders.shape
    if n * d * (d - 1) // 2 >= PARALLEL_MIN_PAIRS:
        dags_from_orders_parallel(orders, thresholds, seed, out)
    else:
        dags_from_orders_serial(orders, thresholds, seed, out)


def sample_model(model, n, rng, be=None):
    """``n`` DAGs of a :class:`~solvers.dag.dpdag.DPDAG` (numpy parameters) with the
    compiled sampler: returns ``(A bool (n, d, d), orders (n, d))``. Edge probabilities
    enter as integer thresholds ``floor(q 2^53)``; Gumbel-Sinkhorn orders come from the
    model's own (generic) order sampler."""
    d = model.d
    out = np.zeros((n, d, d), dtype=np.uint8)
    seed = int(rng.integers(2**63))
    q = np.asarray(model.edge_probs, dtype=np.float64)
    thresholds = np.floor(q * 2.0**53).astype(np.uint64)
    if model.order == "softsort":
        orders = np.empty((n, d), dtype=np.int64)
        sample_dags(np.asarray(model.order_logits, dtype=np.float64), thresholds, n, seed,
                    out, orders)
    else:
        orders = np.ascontiguousarray(model.sample_orders(n, rng), dtype=np.int64)
        dags_from_orders(orders, thresholds, seed, out)
    return out.view(np.bool_), orders
