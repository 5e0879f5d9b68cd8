"""The shared plumbing of issue 14: kernel tables, Adam, to_host, the result contract,
the progress bar, the router helper and the in-kernel PRNG."""
import io
import sys

import numpy as np
import pytest

from solvers._lib import host, kernels, optim, results, router


# ---------------------------------------------------------------- kernel tables
def _generic(x):
    return ("generic", x)


def test_kernel_table_resolves_per_backend_and_falls_back():
    table = kernels.KernelTable("solvers._lib",
                                op={"numba": ".host:to_float", "cupy": _generic})
    assert table.get("op", "numba") is host.to_float          # lazy "module:attr"
    assert table.get("op", "cupy") is _generic
    assert table.get("op", "generic", generic=len) is len     # missing -> generic
    assert table.has("op", "numba") and not table.has("op", "generic")
    with pytest.raises(KeyError, match="no kernel 'nope'"):
        table.get("nope", "numba")
    with pytest.raises(LookupError, match="no generic fallback"):
        table.get("op", "generic")
    with pytest.raises(ValueError, match="unknown backend"):
        kernels.KernelTable("solvers", op={"torch": _generic})


# ---------------------------------------------------------------- Adam
def test_adam_matches_the_closed_form_first_step():
    # the first bias-corrected step is lr * g / (|g| + eps): a sign step of size lr
    x = [np.array([1.0, -2.0, 0.5])]
    g = [np.array([4.0, -0.1, 1e-3])]
    out = optim.Adam(x, lr=0.1, eps=0.0, xp=np).step(x, g)
    expected = x[0] - 0.1 * np.array([1.0, -1.0, 1.0])
    np.testing.assert_allclose(out[0], expected, rtol=1e-14)


def test_adam_minimises_a_quadratic_with_a_schedule():
    x = [np.array([3.0, -4.0])]
    opt = optim.Adam(x, lr=optim.cosine_decay(0.2, 2000, 0.01), xp=np)
    for _ in range(2000):
        x = opt.step(x, [2.0 * x[0]])
    assert np.max(np.abs(x[0])) < 1e-3


def test_adam_and_schedules_reject_bad_values():
    with pytest.raises(ValueError, match="betas"):
        optim.Adam([np.zeros(1)], betas=(1.0, 0.9), xp=np)
    with pytest.raises(ValueError, match="lr"):
        optim.Adam([np.zeros(1)], lr=-1.0, xp=np)
    sched = optim.cosine_decay(1.0, 10, 0.1)
    assert sched(0) == 1.0 and abs(sched(10) - 0.1) < 1e-15 and abs(sched(99) - 0.1) < 1e-15


# ---------------------------------------------------------------- to_host
def test_to_host_on_strict_and_numpy():
    xs = pytest.importorskip("array_api_strict")
    a = np.arange(3.0)
    assert host.to_host(a) is a
    out = host.to_host(xs.asarray([1.0, 2.0]))
    assert isinstance(out, np.ndarray) and out.tolist() == [1.0, 2.0]
    assert host.to_float(xs.sum(xs.asarray([1.0, 2.0]))) == 3.0
    assert host.to_host([1, 2]).tolist() == [1, 2]


# ---------------------------------------------------------------- result contract
def test_make_result_success_semantics():
    S = results.Status
    assert results.make_result(S.CONVERGED, x=1).success is True
    res = results.make_result(S.CALLBACK, x=1)
    assert (res.success, res.status) == (False, 99) and "callback" in res.message
    assert results.make_result(S.NONFINITE).success is False
    assert results.make_result(S.MAXITER, success=True).success is True
    with pytest.raises(ValueError, match="must say"):
        results.make_result(S.MAXFEV)
    with pytest.raises(ValueError, match="cannot be a success"):
        results.make_result(S.CALLBACK, success=True)
    assert results.STOPPED_BY_CALLBACK[0] == 99


def test_call_callback_stop_conventions():
    def raises(r):
        raise StopIteration

    assert results.call_callback(raises, x=1) is True
    assert results.call_callback(lambda r: True, x=1) is True
    assert results.call_callback(lambda r: None, x=1) is False
    assert results.call_callback(None, x=1) is False


@pytest.mark.parametrize("use_tqdm", [True, False])
def test_progress_never_overshoots_and_ends_once(use_tqdm, monkeypatch):
    if not use_tqdm:
        monkeypatch.setitem(sys.modules, "tqdm.auto", None)  # import fails -> plain bar
    elif pytest.importorskip("tqdm") is None:
        pass
    stream = io.StringIO()
    with results.Progress(5, "x", enabled=True, stream=stream) as bar:
        for _ in range(8):
            bar.update(1, loss=0.5)
        bar.close()  # closing twice (explicit + context exit) prints once
    text = stream.getvalue()
    assert "6/5" not in text and "8/5" not in text
    assert "5/5" in text and text.count("\n") == 1
    silent = io.StringIO()
    with results.Progress(5, enabled=False, stream=silent) as bar:
        bar.update(3)
    assert silent.getvalue() == ""


