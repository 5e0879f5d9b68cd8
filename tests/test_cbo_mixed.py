"""CBO with ``noise="mixed"``: a noise whose last start found no better value gives its turn
to the other noise while the other's last start did (:data:`._cbo_solver.MIXED_SKIP`), and a
diagonal start too slow to reach the best answer ends (:data:`._cbo_solver.DIAG_MISS`)."""
from types import SimpleNamespace

import numpy as np
import pytest

from solvers import minimize_cbo
from solvers.optimize import _cbo_solver

OTHER = {"covariance": "anisotropic", "anisotropic": "covariance"}


def _rotated_rastrigin(d, half_width, seed):
    """Rastrigin's function of ``z = Q (x - o)``, ``Q`` a random rotation, ``o`` uniform in
    80 % of the box: ``f = 10 d + sum_i (z_i^2 - 10 cos(2 pi z_i))``, ``f(o) = 0``. On a
    wide box the anisotropic starts stall while the covariance ones keep descending."""
    g = np.random.default_rng(seed)
    Q, _ = np.linalg.qr(g.standard_normal((d, d)))
    o = g.uniform(-0.8 * half_width, 0.8 * half_width, d)

    def f(X):
        Z = Q @ (np.asarray(X) - o[:, None])
        return 10.0 * d + np.sum(Z ** 2 - 10.0 * np.cos(2.0 * np.pi * Z), axis=0)
    return f


def _swarm_starts(monkeypatch, f, d, half_width, seed):
    """``(noise, gains so far)`` of every swarm start of one run of ``f``, in order."""
    starts = []
    real = _cbo_solver.CBOSolver._new_swarm

    def spy(self, noise):
        starts.append((noise, dict(self.gained)))
        return real(self, noise)
    monkeypatch.setattr(_cbo_solver.CBOSolver, "_new_swarm", spy)
    minimize_cbo(f, bounds=[(-half_width, half_width)] * d, vectorized=True,
                 maxfev=10_000 * d, rng=seed)
    return starts


@pytest.mark.parametrize("skip", [True, False])
def test_a_noise_that_gained_nothing_gives_its_turn(monkeypatch, skip):
    # every swarm start after the first obeys the rule; and over these seeds the rule
    # had to act (a start whose noise had gained nothing while the other had): with
    # MIXED_SKIP off, such starts run anyway and the test fails
    monkeypatch.setattr(_cbo_solver, "MIXED_SKIP", skip)
    d, half_width, passed_over, broken = 8, 50.0, 0, 0
    for seed in range(3):
        starts = _swarm_starts(monkeypatch, _rotated_rastrigin(d, half_width, seed), d,
                               half_width, seed)
        assert starts[0][0] == "covariance" and len(starts) >= 3
        for (noise, gained), (prev, _) in zip(starts[1:], starts[:-1]):
            other = OTHER[noise]
            broken += gained.get(noise) is False and gained.get(other) is True
            passed_over += noise == prev  # the alternation skipped a noise's turn
    if skip:
        assert broken == 0 and passed_over >= 1
    else:
        assert broken >= 1 and passed_over == 0


def _hopeless(noise="anisotropic", fall=1.0, excess=10.0, left=10_000, answers=True):
    """``CBOSolver._hopeless`` on a stub: a swarm of 20 points whose stagnation window is
    2 history entries (2 * CHECK_EVERY steps with sync_every 1), its best ``excess`` above
    the best answer (0) after falling by ``fall`` over that window."""
    window = 2 * _cbo_solver.DIAG_MISS_WINDOW
    now = np.array([excess])
    history = [now + fall] * 3 + [now + fall * k / window for k in range(window, -1, -1)]
    s = SimpleNamespace(noise=noise, history=history, patience=2, size=20)
    solver = SimpleNamespace(answers=[(0.0, None, 0.0)] if answers else [],
                             cfg=SimpleNamespace(maxfev=100_000), sync_every=1,
                             left=lambda: left)
    return _cbo_solver.CBOSolver._hopeless(solver, s)


def test_a_diagonal_start_ends_when_its_pace_cannot_reach_the_best_answer():
    # a window of 2 history entries costs 2 * CHECK_EVERY * 20 = 400 evaluations (times
    # DIAG_MISS_WINDOW): at a fall of 1 per window an excess of 10 needs 10 windows, so
    # the start goes on with one evaluation more than that left and ends with one less
    evals = 2 * _cbo_solver.CHECK_EVERY * 20 * _cbo_solver.DIAG_MISS_WINDOW
    assert not _hopeless(fall=1.0, excess=10.0, left=10 * evals + 1)
    assert _hopeless(fall=1.0, excess=10.0, left=10 * evals - 1)
    assert _hopeless(fall=0.0, excess=10.0)  # no fall at all
    assert not _hopeless(fall=0.0, excess=1e-9)  # in the best answer's basin already
    assert not _hopeless(noise="covariance", fall=0.0)  # only the diagonal noises
    assert not _hopeless(fall=0.0, answers=False)  # nothing to reach yet
