"""The log-sum-exp core gives the same bits on any number of threads.

- ``logsumexp_matmul``: the tile walk on 1, 2 and 3 worker threads is bit-identical for
  the same tiles, within round-off for other row blockings (BLAS rounds by block shape),
  against the generic twin and the dense SciPy computation within round-off, NaN / inf / -inf /
  empty / float32 included; BLAS threads are restored after the parallel region, also
  when two user threads call it at once.
- the lane passes: parallel and serial kernels, with any column block width, give the
  same bits in every mode (statistics, log-sum-exp, softmax, log_softmax); few long lanes
  cut into segments and merged match SciPy, special values included;
- in a process with two Numba threads the public functions give the same bits on one
  thread and on two (a subprocess, so that it runs whatever NUMBA_NUM_THREADS the suite
  has);
- cache sizes are read from /sys (or fall back) and give sane tiles.
"""
import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
from scipy.special import logsumexp as scipy_lse

from solvers import logsumexp, logsumexp_matmul, softmax
from solvers.lse import _cpu, _lse_numba, _matmul_numba
from solvers.lse._lse_numba import LOG_SOFTMAX, LSE, SOFTMAX, STATS

ROOT = Path(__file__).resolve().parents[1]


def _dense(A, B, log_b=None):
    with np.errstate(all="ignore"):
        C = A.astype(float) @ B.astype(float)
        return scipy_lse(C if log_b is None else C + log_b, axis=1)


def _special_problem(rng, n=300, k=5, m=1000):
    A = rng.normal(size=(n, k))
    B = rng.normal(size=(k, m)) * 3
    A[7, 2] = np.nan                        # a NaN row
    A[9] = 0.0
    log_b = rng.normal(size=m)
    log_b[::17] = -np.inf                   # dropped columns
    log_b[500] = np.inf                     # every row with a finite product: +inf
    return A, B, log_b


def _walk(A, B, log_b, rows, cols, workers):
    with np.errstate(all="ignore"):
        return _matmul_numba.lse_matmul_tiles(A, B, log_b, rows, cols, workers)


@pytest.mark.parametrize("cols", [1, 64, 333, 4096])
def test_matmul_tile_walk_is_bit_identical_on_any_thread_count(cols):
    rng = np.random.default_rng(30)
    A, B = rng.normal(size=(201, 16)) / 2, rng.normal(size=(16, 703)) / 2
    log_b = rng.normal(size=703)
    for lb in (None, log_b):
        for rows in ((7, 64) if cols == 1 else (1, 7, 64, 512)):
            want = _walk(A, B, lb, rows, cols, 1)
            for workers in (2, 3):
                np.testing.assert_array_equal(_walk(A, B, lb, rows, cols, workers), want)
            np.testing.assert_allclose(want, _dense(A, B, lb), rtol=1e-14)


def test_matmul_special_values_on_any_thread_count():
    rng = np.random.default_rng(31)
    A, B, log_b = _special_problem(rng)
    for lb in (None, log_b):
        want = _dense(A, B, lb)
        for workers in (1, 2, 3):
            got = _walk(A, B, lb, 16, 128, workers)
            np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
            np.testing.assert_array_equal(got[np.isinf(want)], want[np.isinf(want)])
            fin = np.isfinite(want)
            np.testing.assert_allclose(got[fin], want[fin], rtol=1e-13)
        with np.errstate(all="ignore"):
            generic = logsumexp_matmul(A, B, log_b=lb, block_size=128, backend="numpy")
        np.testing.assert_array_equal(np.isnan(generic), np.isnan(want))
        np.testing.assert_allclose(generic[fin], want[fin], rtol=1e-13)


@pytest.mark.parametrize("shape", [(0, 3, 5), (4, 3, 0), (4, 0, 5), (1, 2, 1)])
def test_matmul_empty_dimensions(shape):
    n, k, m = shape
    A, B = np.ones((n, k)), np.ones((k, m))
    want = _dense(A, B)
    for workers in (1, 2):
        np.testing.assert_array_equal(_walk(A, B, None, 2, 2, workers), want)
    np.testing.assert_array_equal(logsumexp_matmul(A, B), want)


def test_matmul_float32_on_any_thread_count():
    rng = np.random.default_rng(32)
    A = rng.normal(size=(200, 8)).astype(np.float32)
    B = rng.normal(size=(8, 700)).astype(np.float32)
    want = _walk(A, B, None, 32, 256, 1)
    assert want.dtype == np.float32
    np.testing.assert_array_equal(_walk(A, B, None, 32, 256, 3), want)
    # another row blocking: BLAS may round a float32 product by its block shape
    np.testing.assert_allclose(_walk(A, B, None, 5, 256, 3), want, rtol=4e-7)
    np.testing.assert_allclose(want, _dense(A, B), rtol=1e-5)


