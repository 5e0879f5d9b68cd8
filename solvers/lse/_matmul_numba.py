"""Numba fold of one BLAS tile into running row partials, for :func:`logsumexp_matmul`.

numpy's matmul does the tile product; the kernel then folds each tile row into the row's
online partial ``(max, tie weight, rest sum)`` with the same chunk routines and vectorised
``fast_exp`` as :func:`solvers.logsumexp`, in parallel over rows. A row whose stable result
is not finite (NaN in ``A``, ``inf`` in ``B`` or ``log_b``, every column dropped) is
recomputed densely for that one row, which gives exactly SciPy's special values on the
materialised ``A @ B + log_b`` (issue 17).
"""

import numpy as np

from .._lib.numba_config import jit, jit_parallel, prange
from ._lse_numba import _chunk_max, _chunk_sums, _finish_lane, _rescale


@jit_parallel
def _fold_tile(tile, row_max, row_m, row_s, r0):
    rows = tile.shape[0]
    for i in prange(rows):
        x = tile[i]
        mx, m, s = _rescale(row_max[r0 + i], row_m[r0 + i], row_s[r0 + i],
                            _chunk_max(x, None))
        dm, ds = _chunk_sums(x, None, mx)
        row_max[r0 + i] = mx
        row_m[r0 + i] = m + dm
        row_s[r0 + i] = s + ds


@jit
def _finish_rows(row_max, row_m, row_s, out):
    """log1p form per row; NaN marks rows for the dense fallback."""
    for i in range(out.shape[0]):
        out[i], _ = _finish_lane(row_max[i], row_m[i], row_s[i], False)


def lse_matmul_numba(A, B, log_b, block_size, xp=None):
    """Row-wise ``logsumexp(A @ B + log_b)`` in ``block_size`` tiles (numpy in and out)."""
    n, m = A.shape[0], B.shape[1]
    row_max = np.full(n, -np.inf)
    row_m = np.zeros(n)
    row_s = np.zeros(n)
    tile = np.empty((min(block_size, n), min(block_size, m)), dtype=A.dtype)
    for r0 in range(0, n, block_size):
        A_rows = A[r0:r0 + block_size]
        for c0 in range(0, m, block_size):
            B_cols = B[:, c0:c0 + block_size]
            t = tile[:A_rows.shape[0], :B_cols.shape[1]]
            np.matmul(A_rows, B_cols, out=t)
            if log_b is not None:
                with np.errstate(invalid="ignore"):
                    t += log_b[c0:c0 + block_size]
            _fold_tile(t, row_max, row_m, row_s, r0)
    out = np.empty(n)
    _finish_rows(row_max, row_m, row_s, out)
    bad = np.flatnonzero(~np.isfinite(out))
    if bad.size:
        with np.errstate(all="ignore"):
            dense = A[bad] @ B if log_b is None else A[bad] @ B + log_b
            out[bad] = np.log(np.sum(np.exp(dense.astype(np.float64)), axis=1))
    return out.astype(A.dtype, copy=False)
