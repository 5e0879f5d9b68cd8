"""pandas input for ``schrodinger_bridge``: DataFrames of samples fit the same bridge as
the numpy arrays they hold (same seed, the same numbers up to rounding), the bridge's
methods take frames of inputs, and a non-numeric column is an error that names it."""
import numpy as np
import pytest

from solvers import schrodinger_bridge

pd = pytest.importorskip("pandas")

COLUMNS = ["a", "b"]


def _same(a, b):
    # a frame's values come out column-major, so BLAS may round differently
    np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)


def _samples():
    rng = np.random.default_rng(3)
    x0 = rng.normal(size=(400, 2))
    x1 = 1.5 * rng.normal(size=(400, 2)) + np.array([1.0, -0.5])
    return x0, x1


def test_frames_fit_the_same_bridge_as_arrays():
    x0, x1 = _samples()
    kw = dict(n_components=3, maxiter=30, rng=0)
    ref = schrodinger_bridge(x0, x1, 1.0, **kw)
    sb = schrodinger_bridge(pd.DataFrame(x0, columns=COLUMNS),
                            pd.DataFrame(x1, columns=COLUMNS), 1.0, **kw)
    _same(sb.r, ref.r)
    _same(sb.log_alpha, ref.log_alpha)
    _same(sb.S, ref.S)
    q = x0[:5]
    frame = pd.DataFrame(q, columns=COLUMNS)
    _same(sb.drift(frame, 0.5), ref.drift(q, 0.5))
    mean, cov = sb.conditional_moments(frame)
    mean_ref, cov_ref = ref.conditional_moments(q)
    _same(mean, mean_ref)
    _same(cov, cov_ref)
    _same(sb.sample(frame, 2, rng=1), ref.sample(q, 2, rng=1))


def test_frame_with_text_column_is_rejected():
    x0, x1 = _samples()
    frame = pd.DataFrame(x1, columns=COLUMNS).assign(tag="t")
    with pytest.raises(TypeError, match="tag"):
        schrodinger_bridge(x0, frame, 1.0, n_components=2, maxiter=5, rng=0)
