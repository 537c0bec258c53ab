"""Bad input gives a clear error, never a crash or a silently wrong answer."""
import numpy as np
import pytest
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
from sklearn.exceptions import NotFittedError
from sklearn.neighbors import KNeighborsClassifier

from defrag import DefragModel


@pytest.mark.parametrize("bad", [np.inf, -np.inf])
def test_infinite_X(xor_forest, bad):
    rf, Xtr, ytr, Xte, _ = xor_forest
    X = Xtr.copy()
    X[3, 1] = bad
    with pytest.raises(ValueError, match="infinite"):
        DefragModel(rf, n_restarts=1).fit(X, ytr)
    m = DefragModel(rf, n_restarts=1, random_state=0).fit(Xtr, ytr)
    Xt = Xte.copy()
    Xt[0, 0] = bad
    # predict is the rules as printed, which take an infinite value (beyond every
    # threshold), as rules_.predict and the exports do
    np.testing.assert_array_equal(m.predict(Xt), m.rules_.predict(Xt))
    assert m.apply(Xt)[0] == m.rules_.apply(Xt[:1])[0]
    with pytest.raises(ValueError, match="infinite"):
        m.evaluate(Xt, np.zeros(len(Xt)))  # (fidelity asks the forest, which takes none)


def test_nan_X_needs_a_model_with_missing_value_rules(xor_forest):
    from sklearn.ensemble import GradientBoostingClassifier

    rf, Xtr, ytr, Xte, _ = xor_forest
    X = Xtr.copy()
    X[3, 1] = np.nan
    gb = GradientBoostingClassifier(n_estimators=5).fit(Xtr, ytr)
    for est in (gb, np.array([[0, 0.5], [1, 0.5]])):
        with pytest.raises(ValueError, match="NaN"):
            DefragModel(est, n_restarts=1).fit(X, ytr)
    m = DefragModel(gb, n_restarts=1, random_state=0).fit(Xtr, ytr)
    with pytest.raises(ValueError, match="NaN"):
        m.predict(X)
    # a random forest defines where missing values go (scikit-learn >= 1.4)
    DefragModel(rf, n_restarts=1, random_state=0).fit(X, ytr).predict(X)


def test_wrong_feature_count(xor_forest):
    rf, Xtr, ytr, Xte, _ = xor_forest
    with pytest.raises(ValueError, match="features"):
        DefragModel(rf, n_restarts=1).fit(np.c_[Xtr, Xtr[:, 0]], ytr)
    m = DefragModel(rf, n_restarts=1, random_state=0).fit(Xtr, ytr)
    with pytest.raises(ValueError, match="features"):
        m.predict(Xte[:, :1])
    with pytest.raises(ValueError, match="2-D"):
        m.predict(Xte[0])


def test_unfitted_ensemble_and_unfitted_model(xor_forest):
    _, Xtr, ytr, _, _ = xor_forest
    # an unfitted ensemble is cloned and fitted on (X, y), as a meta-estimator's
    forest = RandomForestClassifier(n_estimators=5, random_state=0)
    model = DefragModel(forest, n_restarts=1, random_state=0).fit(Xtr, ytr)
    assert model.estimator_ is not forest and not hasattr(forest, "estimators_")
    with pytest.raises(ValueError, match="requires y to be passed"):
        DefragModel(forest).fit(Xtr)  # no y to fit it on
    with pytest.raises(NotFittedError):
        DefragModel(RandomForestClassifier()).predict(Xtr)


def test_y_of_wrong_length(xor_forest):
    rf, Xtr, ytr, _, _ = xor_forest
    with pytest.raises(ValueError, match="y has"):
        DefragModel(rf, n_restarts=1).fit(Xtr, ytr[:-1])


@pytest.mark.parametrize("est", [KNeighborsClassifier(), "forest", 3.0, {"a": 1}])
def test_unsupported_estimator(xor_forest, est):
    _, Xtr, ytr, _, _ = xor_forest
    if isinstance(est, KNeighborsClassifier):
        est.fit(Xtr, ytr)
    with pytest.raises(TypeError, match="unsupported|supported"):
        DefragModel(est, n_restarts=1).fit(Xtr, ytr)


