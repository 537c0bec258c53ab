"""The command line under a hostile or careless caller (issue 40, a fault hunt):

* DATA read once: a named pipe or a process substitution (``<(cat d.csv)``) with a model
  or rules with text categories hung (a second open of the FIFO) or read nothing ("No
  columns to parse");
* a CatBoost category "NA" in a CSV was read as missing, which CatBoost refuses;
* Ctrl-C, a full disk and a closed pipe printed a stack trace;
* cells such as ``=HYPERLINK(...)`` went unescaped into the scored CSV.
"""
import csv
import gzip
import io
import os
import signal
import subprocess
import sys
import threading

import numpy as np
import pytest

from defrag import DefragModel, RuleSet, cli
from defrag.rules import from_json

pd = pytest.importorskip("pandas")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes")


def _main(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = cli.main([str(a) for a in argv], out, err)
    return code, out.getvalue(), err.getvalue()


def _env():
    return dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A LightGBM model with text categories ("07", "NA"), its rules, their training CSV."""
    lgb = pytest.importorskip("lightgbm")
    d = tmp_path_factory.mktemp("faults_cli")
    rng = np.random.default_rng(0)
    cats = ["07", "10", "NA"]
    X = pd.DataFrame({"region": pd.Categorical(rng.choice(cats, 3000), categories=cats),
                      "w": rng.normal(size=3000)})
    y = (X["region"].isin(["07", "NA"]) | (X["w"] > 1)).astype(int)
    est = lgb.LGBMClassifier(n_estimators=10, num_leaves=4, verbose=-1, random_state=0).fit(X, y)
    est.booster_.save_model(str(d / "lgb.txt"))
    rules = DefragModel(est, n_restarts=2, random_state=0, form="list").fit(X).rules_
    assert any(c.is_set for r in rules.rules for c in r.conditions)
    (d / "rules.json").write_text(rules.to_json())
    X.to_csv(d / "train.csv", index=False)
    return d, X, rules


def _in_thread(argv, fifo, timeout=60):
    """cli.main(argv) in a thread; a run still waiting after timeout (a second open of the
    FIFO, which waits for a writer) is released by a writer that closes at once, then
    fails the test."""
    result = {}
    thread = threading.Thread(target=lambda: result.update(zip(("code", "out", "err"), _main(*argv))),
                              daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        with open(fifo, "wb"):
            pass
        thread.join(timeout)
        pytest.fail(f"defrag {argv[0]} opened the data pipe a second time and waited for a writer")
    return result["code"], result["out"], result["err"]


def _feed(path, data):
    def write():
        with open(path, "wb") as f:
            f.write(data)

    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    return thread


@needs_fifo
def test_predict_and_explain_read_a_named_pipe_once(files, tmp_path):
    d, X, rules = files
    fifo = tmp_path / "d.csv"
    os.mkfifo(fifo)
    data = (d / "train.csv").read_bytes()
    _feed(fifo, data)
    code, out, err = _in_thread(["predict", d / "rules.json", fifo], fifo)
    assert (code, out, err) == _main("predict", d / "rules.json", d / "train.csv")
    assert code == 0 and out.splitlines()[1].split(",")[0] in ("07", "10", "NA")  # the cells as written
    _feed(fifo, data)
    code, out, err = _in_thread(["explain", d / "lgb.txt", fifo, "--format", "json", "--n-restarts", "1",
                                 "--quiet"], fifo)
    assert code == 0, err
    assert from_json(out).predict(X).shape == (len(X),)


@pytest.mark.skipif(not os.path.isdir("/dev/fd"), reason="/dev/fd (process substitution)")
def test_process_substitution_is_read_once(files):
    """``defrag predict rules.json <(cat d.csv)``: the shell passes /dev/fd/N, a pipe that a
    second open reads empty ("No columns to parse")."""
    d, X, rules = files
    read, write = os.pipe()
    _feed(write, (d / "train.csv").read_bytes())  # (open() of an fd number: the pipe's end)
    try:
        code, out, err = _main("predict", d / "rules.json", f"/dev/fd/{read}")
    finally:
        os.close(read)
    assert (code, err) == (0, "")
    scored = pd.read_csv(io.StringIO(out), keep_default_na=False, dtype={"region": str})
    np.testing.assert_array_equal(scored["prediction"], rules.predict(X.astype({"region": object})))


@pytest.mark.skipif(not os.path.isdir("/dev/fd"), reason="/dev/fd (process substitution)")
def test_a_compressed_csv_is_read_by_its_first_bytes(files, tmp_path):
    """pandas guesses gzip from a file's name; ``<(cat d.csv.gz)`` has none, so the bytes tell."""
    d, X, rules = files
    packed = gzip.compress((d / "train.csv").read_bytes())
    (tmp_path / "d.csv.gz").write_bytes(packed)
    plain = _main("predict", d / "rules.json", d / "train.csv")
    assert _main("predict", d / "rules.json", tmp_path / "d.csv.gz") == plain
    read, write = os.pipe()
    _feed(write, packed)
    try:
        assert _main("predict", d / "rules.json", f"/dev/fd/{read}") == plain
    finally:
        os.close(read)


# ------------------------------------------------------------------- CatBoost "NA"
def test_a_catboost_category_na_in_a_csv_is_the_label_na(tmp_path):
    catboost = pytest.importorskip("catboost")
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"region": rng.choice(["EU", "US", "NA", ""], 400), "w": rng.normal(size=400)})
    y = ((X["region"] == "NA") | (X["w"] > 1)).astype(int)
    model = catboost.CatBoostClassifier(iterations=20, depth=2, verbose=0, random_seed=0, one_hot_max_size=10,
                                        cat_features=["region"], allow_writing_files=False).fit(X, y)
    model.save_model(str(tmp_path / "region.cbm"))
    X.to_csv(tmp_path / "region.csv", index=False)
    code, out, err = _main("explain", tmp_path / "region.cbm", tmp_path / "region.csv", "--format", "json",
                           "--n-restarts", "2", "--quiet")
    assert code == 0, err  # was: "CatBoost cannot read X: Invalid type for cat_feature ... NaN"
    rules = from_json(out)
    # the rules fitted CatBoost's predictions on the labels as written ("NA" and "" included)
    assert np.mean(rules.predict(X) == model.predict(X)) > 0.95
    (tmp_path / "rules.json").write_text(out)
    code, scored, err = _main("predict", tmp_path / "rules.json", tmp_path / "region.csv")
    assert code == 0, err
    scored = pd.read_csv(io.StringIO(scored), keep_default_na=False)
    assert scored["region"].tolist() == X["region"].tolist()
    np.testing.assert_array_equal(scored["prediction"], rules.predict(X))
    # a Parquet null in a CatBoost categorical column: one clear line naming the column
    pytest.importorskip("pyarrow")
    X.loc[3, "region"] = None
    X.to_parquet(tmp_path / "region.parquet")
    code, out, err = _main("explain", tmp_path / "region.cbm", tmp_path / "region.parquet", "--quiet")
    assert code == 2 and out == "" and len(err.splitlines()) == 1
    assert "column 'region' is a categorical feature of the CatBoost model" in err
    assert "data row 4" in err and "no missing" in err


