"""A fitted scikit-learn Pipeline (per-column transformers, then a tree ensemble) explained over
its input columns: one-hot columns as category conditions, scaled columns in their own units,
predict on the rows the pipeline takes, and the transformers defrag cannot invert refused."""
import re

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import GradientBoostingRegressor, HistGradientBoostingClassifier, RandomForestClassifier
from sklearn.impute import SimpleImputer
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import (FunctionTransformer, MinMaxScaler, OneHotEncoder, OrdinalEncoder,
                                   PolynomialFeatures, StandardScaler)

from defrag import DefragModel
from defrag.sources import adapt
from defrag.sources.base import walk_tree


def houses(n=300, seed=0):
    rng = np.random.RandomState(seed)
    X = pd.DataFrame({"aircon": rng.choice(["yes", "no"], n), "area": rng.uniform(20, 200, n).round(1),
                      "rooms": rng.randint(1, 6, n), "town": rng.choice(["north", "south", "east"], n),
                      "id": [f"h{i}" for i in range(n)]})
    y = ((X.aircon == "no") & (X.area > 80)) | (X.town == "east")
    return X, y.to_numpy()


def one_hot_pipeline(model=None, scaler=None):
    scaler = StandardScaler() if scaler is None else scaler
    ct = ColumnTransformer([("cat", OneHotEncoder(handle_unknown="ignore"), ["aircon", "town"]),
                            ("num", scaler, ["area"]), ("keep", "passthrough", ["rooms"])])
    if model is None:
        model = RandomForestClassifier(n_estimators=10, max_depth=4, random_state=0)
    return Pipeline([("pre", ct), ("model", model)])


def assert_trees_walk_alike(pipe, X):
    """Each tree re-expressed over the input columns sends every row to the leaf the model's
    own tree sends its transformed row to."""
    source = adapt(pipe)
    read = X if source.feature_names is None else X[source.feature_names]  # (not the dropped columns)
    coded = source.encoding.bind(read).transform(read)
    transformed = np.asarray(pipe[:-1].transform(X), dtype=np.float64)
    for ours, theirs in zip(source.trees(), source.final.trees()):
        np.testing.assert_array_equal(walk_tree(ours, coded), walk_tree(theirs, transformed))


def test_one_hot_columns_print_as_category_conditions_on_the_input_column():
    X, y = houses()
    X["listed"] = pd.date_range("2024-01-01", periods=len(X), freq="D")  # dropped, as "id" is
    pipe = one_hot_pipeline().fit(X, y)
    model = DefragModel(pipe, n_regions=4, random_state=0).fit(X)
    text = str(model)
    assert re.search(r"\b(aircon|town) (not )?in \{", text), text
    assert "cat__" not in text and "x_" not in text
    assert model.feature_names_in_.tolist() == ["aircon", "area", "rooms", "town"]  # not id, listed
    assert_trees_walk_alike(pipe, X)
    # predict takes the pipeline's rows, and the printed rules are what it predicts
    np.testing.assert_array_equal(model.predict(X), model.rules_.predict(X))
    assert (model.predict(X) == pipe.predict(X)).mean() > 0.9


def test_a_scaled_column_prints_in_its_own_units_exactly():
    X, y = houses()
    for scaler in (StandardScaler(), MinMaxScaler()):
        pipe = one_hot_pipeline(scaler=scaler).fit(X, y)
        assert_trees_walk_alike(pipe, X)
        source = adapt(pipe)
        area = source.feature_names.index("area")
        thresholds = np.concatenate([t.threshold[(t.feature == area) & ~t.is_leaf] for t in source.trees()])
        assert thresholds.size and thresholds.min() > 20 and thresholds.max() < 200  # raw units
        # each threshold T is the last input the tree sends left: T goes left, the next float right
        final = source.final.trees()
        scaled = pipe[0].named_transformers_["num"]
        for ours, theirs in zip(source.trees(), final):
            nodes = np.flatnonzero((ours.feature == area) & ~ours.is_leaf)
            for i in nodes:
                T = ours.threshold[i]
                below, above = scaled.transform(pd.DataFrame({"area": [T, np.nextafter(T, np.inf)]})).ravel()
                assert below <= theirs.threshold[i] < above
    model = DefragModel(pipe, n_regions=4, random_state=0).fit(X)
    shown = re.findall(r"area (?:<=|>) ([0-9.]+)", str(model))
    assert shown and all(20 < float(v) < 200 for v in shown), str(model)


def test_regression_with_imputed_and_ordinal_columns():
    X, _ = houses(seed=1)
    X.loc[::9, "area"] = np.nan
    y = np.where(X.town == "east", 3.0, 1.0) + X.area.fillna(100) / 50
    numeric = make_pipeline(SimpleImputer(strategy="median", add_indicator=True), StandardScaler())
    ct = ColumnTransformer([("cat", OrdinalEncoder(), ["town", "aircon"]), ("num", numeric, ["area", "rooms"])])
    pipe = Pipeline([("pre", ct), ("gb", GradientBoostingRegressor(n_estimators=20, max_depth=3,
                                                                   random_state=0))]).fit(X, y)
    assert_trees_walk_alike(pipe, X)
    source = adapt(pipe)
    assert source.supports_missing  # the imputer takes a missing area
    model = DefragModel(pipe, n_regions=4, random_state=0).fit(X, y)
    assert "town" in str(model) and "cat__" not in str(model)
    np.testing.assert_array_equal(model.predict(X), model.rules_.predict(X))