def test_not_yet_supported_sklearn_ensemble_is_named(xor_forest):
    from sklearn.ensemble import AdaBoostClassifier

    _, Xtr, ytr, _, _ = xor_forest
    ada = AdaBoostClassifier(n_estimators=3).fit(Xtr, ytr)
    with pytest.raises(TypeError, match="AdaBoostClassifier.*supported: scikit-learn"):
        DefragModel(ada, n_restarts=1).fit(Xtr, ytr)


@pytest.mark.parametrize("param,value", [
    ("n_components", 0), ("n_components", -2), ("n_components", 2.5), ("n_components", True),
    ("n_restarts", 0), ("max_iter", 0), ("method", "gibbs"), ("tol", -1.0),
    ("kappa", 0.7), ("eps", 0.0), ("n_jobs", 0), ("task", "ranking"), ("eps_schedule", (0.9,)),
])
def test_bad_parameters(xor_forest, param, value):
    rf, Xtr, ytr, _, _ = xor_forest
    with pytest.raises(ValueError, match=param):
        DefragModel(rf, **{"n_restarts": 1, param: value}).fit(Xtr, ytr)


def test_missing_estimator(xor_forest):
    _, Xtr, ytr, _, _ = xor_forest
    with pytest.raises(ValueError, match="estimator"):
        DefragModel().fit(Xtr, ytr)


def test_single_class_gives_one_rule(xor_forest):
    rf, Xtr, _, Xte, _ = xor_forest
    y = np.full(Xtr.shape[0], "only")
    m = DefragModel(rf, n_restarts=2, random_state=0).fit(Xtr, y)
    assert m.n_regions_ == 1 and list(m.classes_) == ["only"]
    assert np.all(m.predict(Xte) == "only")
    # the one region covers everything: a tree of one leaf
    assert m.rules_.n_regions == 1 and m.rules_.leaves()[0].prediction == "only"
    paper = DefragModel.paper(rf, n_restarts=2, random_state=0).fit(Xtr, y)
    assert paper.n_regions_ == 1 and paper.rules_.rules[0].conditions == []
    ev = paper.evaluate(Xte, np.full(Xte.shape[0], "only"))
    assert ev["largest_region"] == 1.0 and ev["regions_reached"] == 1 and ev["overlap_share"] == 0.0


def test_single_class_known_to_the_forest_gives_one_rule(xor_forest):
    rf, Xtr, _, Xte, _ = xor_forest
    m = DefragModel(rf, n_restarts=2, random_state=0).fit(Xtr, np.zeros(len(Xtr), dtype=int))
    assert m.n_regions_ == 1 and list(m.classes_) == [0, 1]
    assert np.all(m.predict(Xte) == 0)


@pytest.mark.parametrize("form", ["auto", "list", "sum"])
def test_boosting_fitted_on_one_class_gives_one_region(form):
    # HistGradientBoosting (and LightGBM) fitted on one class keep one class in classes_
    # but give two columns of probabilities: the tree's search took those columns for its
    # one class and the kernel refused its own arguments
    from sklearn.ensemble import HistGradientBoostingClassifier

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    hgb = HistGradientBoostingClassifier(max_iter=5).fit(X, np.ones(60, dtype=int))
    assert hgb.predict_proba(X).shape == (60, 2) and list(hgb.classes_) == [1]
    params = dict(max_conditions=3) if form == "sum" else {}
    m = DefragModel(hgb, form=form, random_state=0, **params).fit(X)
    assert m.n_regions_ == 1 and list(m.classes_) == [1]
    assert np.all(m.predict(X) == 1) and m.predict_proba(X).shape == (60, 1)


def test_string_labels_and_multiclass():
    rng = np.random.default_rng(0)
    X = rng.random((600, 3))
    y = np.array(["low", "mid", "high"])[np.digitize(X[:, 0], [0.33, 0.66])]
    rf = RandomForestClassifier(n_estimators=20, random_state=0).fit(X, y)
    m = DefragModel(rf, n_restarts=5, random_state=0).fit(X, y)
    assert set(m.classes_) == {"low", "mid", "high"}
    assert m.predict_proba(X).shape == (600, 3)
    assert m.score(X, y) > 0.8


