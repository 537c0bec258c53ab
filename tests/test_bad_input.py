"""Input a new user gets wrong (issue 16, item 5): NaN with a model that routes it, test
labels the model never saw, text columns."""
import warnings

import numpy as np
import pytest
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

from defrag import DefragModel
from defrag.prototypes import PrototypeExplainer
from defrag.proxy import ProxyTree
from defrag.sources import adapt


@pytest.fixture(scope="module")
def nan_data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(240, 3))
    y = (X[:, 0] + 0.5 * X[:, 1] > 0).astype(int)
    X[rng.random(X.shape) < 0.15] = np.nan
    return X, y


@pytest.fixture(scope="module")
def nan_forest(nan_data):
    X, y = nan_data
    return RandomForestClassifier(n_estimators=15, max_depth=4, random_state=0).fit(X, y)


def test_prototypes_route_nan_as_the_forest_does(nan_data, nan_forest):
    X, y = nan_data
    assert adapt(nan_forest).supports_missing
    pe = PrototypeExplainer(nan_forest, n_prototypes=4, random_state=0).fit(X)
    assert np.isnan(X[:20]).any()  # the rows compared below hold NaN
    # the rf distance from the forest's own leaves, NaN rows included: 1 - share of trees
    # in which two points fall in the same leaf (the forest routes the NaN)
    leaves = nan_forest.apply(X[:20])
    proto = nan_forest.apply(X[pe.prototypes_])
    expected = 1.0 - (leaves[:, None, :] == proto[None, :, :]).mean(axis=2)
    np.testing.assert_allclose(pe.transform(X[:20]), expected, atol=1e-6)
    pred = pe.predict(X)
    assert pred.shape == (X.shape[0],) and set(pred) <= {0, 1}


def test_prototypes_refuse_nan_they_cannot_route(nan_data):
    X, y = nan_data
    with pytest.raises(ValueError, match="euclidean distance needs values"):
        PrototypeExplainer(None, distance="euclidean", n_prototypes=4).fit(X, y)
    clean = np.nan_to_num(X)
    from sklearn.ensemble import GradientBoostingClassifier

    gb = GradientBoostingClassifier(n_estimators=5, max_depth=2, random_state=0).fit(clean, y)
    assert not adapt(gb).supports_missing
    pe = PrototypeExplainer(gb, n_prototypes=4, random_state=0).fit(clean)
    with pytest.raises(ValueError, match="no rule for missing values"):
        pe.predict(X)


def test_proxy_tree_takes_nan_the_forest_routes(nan_data):
    # tests/test_proxy.py checks the routing itself against a NumPy reference
    X, y = nan_data
    rf = RandomForestRegressor(n_estimators=5, max_depth=3, random_state=0).fit(X, y.astype(float))
    tree = ProxyTree(rf, max_leaves=4).fit(X)
    assert np.isfinite(tree.predict(X)).all()
    clean = ProxyTree(rf, max_leaves=4).fit(np.nan_to_num(X))  # no NaN in training: still routed
    np.testing.assert_array_equal(clean.predict(X[:30]), clean.rules_.predict(X[:30]))


def test_evaluate_warns_about_labels_the_model_never_saw(nan_data, nan_forest):
    X, y = nan_data
    model = DefragModel(nan_forest, n_components=3, random_state=0, form="list").fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the right labels: no warning
        right = model.evaluate(X, y)
    with pytest.warns(UserWarning, match=r"2 label\(s\) the model was not fitted with: '0', '1'"):
        wrong = model.evaluate(X, y.astype(str))
    assert wrong["error"] == 1.0 and right["error"] < 0.5
    assert wrong["fidelity"] == right["fidelity"]
    with pytest.warns(UserWarning, match=r"1 label\(s\) .*: 7"):
        model.evaluate(X, np.where(np.arange(y.size) == 3, 7, y))


def test_baselines_warn_about_unseen_labels_too(nan_data, nan_forest):
    from defrag.baselines import InTrees

    X, y = nan_data
    model = InTrees(nan_forest, max_trees=10).fit(X, y)
    with pytest.warns(UserWarning, match="not fitted with"):
        model.evaluate(X, y + 2)


def test_text_columns_are_refused_like_a_numpy_string_array():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(1)
    X = rng.normal(size=(120, 2))
    y = (X[:, 0] > 0).astype(int)
    rf = RandomForestClassifier(n_estimators=5, max_depth=3, random_state=0).fit(X, y)
    model = DefragModel(rf, n_components=2, random_state=0, form="list").fit(X, y)
    strings = X.astype(str)
    with pytest.raises(TypeError, match="numeric"):
        model.predict(strings)
    for col in (strings[:, 0], strings[:, 0].astype(object)):
        # (columns that number the features, as the array's: no warning of names to match)
        df = pd.DataFrame({"x0": col, "x1": X[:, 1]})
        with pytest.raises(TypeError, match="column 'x0' holds string values"):
            model.predict(df)
        with pytest.raises(TypeError, match="column 'x0' holds string values"):
            DefragModel(rf, n_components=2, random_state=0, form="list").fit(df, y)
    # an object column of numbers is numbers
    numbers = pd.DataFrame({"x0": X[:, 0].astype(object), "x1": X[:, 1]})
    np.testing.assert_array_equal(model.predict(numbers), model.predict(X))


def test_gbt_prototypes_take_nan_with_hist_gradient_boosting(nan_data):
    from sklearn.ensemble import HistGradientBoostingClassifier

    X, y = nan_data
    hgb = HistGradientBoostingClassifier(max_iter=5, random_state=0).fit(X, y)
    pe = PrototypeExplainer(hgb, n_prototypes=4, random_state=0).fit(X)
    assert pe.distance_ == "gbt"
    assert pe.score(X, hgb.predict(X)) > 0.8  # nearest prototype under the model's own leaves


def test_values_beyond_float32_are_named_where_the_trees_must_predict():
    # scikit-learn's trees read X as float32: a regression fit with y (its second list is
    # grown on the forest's predictions) and a fit to the predictions failed with
    # scikit-learn's message; a classifier's fit with y needs no predict and takes them
    import pandas as pd
    from sklearn.ensemble import GradientBoostingRegressor

    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    y = X[:, 0] + 0.1 * rng.normal(size=200)
    big = X.copy()
    big[:10, 1] = -1e300
    message = (r"^X holds values beyond float32's range \(about 3\.4e38\) in column '{}', e\.g\. -1e\+300: "
               r"scikit-learn's trees read their inputs as float32")
    for model in (RandomForestRegressor(n_estimators=5, random_state=0).fit(X, y),
                  GradientBoostingRegressor(n_estimators=5, random_state=0).fit(X, y)):
        for args in ((big, y), (big,)):
            with pytest.raises(ValueError, match=message.format("x1")):
                DefragModel(model, random_state=0, form="list").fit(*args)
        with pytest.raises(ValueError, match=message.format("x1")):  # (columns numbered as the array's)
            DefragModel(model, random_state=0, form="list").fit(pd.DataFrame(big, columns=["x0", "x1", "x2"]), y)
    clf = RandomForestClassifier(n_estimators=5, random_state=0).fit(X, y > 0)
    model = DefragModel(clf, random_state=0, form="list").fit(big, y > 0)
    np.testing.assert_array_equal(model.predict(big), model.rules_.predict(big))
