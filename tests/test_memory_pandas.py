"""pandas input for the memories: DataFrames of stored means / patterns and of queries give
the numbers of the same arrays, the columns become ``feature_names`` (on the memory and on
the retrieval result), and query columns that differ from the stored ones are an error."""
import numpy as np
import pytest

from solvers import GaussianMemory, VectorMemory
from solvers.memory import synthetic_patterns

pd = pytest.importorskip("pandas")

COLUMNS = ["x", "y", "z"]


def _patterns(diagonal=False):
    m, S = synthetic_patterns(6, 3, commuting=False, diagonal=diagonal, eig_range=(0.3, 2.0),
                              rng=0)
    return 3.0 * m, S


@pytest.mark.parametrize("diagonal", [False, True])
def test_gaussian_memory_takes_frames(diagonal):
    m, S = _patterns(diagonal)
    rng = np.random.default_rng(1)
    qm = m[:4] + 0.2 * rng.normal(size=(4, 3))
    qS = S[:4] * 1.1
    ref_mem = GaussianMemory(m, S, beta=2.0)
    covs = pd.DataFrame(S, columns=COLUMNS) if diagonal else S  # variances: a frame too
    mem = GaussianMemory(pd.DataFrame(m, columns=COLUMNS), covs, beta=2.0)
    assert mem.feature_names == COLUMNS and ref_mem.feature_names is None
    frame = pd.DataFrame(qm, columns=COLUMNS)
    for method in ("distances", "energy", "weights", "nearest"):
        np.testing.assert_array_equal(getattr(mem, method)(frame, qS),
                                      getattr(ref_mem, method)(qm, qS))
    res, ref = mem.retrieve(frame, qS), ref_mem.retrieve(qm, qS)
    np.testing.assert_array_equal(res.means, ref.means)
    np.testing.assert_array_equal(res.covs, ref.covs)
    np.testing.assert_array_equal(res.index, ref.index)
    assert res.feature_names == COLUMNS and "feature_names" not in ref
    # a single query as a Series (values by position) and plain arrays against a frame memory
    np.testing.assert_array_equal(mem.energy(pd.Series(qm[0], index=COLUMNS), qS[0]),
                                  ref_mem.energy(qm[0], qS[0]))
    np.testing.assert_array_equal(mem.energy(qm, qS), ref_mem.energy(qm, qS))


def test_query_columns_must_match_the_stored_ones():
    m, S = _patterns()
    mem = GaussianMemory(pd.DataFrame(m, columns=COLUMNS), S)
    with pytest.raises(ValueError, match="means has the columns"):
        mem.retrieve(pd.DataFrame(m[:2], columns=["x", "z", "y"]), S[:2])
    vmem = VectorMemory(pd.DataFrame(m, columns=COLUMNS))
    with pytest.raises(ValueError, match="x has the columns"):
        vmem.energy(pd.DataFrame(m[:2], columns=["a", "b", "c"]))
    with pytest.raises(TypeError, match="numeric"):
        GaussianMemory(pd.DataFrame({"x": m[:, 0], "y": m[:, 1], "z": ["a"] * 6}), S)


def test_vector_memory_takes_frames():
    m, _ = _patterns()
    q = m[:3] + 0.1
    mem, ref_mem = VectorMemory(pd.DataFrame(m, columns=COLUMNS), beta=1.5), VectorMemory(m, 1.5)
    assert mem.feature_names == COLUMNS
    frame = pd.DataFrame(q, columns=COLUMNS)
    for method in ("energy", "weights", "step"):
        np.testing.assert_array_equal(getattr(mem, method)(frame), getattr(ref_mem, method)(q))
    res = mem.retrieve(frame)
    np.testing.assert_array_equal(res.x, ref_mem.retrieve(q).x)
    assert res.feature_names == COLUMNS
