"""scale_qubos, scalarize, pareto_front, hypervolume, pareto_sweep."""
import itertools

import numpy as np
import pytest
import scipy.sparse as sps

from solvers import scale_qubos
from solvers.qubo import hypervolume, pareto_front, pareto_sweep, qubo_energy, scalarize
from solvers.qubo.pareto import weight_grid


def all_states(n, spin=False):
    X = np.array(list(itertools.product([0, 1], repeat=n)))
    return 2 * X - 1 if spin else X


@pytest.mark.parametrize("vartype", ["binary", "spin"])
def test_variance_scaling_gives_unit_variance(vartype):
    rng = np.random.default_rng(0)
    n = 9
    objs = [(rng.normal(size=(n, n)) * 50, rng.normal(size=n), 3.0),
            sps.csr_matrix(rng.normal(size=(n, n)) * (rng.uniform(size=(n, n)) < 0.4)),
            rng.uniform(size=(n, n)) * 1e4]
    X = all_states(n, vartype == "spin")
    scaled, s = scale_qubos(objs, vartype=vartype)
    for obj, sc, t in zip(objs, scaled, s):
        f = qubo_energy(obj, X, vartype=vartype)
        g = qubo_energy(sc, X, vartype=vartype)
        assert np.var(g) == pytest.approx(1.0, rel=1e-12)
        assert t == pytest.approx(np.std(f), rel=1e-12)
        np.testing.assert_allclose(g * t, f, rtol=1e-12, atol=1e-9 * np.abs(f).max())
    # fixed Hamming weight measure
    scaled, s = scale_qubos(objs, weight=4, vartype=vartype)
    hw = np.sum(X == 1, axis=1) == 4
    for sc in scaled:
        assert np.var(qubo_energy(sc, X[hw], vartype=vartype)) == pytest.approx(1.0, rel=1e-12)


def test_maxabs_matches_dimod_normalize():
    rng = np.random.default_rng(1)
    n = 6
    Q = rng.normal(size=(n, n))
    c = rng.normal(size=n) * 3
    _, s = scale_qubos([(Q, c)], method="maxabs")
    W = Q + Q.T
    expected = max(np.abs(np.diag(Q) + c).max(), np.abs(W[np.triu_indices(n, 1)]).max())
    assert s[0] == pytest.approx(expected)
    dimod = pytest.importorskip("dimod")
    bqm = dimod.BQM.from_qubo({(i, j): Q[i, j] for i in range(n) for j in range(n)})
    bqm.add_linear_from({i: c[i] for i in range(n)})
    scalar = bqm.copy().normalize()
    assert s[0] == pytest.approx(1.0 / scalar)
    _, s2 = scale_qubos([bqm], method="maxabs")
    assert s2[0] == pytest.approx(expected)
    _, s3 = scale_qubos([Q, 2 * Q], method="none")
    assert s3.tolist() == [1.0, 1.0]


def test_scalarize_is_the_weighted_sum():
    rng = np.random.default_rng(2)
    n = 7
    objs = [(rng.normal(size=(n, n)), rng.normal(size=n), 1.5), rng.normal(size=(n, n)),
            sps.random(n, n, density=0.5, random_state=3, format="csr")]
    w = np.array([0.2, -1.0, 3.0])
    X = all_states(n)
    Q, c, off = scalarize(objs, w)
    expected = sum(wk * qubo_energy(o, X) for wk, o in zip(w, objs))
    np.testing.assert_allclose(qubo_energy((Q, c, off), X), expected, rtol=1e-12, atol=1e-12)
    sparse_only = scalarize(objs[2:] * 2, [1.0, 1.0])
    assert sps.issparse(sparse_only[0])


def test_pareto_front_and_hypervolume_against_definitions():
    rng = np.random.default_rng(3)
    for k in (2, 3, 4):
        for _ in range(5):
            m = 9
            P = rng.integers(0, 6, size=(m, k)).astype(float)
            ref = np.full(k, 6.5)
            mask = pareto_front(P)
            for i in range(m):
                dominated = any(np.all(P[j] <= P[i]) and np.any(P[j] < P[i]) for j in range(m))
                duplicate = any(np.all(P[j] == P[i]) for j in range(i))
                assert mask[i] == (not dominated and not duplicate)
            # inclusion-exclusion over all subsets
            hv = 0.0
            for size in range(1, m + 1):
                for S in itertools.combinations(range(m), size):
                    corner = P[list(S)].max(axis=0)
                    hv += (-1) ** (size + 1) * np.prod(np.clip(ref - corner, 0, None))
            assert hypervolume(P, ref) == pytest.approx(hv, rel=1e-12, abs=1e-12)
    assert hypervolume([[5.0, 5.0]], [4.0, 4.0]) == 0.0
    with pytest.raises(ValueError):
        hypervolume([[1.0, np.nan]], [2.0, 2.0])