# ----------------------------------------------- Ctrl-C, full disks, closed pipes
def test_interrupt_and_output_failures_in_process(files, monkeypatch):
    d, _, _ = files

    def interrupted(args, out, err):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli.config, "run", interrupted)  # (the parser binds the command when main runs)
    assert _main("config") == (130, "", "defrag config: interrupted\n")

    class Failing(io.StringIO):
        def __init__(self, exc):
            super().__init__()
            self.exc = exc

        def write(self, text):
            raise self.exc

    for exc, said in ((BrokenPipeError(32, "Broken pipe"), "Broken pipe"),
                      (OSError(28, "No space left on device"), "No space left on device")):
        err = io.StringIO()
        code = cli.main(["predict", str(d / "rules.json"), str(d / "train.csv")], Failing(exc), err)
        assert (code, err.getvalue()) == (1, f"defrag predict: error: cannot write the output: {said}\n")


def _run(args, **kw):
    return subprocess.Popen([sys.executable, "-m", "defrag", *map(str, args)], env=_env(),
                            stderr=subprocess.PIPE, **kw)


@needs_fifo
def test_ctrl_c_is_one_line_and_exit_130(files, tmp_path):
    """SIGINT while predict waits for its data (deterministic: the test holds the pipe)."""
    d, _, _ = files
    fifo = tmp_path / "d.csv"
    os.mkfifo(fifo)
    proc = _run(["predict", d / "rules.json", fifo], stdout=subprocess.DEVNULL)
    with open(fifo, "wb") as f:  # returns once the CLI has opened the pipe: it now waits in read()
        f.write(b"region,w\n")
        f.flush()
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    assert (proc.returncode, err.decode()) == (130, "defrag predict: interrupted\n")


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="/dev/full")
def test_a_full_disk_is_one_line_and_exit_1(files):
    d, _, _ = files
    with open("/dev/full", "wb") as full:
        proc = _run(["predict", d / "rules.json", d / "train.csv"], stdout=full)
        _, err = proc.communicate(timeout=120)
    assert (proc.returncode, err.decode()) == (
        1, "defrag predict: error: cannot write the output: No space left on device\n")


