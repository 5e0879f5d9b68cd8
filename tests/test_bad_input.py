"""The bad-input matrix (issue 17): every public entry point x the kinds of bad input.

One row per entry point (a public function, a class constructor, a public method): a
builder of a small valid call and the category of each argument it tests. The kinds of bad
input come from the category (``tests/_bad_input_table.py``); each cell is one test,
``<entry>-<argument>-<kind>``, plus ``<entry>-valid-ok`` for the valid call itself.

A cell passes when the call raises ``ValueError``/``TypeError`` naming the argument, or
(where the kind allows it) works and gives a finite, checked result. Any other exception,
a non-finite answer presented as a success, or a wrong value fails. Cells that fail today
are listed in ``KNOWN_FAILURES`` (strict xfail): fix the library, then delete the entry.
"""
import importlib
import inspect
import re
import warnings

import numpy as np
import pytest
import scipy.special
from _bad_input_table import (
    CAST_KINDS,
    EITHER,
    EITHER_RUN,
    PROPAGATE,
    RAISE,
    RUN_FAILS,
    USER_ERROR,
    UserObjectiveError,
    kinds,
)

from solvers import (
    kl_dro,
    learn_dag,
    log_softmax,
    logsumexp,
    logsumexp_matmul,
    logsumexp_merge,
    logsumexp_partial,
    minimize,
    minimize_cbo,
    minimize_logsumexp,
    minimize_qubo,
    qubo_moments,
    safe_logsumexp,
    scale_qubos,
    schrodinger_bridge,
    semidual_ot,
    softmax,
)
from solvers.dag import (
    DAGResult,
    SEMData,
    auroc,
    check_data,
    count_accuracy,
    f1_score,
    fdr,
    from_networkx,
    is_dag,
    nhd,
    order_mask,
    shd,
    simulate_dag,
    simulate_data,
    simulate_linear_sem,
    simulate_weights,
    to_networkx,
    topological_order,
    tpr,
)
from solvers.dag import available_methods as available_methods_dag
from solvers.memory import (
    GaussianMemory,
    VectorMemory,
    perturb,
    retrieval_rate,
    synthetic_patterns,
)
from solvers.optimize import available_methods as available_methods_opt
from solvers.optimize import register_method
from solvers.qubo import (
    QuboMoments,
    hypervolume,
    pareto_front,
    pareto_sweep,
    qubo_energy,
    scalarize,
)
from solvers.transport import (
    SchrodingerBridgeResult,
    bridge_from_parameters,
    bures_wasserstein_barycenter,
    bures_wasserstein_cdist,
    bures_wasserstein_distance,
    entropic_gaussian_plan,
    monge_map,
    sqrtm_psd,
    weighted_monge_map,
)
from solvers.transport.benchmark import (
    BenchmarkPair,
    bw2_squared,
    bw_uvp,
    cbw_uvp,
    make_pair,
)