def test_weight_grid():
    W = weight_grid(3, 5)
    assert W.shape == (15, 3)
    np.testing.assert_allclose(W.sum(axis=1), 1.0)
    assert len({tuple(r) for r in W}) == 15


@pytest.mark.parametrize("scaling", ["variance", "maxabs", "none"])
def test_sweep_points_are_pareto_optimal(scaling):
    """Each weighted optimum is a supported Pareto point of the exact front (n = 10)."""
    rng = np.random.default_rng(4)
    n = 10
    f1 = (rng.normal(size=(n, n)), rng.normal(size=n))
    f2 = 30.0 * rng.uniform(size=(n, n))
    res = pareto_sweep([f1, f2], weights=9, scaling=scaling, rng=0, n_reads=8, n_sweeps=200)
    X = all_states(n)
    F = np.column_stack([qubo_energy(f1, X), qubo_energy(f2, X)])
    exact = F[pareto_front(F)]
    for y in res.front:
        assert np.any(np.all(np.isclose(exact, y, atol=1e-9), axis=1)), y
    assert res.front.shape[0] >= 2
    assert res.hypervolume <= hypervolume(exact, res.reference) + 1e-9
    np.testing.assert_allclose(res.objective_values[:, 0], qubo_energy(f1, res.solutions))


def test_variance_scaling_spreads_the_front():
    """A badly scaled pair: unit variance covers more of the front than no scaling."""
    rng = np.random.default_rng(5)
    n = 12
    f1 = -rng.uniform(size=(n, n))                    # scale ~ 1
    f2 = 1e3 * (np.ones((n, n)) - 2 * np.eye(n) * 5)  # scale ~ 1e3, pulls toward ~5 ones
    kw = dict(weights=11, rng=0, n_reads=8, n_sweeps=200)
    runs = {s: pareto_sweep([f1, f2], scaling=s, **kw) for s in ("variance", "none")}
    ref = np.max(np.vstack([r.objective_values for r in runs.values()]), axis=0) + 1.0
    hv = {s: hypervolume(r.objective_values, ref) for s, r in runs.items()}
    assert hv["variance"] > hv["none"]
    assert len(runs["variance"].front) > len(runs["none"].front)


def test_bad_input():
    with pytest.raises(ValueError, match="method"):
        scale_qubos([np.eye(2)], method="l2")
    with pytest.raises(ValueError, match="constant"):
        scale_qubos([np.zeros((2, 2))])
    with pytest.raises(ValueError, match="same number"):
        scale_qubos([np.eye(2), np.eye(3)])
    with pytest.raises(ValueError, match="weights"):
        pareto_sweep([np.eye(2), -np.eye(2)], weights=np.ones((3, 3)))
    with pytest.raises(ValueError, match="weights"):
        scalarize([np.eye(2), -np.eye(2)], [1.0])
    with pytest.raises(ValueError, match="scaling"):
        pareto_sweep([np.eye(2)], scaling="bogus")
    with pytest.raises(TypeError):
        scale_qubos(3.0)
    for bad in (np.array([[1.0 + 1j, 2.0]]), [["a", "b"]]):
        with pytest.raises(TypeError, match="points"):
            pareto_front(bad)
        with pytest.raises(TypeError, match="points"):
            hypervolume(bad, [5.0, 5.0])
    with pytest.raises(TypeError, match="reference"):
        hypervolume([[1.0, 2.0]], [5.0 + 0j, 5.0])
    # a single (n, n) matrix is not a sequence of objectives (the docstring says TypeError)
    with pytest.raises(TypeError, match="objectives must be a sequence"):
        scale_qubos(np.eye(3))
    with pytest.raises(TypeError, match="objectives must be a sequence"):
        scale_qubos(sps.eye(3, format="csr"))
    with pytest.raises(TypeError, match="objectives must be a sequence"):
        scalarize({(0, 1): 1.0}, [1.0])
    with pytest.raises(ValueError, match="p must be in"):
        scale_qubos([np.eye(2)], p=2.0)


