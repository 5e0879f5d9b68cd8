"""Compile only what is used: the small-input path of ``backend="auto"``, one compiled
specialization per dtype, one kernel per operation (see ``solvers._lib.kernels`` and
``solvers._lib.numba_config``)."""
import json
import subprocess
import sys

import numpy as np
import pytest

from solvers._lib.backend import Backend, backend_arg, resolve_backend
from solvers._lib.kernels import KernelTable
from solvers._lib.namespace import array_namespace

XP = array_namespace(np.zeros(1))


def _numba_kernel(*args):
    return "numba"


def _generic_kernel(*args):
    return "generic"


TABLE = KernelTable(__name__, op={"numba": _numba_kernel, "generic_below": 100},
                    plain={"numba": _numba_kernel})


# --- the mechanism -------------------------------------------------------------------------

def test_backend_records_an_automatic_choice_and_stays_compatible():
    auto, numba = resolve_backend("auto", XP), resolve_backend("numba", XP)
    assert auto.name == numba.name == "numba"
    assert auto.auto and not numba.auto
    assert not Backend("numba", XP, XP).auto  # three-argument construction unchanged
    assert not resolve_backend("numpy", XP).auto
    assert backend_arg(auto) == "auto" and backend_arg(numba) == "numba"
    assert backend_arg(auto.generic()) == "numpy"  # the generic code is an explicit choice
    assert auto.host() is auto


def test_for_size_takes_the_generic_code_for_small_automatic_numba_only():
    auto, numba = resolve_backend("auto", XP), resolve_backend("numba", XP)
    assert auto.for_size(99, 100).name == "generic"
    assert auto.for_size(100, 100) is auto
    assert numba.for_size(1, 100) is numba  # an explicit request always runs Numba
    generic = resolve_backend("numpy", XP)
    assert generic.for_size(1, 100) is generic


@pytest.mark.parametrize("backend, size, want", [
    ("auto", 10, "generic"), ("auto", 100, "numba"), ("auto", None, "numba"),
    ("numba", 10, "numba"), ("numba", None, "numba"), ("numpy", 10, "generic")])
def test_kernel_table_threshold(backend, size, want):
    be = resolve_backend(backend, XP)
    assert TABLE.get("op", be, generic=_generic_kernel, size=size)() == want
    # no threshold declared: the size changes nothing
    plain = TABLE.get("plain", be, generic=_generic_kernel, size=size)()
    assert plain == ("generic" if backend == "numpy" else "numba")
    assert TABLE.backend_for("op", be, size).name == ("numba" if want == "numba"
                                                      else "generic")


@pytest.mark.parametrize("bad", [-1, "10", None, True])
def test_kernel_table_rejects_a_bad_threshold(bad):
    with pytest.raises(ValueError, match="generic_below"):
        KernelTable(__name__, op={"numba": _numba_kernel, "generic_below": bad})


def test_kernel_array_and_kernel_float():
    from solvers._lib.numba_config import kernel_array, kernel_float

    ro = np.arange(6.0).reshape(2, 3)
    ro.flags.writeable = False
    for x in (ro, ro.T, np.arange(6).reshape(2, 3), np.broadcast_to(np.ones(3), (2, 3))):
        a = kernel_array(x)
        assert a.dtype == np.float64 and a.flags.c_contiguous and a.flags.writeable
        np.testing.assert_array_equal(a, x)
    x = np.ones((2, 2))
    assert kernel_array(x) is x  # no copy when nothing changes
    f32, f64, i64 = np.ones(2, np.float32), np.ones(2), np.ones(2, np.int64)
    assert kernel_float(f32) == np.float32 and kernel_float(f32, i64) == np.float32
    assert kernel_float(f32, f64) == np.float64 and kernel_float(i64) == np.float64
    assert kernel_float(np.ones(2, np.float16)) == np.float32
    assert kernel_float(f32, single=False) == np.float64


def test_single_thread_restores_the_thread_count():
    import numba

    from solvers._lib.numba_config import single_thread, threads_for

    before = numba.get_num_threads()
    with single_thread():
        assert numba.get_num_threads() == 1
    assert numba.get_num_threads() == before
    with threads_for(10, 5):
        assert numba.get_num_threads() == before
    with threads_for(1, 5):
        assert numba.get_num_threads() == 1


# --- the areas: a small first call compiles nothing ------------------------------------------

