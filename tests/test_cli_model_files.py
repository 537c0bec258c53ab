"""The command line and the files it is given: pickles run nothing unless asked for,
skops files load with a list of trusted types, and every user error (a bad file, the
wrong kind of file, an unsupported model, rules given for a model and a model for rules,
a model file cut short) is one line on stderr with exit status 2, never a traceback or
an abort. Cases that could take the process down run the CLI in a subprocess."""
import io
import json
import os
import pathlib
import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from defrag import cli
from defrag.rules import from_json

pd = pytest.importorskip("pandas")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _run(*args, cwd=None):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "defrag", *args], capture_output=True, text=True,
                          timeout=300, env=env, cwd=cwd or ROOT)


def _main(*argv):
    """(exit status, stdout, stderr) of the CLI run in this process."""
    out, err = io.StringIO(), io.StringIO()
    code = cli.main([str(a) for a in argv], out, err)
    return code, out.getvalue(), err.getvalue()


def _one_line_error(code, out, err, command="explain"):
    assert code == 2, err
    assert out == ""
    assert err.endswith("\n") and err.count("\n") == 1, err
    assert err.startswith(f"defrag {command}: error: "), err
    assert "Traceback" not in err


class _Marker:
    """Unpickling this creates the (empty) marker file and nothing else."""

    def __init__(self, path):
        self.path = pathlib.Path(path)

    def __reduce__(self):
        return (pathlib.Path.touch, (self.path,))


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """A CSV of four numeric columns and a label, a random forest fitted on them (by
    name), and an XGBoost JSON and LightGBM text model of the same data."""
    from sklearn.ensemble import RandomForestClassifier

    d = tmp_path_factory.mktemp("cli_files")
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(300, 4)), columns=["crim", "lstat", "rm", "age"])
    y = ((X["lstat"] > 0) ^ (X["rm"] > 0.5)).astype(int)
    frame = X.copy()
    frame["label"] = y
    frame.to_csv(d / "data.csv", index=False)
    rf = RandomForestClassifier(n_estimators=5, max_depth=3, random_state=0).fit(X, y)
    xgb = pytest.importorskip("xgboost")
    xgb.XGBClassifier(n_estimators=3, max_depth=2).fit(X, y).save_model(d / "xgb.json")
    lgb = pytest.importorskip("lightgbm")
    lgb.LGBMClassifier(n_estimators=3, num_leaves=4, verbose=-1).fit(X, y).booster_.save_model(
        str(d / "lgb.txt"))
    return d, X, y, rf


# ------------------------------------------------------------------------ pickles
@pytest.mark.parametrize("name", ["model.json", "model.txt", "model.joblib", "model.ubj", "model.skops"])
def test_a_pickle_runs_nothing_without_allow_pickle(data, tmp_path, name):
    d, *_ = data
    marker = tmp_path / "marker"
    with open(tmp_path / name, "wb") as f:
        pickle.dump(_Marker(marker), f)
    code, out, err = _main("explain", tmp_path / name, d / "data.csv")
    _one_line_error(code, out, err)
    assert "pickle" in err and "--allow-pickle" in err
    assert not marker.exists()
    # nor when it is given where rules are expected
    code, out, err = _main("predict", tmp_path / name, d / "data.csv")
    _one_line_error(code, out, err, "predict")
    assert not marker.exists()


def test_a_joblib_file_loads_with_allow_pickle_only(data, tmp_path):
    joblib = pytest.importorskip("joblib")
    d, X, y, rf = data
    for compress in (0, 3):  # plain and zlib-compressed joblib files
        path = tmp_path / f"forest{compress}.joblib"
        joblib.dump(rf, path, compress=compress)
        code, out, err = _main("explain", path, d / "data.csv", "--n-restarts", "1", "--quiet")
        _one_line_error(code, out, err)
        assert "--allow-pickle" in err
        code, out, err = _main("explain", path, d / "data.csv", "--n-restarts", "1", "--quiet",
                               "--allow-pickle")
        assert code == 0 and err == "" and out.splitlines()[1].startswith("DefragModel: ")
    # with the flag the pickle is loaded, and what it holds runs: the flag is the user's word
    marker = tmp_path / "marker"
    with open(tmp_path / "evil.json", "wb") as f:
        pickle.dump(_Marker(marker), f)
    code, out, err = _main("explain", tmp_path / "evil.json", d / "data.csv", "--allow-pickle")
    assert marker.exists()
    _one_line_error(code, out, err)
    assert "unsupported estimator type" in err and "NoneType" in err


