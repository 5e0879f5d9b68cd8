"""Blocked ``logsumexp(A @ B, axis=1)`` that never builds the ``n x m`` matrix.

Rows of ``A`` and columns of ``B`` are taken in blocks; each block product ``A_I @ B_J``
(BLAS) is folded into a running per-row partial ``(max, scaled sum)`` and discarded, so the
peak extra memory is one ``block_rows x block_cols`` tile instead of ``n x m`` -- the idea
behind Cut Cross-Entropy, and what lets a Gibbs weighting over millions of terms run in
bounded memory.
"""
import numpy as np

from .._lib.namespace import array_namespace
from .._lib.backend import resolve_backend
from ._core_options import MATMUL_OPTIONS, validated
from ._lse_kernels import join_lazy, kernel


def _fold_block_generic(tile, row_max, row_sum, xp):
    """Fold a (rows, cols) tile into running partials (exact streaming merge)."""
    tile_max = xp.max(tile, axis=1)
    new_max = xp.maximum(row_max, tile_max)
    safe = xp.where(xp.isfinite(new_max), new_max, xp.zeros_like(new_max))
    with np.errstate(invalid="ignore", over="ignore"):
        old_scale = xp.where(row_max == -xp.inf, xp.zeros_like(row_max), xp.exp(row_max - safe))
        tile_sum = xp.sum(xp.exp(tile - xp.reshape(safe, (-1, 1))), axis=1)
    return new_max, row_sum * old_scale + tile_sum


#: tile edge of the generic (whole-array) path when ``block_size`` is None
GENERIC_BLOCK = 2048


@MATMUL_OPTIONS.entry
def logsumexp_matmul(A, B, *, log_b=None, block_size=None, backend="auto"):
    """Row-wise ``log(sum_j b_j exp((A @ B)[i, j]))`` without materialising ``A @ B``.

    Parameters
    ----------
    A : array, shape (n, k)
    B : array, shape (k, m)
    log_b : array, shape (m,), optional
        Log-weights added to each column (``-inf`` drops a column).
    block_size : int, optional
        Tile edge: peak extra memory is about ``block_size**2`` floats per thread (32 MiB
        at 2048 in float64), independent of ``n`` and ``m``. By default the Numba path
        sizes its tiles from the CPU caches (a tile row an eighth of L1, a tile half of
        L2) and the generic path uses 2048. Results depend on the tile width only at
        round-off; give ``block_size`` to get the same bits on every machine.
    backend : {"auto", "numpy", "numba", "cupy"}, optional
        ``"auto"``: Numba for numpy input (in parallel over blocks of rows with BLAS held
        to one thread per block when there is enough work and Numba has more than one
        thread, else one thread with BLAS as configured), the generic code otherwise.

    Returns
    -------
    out : array, shape (n,)
        Same dtype as ``A @ B``.

    Raises
    ------
    ValueError
        Mismatched inner dimensions, a block size below 1, or ``log_b`` of the wrong shape.

    References
    ----------
    .. [1] E. Wijmans, B. Huval, A. Hertzberg, V. Koltun, P. Krähenbühl, "Cut Your Losses in
       Large-Vocabulary Language Models", ICLR 2025 (Cut Cross-Entropy: the blocked idea).
    .. [2] M. Milakov, N. Gimelshein, "Online normalizer calculation for softmax",
       arXiv:1805.02867, 2018 (the streaming merge).

    Examples
    --------
    >>> import numpy as np
    >>> from solvers import logsumexp_matmul, logsumexp
    >>> rng = np.random.default_rng(0)
    >>> A, B = rng.normal(size=(5, 3)), rng.normal(size=(3, 7))
    >>> bool(np.allclose(logsumexp_matmul(A, B, block_size=2), logsumexp(A @ B, axis=1)))
    True
    """
    cfg = validated(MATMUL_OPTIONS, block_size=block_size, backend=backend)
    A, B, log_b = join_lazy(A, B, log_b)
    xp = array_namespace(A, B, log_b)
    be = resolve_backend(cfg.backend, xp)
    A, B, log_b = MATMUL_OPTIONS.arrays(be, A=A, B=B, log_b=log_b)
    if A.shape[1] != B.shape[0]:
        raise ValueError(f"A @ B needs A.shape[1] == B.shape[0], got {tuple(A.shape)} "
                         f"and {tuple(B.shape)}")
    xpc = be.xp
    dtype = xpc.result_type(A.dtype, B.dtype)
    A, B = xpc.astype(A, dtype, copy=False), xpc.astype(B, dtype, copy=False)
    m = B.shape[1]
    if log_b is not None:
        log_b = xpc.astype(log_b, dtype, copy=False)
        if log_b.shape[0] != m:
            raise ValueError(f"log_b must have shape ({m},), got {tuple(log_b.shape)}")
    out = kernel("lse_matmul", be, generic=_lse_matmul_generic)(A, B, log_b, cfg.block_size,
                                                                 xpc)
    return be.to_input(out)


def _lse_matmul_generic(A, B, log_b, block_size, xp):
    n, m = A.shape[0], B.shape[1]
    block_size = GENERIC_BLOCK if block_size is None else block_size
    out = []
    for r0 in range(0, n, block_size):
        A_rows = A[r0:min(r0 + block_size, n), :]  # strict: slice stops stay in bounds
        rows = A_rows.shape[0]
        row_max = xp.full((rows,), -xp.inf, dtype=A.dtype)
        row_sum = xp.zeros((rows,), dtype=A.dtype)
        for c0 in range(0, m, block_size):
            c1 = min(c0 + block_size, m)
            tile = A_rows @ B[:, c0:c1]
            if log_b is not None:
                tile = tile + xp.reshape(log_b[c0:c1], (1, -1))
            row_max, row_sum = _fold_block_generic(tile, row_max, row_sum, xp)
        with np.errstate(divide="ignore"):
            out.append(xp.log(row_sum) + row_max)
    if not out:
        return xp.zeros((0,), dtype=A.dtype)
    return xp.concat(out)