# ---------------------------------------------------------------- router helper
def test_router_checks_methods_and_options():
    r = router.Router("thing", {"a": "solvers._lib.host:to_float"}, positional=("x",))
    assert r.solver("A") is host.to_float
    with pytest.raises(ValueError, match="unknown method 'b' for thing"):
        r.solver("b")
    with pytest.raises(TypeError, match="method must be a string"):
        r.solver(3)
    with pytest.raises(TypeError, match="given both"):
        r.options("a", {"k": 1}, {"k": 2})
    with pytest.raises(TypeError, match="unknown option"):
        r.options("a", None, {"nope": 1})
    r.register("c", lambda x, *, tol=0: x)
    assert r.options("c", {"tol": 1}, {}, unused=None) == {"tol": 1}
    assert r.available() == ["a", "c"]


# ---------------------------------------------------------------- in-kernel PRNG
def test_prng_numba_matches_the_reference_and_is_uniform():
    from scipy import stats

    from solvers._lib import _prng
    import numba

    @numba.njit
    def draw(base, index, n):
        state = _prng.stream_start(base, index)
        out = np.empty(n)
        for i in range(n):
            state, out[i] = _prng.next_uniform(state)
        return out

    base = _prng.seed_from_rng(np.random.default_rng(3))
    for index in (0, 1, 12345):
        np.testing.assert_array_equal(draw(base, index, 200),
                                      _prng.reference_uniforms(base, index, 200))
    u = draw(base, 7, 20000)
    assert 0.0 < u.min() and u.max() < 1.0
    assert stats.kstest(u, "uniform").pvalue > 1e-4
    # neighbouring streams are uncorrelated
    v = draw(base, 8, 20000)
    assert abs(np.corrcoef(u, v)[0, 1]) < 5 / np.sqrt(20000)


# ---------------------------------------------------------------- draws on the device
@pytest.mark.gpu
def test_cupy_draws_on_the_device_are_reproducible(monkeypatch):
    cupy = pytest.importorskip("cupy")
    from solvers._lib.rng import Draws

    monkeypatch.delenv("SOLVERS_HOST_DRAWS", raising=False)
    a = Draws(5, cupy).normal((1000,))
    b = Draws(5, cupy).normal((1000,))
    assert isinstance(a, cupy.ndarray)  # drawn on the device, never copied from the host
    assert bool(cupy.all(a == b)) and abs(float(a.mean())) < 0.2
    monkeypatch.setenv("SOLVERS_HOST_DRAWS", "1")
    host = Draws(5, cupy).normal((1000,))
    np.testing.assert_array_equal(host.get(), np.random.default_rng(5).standard_normal(1000))


def test_host_draws_are_the_default_off_cupy(monkeypatch):
    from solvers._lib.rng import Draws

    monkeypatch.delenv("SOLVERS_HOST_DRAWS", raising=False)
    np.testing.assert_array_equal(Draws(5, np).normal((10,)),
                                  np.random.default_rng(5).standard_normal(10))


# ---------------------------------------------------------------- docstring fragments
def test_fill_doc_reindents_fragments_and_rejects_unknown_placeholders():
    from solvers._lib.docstrings import fill_doc

    @fill_doc(raises="Raises\n------\nValueError\n    Bad x.\n")
    def f():
        """One line.

        {{raises}}
        """

    assert "        Raises\n        ------\n        ValueError\n            Bad x." in f.__doc__
    assert "{{" not in f.__doc__

    def g():
        """{{nope}}"""

    with pytest.raises(KeyError, match="nope"):
        fill_doc(raises="x")(g)


def test_no_public_docstring_keeps_a_placeholder():
    import inspect

    import solvers
    from solvers import dag, memory, qubo, transport

    left = []
    for module in (solvers, transport, memory, dag, qubo):
        for name in getattr(module, "__all__", []):
            obj = getattr(module, name)
            members = [obj] + [m for _, m in inspect.getmembers(obj)
                               if inspect.isfunction(m)] if inspect.isclass(obj) else [obj]
            left += [f"{name}" for m in members if "{{" in (getattr(m, "__doc__", "") or "")]
    assert not left, left


def test_unpicklable_work_for_a_process_pool_gets_a_hint():
    from solvers._lib.parallel import parallel_map

    def local(x):  # defined inside a function: not picklable for another process
        return x + 1

    with pytest.raises(TypeError, match="must be picklable"):
        parallel_map(local, [1, 2], workers=2)
    assert parallel_map(local, [1, 2], workers=1) == [2, 3]