def test_a_closed_pipe_is_one_line_and_exit_1(files):
    """``defrag predict ... | head -1``: the output (over 64 KiB, a pipe's buffer) meets a
    closed pipe."""
    d, _, _ = files
    proc = _run(["predict", d / "rules.json", d / "train.csv"], stdout=subprocess.PIPE)
    proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 1
    assert err == "defrag predict: error: cannot write the output: Broken pipe\n"


# ----------------------------------------------------------------- formula cells
FORMULAS = ['=HYPERLINK("http://x.example","click")', "+cmd|' /C calc'!A0", "-2+3", "@SUM(A1)",
            "\t=1+1", "\r=1+1"]
SAFE = ["-1.5", "+3", "plain", "1e5", "a=b", ""]


def test_formula_cells_are_escaped_unless_kept(files, tmp_path):
    d, _, rules = files
    n = len(FORMULAS) + len(SAFE)
    data = pd.DataFrame({"region": ["10"] * n, "w": [0.0] * n, "note": FORMULAS + SAFE,
                         "=cmd": [1] * n})
    data.to_csv(tmp_path / "evil.csv", index=False, quoting=csv.QUOTE_NONNUMERIC)  # (the \r cell quoted)
    code, out, err = _main("predict", d / "rules.json", tmp_path / "evil.csv")
    assert code == 0, err
    assert out.startswith('"region","w","note"')  # all quoted: a cell holds a carriage return
    scored = pd.read_csv(io.StringIO(out), keep_default_na=False, dtype=str)
    assert scored["note"].tolist() == ["'" + f for f in FORMULAS] + SAFE
    assert list(scored.columns) == ["region", "w", "note", "'=cmd", "prediction"]
    code, kept, err = _main("predict", d / "rules.json", tmp_path / "evil.csv", "--csv-formulas", "keep")
    kept = pd.read_csv(io.StringIO(kept), keep_default_na=False, dtype=str)
    assert kept["note"].tolist() == FORMULAS + SAFE and "=cmd" in kept.columns
    # the same in a file, and a Parquet output keeps the values (no spreadsheet reads it as CSV)
    _main("predict", d / "rules.json", tmp_path / "evil.csv", "--out", tmp_path / "scored.csv")
    assert (tmp_path / "scored.csv").read_bytes().decode() == out
    pytest.importorskip("pyarrow")
    _main("predict", d / "rules.json", tmp_path / "evil.csv", "--out", tmp_path / "scored.parquet")
    assert pd.read_parquet(tmp_path / "scored.parquet")["note"].fillna("").tolist() == FORMULAS + SAFE


