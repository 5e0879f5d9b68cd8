"""minimize_qubo: enumerated optima, Boltzmann stationarity, backends agree, bad input."""
import itertools
import sys

import numpy as np
import pytest
import scipy.sparse as sps
from scipy.stats import chi2

import solvers
from solvers import minimize_qubo
from solvers._lib import OptimizeResult
from tests.conftest import to_numpy
from naive import qubo_brute_force_min


def energy(Q, c, offset, X):
    X = np.asarray(X, dtype=float)
    return np.einsum("si,ij,sj->s", X, Q, X) + X @ c + offset


@pytest.mark.parametrize("n", [5, 10, 15, 20])
def test_finds_enumerated_optimum(n):
    rng = np.random.default_rng(100 + n)
    for trial in range(3):
        Q = rng.normal(size=(n, n))
        c = rng.normal(size=n)
        res = minimize_qubo(Q, c, n_reads=8, n_sweeps=200, rng=trial)
        assert res.fun == pytest.approx(qubo_brute_force_min(Q, c), abs=1e-9)
        np.testing.assert_allclose(res.energies, energy(Q, c, 0.0, res.samples), atol=1e-9)
        assert res.x.dtype == np.int8 and set(np.unique(res.samples)) <= {0, 1}


def test_sparse_csr_kernel_finds_optimum():
    rng = np.random.default_rng(7)
    n = 18
    Q = rng.normal(size=(n, n)) * (rng.uniform(size=(n, n)) < 0.2)
    res = minimize_qubo(sps.csr_matrix(Q), n_reads=8, n_sweeps=200, rng=0)
    assert res.fun == pytest.approx(qubo_brute_force_min(Q), abs=1e-9)
    # dict input, the same objective
    d = {(i, j): Q[i, j] for i, j in zip(*np.nonzero(Q))}
    d[(n - 1, n - 1)] = Q[n - 1, n - 1]
    res2 = minimize_qubo(d, n_reads=8, n_sweeps=200, rng=0)
    assert res2.fun == pytest.approx(res.fun, abs=1e-9)


def test_spin_vartype():
    rng = np.random.default_rng(3)
    n = 12
    J = rng.normal(size=(n, n))
    h = rng.normal(size=n)
    res = minimize_qubo(J, h, 0.5, vartype="spin", n_reads=8, n_sweeps=200, rng=1)
    S = 2 * np.array(list(itertools.product([0, 1], repeat=n))) - 1
    ref = energy(J, h, 0.5, S).min()
    assert res.fun == pytest.approx(ref, abs=1e-9)
    assert set(np.unique(res.samples)) <= {-1, 1}
    np.testing.assert_allclose(res.energies, energy(J, h, 0.5, res.samples), atol=1e-9)


def test_bqm_input():
    dimod = pytest.importorskip("dimod")
    bqm = dimod.generators.gnp_random_bqm(12, 0.5, "SPIN", random_state=4)
    res = minimize_qubo(bqm, n_reads=8, n_sweeps=200, rng=0)
    labels = res.variables
    assert res.energies == pytest.approx(bqm.energies((res.samples, labels)), abs=1e-9)
    exact = dimod.ExactSolver().sample(bqm).first.energy
    assert res.fun == pytest.approx(exact, abs=1e-9)


def _gibbs_counts_test(res, Q, c, beta):
    n = Q.shape[0]
    states = np.array(list(itertools.product([0, 1], repeat=n)))
    E = energy(Q, c, 0.0, states)
    p = np.exp(-beta * (E - E.min()))
    p /= p.sum()
    idx = res.samples.astype(int) @ (1 << np.arange(n)[::-1])
    counts = np.bincount(idx, minlength=2 ** n)
    expected = p * len(idx)
    stat = np.sum((counts - expected) ** 2 / expected)
    return stat, chi2.ppf(0.999, df=2 ** n - 1)


