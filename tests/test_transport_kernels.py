"""Every transport/memory kernel against its generic twin: ordinary inputs, NaN, +inf and
-inf at fixed places, empty and single-row inputs, and float32.

The generic ``xp`` code is the reference; a kernel agrees when it gives the same numbers
(NaN where the reference has NaN) and keeps the input's float dtype. The Bures kernel
families (exact distances, Gibbs-weighted root sums, screened distances) are also checked,
generic twin and Numba kernel both, against the pair-by-pair loops of ``tests/naive.py``.
"""
import numpy as np
import pytest

import array_api_compat.numpy as cnp
from naive import bures_cdist_loop, screened_cdist_loop, weighted_root_sum_loop

from solvers.transport import bures_kernels as bk
from solvers.transport._lightsb_model import (diag_lse_xp, diag_stats_xp,
                                              log_weights_diag_xp, sample_diag_xp)

nb_lightsb = pytest.importorskip("solvers.transport._lightsb_numba")
nb_bures = pytest.importorskip("solvers.transport._bures_numba")

SPECIAL = [None, np.nan, np.inf, -np.inf]


@pytest.fixture(autouse=True)
def _quiet_special_values():
    with np.errstate(all="ignore"):  # inf - inf etc. are the point of these inputs
        yield


def _same(kernel_out, ref, dtype=np.float64):
    rtol = 1e-9 if dtype == np.float64 else 2e-4
    for k, g in zip(kernel_out, ref):
        k, g = np.asarray(k), np.asarray(g)
        assert k.shape == g.shape
        assert k.dtype == g.dtype == dtype, (k.dtype, g.dtype)
        np.testing.assert_array_equal(np.isnan(k), np.isnan(g))
        np.testing.assert_allclose(k, g, rtol=rtol, atol=rtol, equal_nan=True)


def _lightsb_problem(dtype, n=7, m=6, K=3, D=2, seed=0):
    rng = np.random.default_rng(seed)
    la, r = rng.normal(size=K), rng.normal(size=(K, D))
    s = np.exp(0.3 * rng.normal(size=(K, D)))
    x, y = rng.normal(size=(n, D)), rng.normal(size=(m, D)) + 0.5
    return [a.astype(dtype) for a in (x, y, la, r, s)]


def _poke(a, value, where):
    a = a.copy()
    if value is not None and a.size:
        a[where] = value
    return a


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("value", SPECIAL)
@pytest.mark.parametrize("n, m", [(7, 6), (0, 0), (1, 1)])
def test_lightsb_diag_stats_kernel_matches_generic(dtype, value, n, m):
    x, y, la, r, s = _lightsb_problem(dtype, n, m)
    x, y = _poke(x, value, (0, 1)), _poke(y, value, (m - 1, 0))
    ref = diag_stats_xp(x, y, la, r, s, 0.7, xp=cnp, lse_backend="numpy", chunk=3)
    _same(nb_lightsb.diag_stats(x, y, la, r, s, 0.7), ref, dtype)
    # the parallel chunked reduction gives the same statistics
    _same(nb_lightsb.diag_stats(x, y, la, r, s, 0.7, nchunks=3), ref, dtype)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("value", SPECIAL)
@pytest.mark.parametrize("n, m", [(7, 6), (0, 0), (1, 1), (2500, 1100)])
@pytest.mark.parametrize("fused_work", [None, 0])
def test_lightsb_diag_lse_kernel_matches_generic(monkeypatch, dtype, value, n, m, fused_work):
    # (2500, 1100): several blocks of rows, the last one partial; fused_work=0 takes the
    # blocked path at every size (small batches take the fused pass)
    if fused_work is not None:
        monkeypatch.setattr(nb_lightsb, "FUSED_WORK", fused_work)
    x, y, la, r, s = _lightsb_problem(dtype, n, m)
    x, y = _poke(x, value, (0, 1)), _poke(y, value, (m - 1, 0))
    ref = diag_lse_xp(x, y, la, r, s, 0.7, xp=cnp, lse_backend="numpy", chunk=3)
    _same(nb_lightsb.diag_lse(x, y, la, r, s, 0.7), ref, dtype)
    # the row log-sum-exps sum to the totals of the statistics kernel
    lc, lv, _, _ = diag_stats_xp(x, y, la, r, s, 0.7, xp=cnp, lse_backend="numpy", chunk=3)
    _same([np.sum(ref[0]), np.sum(ref[1])], [lc, lv], dtype)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("value", SPECIAL)
