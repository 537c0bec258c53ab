"""EM-KL (Hara & Hayashi 2016): the gate's C kernels against plain NumPy versions of the
same equations (tests/reference.py), the EM loop's bound, and DefragModel(method="em-kl")."""
import pickle

import numpy as np
import pytest
from conftest import tabular_data, xor_data

import reference as ref
from defrag import DefragModel
from defrag.fit import emkl as _emkl
from defrag.fit import _gate
from defrag.splits.table import SplitTable
from defrag.fit.mixture import experts, kernel_problem
from defrag.fit.targets import Target

EPS = 1e-10


def rel(a, b):
    return float(np.max(np.abs(np.asarray(a) - b) / np.maximum(np.abs(b), 1e-300)))


def gate_problem(seed, n=300, d=4, n_splits=50, k=4, n_classes=0):
    """A small problem with ties, duplicate thresholds, a feature without splits and
    missing values, some of them sent right; the dense S of the same splits."""
    rng = np.random.default_rng(seed)
    X = rng.random((n, d))
    X[:, 0] = np.round(X[:, 0] * 10) / 10
    X[rng.random((n, d)) < 0.1] = np.nan
    splits = SplitTable(rng.integers(0, d - 1, n_splits), np.round(rng.random(n_splits), 1), d,
                        missing_right=rng.random(n_splits) < 0.5, keep_duplicates=True)
    S = splits.binary_features(X).astype(np.float64)
    y = rng.normal(size=n) if n_classes == 0 else rng.integers(0, n_classes, n).astype(np.int32)
    problem = kernel_problem(splits, {"ranks": splits.ranks(splits.prepare(X))},
                             Target(y, n_classes))
    L = len(splits)
    params = {"eta": np.clip(rng.random((k, L)), 0.01, 0.99), "alpha": np.full(k, 1.0 / k)}
    if n_classes == 0:
        params.update(mean=rng.normal(size=k), precision=0.5 + rng.random(k))
    else:
        params["gamma"] = rng.dirichlet(np.ones(n_classes), size=k)
    w = rng.normal(size=(k, L))
    beta = rng.dirichlet(np.ones(k), size=n)
    return rng, problem, S, y, params, w, beta


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_gate_log_prob_objective_and_gradient_match_numpy(seed):
    _, problem, S, _, _, w, beta = gate_problem(seed)
    log_q, expected = _gate.gate_log_prob(problem, w), ref.gate_log_prob(S, w)
    # the probabilities relative to themselves; their logs relative to max(|log q|, 1): a
    # log q of -7e-9 is the difference of two sums of w in different orders
    assert rel(np.exp(log_q), np.exp(expected)) <= 1e-9
    assert np.max(np.abs(log_q - expected) / np.maximum(np.abs(expected), 1.0)) <= 1e-9
    beta[::7] *= 0.3  # weights need not sum to one per row
    beta[::5, 1] = 0.0
    for rho in (0.0, 0.7):
        value, grad = _gate.gate_objective(problem, beta, w, rho)
        rvalue, rgrad = ref.gate_objective(S, beta, w, rho)
        assert rel(value, rvalue) <= 1e-9
        assert np.max(np.abs(grad - rgrad)) <= 1e-9 * np.max(np.abs(rgrad))


def test_gate_gradient_matches_finite_differences():
    rng, problem, _, _, _, w, beta = gate_problem(3, n=120, n_splits=20, k=3)
    _, grad = _gate.gate_objective(problem, beta, w, 0.4)
    h = 1e-6
    for k, l in zip(rng.integers(0, w.shape[0], 12), rng.integers(0, w.shape[1], 12)):
        up, down = w.copy(), w.copy()
        up[k, l] += h
        down[k, l] -= h
        fd = (_gate.gate_objective(problem, beta, up, 0.4)[0]
              - _gate.gate_objective(problem, beta, down, 0.4)[0]) / (2 * h)
        assert abs(fd - grad[k, l]) <= 1e-6 * max(1.0, abs(grad[k, l]))