# =========================================================================================
# KNOWN_FAILURES: cells that fail today, "entry-arg-kind": "what happens today".
# Fix the library, then delete the entry (strict xfail: a fixed cell fails until deleted).
# =========================================================================================
KNOWN_FAILURES = {
    # --- lse
    "logsumexp-axis-float": "TypeError not naming it: float' object is not iterable",
    "softmax-x-inf": "gives [nan, 0, 0, 0] where SciPy gives all NaN",
    "softmax-axis-float": "TypeError not naming it: float' object cannot be interpreted as an int",
    "log_softmax-axis-float": "TypeError not naming it: float' object cannot be interpreted as an",
    "logsumexp_matmul-A-nan": "Numba path gives -inf where SciPy/dense give NaN (issue 17 item 1)",
    "logsumexp_matmul-A-inf": "Numba path gives NaN where SciPy/dense give +inf (issue 17 item 1)",
    "logsumexp_matmul-log_b-inf": "Numba path gives NaN where dense gives +inf (issue 17 item 1)",
    "logsumexp_partial-axis-float": "TypeError not naming it: float' object cannot be interpreted",
    "logsumexp_merge-maxes-empty": "ValueError not naming it: zero-size array to reduction operat",
    "logsumexp_merge-maxes-bool": "bool maxes merged in lower precision (rel. error 1e-4)",
    "logsumexp_merge-sums-empty": "ValueError not naming it: operands could not be broadcast toge",
    "logsumexp_merge-axis-float": "TypeError not naming it: float' object cannot be interpreted a",
    "safe_logsumexp-b-inf": "NaN arithmetic inside (RuntimeWarning: invalid value encountered in ",
    "safe_logsumexp-axis-float": "TypeError not naming it: float' object is not iterable",
    "safe_logsumexp-tol-neg": "accepted without error: returns array([1.49854785, 1.65202227, 2.7",
    "safe_logsumexp-tol-nan": "accepted without error: returns array([1.49854785, 1.65202227, 2.7",
    "safe_logsumexp-tol-str": "accepted without error: returns array([1.49854785, 1.65202227, 2.7",
    "minimize_logsumexp-x0-nan": "accepted: success=False, phi returned non-finite values or grad",
    "minimize_logsumexp-x0-inf": "accepted: success=False, phi returned non-finite values or grad",
    "minimize_logsumexp-x0-empty": "ValueError not naming it: operands could not be broadcast tog",
    "minimize_logsumexp-x0-float16": "NotImplementedError: float16",
    "minimize_logsumexp-data-complex": "accepted: success=True, maximum number of iterations reac",
    "minimize_logsumexp-data-list": "AttributeError: 'list' object has no attribute 'shape'",
    "minimize_logsumexp-callback-notcallable": "TypeError not naming it: float' object is not cal",
    "kl_dro-X-float16": "NotImplementedError: float16",
    "kl_dro-X-shape": "ValueError not naming it: matmul: Input operand 1 has a mismatch in its co",
    "kl_dro-x0-nan": "accepted: success=False, phi returned non-finite values or gradients at ste",
    "kl_dro-x0-inf": "accepted: success=False, phi returned non-finite values or gradients at ste",
    "kl_dro-x0-empty": "ValueError not naming it: matmul: Input operand 1 has a mismatch in its c",
    "kl_dro-x0-shape": "ValueError not naming it: matmul: Input operand 1 has a mismatch in its c",
    "kl_dro_logistic-y-zero_one": "accepted: success=True, maximum number of iterations reached",
    "kl_dro_logistic-y-one_two": "accepted: success=True, maximum number of iterations reached",
    "kl_dro_logistic-y-continuous": "accepted: success=True, maximum number of iterations reached",
    # --- optimize
    "minimize-x0-float16": "NotImplementedError: float16",
    "minimize-callback-notcallable": "TypeError not naming it: float' object is not callable",
    "minimize_safe_kl-x0-nan": "accepted: success=False, phi returned non-finite values or gradie",
    "minimize_safe_kl-x0-inf": "accepted: success=False, phi returned non-finite values or gradie",
    "minimize_safe_kl-x0-empty": "ValueError not naming it: operands could not be broadcast toget",
    "minimize_safe_kl-x0-float16": "NotImplementedError: float16",
    "minimize_cbo-x0-float16": "NotImplementedError: float16",
    "minimize_cbo-callback-notcallable": "TypeError not naming it: float' object is not callable",
    "register_method-name-int": "AttributeError: 'int' object has no attribute 'lower'",
    "register_method-name-empty": "accepted without error: returns <function <lambda>.<locals>.<l",
    "register_method-func-notcallable": "accepted without error: returns 3.0",
    # --- transport
    "schrodinger_bridge-callback-notcallable": "TypeError not naming it: float' object is not cal",
    "bridge_from_parameters-log_alpha-nan": "accepted: success=True, built from parameters",
    "bridge_from_parameters-log_alpha-inf": "NaN arithmetic inside (RuntimeWarning: invalid value",
    "bridge_from_parameters-log_alpha-float16": "NotImplementedError: float16",
    "bridge_from_parameters-r-nan": "accepted: success=True, built from parameters",
    "bridge_from_parameters-r-inf": "accepted: success=True, built from parameters",
    "bridge_from_parameters_full-S-nan": "accepted: success=True, built from parameters",
    "bridge_from_parameters_full-S-inf": "NaN arithmetic inside (RuntimeWarning: invalid value en",
    "bridge_from_parameters_full-S-nonsym": "accepted: success=True, built from parameters",
    "bridge_from_parameters_full-S-nonspd": "LinAlgError not naming it: Matrix is not positive de",
    "bridge_from_parameters_full-S-nonsquare": "ValueError not naming it: operands could not be b",
    "bures_wasserstein_distance-m1-nan": "accepted: returns np.float64 holding NaN",
    "bures_wasserstein_distance-m1-inf": "accepted: returns np.float64 holding inf",
    "bures_wasserstein_distance-m1-empty": "ValueError not naming it: operands could not be broad",
    "bures_wasserstein_distance-m1-ndim": "accepted without error: returns array([4.79383688])",
    "bures_wasserstein_distance-m1-shape": "ValueError not naming it: operands could not be broad",
    "bures_wasserstein_distance-S1-nan": "LinAlgError not naming it: Eigenvalues did not converge",
    "bures_wasserstein_distance-S1-inf": "LinAlgError not naming it: Eigenvalues did not converge",
    "bures_wasserstein_distance-S1-nonsym": "accepted without error: returns np.float64(5.0282612",
    "bures_wasserstein_distance-S1-nonspd": "accepted without error: returns np.float64(0.0)",
    "bures_wasserstein_distance-S1-nonsquare": "ValueError not naming it: operands could not be b",
    "bures_wasserstein_distance-S1-ndim": "accepted without error: returns array([4.79383688])",
    "bures_wasserstein_distance-m2-nan": "accepted: returns np.float64 holding NaN",
    "bures_wasserstein_distance-m2-inf": "accepted: returns np.float64 holding inf",
    "bures_wasserstein_distance-m2-empty": "ValueError not naming it: operands could not be broad",
    "bures_wasserstein_distance-m2-ndim": "accepted without error: returns array([4.79383688])",
    "bures_wasserstein_distance-m2-shape": "ValueError not naming it: operands could not be broad",
    "bures_wasserstein_distance-S2-nan": "LinAlgError not naming it: Eigenvalues did not converge",
    "bures_wasserstein_distance-S2-inf": "NaN arithmetic inside (RuntimeWarning: invalid value en",
    "bures_wasserstein_distance-S2-nonsym": "accepted without error: returns np.float64(4.6463700",
    "bures_wasserstein_distance-S2-nonspd": "accepted without error: returns np.float64(0.0)",
    "bures_wasserstein_distance-S2-nonsquare": "ValueError not naming it: matmul: Input operand 1",
    "bures_wasserstein_distance-S2-ndim": "accepted without error: returns array([4.79383688])",
    "sqrtm_psd-S-nan": "LinAlgError not naming it: Eigenvalues did not converge",
    "sqrtm_psd-S-inf": "accepted: returns an array holding NaN",
    "sqrtm_psd-S-nonsquare": "ValueError not naming it: operands could not be broadcast together ",
    "weighted_monge_map-weights-zero": "accepted without error: returns array([[[0., 0., 0.], [0.",
    # --- transport.benchmark
    "BenchmarkPair-weights-nan": "accepted without error: returns BenchmarkPair(dim=3, epsilon=1.",
    "BenchmarkPair-weights-neg": "NaN arithmetic inside (RuntimeWarning: invalid value encountere",
    "BenchmarkPair-weights-zero": "NaN arithmetic inside (RuntimeWarning: divide by zero encounte",
    "BenchmarkPair-weights-shape": "ValueError not naming it: operands could not be broadcast tog",
    "BenchmarkPair-means-nan": "accepted without error: returns BenchmarkPair(dim=3, epsilon=1.0,",
    "BenchmarkPair-means-inf": "accepted without error: returns BenchmarkPair(dim=3, epsilon=1.0,",
    "BenchmarkPair-means-empty": "ValueError not naming it: operands could not be broadcast toget",
    "BenchmarkPair-means-ndim": "ValueError not naming it: operands could not be broadcast togeth",
    "BenchmarkPair-means-complex": "accepted with a ComplexWarning: the imaginary part is discard",
    "BenchmarkPair-means-shape": "ValueError not naming it: operands could not be broadcast toget",
    "BenchmarkPair-covariances-nan": "ValueError not naming it: diagonal S must have positive ent",
    "BenchmarkPair-covariances-inf": "accepted without error: returns BenchmarkPair(dim=3, epsilo",
    "BenchmarkPair-covariances-nonsym": "accepted without error: returns BenchmarkPair(dim=3, eps",
    "BenchmarkPair-covariances-nonspd": "accepted without error: returns BenchmarkPair(dim=3, eps",
    "BenchmarkPair-covariances-nonsquare": "LinAlgError not naming it: Last 2 dimensions of the a",
    "BenchmarkPair-covariances-ndim": "ValueError not naming it: operand has more dimensions than",
    "BenchmarkPair-covariances-complex": "accepted with a ComplexWarning: the imaginary part is d",
    "bw2_squared-m1-nan": "accepted: returns np.float64 holding NaN",
    "bw2_squared-m1-inf": "accepted: returns np.float64 holding inf",
    "bw2_squared-m1-empty": "ValueError not naming it: operands could not be broadcast together w",
    "bw2_squared-m1-ndim": "accepted without error: returns array([2.39691844])",
    "bw2_squared-m1-shape": "ValueError not naming it: operands could not be broadcast together w",
    "bw2_squared-S1-nan": "LinAlgError not naming it: Eigenvalues did not converge",
    "bw2_squared-S1-inf": "LinAlgError not naming it: Eigenvalues did not converge",
    "bw2_squared-S1-nonsym": "accepted without error: returns np.float64(2.5141306140303983)",
    "bw2_squared-S1-nonspd": "accepted without error: returns np.float64(0.0)",
    "bw2_squared-S1-nonsquare": "ValueError not naming it: operands could not be broadcast togeth",
    "bw2_squared-S1-ndim": "accepted without error: returns array([2.39691844])",
    "bw2_squared-m2-nan": "accepted: returns np.float64 holding NaN",
    "bw2_squared-m2-inf": "accepted: returns np.float64 holding inf",
    "bw2_squared-m2-empty": "ValueError not naming it: operands could not be broadcast together w",
    "bw2_squared-m2-ndim": "accepted without error: returns array([2.39691844])",
    "bw2_squared-m2-shape": "ValueError not naming it: operands could not be broadcast together w",
    "bw2_squared-S2-nan": "LinAlgError not naming it: Eigenvalues did not converge",
    "bw2_squared-S2-inf": "NaN arithmetic inside (RuntimeWarning: invalid value encountered in ma",
    "bw2_squared-S2-nonsym": "accepted without error: returns np.float64(2.3231850253616266)",
    "bw2_squared-S2-nonspd": "accepted without error: returns np.float64(0.0)",
    "bw2_squared-S2-nonsquare": "ValueError not naming it: matmul: Input operand 1 has a mismatch",
    "bw2_squared-S2-ndim": "accepted without error: returns array([2.39691844])",
    "bw_uvp-model-none": "AttributeError: 'NoneType' object has no attribute 'sample'",
    "bw_uvp-model-wrong": "AttributeError: 'numpy.ndarray' object has no attribute 'sample'",
    "bw_uvp-pair-none": "AttributeError: 'NoneType' object has no attribute 'sample_x0'",
    "bw_uvp-pair-wrong": "AttributeError: 'numpy.ndarray' object has no attribute 'sample_x0'",
    "bw_uvp-n_samples-zero": "ValueError not naming it: n must be >= 1, got 0",
    "bw_uvp-n_samples-neg": "ValueError not naming it: n must be >= 1, got -2",
    "bw_uvp-n_samples-float": "TypeError not naming it: n must be an integer, got float",
    "bw_uvp-n_samples-str": "TypeError not naming it: n must be an integer, got str",
    "cbw_uvp-model-none": "AttributeError: 'NoneType' object has no attribute 'sample'",
    "cbw_uvp-model-wrong": "AttributeError: 'numpy.ndarray' object has no attribute 'sample'",
    "cbw_uvp-pair-none": "AttributeError: 'NoneType' object has no attribute 'var_x1'",
    "cbw_uvp-pair-wrong": "AttributeError: 'numpy.ndarray' object has no attribute 'var_x1'",
    "cbw_uvp-x-empty": "ValueError not naming it: need at least one array to concatenate",
    "cbw_uvp-x-complex": "accepted with a ComplexWarning: the imaginary part is discarded",
    "cbw_uvp-chunk-zero": "accepted without error: returns 10.990508057110455",
    "cbw_uvp-chunk-neg": "ValueError not naming it: need at least one array to concatenate",
    "cbw_uvp-chunk-float": "TypeError not naming it: float' object cannot be interpreted as an in",
    "cbw_uvp-chunk-str": "TypeError not naming it: str' object cannot be interpreted as an intege",
    # --- memory
    "GaussianMemory.retrieve-callback-notcallable": "TypeError not naming it: float' object is no",
    "VectorMemory.retrieve-x-empty": "ValueError not naming it: need at least one array to concat",
    "VectorMemory.retrieve-callback-notcallable": "TypeError not naming it: float' object is not ",
    "synthetic_patterns-eig_range-reversed": "ValueError not naming it: high - low < 0",
    "synthetic_patterns-eig_range-length": "ValueError not naming it: not enough values to unpack",
    "perturb-means-nan": "accepted: returns a tuple holding NaN",
    "perturb-means-inf": "accepted: returns a tuple holding inf",
    "perturb-means-empty": "ValueError not naming it: operands could not be broadcast together wi",
    "perturb-means-ndim": "ValueError not naming it: too many values to unpack (expected 2)",
    "perturb-means-complex": "accepted with a ComplexWarning: the imaginary part is discarded",
    "perturb-means-shape": "ValueError not naming it: operands could not be broadcast together wi",
    "perturb-covs-nan": "LinAlgError not naming it: Eigenvalues did not converge",
    "perturb-covs-inf": "NaN arithmetic inside (RuntimeWarning: invalid value encountered in matm",
    "perturb-covs-nonsym": "accepted without error: returns (array([[ 0.73499435, -0.44593157, -0",
    "perturb-covs-nonspd": "NaN arithmetic inside (RuntimeWarning: invalid value encountered in s",
    "perturb-covs-nonsquare": "ValueError not naming it: operands could not be broadcast together",
    "perturb-covs-ndim": "ValueError not naming it: operand has more dimensions than subscripts g",
    "perturb-covs-complex": "accepted with a ComplexWarning: the imaginary part is discarded",
    "retrieval_rate-memory-none": "AttributeError: 'NoneType' object has no attribute 'means'",
    "retrieval_rate-memory-wrong": "AttributeError: 'numpy.ndarray' object has no attribute 'mean",
    "retrieval_rate-result-none": "AttributeError: 'NoneType' object has no attribute 'means'",
    "retrieval_rate-result-wrong": "AttributeError: 'numpy.ndarray' object has no attribute 'mean",
    "retrieval_rate-true_index-float": "IndexError: arrays used as indices must be of integer (or",
    "retrieval_rate-true_index-neg": "IndexError: arrays used as indices must be of integer (or b",
    "retrieval_rate-true_index-shape": "ValueError not naming it: operands could not be broadcast",
    # --- dag
    "learn_dag_cosmo-X-float16": "NotImplementedError: float16",
    "learn_dag_cosmo-callback-notcallable": "TypeError not naming it: float' object is not callab",
    "learn_dag_dpdag-X-float16": "TypeError not naming it: array type float16 is unsupported in l",
    "learn_dag_dpdag-X-fewrows": "LinAlgError not naming it: Matrix is not positive definite",
    "learn_dag_dpdag-X-dupcol": "LinAlgError not naming it: Matrix is not positive definite",
    "DAGResult.to_networkx-labels-dup": "accepted without error: returns <networkx.classes.digrap",
    "SEMData-X-nan": "accepted: returns SEMData holding NaN",
    "SEMData-X-inf": "accepted: returns SEMData holding inf",
    "SEMData-X-ndim": "accepted without error: returns SEMData(X=array([[[ 9.46001318e-01, 2.54",
    "SEMData-X-complex": "accepted without error: returns SEMData(X=array([[ 9.46001318e-01+0.5j,",
    "SEMData-X-shape": "accepted without error: returns SEMData(X=array([[ 9.46001318e-01, 2.545",
    "SEMData-W-nan": "accepted without error: returns SEMData(X=array([[ 9.46001318e-01, 2.545",
    "SEMData-W-inf": "accepted without error: returns SEMData(X=array([[ 9.46001318e-01, 2.545",
    "SEMData-W-nonsquare": "accepted without error: returns SEMData(X=array([[ 9.46001318e-01, 2.",
    "SEMData-W-ndim": "accepted without error: returns SEMData(X=array([[ 9.46001318e-01, 2.545",
    "SEMData-W-complex": "accepted without error: returns SEMData(X=array([[ 9.46001318e-01, 2.54",
    "SEMData-B-nan": "accepted without error: returns SEMData(X=array([[ 9.46001318e-01, 2.545",
    "SEMData-B-nonsquare": "accepted without error: returns SEMData(X=array([[ 9.46001318e-01, 2.",
    "SEMData-B-nonbinary": "accepted without error: returns SEMData(X=array([[ 9.46001318e-01, 2.",
    "SEMData-B-cyclic": "accepted without error: returns SEMData(X=array([[ 9.46001318e-01, 2.545",
    "SEMData-B-ndim": "accepted without error: returns SEMData(X=array([[ 9.46001318e-01, 2.545",
    "auroc-W_score-nan": "accepted without error: returns 0.25",
    "auroc-W_score-inf": "accepted without error: returns 0.25",
    "auroc-W_score-complex": "accepted with a ComplexWarning: the imaginary part is discarded",
    "from_networkx-G-none": "AttributeError: 'NoneType' object has no attribute 'edges'",
    "from_networkx-G-wrong": "AttributeError: 'numpy.ndarray' object has no attribute 'edges'",
    "from_networkx-nodelist-dup": "accepted without error: returns array([[0. , 0. , 0. , 0. ], [",
    "is_dag-B-nan": "accepted without error: returns False",
    "is_dag-B-nonsquare": "ValueError not naming it: adjacency must be a square matrix, got shape",
    "is_dag-B-ndim": "ValueError not naming it: adjacency must be a square matrix, got shape (1, ",
    "topological_order-B-nan": "accepted without error: returns None",
    "topological_order-B-nonsquare": "ValueError not naming it: adjacency must be a square matrix",
    "topological_order-B-ndim": "ValueError not naming it: adjacency must be a square matrix, got",
    "order_mask-order-float": "accepted without error: returns array([[False, True, False, True],",
    "simulate_data-noise_scale-zero": "accepted without error: returns SEMData(X=array([[0., 0., ",
    "simulate_data-noise_scale-str": "accepted without error: returns SEMData(X=array([[-1.480930",
    "simulate_linear_sem-noise_scale-zero": "accepted without error: returns array([[0., 0., 0., ",
    "simulate_linear_sem-noise_scale-str": "accepted without error: returns array([[ 0.12573022, ",
    "simulate_weights-B-nan": "accepted without error: returns array([[ 1.31543749, 1.90260864, 0",
    "simulate_weights-B-nonbinary": "accepted without error: returns array([[ 1.31543749, 1.90260",
    "simulate_weights-B-cyclic": "accepted without error: returns array([[ 0. , 1.90260864, 0. , ",
    "to_networkx-W-nan": "accepted without error: returns <networkx.classes.digraph.DiGraph objec",
    "to_networkx-W-inf": "accepted without error: returns <networkx.classes.digraph.DiGraph objec",
    "to_networkx-W-complex": "accepted with a ComplexWarning: the imaginary part is discarded",
    "to_networkx-threshold-neg": "accepted without error: returns <networkx.classes.digraph.DiGra",
    "to_networkx-threshold-nan": "accepted without error: returns <networkx.classes.digraph.DiGra",
    "to_networkx-threshold-inf": "accepted without error: returns <networkx.classes.digraph.DiGra",
    "to_networkx-labels-dup": "accepted without error: returns <networkx.classes.digraph.DiGraph ",
    # --- qubo
    "QuboMoments-var-neg": "accepted without error: returns QuboMoments(mean=1.0, var=-1.0)",
    "QuboMoments-var-nan": "accepted: returns QuboMoments holding NaN",
    "QuboMoments-var-inf": "accepted: returns QuboMoments holding inf",
    "hypervolume-points-complex": "accepted with a ComplexWarning: the imaginary part is discarde",
    "hypervolume-reference-complex": "accepted with a ComplexWarning: the imaginary part is disca",
    "minimize_qubo-beta_range-reversed": "accepted: success=True, annealing finished",
    "pareto_front-points-nan": "accepted without error: returns array([ True, True, False])",
    "pareto_front-points-inf": "accepted without error: returns array([False, True, False])",
    "pareto_front-points-complex": "accepted with a ComplexWarning: the imaginary part is discard",
    "pareto_sweep-objectives-nan": "ValueError not naming it: Q must be finite; it holds 1 NaN va",
    "pareto_sweep-objectives-ndim": "ValueError not naming it: Q must have 2 dimension(s), got sh",
    "pareto_sweep-weights-zero": "ValueError not naming it: n_weights must be >= 1, got 0",
    "pareto_sweep-weights-neg": "ValueError not naming it: n_weights must be >= 1, got -2",
    "qubo_energy-objective-nan": "ValueError not naming it: Q must be finite; it holds 1 NaN valu",
    "qubo_energy-objective-inf": "ValueError not naming it: Q must be finite; it holds 0 NaN valu",
    "qubo_energy-objective-nonsquare": "ValueError not naming it: Q must be square (n, n), got sh",
    "qubo_energy-objective-ndim": "ValueError not naming it: Q must have 2 dimension(s), got shap",
    "qubo_energy-objective-complex": "TypeError not naming it: Q must be real, got complex dtype ",
    "qubo_energy-objective-object": "TypeError not naming it: Q must be numeric, got dtype object",
    "qubo_energy-X-nan": "accepted: returns an array holding NaN",
    "qubo_energy-X-nonbinary": "accepted without error: returns array([ 3.04847872, 0.50889389, 3",
    "qubo_energy-X-shape": "ValueError not naming it: operands could not be broadcast together wi",
    "scalarize-objectives-nan": "ValueError not naming it: Q must be finite; it holds 1 NaN value",
    "scalarize-objectives-ndim": "ValueError not naming it: Q must have 2 dimension(s), got shape",
    "scalarize-weights-neg": "accepted without error: returns (array([[ 1.38490602e+00, 1.0099963",
    "scale_qubos-objectives-nan": "ValueError not naming it: Q must be finite; it holds 1 NaN val",
    "scale_qubos-objectives-ndim": "ValueError not naming it: Q must have 2 dimension(s), got sha",
}
# =========================================================================================

