"""The local covariance run of CBO's final polish (:mod:`solvers.optimize._cbo_local`)."""
import numpy as np
import pytest

from solvers import minimize_cbo
from solvers._lib.results import Status
from solvers.optimize import _cbo_generic as generic
from solvers.optimize import _cbo_refine
from solvers.optimize._cbo_bounds import reflect
from solvers.optimize import _cbo_local
from solvers.optimize._cbo_local import LocalRun, local_run, swarm_covariance, LOCAL_ESS
from solvers.optimize._polish import polish


def _weights(F):
    W, _ = generic.gibbs_weights(np.asarray(F)[None, :], None, 1.0, LOCAL_ESS, 1e300, np)
    return W[0]


def _ellipsoid(d, cond, seed):
    """Rotated ellipsoid ``sum_i cond^(i/(d-1)) z_i^2``, ``z = Q (x - 0.3)``; minimum 0."""
    Q, _ = np.linalg.qr(np.random.default_rng(seed).normal(size=(d, d)))
    scale = cond ** (np.arange(d) / (d - 1))

    def f(X):
        Z = (np.atleast_2d(X) - 0.3) @ Q.T
        return np.sum(scale * Z * Z, axis=1)
    return f


def _run(f, x0, budget, seed, cov=None, lb=None, ub=None, step=1e-6, fx=None):
    rng = np.random.default_rng(seed)
    box = None if lb is None else (lambda X: reflect(X, lb, ub, np))
    fx = float(f(x0[None, :])[0]) if fx is None else fx
    return local_run(f, _weights, x0, fx, cov, step, lb, ub, budget,
                     lambda shape: rng.normal(size=shape), box)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_local_run_solves_an_ill_conditioned_rotated_valley(seed):
    # condition 1e6, d = 8, from 1e-2 away: the run learns the covariance and reaches 1e-10
    # (f* = 0); L-BFGS-B with finite differences given the same budget stays far above
    d, budget = 8, 6000
    f = _ellipsoid(d, 1e6, seed)
    x0 = 0.3 + 1e-2 * np.random.default_rng(seed + 10).normal(size=d)
    x, fx, nfev = _run(f, x0, budget, seed)
    assert fx < 1e-10 and nfev <= budget
    assert abs(float(f(x)[0]) - fx) <= 1e-15 * (1 + fx)
    _, f_lbfgs, _ = polish(lambda z: float(f(z)[0]), x0, float(f(x0)[0]), None, None, budget)
    assert f_lbfgs > 1e3 * fx


def test_local_run_respects_budget_and_bounds():
    d = 5
    lb, ub = np.full(d, -1.0), np.full(d, 1.0)
    seen = []

    def f(X):
        seen.append(np.array(X))
        return np.sum((X - 0.999) ** 2, axis=1)  # optimum near the upper corner
    x0 = np.zeros(d)
    for budget in (1, 7, 13, 500):
        seen.clear()
        _, fx, nfev = _run(f, x0, budget, 0, lb=lb, ub=ub, step=0.5, fx=5 * 0.999 ** 2)
        pts = np.concatenate(seen)
        assert nfev == len(pts) <= budget
        assert np.all(pts >= lb) and np.all(pts <= ub)
    assert fx < 1e-6


def test_local_run_with_nonfinite_values_keeps_the_best():
    f = lambda X: np.where(X[:, 0] > 0.05, np.nan, np.sum(X * X, axis=1))
    x0 = np.full(3, 0.04)
    x, fx, nfev = _run(f, x0, 2000, 1, step=0.01)
    assert np.isfinite(fx) and fx < 1e-8 and x[0] <= 0.05 and nfev <= 2000