@pytest.mark.parametrize("kind", ["numba-dense", "numba-csr", "generic"])
def test_metropolis_samples_the_boltzmann_distribution(kind):
    """At a constant beta the sweeps must leave the Gibbs distribution invariant."""
    rng = np.random.default_rng(9)
    n, beta = 4, 0.7
    Q = rng.normal(size=(n, n))
    c = rng.normal(size=n)
    if kind == "numba-csr":
        Q[0, 3] = Q[3, 0] = 0.0
        Qin, backend = sps.csr_matrix(Q), "numba"
    else:
        Qin, backend = Q, ("numba" if kind == "numba-dense" else "numpy")
    res = minimize_qubo(Qin, c, n_reads=4000, beta_schedule=[beta] * 20, polish=False,
                        rng=1, backend=backend)
    stat, limit = _gibbs_counts_test(res, Q, c, beta)
    assert stat < limit, (stat, limit)


def test_generic_matches_numba_at_zero_temperature():
    rng = np.random.default_rng(2)
    n = 30
    Q = rng.normal(size=(n, n))
    X0 = rng.integers(0, 2, size=(6, n))
    kw = dict(n_reads=6, beta_schedule=[np.inf] * 4, x0=X0, rng=0)
    a = minimize_qubo(Q, **kw, backend="numba")
    b = minimize_qubo(Q, **kw, backend="numpy")
    np.testing.assert_array_equal(a.samples, b.samples)
    np.testing.assert_allclose(a.energies, b.energies, rtol=1e-12)
    # and the CSR kernel
    cs = minimize_qubo(sps.csr_matrix(Q * (np.abs(Q) > 1)), **kw, backend="numba")
    d = minimize_qubo(Q * (np.abs(Q) > 1), **kw, backend="numpy")
    np.testing.assert_array_equal(cs.samples, d.samples)


def test_generic_identical_on_every_namespace(xp):
    rng = np.random.default_rng(12)
    n = 8
    Q = rng.normal(size=(n, n))
    ref = minimize_qubo(Q, n_reads=5, n_sweeps=15, rng=3, backend="numpy")
    backend = "numpy" if xp is np else "auto"  # numpy input would pick Numba
    got = minimize_qubo(xp.asarray(Q), n_reads=5, n_sweeps=15, rng=3, backend=backend)
    np.testing.assert_array_equal(to_numpy(got.samples), ref.samples)
    np.testing.assert_allclose(to_numpy(got.energies), ref.energies, rtol=1e-12)
    assert got.fun == pytest.approx(qubo_brute_force_min(Q), abs=1e-9)


def test_reproducible_and_thread_independent():
    import numba

    rng = np.random.default_rng(5)
    Q = rng.normal(size=(40, 40))
    a = minimize_qubo(Q, n_reads=6, n_sweeps=30, rng=11)
    old = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        b = minimize_qubo(Q, n_reads=6, n_sweeps=30, rng=11)
    finally:
        numba.set_num_threads(old)
    np.testing.assert_array_equal(a.samples, b.samples)
    c = minimize_qubo(Q, n_reads=6, n_sweeps=30, rng=12)
    assert not np.array_equal(a.samples, c.samples)


@pytest.mark.parametrize("n, n_reads", [(40, 6), (120, 20)])
def test_serial_reads_give_the_parallel_kernels_samples(monkeypatch, n, n_reads):
    """Small dense calls run the sweep and descent tasks serially over all reads; forcing
    the parallel kernels (or the serial pass) at any size gives the same samples."""
    from solvers.qubo import _anneal_numba

    Q = np.random.default_rng(n).normal(size=(n, n))
    runs = []
    for serial_below in (0, 1 << 62):
        monkeypatch.setattr(_anneal_numba, "SERIAL_BELOW", serial_below)
        runs.append(minimize_qubo(Q, n_reads=n_reads, n_sweeps=40, rng=3))
    np.testing.assert_array_equal(runs[0].samples, runs[1].samples)
    np.testing.assert_array_equal(runs[0].energies, runs[1].energies)
    assert _anneal_numba.anneal_dense_reads.signatures
    assert _anneal_numba.anneal_reads_range.signatures


