"""benchmarks/peers/dag_pairs.py: the held-out cause-effect check runs on cdt's file format,
and its scoring (verdict, Wilson interval) is right."""
import csv
import importlib.util
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import binomtest

ROOT = Path(__file__).resolve().parents[1]


def _script():
    spec = importlib.util.spec_from_file_location(
        "dag_pairs", ROOT / "benchmarks" / "peers" / "dag_pairs.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_wilson_matches_scipy():
    mod = _script()
    for k, n in [(0, 10), (55, 99), (99, 99), (7, 31)]:
        ci = binomtest(k, n).proportion_ci(method="wilson")
        assert np.allclose(mod.wilson(k, n), (ci.low, ci.high), atol=1e-9)


def test_verdict():
    mod = _script()
    a_to_b = np.array([[0, 1], [0, 0]], bool)
    assert mod.verdict(a_to_b, True, +1) == "correct"
    assert mod.verdict(a_to_b, True, -1) == "wrong"
    assert mod.verdict(a_to_b.T, True, -1) == "correct"
    assert mod.verdict(a_to_b, False, +1) == "undecided"
    assert mod.verdict(np.zeros((2, 2), bool), True, +1) == "undecided"


def _write_pairs(tmp_path, pairs):
    with open(tmp_path / "Tuebingen_pairs.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["SampleID", "A", "B"])
        for name, a, b, _ in pairs:
            w.writerow([name] + [" ".join(repr(float(v)) for v in col) for col in (a, b)])
    with open(tmp_path / "Tuebingen_targets.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["SampleID", "Target"])
        for name, _, _, t in pairs:
            w.writerow([name, t])
    return tmp_path / "Tuebingen_pairs.csv"


def test_additive_orients_clear_nonlinear_pairs(tmp_path):
    """Additive-noise pairs with a strongly nonlinear mechanism and small noise: the additive
    model must orient most of them (a coin would get 6 of 6 right with probability 1/64)."""
    mod = _script()
    rng = np.random.default_rng(3)
    pairs = []
    for i in range(6):
        cause = rng.uniform(-2, 2, 400)
        effect = np.tanh(2 * cause) + 0.3 * cause ** 2 + 0.1 * rng.normal(size=400)
        if i % 2:   # B -> A
            pairs.append((f"pair{i}", effect, cause, -1.0))
        else:
            pairs.append((f"pair{i}", cause, effect, 1.0))
    path = _write_pairs(tmp_path, pairs)
    loaded = mod.load_pairs(path, 300, np.random.default_rng(0))
    assert len(loaded) == 6 and all(X.shape == (300, 2) for _, X, _ in loaded)
    assert np.allclose(loaded[0][1].std(0), 1.0)
    votes = [mod.verdict(*mod.METHODS["additive"](X), t) for _, X, t in loaded]
    assert votes.count("correct") >= 5, votes


@pytest.mark.parametrize("method", ["default", "linear"])
def test_main_prints_a_row(tmp_path, capsys, method):
    rng = np.random.default_rng(0)
    x = rng.normal(size=50)
    path = _write_pairs(tmp_path, [("pair1", x, x + rng.normal(size=50), 1.0)])
    mod = _script()
    mod.main([str(path), "--methods", method])
    out = capsys.readouterr().out
    assert "1 pairs" in out and method in out
