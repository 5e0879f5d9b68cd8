"""minimize_qubo: groups, f_target, the lockstep CSR kernel, the streams and the default
temperature range, each against an independent reference."""
import math
import os
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sps

from solvers import minimize_qubo
from solvers.qubo import _anneal_generic, _anneal_numba
from solvers.qubo.anneal import default_beta_range

GROUP = 8


def _integer_sparse(n, density, seed, low=-3, high=3):
    rng = np.random.default_rng(seed)
    Q = rng.integers(low, high + 1, size=(n, n)).astype(float)
    return Q * (rng.random((n, n)) < density)


def test_exp_polynomial_matches_exp():
    y = np.concatenate([np.linspace(0.0, 40.0, 4001), np.geomspace(1e-12, 40.0, 500)])
    got = np.array([_anneal_numba.exp_neg(v) for v in y])
    np.testing.assert_allclose(got, np.exp(-y), rtol=1e-10, atol=0)
    assert _anneal_numba.exp_neg(1e3) == _anneal_numba.exp_neg(40.0)  # clamped
    assert _anneal_numba.exp_neg(-5.0) == 1.0


def test_numpy_stream_twin_matches_the_reference_generator():
    from solvers._lib import _prng
    from solvers._lib._prng import reference_uniforms

    base = 0x1234_5678_9ABC_DEF
    starts = _anneal_generic.stream_starts(base, 3, 4)
    for r in range(4):
        assert starts[r] == _prng.stream_start(np.uint64(base), 3 + r)
    U = _anneal_generic.stream_uniforms(starts, 7, 5)
    for r in range(4):
        np.testing.assert_array_equal(U[r], reference_uniforms(base, 3 + r, 12)[7:])
        assert _anneal_numba.uniform_at(starts[r], 9) == U[r, 2]


@pytest.mark.parametrize("n_reads", [5, 8, 19])
def test_lockstep_csr_dense_and_generic_give_the_same_reads(n_reads):
    """Integer weights: exact arithmetic everywhere (float32 fields in the CSR and dense
    kernels), so the three implementations of the same Markov chains agree read for read at
    every temperature, padding lanes included."""
    Q = _integer_sparse(40, 0.15, 1)
    kw = dict(n_reads=n_reads, n_sweeps=60, beta_range=(0.05, 3.0), rng=4)
    for polish in (False, True):
        csr = minimize_qubo(sps.csr_matrix(Q), polish=polish, **kw)
        dense = minimize_qubo(Q, polish=polish, **kw)
        generic = minimize_qubo(Q, polish=polish, backend="numpy", **kw)
        np.testing.assert_array_equal(csr.samples, dense.samples)
        np.testing.assert_array_equal(csr.samples, generic.samples)
        np.testing.assert_array_equal(csr.energies, generic.energies)


def test_float64_csr_kernel_matches_generic():
    rng = np.random.default_rng(2)
    Q = rng.normal(size=(30, 30)) * (rng.random((30, 30)) < 0.2)
    kw = dict(n_reads=11, n_sweeps=40, beta_range=(0.1, 4.0), rng=3, polish=False)
    a = minimize_qubo(sps.csr_matrix(Q), **kw)
    b = minimize_qubo(Q, backend="numpy", **kw)
    np.testing.assert_array_equal(a.samples, b.samples)
    np.testing.assert_allclose(a.energies, b.energies, rtol=1e-12)


def test_float32_fields_only_where_exact():
    from solvers.qubo._anneal_numba import exact_in_float32

    Q = _integer_sparse(20, 0.3, 3)
    W = Q + Q.T
    assert exact_in_float32(np.zeros(20), W)
    assert not exact_in_float32(np.full(20, 0.5), W)
    assert not exact_in_float32(np.zeros(20), W * 2.0 ** 22)  # fields could pass 2**24
    assert exact_in_float32(np.zeros(20), sps.csr_matrix(W))


def _groups_reached(res, target):
    E = np.asarray(res.energies)
    return [bool(np.any(E[g:g + GROUP] <= target)) for g in range(0, E.size, GROUP)]


