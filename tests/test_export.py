"""Rule sets as deliverables: JSON round trip, SQL (run in SQLite), a Python function,
pandas query strings and the per-rule table reproduce RuleSet.predict row for row."""
import json
import math
import sqlite3
import subprocess
import sys

import numpy as np
import pytest

from defrag import Condition, Rule, RuleSet, RuleTree
from defrag.splits.inputs import ZERO_THRESHOLD as ZT
from defrag.splits.inputs import InputEncoding

pd = pytest.importorskip("pandas")

COLOURS = np.array(["red", "green", "blue", "grey"], dtype=object)


def _sqlite_predict(rules, X, **kw):
    """rules.to_sql() evaluated by SQLite on a table holding X (NULL for missing values,
    category labels as text or numbers), one value per row in X's order."""
    con = sqlite3.connect(":memory:")
    cols = ", ".join('"' + c.replace('"', '""') + '"' for c in X.columns)
    con.execute(f"CREATE TABLE data ({cols})")  # no declared types: values kept as given

    def cell(v):
        if v is None or (isinstance(v, float) and math.isnan(v)):
            return None
        return v.item() if isinstance(v, np.generic) else v

    rows = [tuple(cell(v) for v in row) for row in X.astype(object).itertuples(index=False)]
    con.executemany(f"INSERT INTO data VALUES ({', '.join('?' * X.shape[1])})", rows)
    expr = rules.to_sql(**kw)
    return [r[0] for r in con.execute(f"SELECT {expr} FROM data ORDER BY rowid")]


def _python_predict(rules, X):
    namespace = {}
    exec(rules.to_python("score"), namespace)
    return [namespace["score"](row) for row in X.to_dict("records")]


def _check_exports(rules, X):
    """SQL, Python, query strings and the JSON round trip against predict and covers."""
    expected = rules.predict(X)
    assert len(set(expected.tolist())) > 1  # the data reach more than one rule
    got = _sqlite_predict(rules, X)
    assert np.array_equal(np.asarray(got, dtype=expected.dtype), expected)
    assert np.array_equal(np.asarray(_python_predict(rules, X), dtype=expected.dtype), expected)
    cover = rules.covers(X)
    for r, q in enumerate(rules.query_strings()):
        selected = np.zeros(len(X), dtype=bool)
        selected[X.reset_index(drop=True).query(q).index] = True
        np.testing.assert_array_equal(selected, cover[:, r], err_msg=q)
    back = RuleTree.from_json(rules.to_json())
    again = back.predict(X)
    assert again.dtype == expected.dtype and np.array_equal(again, expected)
    assert back.to_dict() == rules.to_dict()
    assert str(back) == str(rules)


def _edge_frame(n, seed=0):
    """Every edge a condition has: values at and next to thresholds, zeros, LightGBM's
    +-1e-35 band, +-inf, NaN, unknown and missing categories, fractional and negative codes."""
    rng = np.random.default_rng(seed)
    special = np.array([0.0, -0.0, 1e-36, -1e-36, ZT, -ZT, np.nextafter(ZT, 1), 0.5,
                        np.nextafter(0.5, 1), -0.5, 0.25, 1e300, np.inf, -np.inf, np.nan])
    a = np.where(rng.random(n) < 0.5, rng.choice(special, n), rng.normal(size=n))
    codes = np.array([-1.0, -0.5, 0.0, 0.5, 0.99, 1.0, 1.7, 2.0, 3.0, 5.0, 5.9, 6.0, 1e20,
                      np.inf, -np.inf, np.nan, 64.0, 65.0])
    colour = rng.choice(np.append(COLOURS, ["purple", None]), n)
    x = np.where(rng.random(n) < 0.4, rng.choice(special, n), rng.uniform(-1, 1, n))
    return pd.DataFrame({
        "a b": a,
        "colour": pd.Categorical(colour, categories=["grey", "purple", "red", "blue", "green"]),
        "code": rng.choice(codes, n),
        "x": x,
    })