def test_polish_reaches_a_local_minimum():
    rng = np.random.default_rng(6)
    n = 60
    Q = rng.normal(size=(n, n))
    res = minimize_qubo(Q, n_reads=4, n_sweeps=2, rng=0)
    for x in res.samples:
        base = energy(Q, np.zeros(n), 0.0, x[None])[0]
        flips = np.tile(x, (n, 1))
        flips[np.arange(n), np.arange(n)] ^= 1
        assert np.all(energy(Q, np.zeros(n), 0.0, flips) >= base - 1e-9)


def test_router_and_progress(capsys):
    rng = np.random.default_rng(8)
    n = 10
    Q = rng.normal(size=(n, n))
    c = rng.normal(size=n)
    res = solvers.minimize((Q, c), method="anneal", rng=0, n_sweeps=100, n_reads=4)
    assert res.fun == pytest.approx(qubo_brute_force_min(Q, c), abs=1e-9)
    assert capsys.readouterr().err == ""
    res2 = minimize_qubo(Q, c, rng=0, n_sweeps=100, n_reads=4, progress=True)
    assert "anneal" in capsys.readouterr().err
    np.testing.assert_array_equal(res2.samples, res.samples)
    with pytest.raises(TypeError, match="unknown option"):
        solvers.minimize(Q, method="anneal", temperature=1.0)
    with pytest.raises(TypeError, match="QUBO"):
        solvers.minimize(lambda x: 0.0, method="anneal")


def test_x0_start():
    n = 6
    Q = -np.eye(n)
    res = minimize_qubo(Q, n_reads=3, beta_schedule=[np.inf], x0=np.zeros(n, int), rng=0,
                        polish=False)
    assert np.all(res.samples == 1) and res.fun == -n


@pytest.mark.parametrize("args, kwargs, exc, match", [
    ((np.ones((2, 3)),), {}, ValueError, "square"),
    ((np.array([[np.nan, 0.0], [0.0, 1.0]]),), {}, ValueError, "finite"),
    ((np.eye(2),), {"n_reads": 0}, ValueError, "n_reads"),
    ((np.eye(2),), {"n_sweeps": 0}, ValueError, "n_sweeps"),
    ((np.eye(2),), {"beta_schedule": "cosine"}, ValueError, "beta_schedule"),
    ((np.eye(2),), {"beta_schedule": [1.0, -1.0]}, ValueError, ">= 0"),
    ((np.eye(2),), {"beta_range": (1.0, -2.0)}, ValueError, "> 0"),
    ((np.eye(2),), {"x0": np.zeros(3)}, ValueError, "x0"),
    ((np.eye(2),), {"x0": np.array([0, 2])}, ValueError, "x0"),
    ((np.eye(2),), {"method": "tabu"}, ValueError, "method"),
    ((np.eye(2),), {"backend": "gpu"}, ValueError, "backend"),
])
def test_bad_input(args, kwargs, exc, match):
    with pytest.raises(exc, match=match):
        minimize_qubo(*args, **kwargs)


def test_x0_message_names_the_value_set():
    with pytest.raises(ValueError, match=r"x0 entries must be in \{0, 1\}"):
        minimize_qubo(np.eye(2), x0=np.array([0, 2]))
    with pytest.raises(ValueError, match=r"x0 entries must be in \{-1, 1\}"):
        minimize_qubo(np.eye(2), vartype="spin", x0=np.array([0, 1]))


class _FakeVartype:
    """Stands in for a dimod.Vartype member (an Enum with .name 'SPIN' / 'BINARY')."""

    def __init__(self, name):
        self.name = name


