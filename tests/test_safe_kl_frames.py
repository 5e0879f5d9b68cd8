"""Safe-KL with the inputs users have: pandas frames in, names out; weights that must sum to
one (never renormalised silently)."""
import subprocess
import sys

import numpy as np
import pytest

from solvers import kl_dro, minimize_logsumexp, safe_logsumexp, semidual_ot
from solvers.lse import dro_dataset, kl_dro_losses, kl_dro_objective, semidual_ot_objective

pd = pytest.importorskip("pandas")


def _frame(X, prefix="f"):
    return pd.DataFrame(X, columns=[f"{prefix}{j}" for j in range(X.shape[1])])


# --- pandas in -------------------------------------------------------------------------------

@pytest.mark.parametrize("method", ["safe-kl", "lbfgs"])
def test_kl_dro_takes_a_frame_and_names_the_coefficients(method):
    X, y = dro_dataset(800, 3, "logistic", rng=0)
    df, series = _frame(X), pd.Series(y, name="label")
    kw = dict(lam=0.5, loss="logistic", method=method, epochs=1, rng=0)
    ref = kl_dro(X, y, **kw)
    got = kl_dro(df, series, **kw)
    # a frame's values may come in another memory layout: BLAS rounds differently
    np.testing.assert_allclose(got.x, ref.x, rtol=1e-10, atol=1e-12)
    assert got.fun == pytest.approx(ref.fun, rel=1e-12)
    assert got.feature_names == list(df.columns) and ref.feature_names is None
    assert len(got.feature_names) == got.x.shape[0]


def test_kl_dro_frame_with_integer_columns_and_a_start_series():
    X, y = dro_dataset(300, 2, "squared", rng=1)
    df = pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "one": np.ones(300, dtype=np.int64)})
    x0 = pd.Series(np.full(3, 0.1), index=list(df.columns))
    got = kl_dro(df, pd.Series(y), lam=5.0, x0=x0, epochs=1, rng=0)
    ref = kl_dro(X, y, lam=5.0, x0=np.full(3, 0.1), epochs=1, rng=0)
    np.testing.assert_array_equal(got.x, ref.x)
    assert got.feature_names == ["a", "b", "one"]


def test_kl_dro_rejects_a_text_column_naming_it():
    X, y = dro_dataset(50, 2, "squared", rng=2)
    df = _frame(X).assign(city=["x"] * 50)
    with pytest.raises(TypeError, match=r"X must hold numeric columns only.*city"):
        kl_dro(df, y, lam=1.0)


def test_kl_dro_objective_and_losses_take_frames():
    X, y = dro_dataset(200, 3, "squared", rng=3)
    theta = np.linspace(-0.5, 0.5, 4)
    value, grad = kl_dro_objective(pd.Series(theta), _frame(X), pd.Series(y), lam=2.0)
    ref_value, ref_grad = kl_dro_objective(theta, X, y, lam=2.0)
    assert value == pytest.approx(ref_value, rel=1e-13)
    np.testing.assert_allclose(grad, ref_grad, rtol=1e-12)
    losses, jac = kl_dro_losses(theta, _frame(X), pd.Series(y))
    np.testing.assert_allclose(losses, kl_dro_losses(theta, X, y)[0], rtol=1e-12)
    assert isinstance(losses, np.ndarray) and jac.shape == X.shape


@pytest.mark.parametrize("method", ["safe-kl", "sgd", "lbfgs"])
def test_semidual_ot_takes_frames(method):
    rng = np.random.default_rng(4)
    X, Y = rng.normal(size=(40, 2)), rng.normal(size=(25, 2)) + 1.0
    kw = dict(epsilon=0.5, method=method, rng=0, maxiter=None if method == "lbfgs" else 50)
    ref = semidual_ot(X, Y, **kw)
    got = semidual_ot(_frame(X, "x"), _frame(Y, "x"), **kw)
    np.testing.assert_array_equal(got.x, ref.x)
    assert got.fun == ref.fun
    b = pd.Series(np.full(25, 1 / 25))
    value, _ = semidual_ot_objective(pd.Series(ref.x), _frame(X), _frame(Y), epsilon=0.5, b=b)
    assert value == pytest.approx(ref.fun, rel=1e-12)