def _edge_rules(lightgbm=True, unknown="missing", supports_missing=True, regression=False):
    enc = InputEncoding(4, categorical=[False, True, True, False], categories=[None, COLOURS, None, None],
                        unknown=unknown, zero_missing=[True, False, False, False],
                        lightgbm_reads=lightgbm)
    names = ["a b", "colour", "code", "x"]
    kw = dict(category_names=list(COLOURS))
    rules = [
        [Condition(0, "a b", lower=ZT), Condition(1, "colour", categories=[0, 2], missing=True, **kw)],
        [Condition(0, "a b", lower=-ZT, upper=0.5, zero_missing=True)],
        [Condition(2, "code", categories=[0, 2, 3], negated=True), Condition(3, "x", upper=0.25)],
        [Condition(2, "code", categories=[1, 5, 64], missing=True), Condition(3, "x", lower=-0.5, missing=True)],
        [Condition(1, "colour", categories=[1], negated=True, **kw), Condition(3, "x", lower=1e300)],
        [Condition(3, "x", upper=-np.inf)],  # only -inf (never, as predict reads it)
        [Condition(3, "x", lower=-0.5, upper=-1e-36, missing=True)],
        # zero as missing on a coded categorical feature (LightGBM: after truncation)
        [Condition(2, "code", categories=[4, 6], negated=True, zero_missing=True, missing=True)],
    ]
    if regression:
        outs = [0.1, 1 / 3, -2.5, 1e-17, 7.0, 8.0, np.pi, 2.0]
        return RuleSet([Rule(c, p) for c, p in zip(rules, outs)], -1.25, None, names,
                       supports_missing=supports_missing, encoding=enc, feature_names_in=names)
    classes = np.array(["no", "yes", "it's"])
    outs = ["yes", "no", "it's", "yes", "it's", "no", "yes", "it's"]
    proba = np.full(3, 1 / 3)
    return RuleSet([Rule(c, p, proba) for c, p in zip(rules, outs)], "no", proba, names, classes,
                   supports_missing=supports_missing, encoding=enc, feature_names_in=names)


@pytest.mark.parametrize("lightgbm", [True, False])
@pytest.mark.parametrize("regression", [False, True])
def test_exports_reproduce_predict_on_every_condition_kind(lightgbm, regression):
    rules = _edge_rules(lightgbm=lightgbm, regression=regression)
    X = _edge_frame(3000)
    if not lightgbm:  # only LightGBM truncates codes: other encodings refuse fractions
        X["code"] = np.trunc(X["code"])
    _check_exports(rules, X)


def test_refusals_are_sql_null_and_python_errors():
    """Where predict raises (NaN without a missing-value direction, a category XGBoost
    never saw), SQL gives NULL and the Python function raises ValueError."""
    rules = _edge_rules(lightgbm=False, unknown="error", supports_missing=False)
    X = _edge_frame(400, seed=3)
    X["code"] = np.trunc(X["code"])
    got = _sqlite_predict(rules, X)
    namespace = {}
    exec(rules.to_python(), namespace)
    n_refused = 0
    for i, row in enumerate(X.to_dict("records")):
        try:
            expected = rules.predict(X.iloc[[i]])[0]
        except ValueError:
            n_refused += 1
            assert got[i] is None, X.iloc[i]
            with pytest.raises(ValueError):
                namespace["predict"](row)
            continue
        assert got[i] == expected and namespace["predict"](row) == expected, X.iloc[i]
    assert 0 < n_refused < len(X)


def test_python_function_reads_dicts_series_and_sequences():
    rules = _edge_rules()
    X = _edge_frame(50, seed=5)
    namespace = {}
    exec(rules.to_python(), namespace)
    f = namespace["predict"]
    expected = rules.predict(X)
    for i in range(len(X)):
        row = X.iloc[i]
        assert f(row) == f(row.to_dict()) == f(list(row)) == expected[i]
    with pytest.raises(ValueError, match="lacks column 'x'"):
        f({"a b": 1.0, "colour": "red", "code": 1})
    with pytest.raises(ValueError, match="3 values"):
        f([1.0, "red", 1])
    assert "import numpy" not in rules.to_python() and "import pandas" not in rules.to_python()
    with pytest.raises(ValueError, match="identifier"):
        rules.to_python("not a name")


