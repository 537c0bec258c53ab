"""The command line reads categorical features as the rules do in memory (found by a fault
hunt): numeric category codes stay numbers (they were turned into their positions), text
categories are read as written ("07" is not 7, "NA" can be a category), a category the
model never saw is refused where the model refuses it, and pandas' string dtype is text."""
import io

import numpy as np
import pytest

from defrag import DefragModel, RuleSet, cli
from defrag.rules import from_json

pd = pytest.importorskip("pandas")


def _main(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = cli.main([str(a) for a in argv], out, err)
    return code, out.getvalue(), err.getvalue()


def _scored(tmp_path, rules, new):
    (tmp_path / "rules.json").write_text(rules.to_json())
    new.to_csv(tmp_path / "new.csv", index=False)
    code, out, err = _main("predict", tmp_path / "rules.json", tmp_path / "new.csv")
    return code, out, err


def test_numeric_category_codes_stay_numbers(tmp_path):
    lgb = pytest.importorskip("lightgbm")
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"cat": rng.integers(0, 8, 2000).astype(float), "w": rng.normal(size=2000)})
    y = (np.isin(X["cat"], [1, 3, 6]) | (X["w"] > 1)).astype(int)
    est = lgb.LGBMClassifier(n_estimators=20, num_leaves=4, verbose=-1, random_state=0).fit(
        X, y, categorical_feature=["cat"])
    rules = DefragModel(est, random_state=0, form="list").fit(X).rules_
    # codes 3 and 6 alone in a file: a pandas categorical would make them codes 0 and 1
    new = pd.DataFrame({"cat": [3.0, 6.0, 6.0, 3.0, 0.0], "w": [0.0] * 5})
    code, out, err = _scored(tmp_path, rules, new)
    assert code == 0, err
    scored = pd.read_csv(io.StringIO(out))
    np.testing.assert_array_equal(scored["prediction"], rules.predict(new))
    np.testing.assert_array_equal(scored["prediction"], est.predict(new))
    # explain on the model's file and that data: LightGBM predicts the codes as numbers
    est.booster_.save_model(str(tmp_path / "lgb.txt"))
    X.to_csv(tmp_path / "train.csv", index=False)
    code, out, err = _main("explain", tmp_path / "lgb.txt", tmp_path / "train.csv", "--format", "json",
                           "--n-restarts", "1", "--quiet")
    assert code == 0, err
    assert np.mean(from_json(out).predict(X) == est.predict(X)) > 0.9


def test_text_categories_are_read_as_written(tmp_path):
    xgb = pytest.importorskip("xgboost")
    rng = np.random.default_rng(0)
    cats = ["07", "10", "NA"]  # a code with a leading zero; "NA" for North America
    X = pd.DataFrame({"region": pd.Categorical(rng.choice(cats, 2000), categories=cats),
                      "w": rng.normal(size=2000)})
    y = (X["region"].isin(["07", "NA"]) | (X["w"] > 1)).astype(int)
    est = xgb.XGBClassifier(n_estimators=20, max_depth=2, enable_categorical=True, random_state=0).fit(X, y)
    rules = DefragModel(est, random_state=0, form="list").fit(X).rules_
    new = pd.DataFrame({"region": ["07", "10", "NA", ""], "w": [0.0] * 4})
    expected = rules.predict(new.astype({"region": object}).replace({"region": {"": np.nan}}))
    assert expected[:3].tolist() == est.predict(new.iloc[:3].astype({"region": pd.CategoricalDtype(cats)})).tolist()
    code, out, err = _scored(tmp_path, rules, new)
    assert code == 0, err
    lines = out.strip().splitlines()
    # the cells as written, and the rules' answers (7 and a missing value before)
    assert [line.rsplit(",", 1)[0] for line in lines[1:]] == ["07,0.0", "10,0.0", "NA,0.0", ",0.0"]
    assert [int(line.rsplit(",", 1)[1]) for line in lines[1:]] == expected.tolist()
    # a category the model never saw: refused, as rules_.predict and XGBoost refuse it
    # (pandas' categorical made it a missing value, and the CLI answered)
    code, out, err = _scored(tmp_path, rules, pd.DataFrame({"region": ["EU", "10"], "w": [0.0, 0.0]}))
    assert (code, out) == (2, "")
    assert err == ("defrag predict: error: X column 'region' has categories the model was not trained "
                   "with: EU\n")
    with pytest.raises(ValueError, match="not trained with: EU"):
        rules.predict(pd.DataFrame({"region": ["EU", "10"], "w": [0.0, 0.0]}).astype({"region": object}))
    # pandas' string dtype (pandas 3's default for text) is text, as object columns are
    frame = pd.DataFrame({"region": pd.array(["07", "NA"], dtype="string"), "w": [0.0, 0.0]})
    np.testing.assert_array_equal(rules.predict(frame), rules.predict(frame.astype({"region": object})))
