"""defrag explain matches the data's columns to the model's feature names, for XGBoost,
LightGBM and scikit-learn models: reordered columns are reordered, extra ones ignored (a
note on stderr unless --quiet), a missing or renamed one is a one-line error naming it;
a model without names takes the columns by position, with a warning."""
import io
import warnings

import numpy as np
import pytest

from defrag import cli

pd = pytest.importorskip("pandas")

COLUMNS = ["crim", "lstat", "rm", "age"]
LIBRARIES = ["xgboost", "lightgbm", "sklearn"]


def _main(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = cli.main([str(a) for a in argv], out, err)
    return code, out.getvalue(), err.getvalue()


def _fit(library, X, y):
    if library == "xgboost":
        xgb = pytest.importorskip("xgboost")
        return xgb.XGBRegressor(n_estimators=4, max_depth=3, random_state=0).fit(X, y)
    if library == "lightgbm":
        lgb = pytest.importorskip("lightgbm")
        return lgb.LGBMRegressor(n_estimators=4, num_leaves=6, verbose=-1, random_state=0).fit(X, y)
    from sklearn.ensemble import RandomForestRegressor

    return RandomForestRegressor(n_estimators=4, max_depth=4, random_state=0).fit(X, y)


def _save(library, model, path):
    """The model's file as a user would write it; a scikit-learn one with skops when
    installed, else joblib (then read with --allow-pickle)."""
    if library == "xgboost":
        model.save_model(path.with_suffix(".json"))
        return path.with_suffix(".json"), []
    if library == "lightgbm":
        model.booster_.save_model(str(path.with_suffix(".txt")))
        return path.with_suffix(".txt"), []
    try:
        import skops.io
    except ImportError:
        import joblib

        joblib.dump(model, path.with_suffix(".joblib"))
        return path.with_suffix(".joblib"), ["--allow-pickle"]
    skops.io.dump(model, path.with_suffix(".skops"))
    return path.with_suffix(".skops"), []


@pytest.fixture(scope="module")
def frames(tmp_path_factory):
    d = tmp_path_factory.mktemp("cli_columns")
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(400, 4)), columns=COLUMNS)
    # only lstat and rm matter, on very different scales: rules on the wrong column show
    y = 3.0 * (X["lstat"] > 0.3) + 1.0 * (X["rm"] > -0.5)
    return d, X, y


def _rules(argv_model, csv, extra=(), quiet=True):
    argv = ["explain", *argv_model, csv, "--n-restarts", "1", "--n-components", "4", *extra]
    return _main(*argv, *(["--quiet"] if quiet else []))