def test_split_array_input_needs_y_and_checks_shape(xor_forest):
    rf, Xtr, ytr, Xte, yte = xor_forest
    splits = np.array([[0, 0.5], [1, 0.5], [0, 0.25], [1, 0.75], [0, 0.5]])
    m = DefragModel(splits, n_restarts=5, random_state=0).fit(Xtr, ytr)
    assert len(m.splits_) == 4  # the duplicate (0, 0.5) is dropped
    assert m.task_ == "classification"
    assert m.evaluate(Xte, yte)["fidelity"] is None
    keep = DefragModel(splits, keep_duplicate_splits=True, n_restarts=1, random_state=0).fit(Xtr, ytr)
    assert len(keep.splits_) == 5
    with pytest.raises(ValueError, match="y is required"):
        DefragModel(splits).fit(Xtr)
    with pytest.raises(ValueError, match="shape"):
        DefragModel(np.zeros((3, 3))).fit(Xtr, ytr)
    with pytest.raises(ValueError, match=r"\[0, 2\)"):
        DefragModel(np.array([[5, 0.1]])).fit(Xtr, ytr)
    with pytest.raises(ValueError, match="finite"):
        DefragModel(np.array([[0, np.nan]])).fit(Xtr, ytr)


def test_regression_target_must_be_finite():
    rng = np.random.default_rng(0)
    X = rng.random((200, 2))
    y = X[:, 0].copy()
    rf = RandomForestRegressor(n_estimators=5, random_state=0).fit(X, y)
    y[5] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        DefragModel(rf, n_restarts=1).fit(X, y)


def test_non_numeric_X(xor_forest):
    rf, Xtr, ytr, _, _ = xor_forest
    with pytest.raises(TypeError, match="numeric"):
        DefragModel(rf, n_restarts=1).fit(np.array([["a", "b"]] * len(ytr)), ytr)


def test_review_regressions(xor_forest):
    rf, Xtr, ytr, Xte, _ = xor_forest
    # max_iter=1 with no warm-up still makes one update
    m = DefragModel(rf, n_restarts=1, max_iter=1, eps_schedule=(), random_state=0).fit(Xtr, ytr)
    assert m.n_iter_ == 2
    # a delta above every component's share keeps the largest one
    assert DefragModel(rf, delta=0.5, n_restarts=2, random_state=0).fit(Xtr, ytr).n_components_ == 1
    # array schedules are accepted
    DefragModel(rf, eps_schedule=np.array([0.1, 0.01]), n_restarts=1, random_state=0).fit(Xtr, ytr)
    # a failed refit leaves the previous fit usable
    m = DefragModel(rf, n_restarts=2, random_state=0).fit(Xtr, ytr)
    before = m.predict(Xte)
    m.set_params(max_iter=2**40)
    with pytest.raises(ValueError, match="max_iter"):
        m.fit(Xtr, ytr)
    np.testing.assert_array_equal(m.predict(Xte), before)


def test_clone_with_frozen_estimator(xor_forest):
    frozen = pytest.importorskip("sklearn.frozen")
    from sklearn.base import clone
    from sklearn.model_selection import cross_val_score

    rf, Xtr, ytr, _, _ = xor_forest
    model = DefragModel(frozen.FrozenEstimator(rf), n_restarts=5, random_state=0)
    clone(model).fit(Xtr, ytr)
    scores = cross_val_score(model, Xtr, ytr, cv=2)
    assert np.all(scores > 0.7)


def test_scikit_learn_manners(xor_forest, capsys):
    import logging
    import sys

    from sklearn.base import is_classifier, is_regressor

    rf, Xtr, ytr, _, _ = xor_forest
    assert is_classifier(DefragModel(rf)) and not is_regressor(DefragModel(rf))
    assert is_regressor(DefragModel(rf, task="regression"))
    assert not is_classifier(DefragModel(np.array([[0, 0.5]])))
    m = DefragModel(rf, n_restarts=1, random_state=0).fit(Xtr, ytr)
    with pytest.raises(ValueError) as info:
        m.set_params(no_such_parameter=1)
    assert "no_such_parameter" in str(info.value) and "otherwise" not in str(info.value)
    # with the root logger configured, verbose lines are printed once, by its handler
    root = logging.getLogger()
    handler = logging.StreamHandler(sys.stderr)
    root.addHandler(handler)
    try:
        DefragModel(rf, n_restarts=1, random_state=0, verbose=1).fit(Xtr, ytr)
    finally:
        root.removeHandler(handler)
    err = capsys.readouterr().err
    assert err.count("lower bound") == 1, err