@pytest.mark.parametrize("sparse", [False, True])
def test_f_target_returns_the_groups_up_to_the_first_that_reached_it(sparse):
    Q = _integer_sparse(60, 0.1 if sparse else 1.0, 5, -5, 5)
    Qin = sps.csr_matrix(Q) if sparse else Q
    kw = dict(n_reads=80, n_sweeps=200, rng=7)
    full = minimize_qubo(Qin, **kw)
    target = float(np.sort(full.energies)[40])  # reached by some groups, not all
    res = minimize_qubo(Qin, f_target=target, **kw)
    assert res.status == 3 and res.success and res.message == "f_target reached"
    reached = _groups_reached(res, target)
    assert reached[-1] and not any(reached[:-1])
    k = res.samples.shape[0]
    assert k % GROUP == 0 and k < 80 and res.fun <= target
    # the groups before ran their whole schedule: the same reads as without a target
    np.testing.assert_array_equal(res.samples[:k - GROUP], full.samples[:k - GROUP])
    assert res.nit < 200 and res.nfev == 60 * ((k - GROUP) * 200 + GROUP * res.nit)
    # the same groups on the generic backend
    gen = minimize_qubo(Q, f_target=target, backend="numpy", **kw)
    np.testing.assert_array_equal(gen.samples, res.samples)


def test_f_target_not_reached_and_bad_values():
    Q = _integer_sparse(20, 0.5, 6)
    res = minimize_qubo(Q, n_reads=10, n_sweeps=30, rng=0, f_target=-1e9)
    assert res.status == 1 and not res.success and "without reaching" in res.message
    assert res.samples.shape == (10, 20) and res.nfev == 10 * 30 * 20
    easy = minimize_qubo(Q, n_reads=20, n_sweeps=30, rng=0, f_target=np.inf)
    assert easy.samples.shape == (8, 20) and easy.nit == 1
    with pytest.raises(ValueError, match="f_target"):
        minimize_qubo(Q, f_target=float("nan"))
    with pytest.raises(TypeError, match="f_target"):
        minimize_qubo(Q, f_target="low")


def test_f_target_with_workers_callback_and_progress_matches_serial(capsys):
    Q = _integer_sparse(50, 0.2, 8, -5, 5)
    S = sps.csr_matrix(Q)
    kw = dict(n_reads=48, n_sweeps=150, rng=3)
    target = float(np.sort(minimize_qubo(S, **kw).energies)[30])
    ref = minimize_qubo(S, f_target=target, **kw)
    by_map = minimize_qubo(S, f_target=target, workers=map, **kw)
    np.testing.assert_array_equal(ref.samples, by_map.samples)
    seen = []
    cb = minimize_qubo(S, f_target=target, callback=lambda r: seen.append(r.nit), **kw)
    bar = minimize_qubo(S, f_target=target, progress=True, **kw)
    assert "anneal" in capsys.readouterr().err
    for other in (cb, bar):  # every group at once, sweep by sweep: the same kept reads
        np.testing.assert_array_equal(other.samples, ref.samples)
        assert other.status == 3


_THREADS_SCRIPT = """
import hashlib, numpy as np, scipy.sparse as sps
from solvers import minimize_qubo
rng = np.random.default_rng(9)
Q = rng.integers(-4, 5, size=(70, 70)) * (rng.random((70, 70)) < 0.1)
out = []
for Qin in (sps.csr_matrix(Q.astype(float)), Q.astype(float)):
    full = minimize_qubo(Qin, n_reads=70, n_sweeps=120, rng=1)
    t = float(np.sort(full.energies)[35])
    for target in (None, t):
        r = minimize_qubo(Qin, n_reads=70, n_sweeps=120, rng=1, f_target=target)
        out.append(r.samples.tobytes() + r.energies.tobytes())
    hard = float(np.sort(full.energies)[0])  # Luby restarts (no sweep count given)
    r = minimize_qubo(Qin, rng=2, f_target=hard, n_reads=200)
    out.append(r.samples.tobytes() + r.energies.tobytes() + bytes([r.status]))
print(hashlib.sha256(b"".join(out)).hexdigest())
"""


def test_results_do_not_depend_on_the_number_of_threads():
    """One Numba thread or three (batches of 1 or 3 groups with f_target): same bytes."""
    digests = set()
    for threads in ("1", "3"):
        env = dict(os.environ, NUMBA_NUM_THREADS=threads)
        out = subprocess.run([sys.executable, "-c", _THREADS_SCRIPT], env=env, check=True,
                             capture_output=True, text=True)
        digests.add(out.stdout.strip())
    assert len(digests) == 1


