"""What a user hands the log-sum-exp core, checked against SciPy:

- the partials of :func:`logsumexp_partial` merge directly (two of them, or a list), over
  ``axis=None`` and an axis, to :func:`scipy.special.logsumexp` of the whole; ambiguous or
  mixed input is rejected with a clear error;
- empty input: softmax / log_softmax return an empty array of the input's shape and dtype,
  logsumexp follows SciPy (-inf);
- pandas Series / DataFrame input gives the same numbers as their values, as numpy arrays;
- under ``backend="auto"`` small numpy calls run the generic code (nothing compiled) and
  large ones the Numba kernel.
"""
import numpy as np
import pytest
from scipy.special import logsumexp as scipy_lse, log_softmax as scipy_log_softmax
from scipy.special import softmax as scipy_softmax

from solvers import (log_softmax, logsumexp, logsumexp_matmul, logsumexp_merge,
                     logsumexp_partial, softmax)


def _lse_of(partial):
    return np.log(partial[1]) + partial[0]


# --- logsumexp_merge takes what logsumexp_partial returns ----------------------------------

def test_merge_of_two_partials_is_the_logsumexp_of_the_whole():
    x = np.random.default_rng(0).normal(size=300)
    merged = logsumexp_merge(logsumexp_partial(x[:100], 0), logsumexp_partial(x[100:], 0))
    np.testing.assert_allclose(_lse_of(merged), scipy_lse(x), rtol=1e-14)
    merged = logsumexp_merge(logsumexp_partial(x[:100]), logsumexp_partial(x[100:]))
    np.testing.assert_allclose(_lse_of(merged), scipy_lse(x), rtol=1e-14)


@pytest.mark.parametrize("axis", [0, 1])
def test_merge_of_many_partials_along_an_axis(axis):
    rng = np.random.default_rng(1)
    x = rng.normal(scale=30, size=(60, 40))
    x[:5, :3] = -np.inf            # a chunk where some lanes hold only -inf
    cuts = [0, 5, 23, 24, 60] if axis == 0 else [0, 5, 17, 40]
    chunks = [np.take(x, np.arange(lo, hi), axis=axis) for lo, hi in zip(cuts, cuts[1:])]
    parts = [logsumexp_partial(c, axis) for c in chunks]
    want = scipy_lse(x, axis=axis)
    np.testing.assert_allclose(_lse_of(logsumexp_merge(parts)), want, rtol=1e-13)
    # merged partials merge again; plain (m, s) tuples are accepted inside a list
    left = logsumexp_merge(parts[:2])
    right = logsumexp_merge([tuple(p) for p in parts[2:]])
    np.testing.assert_allclose(_lse_of(logsumexp_merge(left, right)), want, rtol=1e-13)


def test_merge_with_an_empty_chunk_and_the_stacked_form_still_work():
    x = np.random.default_rng(2).normal(size=50)
    parts = [logsumexp_partial(x[:0]), logsumexp_partial(x[:20]), logsumexp_partial(x[20:])]
    np.testing.assert_allclose(_lse_of(logsumexp_merge(parts)), scipy_lse(x), rtol=1e-14)
    m, s = logsumexp_merge(np.stack([p.max for p in parts]), np.stack([p.sum for p in parts]))
    np.testing.assert_allclose(np.log(s) + m, scipy_lse(x), rtol=1e-14)


def test_merge_rejects_ambiguous_or_mixed_input():
    x = np.arange(6.0)
    p = logsumexp_partial(x)
    with pytest.raises(TypeError, match="partial"):
        logsumexp_merge(p, np.zeros(2))
    with pytest.raises(TypeError, match="sums"):
        logsumexp_merge(np.zeros(2))
    with pytest.raises(ValueError, match="axis"):
        logsumexp_merge(p, p, axis=1)
    with pytest.raises(TypeError, match="ambiguous|plain tuples"):
        logsumexp_merge(tuple(p), tuple(p))     # (m1, s1), (m2, s2) or stacked?
    m, s = logsumexp_merge([tuple(p), tuple(p)])  # in a list it is two partials
    np.testing.assert_allclose(np.log(s) + m, scipy_lse(np.r_[x, x]), rtol=1e-14)
    with pytest.raises(ValueError, match="broadcast"):
        logsumexp_merge(logsumexp_partial(np.ones((3, 2)), 0),
                        logsumexp_partial(np.ones((3, 3)), 0))