def _blas_threads():
    from threadpoolctl import threadpool_info

    return [p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"]


def test_blas_threads_are_restored_after_concurrent_calls():
    before = _blas_threads()
    rng = np.random.default_rng(33)
    A, B = rng.normal(size=(400, 8)), rng.normal(size=(8, 600))
    want = _walk(A, B, None, 64, 64, 1)
    results, errors = [], []

    def call():
        try:
            results.append(_walk(A, B, None, 64, 64, 2))
        except Exception as exc:   # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=call) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for got in results:
        np.testing.assert_array_equal(got, want)
    assert _blas_threads() == before
    assert _matmul_numba._SingleThreadBLAS._inside == 0


def test_blas_is_held_to_one_thread_only_inside_the_parallel_region(monkeypatch):
    from threadpoolctl import threadpool_limits

    seen = []
    fold = _matmul_numba.fold_rows

    def spy(*args):
        seen.append(max(_blas_threads()))
        return fold(*args)

    monkeypatch.setattr(_matmul_numba, "fold_rows", spy)
    rng = np.random.default_rng(38)
    A, B = rng.normal(size=(300, 8)), rng.normal(size=(8, 500))
    with threadpool_limits(2, user_api="blas"):
        serial = _walk(A, B, None, 64, 128, 1)      # one level: BLAS as configured
        assert set(seen) == {2}
        seen.clear()
        parallel = _walk(A, B, None, 64, 128, 2)    # the other level: BLAS on one thread
        assert set(seen) == {1}
        assert max(_blas_threads()) == 2
    np.testing.assert_allclose(parallel, serial, rtol=1e-14)   # threaded BLAS rounds its way


# --- the lane passes -----------------------------------------------------------------------

def _lane_problem(rng, shape, weights):
    a = rng.normal(scale=20, size=shape)
    a[0, 3, :] = -np.inf
    a[1, :, -1] = -np.inf
    a[-1, 1, -1] = np.inf
    a[-1, -2, 0] = np.nan
    b = None
    if weights:
        b = rng.normal(size=shape)
        b[rng.random(shape) < 0.2] = 0.0
    return a, b


def _run_pass(kernel, a, b, mode, block=None, rows=4, chunk=32):
    pre, n, post = a.shape
    mx, m, s = (np.empty((pre, post)) for _ in range(3))
    out, sgn = np.empty((pre, post)), np.empty((pre, post))
    with np.errstate(all="ignore"):
        if block is None:
            kernel(a.reshape(pre, n), None if b is None else b.reshape(pre, n), mx, m, s, chunk)
            _lse_numba._finish_lanes(a, b, mx, m, s, 0, pre, 0, post, mode, True, out, sgn)
        else:
            kernel(a, b, mx, m, s, block, rows, mode, True, out, sgn)
    # what the mode defines: (out, sign) for LSE, else the statistics / shift and denominator
    return (out, sgn) if mode == LSE else (mx, m, s) if mode == STATS else (mx, s)


@pytest.mark.parametrize("mode, weights", [(STATS, False), (STATS, True), (LSE, False),
                                           (LSE, True), (SOFTMAX, False), (LOG_SOFTMAX, False)])
def test_column_pass_is_bit_identical_for_any_block_and_thread_count(mode, weights):
    rng = np.random.default_rng(34)
    a, b = _lane_problem(rng, (3, 50, 301), weights)
    want = _run_pass(_lse_numba._cols_pass_serial, a, b, mode, block=256)
    for kernel in (_lse_numba._cols_pass, _lse_numba._cols_pass_serial):
        for block in (8, 64, 300, 1000):
            got = _run_pass(kernel, a, b, mode, block=block)
            for g, w in zip(got, want):
                np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("mode", [LSE, LOG_SOFTMAX])
def test_row_pass_parallel_twin_gives_the_same_bits(mode):
    rng = np.random.default_rng(35)
    a, b = _lane_problem(rng, (40, 300, 1), mode == LSE)
    want = _run_pass(_lse_numba._rows_pass_serial, a, b, mode)
    got = _run_pass(_lse_numba._rows_pass, a, b, mode)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("weights", [False, True])
def test_long_lanes_cut_into_segments_match_scipy(monkeypatch, weights):
    """Few long lanes are reduced segment by segment and merged; with 2-chunk segments the
    merge runs many times, across NaN, +-inf, all -inf lanes and a growing max."""
    monkeypatch.setattr(_lse_numba, "_SEGMENT_CHUNKS", 2)
    chunk = _lse_numba.chunk_sizes()[0]
    rng = np.random.default_rng(37)
    n = 9 * chunk + 5
    a = rng.normal(scale=30, size=(6, n)) + np.linspace(0, 80, n)
    a[1, 3 * chunk + 1] = np.nan
    a[2, :] = -np.inf
    a[3, 5 * chunk] = np.inf
    a[4, : 4 * chunk] = -np.inf
    b = None
    if weights:
        b = rng.normal(size=a.shape)
        b[rng.random(a.shape) < 0.1] = 0.0
    assert _lse_numba._segmented(6, n, chunk)
    with np.errstate(all="ignore"):
        for return_sign in (False, True):
            got = logsumexp(a, axis=1, b=b, return_sign=return_sign, backend="numba")
            want = scipy_lse(a, axis=1, b=b, return_sign=return_sign)
            for g, w in zip(got if return_sign else (got,), want if return_sign else (want,)):
                np.testing.assert_array_equal(np.isnan(g), np.isnan(w))
                fin = np.isfinite(w)
                np.testing.assert_array_equal(g[~fin & ~np.isnan(w)], w[~fin & ~np.isnan(w)])
                np.testing.assert_allclose(g[fin], w[fin], rtol=1e-13)
        if not weights:
            from scipy.special import softmax as scipy_softmax
            got, want = softmax(a, axis=1), scipy_softmax(a, axis=1)
            np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
            np.testing.assert_allclose(got[~np.isnan(want)], want[~np.isnan(want)],
                                       rtol=1e-12, atol=1e-300)


def test_col_block_width_balances_and_stays_in_bounds():
    assert _lse_numba._col_block_width(1, 10_000, 1) == _lse_numba._COL_BLOCK
    assert _lse_numba._col_block_width(1, 10_000, 16) == 160        # 63 tasks >= 4 x 16
    assert _lse_numba._col_block_width(1, 100, 16) == _lse_numba._COL_BLOCK_MIN
    assert _lse_numba._col_block_width(1000, 10, 2) == _lse_numba._COL_BLOCK_MIN


_SCRIPT = r"""
import numba, numpy as np
from solvers import logsumexp, softmax, log_softmax, logsumexp_matmul
rng = np.random.default_rng(36)
a = rng.normal(scale=10, size=(300, 700)); a[5, 7] = np.nan; a[:, 9] = -np.inf
A, B = rng.normal(size=(3000, 8)), rng.normal(size=(8, 200))
v = rng.normal(scale=10, size=300_001)            # one long lane: cut into segments
calls = [lambda: logsumexp(v), lambda: softmax(v), lambda: log_softmax(v),
         lambda: logsumexp(a, axis=0), lambda: logsumexp(a, axis=1),
         lambda: logsumexp(a), lambda: logsumexp(a[None], axis=(0, 2), return_sign=True),
         lambda: softmax(a, axis=0), lambda: log_softmax(a, axis=1),
         lambda: logsumexp_matmul(A, B)]
with np.errstate(all="ignore"):
    numba.set_num_threads(1)
    one = [c() for c in calls]
    numba.set_num_threads(2)
    two = [c() for c in calls]
for x, y in zip(one, two):
    for u, v in zip(*(t if isinstance(t, tuple) else (t,) for t in (x, y))):
        assert np.array_equal(u, v, equal_nan=True), (u, v)
print("same bits")
"""


def test_public_functions_same_bits_on_one_and_two_threads():
    env = dict(os.environ, NUMBA_NUM_THREADS="2", PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-c", _SCRIPT], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "same bits" in proc.stdout


# --- cache sizes ---------------------------------------------------------------------------

def test_cache_size_parsing():
    assert _cpu._parse_size("48K\n") == 48 * 1024
    assert _cpu._parse_size("2M") == 2 * 1024 ** 2
    assert _cpu._parse_size("32768") == 32768
    assert _cpu._cpu_count_in("0-3,8\n") == 5
    assert _cpu._cpu_count_in("1") == 1
    assert [_cpu.floor_pow2(x) for x in (0, 1, 3, 1536, 2048)] == [1, 1, 2, 1024, 2048]


def test_cache_sizes_are_sane_and_fall_back(monkeypatch):
    l1, l2 = _cpu.cache_sizes()
    assert 8 * 1024 <= l1 <= 4 * 1024 ** 2 and 64 * 1024 <= l2 <= 256 * 1024 ** 2
    _cpu.cache_sizes.cache_clear()
    try:
        monkeypatch.setattr(_cpu, "_linux_sizes", lambda: {1: 10, 2: 0})   # misread
        monkeypatch.setattr(_cpu, "_sysconf_sizes", dict)
        monkeypatch.setattr(_cpu, "_macos_sizes", dict)
        assert _cpu.cache_sizes() == (_cpu._FALLBACK[1], _cpu._FALLBACK[2])
    finally:
        _cpu.cache_sizes.cache_clear()
    rows, cols = _matmul_numba.tile_shape(10 ** 6, 10 ** 6, 8)
    assert rows * cols * 8 <= _cpu.cache_sizes()[1] and cols * 8 <= _cpu.cache_sizes()[0]
    assert _matmul_numba.tile_shape(3, 5, 8, block_size=100) == (3, 5)