def test_sweep_with_cardinality_penalty():
    """Every solution keeps exactly k ones; with the relative penalty (the default) they lie
    on the exact constrained front. (A fixed penalty 1e3 times the objectives' scale only
    guarantees feasibility: every 1-flip local minimum is feasible, but at temperatures
    where the penalty moves are still accepted the objective is noise.)"""
    rng = np.random.default_rng(6)
    n, k = 10, 4
    f1 = (np.zeros((n, n)), -rng.uniform(1, 10, size=n))
    f2 = rng.normal(size=(n, n))
    penalty = (np.ones((n, n)), -2.0 * k * np.ones(n), float(k * k))
    X = all_states(n)
    X = X[X.sum(axis=1) == k]
    F = np.column_stack([qubo_energy(f1, X), qubo_energy(f2, X)])
    exact = F[pareto_front(F)]
    for scale in ("relative", 1e3):
        res = pareto_sweep([f1, f2], weights=7, penalty=penalty, penalty_scale=scale, weight=k,
                           rng=0, n_reads=8, n_sweeps=300)
        assert np.all(res.solutions.sum(axis=1) == k)
        if scale == "relative":
            for y in res.front:
                assert np.any(np.all(np.isclose(exact, y, atol=1e-9), axis=1)), y
    with pytest.raises((TypeError, ValueError), match="penalty_scale"):
        pareto_sweep([f1, f2], penalty=penalty, penalty_scale=-1.0)


def test_min_weight_gives_pareto_optimal_extremes():
    n = 8
    f1 = (np.zeros((n, n)), -np.eye(n)[0])            # only bit 0 matters
    f2 = (np.zeros((n, n)), np.r_[0.0, np.ones(n - 1)])  # the others should be off
    W = np.array([[1.0, 0.0], [0.0, 1.0]])
    res = pareto_sweep([f1, f2], weights=W, rng=0, n_reads=4, n_sweeps=50)
    assert res.objective_values[0].tolist() == [-1.0, 0.0]
    loose = pareto_sweep([f1, f2], weights=W, rng=0, n_reads=4, n_sweeps=50, min_weight=0.0)
    assert loose.objective_values[0, 0] == -1.0  # weakly optimal: f2 is left to chance
    with pytest.raises(ValueError, match="min_weight"):
        pareto_sweep([f1, f2], weights=W, min_weight=2.0)


def test_input_errors_name_the_public_argument():
    Q = np.eye(3)
    bad = Q.copy()
    bad[0, 1] = np.nan
    for call in (lambda: scale_qubos([Q, bad]), lambda: scalarize([Q, bad], [1.0, 1.0])):
        with pytest.raises(ValueError, match=r"objectives\[1\] must be finite"):
            call()
    with pytest.raises(ValueError, match=r"c of objective must have shape \(3,\)"):
        qubo_energy((Q, np.zeros(2)), np.zeros(3))
    with pytest.raises(ValueError, match="weights must be >= 1"):
        pareto_sweep([Q, -Q], weights=0)


def test_qubo_energy_checks_states_against_the_vartype():
    Q = np.array([[1.0, 2.0], [0.0, -1.0]])
    np.testing.assert_allclose(qubo_energy(Q, [[1, -1], [-1, -1]], vartype="spin"),
                               [-2.0, 2.0])  # s^T Q s, by hand
    with pytest.raises(ValueError, match="X must hold spin values"):
        qubo_energy(Q, [[0, 1]], vartype="spin")
    with pytest.raises(ValueError, match="X must hold binary values"):
        qubo_energy(Q, [[0.5, 1.0]])
    with pytest.raises(ValueError, match=r"X must have shape \(2,\) or \(m, 2\)"):
        qubo_energy(Q, np.zeros((2, 2, 2)))


def test_pareto_front_refuses_non_finite_points():
    for value in (np.nan, np.inf, -np.inf):
        with pytest.raises(ValueError, match="points must be finite"):
            pareto_front([[0.0, 1.0], [value, 0.0]])


@pytest.mark.parametrize("tqdm_installed", [True, False])
def test_sweep_shows_one_progress_bar(capsys, monkeypatch, tqdm_installed):
    # one bar for the whole sweep, not one per weight vector: every bar (tqdm's or the
    # plain fallback) ends with its own newline and names its caller
    if not tqdm_installed:
        import solvers._lib.results as results
        monkeypatch.setattr(results, "_tqdm_bar", lambda *a: None)
    f1 = np.diag([-1.0, -2.0, -3.0])
    f2 = 100.0 * np.ones((3, 3))
    quiet = pareto_sweep([f1, f2], weights=5, n_sweeps=20, rng=0)
    assert capsys.readouterr().err == ""
    shown = pareto_sweep([f1, f2], weights=5, n_sweeps=20, rng=0, progress=True)
    err = capsys.readouterr().err
    lines = [line for line in err.split("\n") if line.strip()]
    assert len(lines) == 1, err
    assert "pareto_sweep" in lines[0] and "5/5" in lines[0] and "anneal" not in err
    np.testing.assert_array_equal(shown.solutions, quiet.solutions)
