"""QUBOSampler: dimod's own sampler tests, composites, conversions and errors."""
import subprocess
import sys
import unittest
import warnings

import numpy as np
import pytest

dimod = pytest.importorskip("dimod")

from solvers.qubo import QUBOSampler, minimize_qubo  # noqa: E402


@dimod.testing.load_sampler_bqm_tests(QUBOSampler)
class TestDimodSamplerSuite(unittest.TestCase):
    """dimod's generated tests: empty, one-variable and path models of every BQM class,
    spin and binary, through sample, sample_ising and sample_qubo."""

    def test_api(self):
        dimod.testing.assert_sampler_api(QUBOSampler())


def _exact_min(bqm):
    return dimod.ExactSolver().sample(bqm).first.energy


def test_finds_the_exact_optimum_with_labels_and_offsets():
    for seed, vartype in ((1, "SPIN"), (2, "BINARY")):
        bqm = dimod.generators.gnp_random_bqm(14, 0.5, vartype, random_state=seed)
        bqm.relabel_variables({v: ("x", v) for v in bqm.variables})
        bqm.offset = 2.5
        ss = QUBOSampler().sample(bqm, num_reads=8, num_sweeps=300, seed=seed)
        assert ss.vartype is bqm.vartype and set(ss.variables) == set(bqm.variables)
        dimod.testing.assert_sampleset_energies(ss, bqm)
        assert ss.first.energy == pytest.approx(_exact_min(bqm), abs=1e-9)
        assert len(ss) == 8 and np.all(ss.record.num_occurrences == 1)
        assert ss.info["status"] == 1 and ss.info["num_sweeps"] == 300


@pytest.mark.parametrize("make", [
    lambda s: dimod.TrackingComposite(s),
    lambda s: dimod.TruncateComposite(s, 3),
    lambda s: dimod.StructureComposite(s, list(range(12)), [(i, j) for i in range(12)
                                                            for j in range(i + 1, 12)]),
], ids=["tracking", "truncate", "structure"])
def test_composites(make):
    bqm = dimod.generators.gnp_random_bqm(12, 0.4, "SPIN", random_state=3)
    composite = make(QUBOSampler())
    dimod.testing.assert_composite_api(composite)
    ss = composite.sample(bqm, num_reads=4, num_sweeps=200, seed=5)
    dimod.testing.assert_sampleset_energies(ss, bqm)
    assert ss.first.energy == pytest.approx(_exact_min(bqm), abs=1e-9)


def test_higher_order_composite_reduces_a_polynomial():
    poly = dimod.BinaryPolynomial({("a", "b", "c"): -2.0, ("a", "b"): 1.0, ("c",): 0.5},
                                  "SPIN")
    ss = dimod.HigherOrderComposite(QUBOSampler()).sample_poly(
        poly, num_reads=4, num_sweeps=200, seed=0, penalty_strength=5.0)
    exact = min(poly.energy(dict(zip("abc", s)))
                for s in np.array(np.meshgrid(*[[-1, 1]] * 3)).T.reshape(-1, 3))
    assert ss.first.energy == pytest.approx(exact, abs=1e-9)


def test_fixed_variables():
    """What FixVariablesComposite does: fix, sample the rest, add the fixed values back."""
    bqm = dimod.generators.gnp_random_bqm(12, 0.4, "BINARY", random_state=4)
    fixed = bqm.copy()
    fixed.fix_variables({0: 1, 5: 0})
    ss = QUBOSampler().sample(fixed, num_reads=4, num_sweeps=200, seed=1)
    assert 0 not in ss.variables and len(ss.variables) == 10
    full = [{**dict(zip(ss.variables, row)), 0: 1, 5: 0} for row in ss.record.sample]
    np.testing.assert_allclose(bqm.energies(full), ss.record.energy, atol=1e-9)
    assert ss.first.energy == pytest.approx(_exact_min(fixed), abs=1e-9)


@pytest.mark.parametrize("name", ["SpinReversalTransformComposite", "FixVariablesComposite",
                                  "ConnectedComponentsComposite"])