@pytest.mark.parametrize("library", LIBRARIES)
def test_columns_are_matched_by_the_models_names(frames, library, tmp_path):
    d, X, y = frames
    path, flags = _save(library, _fit(library, X, y), tmp_path / "model")
    X.to_csv(tmp_path / "same.csv", index=False)
    reordered = X[["age", "rm", "crim", "lstat"]].assign(id=np.arange(len(X)), note="x")
    reordered.to_csv(tmp_path / "reordered.csv", index=False)

    code, same, err = _rules([path, *flags], tmp_path / "same.csv")
    assert code == 0 and err == "", err
    assert "lstat" in same and "rm" in same

    # reordered, with extra columns: the same rules; the extra columns named on stderr
    code, out, err = _rules([path, *flags], tmp_path / "reordered.csv", quiet=False)
    assert code == 0, err
    assert out == same
    assert err == "defrag explain: note: ignoring 2 data columns the model does not use: id, note\n"
    code, out, err = _rules([path, *flags], tmp_path / "reordered.csv")
    assert code == 0 and out == same and err == ""  # --quiet

    # a column renamed (the case: reordered and one renamed): an error naming it
    X[["age", "rm", "crim", "lstat"]].rename(columns={"lstat": "LSTAT"}).to_csv(
        tmp_path / "renamed.csv", index=False)
    code, out, err = _rules([path, *flags], tmp_path / "renamed.csv")
    assert code == 2 and out == ""
    assert err == "defrag explain: error: the data have no column 'lstat', a feature of the model\n"
    X.drop(columns=["rm", "age"]).to_csv(tmp_path / "fewer.csv", index=False)
    code, out, err = _rules([path, *flags], tmp_path / "fewer.csv")
    assert code == 2 and err.count("\n") == 1
    assert "no column 'rm', a feature of the model (and 1 more: age)" in err

    # with a target column, which is not a feature
    reordered.assign(label=y).to_csv(tmp_path / "target.csv", index=False)
    code, out, err = _rules([path, *flags], tmp_path / "target.csv", ["--target", "label"], quiet=False)
    assert code == 0 and err.endswith("ignoring 2 data columns the model does not use: id, note\n")
    # a feature of the model named as the target: said so (it was "no column 'rm'")
    code, out, err = _rules([path, *flags], tmp_path / "target.csv", ["--target", "rm"])
    assert (code, out) == (2, "")
    assert err == "defrag explain: error: --target 'rm' is a feature of the model: the target must be another column\n"
    # a target beyond the range the fit computes with: one line, no warnings before it
    reordered.assign(label=y * 1e300).to_csv(tmp_path / "huge.csv", index=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        code, out, err = _rules([path, *flags], tmp_path / "huge.csv", ["--target", "label"])
    assert (code, out) == (2, "") and err.count("\n") == 1
    assert err.startswith("defrag explain: error: y: values as large as 4e+300; defrag fits regression targets")


@pytest.mark.parametrize("library", LIBRARIES)
def test_a_model_without_names_takes_columns_by_position_with_a_warning(frames, library, tmp_path):
    d, X, y = frames
    model = _fit(library, X.to_numpy(), y)
    path, flags = _save(library, model, tmp_path / "model")
    X.to_csv(tmp_path / "same.csv", index=False)
    code, out, err = _rules([path, *flags], tmp_path / "same.csv")
    assert code == 0
    assert err == ("defrag explain: warning: the model stores no feature names; the data's columns "
                   "are taken by position (crim, lstat, rm, age)\n")
    assert "lstat" in out  # the rules speak of the data's names
    X.assign(extra=1.0).to_csv(tmp_path / "wider.csv", index=False)
    code, out, err = _rules([path, *flags], tmp_path / "wider.csv")
    assert code == 2 and err.count("\n") == 1
    assert "stores no feature names" in err and "reads 4 features where the data have 5 columns" in err


def test_lightgbm_names_with_spaces_are_hinted(frames, tmp_path):
    lgb = pytest.importorskip("lightgbm")
    d, X, y = frames
    spaced = X.rename(columns={"lstat": "lower status"})
    # LightGBM stores "lower status" as "lower_status"
    model = lgb.LGBMRegressor(n_estimators=3, num_leaves=4, verbose=-1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(spaced, y)
    model.booster_.save_model(str(tmp_path / "m.txt"))
    spaced.to_csv(tmp_path / "spaced.csv", index=False)
    code, out, err = _rules([tmp_path / "m.txt"], tmp_path / "spaced.csv")
    assert code == 2 and err.count("\n") == 1
    assert "no column 'lower_status'" in err and "the data have 'lower status'" in err


def test_predict_matches_the_rules_columns_by_name(frames, tmp_path):
    d, X, y = frames
    path, flags = _save("sklearn", _fit("sklearn", X, y), tmp_path / "model")
    X.to_csv(tmp_path / "same.csv", index=False)
    code, rules, err = _rules([path, *flags], tmp_path / "same.csv", ["--format", "json"])
    assert code == 0
    (tmp_path / "rules.json").write_text(rules)
    X[["age", "rm", "crim", "lstat"]].assign(id=1).to_csv(tmp_path / "reordered.csv", index=False)
    code, same, err = _main("predict", tmp_path / "rules.json", tmp_path / "same.csv")
    assert code == 0 and err == ""
    code, out, err = _main("predict", tmp_path / "rules.json", tmp_path / "reordered.csv")
    assert code == 0 and err == ""
    a, b = pd.read_csv(io.StringIO(same)), pd.read_csv(io.StringIO(out))
    np.testing.assert_array_equal(a["prediction"], b["prediction"])
    X.rename(columns={"lstat": "LSTAT"}).to_csv(tmp_path / "renamed.csv", index=False)
    code, out, err = _main("predict", tmp_path / "rules.json", tmp_path / "renamed.csv")
    assert code == 2 and err.startswith("defrag predict: error: the data have no column 'lstat'")
    assert "a feature of the rules" in err