def test_help_and_readme_say_that_a_pickle_runs_code():
    res = _run("explain", "--help")
    assert res.returncode == 0
    text = " ".join(res.stdout.split())
    assert "--allow-pickle" in text and "runs any code" in text and "skops" in text
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        readme = " ".join(f.read().split())
    assert "--allow-pickle" in readme and "unpickling runs whatever code" in readme


# -------------------------------------------------------------------------- skops
def test_a_skops_forest_round_trips(data, tmp_path):
    sio = pytest.importorskip("skops.io")
    from defrag import DefragModel

    d, X, y, rf = data
    sio.dump(rf, tmp_path / "forest.skops")
    code, out, err = _main("explain", tmp_path / "forest.skops", d / "data.csv", "--format", "json",
                           "--n-components", "4", "--n-restarts", "2", "--quiet")
    assert code == 0 and err == "", err
    expected = DefragModel(rf, n_components=4, n_restarts=2, random_state=0).fit(X)
    from defrag import RuleSet

    assert str(from_json(out)) == str(expected.rules_)


def test_skops_files_load_only_trusted_types(data, tmp_path):
    sio = pytest.importorskip("skops.io")
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.linear_model import LinearRegression
    from sklearn.preprocessing import FunctionTransformer

    d, X, y, rf = data
    # a type outside the list is refused, named, and never built
    sio.dump(FunctionTransformer(func=os.system), tmp_path / "system.skops")
    code, out, err = _main("explain", tmp_path / "system.skops", d / "data.csv")
    _one_line_error(code, out, err)
    assert "does not trust" in err and "system" in err
    # a trusted model defrag cannot explain, and a zip that is no skops file
    sio.dump(LinearRegression().fit(X, y), tmp_path / "linear.skops")
    code, out, err = _main("explain", tmp_path / "linear.skops", d / "data.csv")
    _one_line_error(code, out, err)
    assert "unsupported estimator type" in err and "LinearRegression" in err
    import zipfile

    with zipfile.ZipFile(tmp_path / "other.skops", "w") as z:
        z.writestr("readme.txt", "hello")
    code, out, err = _main("explain", tmp_path / "other.skops", d / "data.csv")
    _one_line_error(code, out, err)
    assert "cannot read" in err and "skops" in err
    # trusted types holding a tree whose child points outside it (scikit-learn would
    # follow it unchecked when predicting): refused before anything predicts
    import copy

    bad = copy.deepcopy(rf)
    state = bad.estimators_[0].tree_.__getstate__()
    nodes = state["nodes"].copy()
    nodes["left_child"][0] = 10**6
    state["nodes"] = nodes
    bad.estimators_[0].tree_.__setstate__(state)
    sio.dump(bad, tmp_path / "bad.skops")
    res = _run("explain", str(tmp_path / "bad.skops"), str(d / "data.csv"))
    assert res.returncode == 2 and res.stdout == "" and res.stderr.count("\n") == 1, res.stderr
    assert res.stderr.startswith("defrag explain: error: ") and "bad.skops: " in res.stderr
    # HistGradientBoosting with categorical preprocessing needs the listed partial
    Xc = X.assign(c=pd.Categorical(np.arange(len(X)) % 3))
    hgb = HistGradientBoostingClassifier(max_iter=3, categorical_features="from_dtype").fit(Xc, y)
    sio.dump(hgb, tmp_path / "hgb.skops")
    Xc.to_csv(tmp_path / "datac.csv", index=False)
    code, out, err = _main("explain", tmp_path / "hgb.skops", tmp_path / "datac.csv", "--n-restarts", "1",
                           "--quiet")
    assert code == 0 and err == "", err