def test_luby_restarts_with_a_target():
    from solvers.qubo._anneal_run import luby

    assert [luby(i) for i in range(1, 16)] == [1, 1, 2, 1, 1, 2, 4, 1, 1, 2, 1, 1, 2, 4, 8]
    Q = _integer_sparse(5, 1.0, 13)
    never = minimize_qubo(Q, rng=0, f_target=-1e9)  # 1024 reads, 128 groups of Luby lengths
    assert never.samples.shape == (1024, 5) and not never.success
    assert never.nfev == 1000 * sum(luby(i) for i in range(1, 129)) * GROUP * 5
    assert never.nit == 1000 * luby(128)
    # a target: the kept groups ran 1000 * luby(g + 1) sweeps, the last one up to its stop
    S = sps.csr_matrix(_integer_sparse(80, 0.08, 14, -5, 5))
    best = minimize_qubo(S, n_reads=32, n_sweeps=3000, rng=1).fun
    res = minimize_qubo(S, rng=5, f_target=best)
    k = res.samples.shape[0] // GROUP
    assert res.status == 3 and res.nit <= 1000 * luby(k)
    assert res.nfev == 80 * GROUP * (1000 * sum(luby(i) for i in range(1, k)) + res.nit)
    for other in (minimize_qubo(S.toarray(), rng=5, f_target=best, backend="numpy"),
                  minimize_qubo(S, rng=5, f_target=best, workers=map)):
        np.testing.assert_array_equal(other.samples, res.samples)
    fixed = minimize_qubo(S, rng=5, f_target=best, maxiter=1000, n_reads=64)
    assert fixed.nfev == 80 * (fixed.samples.shape[0] - GROUP) * 1000 + 80 * GROUP * fixed.nit


def test_default_beta_range_closed_form():
    """No couplings: every field is ``a_i`` at every state. With ``n`` bits of cost ``d``
    the equations of the default range give ``ln(1 / 0.3) / d`` and ``ln(100 n) / d``."""
    for n, d in ((5, 1.0), (40, 3.5)):
        hot, cold = default_beta_range(np.diag(np.full(n, d)))
        assert hot == pytest.approx(math.log(1.0 / 0.3) / d, rel=1e-9)
        assert cold == pytest.approx(math.log(100.0 * n) / d, rel=1e-9)
    # two step sizes: the cold end solves n1 exp(-b) + n2 exp(-10 b) = 0.01
    a = np.array([1.0] * 3 + [10.0] * 30)
    hot, cold = default_beta_range(np.diag(a))
    assert 3 * math.exp(-cold) + 30 * math.exp(-10 * cold) == pytest.approx(0.01, rel=1e-6)
    assert np.mean(np.exp(-hot * a)) == pytest.approx(0.3, rel=1e-6)
    assert default_beta_range(np.zeros((4, 4))) == (1.0, 1.0)
    assert default_beta_range(np.zeros((0, 0))) == (1.0, 1.0)


def test_default_beta_range_reads_the_greedy_fields():
    """The cold end from the fields after greedy sweeps, recomputed here with numpy: the
    same random states, greedy sweeps in plain Python, the same equation."""
    from solvers.qubo import _schedule

    rng = np.random.default_rng(12)
    n = 30
    J = np.triu(rng.choice([-1.0, 1.0], size=(n, n)) * (rng.random((n, n)) < 0.2), 1)
    hot, cold = default_beta_range(J, vartype="spin")
    Q = 4.0 * J  # the binary form: a = -2 (J + J^T) 1, W = 4 (J + J^T)
    W = Q + Q.T
    a = -2.0 * (J + J.T).sum(axis=1)
    X = np.random.default_rng(0).integers(0, 2, size=(_schedule.N_STATES, n)).astype(float)
    fields = np.abs(a + X @ W)
    nonzero = fields[fields > 0]
    assert np.mean(np.exp(-hot * nonzero)) == pytest.approx(_schedule.HOT_ACCEPTANCE, rel=1e-6)
    for x in X:
        for _ in range(_schedule.GREEDY_SWEEPS):
            for i in range(n):
                if (1 - 2 * x[i]) * (a[i] + W[i] @ x) <= 0:
                    x[i] = 1 - x[i]
    cold_fields = np.abs(a + X @ W)
    cold_fields = cold_fields[cold_fields > 0]
    total = np.sum(np.exp(-cold * cold_fields)) / _schedule.N_STATES
    assert total == pytest.approx(_schedule.COLD_UPHILL, rel=1e-6)


def test_beta_range_override_and_backends_agree():
    Q = _integer_sparse(25, 0.3, 11)
    ref = default_beta_range(Q)
    assert default_beta_range(sps.csr_matrix(Q)) == pytest.approx(ref, rel=1e-12)
    assert default_beta_range(Q, backend="numpy") == pytest.approx(ref, rel=1e-12)
    res = minimize_qubo(Q, n_reads=2, n_sweeps=5, rng=0)
    assert res.beta_range == pytest.approx(ref, rel=1e-12)
    res = minimize_qubo(Q, n_reads=2, n_sweeps=5, rng=0, beta_range=(0.5, 2.0))
    assert res.beta_range == (0.5, 2.0)