@pytest.mark.parametrize("where", ["x", "la"])
def test_lightsb_log_weights_kernel_matches_generic(dtype, value, where):
    x, _, la, r, s = _lightsb_problem(dtype)
    if where == "x":
        x = _poke(x, value, (2, 0))
    else:
        la = _poke(la, value, 1)
    ref = log_weights_diag_xp(x, la, r, s, 0.7, xp=cnp, lse_backend="numpy")
    _same([nb_lightsb.log_weights_diag(x, la, r, s, 0.7)], [ref], dtype)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("value", SPECIAL)
@pytest.mark.parametrize("n", [5, 1, 0])
def test_lightsb_sample_kernel_matches_generic(dtype, value, n):
    x, _, la, r, s = _lightsb_problem(dtype, n=n)
    rng = np.random.default_rng(3)
    logits = la + (x * x) @ s.T / 1.4 + x @ r.T / 0.7
    logits = _poke(logits, value, (0, 1))
    u = rng.uniform(size=(n, 4)).astype(dtype)
    z = rng.normal(size=(n, 4, x.shape[1])).astype(dtype)
    ref = sample_diag_xp(x, logits, r, s, 0.7, u, z, xp=cnp)
    _same([nb_lightsb.sample_diag(x, logits, r, s, 0.7, u, z)], [ref], dtype)


def _like_naive(outputs, naive_out, dtype):
    """Kernel outputs against the float64 loop of ``tests/naive.py`` (NaN where it has NaN),
    to the input dtype's precision."""
    rtol = 1e-9 if dtype == np.float64 else 2e-4
    for out in outputs:
        out = np.asarray(out)
        assert out.shape == naive_out.shape and out.dtype == dtype
        np.testing.assert_array_equal(np.isnan(out), np.isnan(naive_out))
        np.testing.assert_allclose(out, naive_out, rtol=rtol, atol=rtol, equal_nan=True)


def _bures_problem(dtype, Q=3, N=4, d=2, seed=0):
    rng = np.random.default_rng(seed)

    def spd(k):
        M = rng.normal(size=(k, d, d))
        return M @ np.swapaxes(M, 1, 2) + np.eye(d)

    qS, S = spd(Q), spd(N)
    qm, m = rng.normal(size=(Q, d)), rng.normal(size=(N, d))
    _, R, _ = bk.roots(qS, cnp)
    W = rng.dirichlet(np.ones(N), size=Q)
    W[:, -1] = 0.0  # a dropped pattern
    out = dict(qm=qm, R=R, trq=np.trace(qS, axis1=1, axis2=2), m=m, S=S,
               trS=np.trace(S, axis1=1, axis2=2), W=W)
    return {k: v.astype(dtype) for k, v in out.items()}


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("value", SPECIAL)
@pytest.mark.parametrize("where", ["qm", "R", "m", "S"])
def test_bures_cdist_kernels_match_generic(dtype, value, where):
    a = _bures_problem(dtype)
    a[where] = _poke(a[where], value, (1, 0) if a[where].ndim == 2 else (1, 0, 0))
    args = (a["qm"], a["R"], a["trq"], a["m"], a["S"], a["trS"])
    ref = bk.cdist_full_xp(*args, cnp)
    got = nb_bures.cdist_full(*args)
    _same([got], [ref], dtype)
    _like_naive([ref, got], bures_cdist_loop(*args), dtype)
    if value is not None:
        assert np.isnan(ref).any() or np.isinf(ref).any()  # never a silent finite answer


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("value", SPECIAL)
@pytest.mark.parametrize("where", ["R", "S", "W"])
def test_bures_weighted_root_sum_kernel_matches_generic(dtype, value, where):
    a = _bures_problem(dtype)
    a[where] = _poke(a[where], value, (1, 0) if a[where].ndim == 2 else (1, 0, 0))
    ref = bk.weighted_root_sum_xp(a["R"], a["S"], a["W"], cnp)
    got = nb_bures.weighted_root_sum(a["R"], a["S"], a["W"])
    _same([got], [ref], dtype)
    _like_naive([ref, got], weighted_root_sum_loop(a["R"], a["S"], a["W"]), dtype)


