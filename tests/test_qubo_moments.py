"""qubo_moments against brute-force enumeration (every measure, vartype and input form)."""
import itertools
import math
import zlib

import numpy as np
import pytest
import scipy.sparse as sps

from solvers import qubo_moments
from tests.conftest import to_numpy
from naive import qubo_moments_enumerated


def close(actual, expected, rtol=1e-12, scale=None):
    scale = max(abs(expected), 1.0) if scale is None else scale
    assert abs(float(actual) - expected) <= rtol * scale, (float(actual), expected)


def random_instance(rng, n, linear, density=1.0):
    Q = rng.normal(size=(n, n))
    if density < 1:
        Q = Q * (rng.uniform(size=(n, n)) < density)
    c = rng.normal(size=n) if linear else None
    return Q, c, float(rng.normal())


MEASURES = [("uniform", {}), ("bernoulli-scalar", {"p": 0.3}), ("bernoulli-vector", "vec"),
            ("weight", "w")]


@pytest.mark.parametrize("vartype", ["binary", "spin"])
@pytest.mark.parametrize("linear", [True, False])
@pytest.mark.parametrize("form", ["dense", "sparse", "dict"])
def test_every_measure_matches_enumeration(vartype, linear, form):
    rng = np.random.default_rng(zlib.crc32(f"{vartype}-{linear}-{form}".encode()))
    for n in (1, 2, 3, 4, 7, 11):
        Q, c, off = random_instance(rng, n, linear, density=0.5 if form != "dense" else 1.0)
        if form == "dense":
            Qin = Q
        elif form == "sparse":
            Qin = sps.csr_matrix(Q)
        else:
            Qin = {(i, j): Q[i, j] for i in range(n) for j in range(n) if Q[i, j] != 0}
            if not Qin:
                continue
            Qin[(n - 1, n - 1)] = Qin.get((n - 1, n - 1), 0.0)  # fixes n
        cases = [({}, {}), ({"p": 0.3}, {"p": 0.3})]
        pv = rng.uniform(size=n)
        cases.append(({"p": pv}, {"p": pv}))
        cases += [({"weight": k}, {"weight": k}) for k in range(n + 1)]
        for kwargs, ref_kwargs in cases:
            got = qubo_moments(Qin, c, off, vartype=vartype, **kwargs)
            mean, var = qubo_moments_enumerated(Q, c, off, vartype, **ref_kwargs)
            scale = max(1.0, float(np.abs(Q).sum() + (0 if c is None else np.abs(c).sum())))
            close(got.mean, mean, scale=scale)
            close(got.var, var, scale=scale ** 2)
            assert isinstance(got.mean, float) and isinstance(got.var, float)


@pytest.mark.parametrize("vartype", ["binary", "spin"])
def test_n16_relative_1e12(vartype):
    """The bar: 1e-12 relative at n = 16 for every measure, dense and sparse."""
    rng = np.random.default_rng(16)
    n = 16
    Q, c, off = random_instance(rng, n, True)
    Qs = sps.csr_matrix(Q * (rng.uniform(size=(n, n)) < 0.3))
    X = np.array(list(itertools.product([0.0, 1.0], repeat=n)))
    Z = 2 * X - 1 if vartype == "spin" else X
    for Qm in (Q, Qs):
        Qd = Qm.toarray() if sps.issparse(Qm) else Qm
        f = np.einsum("si,ij,sj->s", Z, Qd, Z) + Z @ c + off
        hw = X.sum(axis=1)
        pv = rng.uniform(0.05, 0.95, size=n)
        probs = np.prod(np.where(X == 1, pv, 1 - pv), axis=1)
        refs = [({}, np.full(len(f), 1.0 / len(f))), ({"p": pv}, probs / probs.sum())]
        refs += [({"weight": k}, (hw == k) / np.sum(hw == k)) for k in (0, 1, 5, 8, 15, 16)]
        for kwargs, w in refs:
            mean = math.fsum(w * f)
            var = math.fsum(w * (f - mean) ** 2)
            got = qubo_moments(Qm, c, off, vartype=vartype, **kwargs)
            assert abs(got.mean - mean) <= 1e-12 * max(abs(mean), np.sqrt(var), 1.0)
            if var > 0:
                assert abs(got.var - var) <= 1e-12 * var, (kwargs, got.var, var)
            else:
                assert abs(got.var) <= 1e-12 * np.abs(Qd).sum() ** 2