@pytest.mark.parametrize("spelling, expected", [
    ("SPIN", "spin"), ("Spin", "spin"), ("BINARY", "binary"), (frozenset({-1, 1}), "spin"),
    ({0, 1}, "binary"), (_FakeVartype("SPIN"), "spin"), (_FakeVartype("BINARY"), "binary"),
])
def test_dimod_vartype_spellings(spelling, expected):
    rng = np.random.default_rng(5)
    Q, c = rng.normal(size=(6, 6)), rng.normal(size=6)
    got = minimize_qubo(Q, c, vartype=spelling, n_reads=4, n_sweeps=50, rng=0)
    ref = minimize_qubo(Q, c, vartype=expected, n_reads=4, n_sweeps=50, rng=0)
    np.testing.assert_array_equal(got.samples, ref.samples)
    assert set(np.unique(got.samples)) <= ({-1, 1} if expected == "spin" else {0, 1})
    assert solvers.qubo_moments(Q, c, vartype=spelling).var == pytest.approx(
        solvers.qubo_moments(Q, c, vartype=expected).var, rel=1e-15)


@pytest.mark.parametrize("bad", ["ising", "", 3, {0, 2}])  # None: the default
def test_unknown_vartype(bad):
    with pytest.raises(ValueError, match="vartype"):
        minimize_qubo(np.eye(2), vartype=bad)


_HARNESS = r"""
#include <cmath>
#include <cstddef>
using std::exp;
struct Dim3 { int x; };
static Dim3 blockDim = {1}, blockIdx = {0}, threadIdx = {0};
#define __global__
#define __device__
#define __forceinline__ inline
%s
extern "C" void run_all(const double* W, int n, const double* betas, int n_betas,
                        long long t0, signed char* X, double* H, double* E,
                        const unsigned long long* starts, const signed char* running,
                        int n_reads, int polish) {
    for (int r = 0; r < n_reads; ++r) {
        blockIdx.x = r;
        anneal_dense(W, n, betas, n_betas, t0, X, H, E, starts, running, n_reads, polish);
    }
}
"""


def _compiled_cuda_source(tmp_path):
    """The CuPy kernel's CUDA C compiled as C++: ``run_all`` runs it thread by thread."""
    import ctypes
    import shutil
    import subprocess

    from solvers.qubo import _anneal_cupy

    if shutil.which("g++") is None:
        pytest.skip("no C++ compiler")
    src, lib = tmp_path / "kernel.cpp", tmp_path / "kernel.so"
    src.write_text(_HARNESS % _anneal_cupy.SOURCE)
    subprocess.run(["g++", "-O1", "-shared", "-fPIC", "-o", str(lib), str(src)], check=True)
    return ctypes.CDLL(str(lib)).run_all


def _call_run_all(run_all, W, betas, t0, Xt, Ht, E, starts, running, polish):
    import ctypes

    ptr = lambda arr: arr.ctypes.data_as(ctypes.c_void_p)  # noqa: E731
    run_all(ptr(W), ctypes.c_int(W.shape[0]), ptr(betas), ctypes.c_int(len(betas)),
            ctypes.c_longlong(int(t0)), ptr(Xt), ptr(Ht), ptr(E), ptr(starts), ptr(running),
            ctypes.c_int(Xt.shape[1]), ctypes.c_int(int(polish)))