# -------------------------------------------------------------------- user errors
def _user_error_cases(d, tmp_path, rf):
    """(argv, words the one-line error holds) for each kind of user error."""
    import joblib
    from sklearn.linear_model import LinearRegression

    X = pd.read_csv(d / "data.csv").drop(columns=["label"])
    joblib.dump(LinearRegression().fit(X, X["lstat"]), tmp_path / "linear.joblib")
    (tmp_path / "empty.json").write_bytes(b"")
    (tmp_path / "junk.bin").write_bytes(bytes(range(7, 256)) * 4)
    (tmp_path / "junk.ubj").write_bytes(b"{\xff\xfe\x00learner" + bytes(range(256)))
    (tmp_path / "text.ubj").write_bytes(b"crim,lstat\n1,2\n")
    (tmp_path / "notlgb.txt").write_bytes(b"hello\n")
    (tmp_path / "other.json").write_text('{"a": 1}')
    (tmp_path / "list.json").write_text("[1, 2]")
    (tmp_path / "deep.json").write_text('{"rules": ' + "[" * 5000 + "]" * 5000 + "}")
    (tmp_path / "bad_rules.json").write_text('{"schema": "defrag.rules", "rules": 7}')
    (tmp_path / "bad_rules2.json").write_text('{"schema": "defrag.rules", "rules": [{"conditions": 1}]}')
    (tmp_path / "latin1.json").write_bytes(b'{"rules": "\xe9"}')
    os.mkdir(tmp_path / "folder.json")
    from defrag import DefragModel

    rules = DefragModel(rf, n_components=3, n_restarts=1, random_state=0).fit(X).rules_
    (tmp_path / "rules.json").write_text(rules.to_json())
    data_csv = d / "data.csv"
    explain, predict = "explain", "predict"
    return [
        # the model file
        ([explain, tmp_path / "nope.json", data_csv], "no such model file"),
        ([explain, tmp_path / "folder.json", data_csv], "is a directory"),
        ([explain, tmp_path / "empty.json", data_csv], "is empty"),
        ([explain, tmp_path / "junk.bin", data_csv], "not a model file defrag reads"),
        ([explain, tmp_path / "junk.ubj", data_csv], "not UBJSON"),
        ([explain, tmp_path / "text.ubj", data_csv], "not UBJSON"),
        ([explain, tmp_path / "notlgb.txt", data_csv], "not a LightGBM model text"),
        ([explain, data_csv, data_csv], "not a model file defrag reads"),
        ([explain, tmp_path / "other.json", data_csv], "not an XGBoost model"),
        ([explain, tmp_path / "rules.json", data_csv], "is a defrag rules file, not a model"),
        ([explain, tmp_path / "linear.joblib", data_csv, "--allow-pickle"], "unsupported estimator type"),
        ([explain, tmp_path / "junk.bin", data_csv, "--allow-pickle"], "cannot load"),
        # the data file
        ([explain, d / "xgb.json", tmp_path / "nope.csv"], "no such data file"),
        ([explain, d / "xgb.json", tmp_path / "folder.json"], "is a directory"),
        ([explain, d / "xgb.json", tmp_path / "empty.json"], "is empty"),
        ([explain, d / "xgb.json", tmp_path / "junk.bin"], "cannot read"),
        ([explain, d / "xgb.json", tmp_path / "junk.bin", "--allow-pickle"], "cannot read"),
        ([explain, d / "xgb.json", data_csv, "--target", "nope"], "no column 'nope'"),
        ([explain, d / "xgb.json", data_csv, "--out", tmp_path / "no" / "dir" / "r.txt",
          "--n-restarts", "1", "--quiet"], "cannot write"),
        # the rules file
        ([predict, tmp_path / "nope.json", data_csv], "no such rules file"),
        ([predict, tmp_path / "folder.json", data_csv], "is a directory"),
        ([predict, tmp_path / "empty.json", data_csv], "is empty"),
        ([predict, d / "xgb.json", data_csv], "is an XGBoost model, not a defrag rules file"),
        ([predict, d / "lgb.txt", data_csv], "is a LightGBM model, not a defrag rules file"),
        ([predict, tmp_path / "junk.bin", data_csv], "not a defrag rules file"),
        ([predict, tmp_path / "junk.ubj", data_csv], "not a defrag rules file"),
        ([predict, data_csv, data_csv], "not JSON text"),
        ([predict, tmp_path / "list.json", data_csv], "not JSON text"),
        ([predict, tmp_path / "latin1.json", data_csv], "not UTF-8"),
        ([predict, tmp_path / "other.json", data_csv], "not a valid defrag rules file"),
        ([predict, tmp_path / "deep.json", data_csv], "rules file"),
        ([predict, tmp_path / "bad_rules.json", data_csv], "not a valid defrag rules file"),
        ([predict, tmp_path / "bad_rules2.json", data_csv], "not a valid defrag rules file"),
        ([predict, tmp_path / "rules.json", tmp_path / "junk.bin"], "cannot read"),
        ([predict, tmp_path / "rules.json", data_csv, "--out", tmp_path / "no" / "dir" / "s.csv"],
         "cannot write"),
    ] + ([  # a device is never read (it would be read without end)
        ([explain, "/dev/zero", data_csv], "not a regular file"),
        ([explain, d / "xgb.json", "/dev/zero"], "not a regular file"),
        ([predict, "/dev/zero", data_csv], "not a regular file"),
    ] if os.path.exists("/dev/zero") else [])


