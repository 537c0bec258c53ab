"""Columns by name in every estimator (issue 22, item 3): a DataFrame's columns are matched
to the model's feature names at fit and to feature_names_in_ at predict (reordered columns
put in order, others ignored, a missing name a ValueError naming it); position only where
one side has no names, with a UserWarning. Also: missing class labels, datetime and
timedelta columns, the categorical column named, NotFittedError saying FrozenEstimator."""
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
from sklearn.exceptions import NotFittedError

from defrag import DefragModel
from defrag.baselines import BornAgainTree, DepthTwoTree, InTrees, NodeHarvest
from defrag.prototypes import PrototypeExplainer
from defrag.proxy import ProxyTree, ProxyTreeClassifier
from defrag.sources import adapt

pd = pytest.importorskip("pandas")

NAMES = [f"f{i}" for i in range(5)]
REORDERED = NAMES[::-1]


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.random((300, 5)), columns=NAMES)
    y = ((X.f0 + 0.5 * X.f1 > 0.8) ^ (X.f4 > 0.8)).astype(int).to_numpy()
    y_reg = (3 * X.f0 + X.f1 - 2 * X.f4).to_numpy()
    rf = RandomForestClassifier(10, max_depth=4, random_state=0).fit(X, y)
    rf_reg = RandomForestRegressor(10, max_depth=4, random_state=0).fit(X, y_reg)
    return X, y, y_reg, rf, rf_reg


# (name, make(rf, rf_reg), regression target): every estimator, with small settings
ESTIMATORS = {
    "DefragModel": (lambda rf, rr: DefragModel(rf, n_restarts=2, max_iter=20, random_state=0), False),
    "DefragModel-regression": (lambda rf, rr: DefragModel(rr, n_restarts=2, max_iter=20, random_state=0), True),
    "BornAgainTree": (lambda rf, rr: BornAgainTree(rf, max_depth=2, n_generated=30, random_state=0), False),
    "InTrees": (lambda rf, rr: InTrees(rf, max_trees=5), False),
    "NodeHarvest": (lambda rf, rr: NodeHarvest(rf, max_nodes=100, random_state=0), False),
    "DepthTwoTree": (lambda rf, rr: DepthTwoTree(rf), False),
    "PrototypeExplainer": (lambda rf, rr: PrototypeExplainer(rf, n_prototypes=4, random_state=0), False),
    "ProxyTreeClassifier": (lambda rf, rr: ProxyTreeClassifier(rf, max_leaves=4, random_state=0), False),
    "ProxyTree": (lambda rf, rr: ProxyTree(rr, max_leaves=4, random_state=0), True),
    # no model: the names are the data's own (fit on y)
    "ProxyTree-no-model": (lambda rf, rr: ProxyTree(max_leaves=4, random_state=0), True),
}


def make(name, data):
    X, y, y_reg, rf, rf_reg = data
    factory, regression = ESTIMATORS[name]
    return factory(rf, rf_reg), (y_reg if regression else y)


def variants(X):
    """The same data as X: reordered, with extra columns (first and last), both."""
    extra = X.assign(noise=np.linspace(0, 1, len(X)), zz=1.0)
    return {"reordered": X[REORDERED],
            "extra": extra[["noise"] + NAMES + ["zz"]],
            "reordered+extra": extra[["zz"] + REORDERED + ["noise"]]}


def fresh(model):
    """An unfitted copy with the same (fitted) ensemble: clone would clone the ensemble too."""
    return type(model)(**model.get_params(deep=False))


def quiet_predict(model, X):
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # matched by name: nothing to warn about
        return model.predict(X)


@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_every_estimator_matches_columns_by_name_at_fit_and_predict(name, data):
    X = data[0]
    model, y = make(name, data)
    expected = quiet_predict(model.fit(X, y), X)
    for kind, Xv in variants(X).items():
        # at predict: the fitted model reads the columns by name
        np.testing.assert_array_equal(quiet_predict(model, Xv), expected, err_msg=f"predict, {kind}")
    own_names = not name.endswith("no-model")  # without a model, the data's names rule
    for kind, Xv in variants(X).items():
        # at fit: the same model as on the columns in order
        with warnings.catch_warnings():
            warnings.simplefilter("error", UserWarning)
            again = fresh(model).fit(Xv, y)
        if own_names:
            assert list(again.feature_names_in_) == NAMES, kind
            assert again.n_features_in_ == 5
            np.testing.assert_array_equal(quiet_predict(again, X), expected, err_msg=f"fit, {kind}")
        else:
            assert list(again.feature_names_in_) == list(Xv.columns), kind
        np.testing.assert_array_equal(quiet_predict(again, Xv), quiet_predict(again, Xv[list(Xv.columns)[::-1]]),
                                      err_msg=f"fit and predict, {kind}")
    renamed = X.rename(columns={"f2": "g2"})
    with pytest.raises(ValueError, match="lacks.*'f2'"):
        model.predict(renamed)
    if own_names:  # the model's own names rule at fit
        with pytest.raises(ValueError, match="lacks.*'f2'"):
            fresh(model).fit(renamed, y)
    # a plain array: by position, with scikit-learn's warning
    with pytest.warns(UserWarning, match="does not have valid feature names"):
        np.testing.assert_array_equal(model.predict(X.to_numpy()), expected)