@pytest.mark.parametrize("n_classes", [0, 3])
def test_estep_mstep_and_posterior_match_numpy(n_classes):
    _, problem, S, y, params, w, beta = gate_problem(4, n_classes=n_classes)
    logf = ref.emkl_log_joint(S, params, w, y, n_classes)
    new_beta = beta.copy()
    bound, got_logf = _gate.estep(problem, params, w, new_beta)
    assert rel(got_logf, logf) <= 1e-9
    assert rel(bound, ref.emkl_bound(logf, beta)) <= 1e-9
    assert rel(new_beta, ref.softmax(logf)) <= 1e-9
    # M-step closed forms (sec. 4.3) on the new responsibilities
    got = {name: a.copy() for name, a in params.items()}
    _gate.mstep(problem, new_beta, got, EPS, 1e-12)
    expected = ref.mstep(S, new_beta, y, n_classes, EPS, 1e-12)
    for name, a in expected.items():
        assert rel(got[name], a) <= 1e-9, name
    weights = _gate.posterior(problem, params["eta"], w)
    assert rel(weights, ref.emkl_posterior(S, params["eta"], w)) <= 1e-9


def test_kernels_do_not_depend_on_the_thread_count():
    _, problem, _, _, params, w, beta = gate_problem(5, n=5000)
    one = _gate.gate_objective(problem, beta, w, 0.1, 1)
    two = _gate.gate_objective(problem, beta, w, 0.1, 2)
    assert one[0] == two[0] and np.array_equal(one[1], two[1])
    b1, b2 = beta.copy(), beta.copy()
    assert _gate.estep(problem, params, w, b1, 1)[0] == _gate.estep(problem, params, w, b2, 2)[0]
    assert np.array_equal(b1, b2)
    np.testing.assert_array_equal(_gate.posterior(problem, params["eta"], w, 1),
                                  _gate.posterior(problem, params["eta"], w, 2))


def test_kernels_reject_bad_arguments():
    _, problem, _, _, params, w, beta = gate_problem(6)
    with pytest.raises(ValueError, match="w must have shape"):
        _gate.gate_log_prob(problem, np.ascontiguousarray(w[:, 1:]))
    with pytest.raises(ValueError, match="beta must have shape"):
        _gate.gate_objective(problem, beta[1:], w, 0.1)
    with pytest.raises(ValueError, match="rho"):
        _gate.gate_objective(problem, beta, w, -1.0)
    bad = dict(params, eta=params["eta"] * 0 + 1.5)
    with pytest.raises(ValueError, match="emkl_posterior"):
        _gate.posterior(problem, bad["eta"], w)


@pytest.mark.parametrize("n_classes", [0, 2])
@pytest.mark.parametrize("schedule", [(), (0.3, 0.01)])
def test_bound_never_decreases_within_a_phase(n_classes, schedule):
    rng, problem, _, y, params, _, beta = gate_problem(7, n=400, n_classes=n_classes)
    # run to rounding noise (1e-15 relative): the bound must not drop by more than that
    options = dict(max_iter=60, tol=1e-14, eps=EPS, eps_schedule=schedule, gate_l2=0.5)
    w = np.zeros_like(params["eta"])
    w, trace, phases = _emkl.fit_emkl(problem, params, beta, w, options, 1e-9, 1)
    assert trace.size > 30 and phases[-1] == len(schedule)
    final = trace[phases == phases[-1]]
    assert np.all(np.diff(final) >= -1e-14 * np.abs(final[1:]))
    assert final[-1] > final[0] + 1.0


@pytest.fixture(scope="module")
def xor_model():
    Xtr, ytr, Xte, yte = xor_data(0, regression=True)
    from sklearn.ensemble import GradientBoostingRegressor

    gb = GradientBoostingRegressor(n_estimators=60, max_depth=3, random_state=0).fit(Xtr, ytr)
    model = DefragModel(gb, method="em-kl", n_components=4, n_restarts=4, form="paper",
                        random_state=0).fit(Xte)
    return model, gb, Xtr, ytr, Xte, yte