# ------------------------------------------------------------------------------ rows
_MODULES = ("solvers.lse", "solvers.optimize", "solvers.transport",
            "solvers.transport.benchmark", "solvers.memory", "solvers.dag", "solvers.qubo",
            "solvers")


def public_names():
    """Qualified public callables: each module's ``__all__`` and classes' public methods."""
    names, seen = set(), set()
    for modname in _MODULES:
        mod = importlib.import_module(modname)
        for name in mod.__all__:
            obj = getattr(mod, name)
            if inspect.ismodule(obj) or not callable(obj) or id(obj) in seen:
                continue
            seen.add(id(obj))
            names.add(f"{modname}.{name}")
            if inspect.isclass(obj):
                names.update(f"{modname}.{name}.{m}" for m, v in vars(obj).items()
                             if m[:1] != "_" and inspect.isfunction(v))
    return names


class Row:
    """One entry point: ``call(**valid())`` works; ``args`` maps argument -> category."""

    def __init__(self, id, call, valid, args=None, *, covers, out=None, reference=None,
                 check=None, overrides=None, names=None, skip=(), cast_rtol=None, backend=False):
        self.id, self.call, self.valid, self.args = id, call, valid, dict(args or {})
        if backend:  # the entry point takes backend=: test it too
            self.valid = lambda: {**valid(), "backend": "auto"}
            self.args["backend"] = "backend"
        self.covers = (covers,) if isinstance(covers, str) else tuple(covers)
        self.out, self.reference, self.check = out, reference, check
        self.overrides, self.names = dict(overrides or {}), dict(names or {})
        self.skip, self.cast_rtol = set(skip), cast_rtol

    def __repr__(self):
        return self.id