def _sharp_ridge(d, seed):
    """BBOB f13's shape, rotated: ``z_1^2 + 100 |z_{2:}|``, ``z = Q (x - 0.3)``; f* = 0.
    Its level sets grow ever thinner along ``z_1`` as the value falls."""
    Q, _ = np.linalg.qr(np.random.default_rng(seed).normal(size=(d, d)))

    def f(X):
        Z = (np.atleast_2d(X) - 0.3) @ Q.T
        return Z[:, 0] ** 2 + 100 * np.sqrt(np.sum(Z[:, 1:] ** 2, axis=1))
    return f


def _ridge_runs(seeds, d=10, budget=40_000):
    out = []
    for seed in seeds:
        x0 = np.random.default_rng(100 + seed).uniform(-2, 2, d)
        out.append(_run(_sharp_ridge(d, seed), x0, budget, seed, step=1.0)[1])
    return np.asarray(out)


@pytest.mark.slow
def test_a_run_stalled_on_a_sharp_ridge_regrows_and_reaches_the_minimum(monkeypatch):
    # with the default population a run's step collapses on the sharp ridge above the
    # minimum in some of the runs (seen over 8 seeds: 2 stall at 2e-9 and 4e-8, with their
    # spread just above the tolx floor, told from a smooth minimum by how slowly their
    # values' spread shrinks); going on from its best point with a larger population
    # reaches 1e-10 in 7 of them (the eighth stops by tolfun at 3e-10)
    seeds = range(8)
    with_regrow = _ridge_runs(seeds)
    assert np.sum(with_regrow < 1e-10) >= 7
    monkeypatch.setattr(_cbo_local, "REGROW", None)
    assert np.sum(_ridge_runs(seeds) > 1e-8) >= 1  # the stall the rule is for


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_order_of_the_values_fall_tells_a_kink_from_a_smooth_minimum(monkeypatch, seed):
    # f - f* falls as the distance squared at a smooth minimum (a rotated ellipsoid) and as
    # the distance on a kink (a rotated cone): the run's estimate of that order, from the
    # shrinking of its values' spread against its search's spread, is near 2 and near 1
    monkeypatch.setattr(_cbo_local, "REGROW", None)
    d = 6
    rng = np.random.default_rng(seed)
    bowl = _ellipsoid(d, 1e3, seed)
    Q, _ = np.linalg.qr(rng.normal(size=(d, d)))
    cone = lambda X: np.sqrt(np.sum(((np.atleast_2d(X) - 0.3) @ Q.T) ** 2, axis=1))
    orders = []
    for f in (bowl, cone):
        x0 = rng.uniform(-1, 1, d)
        run = LocalRun(f, _weights, x0, float(f(x0[None, :])[0]), None, 0.5, None, None,
                       lambda shape: rng.normal(size=shape), None)
        run.advance(30_000)
        orders.append(run._order())
    assert orders[0] > 1.7 and 0.7 < orders[1] < 1.3  # REGROW_ORDER = 1.5 between


@pytest.mark.parametrize("seed", [0, 1])
def test_a_smooth_minimum_or_a_face_of_the_box_never_regrows(seed):
    # at a smooth minimum ``tolfun`` fires with the spread near the square root of its
    # tolerance, far above the kink test; a minimum on a face is the box's, not a kink:
    # the run stops there with its own population (the regrowth costs no evaluation)
    d = 8
    rng = np.random.default_rng(seed)
    f = _ellipsoid(d, 1e6, seed)
    x0 = 0.3 + 1e-2 * rng.normal(size=d)
    run = LocalRun(f, _weights, x0, float(f(x0[None, :])[0]), None, 1e-6, None, None,
                   lambda shape: rng.normal(size=shape), None)
    _, fx, _ = run.advance(50_000)
    assert run.done and fx < 1e-10 and run.regrows == 0
    lb, ub = np.full(d, -1.0), np.full(d, 1.0)
    slope = lambda X: np.sum(X, axis=1)  # minimum at the corner lb
    run = LocalRun(slope, _weights, np.zeros(d), 0.0, None, 0.5, lb, ub,
                   lambda shape: rng.normal(size=shape), lambda X: reflect(X, lb, ub, np))
    _, fx, _ = run.advance(50_000)
    assert run.done and fx < -d + 1e-9 and run.regrows == 0