def test_xor_gives_the_four_quadrants(xor_model):
    model, _, Xtr, ytr, _, _ = xor_model
    assert model.n_components_ == 4 and len(model.rules_.rules) == 4
    for rule in model.rules_.rules:
        assert {c.feature for c in rule.conditions} == {0, 1}
        for c in rule.conditions:
            for bound in (c.lower, c.upper):
                assert bound is None or abs(bound - 0.5) <= 0.05
    assert model.evaluate(Xtr, ytr)["error"] <= 0.03
    phase = model.lower_bound_phase_ == model.lower_bound_phase_[-1]
    final = model.lower_bound_[phase]
    assert np.all(np.diff(final) >= -1e-9 * np.abs(final[1:]))


def test_predict_is_the_mixture_of_experts_and_evaluate_reports_the_rules(xor_model):
    model, _, Xtr, ytr, _, _ = xor_model
    mixture = model._mixture()
    weights, out = experts(mixture.splits, mixture.params, Xtr, mixture.n_classes)
    np.testing.assert_allclose(weights.sum(axis=1), 1.0)
    np.testing.assert_array_equal(model.predict(Xtr), weights @ model.mean_)
    np.testing.assert_array_equal(model.predict_map(Xtr), model.mean_[np.argmax(weights, axis=1)])
    ev = model.evaluate(Xtr, ytr)
    assert ev["error"] == pytest.approx(np.mean((model.predict(Xtr) - ytr) ** 2))
    assert ev["error_rules"] == pytest.approx(np.mean((model.rules_.predict(Xtr) - ytr) ** 2))
    # the regions of the rules as printed (a list: its first rule that holds, else the default)
    first = model.rules_.route(model.rules_.encode(Xtr))[:, 0]
    assert ev["largest_region"] == pytest.approx(np.max(np.unique(first, return_counts=True)[1]) / len(Xtr))
    assert ev["regions_reached"] == np.unique(first).size and ev["overlap_share"] <= 0.05
    assert model.gate_weights_.shape == model.eta_.shape
    assert "EM-KL" in str(model)


def test_same_result_for_n_jobs_and_pickling(xor_model):
    model, gb, Xtr, _, Xte, _ = xor_model
    other = DefragModel(gb, method="em-kl", n_components=4, n_restarts=4, form="paper",
                        random_state=0, n_jobs=2).fit(Xte)
    np.testing.assert_array_equal(other.gate_weights_, model.gate_weights_)
    np.testing.assert_array_equal(other.lower_bound_, model.lower_bound_)
    back = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(back.predict(Xtr), model.predict(Xtr))


def test_restart_does_not_depend_on_the_thread_count():
    _, problem, S, y, _, _, _ = gate_problem(8, n=2200)  # two blocks of rows
    target = Target(y, 0, 0.0, 1.0, 1.0, 1e-9)
    options = dict(n_components=3, n_splits=S.shape[1], max_iter=8, tol=1e-8,
                   eps=EPS, eps_schedule=(0.1,), gate_l2=1.0)
    seed = np.random.SeedSequence(0)
    one = _emkl.run_restart(0, seed, problem, target, options, 1)
    two = _emkl.run_restart(0, seed, problem, target, options, 2)
    assert one.train_error == two.train_error
    np.testing.assert_array_equal(one.lower_bound, two.lower_bound)
    np.testing.assert_array_equal(one.params["w"], two.params["w"])


@pytest.mark.parametrize("n_classes", [0, 3])
def test_sources_classification_and_rule_lists(n_classes):
    from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

    X, y = tabular_data(n_classes, n=400)  # with missing values
    forest = RandomForestRegressor if n_classes == 0 else RandomForestClassifier
    est = forest(n_estimators=10, max_depth=5, random_state=0).fit(X, y)
    model = DefragModel(est, method="em-kl", n_components=3, n_restarts=2, max_iter=30,
                        random_state=0).fit(X)
    assert model.n_components_ == 3
    pred = model.predict(X)
    assert np.all(np.isfinite(pred)) if n_classes == 0 else set(pred) <= set(model.classes_)
    ev = model.evaluate(X, y)
    assert {"error", "error_mixture_map", "error_rules", "largest_region", "regions_reached", "overlap_share"} <= set(ev)
    assert ev["error_rules"] == pytest.approx(
        np.mean(model.rules_.predict(X) != y) if n_classes else
        np.mean((model.rules_.predict(X) - y) ** 2))
    if n_classes:
        proba = model.predict_proba(X)
        np.testing.assert_allclose(proba.sum(axis=1), 1.0)
        np.testing.assert_array_equal(model.classes_[np.argmax(proba, axis=1)], pred)
    # the ensemble's predictions are the targets unless y is given
    with_y = DefragModel(est, method="em-kl", n_components=3, n_restarts=2, max_iter=30,
                         random_state=0).fit(X, y)
    assert not np.array_equal(with_y.eta_, model.eta_)