def test_a_class_label_that_is_a_formula_is_escaped(tmp_path):
    from sklearn.ensemble import RandomForestClassifier

    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=300)})
    y = np.where(X["a"] > 0, "=1+1", "fine")
    rf = RandomForestClassifier(n_estimators=5, max_depth=2, random_state=0).fit(X, y)
    rules = DefragModel(rf, n_restarts=1, random_state=0, form="list").fit(X).rules_
    (tmp_path / "rules.json").write_text(rules.to_json())
    X.to_csv(tmp_path / "d.csv", index=False)
    code, out, err = _main("predict", tmp_path / "rules.json", tmp_path / "d.csv")
    assert code == 0, err
    labels = set(pd.read_csv(io.StringIO(out))["prediction"])
    assert labels == {"'=1+1", "fine"}


# -------------------------------------------------- issue 45: names, files, start-up
FENCE_NAME = "x```\n<img src=x onerror=alert(1)>\n```"


def test_explain_prints_a_hostile_column_name_on_its_own_line(tmp_path):
    """``defrag explain --format markdown``: a column name with a code fence closed the
    fence, and raw HTML followed; in the text a name wrote lines of its own (item 5)."""
    skops = pytest.importorskip("skops.io")
    from sklearn.ensemble import RandomForestClassifier

    outs = {}
    for name in (FENCE_NAME, "income"):
        rng = np.random.default_rng(0)
        X = pd.DataFrame({name: rng.random(300), "age": rng.random(300)})
        y = (X[name] > 0.5).astype(int)
        skops.dump(RandomForestClassifier(n_estimators=5, max_depth=2, random_state=0).fit(X, y),
                   tmp_path / "rf.skops")
        X.to_csv(tmp_path / "d.csv", index=False)
        for fmt in ("markdown", "text"):
            code, out, err = _main("explain", tmp_path / "rf.skops", tmp_path / "d.csv", "--format", fmt,
                                   "--n-restarts", "1", "--quiet")
            assert code == 0, err
            outs[name, fmt] = out
    for fmt in ("markdown", "text"):
        assert len(outs[FENCE_NAME, fmt].splitlines()) == len(outs["income", fmt].splitlines())
    from defrag.utils.text import printed_name

    shown = printed_name(FENCE_NAME)
    for fmt in ("markdown", "text"):
        assert outs[FENCE_NAME, fmt].replace(shown, "income") == outs["income", fmt]
    lines = outs[FENCE_NAME, "markdown"].splitlines()
    assert set(lines[0]) == {"`"} and lines[-1] == lines[0]
    assert not any(line.lstrip().startswith("```") for line in lines[1:-1])


def test_predict_matches_the_names_of_rules_fitted_on_an_array(tmp_path):
    """Rules fitted on an array with feature_names: predict said they store no feature
    names, and a raw '<frozen runpy>' UserWarning followed (item 9)."""
    from sklearn.ensemble import RandomForestClassifier

    rng = np.random.default_rng(0)
    X = rng.random((300, 3))
    y = (X[:, 0] + X[:, 1] > 1).astype(int)
    rf = RandomForestClassifier(n_estimators=5, max_depth=3, random_state=0).fit(X, y)
    rules = DefragModel(rf, feature_names=["a", "b", "c"], n_restarts=1, random_state=0).fit(X).rules_
    assert rules.feature_names == ["a", "b", "c"] and rules.feature_names_in is None
    (tmp_path / "rules.json").write_text(rules.to_json())
    # the data name the features, in another order: matched by name, nothing to say
    pd.DataFrame(X[:, [2, 0, 1]], columns=["c", "a", "b"]).to_csv(tmp_path / "named.csv", index=False)
    res = subprocess.run([sys.executable, "-m", "defrag", "predict", tmp_path / "rules.json", tmp_path / "named.csv"],
                         capture_output=True, text=True, env=_env(), timeout=120)
    assert (res.returncode, res.stderr) == (0, "")
    np.testing.assert_array_equal(pd.read_csv(io.StringIO(res.stdout))["prediction"], rules.predict(X))
    # other names: by position, and the warning says why, in one line of defrag's
    pd.DataFrame(X, columns=["x", "y", "z"]).to_csv(tmp_path / "other.csv", index=False)
    res = subprocess.run([sys.executable, "-m", "defrag", "predict", tmp_path / "rules.json", tmp_path / "other.csv"],
                         capture_output=True, text=True, env=_env(), timeout=120)
    assert res.returncode == 0 and res.stderr == (
        "defrag predict: warning: the rules name their features (a, b, c) but were fitted on an array, not on "
        "columns of these names; the data's columns are taken by position (x, y, z)\n")
    np.testing.assert_array_equal(pd.read_csv(io.StringIO(res.stdout))["prediction"], rules.predict(X))