def test_a_pipeline_on_an_array_and_a_histogram_booster():
    rng = np.random.RandomState(2)
    X = np.column_stack([rng.randint(0, 3, 300), rng.normal(size=300)])
    y = (X[:, 0] == 2) ^ (X[:, 1] > 0.3)
    ct = ColumnTransformer([("cat", OneHotEncoder(), [0]), ("num", StandardScaler(), [1])])
    pipe = Pipeline([("pre", ct), ("hgb", HistGradientBoostingClassifier(max_iter=10, random_state=0))]).fit(X, y)
    assert_trees_walk_alike(pipe, X)
    model = DefragModel(pipe, n_regions=4, random_state=0).fit(X)
    assert re.search(r"x0 (not )?in \{", str(model)), str(model)
    assert (model.predict(X) == pipe.predict(X)).mean() > 0.9


def test_an_unfitted_pipeline_is_fitted_on_the_input_rows():
    X, y = houses()
    model = DefragModel(one_hot_pipeline(), n_regions=3, random_state=0).fit(X, y)
    assert isinstance(model.estimator_, Pipeline)
    assert "aircon" in str(model) or "town" in str(model) or "area" in str(model)


def test_a_transformer_without_output_names_is_refused_by_name():
    X, y = houses()
    num = X[["area", "rooms"]]
    pipe = Pipeline([("log", FunctionTransformer(np.log1p)),
                     ("rf", RandomForestClassifier(n_estimators=3, random_state=0))]).fit(num, y)
    with pytest.raises(TypeError, match="FunctionTransformer.*get_feature_names_out"):
        DefragModel(pipe).fit(num)


@pytest.mark.parametrize("steps, columns", [
    ([("poly", PolynomialFeatures(2))], ["area", "rooms"]),
    ([("ord", OrdinalEncoder()), ("hot", OneHotEncoder())], ["town", "aircon"]),  # a code encoded again
], ids=["PolynomialFeatures", "encoded-twice"])
def test_a_pipeline_not_restated_is_read_over_its_transformed_columns(steps, columns):
    X, y = houses()
    X = X[columns]
    pipe = Pipeline(steps + [("rf", RandomForestClassifier(n_estimators=10, random_state=0))]).fit(X, y)
    names = list(pipe[:-1].get_feature_names_out())
    model = DefragModel(pipe, form="list", n_restarts=2, random_state=0).fit(X)  # the raw rows
    assert model.feature_names_in_.tolist() == names
    printed = {c.feature for rule in model.rules_.rules for c in rule.conditions}
    assert printed and all(model.rules_.feature_names[f] in names for f in printed)
    transformed = pipe[:-1].transform(X)
    transformed = pd.DataFrame(getattr(transformed, "toarray", lambda: transformed)(), columns=names)
    # predict takes the raw rows; the rules read the transformed ones
    np.testing.assert_array_equal(model.predict(X), model.rules_.predict(transformed))
    assert model.evaluate(X, y)["fidelity"] > 0.6
    paper = DefragModel.paper(pipe, n_restarts=1, random_state=0).fit(X)  # (the mixture's reading)
    assert paper.predict(X).shape == (len(X),)


@pytest.mark.parametrize("encoder", [OneHotEncoder(drop="first"),
                                     OneHotEncoder(min_frequency=150, handle_unknown="infrequent_if_exist")],
                         ids=["drop-first", "infrequent"])
def test_dropped_and_infrequent_categories_go_where_the_encoder_sends_them(encoder):
    X, y = houses(400)
    ct = ColumnTransformer([("cat", encoder, ["aircon", "town"]), ("num", "passthrough", ["area"])])
    pipe = Pipeline([("pre", ct), ("rf", RandomForestClassifier(n_estimators=5, random_state=0))]).fit(X, y)
    assert_trees_walk_alike(pipe, X)


def test_the_printed_text_predicts_as_predict_on_raw_rows_with_missing_values():
    from test_printed_truth import check_truthful, frame_columns

    X, y = houses(400)
    X = X.drop(columns="id")
    pipe = one_hot_pipeline().fit(X, y)
    for form in ("auto", "list"):
        size = {"n_regions": 4} if form == "auto" else {}
        model = DefragModel(pipe, n_restarts=2, random_state=0, form=form, **size).fit(X)
        assert re.search(r"\b(aircon|town) (not )?in \{", str(model)), str(model)
        test = X.copy()
        rng = np.random.default_rng(1)
        for column in ("aircon", "town", "area"):  # missing values, read as the pipeline reads them
            test.loc[rng.random(len(test)) < 0.2, column] = np.nan
        check_truthful(model, frame_columns(test), test, False,
                       known={"aircon": {"yes", "no"}, "town": {"north", "south", "east"}})
        assert (model.predict(test) == pipe.predict(test)).mean() > 0.85


@pytest.mark.parametrize("library", ["hist-categorical", "lightgbm", "xgboost"])
def test_ordinal_codes_read_by_category_or_number_become_category_sets(library):
    X, y = houses(400)
    if library == "hist-categorical":  # the booster's own category sets of the codes
        model = HistGradientBoostingClassifier(max_iter=10, categorical_features=[0, 1], random_state=0)
    elif library == "lightgbm":
        model = pytest.importorskip("lightgbm").LGBMClassifier(n_estimators=10, verbose=-1, random_state=0)
    else:
        model = pytest.importorskip("xgboost").XGBClassifier(n_estimators=10, max_depth=3, random_state=0)
    ct = ColumnTransformer([("cat", OrdinalEncoder(), ["town", "aircon"]), ("num", StandardScaler(), ["area"])])
    pipe = Pipeline([("pre", ct), ("model", model)]).fit(X, y)
    assert_trees_walk_alike(pipe, X)
    explained = DefragModel(pipe, n_regions=4, random_state=0).fit(X)
    assert re.search(r"\btown (not )?in \{", str(explained)), str(explained)
    assert (explained.predict(X) == pipe.predict(X)).mean() > 0.9