def test_cuda_kernel_source_matches_numba_on_the_cpu(tmp_path):
    """Compile the CuPy kernel's CUDA C as C++ and run it thread by thread on the CPU: it must
    reproduce the Numba kernel read for read (same counter-based streams, same schedule)."""
    from solvers.qubo._anneal_generic import stream_starts
    from solvers.qubo._anneal_numba import NumbaChains

    run_all = _compiled_cuda_source(tmp_path)
    rng = np.random.default_rng(21)
    n, reads = 25, 6
    Q = rng.normal(size=(n, n))
    a = np.diag(Q).copy()
    W = Q + Q.T - 2 * np.diag(a)
    betas = np.geomspace(0.05, 5.0, 40)
    X0 = rng.integers(0, 2, size=(reads, n)).astype(np.int8)
    base = np.uint64(rng.integers(2**63))
    for polish in (0, 1):
        cpu = NumbaChains(a, W, 0.0, X0, base, first=5)
        cpu.sweep(betas[:15])
        cpu.sweep(betas[15:])
        if polish:
            cpu.descend()
        Xt = np.ascontiguousarray(X0.T)
        Ht = np.ascontiguousarray((a + X0 @ W).T)
        E = X0 @ a + 0.5 * np.sum(X0 * (X0 @ W), axis=1)
        starts = stream_starts(int(base), 5, reads)
        running = np.ones(reads, dtype=np.int8)
        _call_run_all(run_all, W, betas[:15], 0, Xt, Ht, E, starts, running, 0)
        _call_run_all(run_all, W, betas[15:], 15, Xt, Ht, E, starts, running, polish)
        Xc, Ec = cpu.current()
        np.testing.assert_array_equal(Xt.T, Xc)
        if not polish:  # the tracked energies (the descent does not track them)
            np.testing.assert_allclose(E, Ec, atol=1e-9)


@pytest.mark.gpu
def test_cupy_backend_matches_numba():
    from solvers._lib import gpu_available

    if not gpu_available():
        pytest.skip("no usable GPU")
    rng = np.random.default_rng(22)
    n = 40
    Q = rng.normal(size=(n, n))
    a = minimize_qubo(Q, n_reads=64, n_sweeps=100, rng=0, backend="numba")
    b = minimize_qubo(Q, n_reads=64, n_sweeps=100, rng=0, backend="cupy")
    assert isinstance(b.samples, np.ndarray)
    agree = np.mean(np.all(a.samples == b.samples, axis=1))
    assert agree >= 0.9  # identical streams; a last-ulp exp difference may split a read
    np.testing.assert_allclose(b.energies, energy(Q, np.zeros(n), 0.0, b.samples), atol=1e-9)
    import cupy

    Q4, c4 = rng.normal(size=(4, 4)), rng.normal(size=4)
    res = minimize_qubo(cupy.asarray(Q4), cupy.asarray(c4), n_reads=4000,
                        beta_schedule=[0.7] * 20, polish=False, rng=1)
    assert isinstance(res.samples, cupy.ndarray)
    stat, limit = _gibbs_counts_test(OptimizeResult(samples=res.samples.get()), Q4, c4, 0.7)
    assert stat < limit


def test_float32_couplings_path():
    """The float32-coupling sweeps (default for dense n >= 256) end in exact float64 descent."""
    rng = np.random.default_rng(30)
    n = 300
    Q = rng.normal(size=(n, n))
    kw = dict(n_reads=3, n_sweeps=20, rng=4)
    a = minimize_qubo(Q, **kw)
    b = minimize_qubo(Q, coupling_dtype="float64", **kw)
    np.testing.assert_allclose(a.energies, energy(Q, np.zeros(n), 0.0, a.samples), rtol=1e-12)
    assert abs(a.fun - b.fun) <= 0.01 * abs(b.fun)  # same algorithm, perturbed decisions
    for x in a.samples[:1]:  # a 1-flip local minimum in exact arithmetic
        base = energy(Q, np.zeros(n), 0.0, x[None])[0]
        flips = np.tile(x, (n, 1))
        flips[np.arange(n), np.arange(n)] ^= 1
        assert np.all(energy(Q, np.zeros(n), 0.0, flips) >= base - 1e-9)
    with pytest.raises(ValueError, match="coupling_dtype"):
        minimize_qubo(Q, coupling_dtype="float16")
    s = minimize_qubo(sps.csr_matrix(Q * (np.abs(Q) > 2.5)), coupling_dtype="float32", **kw)
    assert np.isfinite(s.fun)