@pytest.mark.parametrize("library", ["sklearn", "xgboost", "lightgbm", "splits"])
def test_every_source_library(library):
    X, y = tabular_data(0, n=300, nan=0.0)
    if library == "sklearn":
        from sklearn.ensemble import RandomForestRegressor

        est = RandomForestRegressor(n_estimators=10, max_depth=4, random_state=0).fit(X, y)
    elif library == "xgboost":
        xgb = pytest.importorskip("xgboost")
        est = xgb.XGBRegressor(n_estimators=10, max_depth=3, n_jobs=1).fit(X, y)
    elif library == "lightgbm":
        lgb = pytest.importorskip("lightgbm")
        est = lgb.LGBMRegressor(n_estimators=10, num_leaves=8, verbose=-1, n_jobs=1).fit(X, y)
    else:
        est = np.column_stack([np.arange(4).repeat(5), np.tile(np.linspace(-1, 1, 5), 4)])
    model = DefragModel(est, method="em-kl", n_components=3, n_restarts=2, max_iter=20,
                        random_state=0)
    model.fit(X, y if library == "splits" else None)
    assert model.gate_weights_.shape == (3, len(model.splits_))
    assert model.evaluate(X, y)["error"] < np.var(y)


def test_bad_input():
    X, y = tabular_data(0, n=100, nan=0.0)
    from sklearn.ensemble import GradientBoostingRegressor

    rf = GradientBoostingRegressor(n_estimators=3, max_depth=3, random_state=0).fit(X, y)
    for bad in (-1.0, np.inf, "big", True):
        with pytest.raises(ValueError, match="gate_l2"):
            DefragModel(rf, method="em-kl", gate_l2=bad).fit(X)
    with pytest.raises(ValueError, match="'em-kl'"):
        DefragModel(rf, method="emkl").fit(X)
    Xn = X.copy()
    Xn[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        DefragModel(rf, method="em-kl", n_restarts=1).fit(Xn)
    model = DefragModel(rf, method="em-kl", n_components=2, n_restarts=1, max_iter=5).fit(X)
    with pytest.raises(ValueError, match="features"):
        model.predict(X[:, :2])
    assert not hasattr(model, "predict_proba")  # a regressor has none (available_if)


def test_restarts_on_a_subsample_are_scored_on_all_rows():
    from sklearn.ensemble import RandomForestRegressor

    X, y = tabular_data(0, n=300)
    rf = RandomForestRegressor(n_estimators=5, max_depth=4, random_state=0).fit(X, y)
    model = DefragModel(rf, method="em-kl", n_components=3, n_restarts=3, subsample=120, max_iter=20,
                        random_state=0).fit(X)
    assert model.subsample_size_ == 120
    # the kept restart's error is the mixture of experts' mean squared error on all 300 rows
    mse = np.mean((model.predict(X) - rf.predict(X)) ** 2)
    assert np.min(model.restart_errors_) == pytest.approx(mse, rel=1e-9)


def test_categorical_splits_take_the_rank_path():
    pytest.importorskip("pandas")
    from conftest import categorical_frame
    from sklearn.ensemble import HistGradientBoostingRegressor

    X, y = categorical_frame(0, n=300)
    est = HistGradientBoostingRegressor(max_iter=10, categorical_features="from_dtype",
                                        random_state=0).fit(X, y)
    model = DefragModel(est, method="em-kl", n_components=3, n_restarts=2, max_iter=20,
                        random_state=0).fit(X)
    assert model.splits_.has_categorical
    assert model.evaluate(X, y)["error"] < np.var(y)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(model)).predict(X), model.predict(X))