# --- empty input -------------------------------------------------------------------------

@pytest.mark.parametrize("shape, axis", [((0,), None), ((0,), 0), ((0, 3), 0), ((0, 3), 1),
                                         ((3, 0), 1), ((2, 0, 4), (0, 1))])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_softmax_of_empty_input_is_empty(shape, axis, dtype):
    x = np.zeros(shape, dtype=dtype)
    for fn in (softmax, log_softmax):
        for backend in ("auto", "numpy", "numba"):
            out = fn(x, axis, backend=backend)
            assert out.shape == shape and out.dtype == dtype


@pytest.mark.parametrize("shape, axis", [((0,), None), ((0, 3), 0), ((3, 0), 1),
                                         ((0, 3), 1)])
def test_logsumexp_of_empty_input_follows_scipy(shape, axis):
    x = np.zeros(shape)
    want = scipy_lse(x, axis=axis)
    for backend in ("auto", "numpy", "numba"):
        np.testing.assert_array_equal(logsumexp(x, axis, backend=backend), want)
    m, s = logsumexp_partial(x, axis)
    with np.errstate(divide="ignore"):
        np.testing.assert_array_equal(np.log(s) + m, want)


# --- pandas input ------------------------------------------------------------------------

def test_pandas_input_gives_the_numbers_of_its_values():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(3)
    X = rng.normal(size=(30, 4))
    frame, series = pd.DataFrame(X, columns=list("abcd")), pd.Series(X[:, 0], name="a")
    weights = pd.DataFrame(np.abs(X))
    cases = [
        (logsumexp(frame, 0), scipy_lse(X, 0)),
        (logsumexp(series), scipy_lse(X[:, 0])),
        (logsumexp(frame, 1, b=weights), scipy_lse(X, 1, b=np.abs(X))),
        (softmax(frame, 1), scipy_softmax(X, 1)),
        (log_softmax(series), scipy_log_softmax(X[:, 0])),
        (_lse_of(logsumexp_partial(frame, 0)), scipy_lse(X, 0)),
    ]
    for got, want in cases:
        assert isinstance(got, (np.ndarray, np.floating))
        np.testing.assert_allclose(got, want, rtol=1e-13)
    B = pd.DataFrame(rng.normal(size=(4, 7)))
    log_b = pd.Series(rng.normal(size=7))
    got = logsumexp_matmul(frame, B, log_b=log_b)
    assert isinstance(got, np.ndarray)
    want = scipy_lse(X @ B.to_numpy() + log_b.to_numpy(), axis=1)
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_pandas_with_a_text_column_is_a_clear_error():
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"x": [1.0, 2.0], "name": ["p", "q"]})
    with pytest.raises(TypeError, match="name"):
        softmax(frame)


# --- small calls under "auto" run the generic code -----------------------------------------

def test_auto_runs_the_generic_code_on_small_input_and_numba_on_large(monkeypatch):
    """Which implementation "auto" picks, seen through the kernel table."""
    from solvers.lse import _lse_kernels

    picked = []
    real_get = _lse_kernels.KERNELS.get

    def spy(name, be, generic=None, size=None):
        fn = real_get(name, be, generic=generic, size=size)
        picked.append((name, fn is generic))
        return fn

    monkeypatch.setattr(_lse_kernels.KERNELS, "get", spy)
    rng = np.random.default_rng(4)
    # (elements, elements, A rows x B columns): 300 / 120000 elements, 10 x 20 / 300 x 500
    for shape, (n, m) in (((10, 30), (10, 20)), ((300, 400), (300, 500))):
        x = rng.normal(size=shape)
        logsumexp(x, 1)
        softmax(x, 1)
        logsumexp_matmul(rng.normal(size=(n, 8)), rng.normal(size=(8, m)))
    assert picked == [("lse_reduce", True), ("softmax", True), ("lse_matmul", True),
                      ("lse_reduce", False), ("softmax", False), ("lse_matmul", False)]