_R = np.random.default_rng(20261201)
_A = _R.standard_normal((3, 4))
_B = _R.uniform(0.5, 2.0, (3, 4))
_X = _R.standard_normal((16, 3))
_Y = _R.standard_normal((12, 3)) + 1.0
_M = _R.standard_normal((4, 3))
_Q2 = _R.standard_normal((2, 3))


def _spd(n, d, shift):
    G = _R.standard_normal((n, d, d))
    return G @ np.swapaxes(G, -1, -2) / d + shift * np.eye(d)


_C, _CQ = _spd(4, 3, 0.5), _spd(2, 3, 0.5)
_VAR = _R.uniform(0.5, 1.5, (2, 3))
_W4 = np.array([0.1, 0.2, 0.3, 0.4])
_QUBO = _R.standard_normal((5, 5))
_QUBO = (_QUBO + _QUBO.T) / 2
_QUBO2 = np.triu(_R.standard_normal((5, 5)))
_STATES = (_R.random((4, 5)) < 0.5).astype(float)
_DAG_W = np.array([[0, 1.5, 0, -1.0], [0, 0, 0.8, 0], [0, 0, 0, 1.2], [0, 0, 0, 0]])
_DAG_B = (_DAG_W != 0).astype(float)
_DAG_X = (np.linalg.solve(np.eye(4) - _DAG_W.T, _R.standard_normal((4, 40)))).T
_LABELS = ["a", "b", "c", "d"]


def _sphere(x):
    return float(np.sum((np.asarray(x) - 0.5) ** 2))


def _sphere_vec(x):
    return np.sum((np.asarray(x) - 0.5) ** 2, axis=0)


def _phi(x, batch):
    diff = x - batch
    return 0.5 * np.sum(diff ** 2, axis=1), diff


def _scipy_lse(a, axis=None, b=None, keepdims=False, return_sign=False, backend=None):
    with np.errstate(all="ignore"):
        return [np.asarray(scipy.special.logsumexp(a, axis=axis, b=b))]


def _dense_matmul(A, B, log_b=None, block_size=None, backend=None):
    with np.errstate(all="ignore"):
        Z = np.asarray(A) @ np.asarray(B)
        if log_b is not None:
            Z = Z + np.asarray(log_b)
        return [np.asarray(scipy.special.logsumexp(Z, axis=1))]


def _naive_merge(maxes, sums, axis=0):
    with np.errstate(all="ignore"):
        m, s = np.asarray(maxes), np.asarray(sums)
        return [np.log(np.sum(s * np.exp(m), axis=axis))]


def _lse_partial_out(res):
    m, s = res
    with np.errstate(all="ignore"):
        return [np.log(np.asarray(s)) + np.asarray(m)]


def _registered(name, func, **kw):
    from solvers.optimize._minimize import _OPTIONAL_X0, _ROUTER
    try:
        return register_method(name, func, **kw)
    finally:
        if isinstance(name, str):
            _ROUTER._solvers.pop(name.lower(), None)
            _OPTIONAL_X0.discard(name.lower())


_BRIDGE = {}


def _bridge():
    if "b" not in _BRIDGE:
        _BRIDGE["b"] = bridge_from_parameters(np.zeros(2), _M[:2].copy(), _VAR.copy(), 0.5)
    return _BRIDGE["b"]


def _pair():
    if "p" not in _BRIDGE:
        _BRIDGE["p"] = make_pair(2, 1.0, n_components=2, seed=0)
    return _BRIDGE["p"]


def _gmem():
    return GaussianMemory(_M.copy(), _C.copy(), 1.0)


def _vmem():
    return VectorMemory(_M.copy(), 1.0)


def _dag_result():
    if "d" not in _BRIDGE:
        _BRIDGE["d"] = learn_dag(_DAG_X.copy(), method="cosmo", maxiter=20, refine=False,
                                 rng=0)
    return _BRIDGE["d"]


def _c(a):
    return np.array(a, copy=True)


def _bridge_out(res):
    return [np.asarray(res[k]) for k in ("log_alpha", "r", "S")]


def _dag_out(res):
    return [np.asarray(res["W"], dtype=float), np.asarray(res["adjacency"], dtype=float)]


def _memory_out(m):
    return [np.asarray(m.distances(_Q2.copy(), _CQ.copy()))]


def _vmemory_out(m):
    return [np.asarray(m.energy(_Q2.copy()))]


def _methods(row_id, make, cover, specs):
    """Rows for the public methods of an object built by ``make()``."""
    rows = []
    for name, valid, args, extra in specs:
        rows.append(Row(f"{row_id}.{name}", _method_call(make, name), valid, args,
                        covers=f"{cover}.{name}", **extra))
    return rows


def _method_call(make, name):
    return lambda **kw: getattr(make(), name)(**kw)


def _dpdag_iter_name():
    from solvers.dag.dpdag import _learn_dpdag
    return "maxiter" if "maxiter" in inspect.signature(_learn_dpdag).parameters else "max_iter"