def _fake_cupy(tmp_path):
    """A stand-in ``cupy`` module backed by numpy whose RawKernel runs the CUDA source
    compiled as C++ (one "thread" per read, in order)."""
    import types

    from solvers.qubo import _anneal_cupy

    run_all = _compiled_cuda_source(tmp_path)

    def raw_kernel(source, name):
        assert source == _anneal_cupy.SOURCE and name == "anneal_dense"

        def launch(grid, block, args):
            W, n, b, nb, t0, Xt, Ht, E, starts, running, reads, polish = args
            for arr in (W, b, Xt, Ht, E, starts, running):
                assert isinstance(arr, np.ndarray) and arr.flags.c_contiguous
            assert grid[0] * block[0] >= reads and W.shape[0] == n and len(b) == nb
            _call_run_all(run_all, W, b, t0, Xt, Ht, E, starts, running, polish)

        return launch

    fake = types.ModuleType("cupy")
    for name in ("asarray", "ascontiguousarray", "sum", "float64", "int8"):
        setattr(fake, name, getattr(np, name))
    fake.RawKernel = raw_kernel
    fake.asnumpy = np.asarray
    return fake


def test_cupy_chains_glue_matches_numba_chains(tmp_path, monkeypatch):
    """CupyChains (layout, launches, fields, energies) on a numpy-backed fake cupy whose
    kernel is the CUDA source compiled for the CPU: the same reads as NumbaChains."""
    from solvers.qubo import _anneal_cupy
    from solvers.qubo._anneal_numba import NumbaChains

    monkeypatch.setitem(sys.modules, "cupy", _fake_cupy(tmp_path))
    monkeypatch.setattr(_anneal_cupy, "_KERNEL", None)
    rng = np.random.default_rng(40)
    n, reads = 20, 9
    Q = rng.normal(size=(n, n))
    a = np.diag(Q) + rng.normal(size=n)
    W = Q + Q.T - 2 * np.diag(np.diag(Q))
    X0 = rng.integers(0, 2, size=(reads, n)).astype(np.int8)
    betas = np.geomspace(0.1, 4.0, 30)
    gpu = _anneal_cupy.CupyChains(a, W, 1.5, X0, base=12345, first=3)
    cpu = NumbaChains(a, W, 1.5, X0, base=12345, first=3, single=False)
    for lo, hi in ((0, 1), (1, 12), (12, 30)):  # chunked launches keep the streams
        gpu.sweep(betas[lo:hi])
        cpu.sweep(betas[lo:hi])
        (Xg, Eg), (Xc, Ec) = gpu.current(), cpu.current()
        np.testing.assert_array_equal(Xg, Xc)
        np.testing.assert_allclose(Eg, Ec, atol=1e-9)
    gpu.descend()
    cpu.descend()
    (Xg, Eg), (Xc, Ec) = gpu.finish(), cpu.finish()
    np.testing.assert_array_equal(Xg, Xc)
    np.testing.assert_allclose(Eg, Ec, rtol=1e-12)
    Xf = Xg.astype(float)
    np.testing.assert_allclose(Eg, 1.5 + Xf @ a + 0.5 * np.sum(Xf * (Xf @ W), axis=1),
                               rtol=1e-12)
    # a target: groups stop at the same sweeps, launch by launch on the GPU
    goal = float(np.sort(Ec)[reads // 2]) + 2.0
    gpu = _anneal_cupy.CupyChains(a, W, 1.5, X0, base=99, first=0)
    cpu = NumbaChains(a, W, 1.5, X0, base=99, first=0, single=False)
    gpu.sweep(betas, goal)
    cpu.sweep(betas, goal)
    first = int(np.nonzero(cpu.stops >= 0)[0][0])  # later groups may give up at any sweep
    assert 0 <= first < len(cpu.stops) and np.all(cpu.stops[:first] == -1)
    np.testing.assert_array_equal(gpu.stops[:first + 1], cpu.stops[:first + 1])
    keep = (first + 1) * 8
    np.testing.assert_array_equal(gpu.current()[0][:keep], cpu.current()[0][:keep])
