"""One result and callback contract over every iterative solver (issue 14).

For each solver, on a tiny problem: a callback that raises ``StopIteration`` on its second
call ends the run with ``success=False`` and ``status=99`` (SciPy's meaning); every
``intermediate_result.x`` is an array of the input's namespace (never a private object);
``maxiter`` and ``rng`` are accepted; and where the objective is the user's, a non-finite
value ends the run with the shared status code and ``success=False``.
"""
import numpy as np
import pytest

import solvers
from solvers import dag, memory
from solvers._lib.namespace import array_namespace
from solvers._lib.results import Status

RNG = np.random.default_rng(0)
X_DRO = RNG.normal(size=(200, 3))
Y_DRO = np.sign(X_DRO @ np.array([1.0, -1.0, 0.5]) + 0.1)
Q4 = np.array([[0.0, -1.0, 0.5, 0.0], [-1.0, 0.0, 0.0, 0.3],
               [0.5, 0.0, 0.0, -0.2], [0.0, 0.3, -0.2, 0.0]])
MEANS = np.eye(3)[:, :2] * 3.0
COVS = np.broadcast_to(np.eye(2), (3, 2, 2)).copy()
X_DAG = dag.simulate_data(d=4, n=200, k=1, rng=0)[0]
LSE_DATA = RNG.normal(size=(100, 2))


def _lse_phi(x, data):
    return data @ x


def _lse_phi_grad(x, data):
    return data @ x, data


SOLVERS = {
    "minimize_cbo": lambda cb, **kw: solvers.minimize_cbo(
        lambda x: float(np.sum(x**2)), [(-2, 2)] * 2, maxiter=50, rng=0, callback=cb, **kw),
    "minimize_logsumexp": lambda cb, **kw: solvers.minimize_logsumexp(
        _lse_phi_grad, np.zeros(2), LSE_DATA, maxiter=20, rng=0, callback=cb, **kw),
    "kl_dro": lambda cb, **kw: solvers.kl_dro(X_DRO, Y_DRO, lam=1.0, maxiter=20, rng=0,
                                              callback=cb, **kw),
    "semidual_ot": lambda cb, **kw: solvers.semidual_ot(
        RNG.normal(size=(20, 2)), RNG.normal(size=(30, 2)), epsilon=0.5, maxiter=20, rng=0,
        callback=cb, **kw),
    "schrodinger_bridge": lambda cb, **kw: solvers.schrodinger_bridge(
        RNG.normal(size=(100, 2)), RNG.normal(size=(100, 2)) + 1.0, epsilon=1.0,
        n_components=2, maxiter=20, rng=0, callback=cb, **kw),
    "GaussianMemory.retrieve": lambda cb, **kw: memory.GaussianMemory(
        MEANS, COVS, beta=1.0).retrieve(MEANS + 0.1, COVS, maxiter=20, callback=cb, **kw),
    "VectorMemory.retrieve": lambda cb, **kw: memory.VectorMemory(
        MEANS, beta=1.0).retrieve(MEANS + 0.1, maxiter=20, callback=cb, **kw),
    "learn_dag[cosmo]": lambda cb, **kw: dag.learn_dag(X_DAG, method="cosmo", maxiter=50,
                                                       rng=0, callback=cb, **kw),
    "learn_dag[dpdag]": lambda cb, **kw: dag.learn_dag(X_DAG, method="dpdag", maxiter=50,
                                                       rng=0, callback=cb, **kw),
    "minimize_qubo": lambda cb, **kw: solvers.minimize_qubo(Q4, n_reads=2, n_sweeps=20,
                                                            maxiter=20, rng=0, callback=cb,
                                                            **kw),
}


def _stop_on_second_call(seen):
    def callback(intermediate_result):
        seen.append(intermediate_result)
        if len(seen) == 2:
            raise StopIteration

    return callback


@pytest.mark.parametrize("name", sorted(SOLVERS))
def test_callback_stop_is_not_success(name):
    seen = []
    res = SOLVERS[name](_stop_on_second_call(seen))
    assert len(seen) == 2, f"{name}: the callback was called {len(seen)} times"
    assert res.success is False or res.success == np.False_
    assert res.status == Status.CALLBACK == 99
    for inter in seen:
        x = inter.x
        assert hasattr(x, "shape") and hasattr(x, "dtype"), type(x)
        array_namespace(x)  # an array of a known namespace, not a private object


@pytest.mark.parametrize("name, call", [
    ("minimize_cbo", lambda: solvers.minimize_cbo(lambda x: np.nan, [(-1, 1)] * 2,
                                                   maxiter=20, rng=0)),
    ("minimize_logsumexp", lambda: solvers.minimize_logsumexp(
        lambda x, data: (data @ x * np.nan, data), np.zeros(2), LSE_DATA, maxiter=10,
        rng=0)),
])
def test_nonfinite_objective_has_the_shared_status(name, call):
    res = call()
    assert res.status == Status.NONFINITE and not res.success, (res.status, res.message)