def test_swarm_covariance_is_the_weighted_covariance():
    rng = np.random.default_rng(0)
    P, W = rng.normal(size=(30, 4)), rng.dirichlet(np.ones(30))
    c = W @ P
    want = sum(w * np.outer(p - c, p - c) for w, p in zip(W, P))
    np.testing.assert_allclose(swarm_covariance(P, W, c), want, atol=1e-14)


def test_final_polish_reaches_1e_8_on_a_rotated_ellipsoid():
    # the BBOB f10 shape at d = 10 (condition 1e6, rotated), f* = 0: with the three-stage
    # final polish the defaults get below 1e-8 in 50k evaluations (a regression check)
    f = _ellipsoid(10, 1e6, 5)
    fv = lambda X: f(np.asarray(X).T)
    res = minimize_cbo(fv, bounds=[(-5, 5)] * 10, vectorized=True, maxfev=50_000, rng=0)
    assert res.fun < 1e-8 and res.nfev <= 50_000


def test_refinements_stay_within_maxfev_and_only_with_polish(monkeypatch):
    # every refinement gets at most what is left of maxfev; the last start's refinement
    # may use the reserve; polish=False never runs the local run
    calls = []
    real = LocalRun.advance

    def spy(self, budget, **kw):
        calls.append(budget)
        return real(self, budget, **kw)
    monkeypatch.setattr(LocalRun, "advance", spy)
    f = _ellipsoid(6, 1e4, 0)
    fv = lambda X: f(np.asarray(X).T)
    res = minimize_cbo(fv, bounds=[(-5, 5)] * 6, vectorized=True, maxfev=20_000, rng=1)
    assert len(calls) >= 2 and max(calls) <= 20_000 and res.nfev <= 20_000
    assert res.fun < 1e-8
    calls.clear()
    minimize_cbo(fv, bounds=[(-5, 5)] * 6, vectorized=True, maxfev=20_000, rng=1,
                 polish=False)
    assert calls == []


_PROBE = _cbo_refine.Refiner.probe


def _probe_spy(monkeypatch, early, near=None):
    """Run the defaults on a rotated ellipsoid (d = 5) with the probe's early end on or
    off (``near``: PROBE_NEAR_FTOL, the looser test; None: off); returns (result,
    [(value, evaluations, point) of each probe's answer])."""
    monkeypatch.setattr(_cbo_refine, "PROBE_EARLY", early)
    monkeypatch.setattr(_cbo_refine, "PROBE_NEAR_FTOL", near)
    probes = []

    def spy(self, *a, **kw):
        n0 = self.solver.nfev
        end = _PROBE(self, *a, **kw)
        probes.append((self.solver.answers[-1][0], self.solver.nfev - n0,
                       self.solver.answers[-1][1]))
        return end
    monkeypatch.setattr(_cbo_refine.Refiner, "probe", spy)
    f = _ellipsoid(5, 1e4, 3)
    res = minimize_cbo(lambda X: f(np.asarray(X).T), bounds=[(-5, 5)] * 5, vectorized=True,
                       rng=4)
    return res, probes


def test_a_probe_that_matches_the_best_answer_ends_early(monkeypatch):
    # the unimodal run ends after one probe either way; with the early end the probe stops
    # once it reaches the first answer's basin (its value within the tolerance that answer
    # paused at, FIRST_PAUSE_FTOL (1 + |f|), its point within 1e-3 of the box: the run
    # still ends as "agreed"), and the same draws up to that point make it strictly
    # cheaper; the answer is the first start's, refined to the end
    full, full_probes = _probe_spy(monkeypatch, False)
    early, early_probes = _probe_spy(monkeypatch, True)
    assert full.success and early.success and len(full_probes) == len(early_probes) == 1
    assert "basin of the best answer" in early.message
    value, _, point = early_probes[0]
    tol = max(_cbo_refine.BASIN_FTOL, _cbo_refine.FIRST_PAUSE_FTOL)
    assert early.fun < 1e-10 and value <= early.fun + tol * (1 + abs(early.fun))
    assert np.max(np.abs(point - early.x)) <= 1e-3 * 10
    assert value > early.fun  # it did stop before the last digits
    assert early_probes[0][1] < full_probes[0][1]
    assert early.nfev < full.nfev


