"""Slow, obvious reference implementations every fast kernel is compared against.

Written for clarity, not speed: plain Python loops or direct formulas on numpy, no tricks.
"""
import math

import numpy as np


def logsumexp_loop(values, weights=None):
    """log(sum w exp(v)) of a 1-D sequence with Python floats and math.fsum at 1e-300 scale.

    Uses exact shifting by the max and ``math.fsum`` so it is accurate to the last bit
    for finite input; returns (value, sign).
    """
    values = [float(v) for v in values]
    weights = [1.0] * len(values) if weights is None else [float(w) for w in weights]
    pairs = [(v, w) for v, w in zip(values, weights) if w != 0.0]
    if not pairs:
        return -math.inf, 0.0
    mx = max(v for v, _ in pairs)
    total = math.fsum(w * math.exp(v - mx) for v, w in pairs)
    if total == 0.0:
        return -math.inf, 0.0
    return math.log(abs(total)) + mx, math.copysign(1.0, total)


def logsumexp_matmul_dense(A, B):
    """The materialised computation: build A @ B, then a row-wise log-sum-exp."""
    C = A @ B
    mx = C.max(axis=1, keepdims=True)
    return (np.log(np.exp(C - mx).sum(axis=1, keepdims=True)) + mx)[:, 0]
