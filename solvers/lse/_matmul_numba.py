"""Numba fold of BLAS tiles into running row partials, for :func:`logsumexp_matmul`.

numpy's matmul computes a ``rows x cols`` tile of ``A @ B``; the row kernel of
:func:`solvers.logsumexp` (``fold_rows``, serial) then folds each tile row into the row's
online partial ``(max, tie weight, rest sum)``. A row whose
stable result is not finite (NaN in ``A``, ``inf`` in ``B`` or ``log_b``, every column
dropped) is recomputed densely for that row, which gives exactly SciPy's special values on
the materialised ``A @ B + log_b``.

Parallelism is one level at a time, never both:

- enough work and more than one Numba thread: blocks of rows are handed to that many
  Python threads, each computing its own tiles with BLAS held to one thread
  (threadpoolctl) and folding them with the serial kernel (both release the GIL);
- otherwise one thread walks the tiles, with BLAS threaded as the user configured it.

Tiles are sized from the caches: a tile row spans an eighth of L1 (the max and the sums
passes re-read it from L1) and a tile half of L2 (it is folded while still in L2). The
tiles depend on the sizes only, never on the thread count, and the threads share whole row
blocks, so the result has the same bits on any number of threads (BLAS on one thread; a
threaded BLAS in the serial walk may round differently, within round-off).
"""
import functools
import math
import threading
from concurrent.futures import ThreadPoolExecutor

import numba
import numpy as np

from .._lib.numba_config import jit
from ._cpu import cache_sizes, floor_pow2
from ._lse_numba import _finish_lane, fold_rows

# Below this many entries of A @ B the thread start-up (~0.1 ms) outweighs the gain.
_PARALLEL_MIN_ENTRIES = 1 << 17
# Row blocks wanted (when the rows allow): enough for 16 threads to share dynamically, so
# a slow or busy core does not hold the others up.
_ROW_BLOCKS = 64


@jit
def _finish_rows(row_max, row_m, row_s, return_sign, out):
    """log1p form per row; NaN marks rows for the dense fallback. ``return_sign`` is a
    runtime bool (False): a literal would compile a second ``_finish_lane``."""
    for i in range(out.shape[0]):
        out[i], _ = _finish_lane(row_max[i], row_m[i], row_s[i], return_sign)