def test_a_library_warning_is_one_line_of_the_command(files, monkeypatch):
    d, _, _ = files

    def warns(args, out, err):
        import warnings

        warnings.warn("a warning\nover two lines", UserWarning)
        return 0

    monkeypatch.setattr(cli.config, "run", warns)
    assert _main("config") == (0, "", "defrag config: warning: a warning over two lines\n")


# a module that Python imports before defrag (sitecustomize) and that makes NumPy's import
# wait until the test sends SIGINT: a Ctrl-C while defrag loads, at a known moment
_SLOW_NUMPY = '''
import os, sys, time

class _Slow:
    def find_spec(self, name, path=None, target=None):
        if name == "numpy":
            open(os.environ["DEFRAG_TEST_LOADING"], "w").close()
            time.sleep(60)
        return None

sys.meta_path.insert(0, _Slow())
'''


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to a child")
@pytest.mark.parametrize("how", ["module", "script"])
def test_ctrl_c_while_defrag_loads_is_one_line_and_exit_130(tmp_path, how):
    """A Ctrl-C during 'import defrag' printed a 28-line traceback (item 9): python -m defrag,
    and a console script as pip writes it."""
    (tmp_path / "sitecustomize.py").write_text(_SLOW_NUMPY)
    marker = tmp_path / "loading"
    env = dict(_env(), DEFRAG_TEST_LOADING=str(marker))
    env["PYTHONPATH"] = str(tmp_path) + os.pathsep + env["PYTHONPATH"]
    if how == "module":
        argv = [sys.executable, "-m", "defrag", "config"]
    else:
        script = tmp_path / "defrag"
        script.write_text("import re\nimport sys\nfrom defrag.cli import main\nif __name__ == '__main__':\n"
                          "    sys.argv[0] = re.sub(r'(-script\\.pyw|\\.exe)?$', '', sys.argv[0])\n"
                          "    sys.exit(main())\n")
        argv = [sys.executable, str(script), "config"]
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    for _ in range(600):
        if marker.exists() or proc.poll() is not None:
            break
        import time

        time.sleep(0.1)
    assert marker.exists(), proc.communicate(timeout=60)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert (proc.returncode, out, err.decode()) == (130, b"", "defrag: interrupted\n")


def test_a_rules_file_larger_than_the_limit_is_refused(files, monkeypatch):
    d, _, _ = files
    from defrag.cli import rules_files

    size = (d / "rules.json").stat().st_size
    monkeypatch.setattr(rules_files, "MAX_RULES_BYTES", size - 1)
    code, out, err = _main("predict", d / "rules.json", d / "train.csv")
    assert (code, out) == (2, "") and err == (f"defrag predict: error: {d / 'rules.json'} is larger than a rules "
                                              f"file may be ({size - 1} bytes)\n")
    monkeypatch.setattr(rules_files, "MAX_RULES_BYTES", size)
    assert _main("predict", d / "rules.json", d / "train.csv")[0] == 0