def test_a_probe_that_has_reached_the_best_basin_ends_earlier_still(monkeypatch):
    # the looser test (point within 1e-2 of the box, value within 1e-3 relative, a smooth
    # bowl on the segment) ends the same probe, on the same draws, before the strict one:
    # the probe counts as ending in the best answer's basin (its answer is that answer),
    # and the answer is still the first start's, refined to full precision
    strict, strict_probes = _probe_spy(monkeypatch, True, None)
    near, near_probes = _probe_spy(monkeypatch, True, 1e-3)
    assert strict.success and near.success and len(near_probes) == 1
    assert "basin of the best answer" in near.message
    assert near_probes[0][1] < strict_probes[0][1] and near.nfev < strict.nfev
    assert near.fun < 1e-10


class _SegmentStub:
    """What :meth:`Refiner._near` reads: the objective on a batch, the box's scale."""

    def __init__(self, f):
        self._batch = f
        self.near_tries = 0
        self.kinks = 0
        self.solver = type("S", (), {"problem": type("P", (), {"scale": 10.0})()})()

    def tight(self):  # no run has stopped on a kink
        return False


@pytest.mark.parametrize("power,reached", [(2.0, True), (1.0, False), (0.5, False)])
def test_the_looser_basin_test_asks_for_a_smooth_bowl(power, reached):
    # f ~ |A (x - c)|^power from the minimum c to a point 5e-3 away: a smooth (rotated,
    # ill-conditioned) bowl rises as t^2 along the segment and passes; a kink (power 1,
    # Schaffer's rings) or a cusp rises faster near the minimum and fails
    rng = np.random.default_rng(0)
    A = np.linalg.qr(rng.normal(size=(4, 4)))[0] * np.array([1.0, 3.0, 10.0, 30.0])
    c = np.full(4, 0.2)

    x = c + 5e-3 * rng.uniform(-1, 1, 4)
    r_x = np.linalg.norm(A @ (x - c))

    def f(X):  # 5e-4 at x, within 1e-3 of the minimum's value 0
        return 5e-4 * (np.linalg.norm((np.atleast_2d(X) - c) @ A.T, axis=1) / r_x) ** power
    fx = float(f(x)[0])
    stub = _SegmentStub(f)
    assert fx <= 1e-3 and _cbo_refine.Refiner._near(stub, fx, x, 0.0, c) is reached
    assert stub.near_tries == 1
    # too far (beyond 1e-2 of the box) or too high: no test, no evaluation
    assert not _cbo_refine.Refiner._near(stub, fx, c + 0.2, 0.0, c)
    assert not _cbo_refine.Refiner._near(stub, 0.01, x, 0.0, c) and stub.near_tries == 1


