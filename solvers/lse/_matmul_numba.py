"""Numba fold of one BLAS tile into running row partials, for :func:`logsumexp_matmul`.

numpy's matmul does the tile product; the fused kernel then does max, exp and sum in one
pass over the tile per row (instead of four numpy temporaries), in parallel over rows.
"""
import math

import numpy as np

from .._lib.numba_config import jit_parallel, prange


@jit_parallel
def _fold_tile(tile, log_b, has_b, c0, row_max, row_sum, r0):
    rows, cols = tile.shape
    for i in prange(rows):
        mx = row_max[r0 + i]
        tile_mx = -math.inf
        for j in range(cols):
            x = tile[i, j] + (log_b[c0 + j] if has_b else 0.0)
            if x > tile_mx:
                tile_mx = x
        new_mx = max(mx, tile_mx)
        if new_mx == -math.inf:
            continue
        acc = 0.0
        for j in range(cols):
            x = tile[i, j] + (log_b[c0 + j] if has_b else 0.0)
            acc += math.exp(x - new_mx)
        scale = 0.0 if mx == -math.inf else math.exp(mx - new_mx)
        row_sum[r0 + i] = row_sum[r0 + i] * scale + acc
        row_max[r0 + i] = new_mx


def lse_matmul_numba(A, B, log_b, block_size):
    n, m = A.shape[0], B.shape[1]
    row_max = np.full(n, -np.inf)
    row_sum = np.zeros(n)
    has_b = log_b is not None
    lb = log_b if has_b else np.zeros(1, dtype=A.dtype)
    tile = np.empty((min(block_size, n), min(block_size, m)), dtype=A.dtype)
    for r0 in range(0, n, block_size):
        A_rows = A[r0:r0 + block_size]
        for c0 in range(0, m, block_size):
            B_cols = B[:, c0:c0 + block_size]
            t = tile[:A_rows.shape[0], :B_cols.shape[1]]
            np.matmul(A_rows, B_cols, out=t)
            _fold_tile(t, lb, has_b, c0, row_max, row_sum, r0)
    with np.errstate(divide="ignore"):
        out = np.log(row_sum) + row_max
    return out.astype(A.dtype, copy=False)