_DP_ITER = _dpdag_iter_name()
_LSE = {"a": "array", "b": "array", "axis": "axis"}
_QA = {"means": "data+shape", "covs": "spd"}
# the memory methods call their queries query_means / query_covs / queries
_QNAMES = {"means": ("means", "query_means", "covs"), "covs": ("covs", "query_covs")}
_XNAMES = {"x": ("x", "queries")}


def _q_valid():
    return {"means": _c(_Q2), "covs": _c(_CQ)}


ROWS = [
    # ------------------------------------------------------------------------ lse
    Row("logsumexp", logsumexp, lambda: {"a": _c(_A), "b": _c(_B), "axis": 1}, _LSE,
        covers="solvers.lse.logsumexp", backend=True, reference=_scipy_lse),
    Row("softmax", softmax, lambda: {"x": _c(_A), "axis": 1}, {"x": "array", "axis": "axis"},
        covers="solvers.lse.softmax",
        reference=lambda x, axis=None: [scipy.special.softmax(x, axis=axis)]),
    Row("log_softmax", log_softmax, lambda: {"x": _c(_A), "axis": 1},
        {"x": "array", "axis": "axis"}, covers="solvers.lse.log_softmax",
        reference=lambda x, axis=None: [scipy.special.log_softmax(x, axis=axis)]),
    Row("logsumexp_matmul", logsumexp_matmul,
        lambda: {"A": _c(_A), "B": _c(_B.T), "log_b": np.log(_B[:, 0]), "block_size": 2},
        {"A": "array2", "B": "array2", "log_b": "array2", "block_size": "count"},
        covers="solvers.lse.logsumexp_matmul", backend=True, reference=_dense_matmul,
        names={"B": ("B", "log_b")}),
    Row("logsumexp_partial", logsumexp_partial, lambda: {"a": _c(_A), "axis": 1},
        {"a": "array", "axis": "axis"}, covers="solvers.lse.logsumexp_partial",
        out=_lse_partial_out, reference=_scipy_lse),
    Row("logsumexp_merge", logsumexp_merge,
        lambda: {"maxes": _c(_A), "sums": _c(_B), "axis": 0},
        {"maxes": "array", "sums": "array", "axis": "axis"},
        covers="solvers.lse.logsumexp_merge", reference=_naive_merge, out=_lse_partial_out),
    Row("safe_logsumexp", safe_logsumexp,
        lambda: {"a": _c(_A), "rho": 0.1, "b": _c(_B), "axis": 1, "tol": 1e-8, "maxiter": 50},
        {"a": "array", "rho": "prob", "b": "array", "axis": "axis", "tol": "tol",
         "maxiter": "maxiter"}, covers="solvers.safe_logsumexp", backend=True),
    Row("minimize_logsumexp", minimize_logsumexp,
        lambda: {"phi": _phi, "x0": np.zeros(3), "data": _c(_X), "rho": 0.1, "batch_size": 4,
                 "maxiter": 10, "lr": 0.01, "estimator": "safe-kl", "optimizer": "adam",
                 "rng": 0, "callback": None},
        {"phi": "objective", "x0": "data+shape", "data": "data", "rho": "prob",
         "batch_size": "count", "maxiter": "maxiter", "lr": "scale", "estimator": "choice",
         "optimizer": "choice", "rng": "rng", "callback": "callable"},
        covers="solvers.minimize_logsumexp", backend=True, skip={("data", "ndim"), ("x0", "shape")},
        names={"x0": ("x0", "phi"), "data": ("data", "phi")},
        overrides={("data", "nan"): EITHER_RUN, ("data", "inf"): EITHER_RUN}),
    Row("kl_dro", kl_dro,
        lambda: {"X": _c(_X), "y": _c(_X[:, 0]), "lam": 1.0, "l2": 0.1, "rho": 0.1,
                 "lr": 0.05, "batch_size": 4, "epochs": 1, "loss": "squared",
                 "method": "safe-kl", "x0": np.zeros(3), "rng": 0},
        {"X": "data+shape", "y": "data+shape", "lam": "scale", "l2": "nonneg", "rho": "prob",
         "lr": "scale", "batch_size": "count", "loss": "choice", "method": "choice",
         "x0": "data+shape", "rng": "rng"},
        covers="solvers.kl_dro", backend=True, names={"X": ("X", "x0", "y"), "x0": ("x0", "X")}),
    Row("kl_dro_logistic", kl_dro,
        lambda: {"X": _c(_X), "y": np.where(_X[:, 0] > 0, 1.0, -1.0), "lam": 1.0,
                 "loss": "logistic", "batch_size": 4, "epochs": 1, "rng": 0},
        {"y": "pm_labels"}, covers="solvers.kl_dro"),
    Row("semidual_ot", semidual_ot,
        lambda: {"X": _c(_X), "Y": _c(_Y), "eps": 0.5, "a": np.full(16, 1 / 16),
                 "b": np.full(12, 1 / 12), "rho": 0.1, "lr": 1.0, "method": "safe-kl",
                 "batch_size": 4, "target_batch_size": 4, "maxiter": 10, "rng": 0},
        {"X": "data+shape", "Y": "data+shape", "eps": "scale", "a": "simplex", "b": "simplex",
         "rho": "prob", "lr": "scale", "method": "choice", "batch_size": "count",
         "maxiter": "maxiter", "rng": "rng"},
        covers="solvers.semidual_ot", names={"X": ("X", "Y", "a"), "Y": ("Y", "X", "b")}),
    # ------------------------------------------------------------------- optimize
    Row("minimize", minimize,
        lambda: {"fun": _sphere, "x0": np.zeros(2), "method": "cbo",
                 "bounds": [(-2.0, 2.0)] * 2, "maxiter": 15, "n_particles": 10, "rng": 0,
                 "callback": None},
        {"fun": "objective", "x0": "data+shape", "method": "choice", "bounds": "bounds",
         "callback": "callable"},
        covers="solvers.optimize.minimize", names={"x0": ("x0", "bounds"),
                                                   "bounds": ("bounds", "x0")}),
    Row("minimize_anneal", minimize,
        lambda: {"fun": _c(_QUBO), "method": "anneal", "n_reads": 2, "n_sweeps": 20, "rng": 0},
        {"fun": "square", "method": "choice"}, covers="solvers.optimize.minimize",
        names={"fun": ("fun", "Q")}),
    Row("minimize_safe_kl", minimize,
        lambda: {"fun": _phi, "x0": np.zeros(3), "method": "safe-kl", "data": _c(_X),
                 "rho": 0.1, "batch_size": 4, "maxiter": 10, "rng": 0},
        {"fun": "objective", "x0": "data", "rho": "prob"}, covers="solvers.optimize.minimize",
        names={"fun": ("fun", "phi")}),
    Row("minimize_cbo", minimize_cbo,
        lambda: {"fun": _sphere, "bounds": [(-2.0, 2.0)] * 2, "x0": np.zeros(2),
                 "n_particles": 10, "maxiter": 15, "alpha": 30.0, "sigma": 1.0, "lam": 0.4,
                 "dt": 0.01, "ess": 0.5, "noise": "anisotropic", "n_runs": 1, "rng": 0,
                 "callback": None},
        {"fun": "objective", "bounds": "bounds", "x0": "data+shape", "n_particles": "count",
         "maxiter": "maxiter", "alpha": "nonneg", "sigma": "nonneg", "lam": "nonneg",
         "dt": "scale", "ess": "prob", "noise": "choice", "n_runs": "count", "rng": "rng",
         "callback": "callable"},
        covers="solvers.minimize_cbo", backend=True, names={"x0": ("x0", "bounds"),
                                              "bounds": ("bounds", "x0")}),
    Row("minimize_cbo_vectorized", minimize_cbo,
        lambda: {"fun": _sphere_vec, "bounds": [(-2.0, 2.0)] * 2, "vectorized": True,
                 "n_particles": 10, "maxiter": 15, "rng": 0},
        {"fun": "objective"}, covers="solvers.minimize_cbo"),
    Row("register_method", _registered,
        lambda: {"name": "bad-input-test", "func": lambda fun, x0, **o: None},
        {"name": "name", "func": "callable"}, covers="solvers.optimize.register_method"),
    Row("optimize.available_methods", available_methods_opt, dict,
        covers="solvers.optimize.available_methods",
        check=lambda res, kw: None),
    # ------------------------------------------------------------------ transport
    Row("schrodinger_bridge", schrodinger_bridge,
        lambda: {"x0": _c(_X), "x1": _c(_Y), "epsilon": 0.5, "n_components": 2,
                 "covariance": "diag", "optimizer": "lbfgs", "batch_size": 8, "maxiter": 5,
                 "validation_fraction": 0.1, "rng": 0, "callback": None},
        {"x0": "data+shape", "x1": "data+shape", "epsilon": "scale", "n_components": "count",
         "covariance": "choice", "optimizer": "choice", "batch_size": "count",
         "maxiter": "maxiter", "validation_fraction": "prob", "rng": "rng",
         "callback": "callable"},
        covers="solvers.transport.schrodinger_bridge", backend=True, out=_bridge_out,
        names={"x0": ("x0", "x1"), "x1": ("x1", "x0")}),
    Row("bridge_from_parameters", bridge_from_parameters,
        lambda: {"log_alpha": np.zeros(2), "r": _c(_M[:2]), "S": _c(_VAR), "epsilon": 0.5},
        {"log_alpha": "data+shape", "r": "data+shape", "S": "variances", "epsilon": "scale"},
        covers="solvers.transport.bridge_from_parameters", backend=True, out=_bridge_out,
        names={"log_alpha": ("log_alpha", "r"), "r": ("r", "S", "log_alpha")}),
    Row("bridge_from_parameters_full", bridge_from_parameters,
        lambda: {"log_alpha": np.zeros(2), "r": _c(_M[:2]), "S": _c(_CQ), "epsilon": 0.5},
        {"S": "spd"}, covers="solvers.transport.bridge_from_parameters", out=_bridge_out),
    Row("SchrodingerBridgeResult", lambda **kw: SchrodingerBridgeResult(**kw),
        lambda: {"x": np.zeros(2), "fun": 0.0}, covers="solvers.transport.SchrodingerBridgeResult"),
    *_methods("SchrodingerBridgeResult", _bridge, "solvers.transport.SchrodingerBridgeResult", [
        ("log_weights", lambda: {"x": _c(_Q2)}, {"x": "data+shape"}, {}),
        ("conditional_moments", lambda: {"x": _c(_Q2)}, {"x": "data+shape"}, {}),
        ("sample", lambda: {"x": _c(_Q2), "n_samples": 2, "rng": 0},
         {"x": "data+shape", "n_samples": "count", "rng": "rng"}, {}),
        ("drift", lambda: {"x": _c(_Q2), "t": 0.5}, {"x": "data+shape", "t": "time"}, {}),
        ("simulate", lambda: {"x": _c(_Q2), "n_steps": 4, "rng": 0},
         {"x": "data+shape", "n_steps": "count", "rng": "rng"}, {}),
        ("bridge", lambda: {"x": _c(_Q2), "t": 0.5, "rng": 0},
         {"x": "data+shape", "t": "time", "rng": "rng"}, {}),
    ]),
    Row("bures_wasserstein_barycenter", bures_wasserstein_barycenter,
        lambda: {"means": _c(_M), "covs": _c(_C), "weights": _c(_W4), "maxiter": 50,
                 "tol": 1e-10},
        {"means": "data+shape", "covs": "spd", "weights": "simplex", "maxiter": "maxiter",
         "tol": "tol"},
        covers="solvers.transport.bures_wasserstein_barycenter", backend=True,
        names={"means": ("means", "covs", "weights")}),
    Row("bures_wasserstein_cdist", bures_wasserstein_cdist,
        lambda: {"query_means": _c(_Q2), "query_covs": _c(_CQ), "means": _c(_M),
                 "covs": _c(_C)},
        {"query_means": "data+shape", "query_covs": "spd", "means": "data+shape",
         "covs": "spd"}, covers="solvers.transport.bures_wasserstein_cdist", backend=True),
    Row("bures_wasserstein_distance", bures_wasserstein_distance,
        lambda: {"m1": _c(_M[0]), "S1": _c(_C[0]), "m2": _c(_M[1]), "S2": _c(_C[1])},
        {"m1": "data+shape", "S1": "spd", "m2": "data+shape", "S2": "spd"},
        covers="solvers.transport.bures_wasserstein_distance"),
    Row("entropic_gaussian_plan", entropic_gaussian_plan,
        lambda: {"a": _c(_M[0]), "A": _c(_C[0]), "b": _c(_M[1]), "B": _c(_C[1]),
                 "epsilon": 0.5},
        {"a": "data+shape", "A": "spd", "b": "data+shape", "B": "spd", "epsilon": "scale"},
        covers="solvers.transport.entropic_gaussian_plan"),
    Row("monge_map", monge_map, lambda: {"source_covs": _c(_C), "target_covs": _c(_C[::-1])},
        {"source_covs": "spd", "target_covs": "spd"}, covers="solvers.transport.monge_map",
        overrides={("source_covs", "ndim"): EITHER, ("target_covs", "ndim"): EITHER}),
    Row("sqrtm_psd", sqrtm_psd, lambda: {"S": _c(_C)}, {"S": "spd"},
        covers="solvers.transport.sqrtm_psd",  # documented: symmetrised, eigenvalues clipped
        overrides={("S", "nonsym"): EITHER, ("S", "nonspd"): EITHER, ("S", "ndim"): EITHER}),
    Row("weighted_monge_map", weighted_monge_map,
        lambda: {"query_covs": _c(_CQ), "covs": _c(_C), "weights": np.tile(_W4, (2, 1))},
        {"query_covs": "spd", "covs": "spd", "weights": "simplex"},
        covers="solvers.transport.weighted_monge_map", backend=True),
    # ---------------------------------------------------------- transport.benchmark
    Row("BenchmarkPair", BenchmarkPair,
        lambda: {"weights": _c(_W4), "means": _c(_M), "covariances": _c(_C), "epsilon": 1.0},
        {"weights": "simplex", "means": "data+shape", "covariances": "spd",
         "epsilon": "scale"}, covers="solvers.transport.benchmark.BenchmarkPair",
        out=lambda p: [p.Lambda, p.S, p.r, p.log_alpha],
        names={"means": ("means", "covariances", "weights")}),
    *_methods("BenchmarkPair", _pair, "solvers.transport.benchmark.BenchmarkPair", [
        ("bridge", dict, {}, {"out": _bridge_out}),
        ("sample_x0", lambda: {"n": 3, "rng": 0}, {"n": "count", "rng": "rng"}, {}),
        ("sample_x1", lambda: {"n": 3, "rng": 0}, {"n": "count", "rng": "rng"}, {}),
        ("sample", lambda: {"x": _c(_Q2[:, :2]), "n_samples": 2, "rng": 0},
         {"x": "data+shape", "n_samples": "count", "rng": "rng"}, {}),
        ("conditional_moments", lambda: {"x": _c(_Q2[:, :2])}, {"x": "data+shape"}, {}),
    ]),
    Row("make_pair", make_pair, lambda: {"dim": 2, "epsilon": 1.0, "n_components": 2},
        {"dim": "count", "epsilon": "scale", "n_components": "count"},
        covers="solvers.transport.benchmark.make_pair", out=lambda p: [p.Lambda, p.S]),
    Row("bw2_squared", bw2_squared,
        lambda: {"m1": _c(_M[0]), "S1": _c(_C[0]), "m2": _c(_M[1]), "S2": _c(_C[1])},
        {"m1": "data+shape", "S1": "spd", "m2": "data+shape", "S2": "spd"},
        covers="solvers.transport.benchmark.bw2_squared"),
    Row("bw_uvp", bw_uvp,
        lambda: {"model": _pair().bridge(), "pair": _pair(), "n_samples": 200, "rng": 0},
        {"model": "object", "pair": "object", "n_samples": "count", "rng": "rng"},
        covers="solvers.transport.benchmark.bw_uvp"),
    Row("cbw_uvp", cbw_uvp,
        lambda: {"model": _pair().bridge(), "pair": _pair(), "x": _c(_X[:5, :2]),
                 "n_samples": 20, "rng": 0, "chunk": 2},
        {"model": "object", "pair": "object", "x": "data+shape", "n_samples": "count",
         "rng": "rng", "chunk": "count"},
        covers="solvers.transport.benchmark.cbw_uvp"),
    # --------------------------------------------------------------------- memory
    Row("GaussianMemory", GaussianMemory,
        lambda: {"means": _c(_M), "covs": _c(_C), "beta": 1.0, "path": "auto", "screen": 50.0},
        {"means": "data+shape", "covs": "spd", "beta": "scale", "path": "choice",
         "screen": "scale"},
        covers="solvers.memory.GaussianMemory", backend=True, out=_memory_out,
        names={"means": ("means", "covs")}, overrides={("beta", "inf"): EITHER}),
    *_methods("GaussianMemory", _gmem, "solvers.memory.GaussianMemory", [
        (m, _q_valid, _QA, {"names": _QNAMES})
        for m in ("distances", "energy", "weights", "nearest", "step")]),
    Row("GaussianMemory.retrieve", lambda **kw: _gmem().retrieve(**kw),
        lambda: {**_q_valid(), "maxiter": 5, "tol": 1e-9, "callback": None},
        {**_QA, "maxiter": "maxiter", "tol": "tol", "callback": "callable"},
        covers="solvers.memory.GaussianMemory.retrieve",
        out=lambda r: [np.asarray(r["means"]), np.asarray(r["covs"])],
        names=_QNAMES),
    Row("VectorMemory", VectorMemory,
        lambda: {"patterns": _c(_M), "beta": 1.0, "similarity": "euclidean"},
        {"patterns": "data", "beta": "scale", "similarity": "choice"},
        covers="solvers.memory.VectorMemory", backend=True, out=_vmemory_out),
    *_methods("VectorMemory", _vmem, "solvers.memory.VectorMemory", [
        (m, lambda: {"x": _c(_Q2)}, {"x": "data+shape"}, {"names": _XNAMES})
        for m in ("energy", "weights", "step")]),
    Row("VectorMemory.retrieve", lambda **kw: _vmem().retrieve(**kw),
        lambda: {"x": _c(_Q2), "maxiter": 5, "tol": 1e-10, "callback": None},
        {"x": "data+shape", "maxiter": "maxiter", "tol": "tol", "callback": "callable"},
        covers="solvers.memory.VectorMemory.retrieve", names=_XNAMES),
    Row("synthetic_patterns", synthetic_patterns,
        lambda: {"n_patterns": 4, "dim": 3, "eig_range": (1.0, 1.1), "rng": 0},
        {"n_patterns": "count", "dim": "count", "eig_range": "range", "rng": "rng"},
        covers="solvers.memory.synthetic_patterns"),
    Row("perturb", perturb,
        lambda: {"means": _c(_M), "covs": _c(_C), "radius": 0.1, "method": "exact", "rng": 0},
        {"means": "data+shape", "covs": "spd", "radius": "nonneg", "method": "choice",
         "rng": "rng"}, covers="solvers.memory.perturb", names={"means": ("means", "covs")}),
    Row("retrieval_rate", retrieval_rate,
        lambda: {"memory": _gmem(), "result": _gmem().retrieve(_c(_M), _c(_C), maxiter=2),
                 "true_index": np.arange(4)},
        {"memory": "object", "result": "object", "true_index": "indices"},
        covers="solvers.memory.retrieval_rate", skip={("true_index", "dup")}),
    # ------------------------------------------------------------------------ dag
    Row("learn_dag_cosmo", learn_dag,
        lambda: {"X": _c(_DAG_X), "method": "cosmo", "maxiter": 20, "refine": False,
                 "lambda1": 1e-3, "rng": 0, "callback": None},
        {"X": "dagdata", "method": "choice", "maxiter": "maxiter", "lambda1": "nonneg",
         "rng": "rng", "callback": "callable"},
        covers="solvers.dag.learn_dag", backend=True, out=_dag_out),
    Row("learn_dag_dpdag", learn_dag,
        lambda: {"X": _c(_DAG_X), "method": "dpdag", _DP_ITER: 10, "n_samples": 4,
                 "lr": 0.1, "prior_p": 0.1, "tau": 1.0, "rng": 0},
        {"X": "dagdata", _DP_ITER: "maxiter", "n_samples": "count", "lr": "scale",
         "prior_p": "prob", "tau": "scale", "rng": "rng"},
        covers="solvers.dag.learn_dag", backend=True, out=_dag_out),
    Row("DAGResult", lambda **kw: DAGResult(**kw), lambda: dict(_dag_result()),
        covers="solvers.dag.DAGResult", out=_dag_out),
    Row("DAGResult.to_networkx", lambda **kw: _dag_result().to_networkx(**kw),
        lambda: {"labels": list(_LABELS)}, {"labels": "labels"},
        covers="solvers.dag.DAGResult.to_networkx", out=lambda g: [g.number_of_nodes()]),
    Row("DAGResult.is_dag", lambda: _dag_result().is_dag(), dict,
        covers="solvers.dag.DAGResult.is_dag"),
    Row("SEMData", SEMData, lambda: {"X": _c(_DAG_X), "W": _c(_DAG_W), "B": _DAG_B != 0},
        {"X": "data+shape", "W": "square", "B": "adjacency"}, covers="solvers.dag.SEMData"),
    *[Row(name, func, lambda: {"B_true": _c(_DAG_B), "B_est": _c(_DAG_B.T)},
          {"B_true": "adjacency", "B_est": "adjacency"}, covers=f"solvers.dag.{name}",
          skip={("B_est", "cyclic"), ("B_true", "cyclic")})
      for name, func in [("count_accuracy", count_accuracy), ("f1_score", f1_score),
                         ("fdr", fdr), ("nhd", nhd), ("shd", shd), ("tpr", tpr)]],
    Row("auroc", auroc, lambda: {"B_true": _c(_DAG_B), "W_score": np.abs(_DAG_W.T) + 0.1},
        {"B_true": "adjacency", "W_score": "square"}, covers="solvers.dag.auroc",
        skip={("B_true", "cyclic")}),
    Row("check_data", check_data, lambda: {"X": _c(_DAG_X), "name": "X"}, {"X": "dagdata"},
        covers="solvers.dag.check_data"),
    Row("from_networkx", from_networkx,
        lambda: {"G": _dag_result().to_networkx(), "nodelist": [0, 1, 2, 3]},
        {"G": "object", "nodelist": "labels"}, covers="solvers.dag.from_networkx",
        overrides={("nodelist", "length"): EITHER}),  # a sub-graph, as in networkx
    Row("is_dag", is_dag, lambda: {"B": _c(_DAG_B)}, {"B": "adjacency"},
        covers="solvers.dag.is_dag", overrides={("B", "cyclic"): EITHER, ("B", "nonbinary"): EITHER},
        check=lambda res, kw: None),
    Row("topological_order", topological_order, lambda: {"B": _c(_DAG_B)},
        {"B": "adjacency"}, covers="solvers.dag.topological_order",  # None if cyclic
        overrides={("B", "cyclic"): EITHER, ("B", "nonbinary"): EITHER}),
    Row("order_mask", order_mask, lambda: {"order": np.array([2, 0, 3, 1])},
        {"order": "indices"}, covers="solvers.dag.order_mask"),
    Row("simulate_dag", simulate_dag, lambda: {"d": 4, "k": 1, "graph_type": "ER", "rng": 0},
        {"d": "count", "k": "count", "graph_type": "choice", "rng": "rng"},
        covers="solvers.dag.simulate_dag", overrides={("k", "zero"): EITHER, ("k", "float"): EITHER}),
    Row("simulate_data", simulate_data,
        lambda: {"d": 4, "n": 10, "k": 1, "graph_type": "ER", "noise_type": "gauss",
                 "noise_scale": 1.0, "rng": 0},
        {"d": "count", "n": "count", "k": "count", "graph_type": "choice",
         "noise_type": "choice", "noise_scale": "scale", "rng": "rng"},
        covers="solvers.dag.simulate_data", overrides={("k", "zero"): EITHER, ("k", "float"): EITHER}),
    Row("simulate_linear_sem", simulate_linear_sem,
        lambda: {"W": _c(_DAG_W), "n": 10, "noise_type": "gauss", "noise_scale": 1.0,
                 "rng": 0},
        {"W": "adjacency", "n": "count", "noise_type": "choice", "noise_scale": "scale",
         "rng": "rng"}, covers="solvers.dag.simulate_linear_sem",
        overrides={("W", "nonbinary"): EITHER}),
    Row("simulate_weights", simulate_weights, lambda: {"B": _c(_DAG_B), "rng": 0},
        {"B": "adjacency", "rng": "rng"}, covers="solvers.dag.simulate_weights"),
    Row("to_networkx", to_networkx,
        lambda: {"W": _c(_DAG_W), "threshold": 0.0, "labels": list(_LABELS)},
        {"W": "square", "threshold": "nonneg", "labels": "labels"},
        covers="solvers.dag.to_networkx", out=lambda g: [g.number_of_edges()]),
    Row("dag.available_methods", available_methods_dag, dict,
        covers="solvers.dag.available_methods"),
    # ----------------------------------------------------------------------- qubo
    Row("QuboMoments", QuboMoments, lambda: {"mean": 1.0, "var": 2.0},
        {"var": "nonneg"}, covers="solvers.qubo.QuboMoments",
        out=lambda m: [np.asarray(m.mean), np.asarray(m.std)]),
    Row("hypervolume", hypervolume,
        lambda: {"points": np.array([[0.0, 1.0], [0.5, 0.5], [1.0, 0.0]]),
                 "reference": np.array([2.0, 2.0])},
        {"points": "data+shape", "reference": "data+shape"},
        covers="solvers.qubo.hypervolume", names={"points": ("points", "reference")}),
    Row("minimize_qubo", minimize_qubo,
        lambda: {"Q": _c(_QUBO), "c": np.zeros(5), "n_reads": 2, "n_sweeps": 20,
                 "beta_range": (0.1, 5.0), "vartype": "binary", "method": "anneal",
                 "beta_schedule": "geometric", "x0": _c(_STATES[0]), "rng": 0},
        {"Q": "square", "c": "data+shape", "n_reads": "count", "n_sweeps": "count",
         "beta_range": "range", "vartype": "choice", "method": "choice",
         "beta_schedule": "choice", "x0": "binary", "rng": "rng"},
        covers="solvers.qubo.minimize_qubo", backend=True),
    Row("pareto_front", pareto_front,
        lambda: {"points": np.array([[0.0, 1.0], [0.5, 0.5], [1.0, 1.0]])},
        {"points": "data"}, covers="solvers.qubo.pareto_front"),
    Row("pareto_sweep", pareto_sweep,
        lambda: {"objectives": [_c(_QUBO), _c(_QUBO2)], "weights": 3, "scaling": "variance",
                 "n_reads": 2, "n_sweeps": 20, "rng": 0},
        {"objectives": "qubos", "weights": "count", "scaling": "choice", "rng": "rng"},
        covers="solvers.qubo.pareto_sweep", overrides={("weights", "zero"): RAISE}),
    Row("qubo_energy", qubo_energy,
        lambda: {"objective": _c(_QUBO), "X": _c(_STATES), "vartype": "binary"},
        {"objective": "square", "X": "binary", "vartype": "choice"},
        covers="solvers.qubo.qubo_energy"),
    Row("qubo_moments", qubo_moments,
        lambda: {"Q": _c(_QUBO), "c": np.ones(5), "p": 0.3, "vartype": "binary"},
        {"Q": "square", "c": "data+shape", "p": "prob", "vartype": "choice"},
        covers="solvers.qubo.qubo_moments", overrides={("Q", "ndim"): EITHER}, out=lambda m: [np.asarray(m.mean),
                                                           np.asarray(m.var)]),
    Row("scalarize", scalarize,
        lambda: {"objectives": [_c(_QUBO), _c(_QUBO2)], "weights": np.array([0.3, 0.7])},
        {"objectives": "qubos", "weights": "simplex"}, covers="solvers.qubo.scalarize",
        overrides={("weights", "zero"): EITHER}),
    Row("scale_qubos", scale_qubos,
        lambda: {"objectives": [_c(_QUBO), _c(_QUBO2)], "method": "variance", "p": 0.3},
        {"objectives": "qubos", "method": "choice", "p": "prob"},
        covers="solvers.qubo.scale_qubos"),
]


