"""A raw XGBoost or LightGBM Booster is explained as its scikit-learn wrapper is: its
source reads the task off the booster's objective and gives the wrapper's predictions
(sources/base.py), in the API and in the command line alike; an objective whose outputs
defrag does not read is refused with the same error in both."""
import io

import numpy as np
import pytest

from defrag import DefragModel, cli
from defrag.sources import adapt

xgb = pytest.importorskip("xgboost")
lgb = pytest.importorskip("lightgbm")
pd = pytest.importorskip("pandas")


def _data(task, n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(n, 4)), columns=["a", "b", "c", "d"])
    if task == "regression":
        y = 3 * X["a"] + np.where(X["b"] > 0, 2.0, -1.0) + rng.normal(0, 0.3, n)
    elif task == "binary":
        y = ((X["a"] > 0) ^ (X["b"] > 0.3)).astype(int)
    else:
        y = (X["a"] > 0).astype(int) + (X["c"] > 0.5).astype(int)
    return X, np.asarray(y)


WRAPPERS = {
    "xgboost": {"binary": lambda: xgb.XGBClassifier(n_estimators=15, max_depth=3, random_state=0),
                "multi": lambda: xgb.XGBClassifier(n_estimators=15, max_depth=3, random_state=0),
                "regression": lambda: xgb.XGBRegressor(n_estimators=15, max_depth=3, random_state=0)},
    "lightgbm": {"binary": lambda: lgb.LGBMClassifier(n_estimators=15, num_leaves=6, verbose=-1),
                 "multi": lambda: lgb.LGBMClassifier(n_estimators=15, num_leaves=6, verbose=-1),
                 "regression": lambda: lgb.LGBMRegressor(n_estimators=15, num_leaves=6, verbose=-1)},
}
CASES = [(library, task) for library in WRAPPERS for task in ("binary", "multi", "regression")]


def _fitted(library, task):
    X, y = _data(task)
    wrapper = WRAPPERS[library][task]().fit(X, y)
    booster = wrapper.get_booster() if library == "xgboost" else wrapper.booster_
    return X, y, wrapper, booster


@pytest.mark.parametrize("library,task", CASES)
def test_a_booster_predicts_as_its_wrapper(library, task):
    X, _, wrapper, booster = _fitted(library, task)
    raw = adapt(booster)
    assert raw.has_predict and raw.task == adapt(wrapper).task
    np.testing.assert_array_equal(raw.predict(X), wrapper.predict(X))
    if task != "regression":
        assert raw.has_proba
        np.testing.assert_array_equal(raw.predict_proba(X), wrapper.predict_proba(X))
        np.testing.assert_array_equal(raw.classes, wrapper.classes_)


@pytest.mark.parametrize("library,task", CASES)
def test_api_explains_a_booster_as_its_wrapper(library, task):
    X, _, wrapper, booster = _fitted(library, task)
    expected = DefragModel(wrapper, n_restarts=2, random_state=0).fit(X)
    got = DefragModel(booster, n_restarts=2, random_state=0).fit(X)
    assert str(got) == str(expected)


@pytest.mark.parametrize("library", ["xgboost", "lightgbm"])
def test_cli_on_a_booster_file_prints_what_the_api_prints_for_the_wrapper(library, tmp_path):
    X, _, wrapper, booster = _fitted(library, "binary")
    X.to_csv(tmp_path / "data.csv", index=False)
    path = tmp_path / ("model.json" if library == "xgboost" else "model.txt")
    booster.save_model(str(path))
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(["explain", str(path), str(tmp_path / "data.csv"), "--n-restarts", "2", "--quiet"], out, err)
    assert code == 0, err.getvalue()
    expected = DefragModel(wrapper, n_restarts=2, random_state=0).fit(X)
    text, footer = out.getvalue().strip().rsplit("\n", 1)  # below the text: the fidelity (test_cli.py)
    assert text == str(expected) and footer.startswith(f"On these {len(X)} rows: fidelity ")


def test_an_objective_defrag_does_not_read_is_refused_alike(tmp_path):
    X, y = _data("binary")
    booster = xgb.train({"objective": "binary:logitraw", "max_depth": 2}, xgb.DMatrix(X, label=y), 5)
    with pytest.raises(ValueError, match="objective 'binary:logitraw'") as api:
        DefragModel(booster).fit(X)
    X.to_csv(tmp_path / "data.csv", index=False)
    booster.save_model(str(tmp_path / "model.json"))
    out, err = io.StringIO(), io.StringIO()
    assert cli.main(["explain", str(tmp_path / "model.json"), str(tmp_path / "data.csv"), "--quiet"],
                    out, err) == 2
    assert err.getvalue().strip() == f"defrag explain: error: {api.value}"
    # with a target to fit, the booster's trees are explained
    frame = X.assign(label=y)
    frame.to_csv(tmp_path / "labelled.csv", index=False)
    assert cli.main(["explain", str(tmp_path / "model.json"), str(tmp_path / "labelled.csv"), "--target",
                     "label", "--n-restarts", "2", "--quiet"], io.StringIO(), io.StringIO()) == 0


@pytest.mark.parametrize("library,task", CASES)
def test_evaluate_gives_a_boosters_fidelity_as_its_wrappers(library, task):
    # a raw booster's predictions are its wrapper's: evaluate's fidelity is not None and is
    # the same number as the wrapper's fit gives
    X, y, wrapper, booster = _fitted(library, task)
    raw = DefragModel(booster, random_state=0).fit(X, y).evaluate(X, y)
    wrapped = DefragModel(wrapper, random_state=0).fit(X, y).evaluate(X, y)
    assert raw["fidelity"] is not None
    assert raw["fidelity"] == pytest.approx(wrapped["fidelity"])