def test_stack_and_namespaces(xp, dtype_name):
    rng = np.random.default_rng(3)
    k, n = 3, 6
    Qs = rng.normal(size=(k, n, n))
    cs = rng.normal(size=(k, n))
    offs = rng.normal(size=k)
    dtype = getattr(xp, dtype_name)
    Qx = xp.asarray(Qs.astype(dtype_name))
    cx = xp.asarray(cs.astype(dtype_name))
    ox = xp.asarray(offs.astype(dtype_name))
    rtol = 1e-12 if dtype_name == "float64" else 2e-5
    for kwargs in ({}, {"p": 0.25}, {"weight": 2}):
        got = qubo_moments(Qx, cx, ox, **kwargs)
        assert got.mean.dtype == dtype and tuple(got.mean.shape) == (k,)
        for t in range(k):
            mean, var = qubo_moments_enumerated(Qs[t], cs[t], offs[t], **kwargs)
            scale = np.abs(Qs[t]).sum() + np.abs(cs[t]).sum()
            np.testing.assert_allclose(to_numpy(got.mean)[t], mean, rtol=0, atol=rtol * scale)
            np.testing.assert_allclose(to_numpy(got.var)[t], var, rtol=0,
                                       atol=rtol * scale ** 2)
    # per-objective probabilities on a stack
    P = rng.uniform(size=(k, n))
    got = qubo_moments(Qx, cx, ox, p=xp.asarray(P.astype(dtype_name)))
    for t in range(k):
        mean, var = qubo_moments_enumerated(Qs[t], cs[t], offs[t], p=P[t])
        np.testing.assert_allclose(to_numpy(got.var)[t], var, rtol=10 * rtol)
    # a single matrix on a non-numpy namespace returns 0-d arrays
    single = qubo_moments(Qx[0, ...], cx[0, ...])
    mean, var = qubo_moments_enumerated(Qs[0], cs[0], 0.0)
    np.testing.assert_allclose(float(single.var), var, rtol=10 * rtol)


def test_sparse_equals_dense_large():
    rng = np.random.default_rng(5)
    n = 1500
    S = sps.random(n, n, density=0.005, random_state=rng, format="csr",
                   data_rvs=rng.standard_normal)
    c = rng.normal(size=n)
    D = S.toarray()
    for kwargs in ({}, {"p": rng.uniform(size=n)}, {"weight": 300}):
        for vt in ("binary", "spin"):
            a = qubo_moments(S, c, 1.0, vartype=vt, **kwargs)
            b = qubo_moments(D, c, 1.0, vartype=vt, **kwargs)
            np.testing.assert_allclose([a.mean, a.var], [b.mean, b.var], rtol=1e-11)


def test_no_cancellation_for_large_positive_objectives():
    """Variance stays exact when the mean dwarfs the spread (shifted, all-positive Q)."""
    rng = np.random.default_rng(7)
    n = 10
    Q = rng.uniform(size=(n, n)) + 100.0
    for kwargs in ({}, {"weight": 4}):
        got = qubo_moments(Q, None, 1e6, **kwargs)
        mean, var = qubo_moments_enumerated(Q, None, 1e6, **kwargs)
        assert abs(got.var - var) <= 1e-10 * var