def _names_arg(message, names):
    return any(re.search(r"(?<![A-Za-z0-9_])" + re.escape(n) + r"(?![A-Za-z0-9_])", message)
               for n in names)


def _numbers(res):
    """The numeric arrays of a result, for finiteness checks and comparisons."""
    if res is None or isinstance(res, (str, bool, type)) or inspect.ismodule(res):
        return []
    if isinstance(res, dict):
        keys = [k for k in ("x", "fun") if k in res] or [k for k in res if k[:1] != "_"]
        return [a for k in keys for a in _numbers(res[k])]
    if isinstance(res, list) or (isinstance(res, tuple) and not hasattr(res, "_fields")):
        try:
            return [np.asarray(res, dtype=float)]
        except (TypeError, ValueError):
            return [a for r in res for a in _numbers(r)]
    if isinstance(res, tuple):  # a named tuple
        return [a for r in res for a in _numbers(r)]
    if hasattr(res, "__array__") or isinstance(res, (int, float, complex, np.number)):
        a = np.asarray(res)
        return [a.astype(float) if a.dtype == object else a] if a.dtype.kind in "biufcO" else []
    if hasattr(res, "__dict__"):
        return [a for k, v in vars(res).items() if k[:1] != "_" for a in _numbers(v)]
    return []