@pytest.mark.parametrize("name", ["DefragModel", "InTrees", "PrototypeExplainer", "ProxyTreeClassifier"])
def test_model_without_names_reads_a_dataframe_by_position_with_a_warning(name, data):
    X, y, _, _, _ = data
    rf = RandomForestClassifier(10, max_depth=4, random_state=0).fit(X.to_numpy(), y)
    model = {"DefragModel": DefragModel(rf, n_restarts=2, max_iter=20, random_state=0),
             "InTrees": InTrees(rf, max_trees=5),
             "PrototypeExplainer": PrototypeExplainer(rf, n_prototypes=4, random_state=0),
             "ProxyTreeClassifier": ProxyTreeClassifier(rf, max_leaves=4, random_state=0)}[name]
    expected = model.fit(X.to_numpy(), y).predict(X.to_numpy())
    with pytest.warns(UserWarning, match="X has feature names, but .* has none: .* by position"):
        model.fit(X[REORDERED], y)  # nothing to match them with
    with warnings.catch_warnings():  # columns that only number the features: nothing to say
        warnings.filterwarnings("error", ".*has none: its columns are read by position", UserWarning)
        for columns in ([f"x{d}" for d in range(5)], list(range(5))):
            numbered = pd.DataFrame(X.to_numpy(), columns=columns)
            np.testing.assert_array_equal(fresh(model).fit(numbered, y).predict(numbered), expected)


def test_defrag_model_and_its_rule_set_read_columns_alike(data):
    X, y, _, rf, _ = data
    m = DefragModel(rf, n_restarts=2, max_iter=20, random_state=0).fit(X[REORDERED], y)
    for Xv in [X, *variants(X).values()]:
        np.testing.assert_array_equal(m.predict(Xv), m.rules_.predict(Xv))
        np.testing.assert_array_equal(m.rules_.predict(Xv), m.rules_.predict(X))
    renamed = X.rename(columns={"f2": "g2"})
    for predict in (m.predict, m.rules_.predict):
        with pytest.raises(ValueError, match="lacks.*'f2'"):
            predict(renamed)
        with pytest.warns(UserWarning, match="does not have valid feature names"):
            by_position = predict(X.to_numpy())
        np.testing.assert_array_equal(by_position, m.predict(X))
    # fitted on an array: both read a DataFrame by position, with a warning
    plain = DefragModel(RandomForestClassifier(10, max_depth=4, random_state=0).fit(X.to_numpy(), y),
                        n_restarts=2, max_iter=20, random_state=0).fit(X.to_numpy(), y)
    for predict in (plain.predict, plain.rules_.predict):
        with pytest.warns(UserWarning, match="X has feature names, but"):
            np.testing.assert_array_equal(predict(X[REORDERED]), plain.predict(X[REORDERED].to_numpy()))


def test_repeated_column_names_are_refused(data):
    X, y, _, rf, _ = data
    doubled = pd.concat([X, X[["f1"]]], axis=1)
    with pytest.raises(ValueError, match="repeated column names: 'f1'"):
        DefragModel(rf, n_restarts=1).fit(doubled, y)
    m = InTrees(rf, max_trees=5).fit(X, y)
    with pytest.raises(ValueError, match="repeated column names: 'f1'"):
        m.predict(doubled)


def test_xgboost_and_lightgbm_names(data):
    xgb = pytest.importorskip("xgboost")
    lgb = pytest.importorskip("lightgbm")
    X, y, _, _, _ = data
    spaced = X.rename(columns={"f0": "first col"})  # LightGBM stores it as first_col
    cases = [(xgb.XGBClassifier(n_estimators=5, max_depth=3), X, NAMES),
             (lgb.LGBMClassifier(n_estimators=5, num_leaves=4, verbose=-1), spaced,
              ["first_col"] + NAMES[1:])]
    for model, frame, stored in cases:
        model.fit(frame, y)
        assert adapt(model).feature_names == stored
        assert adapt(clone(model).fit(frame.to_numpy(), y)).feature_names is None  # XGBoost [], Column_i
        ref = DefragModel(model, n_restarts=2, max_iter=20, random_state=0).fit(frame, y)
        cols = list(frame.columns)
        m = DefragModel(model, n_restarts=2, max_iter=20, random_state=0).fit(frame[cols[::-1]], y)
        assert str(m.rules_) == str(ref.rules_)
        assert list(m.feature_names_in_) == cols  # the data's own names, in the model's order
        np.testing.assert_array_equal(m.predict(frame[cols[2:] + cols[:2]]), ref.predict(frame))
        np.testing.assert_array_equal(m.rules_.predict(frame[cols[::-1]]), ref.predict(frame))