def test_cardinality_penalty_is_constant_on_its_slice():
    n, k = 12, 5
    # (sum x - k)^2 = x^T (11^T) x - 2k 1^T x + k^2
    Q = np.ones((n, n))
    c = -2.0 * k * np.ones(n)
    got = qubo_moments(Q, c, k ** 2, weight=k)
    assert got.mean == pytest.approx(0.0, abs=1e-10) and abs(got.var) < 1e-10
    got = qubo_moments(sps.csr_matrix(Q), c, k ** 2, weight=k)
    assert abs(got.mean) < 1e-10 and abs(got.var) < 1e-8
    assert qubo_moments(Q, c, k ** 2, weight=k + 1).mean == pytest.approx(1.0)


def test_bqm_input():
    dimod = pytest.importorskip("dimod")
    rng = np.random.default_rng(11)
    n = 7
    for vt in ("BINARY", "SPIN"):
        bqm = dimod.BinaryQuadraticModel(vt)
        for i in range(n):
            bqm.add_linear(f"v{i}", rng.normal())
        for i in range(n):
            for j in range(i + 1, n):
                if rng.uniform() < 0.6:
                    bqm.add_quadratic(f"v{i}", f"v{j}", rng.normal())
        bqm.offset = 0.7
        values = [0, 1] if vt == "BINARY" else [-1, 1]
        samples = list(itertools.product(values, repeat=n))
        labels = list(bqm.variables)
        energies = bqm.energies((np.array(samples), labels))
        hw = np.sum(np.array(samples) == 1, axis=1)
        got = qubo_moments(bqm)
        assert got.mean == pytest.approx(energies.mean(), rel=1e-12, abs=1e-12)
        assert got.var == pytest.approx(energies.var(), rel=1e-12)
        got = qubo_moments(bqm, weight=3)
        assert got.var == pytest.approx(energies[hw == 3].var(), rel=1e-12)


def test_dict_with_labels():
    Q = {("a", "b"): 2.0, ("a", "a"): -1.0, ("b", "c"): 0.5}
    M = np.array([[-1.0, 2.0, 0.0], [0.0, 0.0, 0.5], [0.0, 0.0, 0.0]])
    got = qubo_moments(Q)
    mean, var = qubo_moments_enumerated(M, None, 0.0)
    assert got.mean == pytest.approx(mean, abs=1e-14) and got.var == pytest.approx(var, rel=1e-13)


@pytest.mark.parametrize("bad, kwargs, match", [
    (np.ones((3, 4)), {}, "square"),
    (np.ones(3), {}, "dimension"),
    (np.array([[1.0, np.nan], [0.0, 1.0]]), {}, "finite"),
    (sps.csr_matrix(np.array([[1.0, np.inf], [0.0, 1.0]])), {}, "finite"),
    (np.eye(3), {"p": 1.5}, "p must be in"),
    (np.eye(3), {"p": -0.1}, "p must be in"),
    (np.eye(3), {"p": float("nan")}, "p must be in"),
    (np.eye(3), {"p": np.array([0.5, 0.5, 2.0])}, "p must be in"),
    (np.eye(3), {"p": np.array([0.5, 0.5])}, "shape"),
    (np.eye(3), {"weight": 4}, "weight must be in"),
    (np.eye(3), {"weight": -1}, "weight must be >= 0"),
    (np.eye(3), {"weight": 1, "p": 0.5}, "not both"),
    (np.eye(3), {"c": np.ones(2)}, "c must have shape"),
    (np.eye(3), {"c": np.array([1.0, np.nan, 0.0])}, "finite"),
    (np.eye(3), {"vartype": "ising"}, "vartype"),
])
def test_bad_input(bad, kwargs, match):
    with pytest.raises(ValueError, match=match):
        qubo_moments(bad, **kwargs)


def test_bad_types():
    with pytest.raises(TypeError):
        qubo_moments(np.eye(3), weight=1.5)
    with pytest.raises(TypeError):
        qubo_moments({(0,): 1.0})
