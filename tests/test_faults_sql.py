"""The SQL export read by real engines as predict reads the rules (issue 40, a fault hunt):

* numbers: SQLite 3.40 read the literal 203.2211654444733 (a CatBoost border's threshold)
  as 203.22116544447329, and 3 of 14,955 random rule sets predicted otherwise; DuckDB
  read -0.0 as +0. Every threshold and output must come back bit for bit.
* boolean columns: a model fitted on a bool column exported ``"flag" <= 0.5``, which
  DuckDB refuses ("Cannot compare values of type BOOLEAN and type DECIMAL(2,1)").

Every check runs on the three forms (issue 45): an ordered list, a tree of rules and a sum
of trees.
"""
import sqlite3

import numpy as np
import pytest

from defrag import Condition, DefragModel, Rule, RuleSet, RuleTree
from defrag.rules import Leaf, Node
from defrag.rules import from_json
from defrag.splits.inputs import ZERO_THRESHOLD
from defrag.splits.table import float32_threshold

pd = pytest.importorskip("pandas")


def _thresholds(n, seed=0):
    """n finite doubles over the whole range: the border SQLite misread, CatBoost border
    thresholds (float32 borders moved to their rounding boundaries, as the CatBoost reader
    makes them), random bit patterns (subnormals to 1.8e308, both signs), +-0, the extremes,
    integers about 2**53, LightGBM's zero band, short decimals."""
    rng = np.random.default_rng(seed)
    special = [203.2211654444733, 0.0, -0.0, 5e-324, -5e-324, 2.2250738585072014e-308,
               np.nextafter(2.2250738585072014e-308, 0), 1.7976931348623157e308, -1.7976931348623157e308,
               2.0**53, 2.0**53 + 2, -(2.0**53) - 2, 2.0**63, 2.0**-1074 * 3, 0.5, 0.1, -2.25, 1e22, 1e23,
               1e-22, ZERO_THRESHOLD, -ZERO_THRESHOLD, 123456789012345.0, 1234567890123456.0]
    borders = rng.uniform(-1000, 1000, n // 4).astype(np.float32)
    borders = np.concatenate([borders, (rng.standard_normal(n // 8) * 10.0 ** rng.integers(-30, 30, n // 8))
                              .astype(np.float32)])
    catboost = float32_threshold(borders)
    bits = rng.integers(0, 2**64, n, dtype=np.uint64).view(np.float64)
    values = np.concatenate([special, catboost, bits[np.isfinite(bits)]])
    values = values[np.isfinite(values)][:n]
    assert values.size == n
    return values


def _bits(values):
    return np.asarray(values, dtype=np.float64).view(np.int64)


def _rule_sets(values, size=100):
    """Regression rule sets over one feature x, each `size` of the values as thresholds and
    outputs: ascending upper bounds (x <= t predicts t) and descending lower bounds
    (x > t predicts t), so that rows at t and next to it reach the rule of t or a
    neighbour's; data: each threshold and its neighbours."""
    for start in range(0, values.size, size):
        chunk = values[start:start + size]
        upper = start // size % 2 == 0
        ts = np.sort(chunk) if upper else -np.sort(-chunk)
        rules = [Rule([Condition(0, "x", upper=t) if upper else Condition(0, "x", lower=t)], float(t))
                 for t in ts]
        rs = RuleSet(rules, float(chunk[0]), None, ["x"], supports_missing=False, feature_names_in=["x"])
        with np.errstate(over="ignore"):  # (next to the largest double: inf, dropped)
            x = np.concatenate([chunk, np.nextafter(chunk, np.inf), np.nextafter(chunk, -np.inf)])
        yield rs, pd.DataFrame({"x": x[np.isfinite(x)]})


FORMS = ("list", "tree", "sum")


def _form(form):
    """DefragModel's parameters for a form (a sum is sized by its comparisons)."""
    return {"form": form, "max_conditions": 8} if form == "sum" else {"form": form}


def _search_tree(ts, upper):
    """A tree of rules over x whose leaves give the thresholds ts (sorted): a row at or
    next to t reaches the leaf of t or a neighbour's, as _rule_sets' lists do. Built
    without recursion, one box per threshold but the last."""
    items = [Leaf(float(t)) for t in ts]
    while len(items) > 1:  # pair neighbours, level by level: a balanced tree
        paired = []
        for k in range(0, len(items) - 1, 2):
            left, right = items[k], items[k + 1]
            t = _largest_leaf(left) if upper else _smallest_leaf(right)
            box = [Condition(0, "x", upper=t)] if upper else [Condition(0, "x", lower=t)]
            paired.append(Node(box, left, right) if upper else Node(box, right, left))
        items = paired + ([items[-1]] if len(items) % 2 else [])
    return items[0]


def _largest_leaf(node):
    while isinstance(node, Node):
        node = node.otherwise
    return node.prediction


def _smallest_leaf(node):
    while isinstance(node, Node):
        node = node.then
    return node.prediction


def _in_form(rs, form):
    """The list rs (one feature x, thresholds as outputs) as a list, as a tree whose
    boxes test the same thresholds, or as a sum of one term per rule (x beyond the
    rule's threshold adds 1: a misread threshold changes the count next to it)."""
    if form == "list":
        return rs
    ts = [c.upper if c.upper is not None else c.lower for r in rs.rules for c in r.conditions]
    upper = rs.rules[0].conditions[0].upper is not None
    kw = dict(feature_names=["x"], supports_missing=False, feature_names_in=["x"])
    if form == "tree":
        return RuleTree([_search_tree(sorted(ts), upper)], **kw)
    terms = [Node([Condition(0, "x", upper=t) if upper else Condition(0, "x", lower=t)], Leaf(1.0), Leaf(0.0))
             for t in ts]
    return RuleTree(terms, base=0.0, **kw)


def _sqlite(sql, frame):
    con = sqlite3.connect(":memory:")
    con.execute("CREATE TABLE t (x REAL)")
    con.executemany("INSERT INTO t VALUES (?)", [(float(v),) for v in frame["x"]])
    return [r[0] for r in con.execute(f"SELECT {sql} FROM t ORDER BY rowid")]


@pytest.mark.parametrize("form", FORMS)
def test_sqlite_reads_10000_thresholds_and_outputs_bit_for_bit(form):
    values = _thresholds(10_000)
    for rs, frame in _rule_sets(values):
        rules = _in_form(rs, form)
        expected = rules.predict(frame)
        got = np.array(_sqlite(rules.to_sql(), frame), dtype=np.float64)
        np.testing.assert_array_equal(_bits(got), _bits(expected))


@pytest.mark.parametrize("form", FORMS)
def test_duckdb_reads_10000_thresholds_and_outputs_bit_for_bit(form):
    duckdb = pytest.importorskip("duckdb")
    values = _thresholds(10_000, seed=1)
    con = duckdb.connect()
    for rs, frame in _rule_sets(values):
        rules = _in_form(rs, form)
        expected = rules.predict(frame)
        con.register("t", frame)
        got = np.array([r[0] for r in con.execute(f"SELECT {rules.to_sql()} FROM t").fetchall()], dtype=np.float64)
        np.testing.assert_array_equal(_bits(got), _bits(expected))
    if form != "list":
        return
    # -0.0 as an output (DuckDB reads the literal -0.0 as the DECIMAL 0.0)
    rs = RuleSet([Rule([Condition(0, "x", upper=-0.0)], -0.0)], 1.0, None, ["x"], feature_names_in=["x"])
    frame = pd.DataFrame({"x": [-0.0, 0.0, -1.0, 5e-324]})
    con.register("t", frame)
    got = np.array([r[0] for r in con.execute(f"SELECT {rs.to_sql()} FROM t").fetchall()], dtype=np.float64)
    np.testing.assert_array_equal(_bits(got), _bits(rs.predict(frame)))


@pytest.mark.parametrize("form", FORMS)
def test_real_catboost_borders_read_back_exactly(form):
    """The thresholds of a fitted CatBoost regression's rules, through SQLite and DuckDB."""
    catboost = pytest.importorskip("catboost")
    rng = np.random.default_rng(3)
    X = pd.DataFrame({"a": rng.normal(size=600) * 300, "b": rng.uniform(0, 1e-3, 600), "c": rng.normal(size=600)})
    y = np.sin(X["a"] / 100) + 500 * X["b"] + X["c"]
    model = catboost.CatBoostRegressor(iterations=30, depth=3, verbose=0, random_seed=0,
                                       allow_writing_files=False).fit(X, y)
    rules = DefragModel(model, n_components=8, n_restarts=2, random_state=0, **_form(form)).fit(X).rules_
    assert getattr(rules, "form", "list") == form
    conditions = _conditions(rules)
    bounds = [b for c in conditions for b in (c.lower, c.upper) if b is not None and np.isfinite(b)]
    assert bounds
    # rows at and next to every bound
    rows = []
    for j, col in enumerate(X.columns):
        at = [b for c in conditions if c.feature == j for b in (c.lower, c.upper) if b is not None and np.isfinite(b)]
        for b in at:
            for v in (b, np.nextafter(b, np.inf), np.nextafter(b, -np.inf)):
                row = X.iloc[[int(rng.integers(len(X)))]].copy()
                row[col] = v
                rows.append(row)
    data = pd.concat(rows, ignore_index=True)
    expected = rules.predict(data)
    con = sqlite3.connect(":memory:")
    data.to_sql("t", con, index=False)
    got = [r[0] for r in con.execute(f"SELECT {rules.to_sql()} FROM t ORDER BY rowid")]
    np.testing.assert_array_equal(_bits(np.array(got, dtype=np.float64)), _bits(expected))
    duckdb = pytest.importorskip("duckdb")
    d = duckdb.connect()
    d.register("t", data)
    got = [r[0] for r in d.execute(f"SELECT {rules.to_sql()} FROM t").fetchall()]
    np.testing.assert_array_equal(_bits(np.array(got, dtype=np.float64)), _bits(expected))


def test_sql_numbers_stay_readable_where_exact():
    """A short decimal that is its double exactly is written as it is; another carries its
    shortest decimal as a comment."""
    rs = RuleSet([Rule([Condition(0, "x", upper=0.5)], 2.25), Rule([Condition(0, "x", upper=0.88)], 1.0)],
                 -3.0, None, ["x"], feature_names_in=["x"])
    sql = rs.to_sql()
    assert '"x" <= 0.5 THEN 2.25' in sql
    assert "/* 0.88 */" in sql and "ELSE -3.0" in sql


# --------------------------------------------------------------------- bool columns
def _bool_frame(n=600, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"flag": rng.random(n) > 0.5, "w": rng.normal(size=n), "on": rng.random(n) > 0.3})
    y_class = ((X["flag"] & (X["w"] > 0)) | ~X["on"]).astype(int)
    y_value = 3.0 * X["flag"] - 2.0 * X["on"] + X["w"]
    return X, y_class, y_value


def _models():
    from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestRegressor

    X, yc, yr = _bool_frame()
    out = [("RandomForest", RandomForestRegressor(n_estimators=10, max_depth=3, random_state=0).fit(X, yr)),
           ("HistGradientBoosting", HistGradientBoostingClassifier(max_iter=10, random_state=0).fit(X, yc))]
    try:
        import lightgbm as lgb

        out.append(("LightGBM", lgb.LGBMClassifier(n_estimators=10, num_leaves=4, verbose=-1,
                                                   random_state=0).fit(X, yc)))
        out.append(("LightGBM zero as missing", lgb.LGBMRegressor(
            n_estimators=10, num_leaves=4, verbose=-1, zero_as_missing=True, random_state=0).fit(X, yr)))
    except ImportError:
        pass
    try:
        import xgboost as xgb

        out.append(("XGBoost", xgb.XGBClassifier(n_estimators=10, max_depth=2, random_state=0).fit(X, yc)))
    except ImportError:
        pass
    return out


def _conditions(rules):
    if isinstance(rules, RuleSet):
        return [c for r in rules.rules for c in r.conditions]
    return [c for n in rules.nodes() for c in n.conditions]


@pytest.fixture(scope="module", params=FORMS)
def bool_rules(request):
    X, _, _ = _bool_frame(seed=1)
    X = X.astype({"flag": "boolean"})
    X.loc[::17, "flag"] = pd.NA  # missing values too (pandas' nullable boolean)
    fitted = []
    for name, model in _models():
        train, _, _ = _bool_frame()
        rules = DefragModel(model, n_components=6, n_restarts=2, random_state=0,
                            **_form(request.param)).fit(train).rules_
        assert getattr(rules, "form", "list") == request.param, name
        assert any(c.feature in (0, 2) for c in _conditions(rules)), name
        fitted.append((f"{name} ({request.param})", rules))
    return X, fitted


def test_rules_over_bool_columns_run_in_sqlite_and_agree_with_predict(bool_rules):
    X, fitted = bool_rules
    con = sqlite3.connect(":memory:")
    # SQLite has no BOOLEAN type: Python's booleans are stored as 1 and 0
    X.astype(object).where(X.notna(), None).to_sql("t", con, index=False)
    for name, rules in fitted:
        expected = rules.predict(X)
        for rs in (rules, from_json(rules.to_json())):
            got = [r[0] for r in con.execute(f"SELECT {rs.to_sql()} FROM t ORDER BY rowid")]
            np.testing.assert_array_equal(np.asarray(got, dtype=expected.dtype), expected, err_msg=name)


def test_rules_over_bool_columns_run_in_duckdb_and_agree_with_predict(bool_rules):
    duckdb = pytest.importorskip("duckdb")
    X, fitted = bool_rules
    con = duckdb.connect()
    con.register("t", X)
    assert [r[1] for r in con.execute("DESCRIBE t").fetchall()][0] == "BOOLEAN"
    for name, rules in fitted:
        expected = rules.predict(X)
        for rs in (rules, from_json(rules.to_json())):
            sql = rs.to_sql()
            assert '"flag" <=' not in sql and '"flag" >' not in sql, (name, sql)
            got = [r[0] for r in con.execute(f"SELECT {sql} FROM t").fetchall()]
            np.testing.assert_array_equal(np.asarray(got, dtype=expected.dtype), expected, err_msg=name)


def test_the_boolean_flags_are_kept_in_json_and_old_documents_still_load(bool_rules):
    _, fitted = bool_rules
    _, rules = fitted[0]
    doc = rules.to_dict()
    assert doc["encoding"]["boolean"] == [True, False, True]
    assert type(rules).from_dict(doc).encoding.boolean.tolist() == [True, False, True]
    del doc["encoding"]["boolean"]  # a document written before the field existed
    old = type(rules).from_dict(doc)
    assert not old.encoding.boolean.any()
    assert '"flag" <= 0.5' in old.to_sql() or '"flag" > 0.5' in old.to_sql()  # numbers, as before
    # a model fitted on numbers has no boolean field at all
    X, _, yr = _bool_frame()
    from sklearn.ensemble import RandomForestRegressor

    numbers = X.astype(float)
    rf = RandomForestRegressor(n_estimators=5, max_depth=3, random_state=0).fit(numbers, yr)
    form = "list" if isinstance(rules, RuleSet) else rules.form
    plain = DefragModel(rf, n_components=3, n_restarts=1, random_state=0, **_form(form)).fit(numbers).rules_
    assert "boolean" not in plain.to_dict()["encoding"]


@pytest.mark.parametrize("form", FORMS)
def test_a_bool_array_is_boolean_too(form):
    from sklearn.ensemble import RandomForestClassifier

    rng = np.random.default_rng(0)
    X = rng.random((400, 2)) > 0.5
    y = X[:, 0] ^ X[:, 1]
    rf = RandomForestClassifier(n_estimators=5, max_depth=3, random_state=0).fit(X, y)
    rules = DefragModel(rf, n_components=4, n_restarts=1, random_state=0, **_form(form)).fit(X).rules_
    assert rules.encoding.boolean.tolist() == [True, True]
    sql = rules.to_sql()
    assert '"x0" = ' in sql and "<=" not in sql


def test_the_other_exports_of_rules_over_bool_columns_agree_with_predict(bool_rules):
    """Siblings: the Python function and the query strings on the same nullable bool column."""
    X, fitted = bool_rules
    for name, rules in fitted:
        namespace = {}
        exec(rules.to_python("score"), namespace)
        got = [namespace["score"](row) for row in X.to_dict("records")]
        expected = rules.predict(X)
        np.testing.assert_array_equal(np.asarray(got, dtype=expected.dtype), expected, err_msg=name)
        frame = X.reset_index(drop=True)
        if isinstance(rules, RuleSet):
            cover = rules.covers(X)
            for r, q in enumerate(rules.query_strings()):
                selected = np.zeros(len(X), dtype=bool)
                selected[frame.query(q).index] = True
                np.testing.assert_array_equal(selected, cover[:, r], err_msg=f"{name}: {q}")
            continue
        # a tree's or sum's: each leaf's query selects the rows that reach it
        reached = rules.apply(X).reshape(len(X), -1)
        per_term = rules.query_strings()
        for t, queries in enumerate([per_term] if rules.form == "tree" else per_term):
            for k, q in enumerate(queries):
                selected = np.zeros(len(X), dtype=bool)
                selected[frame.query(q).index] = True
                np.testing.assert_array_equal(selected, reached[:, t] == k, err_msg=f"{name}: {q}")