@pytest.mark.parametrize("Q, N", [(0, 4), (3, 0), (1, 1)])
def test_bures_kernels_on_empty_and_single_inputs(Q, N):
    a = _bures_problem(np.float64, Q=max(Q, 1), N=max(N, 1))
    a = {k: (v[:Q] if k in ("qm", "R", "trq") else v) for k, v in a.items()}
    a = {k: (v[:N] if k in ("m", "S", "trS") else v) for k, v in a.items()}
    a["W"] = a["W"][:Q, :N]
    args = (a["qm"], a["R"], a["trq"], a["m"], a["S"], a["trS"])
    _same([nb_bures.cdist_full(*args)], [bk.cdist_full_xp(*args, cnp)])
    _like_naive([nb_bures.cdist_full(*args)], bures_cdist_loop(*args), np.float64)
    _same([nb_bures.weighted_root_sum(a["R"], a["S"], a["W"])],
          [bk.weighted_root_sum_xp(a["R"], a["S"], a["W"], cnp)])
    _like_naive([nb_bures.weighted_root_sum(a["R"], a["S"], a["W"])],
                weighted_root_sum_loop(a["R"], a["S"], a["W"]), np.float64)


@pytest.mark.parametrize("cut", [0.5, 5.0, np.inf])
@pytest.mark.parametrize("value", SPECIAL)
def test_screened_cdist_matches_naive(value, cut):
    """The screen may replace far pairs by +inf, only those the naive screen allows (their
    lower bound exceeds the row's exact minimum by more than ``cut``); every other entry is
    exact, each row's minimum is kept, and NaN stays NaN. The generic twin skips nothing."""
    a = _bures_problem(np.float64, Q=5, N=30, d=3, seed=2)
    a["qm"] = _poke(a["qm"], value, (1, 0))
    lam_q = np.linalg.eigvalsh(a["R"] @ a["R"])
    rq = np.sqrt(np.clip(np.nan_to_num(lam_q, nan=0.0), 0, None))
    rS = np.sqrt(np.clip(np.linalg.eigvalsh(a["S"]), 0, None))
    args = (a["qm"], a["R"], a["trq"], rq, a["m"], a["S"], a["trS"], rS, cut)
    exact, skippable = screened_cdist_loop(*args)
    _like_naive([bk.screened_cdist_xp(*args, cnp)], exact, np.float64)
    got = nb_bures.screened_cdist(*args)
    skipped = np.isposinf(got) & ~np.isposinf(exact)
    assert not np.any(skipped & ~skippable), "a pair the screen may not skip was skipped"
    if cut == 0.5:
        assert skipped.any()  # the screen is exercised
    kept = ~skipped
    np.testing.assert_array_equal(np.isnan(got), np.isnan(exact))
    np.testing.assert_allclose(got[kept], exact[kept], rtol=1e-10, equal_nan=True)
    finite_rows = np.isfinite(exact).all(axis=1)
    np.testing.assert_allclose(got[finite_rows].min(axis=1), exact[finite_rows].min(axis=1),
                               rtol=1e-10)


def test_cupy_kernels_run_their_generic_code_on_any_namespace():
    """The CuPy entries are the generic code in device-sized blocks (run here on numpy):
    same numbers as the twins, the screened one exact (no pair skipped)."""
    from solvers.transport import _bures_cupy

    a = _bures_problem(np.float64, Q=4, N=6, d=3, seed=1)
    args = (a["qm"], a["R"], a["trq"], a["m"], a["S"], a["trS"])
    ref = bk.cdist_full_xp(*args, cnp)
    rq, rS = np.zeros((4, 3)), np.zeros((6, 3))
    got = _bures_cupy.screened_cdist(a["qm"], a["R"], a["trq"], rq, a["m"], a["S"],
                                     a["trS"], rS, 0.0, xp=cnp)
    np.testing.assert_allclose(got, ref, rtol=1e-12)
    W = a["W"].copy()
    W[:, 0] = 0.0  # a column dropped for every query
    np.testing.assert_allclose(_bures_cupy.weighted_root_sum(a["R"], a["S"], W, xp=cnp),
                               bk.weighted_root_sum_xp(a["R"], a["S"], W, cnp), rtol=1e-12)