def _finite(arrays):
    arrays = [np.asarray(a) for a in arrays]
    return all(np.all(np.isfinite(a)) for a in arrays if a.dtype.kind in "fc")


def _same(got, want, rtol):
    assert len(got) == len(want), f"{len(got)} result arrays, expected {len(want)}"
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g, dtype=complex), np.asarray(w, dtype=complex),
                                   rtol=rtol, atol=rtol, equal_nan=True)


def _cells():
    out = []
    for row in ROWS:
        out.append(pytest.param(row, None, None, id=f"{row.id}-valid-ok"))
        for arg, category in row.args.items():
            for kind in kinds(category):
                if (arg, kind) in row.skip:
                    continue
                cid = f"{row.id}-{arg}-{kind}"
                marks = ([pytest.mark.xfail(strict=True, reason=KNOWN_FAILURES[cid])]
                         if cid in KNOWN_FAILURES else [])
                out.append(pytest.param(row, arg, kind, id=cid, marks=marks))
    return out


def _check_result(row, arg, kind, expect, kw, res):
    nums = row.out(res) if row.out else _numbers(res)
    success = res.get("success") if isinstance(res, dict) else None
    if expect == RAISE:
        pytest.fail(f"no ValueError/TypeError naming {arg!r}; returned {res!r:.300}")
    if expect == USER_ERROR:
        pytest.fail("the objective's exception was swallowed")
    if row.reference is not None and kind is not None:
        try:
            want = row.reference(**kw)
        except (TypeError, ValueError):  # the reference refuses it: finite is the bar
            want = None
        if want is not None:
            _same(nums, want, 1e-2 if kind == "float16" else 1e-6)
            return
    if expect == PROPAGATE and kind in ("nan", "inf"):
        test = np.isnan if kind == "nan" else np.isposinf
        assert any(np.any(test(a)) for a in nums), f"{kind} did not propagate: {nums}"
        return
    if expect in (RUN_FAILS, EITHER_RUN) and success is False:
        assert isinstance(res.get("message"), str) and res["message"], "no message"
        return
    assert expect != RUN_FAILS, f"success={success!r} on a failed run: {res!r:.300}"
    assert _finite(nums), f"non-finite result: {nums!r:.300}"
    if row.check is not None:
        row.check(res, kw)
    if kind in CAST_KINDS:
        dtype = np.asarray(row.valid()[arg]).dtype
        dtype = dtype if dtype.kind in "iu" else np.float64  # indices stay integers
        as_float = {**kw, arg: np.asarray(kw[arg], dtype=dtype)}
        rtol = 1e-2 if kind == "float16" else (row.cast_rtol or 1e-9)
        _same(nums, (row.out or _numbers)(row.call(**as_float)), rtol)


