"""pandas input for the DAG learners: a DataFrame gives the same graph as its values, and
its column names become the node labels of the result's graphs (pandas optional)."""
import numpy as np
import pytest

from solvers.dag import learn_dag, simulate_data
from solvers.dag.bootstrap import bootstrap

pd = pytest.importorskip("pandas")


def _frame(seed=0, d=5):
    X, _, B = simulate_data(d=d, n=400, k=1, rng=seed)
    names = [f"gene_{c}" for c in "abcdefgh"[:d]]
    return X, B, names, pd.DataFrame(X, columns=names)


def test_learn_dag_takes_a_dataframe_and_names_the_nodes():
    X, B, names, df = _frame()
    res, ref = learn_dag(df, rng=0), learn_dag(X, rng=0)
    np.testing.assert_array_equal(res.adjacency, ref.adjacency)   # same fit as the array
    assert res.labels == names
    G = res.to_networkx()
    assert sorted(G.nodes) == sorted(names)
    want = {(names[i], names[j]) for i, j in zip(*np.nonzero(np.asarray(ref.adjacency)))}
    assert set(G.edges) == want
    assert set(res.cpdag.to_networkx(res.labels).nodes) == set(names)
    # array input keeps integer nodes
    assert sorted(ref.to_networkx().nodes) == list(range(X.shape[1]))


def test_dpdag_and_bootstrap_take_a_dataframe():
    X, B, names, df = _frame(seed=1, d=4)
    res = learn_dag(df, method="dpdag", rng=0, maxiter=50)
    assert res.labels == names and set(res.to_networkx().nodes) == set(names)
    boot = bootstrap(df, n_bootstrap=2, rng=0)
    ref = bootstrap(X, n_bootstrap=2, rng=0)
    np.testing.assert_array_equal(boot.frequencies, ref.frequencies)
    assert boot.labels == names and ref.labels is None
    assert set(boot.to_networkx(threshold=0.5).nodes) == set(names)


def test_a_non_numeric_column_is_named():
    _, _, names, df = _frame(d=3)
    df["site"] = ["x"] * len(df)
    with pytest.raises(TypeError, match="site"):
        learn_dag(df)
    with pytest.raises(TypeError, match="site"):
        bootstrap(df, n_bootstrap=1)
