"""The reproductions of "Nothing runs that the user did not ask to run, and nothing reads
differently from how it scores": each case of the report, run on this checkout, with what it
gives now (one line per case).

Usage (from the repository root, with defrag installed or built in place, and xgboost,
lightgbm and pandas installed):

    PYTHONPATH=. python benchmarks/trust.py

The section "issue 40 (library)" at the end runs that issue's reproductions on the library's
side (thread counts, sizes from parameters, forests changed in memory, rules documents,
unclear errors, the smaller items; dask[distributed] for the Dask line), those that crashed
in a child process.

The printed-text check applies the printed rules by hand (the parser of
tests/test_printed_truth.py) to rows with 20% missing values and counts the rows where the
text and ``predict`` disagree.
"""
import contextlib
import io
import json
import os
import pickle
import subprocess
import sys
import tempfile
import threading
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
sys.path.insert(0, HERE)


def outcome(fn):
    """'ok: value' or the exception's type and first line."""
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            value = fn()
        note = f" (warning: {str(caught[0].message).splitlines()[0][:90]})" if caught else ""
        return f"ok: {value}{note}"
    except Exception as exc:  # the point is to show which error a user gets
        return f"{type(exc).__name__}: {str(exc).splitlines()[0][:110]}"


def cli(*args):
    env = dict(os.environ, PYTHONPATH=os.path.join(HERE, "..") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    res = subprocess.run([sys.executable, "-m", "defrag", *map(str, args), "--quiet"], capture_output=True,
                         text=True, env=env, timeout=300)
    err = res.stderr.strip().splitlines()
    return f"exit {res.returncode}: {err[-1][:150] if err else res.stdout.strip()[:80]}"


class Evil:
    """A pickle that would create a marker file when loaded."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def code_execution(tmp):
    import joblib

    print("== a pickle runs only with --allow-pickle")
    pd = __import__("pandas")
    pd.DataFrame({"a": [0.1, 0.2], "b": [0.3, 0.4]}).to_csv(os.path.join(tmp, "d.csv"), index=False)
    for name in ("model.json", "model.txt", "model.joblib"):
        marker = os.path.join(tmp, f"ran-{name}")
        path = os.path.join(tmp, name)
        if name.endswith(".joblib"):
            joblib.dump(Evil(marker), path)
        else:
            with open(path, "wb") as f:
                pickle.dump(Evil(marker), f)
        res = cli("explain", path, os.path.join(tmp, "d.csv"))
        print(f"  {name:13s} {res}; code ran: {os.path.exists(marker)}")


def printed_text():
    import test_printed_truth as t

    print("== printed rules applied by hand vs predict, 20% missing values in new rows")
    from defrag import DefragModel

    for library in ("xgboost", "lightgbm", "forest"):
        for regression in (True, False):
            for nan_at_fit in (False, True):
                X, y = t.numeric_data(regression, nan_at_fit)
                model = DefragModel(t.source_model(library, regression, nan_at_fit, X, y), n_restarts=2,
                                    random_state=0).fit(X)
                names = model.rules_.feature_names
                X_test = t.knock_out(np.random.default_rng(7).random((2000, X.shape[1])), seed=2)
                frame = {n: X_test[:, d] for d, n in enumerate(names)}
                ok = t.agree(t.predict_by_hand(str(model), frame), model.predict(X_test), regression)
                print(f"  {library:8s} {'regression' if regression else 'classification':14s} "
                      f"NaN at fit: {str(nan_at_fit):5s} disagree on {np.count_nonzero(~ok)} of {ok.size} rows")


def lightgbm_cli_columns(tmp):
    import lightgbm as lgb
    import pandas as pd

    print("== CLI: LightGBM text model, CSV columns reordered and one renamed")
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.random((300, 3)), columns=["crim", "rm", "lstat"])
    y = X["lstat"] * 3 + X["rm"]
    lgb.LGBMRegressor(n_estimators=10, verbose=-1).fit(X, y).booster_.save_model(os.path.join(tmp, "m.txt"))
    X[["lstat", "rm", "crim"]].rename(columns={"lstat": "LSTAT"}).to_csv(os.path.join(tmp, "r.csv"), index=False)
    print("  ", cli("explain", os.path.join(tmp, "m.txt"), os.path.join(tmp, "r.csv")))


def reordered_columns():
    import pandas as pd
    from sklearn.datasets import make_classification
    from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

    from defrag import DefragModel, PrototypeExplainer, ProxyTree, ProxyTreeClassifier
    from defrag.baselines import InTrees, NodeHarvest

    print("== reordered DataFrame columns")
    X, y = make_classification(1000, 5, n_informative=3, random_state=0)
    X = pd.DataFrame(X, columns=[f"f{i}" for i in range(5)])
    Xr = X[["f4", "f3", "f2", "f1", "f0"]]
    rf = RandomForestClassifier(30, random_state=0).fit(X, y)
    for make in (lambda: DefragModel(rf, random_state=0), lambda: InTrees(rf), lambda: NodeHarvest(rf)):
        a = make().fit(X, y).score(X, y)
        b = make().fit(Xr, y).score(X, y)
        print(f"  {type(make()).__name__:12s} accuracy fitted on the right order {a:.3f}, on reordered columns {b:.3f}")
    reg = RandomForestRegressor(30, random_state=0).fit(X, y.astype(float))
    for est in (PrototypeExplainer(rf), ProxyTreeClassifier(rf), ProxyTree(reg)):
        est.fit(X, y)
        same = np.count_nonzero(est.predict(X) != est.predict(Xr))
        renamed = outcome(lambda e=est: e.predict(X.rename(columns={"f0": "g0"})))
        print(f"  {type(est).__name__:19s} rows changed by reordering: {same} of {len(X)}; renamed column: {renamed}")


def labels_and_dtypes():
    import pandas as pd
    from sklearn.ensemble import RandomForestClassifier

    from defrag import DefragModel

    print("== labels with NaN, datetime and timedelta columns")
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.random(200), "b": rng.random(200)})
    y = (X["a"] > 0.5).astype(int)
    rf = RandomForestClassifier(10, random_state=0).fit(X, y)
    y_nan = y.astype(object).where(rng.random(200) > 0.3, np.nan)
    print("  object y with NaN:", outcome(lambda: DefragModel(rf, n_restarts=2).fit(X, y_nan).classes_.size))
    for kind, col in (("datetime64", pd.to_datetime(rng.integers(0, 10**9, 200), unit="s")),
                      ("timedelta64", pd.to_timedelta(rng.integers(0, 10**6, 200), unit="s"))):
        Xd = X.assign(b=col)
        print(f"  {kind} column, y given:", outcome(lambda Xd=Xd: DefragModel(rf, n_restarts=2).fit(Xd, y).n_regions_))
        print(f"  {kind} column, y=None:", outcome(lambda Xd=Xd: DefragModel(rf, n_restarts=2).fit(Xd).n_regions_))


def names():
    from sklearn.ensemble import RandomForestClassifier

    from defrag import DefragModel

    print("== feature names")
    rng = np.random.default_rng(0)
    X = rng.random((200, 3))
    y = (X[:, 0] > 0.5).astype(int)
    rf = RandomForestClassifier(10, random_state=0).fit(X, y)
    for given in (["a", "a", "b"], ["", "b", "c"], ["a\nb", "c", "d"]):
        print(f"  {given!r:20s}", outcome(lambda g=given: DefragModel(rf, feature_names=g, n_restarts=2).fit(X, y).n_regions_))
    newline = DefragModel(rf, feature_names=["a\nb", "c", "d"], n_restarts=2, random_state=0).fit(X, y)
    print("  query_strings() with a name holding a newline:", outcome(lambda: newline.rules_.query_strings()))
    model = DefragModel(rf, feature_names=["if", "class", "x y"], n_restarts=2, random_state=0).fit(X, y)
    print("  to_python with keywords 'if', 'class':", outcome(lambda: len(model.rules_.to_python())))
    print("  to_sql(table='s.t'):", outcome(lambda: model.rules_.to_sql(table="s.t").splitlines()[-1][:60]))


def documents():
    from sklearn.ensemble import RandomForestClassifier

    from defrag import DefragModel, RuleTree

    print("== RuleTree.from_json on altered documents")
    rng = np.random.default_rng(0)
    X = rng.random((300, 4))
    y = (X[:, 0] + X[:, 1] > 1).astype(int)
    rules = DefragModel(RandomForestClassifier(10, random_state=0).fit(X, y), n_restarts=2,
                        random_state=0, form="list").fit(X, y).rules_  # (a RuleSet's document: the default is a tree)
    doc = json.loads(rules.to_json())

    def altered(path, value):
        d = json.loads(json.dumps(doc))
        node = d
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
        return json.dumps(d)

    first = ["rules", 0, "conditions", 0]
    cases = [("feature 2.7", first + ["feature"], 2.7), ('feature "3"', first + ["feature"], "3"),
             ("feature -1", first + ["feature"], -1), ("feature 99", first + ["feature"], 99)]
    if "lower" in doc["rules"][0]["conditions"][0]:
        cases.append(('lower "nan"', first + ["lower"], "nan"))
    cases += [("proba of length 1", ["rules", 0, "proba"], [1.0]), ("schema_version -5", ["schema_version"], -5)]
    for label, path, value in cases:
        try:
            text = altered(path, value)
        except (KeyError, IndexError, TypeError):
            print(f"  {label:20s} (field absent in this document)")
            continue
        print(f"  {label:20s}", outcome(lambda t=text: RuleTree.from_json(t).predict(X).shape))


# ============================================================================================
# issue 40 (library): faults a hostile or careless caller found; each reproduction, as it
# runs now. Those that crashed the process run in a child (its exit status is printed).
# ============================================================================================

def in_child(code, timeout=300):
    """The last line a child interpreter printed, or how it ended."""
    env = dict(os.environ, PYTHONPATH=os.path.join(HERE, "..") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    try:
        res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                             timeout=timeout)
    except subprocess.TimeoutExpired:
        return f"still running after {timeout} s"
    out = res.stdout.strip().splitlines()
    if res.returncode:
        return f"exit {res.returncode}" + (f" ({res.stderr.strip().splitlines()[-1][:100]})" if res.stderr.strip() else "")
    return out[-1] if out else "(nothing printed)"


_SMALL = """
import numpy as np, warnings
warnings.simplefilter("ignore")
from sklearn.ensemble import RandomForestClassifier
rng = np.random.default_rng(0)
X = rng.normal(size=(400, 3)); y = (X[:, 0] > 0).astype(int)
rf = RandomForestClassifier(10, max_depth=4, random_state=0).fit(X, y)
"""


def issue40_threads():
    print("== issue 40, 1: thread counts (100,000 rows)")
    for n in ("100000", "10 ** 6", "0", "-1", "2.5"):
        code = _SMALL + f"""
from defrag import DefragModel
rules = DefragModel(rf, n_restarts=2, random_state=0).fit(X).rules_
Xb = rng.normal(size=(100_000, 3))
try:
    same = [bool((getattr(rules, f)(Xb, n_threads={n}) == getattr(rules, f)(Xb)).all()) for f in ("predict", "covers", "apply")]
    print("ok: predict, covers, apply as on one thread:", same)
except Exception as exc:
    print(f"{{type(exc).__name__}}: {{exc}}")
"""
        print(f"  RuleSet.predict/covers/apply(n_threads={n}):", in_child(code))


def issue40_sizes():
    import tracemalloc

    from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

    from defrag import DefragModel, ProxyTree, bootstrap_instability, explain_local
    from defrag.baselines import DepthTwoTree

    print("== issue 40, 3: sizes from parameters (400 rows)")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 3))
    y = (X[:, 0] > 0).astype(int)
    rf = RandomForestClassifier(10, max_depth=4, random_state=0).fit(X, y)
    reg = RandomForestRegressor(10, max_depth=4, random_state=0).fit(X, X[:, 0])

    def peak(fn):
        tracemalloc.start()
        try:
            value = fn()
        finally:
            top = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
        return f"{value}, peak {top / 2**20:.0f} MiB"

    for n in (10 ** 9, 10 ** 12, 10 ** 19):
        print(f"  DefragModel(rf, n_regions=10**{len(str(n)) - 1}).fit(X):",
              outcome(lambda n=n: peak(lambda: f"{DefragModel(rf, n_regions=n, random_state=0).fit(X).n_regions_} regions")))
    constant = RandomForestRegressor(5, random_state=0).fit(X, np.zeros(400))
    print("  DefragModel(constant forest, n_components=10**12).fit(X):",
          outcome(lambda: peak(lambda: f"{DefragModel(constant, n_components=10 ** 12).fit(X).n_regions_} regions")))
    print("  explain_local(reg, x, n_samples=10**9):",
          outcome(lambda: explain_local(reg, X[0], X.std(axis=0), n_samples=10 ** 9)))
    print("  bootstrap_instability(n_boot=10**6):",
          outcome(lambda: bootstrap_instability(lambda: ProxyTree(max_leaves=3), X, X[:, 0], n_boot=10 ** 6)))
    print("  ProxyTree(reg, min_samples_leaf=10**19).fit(X):",
          outcome(lambda: f"{ProxyTree(reg, min_samples_leaf=10 ** 19).fit(X).n_leaves_} leaf"))
    print("  DepthTwoTree(rf, max_depth=10**19).fit(X, y):",
          outcome(lambda: f"{DepthTwoTree(rf, max_depth=10 ** 19).fit(X, y).n_regions_} rules"))


def issue40_tampered():
    print("== issue 40, 6: a forest whose tree_ was changed in memory")
    tamper = """
state = rf.estimators_[0].tree_.__getstate__()
nodes = state["nodes"].copy()
nodes[{field!r}][0] = {value}
state["nodes"] = nodes
rf.estimators_[0].tree_.__setstate__(state)
import defrag
try:
    {call}
    print("ok: fitted (nothing refused)")
except Exception as exc:
    print(f"{{type(exc).__name__}}: {{str(exc)[:110]}}")
"""
    for field, value in (("left_child", "10 ** 6"), ("feature", "1000")):
        for name, call in (("ProxyTreeClassifier(rf).fit(X)", "defrag.ProxyTreeClassifier(rf).fit(X)"),
                           ("PrototypeExplainer(rf).fit(X, y)", "defrag.PrototypeExplainer(rf).fit(X, y)"),
                           ("DefragModel(rf).fit(X)", "defrag.DefragModel(rf, n_restarts=2).fit(X)")):
            code = _SMALL + tamper.format(field=field, value=value, call=call)
            print(f"  {field}={value}: {name}:", in_child(code))


def issue40_documents():
    from defrag import RuleTree

    print("== issue 40, 7: rules documents")
    huge = json.dumps({"rules": [{"conditions": [{"feature": 16777215, "name": "x16777215", "upper": 0.5}],
                                  "prediction": 1.0}], "default_prediction": 0.0})
    print(f"  condition on feature 16777215, no feature_names ({len(huge)} bytes):",
          outcome(lambda: f"{len(RuleTree.from_json(huge).to_python()) / 2**20:.0f} MB of Python"))
    income = json.dumps({"rules": [{"conditions": [{"feature": 1, "name": "income", "lower": 0.0}],
                                    "prediction": 1.0}], "default_prediction": 0.0})
    print("  condition 'income' on feature 1, no feature_names:", outcome(lambda: str(RuleTree.from_json(income)).splitlines()[0]))


def issue40_errors():
    import xgboost as xgb
    from sklearn.ensemble import RandomTreesEmbedding

    from defrag import DefragModel

    print("== issue 40, 8: errors that say what is wrong")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    Y = np.c_[X[:, 0] > 0, X[:, 1] > 0].astype(int)
    vector = xgb.XGBClassifier(n_estimators=3, tree_method="hist", multi_strategy="multi_output_tree").fit(X, Y)
    print("  XGBoost multi_output_tree, DefragModel.fit(X):", outcome(lambda: DefragModel(vector).fit(X)))
    print("  RandomTreesEmbedding, DefragModel.fit(X):",
          outcome(lambda: DefragModel(RandomTreesEmbedding(5, random_state=0).fit(X)).fit(X)))


def issue40_smaller():
    import lightgbm as lgb
    from sklearn.ensemble import RandomForestClassifier

    from defrag import DefragModel

    print("== issue 40, 9: smaller")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(2000, 2))
    X[rng.random(2000) < 0.3, 0] = 0.0
    y = (X[:, 0] > 0).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = lgb.LGBMClassifier(n_estimators=20, zero_as_missing=True, verbose=-1).fit(X, y)
        rules = DefragModel(model, random_state=0).fit(X).rules_
    lines = str(rules).splitlines()
    rule = next((line for line in lines if line.startswith("[1]")), "")
    print(f"  LightGBM zero-as-missing: {rule[:30]!r}, predict at x0=1e-36: {rules.predict([[1e-36, 0.0]])[0]};"
          f" note: {lines[-1]!r}")
    rf = RandomForestClassifier(5, max_depth=3, random_state=0).fit(X, y)
    for params in ({"keep_duplicate_splits": "yes"}, {"feature_names": "ab"}, {"eps_schedule": 0.3}):
        print(f"  DefragModel(rf, {', '.join(f'{k}={v!r}' for k, v in params.items())}).fit(X):",
              outcome(lambda p=params: DefragModel(rf, n_restarts=2, **p).fit(X).n_regions_))
    try:
        import dask_outputs

        rows = dask_outputs.measure(quick=True)
        print("  Dask against in memory, regression outputs (benchmarks/dask_outputs.py --quick): largest "
              f"{max(r[2] for r in rows):.2g} relative, {max(r[3] for r in rows):.2g} of the mean |y|; "
              f"restart errors {max(r[4] for r in rows):.2g} relative")
    except ImportError as exc:
        print(f"  Dask: not measured ({exc})")


def issue45_forms():
    """Issue 45, items 1-4 and max_regions of 9: models that split missing values alone, a
    large offset, the printed numbers, what y means; one line each, "held" where the fault
    no longer reproduces."""
    from sklearn.datasets import make_friedman1
    from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestRegressor

    from defrag import DefragModel
    from test_printed_truth import agree, predict_by_hand

    print("== issue 45, 1-4, 9: missing values, numbers as printed, one meaning of y")

    def verdict(ok, text):
        return ("held: " if ok else "broken: ") + text

    def synthetic1(seed, n=1000):
        rng = np.random.default_rng(seed)
        X = rng.random((n, 2))
        y = np.logical_xor(X[:, 0] > 0.5, X[:, 1] > 0.5).astype(int)
        y = np.where(rng.random(n) < 0.1, 1 - y, y)
        X[rng.random(X.shape) < 0.05] = np.nan
        return X, y

    libraries = {"HistGradientBoosting": lambda: HistGradientBoostingClassifier()}
    try:
        import xgboost
        libraries["XGBoost"] = lambda: xgboost.XGBClassifier(n_estimators=50, max_depth=3, n_jobs=1)
    except ImportError:
        pass
    try:
        import lightgbm
        libraries["LightGBM"] = lambda: lightgbm.LGBMClassifier(n_estimators=50, verbose=-1, n_jobs=1)
    except ImportError:
        pass
    try:
        import catboost
        libraries["CatBoost"] = lambda: catboost.CatBoostClassifier(iterations=50, depth=4, verbose=0,
                                                                    thread_count=1, allow_writing_files=False)
    except ImportError:
        pass
    for library, make in libraries.items():
        failed = disagree = 0
        for seed in range(10):
            X, y = synthetic1(seed)
            model = make().fit(X, y)
            for budget in (None, 7):
                try:
                    explained = DefragModel(model, max_conditions=budget, random_state=seed).fit(X, y)
                except ValueError:
                    failed += 1
                    continue
                frame = {n: X[:, d] for d, n in enumerate(explained.rules_.feature_names)}
                disagree += int(np.count_nonzero(~agree(predict_by_hand(str(explained), frame),
                                                        explained.predict(X), False)))
        print("  1.", verdict(failed == 0 and disagree == 0,
                              f"{library} on Synthetic1 with 5% missing, 10 seeds x (default, max_conditions=7): "
                              f"{failed} of 20 fits failed; text and predict disagree on {disagree} rows"))

    X, y = make_friedman1(1000, random_state=0)
    forest = RandomForestRegressor(50, random_state=0).fit(X, y + 1e8)
    reference = forest.predict(X)
    for params in ({}, {"max_conditions": 7}, {"form": "list"}):
        model = DefragModel(forest, random_state=0, **params).fit(X)
        predicted = model.predict(X)
        rmse = float(np.sqrt(np.mean((predicted - reference) ** 2)))
        frame = {n: X[:, d] for d, n in enumerate(model.rules_.feature_names)}
        by_hand = np.array([float(a) for a in predict_by_hand(str(model), frame)])
        if getattr(model.rules_, "form", "list") == "sum":  # the decimals added by hand: the same units
            unit = 10.0 ** model.rules_.decimals
            exact = bool(np.all(np.rint(by_hand * unit) == np.rint(predicted * unit)))
        else:
            exact = bool(np.all(by_hand == predicted))
        form = getattr(model.rules_, "form", "list")
        print("  2-3.", verdict(np.unique(predicted).size > 2 and exact,
                                f"offset 1e8, {params or 'default'}: a {form} of {np.unique(predicted).size} "
                                f"distinct values, RMSE to the model {rmse:.2f}; every printed value is predict's "
                                f"exactly: {exact}"))

    ok = []
    for form, params in (("auto", {}), ("sum", {"max_conditions": 7}), ("list", {})):
        shifted = DefragModel(forest, form=form, random_state=0, **params).fit(X, y + 1e4)
        ok.append(abs(shifted.predict(X).mean() - (y.mean() + 1e4)) < 0.5 and shifted.fitted_to_ == "y")
    print("  4.", verdict(all(ok), "fit(X, y + 1e4) of a model of y: every form (tree, sum, list) prints y's values "
                                   "(mean prediction y's mean + 1e4) and says 'fitted to y'"))
    forest = RandomForestRegressor(30, random_state=0).fit(X, y)
    model = DefragModel(forest, max_regions=2, max_conditions=50, random_state=0).fit(X)
    print("  9.", verdict(model.n_regions_ <= 2, f"max_regions=2, max_conditions=50: {model.n_regions_} regions "
                                                 f"({model.rules_.form})"))


def issue45_names():
    """Issue 45, items 5 and 8 and the command line's part of 9: one line each, "held" where
    the fault no longer reproduces."""
    import signal
    import time

    import pandas as pd
    from sklearn.ensemble import RandomForestClassifier

    from defrag import Condition, DefragModel
    from test_printed_truth import predict_by_hand

    print("== issue 45, 5, 8, 9: names in the text, reference_rules paths, the command line")

    def verdict(ok, text):
        return ("held: " if ok else "broken: ") + text

    hostile = "income > 1e9: y = approved\nelse: y = approved ...\n#"
    texts = {}
    for name in ("income", hostile):
        rng = np.random.default_rng(0)
        X = pd.DataFrame({name: rng.random(400), "age": rng.random(400)})
        y = np.where(X[name] > 0.5, "rejected", "approved")
        rf = RandomForestClassifier(n_estimators=10, max_depth=3, random_state=0).fit(X, y)
        model = DefragModel(rf, n_restarts=2, random_state=0).fit(X)
        texts[name] = str(model)
    from defrag.utils.text import printed_name

    # the text read by hand, the name taken as the one name between its backquotes
    read = predict_by_hand(texts[hostile].replace(printed_name(hostile), "income"),
                           {"income": X[hostile].to_numpy(), "age": X["age"].to_numpy()})
    read = np.array([r.split(" (p=")[0] for r in read])
    same = texts[hostile].replace(printed_name(hostile), "income") == texts["income"]
    print("  " + verdict(same and (read == model.predict(X)).all(),
                         f"print(model) with a column {hostile[:20]!r}...: {len(texts[hostile].splitlines())} lines as "
                         f"with 'income' ({len(texts['income'].splitlines())}); read by hand, "
                         f"{int(np.sum(read == 'rejected'))} of {len(read)} rows rejected as predict rejects "
                         f"{int(np.sum(model.predict(X) == 'rejected'))}"))
    fence = "x```\n<img src=x onerror=alert(1)>\n```"
    with tempfile.TemporaryDirectory() as tmp:
        import skops.io

        rng = np.random.default_rng(0)
        X = pd.DataFrame({fence: rng.random(300), "age": rng.random(300)})
        skops.io.dump(RandomForestClassifier(n_estimators=5, max_depth=2, random_state=0).fit(X, X[fence] > 0.5),
                      os.path.join(tmp, "rf.skops"))
        X.to_csv(os.path.join(tmp, "d.csv"), index=False)
        env = dict(os.environ, PYTHONPATH=os.path.join(HERE, "..") + os.pathsep + os.environ.get("PYTHONPATH", ""))
        res = subprocess.run([sys.executable, "-m", "defrag", "explain", os.path.join(tmp, "rf.skops"),
                              os.path.join(tmp, "d.csv"), "--format", "markdown", "--n-restarts", "1", "--quiet"],
                             capture_output=True, text=True, env=env, timeout=300)
        lines = res.stdout.splitlines()
        closes = [i for i, line in enumerate(lines) if line.lstrip().startswith("```")]
        print("  " + verdict(res.returncode == 0 and closes == [0, len(lines) - 1] and "<img" not in res.stdout.replace(
            printed_name(fence), ""), f"defrag explain --format markdown, a column with a code fence: fence lines "
                                      f"{closes} of {len(lines)}"))
        # 8: reference_rules paths, in a child of limited memory
        fifo = os.path.join(tmp, "pipe.json")
        os.mkfifo(fifo)
        for path, what in (("/dev/zero", "/dev/zero"), (fifo, "a named pipe without a writer")):
            code = ("import resource, numpy as np\n"
                    "resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))\n"
                    "from sklearn.ensemble import RandomForestRegressor\nfrom defrag import DefragModel\n"
                    "X = np.random.default_rng(0).random((200, 3))\n"
                    "rf = RandomForestRegressor(3, max_depth=3, random_state=0).fit(X, X[:, 0])\n"
                    f"try:\n    DefragModel(rf, reference_rules={path!r}).fit(X)\n"
                    "except ValueError as exc:\n    print('ValueError:', exc)\n")
            said = in_child(code, timeout=30)
            print("  " + verdict(said.startswith("ValueError") and "not a regular file" in said,
                                 f"reference_rules={what}: " + said[said.find("(") + 1:-1].replace(path, "it")))
        # 9: an impossible interval, predict's warnings, a Ctrl-C while defrag loads
        top = float(np.finfo(np.float64).max)
        shown = str(Condition(0, "x1", lower=top))
        print("  " + verdict("{}" not in shown, f"Condition(x1 > max float), which +inf satisfies, prints {shown!r}"))
        rng = np.random.default_rng(0)
        X = rng.random((300, 3))
        rf = RandomForestClassifier(n_estimators=5, max_depth=3, random_state=0).fit(X, X[:, 0] > 0.5)
        rules = DefragModel(rf, feature_names=["a", "b", "c"], n_restarts=1, random_state=0).fit(X).rules_
        with open(os.path.join(tmp, "rules.json"), "w") as f:
            f.write(rules.to_json())
        pd.DataFrame(X, columns=["a", "b", "c"]).to_csv(os.path.join(tmp, "abc.csv"), index=False)
        status, err = _cli_run(["predict", os.path.join(tmp, "rules.json"), os.path.join(tmp, "abc.csv")])
        print("  " + verdict(status == 0 and not err, f"defrag predict, rules fitted on an array named a, b, c: exit "
                                                     f"{status}, stderr {err[:2]}"))
        with open(os.path.join(tmp, "sitecustomize.py"), "w") as f:
            f.write("import os, sys, time\nclass Slow:\n    def find_spec(self, name, path=None, target=None):\n"
                    "        if name == 'numpy':\n            open(os.environ['LOADING'], 'w').close()\n"
                    "            time.sleep(60)\nsys.meta_path.insert(0, Slow())\n")
        marker = os.path.join(tmp, "loading")
        env = dict(env, LOADING=marker, PYTHONPATH=tmp + os.pathsep + env["PYTHONPATH"])
        proc = subprocess.Popen([sys.executable, "-m", "defrag", "config"], env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE)
        for _ in range(300):
            if os.path.exists(marker) or proc.poll() is not None:
                break
            time.sleep(0.1)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        err = err.decode().splitlines()
        print("  " + verdict(proc.returncode == 130 and len(err) == 1, f"Ctrl-C while python -m defrag loads: exit "
                                                                        f"{proc.returncode}, {len(err)} line(s) "
                                                                        f"{err[-1][:60] if err else ''!r}"))
def issue45_documents():
    """Issue 45, finding 6 and the documents' and diff's items of finding 9: crafted rule-tree
    and sum documents, each edited from a fitted explanation's to_json()."""
    import copy
    import time
    import tracemalloc

    from sklearn.datasets import make_friedman1
    from sklearn.ensemble import RandomForestRegressor

    from defrag import Condition, DefragModel
    from defrag.rules import Leaf, Node, RuleTree, from_json

    print("== issue 45, 6 and 9: crafted documents")
    X, y = make_friedman1(500, random_state=0)
    forest = RandomForestRegressor(n_estimators=20, random_state=0).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fitted_sum = DefragModel(forest, max_conditions=7, form="sum").fit(X, y).rules_
        fitted_tree = DefragModel(forest, form="tree").fit(X, y).rules_
    sum_doc, tree_doc = json.loads(fitted_sum.to_json()), json.loads(fitted_tree.to_json())

    def measured(fn, memory=True):
        """fn's value, seconds and (traced, which slows it) peak memory."""
        started = time.perf_counter()
        value = fn()
        seconds = time.perf_counter() - started
        if not memory:
            return f"{value}: {seconds:.1f} s"
        tracemalloc.start()
        try:
            fn()
        finally:
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
        return f"{value}: {seconds:.1f} s, {peak / 2**20:.0f} MB"

    def agree(doc):
        tree = from_json(json.dumps(doc))
        namespace = {}
        exec(tree.to_python(), namespace)
        rows = X[:20]
        same = sum(float(p) == namespace["predict"](list(x)) for p, x in zip(tree.predict(rows), rows))
        return f"loads; predict and to_python agree on {same} of {len(rows)} rows"

    for change in ({"decimals": 18}, {"decimals": 300}, {"decimals": 0, "base": 1e308}):
        print(f"  a sum with {change}:", outcome(lambda c=change: agree(dict(sum_doc, **c))))
    many = json.dumps(dict(sum_doc, nodes=[{"prediction": 0.001, "support": 1}] * 100_000,
                           terms=list(range(100_000))))
    print(f"  100,000 one-leaf terms ({len(many) / 2**20:.1f} MB), from_json:",
          outcome(lambda: measured(lambda: f"{len(from_json(many).terms)} terms", memory=False)))

    def parts(shift):
        rng = np.random.RandomState(0)
        return RuleTree([Node([Condition(p % 10, f"x{p % 10}", lower=round(float(rng.rand()), 3) + shift)],
                              Leaf(0.001), Leaf(-0.001)) for p in range(2000)], base=1.0,
                        feature_names=[f"x{d}" for d in range(10)], decimals=3)

    old, new = parts(0.0), parts(0.001)
    print("  diff of two 2,000-part sums:", outcome(lambda: measured(lambda: repr(old.diff(new)))))

    def balanced(depth, lo=0.0, hi=1.0):
        if depth == 0:
            return Leaf((lo + hi) / 2)
        mid = (lo + hi) / 2
        return Node([Condition(0, "x0", upper=mid)], balanced(depth - 1, lo, mid), balanced(depth - 1, mid, hi))

    big = RuleTree([balanced(12)], feature_names=[f"x{d}" for d in range(10)])
    rows = np.random.RandomState(0).rand(100_000, 10)
    print(f"  predict of a {len(big.nodes())}-box tree on {len(rows)} rows (rows x boxes: "
          f"{len(rows) * len(big.nodes()) / 2**20:.0f} MB):",
          outcome(lambda: measured(lambda: f"{len(big.predict(rows))} predictions")))
    leaf = next(i for i, item in enumerate(tree_doc["nodes"]) if "prediction" in item)
    infinite = copy.deepcopy(tree_doc)
    infinite["nodes"][leaf]["prediction"] = "inf"
    print("  a regression leaf \"inf\":", outcome(lambda: agree(infinite)))
    with tempfile.TemporaryDirectory() as tmp:
        for name, doc in (("old.json", tree_doc), ("new.json", infinite)):
            with open(os.path.join(tmp, name), "w") as f:
                json.dump(doc, f)
        import pandas as pd

        pd.DataFrame(X[:50], columns=[f"x{d}" for d in range(10)]).to_csv(os.path.join(tmp, "d.csv"), index=False)
        files = [os.path.join(tmp, name) for name in ("old.json", "new.json", "d.csv")]
        print("  defrag diff --json, a leaf \"inf\":", _said(*_cli_run(["diff", *files, "--json"])))
        print("  defrag diff --tol nan, DATA missing:",
              _said(*_cli_run(["diff", files[0], files[0], os.path.join(tmp, "none.csv"), "--tol", "nan"])))
    codes = copy.deepcopy(tree_doc)
    codes["nodes"][0]["conditions"][0].update(lower=None, upper=None, printed_lower=None, printed_upper=None,
                                              codes=[1, 2])
    print("  a category set on a numeric feature:", outcome(lambda: agree(codes)))
    labelled = copy.deepcopy(tree_doc)
    feature = labelled["nodes"][0]["conditions"][0]["feature"]
    labelled["encoding"]["categorical"][feature] = True
    labelled["encoding"]["categories"][feature] = {"dtype": "object", "values": ["a", "b", "c"]}
    print("  a bound on a labelled category:", outcome(lambda: agree(labelled)))
    two = RuleTree([Node([Condition(0, "x0", upper=0.5)], Leaf(1.0, [1.0, 0.0]), Leaf(2.0, [0.0, 1.0]))],
                   classes=np.array([1.0, 2.0]), feature_names=["x0"]).to_dict()
    two["classes"] = [1.0, "inf"]
    print("  a float class label \"inf\":", outcome(lambda: from_json(json.dumps(two)).classes))
    print("  a tree document with schema_version 1:", outcome(lambda: agree(dict(tree_doc, schema_version=1))))
    text = fitted_tree.to_json()
    print("  a repeated key (the first leaf's prediction given twice):",
          outcome(lambda: from_json(text.replace('{"prediction": ', '{"prediction": 1e9, "prediction": ', 1))))
    print("  diff of two 70-part sums, first line:",
          outcome(lambda: str(RuleTree(list(parts(0.0).terms[:70]), base=1.0, feature_names=[f"x{d}" for d in range(10)],
                                       decimals=3).diff(RuleTree(list(parts(0.001).terms[:70]), base=1.0,
                                                                 feature_names=[f"x{d}" for d in range(10)],
                                                                 decimals=3))).splitlines()[0]))
    nul = RuleTree([Node([Condition(0, "x0", upper=0.5)], Leaf("\x00", [1.0, 0.0]), Leaf("b", [0.0, 1.0]))],
                   classes=np.array(["\x00", "b"], dtype=object), feature_names=["x0"])
    print("  a class label \"\\x00\", to_json then from_json:",
          outcome(lambda: list(from_json(nul.to_json()).predict(np.array([[0.1], [0.9]])))))
def issue45_exports():
    """Issue 45, finding 7: exports that did not run. A real n_regions=300 tree's SQL in
    SQLite (refused: 17 nested CASEs), to_python of a 120-box "then" chain (Python allows
    100 levels of indentation), the query of the deepest leaf of a 600-box "else" chain in
    pandas (recursion past Python's limit), a sum of 2,000 terms in SQLite (an expression
    2,000 deep); each against predict."""
    import sqlite3

    import pandas as pd
    from sklearn.datasets import load_breast_cancer
    from sklearn.ensemble import RandomForestClassifier

    from defrag import Condition, DefragModel, RuleTree
    from defrag.rules import Leaf, Node

    def sqlite_agrees(rules, frame):
        con = sqlite3.connect(":memory:")
        frame.to_sql("t", con, index=False)
        got = [r[0] for r in con.execute(f"SELECT {rules.to_sql()} FROM t ORDER BY rowid")]
        return np.array_equal(np.asarray(got, dtype=np.float64), rules.predict(frame).astype(np.float64))

    def chain(n, then):
        node = Leaf(float(n))
        for i in reversed(range(n)):
            box = [Condition(0, "x", lower=float(i))] if then else [Condition(0, "x", upper=float(i))]
            node = Node(box, node, Leaf(float(i))) if then else Node(box, Leaf(float(i)), node)
        return RuleTree([node], feature_names=["x"], feature_names_in=["x"], supports_missing=True)

    frame = pd.DataFrame({"x": np.concatenate([np.arange(-1.0, 602.0), [0.5, np.nan, np.inf, -np.inf]])})

    def python_agrees(rules):
        namespace = {}
        exec(rules.to_python("f"), namespace)  # noqa: S102 - our own export
        got = [namespace["f"](row) for row in frame.to_dict("records")]
        return np.array_equal(np.asarray(got, dtype=np.float64), rules.predict(frame))

    def deepest_query_agrees():
        rules = chain(600, then=False)
        # (engine="python": numexpr, pandas' default where installed, refuses an expression of
        # more than about 255 operations; query_strings' docstring says so)
        rows = frame.query(rules.query_strings()[-1], engine="python").index.to_numpy()
        return np.array_equal(rows, np.flatnonzero(rules.apply(frame) == 600))

    def real_fit():
        X, y = load_breast_cancer(return_X_y=True, as_frame=True)
        forest = RandomForestClassifier(n_estimators=100, random_state=5, n_jobs=1).fit(X, y)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (257 regions lower the loss)
            return DefragModel(forest, n_regions=300, random_state=0).fit(X).rules_, X

    def sum_terms(k):
        terms = [Node([Condition(0, "x", upper=float(i))], Leaf(1.0), Leaf(0.0)) for i in range(k)]
        return RuleTree(terms, base=0.5, feature_names=["x"], feature_names_in=["x"], supports_missing=True)

    print("== issue 45, 7: exports at every size")
    checks = {"n_regions=300 tree in SQLite": lambda: sqlite_agrees(*real_fit()),
              "to_python of a 120-box then-chain": lambda: python_agrees(chain(120, then=True)),
              "query of a 600-box else-chain's deepest leaf": deepest_query_agrees,
              "2,000-term sum in SQLite": lambda: sqlite_agrees(sum_terms(2000), frame)}
    results = {name: outcome(fn) for name, fn in checks.items()}
    held = all(r == "ok: True" for r in results.values())
    print(f"  {'held' if held else 'BROKEN'}: " + "; ".join(f"{name}: {r}" for name, r in results.items()))


def main():
    with tempfile.TemporaryDirectory() as tmp:
        code_execution(tmp)
        lightgbm_cli_columns(tmp)
    with contextlib.redirect_stderr(io.StringIO()):
        printed_text()
    reordered_columns()
    labels_and_dtypes()
    names()
    documents()
    # issue 40 (library)
    issue40_threads()
    issue40_sizes()
    issue40_tampered()
    issue40_documents()
    issue40_errors()
    with contextlib.redirect_stderr(io.StringIO()):
        issue40_smaller()
    with tempfile.TemporaryDirectory() as tmp:
        issue40_cli_sql(tmp)
    issue45_forms()
    issue45_names()
    issue45_documents()
    issue45_exports()


# ============================================================= issue 40 (CLI and SQL)
# One line per reproduction of the CLI and SQL items of issue 40: data read once from a
# pipe, SQL over bool columns in DuckDB, SQL numbers read back by SQLite and DuckDB, a
# CatBoost label "NA", Ctrl-C, a full disk and a closed pipe, spreadsheet formulas.

def _cli_run(args, timeout=120, **popen):
    """(exit status or 'hung', stderr lines) of the CLI in a subprocess."""
    env = dict(os.environ, PYTHONPATH=os.path.join(HERE, "..") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.Popen([sys.executable, "-m", "defrag", *map(str, args)], env=env,
                            stdout=popen.pop("stdout", subprocess.DEVNULL), stderr=subprocess.PIPE, **popen)
    try:
        _, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        return f"hung (killed after {timeout} s)", []
    return proc.returncode, err.decode(errors="replace").strip().splitlines()


def _said(code, lines):
    last = lines[-1][:110] if lines else ""
    traceback = any(line.startswith("Traceback") for line in lines)
    return f"exit {code}, {len(lines)} stderr line{'s' if len(lines) != 1 else ''}" + \
        (", a traceback" if traceback else "") + (f": {last}" if last else "")


def _fifo_feed(path, data):
    def feed():
        with open(path, "wb") as f:
            f.write(data)

    threading.Thread(target=feed, daemon=True).start()


def issue40_cli_sql(tmp):
    import signal
    import sqlite3

    import lightgbm as lgb
    import pandas as pd
    from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestRegressor

    from defrag import Condition, DefragModel, Rule, RuleSet

    print("== issue 40 (CLI and SQL)")
    rng = np.random.default_rng(0)
    cats = ["07", "10", "NA"]
    X = pd.DataFrame({"region": pd.Categorical(rng.choice(cats, 3000), categories=cats),
                      "w": rng.normal(size=3000)})
    y = (X["region"].isin(["07", "NA"]) | (X["w"] > 1)).astype(int)
    est = lgb.LGBMClassifier(n_estimators=10, num_leaves=4, verbose=-1, random_state=0).fit(X, y)
    est.booster_.save_model(os.path.join(tmp, "lgb.txt"))
    rules = DefragModel(est, n_restarts=2, random_state=0).fit(X).rules_
    with open(os.path.join(tmp, "rules.json"), "w") as f:
        f.write(rules.to_json())
    csv = X.to_csv(index=False).encode()
    fifo = os.path.join(tmp, "d.csv")
    os.mkfifo(fifo)

    # 2. each input read once: a named pipe, a process substitution (/dev/fd/N)
    _fifo_feed(fifo, csv)
    print("  predict rules.json FIFO (text categories):",
          _said(*_cli_run(["predict", os.path.join(tmp, "rules.json"), fifo], timeout=60)))
    _fifo_feed(fifo, csv)
    print("  explain lgb.txt FIFO (text categories):",
          _said(*_cli_run(["explain", os.path.join(tmp, "lgb.txt"), fifo, "--quiet", "--n-restarts", "2"],
                          timeout=60)))
    read, write = os.pipe()
    proc_args = ["predict", os.path.join(tmp, "rules.json"), f"/dev/fd/{read}"]

    def feed_pipe():
        with os.fdopen(write, "wb") as f:
            f.write(csv)

    threading.Thread(target=feed_pipe, daemon=True).start()
    print("  predict rules.json <(cat d.csv):", _said(*_cli_run(proc_args, timeout=60, pass_fds=(read,))))
    os.close(read)

    # 4. SQL over bool columns, in DuckDB and SQLite
    try:
        import duckdb
    except ImportError:
        duckdb = None
    Xb = pd.DataFrame({"flag": rng.random(600) > 0.5, "w": rng.normal(size=600)})
    yc = (Xb["flag"] & (Xb["w"] > 0)).astype(int)
    models = [("RandomForest", RandomForestRegressor(10, max_depth=3, random_state=0).fit(Xb, 3.0 * Xb["flag"] + Xb["w"])),
              ("LightGBM", lgb.LGBMClassifier(n_estimators=10, num_leaves=4, verbose=-1, random_state=0).fit(Xb, yc)),
              ("HistGradientBoosting", HistGradientBoostingClassifier(max_iter=10, random_state=0).fit(Xb, yc))]
    try:
        import xgboost as xgb

        models.append(("XGBoost", xgb.XGBClassifier(n_estimators=10, max_depth=2, random_state=0).fit(Xb, yc)))
    except ImportError:
        pass
    for name, model in models:
        rs = DefragModel(model, n_restarts=2, random_state=0).fit(Xb).rules_
        expected = rs.predict(Xb)

        def agree(engine, rs=rs, expected=expected):
            if engine == "sqlite":
                con = sqlite3.connect(":memory:")
                Xb.to_sql("t", con, index=False)
                got = [r[0] for r in con.execute(f"SELECT {rs.to_sql()} FROM t ORDER BY rowid")]
            else:
                con = duckdb.connect()
                con.register("t", Xb)
                got = [r[0] for r in con.execute(f"SELECT {rs.to_sql()} FROM t").fetchall()]
            return f"{int(np.sum(np.asarray(got, dtype=expected.dtype) == expected))} of {len(expected)} rows agree"

        duck = outcome(lambda: agree("duckdb")) if duckdb is not None else "duckdb not installed"
        print(f"  SQL of {name} rules over a bool column: DuckDB {duck}; SQLite {outcome(lambda: agree('sqlite'))}")

    # 5. SQL numbers read back bit for bit (the border SQLite 3.40 misread, 10,000 random ones)
    bits = rng.integers(0, 2**64, 12_000, dtype=np.uint64).view(np.float64)
    values = np.concatenate([[203.2211654444733, -0.0, 5e-324, 1.7976931348623157e308],
                             bits[np.isfinite(bits)]])[:10_000]
    t = 203.2211654444733
    border = RuleSet([Rule([Condition(0, "x", upper=t)], 1.0)], 0.0, None, ["x"], supports_missing=True)
    at = [t, float(np.nextafter(t, np.inf)), float(np.nextafter(t, -np.inf))]

    def at_border():
        con = sqlite3.connect(":memory:")
        con.execute("CREATE TABLE t (x REAL)")
        con.executemany("INSERT INTO t VALUES (?)", [(v,) for v in at])  # (the values bound exactly)
        got = [r[0] for r in con.execute(f"SELECT {border.to_sql()} FROM t ORDER BY rowid")]
        return f"{int(np.sum(np.asarray(got) == border.predict(np.array(at)[:, None])))} of 3 rows agree"

    print("  SQLite, x <= 203.2211654444733 at x = t and its neighbours:", outcome(at_border))
    for engine in ("sqlite", "duckdb"):
        if engine == "duckdb" and duckdb is None:
            print("  DuckDB round trip: duckdb not installed")
            continue
        con = sqlite3.connect(":memory:") if engine == "sqlite" else duckdb.connect()
        wrong = 0
        for start in range(0, values.size, 500):
            chunk = values[start:start + 500]
            outputs = RuleSet([Rule([Condition(0, "x", upper=0.0)], float(v)) for v in chunk], 0.0, None, ["x"],
                              supports_missing=True)
            whens = [line for line in outputs.to_sql().splitlines() if line.startswith("  WHEN ")]
            row = con.execute("SELECT " + ", ".join(line.split(" THEN ", 1)[1] for line in whens)).fetchone()
            wrong += int(np.sum(np.asarray(row, dtype=np.float64).view(np.int64) != chunk.view(np.int64)))
        print(f"  {engine} reads {values.size} SQL numbers (full range, +-0, subnormals) back: {wrong} differ")

    # 8. a CatBoost category "NA" in a CSV
    try:
        import catboost
    except ImportError:
        print("  explain region.cbm region.csv (a category NA): catboost not installed")
    else:
        region = pd.DataFrame({"region": rng.choice(["EU", "US", "NA"], 400), "w": rng.normal(size=400)})
        yr = ((region["region"] == "NA") | (region["w"] > 1)).astype(int)
        cb = catboost.CatBoostClassifier(iterations=20, depth=2, verbose=0, random_seed=0, one_hot_max_size=10,
                                         cat_features=["region"], allow_writing_files=False).fit(region, yr)
        cb.save_model(os.path.join(tmp, "region.cbm"))
        region.to_csv(os.path.join(tmp, "region.csv"), index=False)
        print("  explain region.cbm region.csv (a category NA):",
              _said(*_cli_run(["explain", os.path.join(tmp, "region.cbm"), os.path.join(tmp, "region.csv"),
                               "--quiet", "--n-restarts", "2"])))

    # 9. Ctrl-C, a full disk, a closed pipe, formulas
    env = dict(os.environ, PYTHONPATH=os.path.join(HERE, "..") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.Popen([sys.executable, "-m", "defrag", "predict", os.path.join(tmp, "rules.json"), fifo],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    with open(fifo, "wb") as f:  # the CLI has opened the pipe; it now waits in read()
        f.write(csv[:100])
        f.flush()
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    print("  Ctrl-C while predict reads:", _said(proc.returncode, err.decode().strip().splitlines()))
    scored = os.path.join(tmp, "x.csv")
    X.to_csv(scored, index=False)
    if os.path.exists("/dev/full"):
        with open("/dev/full", "wb") as full:
            print("  predict > /dev/full:",
                  _said(*_cli_run(["predict", os.path.join(tmp, "rules.json"), scored], stdout=full)))
    proc = subprocess.Popen([sys.executable, "-m", "defrag", "predict", os.path.join(tmp, "rules.json"),
                             scored], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.readline()
    proc.stdout.close()  # | head -1
    err = proc.stderr.read()
    proc.wait(timeout=60)
    print("  predict | head -1:", _said(proc.returncode, err.decode().strip().splitlines()))
    evil = pd.DataFrame({"region": ["10"], "w": [0.0], "note": ['=HYPERLINK("http://x.example","click")']})
    evil.to_csv(os.path.join(tmp, "evil.csv"), index=False)
    for options in ([], ["--csv-formulas", "escape"], ["--csv-formulas", "keep"]):
        res = subprocess.run([sys.executable, "-m", "defrag", "predict", os.path.join(tmp, "rules.json"),
                              os.path.join(tmp, "evil.csv"), *options], env=env,
                             capture_output=True, text=True, timeout=60)
        cell = res.stdout.splitlines()[1].split(",", 2)[2] if res.returncode == 0 else \
            f"(exit {res.returncode}: {res.stderr.strip().splitlines()[-1]})"
        print(f"  predict {' '.join(options) or '(default options)'}: the cell =HYPERLINK(...) is written as "
              f"{cell[:50]}")


if __name__ == "__main__":
    main()