def tile_shape(n, m, itemsize, block_size=None):
    """(rows, cols) of one tile: at most ``block_size`` square when given, else from the
    caches; at least _ROW_BLOCKS row blocks (of 8 rows or more) for the threads to share.
    Depends on the sizes only, never on the thread count: BLAS rounds a product entry
    differently for other block shapes, and the same blocks give the same bits."""
    if block_size is not None:
        rows, cols = block_size, block_size
    else:
        l1, l2 = cache_sizes()
        cols = max(floor_pow2(l1 // (8 * itemsize)), 64)
        rows = max(floor_pow2(l2 // (2 * itemsize * cols)), 8)
    rows = min(rows, max(math.ceil(n / _ROW_BLOCKS), 8))
    return max(min(rows, n), 1), max(min(cols, m), 1)


def _workers(n, m):
    """Threads for the row-parallel mode (1: the serial walk with the user's BLAS)."""
    if n < 2 or n * m < _PARALLEL_MIN_ENTRIES:
        return 1
    return max(min(numba.get_num_threads(), n), 1)


class _Tiles:
    """One pass over row blocks ``rows`` at a time, for any number of worker threads."""

    def __init__(self, A, B, log_b, rows, cols):
        self.A, self.B, self.log_b = A, B, log_b
        self.rows, self.cols = rows, cols
        n = A.shape[0]
        self.row_max = np.full(n, -np.inf)
        self.row_m = np.zeros(n)
        self.row_s = np.zeros(n)
        # the (rows, 1) views fold_rows takes (the row kernel of logsumexp, so one compiled
        # kernel serves both)
        self._partials = tuple(v.reshape(n, 1) for v in (self.row_max, self.row_m, self.row_s))
        self._starts = iter(range(0, n, rows))
        self._lock = threading.Lock()

    def _next_start(self):
        with self._lock:
            return next(self._starts, None)

    def work(self):
        """Take row blocks until none is left; each is folded over all column tiles."""
        A, B, log_b, cols = self.A, self.B, self.log_b, self.cols
        m = B.shape[1]
        tile = np.empty((self.rows, cols), dtype=A.dtype)
        while (r0 := self._next_start()) is not None:
            A_rows = A[r0:r0 + self.rows]
            t_rows = tile[:A_rows.shape[0]]
            for c0 in range(0, m, cols):
                c1 = min(c0 + cols, m)
                t = t_rows[:, :c1 - c0]
                np.matmul(A_rows, B[:, c0:c1], out=t)
                if log_b is not None:
                    with np.errstate(invalid="ignore"):
                        t += log_b[c0:c1]
                # the tile is the worker's whole buffer (one C-contiguous layout, hence one
                # compiled version); a tile row is folded as one chunk
                fold_rows(t_rows, None, *self._partials, c1 - c0, c1 - c0, 0,
                          t_rows.shape[0], r0, False)


class _SingleThreadBLAS:
    """BLAS held to one thread while any caller is inside the row-parallel region; the last
    one out restores the user's setting, so calls from several user threads nest safely."""

    _lock = threading.Lock()
    _inside = 0
    _limiter = None

    def __enter__(self):
        cls = type(self)
        with cls._lock:
            if cls._inside == 0:
                cls._limiter = _blas_controller().limit(limits=1, user_api="blas")
            cls._inside += 1

    def __exit__(self, *exc):
        cls = type(self)
        with cls._lock:
            cls._inside -= 1
            if cls._inside == 0:
                cls._limiter.restore_original_limits()
                cls._limiter = None


@functools.cache
def _blas_controller():
    """threadpoolctl's view of the loaded BLAS libraries, built once (~0.5 ms)."""
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


def _dense_rows(A, B, log_b, rows, chunk):
    """SciPy's special values for ``rows``: the naive sum over the materialised rows, in
    chunks of ``chunk`` rows so that the fallback never builds all of ``A @ B``."""
    out = np.empty(rows.shape[0])
    for i0 in range(0, rows.shape[0], chunk):
        idx = rows[i0:i0 + chunk]
        with np.errstate(all="ignore"):
            dense = A[idx] @ B if log_b is None else A[idx] @ B + log_b
            out[i0:i0 + chunk] = np.log(np.sum(np.exp(dense.astype(np.float64)), axis=1))
    return out


def lse_matmul_numba(A, B, log_b, block_size, xp=None):
    """Row-wise ``logsumexp(A @ B + log_b)`` tile by tile (numpy in and out)."""
    n, m = A.shape[0], B.shape[1]
    rows, cols = tile_shape(n, m, A.dtype.itemsize, block_size)
    return lse_matmul_tiles(A, B, log_b, rows, cols, _workers(n, m))


def lse_matmul_tiles(A, B, log_b, rows, cols, workers):
    """The tile walk with ``rows x cols`` tiles on ``workers`` threads (1: serial, BLAS as
    configured). The same tiles give the same bits on any number of workers (with BLAS on
    one thread: a threaded BLAS splits a product its own way)."""
    n, m = A.shape[0], B.shape[1]
    workers = max(min(workers, math.ceil(n / rows)), 1)
    tiles = _Tiles(A, B, log_b, rows, cols)
    if workers == 1:
        tiles.work()
    else:
        with _SingleThreadBLAS(), ThreadPoolExecutor(workers) as pool:
            for future in [pool.submit(tiles.work) for _ in range(workers)]:
                future.result()
    out = np.empty(n)
    _finish_rows(tiles.row_max, tiles.row_m, tiles.row_s, False, out)
    bad = np.flatnonzero(~np.isfinite(out))
    if bad.size:
        out[bad] = _dense_rows(A, B, log_b, bad, max(rows * cols // max(m, 1), 1))
    return out.astype(A.dtype, copy=False)