def test_every_user_error_is_one_line_and_exit_2(data, tmp_path):
    d, X, y, rf = data
    for argv, words in _user_error_cases(d, tmp_path, rf):
        code, out, err = _main(*argv)
        _one_line_error(code, out, err, argv[0])
        assert words in err, (argv, err)


def test_the_issues_crashes_give_one_line_each(data, tmp_path):
    """The reproductions of the issue: an unsupported model, a model given for rules, a
    .ubj that is not UBJSON (each a traceback before), and a LightGBM file cut short (an
    abort, exit 134, before), this one through `python -m defrag` itself."""
    import joblib
    from sklearn.linear_model import LinearRegression

    d, X, y, rf = data
    joblib.dump(LinearRegression().fit(X, y), tmp_path / "linear.joblib")
    joblib.dump(rf, tmp_path / "forest.joblib")
    (tmp_path / "model.ubj").write_bytes(b"{\xff\xfe\x00learner" + bytes(range(256)) * 3)
    text = (d / "lgb.txt").read_bytes()
    (tmp_path / "cut.txt").write_bytes(text[:len(text) // 2])
    code, out, err = _main("explain", tmp_path / "linear.joblib", d / "data.csv", "--allow-pickle")
    _one_line_error(code, out, err)
    assert "unsupported estimator type sklearn.linear_model._base.LinearRegression" in err
    code, out, err = _main("predict", tmp_path / "forest.joblib", d / "data.csv")
    _one_line_error(code, out, err, "predict")
    assert "is a pickle or joblib file, not a defrag rules file" in err
    code, out, err = _main("explain", tmp_path / "model.ubj", d / "data.csv")
    _one_line_error(code, out, err)
    assert "is not UBJSON" in err or "not UBJSON" in err
    res = _run("explain", str(tmp_path / "cut.txt"), str(d / "data.csv"))
    assert res.returncode == 2 and res.stdout == ""
    assert res.stderr.count("\n") == 1 and res.stderr.startswith("defrag explain: error: cannot read ")
    assert "cut short" in res.stderr and "[LightGBM]" not in res.stderr


def test_lightgbm_files_cut_anywhere_never_abort(data, tmp_path):
    """A LightGBM model text cut at every line end, and at bytes in between, in the
    header, in a tree, after the trees, in the parameters and in the last line: an
    error naming the cut, or (cut after its last line) the whole model; the process
    always lives. One subprocess runs them all (LightGBM's own loader aborts)."""
    d, *_ = data
    text = (d / "lgb.txt").read_bytes()
    ends = [i + 1 for i, b in enumerate(text) if b == 10]
    cuts = sorted(set(ends[1:]) | set(range(6, len(text), 97)) | {e - 2 for e in ends[1:]})
    script = textwrap.dedent(f"""
        import json
        from defrag import cli
        text = open({str(d / 'lgb.txt')!r}, "rb").read()
        path = {str(tmp_path / 'cut.txt')!r}
        results = []
        for cut in {cuts!r}:
            open(path, "wb").write(text[:cut])
            try:
                model = cli.models.load_model(path)
                cli.models.model_source(model, path)
                results.append([cut, 0, ""])
            except cli.CommandError as exc:
                results.append([cut, 2, str(exc)])
        print(json.dumps(results))
    """)
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    res = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                         env=env, cwd=ROOT)
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stderr == ""  # nothing from LightGBM's loader
    results = json.loads(res.stdout)
    assert len(results) == len(cuts)
    complete = text.rindex(b"end of parameters\n") + len(b"end of parameters\n")
    for cut, code, message in results:
        if code == 0:  # only cuts after the parameters leave a whole model
            assert cut >= complete, (cut, len(text))
        else:
            assert "cut short" in message and "\n" not in message, (cut, message)
    assert sum(code == 2 for _, code, _ in results) >= len(cuts) - 3