def test_lightgbm_categorical_columns_reordered(data):
    lgb = pytest.importorskip("lightgbm")
    X, y, _, _, _ = data
    red = np.random.default_rng(1).random(len(X)) < 0.5
    frame = X.assign(colour=pd.Categorical(np.where(red, "red", "blue")))
    y = np.where(red, 1, y)
    model = lgb.LGBMClassifier(n_estimators=5, num_leaves=4, min_child_samples=5, verbose=-1).fit(frame, y)
    ref = DefragModel(model, n_restarts=2, max_iter=20, random_state=0).fit(frame, y)
    order = ["colour"] + NAMES[::-1]
    m = DefragModel(model, n_restarts=2, max_iter=20, random_state=0).fit(frame[order], y)
    assert str(m.rules_) == str(ref.rules_) and "colour" in str(m.rules_)
    np.testing.assert_array_equal(m.predict(frame[order]), ref.predict(frame))


def test_dask_dataframe_columns_are_matched_lazily(data):
    dd = pytest.importorskip("dask.dataframe")
    X, y, _, rf, _ = data
    ref = DefragModel(rf, n_restarts=2, max_iter=20, random_state=0).fit(X, y)
    shuffled = variants(X)["reordered+extra"]
    ddf = dd.from_pandas(shuffled, npartitions=3)
    for subsample in (None, 150):  # all rows in memory; the partitions on the cluster
        m = DefragModel(rf, n_restarts=2, max_iter=20, random_state=0, subsample=subsample,
                        task="classification").fit(ddf, y)
        assert list(m.feature_names_in_) == NAMES
        if subsample is None:
            assert str(m.rules_) == str(ref.rules_)
        np.testing.assert_array_equal(m.predict(ddf).compute(), m.predict(X))
    with pytest.raises(ValueError, match="lacks.*'f2'"):
        DefragModel(rf, n_restarts=1).fit(dd.from_pandas(X.rename(columns={"f2": "g2"}), npartitions=2), y)


# ----------------------------------------------------------------- other input checks

@pytest.mark.parametrize("missing", [np.nan, None, "NA"])
@pytest.mark.parametrize("name", ["DefragModel", "InTrees", "PrototypeExplainer", "ProxyTreeClassifier-y"])
def test_missing_class_labels_are_refused(name, missing, data):
    X, y, _, rf, _ = data
    labels = pd.array(y, dtype="Int64") if missing == "NA" else y.astype(object)
    labels[::7] = pd.NA if missing == "NA" else missing
    model = {"DefragModel": DefragModel(rf, n_restarts=1), "InTrees": InTrees(rf),
             "PrototypeExplainer": PrototypeExplainer(rf, n_prototypes=4),
             "ProxyTreeClassifier-y": ProxyTreeClassifier(max_leaves=4)}[name]
    with pytest.raises(ValueError, match="43 missing labels"):
        model.fit(X, labels)


def temporal(X, kind):
    out = X.copy()
    if kind == "datetime":
        out["f3"] = pd.Timestamp("2020-01-01") + pd.to_timedelta(X.f3 * 1e6, unit="s")
    elif kind == "datetime-tz":
        out["f3"] = pd.Timestamp("2020-01-01", tz="UTC") + pd.to_timedelta(X.f3 * 1e6, unit="s")
    else:
        out["f3"] = pd.to_timedelta(X.f3 * 1e6, unit="s")
    return out


@pytest.mark.parametrize("kind", ["datetime", "datetime-tz", "timedelta"])
@pytest.mark.parametrize("name", ["DefragModel", "DefragModel-regression", "BornAgainTree", "InTrees",
                                  "NodeHarvest", "DepthTwoTree", "PrototypeExplainer",
                                  "ProxyTreeClassifier", "ProxyTree", "ProxyTree-no-model"])
def test_datetime_and_timedelta_columns_are_refused_naming_them(name, kind, data):
    X = data[0]
    model, y = make(name, data)
    bad = temporal(X, kind)
    with pytest.raises(TypeError, match="column 'f3' holds"):
        fresh(model).fit(bad, y)
    model.fit(X, y)
    with pytest.raises(TypeError, match="column 'f3' holds"):
        model.predict(bad)
    if name.startswith("DefragModel"):
        with pytest.raises(TypeError, match="column 'f3' holds"):
            model.rules_.predict(bad)
        if name == "DefragModel":
            with pytest.raises(TypeError, match="column 'f3' holds"):
                fresh(model).fit(bad)  # y=None: before the ensemble sees the column