_SMALL_CALLS = """
import json, sys
import numpy as np
import solvers as s
from solvers import transport as t
r = np.random.default_rng(0)
s.safe_logsumexp(r.normal(size=(50, 200)), rho=0.1, axis=1)
phi = lambda x, batch: (0.5 * np.sum((x - batch) ** 2, axis=1), x - batch)
s.minimize_logsumexp(phi, np.zeros(3), r.normal(size=(500, 3)), rho=0.1, batch_size=32,
                     maxiter=50, rng=0)
G = r.normal(size=(20, 3, 3))
covs = G @ np.swapaxes(G, 1, 2) / 3 + 0.5 * np.eye(3)
means = r.normal(size=(20, 3)) * 4
mem = s.GaussianMemory(means, covs, beta=1.0)
mem.retrieve(means[:5] + 0.1, covs[:5])
mem.energy(means[:2], covs[:2]); mem.weights(means[:2], covs[:2])
t.bures_wasserstein_barycenter(means, covs)
t.bures_wasserstein_cdist(means[:5], covs[:5], means, covs)
t.weighted_monge_map(covs[:2], covs, np.full((2, 20), 0.05))
vec = s.VectorMemory(r.normal(size=(100, 8)), beta=2.0)
vec.retrieve(r.normal(size=(10, 8))); vec.energy(np.zeros(8)); vec.weights(np.zeros(8))
from solvers.lse import dro_dataset, kl_dro
X, y = dro_dataset(500, 3, "logistic", rng=0)
kl_dro(X, y, lam=0.3, loss="logistic", method="lbfgs")
kl_dro(X, y, lam=0.3, loss="logistic", epochs=1, batch_size=32, rng=0)
print(json.dumps(sorted(m for m in sys.modules if m == "numba" or m.endswith("_numba"))))
"""


def test_small_first_calls_of_safe_kl_kl_dro_bures_and_memory_import_no_numba():
    out = subprocess.run([sys.executable, "-c", _SMALL_CALLS], capture_output=True,
                         text=True, check=True)
    assert json.loads(out.stdout.splitlines()[-1]) == []


# --- both paths agree, an explicit backend="numba" runs Numba ------------------------------

def _spd(rng, n, d):
    G = rng.normal(size=(n, d, d))
    return G @ np.swapaxes(G, 1, 2) / d + 0.5 * np.eye(d)


def test_safe_kl_small_inputs_agree_across_paths():
    from solvers import minimize_logsumexp, safe_logsumexp
    from solvers.lse import _safe_kl_numba

    rng = np.random.default_rng(1)
    a = rng.normal(size=(20, 50)) * 3
    a[0, 1], a[1, :] = np.inf, -np.inf
    a[2, 3] = np.nan
    got = safe_logsumexp(a, 0.05, axis=1)  # the generic twin serves "auto" here
    ref = safe_logsumexp(a, 0.05, axis=1, backend="numba")
    assert _safe_kl_numba._solve_rows.signatures  # explicit Numba compiled its kernel
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(ref))
    data = rng.normal(size=(400, 2))
    phi = lambda x, batch: (-(batch @ x), -batch)  # noqa: E731
    runs = [minimize_logsumexp(phi, np.zeros(2), data, rho=0.05, batch_size=16, maxiter=40,
                               lr=0.05, rng=3, backend=b) for b in ("auto", "numba")]
    assert _safe_kl_numba._step_kernel.signatures
    np.testing.assert_allclose(runs[0].x, runs[1].x, rtol=1e-10, atol=1e-12)
    assert runs[0].diagnostics["lme"] == pytest.approx(runs[1].diagnostics["lme"], rel=1e-12)


