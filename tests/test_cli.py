"""The defrag command line: explain a model file on a CSV, score a CSV with saved rules."""
import io
import os
import re
import subprocess
import sys

import numpy as np
import pytest

from conftest import categorical_frame
from defrag import DefragModel, RuleSet
from defrag import cli
from defrag.rules import from_json

pd = pytest.importorskip("pandas")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _run(*args):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "defrag", *args], capture_output=True, text=True,
                          timeout=300, env=env, cwd=ROOT)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A CSV with NaN, a text and an integer categorical column and a label; a random
    forest on two of its columns (joblib, and skops when installed), an XGBoost JSON file
    and a LightGBM text file."""
    import joblib
    from sklearn.ensemble import RandomForestClassifier

    d = tmp_path_factory.mktemp("cli")
    X, y = categorical_frame(2, n=600)
    frame = X.copy()
    frame["label"] = y
    frame.to_csv(d / "data.csv", index=False)
    models = {}
    rf = RandomForestClassifier(n_estimators=10, max_depth=5, random_state=0).fit(X[["x0", "x2"]], y)
    joblib.dump(rf, d / "rf.joblib")
    models["rf.joblib"] = models["rf.skops"] = rf
    try:
        import skops.io
    except ImportError:
        pass
    else:
        skops.io.dump(rf, d / "rf.skops")
    xgb = pytest.importorskip("xgboost")
    model = xgb.XGBClassifier(n_estimators=10, max_depth=3, enable_categorical=True,
                              max_cat_to_onehot=1, random_state=0).fit(X, y)
    model.save_model(d / "xgb.json")
    models["xgb.json"] = model
    lgb = pytest.importorskip("lightgbm")
    model = lgb.LGBMClassifier(n_estimators=10, num_leaves=6, verbose=-1, min_data_per_group=5,
                               random_state=0).fit(X, y)
    model.booster_.save_model(str(d / "lgb.txt"))
    models["lgb.txt"] = model
    return d, X, y, models


@pytest.mark.parametrize("name", ["rf.skops", "xgb.json", "lgb.txt"])
def test_explain_a_model_file_end_to_end(files, name):
    d, X, y, models = files
    if not (d / name).exists():
        pytest.skip("skops is not installed")
    out = d / f"{name}.rules.json"
    res = _run("explain", str(d / name), str(d / "data.csv"), "--format", "json", "--out", str(out),
               "--n-components", "5", "--n-restarts", "3", "--seed", "0", "--quiet")
    assert res.returncode == 0, res.stderr
    assert res.stdout == "" and res.stderr == ""
    rules = from_json(out.read_text())
    # the rules fit the model's own predictions, as DefragModel on the fitted model does
    model = models[name]
    cols = ["x0", "x2"] if name == "rf.skops" else list(X.columns)
    # (the XGBoost and LightGBM files hold a raw Booster, explained as its scikit-learn
    # wrapper is: the same predictions, read from its objective)
    expected = DefragModel(model, n_components=5, n_restarts=3, random_state=0).fit(X[cols])
    assert str(rules) == str(expected.rules_)
    np.testing.assert_array_equal(rules.predict(X[cols]), expected.predict(X[cols]))
    # and score the CSV with them (in a subprocess once: each costs seconds of imports)
    scored = d / f"{name}.scored.csv"
    argv = ["predict", str(out), str(d / "data.csv"), "--out", str(scored)]
    if name == "xgb.json":
        res = _run(*argv)
        assert res.returncode == 0, res.stderr
    else:
        assert cli.main(argv) == 0
    back = pd.read_csv(scored)
    assert list(back.columns) == list(X.columns) + ["label", "prediction"]
    np.testing.assert_array_equal(back["prediction"].to_numpy(), expected.predict(X[cols]))


def test_explain_with_a_target_and_every_format(files):
    d, X, y, _ = files
    expected = DefragModel(cli.models.load_model(str(d / "lgb.txt")), n_components=4, n_restarts=2,
                           random_state=0).fit(cli.columns.prepare_frame(X, {1: None, 3: None}), y)
    texts = {}
    for fmt in cli.output.FORMATS:
        out, err = io.StringIO(), io.StringIO()
        code = cli.main(["explain", str(d / "lgb.txt"), str(d / "data.csv"), "--target", "label",
                         "--format", fmt, "--n-components", "4", "--n-restarts", "2", "--quiet"], out, err)
        assert code == 0 and err.getvalue() == ""
        texts[fmt] = out.getvalue()
    frame = cli.columns.prepare_frame(X, {1: None, 3: None})
    assert texts["text"].strip() == str(expected) + "\n" + cli.output.quality_footer(
        expected.evaluate(frame, y), len(X), "classification", True)
    assert from_json(texts["json"]).to_dict() == expected.rules_.to_dict()
    assert texts["sql"].startswith("CASE") and texts["sql"].strip().endswith("END")
    namespace = {}
    exec(texts["python"], namespace)
    assert [namespace["predict"](r) for r in X.head(50).to_dict("records")] == \
        expected.predict(cli.columns.prepare_frame(X.head(50), {1: None, 3: None})).tolist()
    # a tree reads by its indentation: its text in a code block
    assert texts["markdown"].strip() == "```\n" + str(expected.rules_) + "\n```"


def test_explain_with_n_rules_and_the_default_restarts(files):
    d, X, y, _ = files
    frame = cli.columns.prepare_frame(X, {1: None, 3: None})
    model = cli.models.load_model(str(d / "lgb.txt"))
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(["explain", str(d / "lgb.txt"), str(d / "data.csv"), "--target", "label",
                     "--n-regions", "3", "--quiet"], out, err)
    assert code == 0 and err.getvalue() == ""
    expected = DefragModel(model, n_regions=3, random_state=0).fit(frame, y)  # n_restarts "auto"
    text, footer = out.getvalue().strip().rsplit("\n", 1)
    assert text == str(expected) and expected.n_regions_ == 3
    assert footer.startswith(f"On these {len(X)} rows: explanation error ")


def _footer_figures(line):
    return {k: float(v) for k, v in re.findall(r"(explanation error|model error|fidelity|explanation MSE|"
                                                r"model MSE|R\^2) (-?[0-9.e+-]+)", line)}


def test_explain_ends_its_text_with_the_quality_of_the_rules_on_the_data(files, tmp_path):
    from sklearn.ensemble import RandomForestRegressor

    d, X, y, models = files
    frame = cli.columns.prepare_frame(X, {1: None, 3: None})
    # classification, with a target: both errors, then the fidelity, as evaluate gives them
    out, err = io.StringIO(), io.StringIO()
    assert cli.main(["explain", str(d / "lgb.txt"), str(d / "data.csv"), "--target", "label",
                     "--n-restarts", "2", "--quiet"], out, err) == 0
    footer = out.getvalue().strip().splitlines()[-1]
    expected = DefragModel(cli.models.load_model(str(d / "lgb.txt")), n_restarts=2, random_state=0).fit(frame, y)
    ev = expected.evaluate(frame, y)
    got = _footer_figures(footer)
    assert footer.startswith(f"On these {len(X)} rows: explanation error ")
    assert got["explanation error"] == pytest.approx(ev["error"], abs=5e-3)
    assert got["model error"] == pytest.approx(ev["model_error"], abs=5e-3)
    assert got["fidelity"] == pytest.approx(ev["fidelity"], abs=5e-3)
    # no target: the fidelity only, and how to get the errors
    out = io.StringIO()
    assert cli.main(["explain", str(d / "lgb.txt"), str(d / "data.csv"), "--n-restarts", "2", "--quiet"],
                    out, io.StringIO()) == 0
    footer = out.getvalue().strip().splitlines()[-1]
    assert footer.startswith(f"On these {len(X)} rows: fidelity ") and "--target" in footer
    assert "error" not in footer.split(";")[0]
    # regression: mean squared errors and R^2 of both
    import joblib

    Xn = X[["x0", "x2"]].fillna(0)
    target = Xn["x0"] * 2 + Xn["x2"]
    rf = RandomForestRegressor(n_estimators=10, max_depth=4, random_state=0).fit(Xn, target)
    joblib.dump(rf, tmp_path / "reg.joblib")
    Xn.assign(t=target).to_csv(tmp_path / "reg.csv", index=False)
    out = io.StringIO()
    assert cli.main(["explain", str(tmp_path / "reg.joblib"), str(tmp_path / "reg.csv"), "--target", "t",
                     "--allow-pickle", "--n-restarts", "2", "--quiet"], out, io.StringIO()) == 0
    footer = out.getvalue().strip().splitlines()[-1]
    assert re.fullmatch(r"On these 600 rows: explanation MSE \S+ \(R\^2 \S+\), model MSE \S+ \(R\^2 \S+\), "
                        r"fidelity \S+ \(R\^2 of the rules against the model's predictions\)", footer), footer
    # the JSON document carries the same figures, and stays the rules document that
    # defrag predict reads
    out = io.StringIO()
    assert cli.main(["explain", str(tmp_path / "reg.joblib"), str(tmp_path / "reg.csv"), "--target", "t",
                     "--allow-pickle", "--n-restarts", "2", "--quiet", "--format", "json"], out, io.StringIO()) == 0
    import json

    figures = json.loads(out.getvalue())["evaluation"]
    assert set(figures) == {"n_rows", "error", "model_error", "r2", "model_r2", "fidelity"}
    assert figures["n_rows"] == 600
    shown = _footer_figures(footer)
    assert figures["fidelity"] == pytest.approx(shown["fidelity"], rel=5e-3)
    assert figures["error"] == pytest.approx(shown["explanation MSE"], rel=5e-3)
    rules = from_json(out.getvalue())
    np.testing.assert_array_equal(rules.predict(Xn), DefragModel(rf, n_restarts=2, random_state=0)
                                  .fit(Xn, target).predict(Xn))


def test_progress_on_stderr_for_long_fits_and_quiet(files, monkeypatch):
    d, *_ = files
    monkeypatch.setattr(cli.output, "PROGRESS_AFTER_S", 0.0)
    args = ["explain", str(d / "rf.joblib"), str(d / "data.csv"), "--n-restarts", "2", "--n-jobs", "1",
            "--allow-pickle"]
    out, err = io.StringIO(), io.StringIO()
    assert cli.main(args, out, err) == 0
    assert "restart 1" in err.getvalue() and "fitted in" in err.getvalue()
    assert "ignoring 3 data columns the model does not use: colour, size, label" in err.getvalue()
    assert "[defrag" not in out.getvalue()
    out, err = io.StringIO(), io.StringIO()
    assert cli.main(args + ["--quiet"], out, err) == 0
    assert err.getvalue() == ""
    monkeypatch.setattr(cli.output, "PROGRESS_AFTER_S", 3600.0)  # a short fit says nothing
    out, err = io.StringIO(), io.StringIO()
    assert cli.main(args, out, err) == 0
    assert err.getvalue().startswith("defrag explain: note: ignoring 3 data columns")
    assert err.getvalue().count("\n") == 1


def test_bad_arguments_and_files_are_errors_not_tracebacks(files, capsys):
    d, *_ = files
    for bad in (["demo", "--n-restarts", "0"], ["explain", "m", "d", "--n-components", "x"],
                ["explain", "m", "d", "--format", "pdf"], ["explain", "m", "d", "--n-jobs", "0"], []):
        with pytest.raises(SystemExit) as exc:
            cli.main(bad)
        assert exc.value.code == 2
        assert "usage: defrag" in capsys.readouterr().err
    cases = [
        (["explain", str(d / "nope.json"), str(d / "data.csv")], "no such model file"),
        (["explain", str(d / "xgb.json"), str(d / "nope.csv")], "no such data file"),
        (["explain", str(d / "rf.joblib"), str(d / "data.csv"), "--target", "y", "--allow-pickle"],
         "no column 'y'"),
        (["explain", str(d / "data.csv"), str(d / "data.csv")], "not a model file defrag reads"),
        (["explain", str(d / "data.csv"), str(d / "data.csv"), "--allow-pickle"], "cannot load"),
        (["predict", str(d / "data.csv"), str(d / "data.csv")], "not a defrag rules file"),
    ]
    for argv, message in cases:
        err = io.StringIO()
        assert cli.main(argv, io.StringIO(), err) == 2
        assert message in err.getvalue() and "Traceback" not in err.getvalue(), err.getvalue()


def test_help_is_plain_text_and_names_the_command():
    res = _run("--help")
    assert res.returncode == 0
    assert res.stdout.startswith("usage: defrag ") and "``" not in res.stdout
    for command in ("explain", "predict", "demo", "config"):
        assert command in res.stdout
    res = _run("explain", "--help")
    assert "usage: defrag explain" in res.stdout and "``" not in res.stdout
    res = _run("demo", "--n-restarts", "0")
    assert res.returncode == 2 and "Traceback" not in res.stderr and "at least 1" in res.stderr


def test_console_script_points_at_the_cli():
    tomllib = pytest.importorskip("tomllib")
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        project = tomllib.load(f)["project"]
    assert project["scripts"]["defrag"] == "defrag.cli:main"
    assert {"plot", "parquet", "skops"} <= set(project["optional-dependencies"])


def test_demo_wraps_rules_and_explains_fidelity(monkeypatch):
    monkeypatch.setenv("COLUMNS", "60")
    out = io.StringIO()
    assert cli.main(["demo", "--dataset", "diabetes", "--n-trees", "7", "--n-restarts", "2",
                     "--max-conditions", "6", "--quiet"], out) == 0
    text = out.getvalue()
    assert "of 7 trees" in text and "100 trees" not in text
    assert "fidelity: R^2" in text
    table_start = text.index("  regions  ")
    assert all(len(line) <= 60 for line in text[:table_start].splitlines()), text
    assert "else: " in text and "How to read:" in text


def test_predict_reads_parquet_when_pyarrow_is_there(files, tmp_path):
    pytest.importorskip("pyarrow")
    d, X, y, models = files
    m = DefragModel(models["rf.joblib"], n_components=4, n_restarts=2, random_state=0).fit(X[["x0", "x2"]])
    (tmp_path / "r.json").write_text(m.rules_.to_json())
    X.to_parquet(tmp_path / "d.parquet")
    out = io.StringIO()
    assert cli.main(["predict", str(tmp_path / "r.json"), str(tmp_path / "d.parquet")], out) == 0
    back = pd.read_csv(io.StringIO(out.getvalue()))
    np.testing.assert_array_equal(back["prediction"], m.predict(X[["x0", "x2"]]))