@pytest.mark.parametrize("row, arg, kind", _cells())
def test_bad_input(row, arg, kind):
    kw = row.valid()
    expect = EITHER
    if kind is not None:
        mutate, expect = kinds(row.args[arg])[kind]
        expect = row.overrides.get((arg, kind), expect)
        kw[arg] = mutate(kw[arg])
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            res = row.call(**kw)
    except UserObjectiveError:
        assert expect == USER_ERROR, "the objective's own exception escaped"
        return
    except (ValueError, TypeError) as exc:
        assert kind is not None, f"the valid call raised {exc!r}"
        assert expect != USER_ERROR, f"the objective's exception became {exc!r}"
        names = row.names.get(arg, (arg,))
        assert _names_arg(str(exc), names), f"message does not name {names}: {exc!r}"
        return
    _check_result(row, arg, kind, expect, kw, res)


def test_every_public_name_has_a_row():
    covered = {name for row in ROWS for name in row.covers}
    missing = public_names() - covered
    assert not missing, f"public names without a bad-input row: {sorted(missing)}"
    stale = covered - public_names()
    assert not stale, f"rows for names that are not public: {sorted(stale)}"


def test_known_failures_are_cells():
    ids = {p.id for p in _cells()}
    assert not set(KNOWN_FAILURES) - ids, sorted(set(KNOWN_FAILURES) - ids)