@pytest.mark.parametrize("near_all", [True, False])
def test_a_probe_that_reaches_a_worse_known_basin_has_missed(monkeypatch, near_all):
    # two answers, the best at 0 and a worse one (value 1) in a smooth bowl at c: a probe
    # whose best lies 5e-3 from c, 5e-4 above its value, still falling, has reached that
    # basin by the looser test and ends, counted as that answer (PROBE_NEAR_ALL); without
    # that test it is neither a match nor (still falling) a miss and goes on
    monkeypatch.setattr(_cbo_refine, "PROBE_NEAR_ALL", near_all)
    c = np.full(3, 2.0)

    def f(X):
        return 1.0 + 20.0 * np.sum((np.atleast_2d(X) - c) ** 2, axis=1)
    stub = _SegmentStub(f)
    stub.solver.cfg = type("C", (), {"ftol": 0.0})()
    worse = (1.0, c, 1e-7)
    stub.solver.answers = [(0.0, np.zeros(3), 1e-7), worse]
    x = c + 5e-3 * np.array([1.0, 0.0, 0.0])
    verdict = _cbo_refine.Refiner._probe_verdict(stub)
    stub._near = lambda *a: _cbo_refine.Refiner._near(stub, *a)
    stub.reached = None
    ended = verdict(x, float(f(x)[0]), x, 1e-3, 0.1)
    assert ended is near_all
    assert (stub.reached is worse) is near_all


def test_the_final_reserve_is_spent_when_a_probe_finds_the_budget_gone(monkeypatch):
    # maxfev = 6000 on a rotated ellipsoid (d = 10, condition 1e6): the starts use the
    # 5400 evaluations before the reserve, the next probe finds none left and the last
    # refinement spends the reserve (600) on the best point of all starts
    calls = []
    real = _cbo_refine.Refiner.refine_best

    def spy(self):
        calls.append(self.solver.nfev)
        return real(self)
    monkeypatch.setattr(_cbo_refine.Refiner, "refine_best", spy)
    f = _ellipsoid(10, 1e6, 5)
    res = minimize_cbo(lambda X: f(np.asarray(X).T), bounds=[(-5, 5)] * 10, vectorized=True,
                       maxfev=6000, rng=0)
    assert calls == [5400] and 5400 < res.nfev <= 6000 and res.status == Status.MAXFEV
    assert res.fun < 1e-8


def test_a_covariance_start_is_refined_from_the_identity_with_the_swarms_width(monkeypatch):
    # the first covariance start ends after 2.5 % of maxfev, before it has collapsed: its
    # refinement starts from the identity (times the swarm's mean variance) with the
    # swarm's rms width as its step, far above the 1e-4 of the box of a collapsed start
    calls = []
    real = LocalRun.__init__

    def spy(self, fb, weights, x, fx, cov, step, lb, ub, normal, reflect, **kw):
        calls.append((cov, step, kw.get("cap_step", True)))
        real(self, fb, weights, x, fx, cov, step, lb, ub, normal, reflect, **kw)
    monkeypatch.setattr(LocalRun, "__init__", spy)
    f = _ellipsoid(6, 1e2, 1)
    minimize_cbo(lambda X: f(np.asarray(X).T), bounds=[(-5, 5)] * 6, vectorized=True,
                 maxfev=20_000, rng=2)
    cov, step, cap = calls[0]
    d = cov.shape[0]
    width = np.sqrt(np.trace(cov) / d)
    assert np.allclose(cov, np.eye(d) * cov[0, 0]) and cov[0, 0] > 0
    assert cap and step == pytest.approx(10.0)  # the cap is the swarm's width itself
    assert 1e-4 * 10.0 < width < 10.0


def test_a_local_run_stopped_at_a_loose_tolerance_resumes_where_it_stopped():
    # stopping at tolfun 1e-6 and resuming draws the same points as one run straight
    # through: the same answer, bit for bit, and the same evaluations in total
    d = 6
    f = _ellipsoid(d, 1e4, 2)
    x0 = np.full(d, 1.0)
    fx = float(f(x0[None, :])[0])
    straight = _run(f, x0, 20_000, 7, step=0.5)
    rng = np.random.default_rng(7)
    run = LocalRun(f, _weights, x0, fx, None, 0.5, None, None,
                   lambda shape: rng.normal(size=shape), None)
    _, f_loose, n_loose = run.advance(20_000, ftol=1e-6)
    assert not run.done and 1e-14 < f_loose < 1e-5  # stopped early, in the basin
    x, f_end, n_rest = run.advance(20_000 - n_loose)
    assert run.done and f_end == straight[1] and n_loose + n_rest == straight[2]
    np.testing.assert_array_equal(x, straight[0])