def test_datetime_column_refused_where_the_encoding_codes_categories(data):
    lgb = pytest.importorskip("lightgbm")  # its encoding codes each column (splits/inputs.py)
    X, y, _, _, _ = data
    frame = X.assign(colour=pd.Categorical(np.where(X.f3 > 0.5, "red", "blue")))
    model = lgb.LGBMClassifier(n_estimators=3, num_leaves=4, verbose=-1).fit(frame, y)
    m = DefragModel(model, n_restarts=1, max_iter=10, random_state=0).fit(frame, y)
    bad = temporal(frame, "datetime")
    for call in (m.predict, m.rules_.predict, lambda Z: fresh(m).fit(Z, y)):
        with pytest.raises(TypeError, match="column 'f3' holds datetimes"):
            call(bad)


def test_categorical_column_errors_name_the_column(data):
    X, y, _, rf, _ = data
    coloured = X.assign(f4=pd.Categorical(np.where(X.f4 > 0.5, "red", "blue")))
    with pytest.raises(TypeError, match="column 'f4' is categorical with non-numeric categories"):
        DefragModel(rf, n_restarts=1).fit(coloured, y)
    xgb = pytest.importorskip("xgboost")
    frame = X.assign(colour=pd.Categorical(np.where(X.f3 > 0.5, 1, 0)))
    model = xgb.XGBClassifier(n_estimators=3, max_depth=2, enable_categorical=True,
                              tree_method="hist").fit(frame, y ^ (X.f3.to_numpy() > 0.5))
    m = DefragModel(model, n_restarts=1, max_iter=10, random_state=0).fit(frame, y)
    codes = frame.assign(colour=np.where(X.f3 > 0.5, 1.5, 0.0))  # codes as numbers, one not a code
    with pytest.raises(ValueError, match="column 'colour' is categorical: its values must be integer"):
        m.predict(codes)


@pytest.mark.parametrize("make_model", [
    lambda est: DefragModel(est, n_restarts=1), lambda est: InTrees(est),
    lambda est: PrototypeExplainer(est), lambda est: ProxyTreeClassifier(est)])
def test_unfitted_model_says_fit_it_or_wrap_it_in_frozen_estimator(make_model, data):
    from sklearn.frozen import FrozenEstimator

    X, y, _, rf, _ = data
    unfitted = RandomForestClassifier(5, random_state=0)
    model = make_model(unfitted).fit(X, y)  # cloned and fitted on (X, y)
    assert model.estimator_ is not unfitted and hasattr(model.estimator_, "estimators_")
    assert not hasattr(unfitted, "estimators_")
    assert make_model(rf).fit(X, y).estimator_ is rf  # a fitted one as it is
    # what GridSearchCV does: clone the estimator, its model with it; the clone's model is
    # unfitted, so its fit would fit it: the warning's first line says what to do
    with pytest.warns(UserWarning, match="^Wrap the fitted RandomForestClassifier in "
                      "sklearn.frozen.FrozenEstimator to explain it as it is, or pass it unfitted") as record:
        cloned = clone(make_model(rf))
    assert record[0].filename == __file__  # at the user's line, not in scikit-learn
    assert cloned.fit(X, y).estimator_ is not rf
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        frozen = clone(make_model(FrozenEstimator(rf))).fit(X, y)  # cloned, still fitted
    assert frozen.estimator_.estimator is rf


def test_unfitted_regression_reference_of_a_proxy_tree(data):
    X, _, _, _, _ = data
    with pytest.raises(ValueError, match="requires y to be passed, but the target y is None: y fits the "
                       "unfitted RandomForestRegressor"):
        ProxyTree(RandomForestRegressor(5)).fit(X)


def test_evaluate_warns_once_about_an_array_and_at_the_users_line(data):
    # a forest fitted on a DataFrame, explained from an array: the fit says once that columns
    # are read by position; evaluate's fidelity reads the forest the same way, without the
    # forest's own warning (whose line is inside scikit-learn); a DataFrame-fitted
    # explanation given an array says so once, at the caller's line
    X, y, _, rf, _ = data
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        m = DefragModel(rf, n_restarts=2, random_state=0).fit(X.to_numpy(), y)
        scores = m.evaluate(X.to_numpy(), y)
        on_frame = DefragModel(rf, n_restarts=2, random_state=0).fit(X, y)
        on_frame.evaluate(X.to_numpy(), y)
    named = [w for w in caught if "valid feature names" in str(w.message)]
    assert len(named) == 2, [str(w.message) for w in named]
    assert all(w.filename == __file__ for w in named), [(w.filename, str(w.message)) for w in named]
    assert scores["fidelity"] == np.mean(m.predict(X.to_numpy()) == rf.predict(X))