def test_bures_and_memory_small_inputs_agree_across_paths():
    from solvers import GaussianMemory
    from solvers.transport import _bures_numba, bures_wasserstein_barycenter

    rng = np.random.default_rng(2)
    m, S = rng.normal(size=(12, 3)) * 3, _spd(rng, 12, 3)
    res = [GaussianMemory(m, S, beta=2.0, backend=b).retrieve(m[:4] + 0.2, S[:4])
           for b in ("auto", "numba")]
    assert _bures_numba._screened.signatures and _bures_numba._root_sum.signatures
    assert res[0].path == res[1].path == "full"
    np.testing.assert_array_equal(res[0].index, res[1].index)
    np.testing.assert_allclose(res[0].covs, res[1].covs, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(res[0].fun, res[1].fun, rtol=1e-9, atol=1e-12)
    bary = [bures_wasserstein_barycenter(m, S, backend=b) for b in ("auto", "numba")]
    np.testing.assert_allclose(bary[0][1], bary[1][1], rtol=1e-10, atol=1e-12)


def test_vector_memory_and_kl_dro_small_inputs_agree_across_paths(monkeypatch):
    from solvers.lse import _kl_dro, dro_dataset, kl_dro
    from solvers.memory import VectorMemory

    rng = np.random.default_rng(6)
    P = rng.normal(size=(40, 5))
    res = [VectorMemory(P, beta=3.0, backend=b).retrieve(P[:6] + 0.1) for b in ("auto", "numba")]
    np.testing.assert_array_equal(res[0].index, res[1].index)
    np.testing.assert_allclose(res[0].x, res[1].x, rtol=1e-10, atol=1e-12)
    X, y = dro_dataset(300, 3, "logistic", rng=0)
    asked = []
    lse = _kl_dro.logsumexp
    monkeypatch.setattr(_kl_dro, "logsumexp", lambda *a, backend, **k: (
        asked.append(backend), lse(*a, backend=backend, **k))[1])
    small = kl_dro(X, y, lam=0.3, loss="logistic", method="lbfgs")
    assert set(asked) == {"numpy"}  # few rows: the objective runs on the generic code
    asked.clear()
    big = kl_dro(np.repeat(X, 110, axis=0), np.repeat(y, 110), lam=0.3, loss="logistic",
                 method="lbfgs")
    assert set(asked) == {"auto"}  # 33,000 rows: the Numba kernels (auto resolves to them)
    np.testing.assert_allclose(small.x, big.x, rtol=1e-6, atol=1e-8)  # same distribution


def test_small_graphs_search_with_the_numpy_fits_and_find_the_same_graph(monkeypatch):
    """Under "auto", fewer than SEARCH_GENERIC_BELOW nodes run the order search's fits on
    numpy; the graph equals the one of the compiled fits (explicit backend="numba")."""
    from solvers import learn_dag
    from solvers.dag import refine, simulate_data
    from solvers.dag._dag_kernels import SEARCH_GENERIC_BELOW

    used = []
    for name in ("local_fit_xp", "add_gain_xp"):
        ref = getattr(refine, name)
        monkeypatch.setattr(refine, name, lambda *a, _ref=ref, _n=name: (
            used.append(_n), _ref(*a))[1])
    for d in (5, SEARCH_GENERIC_BELOW - 1, SEARCH_GENERIC_BELOW):
        X = simulate_data(d, 400, k=2, graph_type="ER", rng=d).X
        used.clear()
        auto = learn_dag(X, rng=0)
        assert bool(used) == (d < SEARCH_GENERIC_BELOW), d
        used.clear()
        compiled = learn_dag(X, rng=0, backend="numba")
        assert not used
        np.testing.assert_array_equal(auto.adjacency != 0, compiled.adjacency != 0)


# --- one specialization per dtype, one kernel per operation ----------------------------------

def test_each_kernel_compiles_once_whatever_the_input_layout_or_integer_dtype():
    from solvers import safe_logsumexp
    from solvers.lse import _safe_kl_numba
    from solvers.transport import _bures_numba, bures_wasserstein_cdist

    rng = np.random.default_rng(4)
    a = rng.normal(size=(6, 40))
    ro = a.copy()
    ro.flags.writeable = False
    for x in (a, a.T.copy().T, ro, a[:, ::2], a.astype(np.float32), (a * 10).astype(int)):
        safe_logsumexp(x, 0.1, axis=1, backend="numba")
    assert len(_safe_kl_numba._solve_rows.signatures) == 1
    m, S = rng.normal(size=(5, 2)), _spd(rng, 5, 2)
    for dtype in (np.float64, np.float32):
        bures_wasserstein_cdist(m.astype(dtype), S.astype(dtype), m, S, backend="numba")
    bures_wasserstein_cdist(np.round(m).astype(int), S, m, S, backend="numba")
    assert len(_bures_numba._screened.signatures) == 1


@pytest.mark.parametrize("parallel", [True, False])
def test_bures_kernels_are_the_same_on_all_threads_and_on_one(parallel):
    from solvers.transport import _bures_numba, bures_kernels as bk
    import array_api_compat.numpy as cnp

    rng = np.random.default_rng(5)
    Q, N, d = 7, 9, 3
    qS, S = _spd(rng, Q, d), _spd(rng, N, d)
    qm, m = rng.normal(size=(Q, d)), rng.normal(size=(N, d))
    _, R, _ = bk.roots(qS, cnp)
    trq, trS = np.trace(qS, axis1=1, axis2=2), np.trace(S, axis1=1, axis2=2)
    W = rng.dirichlet(np.ones(N), size=Q)
    np.testing.assert_allclose(_bures_numba.cdist_full(qm, R, trq, m, S, trS,
                                                       parallel=parallel),
                               bk.cdist_full_xp(qm, R, trq, m, S, trS, cnp), rtol=1e-10)
    np.testing.assert_allclose(_bures_numba.weighted_root_sum(R, S, W, parallel=parallel),
                               bk.weighted_root_sum_xp(R, S, W, cnp), rtol=1e-10, atol=1e-13)