def test_the_first_pause_asks_for_a_geometric_fall():
    # a run converging linearly (values 10^(-g/10) above the minimum) loses 100 times less
    # per window than in the window before and may pause; one creeping on at a steady pace
    # (the same loss per window, as a shape still being learned) may not, and neither may
    # a run with fewer than two windows of history
    from types import SimpleNamespace
    w = 20
    g = np.arange(2 * w)
    converging = SimpleNamespace(window=w, bests=list(5.0 + 10.0 ** (-g / 10.0)))
    creeping = SimpleNamespace(window=w, bests=list(5.0 - 1e-3 * g))
    short = SimpleNamespace(window=w, bests=converging.bests[:2 * w - 1])
    assert LocalRun._falling(converging, 0.1)
    assert not LocalRun._falling(creeping, 0.1)
    assert not LocalRun._falling(short, 0.1)


def test_a_paused_answer_shares_its_basin_with_a_finished_one():
    # the first start's answer pauses at FIRST_PAUSE_FTOL, so a finished answer of its
    # basin lies below it by more than the basin test's 1e-6 relative; the paused answer's
    # own tolerance joins the two (one basin found twice), while without it, or with the
    # points a Rastrigin neighbour apart, they stay two basins
    from types import SimpleNamespace
    from solvers.optimize._cbo_solver import CBOSolver

    def basins(paused, shift):
        x = np.full(3, 0.5)
        stub = SimpleNamespace(cfg=SimpleNamespace(ftol=0.0),
                               problem=SimpleNamespace(scale=10.0),
                               refiner=SimpleNamespace(tight=lambda: False),
                               answers=[(2.0 + 1e-4, x + shift, paused), (2.0, x, 0.0)])
        return [b[2] for b in CBOSolver._basins(stub)]
    assert basins(_cbo_refine.FIRST_PAUSE_FTOL, 1e-3) == [2]
    assert basins(_cbo_refine.LOOSE_FTOL, 1e-3) == [1, 1]
    assert basins(_cbo_refine.FIRST_PAUSE_FTOL, 1.0) == [1, 1]


def test_with_restarts_only_the_best_answer_is_refined_to_full_precision(monkeypatch):
    # every local run of a run with restarts stops at LOOSE_FTOL (the first start's
    # refinement at FIRST_PAUSE_FTOL); at the end, unless the run holding the best answer
    # already converged fully, it alone is resumed (a run seen before) to full precision
    calls = []
    real = LocalRun.advance

    def spy(self, budget, stop=None, ftol=_cbo_local.LOCAL_FTOL, **kw):
        out = real(self, budget, stop=stop, ftol=ftol, **kw)
        calls.append((id(self), ftol, out[1], self.done))
        return out
    monkeypatch.setattr(LocalRun, "advance", spy)
    resumed = 0
    for seed in range(6):  # the first refinement of a small run often converges fully
        calls.clear()
        f = _ellipsoid(5, 1e4, seed)
        res = minimize_cbo(lambda X: f(np.asarray(X).T), bounds=[(-5, 5)] * 5,
                           vectorized=True, rng=seed)
        assert res.success and res.fun < 1e-10
        *loose, last = calls
        assert loose[0][1] == _cbo_refine.FIRST_PAUSE_FTOL
        assert all(ftol == _cbo_refine.LOOSE_FTOL for _, ftol, _, _ in loose[1:])
        if last[1] == _cbo_local.LOCAL_FTOL:
            resumed += 1
            assert last[0] in {run for run, _, _, _ in loose} and last[3]
            assert min(value for _, _, value, _ in loose) > res.fun == last[2]
        else:  # the best answer's run converged fully by itself: nothing to resume
            assert any(done and value == res.fun for _, _, value, done in calls)
    assert resumed >= 2