def test_dwave_preprocessing_composites(name):
    """dimod's preprocessing composites live in dwave-preprocessing (tested where installed)."""
    pre = pytest.importorskip("dwave.preprocessing")
    bqm = dimod.generators.gnp_random_bqm(12, 0.4, "SPIN", random_state=9)
    composite = getattr(pre, name)(QUBOSampler())
    kw = {"fixed_variables": {0: 1}} if name == "FixVariablesComposite" else {}
    ss = composite.sample(bqm, num_reads=4, num_sweeps=200, seed=5, **kw)
    dimod.testing.assert_sampleset_energies(ss, bqm)
    ref = bqm.copy()
    if kw:
        ref.fix_variables(kw["fixed_variables"])
    assert ss.first.energy == pytest.approx(_exact_min(ref), abs=1e-9)


def test_spin_reversal_gauge():
    """What a spin-reversal transform does (dwave-preprocessing's composite): sample the
    gauge-transformed model and flip the answers back; the energies must agree."""
    bqm = dimod.generators.gnp_random_bqm(12, 0.5, "SPIN", random_state=7)
    flip = {v: bool(k % 3 == 0) for k, v in enumerate(bqm.variables)}
    gauged = bqm.copy()
    for v, f in flip.items():
        if f:
            gauged.flip_variable(v)
    ss = QUBOSampler().sample(gauged, num_reads=4, num_sweeps=200, seed=3)
    back = np.array([[-s if flip[v] else s for v, s in zip(ss.variables, row)]
                     for row in ss.record.sample])
    np.testing.assert_allclose(bqm.energies((back, ss.variables)), ss.record.energy,
                               atol=1e-9)
    assert ss.first.energy == pytest.approx(_exact_min(bqm), abs=1e-9)