def test_sql_names_and_quoting():
    rules = _edge_rules()
    sql = rules.to_sql(table="my table", column_names={"a b": 'we"ird'})
    assert '"my table"."we""ird"' in sql and '"my table"."colour"' in sql
    assert sql.startswith("CASE\n") and sql.endswith("\nEND")
    assert "'it''s'" in sql  # a label with a quote
    assert repr(ZT) in sql and "IS NULL" in sql and " IN ('" in sql
    X = _edge_frame(500, seed=2).rename(columns={"x": "renamed x"})
    names = ["a b", "colour", "code", "renamed x"]
    got = _sqlite_predict(rules, X, column_names=names)
    expected = rules.predict(X.rename(columns={"renamed x": "x"}))
    assert list(got) == expected.tolist()
    with pytest.raises(ValueError, match="4 features"):
        rules.to_sql(column_names=["a"])
    with pytest.raises(ValueError, match="do not have"):
        rules.to_sql(column_names={"nope": "a"})


def test_json_has_schema_version_and_exact_thresholds():
    rules = _edge_rules()
    rules.nodes()[1].conditions[0] = Condition(0, "a b", lower=0.1 + 0.2, upper=1 / 3, zero_missing=True)
    d = json.loads(rules.to_json(indent=2))
    assert d["schema"] == "defrag.rules" and d["schema_version"] == 1
    assert d["rules"][1]["conditions"][0]["lower"] == 0.30000000000000004
    assert d["rules"][5]["conditions"][0]["upper"] == "-inf"  # strict JSON: no Infinity
    back = RuleTree.from_dict(d)
    assert back.rules[1].conditions[0].upper == 1 / 3
    assert back.feature_names == ["a b", "colour", "code", "x"]
    np.testing.assert_array_equal(back.classes, rules.classes)
    d["schema_version"] = 99
    with pytest.raises(ValueError, match="newer"):
        RuleTree.from_dict(d)
    with pytest.raises(ValueError, match="not a defrag rule set"):
        RuleTree.from_dict({"schema": "other", "rules": []})