def test_minimize_logsumexp_takes_a_frame_and_a_tuple_of_frames():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(400, 2))
    y = X @ np.array([1.0, -1.0]) + rng.normal(size=400)

    def phi(theta, batch):
        Xb, yb = batch if isinstance(batch, tuple) else (batch[:, :2], batch[:, 2])
        r = Xb @ theta - yb
        return 0.5 * r * r, r[:, None] * Xb

    kw = dict(batch_size=16, maxiter=60, lr=0.05, rng=0)
    ref = minimize_logsumexp(phi, np.zeros(2), np.c_[X, y], **kw)
    got = minimize_logsumexp(phi, np.zeros(2), _frame(np.c_[X, y]), **kw)
    np.testing.assert_array_equal(got.x, ref.x)
    pair_ref = minimize_logsumexp(phi, np.zeros(2), (X, y), **kw)
    pair = minimize_logsumexp(phi, np.zeros(2), (_frame(X), pd.Series(y)), **kw)
    np.testing.assert_array_equal(pair.x, pair_ref.x)


def test_safe_logsumexp_of_a_series_and_a_frame():
    rng = np.random.default_rng(6)
    A = rng.normal(size=(30, 3)) * 2
    s = pd.Series(A[:, 0], name="a")
    assert safe_logsumexp(s, 0.1) == safe_logsumexp(A[:, 0], 0.1)
    got = safe_logsumexp(_frame(A), 0.1, axis=0, b=_frame(np.ones_like(A)))
    np.testing.assert_allclose(got, safe_logsumexp(A, 0.1, axis=0, b=np.ones_like(A)),
                               rtol=1e-13)


def test_the_library_never_imports_pandas():
    code = (
        "import sys, numpy as np\n"
        "from solvers import kl_dro, semidual_ot, safe_logsumexp\n"
        "from solvers.lse import dro_dataset\n"
        "X, y = dro_dataset(200, 2)\n"
        "kl_dro(X, y, lam=1.0, loss='logistic', epochs=1, rng=0)\n"
        "semidual_ot(X[:, :2], X[:20, :2], epsilon=1.0, maxiter=5, rng=0)\n"
        "safe_logsumexp(np.zeros(3), 0.1)\n"
        "print('pandas' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"


# --- weights must sum to one -----------------------------------------------------------------

def _ot(seed=7):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(30, 2)), rng.normal(size=(20, 2)) + 1.0


@pytest.mark.parametrize("which", ["a", "b"])
def test_semidual_weights_that_do_not_sum_to_one_raise(which):
    X, Y = _ot()
    k = X.shape[0] if which == "a" else Y.shape[0]
    w = np.random.default_rng(8).uniform(0.5, 1.5, size=k)  # sums to about k
    with pytest.raises(ValueError, match=rf"^{which} must sum to 1"):
        semidual_ot(X, Y, epsilon=0.5, maxiter=5, rng=0, **{which: w})
    with pytest.raises(ValueError, match=rf"^{which} must sum to 1"):
        semidual_ot_objective(np.zeros(20), X, Y, epsilon=0.5, **{which: w})
    # the message's remedy works: normalised weights are accepted
    semidual_ot(X, Y, epsilon=0.5, maxiter=5, rng=0, **{which: w / w.sum()})


def test_semidual_weights_within_the_tolerance_are_accepted():
    X, Y = _ot()
    b = np.random.default_rng(9).uniform(0.5, 1.5, size=20)
    b /= b.sum()
    ref = semidual_ot(X, Y, epsilon=0.5, b=b, method="lbfgs")
    near = semidual_ot(X, Y, epsilon=0.5, b=b * (1 + 1e-9), method="lbfgs")
    np.testing.assert_allclose(near.x, ref.x, rtol=1e-8, atol=1e-10)
    with pytest.raises(ValueError, match="b must sum to 1"):
        semidual_ot(X, Y, epsilon=0.5, b=b * (1 + 1e-4), method="lbfgs")


def test_semidual_ot_rejects_a_text_column_naming_the_argument():
    X, Y = _ot()
    with pytest.raises(TypeError, match=r"^Y must hold numeric columns only.*tag"):
        semidual_ot(X, _frame(Y).assign(tag="t"), epsilon=0.5, maxiter=5, rng=0)
    with pytest.raises(TypeError, match=r"^X must hold numeric columns only.*tag"):
        semidual_ot_objective(np.zeros(20), _frame(X).assign(tag="t"), Y, epsilon=0.5)