def test_importing_the_package_does_not_import_dimod():
    code = ("import sys, solvers, solvers.qubo; solvers.qubo.minimize_qubo; "
            "print('dimod' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"


def test_vartype_with_a_bqm_is_honoured_or_rejected():
    bqm = dimod.generators.gnp_random_bqm(8, 0.5, "SPIN", random_state=6)
    a = minimize_qubo(bqm, n_reads=4, n_sweeps=50, rng=0)
    b = minimize_qubo(bqm, vartype="SPIN", n_reads=4, n_sweeps=50, rng=0)
    np.testing.assert_array_equal(a.samples, b.samples)
    assert set(np.unique(a.samples)) <= {-1, 1}
    with pytest.raises(ValueError, match=r"change_vartype\('BINARY'"):
        minimize_qubo(bqm, vartype="binary")
    from solvers.qubo import qubo_moments

    with pytest.raises(ValueError, match="contradicts"):
        qubo_moments(bqm.binary, vartype="spin")
    assert qubo_moments(bqm, vartype=dimod.SPIN).mean == pytest.approx(
        qubo_moments(bqm).mean)


def _other_models():
    qm = dimod.QuadraticModel()
    qm.add_variable("INTEGER", "i", lower_bound=0, upper_bound=3)
    qm.add_variable("BINARY", "b")
    qm.add_quadratic("i", "b", 1.0)
    cqm = dimod.ConstrainedQuadraticModel.from_quadratic_model(qm)
    cqm.add_constraint(qm.copy() if hasattr(qm, "copy") else qm, "<=", 2)
    dqm = dimod.DiscreteQuadraticModel()
    dqm.add_variable(3, "x")
    poly = dimod.BinaryPolynomial({("a", "b", "c"): 1.0}, "SPIN")
    return [(qm, "CQM.from_quadratic_model"), (cqm, "cqm_to_bqm"),
            (dqm, "from_discrete_quadratic_model"), (poly, "make_quadratic")]


@pytest.mark.parametrize("model, conversion", _other_models(),
                         ids=["quadratic", "constrained", "discrete", "polynomial"])
def test_other_dimod_models_name_their_conversion(model, conversion):
    with pytest.raises(TypeError, match=conversion):
        minimize_qubo(model)
    with pytest.raises(TypeError, match=conversion):
        QUBOSampler().sample(model)


def test_higher_order_dict_and_non_bqm():
    with pytest.raises(TypeError, match="make_quadratic"):
        minimize_qubo({(0, 1, 2): 1.0})
    with pytest.raises(TypeError, match="sample_qubo"):
        QUBOSampler().sample({(0, 1): 1.0})


def test_initial_states_and_num_reads():
    bqm = dimod.BinaryQuadraticModel({"a": 1.0, "b": -1.0}, {("a", "b"): 0.5}, 0.0, "SPIN")
    sampler = QUBOSampler()
    greedy = dict(beta_schedule=[np.inf], polish=False)
    one = sampler.sample(bqm, initial_states={"b": 1, "a": -1}, num_reads=3, **greedy)
    assert len(one) == 3 and np.all(one.record.sample == one.record.sample[0])
    states = [{"a": 1, "b": 1}, {"a": -1, "b": -1}]
    two = sampler.sample(bqm, initial_states=states, **greedy)  # num_reads from the states
    assert len(two) == 2
    with pytest.raises(ValueError, match="every variable"):
        sampler.sample(bqm, initial_states={"a": 1})
    with pytest.raises(ValueError, match="one per read"):
        sampler.sample(bqm, initial_states=states, num_reads=5)


def test_unknown_parameters_warn_as_in_dimod():
    bqm = dimod.BinaryQuadraticModel({"a": 1.0}, {}, 0.0, "BINARY")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        QUBOSampler().sample(bqm, num_reads=2, temperature=3.0)
    assert any(issubclass(w.category, dimod.exceptions.SamplerUnknownArgWarning)
               for w in caught)


def test_f_target_and_schedule_options():
    bqm = dimod.generators.gnp_random_bqm(14, 0.5, "SPIN", random_state=8)
    best = _exact_min(bqm)
    ss = QUBOSampler().sample(bqm, num_reads=64, num_sweeps=400, seed=2, f_target=best)
    assert ss.info["status"] == 3 and len(ss) % 8 == 0 and len(ss) <= 64
    assert ss.first.energy == pytest.approx(best, abs=1e-9)
    lin = QUBOSampler().sample(bqm, num_reads=2, num_sweeps=20, seed=2,
                               beta_schedule_type="linear", beta_range=(0.1, 3.0))
    assert lin.info["beta_range"] == (0.1, 3.0)
    with pytest.raises(ValueError, match="beta_schedule"):
        QUBOSampler().sample(bqm, beta_schedule_type="cosine")


@pytest.mark.parametrize("model, conversion", _other_models(),
                         ids=["quadratic", "constrained", "discrete", "polynomial"])
def test_every_qubo_function_names_the_conversion(model, conversion):
    from solvers.qubo import pareto_sweep, qubo_energy, qubo_moments, scale_qubos, scalarize
    from solvers.qubo.anneal import default_beta_range

    f = np.eye(3)
    calls = {"Q": [qubo_moments, default_beta_range],
             r"objectives\[0\]": [lambda m: scale_qubos([m, f]),
                                  lambda m: scalarize([m, f], [1.0, 1.0]),
                                  lambda m: pareto_sweep([m, f])],
             "objective": [lambda m: qubo_energy(m, np.zeros(3))],
             "penalty": [lambda m: pareto_sweep([f, 2.0 * f], penalty=m)]}
    for name, functions in calls.items():
        for function in functions:
            with pytest.raises(TypeError, match=rf"^{name} is a dimod .*{conversion}"):
                function(model)


def test_the_named_conversions_give_models_the_annealer_solves():
    # following the advice of the errors above works: each conversion yields a BQM
    qm = dimod.QuadraticModel()
    qm.add_variable("INTEGER", "i", lower_bound=0, upper_bound=3)
    qm.add_linear("i", -1.0)
    bqm, invert = dimod.cqm_to_bqm(dimod.CQM.from_quadratic_model(qm))
    assert invert(dict(zip(bqm.variables, minimize_qubo(bqm, rng=0).x)))["i"] == 3
    dqm = dimod.DiscreteQuadraticModel()
    dqm.add_variable(3, "x")
    dqm.set_linear("x", [1.0, -2.0, 0.5])
    bqm, _ = dimod.cqm_to_bqm(dimod.CQM.from_discrete_quadratic_model(dqm))
    assert minimize_qubo(bqm, rng=0).fun == pytest.approx(-2.0)
    poly = dimod.BinaryPolynomial({("a", "b", "c"): -1.0}, "SPIN")
    bqm = dimod.make_quadratic(poly, 5.0, dimod.SPIN)
    assert minimize_qubo(bqm, rng=0).fun == pytest.approx(-1.0)