@pytest.mark.filterwarnings("ignore:X does not have valid feature names")  # an array on purpose
def test_from_json_does_not_import_sklearn(tmp_path):
    path = tmp_path / "rules.json"
    path.write_text(_edge_rules(lightgbm=False).to_json())
    code = (
        "import sys, numpy as np\n"
        "from defrag import RuleTree\n"
        f"rules = RuleTree.from_json(open({str(path)!r}).read())\n"
        "X = np.array([[0.7, 0.0, 1.0, 0.0], [0.2, 1.0, 1.0, -0.75], [np.nan, 3.0, 4.0, 2.0]])\n"
        "print(rules.predict(X).tolist(), [m for m in sys.modules if m.split('.')[0] in ('sklearn', 'pandas')])\n"
    )
    res = subprocess.run([sys.executable, "-W", "ignore", "-c", code], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    expected = _edge_rules(lightgbm=False).predict(np.array([[0.7, 0.0, 1.0, 0.0], [0.2, 1.0, 1.0, -0.75],
                                                             [np.nan, 3.0, 4.0, 2.0]]))
    assert res.stdout.strip() == f"{expected.tolist()} []"


def test_negative_infinity_satisfies_upper_bounds():
    rules = RuleSet([Rule([Condition(0, "x", upper=0.5)], 1)], 0, supports_missing=True)
    np.testing.assert_array_equal(rules.predict(np.array([[-np.inf], [np.inf], [0.5], [0.6]])), [1, 0, 1, 0])


# ------------------------------------------------------------- rules of real models

def _scoring_frame(X, n, seed):
    """n rows drawn from X's columns, with the thresholds of the rules' numeric
    conditions planted, NaN in every column, and an unseen category."""
    rng = np.random.default_rng(seed)
    out = X.iloc[rng.integers(0, len(X), n)].reset_index(drop=True)
    for col in out.columns:
        if out[col].dtype.name != "category":  # ties, zeros, LightGBM's zero band, infinities
            for value in (rng.choice(X[col].dropna().to_numpy()), 0.0, 1e-36, -1e-36, np.inf, -np.inf):
                out.loc[rng.random(n) < 0.02, col] = value
        out.loc[rng.random(n) < 0.05, col] = np.nan
    return out


def _plant_thresholds(rules, X, seed):
    rng = np.random.default_rng(seed)
    X = X.copy()
    for c in (c for r in rules.rules for c in r.conditions if not c.is_set):
        col = X.columns[c.feature]
        for t in (c.lower, c.upper):
            if t is not None:
                X.loc[rng.random(len(X)) < 0.02, col] = t
                X.loc[rng.random(len(X)) < 0.02, col] = np.nextafter(t, np.inf)
    return X


@pytest.mark.parametrize("library", ["xgboost", "lightgbm", "lightgbm-regressor", "hist"])
def test_exports_of_xgboost_and_lightgbm_rules(library):
    from conftest import categorical_frame

    from defrag import DefragModel

    Xtr, _ = categorical_frame(2, n=800)
    Xtr.loc[Xtr["x0"].abs() <= 0.3, "x0"] = 0.0  # zeros: LightGBM's zero-as-missing
    signal = (2.0 * Xtr["colour"].isin(["red", "blue"]).to_numpy() + np.nan_to_num(Xtr["x0"].to_numpy())
              - (Xtr["size"] == 42).to_numpy())
    ytr = signal if library.endswith("regressor") else (signal > 0.8).astype(int)
    if library == "hist":  # categories looked up by value (numbers included)
        from sklearn.ensemble import HistGradientBoostingClassifier

        model = HistGradientBoostingClassifier(max_iter=10, max_depth=3, categorical_features="from_dtype",
                                               random_state=0)
    elif library == "xgboost":
        xgb = pytest.importorskip("xgboost")
        model = xgb.XGBClassifier(n_estimators=10, max_depth=3, enable_categorical=True,
                                  max_cat_to_onehot=1, random_state=0)
    else:
        lgb = pytest.importorskip("lightgbm")
        Model = lgb.LGBMRegressor if library.endswith("regressor") else lgb.LGBMClassifier
        model = Model(n_estimators=10, num_leaves=6, verbose=-1, min_data_per_group=5,
                      cat_smooth=1.0, zero_as_missing=True, random_state=0)
    model.fit(Xtr, ytr)
    m = DefragModel(model, n_components=6, n_restarts=3, random_state=0, form="list").fit(Xtr, ytr)
    assert any(c.is_set for r in m.rules_.rules for c in r.conditions), str(m)
    X = _plant_thresholds(m.rules_, _scoring_frame(Xtr, 10_000, 1), 2)
    if library != "xgboost":  # an unseen category is missing for LightGBM (XGBoost refuses it)
        X["colour"] = X["colour"].cat.add_categories(["mauve"])
        X.loc[::97, "colour"] = "mauve"
    assert X.isna().any().all()
    _check_exports(m.rules_, X)


# ----------------------------------------------------------------------- the table

@pytest.fixture(scope="module")
def cancer():
    from sklearn.datasets import load_breast_cancer
    from sklearn.ensemble import RandomForestClassifier

    from defrag import DefragModel

    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    rf = RandomForestClassifier(n_estimators=30, random_state=0).fit(X, y)
    rule_list = DefragModel(rf, n_components=10, n_restarts=5, random_state=0, form="list").fit(X)
    paper = DefragModel(rf, n_components=10, n_restarts=5, form="paper", random_state=0).fit(X)
    return rule_list, paper, X, y


def test_printed_thresholds_are_the_thresholds(cancer):
    """The printed number is the shortest decimal with the fitted threshold's training split,
    and then it is the threshold: the condition, predict and the exports all use it."""
    import re

    lists, paper, X, _ = cancer
    n_bounds = 0
    for m, c in ((m, c) for m in (lists, paper) for r in m.rules_.rules for c in r.conditions):
        printed = [float(v) for v in re.findall(r"-?\d+(?:\.\d+)?(?:e-?\d+)?", str(c).replace(c.name, ""))]
        bounds = [b for b in (c.lower, c.upper) if b is not None]
        assert printed == bounds, str(c)
        column = X.iloc[:, c.feature].to_numpy()
        for p in printed:
            n_bounds += 1
            # no decimal of one significant digit less has the same training split: neither
            # the largest below the threshold nor the smallest above it
            digits = len(f"{p:e}".split("e")[0].replace("-", "").replace(".", "").rstrip("0"))
            if digits > 1:
                step = 10.0 ** (np.floor(np.log10(abs(p))) - (digits - 2))
                for coarser in (np.floor(p / step) * step, np.ceil(p / step) * step):
                    assert not np.array_equal(column <= coarser, column <= p), (str(c), coarser)
        sql = m.rules_.to_sql()
        assert all(repr(b) in sql for b in bounds)  # the exports write the printed threshold
    assert n_bounds >= 20


def test_to_frame_one_row_per_rule_with_measures(cancer):
    m, _, X, y = cancer
    frame = m.rules_.to_frame()
    assert len(frame) == len(m.rules_.rules) + 1 and frame["rule"].iloc[-1] == "otherwise"
    assert list(frame["rule"][:-1]) == [r.condition_text() for r in m.rules_.rules]
    assert {"n_conditions", "prediction", "support", "coverage", "proba_0", "proba_1"} <= set(frame)
    cover = m.rules_.covers(X)
    np.testing.assert_allclose(frame["coverage"][:-1].to_numpy(dtype=float), cover.mean(axis=0))
    assert frame["support"][:-1].sum() <= len(X)
    t = m.rules_.to_frame(X, y)
    first = m.rules_.route(m.rules_.encode(X))[:, 0]
    pred = m.rules_.predict(X)
    for r in range(len(m.rules_.rules) + 1):
        rows = first == r
        assert t["X_support"][r] == rows.sum()
        assert t["precision"][r] == pytest.approx(np.mean(pred[rows] == y[rows]))
    # the training support is what fit counted
    np.testing.assert_array_equal(t["X_support"][:-1], frame["support"][:-1])
    with pytest.raises(ValueError, match="y has"):
        m.rules_.to_frame(X, y[:5])


def test_query_strings_on_nullable_and_float32_columns_and_sql_of_no_rule():
    # found by a fault hunt: `a` != `a` is pandas' NA (not True) on nullable columns, so a
    # missing value's condition selected nothing; a float32 column is compared with a
    # float32 copy of the threshold (NumPy 2), where predict compares float64; and the SQL
    # of a list without rules was "CASE ELSE ... END", which SQLite refuses
    rules = RuleSet([Rule([Condition(0, "a", lower=0.3, missing=True)], 1),
                     Rule([Condition(1, "b", upper=2.5)], 2)], 0, feature_names=["a", "b"],
                    supports_missing=True, feature_names_in=["a", "b"])
    X = pd.DataFrame({"a": pd.array([None, 0.2, 0.5, None], dtype="Float64"),
                      "b": pd.array([1, 7, None, 3], dtype="Int64")})
    X32 = pd.DataFrame({"a": np.float32([0.3, 0.2, 0.5, np.nan]), "b": np.float32([1, 7, 9, 3])})
    assert float(X32["a"][0]) > 0.3  # float32(0.3) is above the double 0.3: rule 1 holds
    for frame in (X, X32):
        cover = rules.covers(frame)
        assert cover[:, 0].tolist() == [True, False, True, True]
        for r, q in enumerate(rules.query_strings()):
            np.testing.assert_array_equal(frame.eval(q).to_numpy(dtype=bool), cover[:, r], err_msg=q)
            selected = np.zeros(len(frame), dtype=bool)
            selected[frame.query(q).index] = True
            np.testing.assert_array_equal(selected, cover[:, r], err_msg=q)
    empty = RuleSet([], "a", feature_names=["a", "b"])
    assert empty.to_sql() == "CASE\n  WHEN 1 = 1 THEN 'a'\nEND"
    assert _sqlite_predict(empty, X32) == ["a"] * 4


def test_sql_is_null_where_predict_refuses_a_fractional_code():
    # a categorical feature of codes (XGBoost's, without labels): predict refuses 1.5; the
    # SQL answered there (a fault hunt); LightGBM truncates codes and takes it
    for lightgbm in (False, True):
        enc = InputEncoding(2, categorical=[True, False], lightgbm_reads=lightgbm)
        rules = RuleSet([Rule([Condition(0, "code", categories=[0, 2]), Condition(1, "x", upper=0.5)], 1)], 0,
                        feature_names=["code", "x"], supports_missing=True, encoding=enc,
                        feature_names_in=["code", "x"])
        X = pd.DataFrame({"code": [0.0, 2.0, 1.5, np.nan, 1e20, 2.0], "x": [0.1, 0.2, 0.3, 0.4, 0.1, 0.9]})
        whole = X.drop(index=2)
        expected = rules.predict(whole).tolist()
        got = _sqlite_predict(rules, X)
        if lightgbm:
            assert got == rules.predict(X).tolist()
        else:
            with pytest.raises(ValueError, match="integer category codes"):
                rules.predict(X)
            assert got[2] is None and got[:2] + got[3:] == expected


def test_sql_answers_a_fractional_code_where_predict_does():
    # without an encoding nothing refuses 2.7 (predict reads it): the SQL answers there too
    rules = RuleSet([Rule([Condition(0, "code", categories=[0, 2]), Condition(1, "x", upper=0.5)], 1)], 0,
                    feature_names=["code", "x"], supports_missing=True, feature_names_in=["code", "x"])
    X = pd.DataFrame({"code": [0.0, 2.0, 2.7, -0.5], "x": [0.1, 0.2, 0.3, 0.4]})
    assert "NULL" not in rules.to_sql()
    assert _sqlite_predict(rules, X)[:2] == rules.predict(X).tolist()[:2]


def test_text_labels_read_integers_exactly_in_the_python_function():
    # CatBoost's text of an integer is its decimal digits: 2**60 + 1 through a float was
    # 2**60, another label
    enc = InputEncoding(1, categorical=[True], categories=[np.array(["1152921504606846977", "7"], dtype=object)],
                        text_labels=True)
    rules = RuleSet([Rule([Condition(0, "k", categories=[0])], 1)], 0, feature_names=["k"], encoding=enc,
                    supports_missing=True, feature_names_in=["k"])
    X = pd.DataFrame({"k": pd.Series([2**60 + 1, 2**60, 7, "7", 7.0], dtype=object)})
    expected = rules.predict(X).tolist()
    assert expected == [1, 0, 0, 0, 0]
    assert _python_predict(rules, X) == expected
    assert _python_predict(rules, pd.DataFrame({"k": np.array([2**60 + 1], dtype=np.int64)})) == [1]


def test_to_python_emits_only_the_helpers_the_rules_call():
    # numeric columns only: the number reader and what it calls, nothing for categories
    from defrag.rules import Condition, Rule, RuleSet

    rules = RuleSet([Rule([Condition(0, "a", upper=0.5)], 1.0), Rule([Condition(1, "b", lower=2.0)], 2.0)], 0.0,
                    feature_names=["a", "b"])
    source = rules.to_python()
    for name in ("_number", "_missing"):
        assert f"def {name}(" in source
    for name in ("_code", "_label", "_text", "import operator", "CODES_"):
        assert name not in source, name
    namespace = {}
    exec(source, namespace)
    assert [namespace["predict"](r) for r in ([0.1, 0.0], [0.9, 3.0], [0.9, 1.0])] == \
        list(rules.predict(np.array([[0.1, 0.0], [0.9, 3.0], [0.9, 1.0]])))
    # the same for a tree's export, which shares the readers
    from defrag.rules import RuleTree
    from defrag.rules.tree_nodes import Leaf, Node

    tree = RuleTree([Node([Condition(0, "a", upper=0.5)], Leaf(1.0), Leaf(0.0))], feature_names=["a", "b"])
    text = tree.to_python()
    assert "def _number(" in text and "def _label(" not in text and "def _text(" not in text
    # a categorical feature with labels brings the label reader and what it calls
    full = _edge_rules().to_python()
    assert "def _label(" in full and "def _text(" in full and "def _missing(" in full
