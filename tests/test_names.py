"""Feature names valid everywhere they go (issue 22, item 4): repeated and empty names are
refused where names are accepted (DefragModel and the baselines' feature_names=, the
DataFrame's columns, RuleSet, from_json); every export either quotes a name correctly
(SQL run in SQLite, pandas query strings, the Python function) or refuses it with a
ValueError naming it."""
import re
import sqlite3

import numpy as np
import pytest

from defrag import Condition, DefragModel, Rule, RuleSet, RuleTree
from defrag.baselines import DepthTwoTree
from defrag.rules import RulesDocumentError

pd = pytest.importorskip("pandas")

# names that a careless export breaks: quotes of each kind, SQL and Python syntax, a
# backtick, spaces, non-ASCII, the generated module's own names
ODD_NAMES = ['we"ird', "it's", "a`b", "select", "class", "x y", "é-ü", "ZERO", "COLUMNS", "math"]


@pytest.fixture(scope="module")
def forest():
    from sklearn.ensemble import RandomForestClassifier

    rng = np.random.default_rng(0)
    X = rng.random((300, 3))
    y = (X[:, 0] + X[:, 1] > 1).astype(int)
    return RandomForestClassifier(n_estimators=10, max_depth=3, random_state=0).fit(X, y), X, y


def test_feature_names_without_a_name_are_refused(forest):
    # str() printed them as features named "None" and "nan" (a fault hunt)
    rf, X, y = forest
    for names, match in ((["a", None, "b"], r"no name at position 1 \(None\)"),
                         (["a", "b", float("nan")], r"no name at position 2 \(nan\)")):
        with pytest.raises(ValueError, match=r"^feature_names has " + match):
            DefragModel(rf, feature_names=names, n_restarts=1).fit(X)
        with pytest.raises(ValueError, match=match):
            DepthTwoTree(rf, feature_names=names).fit(X, y)
        with pytest.raises(ValueError, match=match):
            RuleSet([], 0, feature_names=names)
    # a DataFrame's columns without a name (a review: they printed as features "nan")
    for label in (None, np.nan, pd.NA, pd.NaT):
        # (the forest was fitted on an array: said before the names are checked)
        with pytest.warns(UserWarning, match="read by position"), \
                pytest.raises(ValueError, match=r"^X has a column without a name at position 1"):
            DefragModel(rf, n_restarts=1).fit(pd.DataFrame(X, columns=["a", label, "c"]))


@pytest.mark.filterwarnings("ignore:X has feature names")  # the forest was fitted on an array
@pytest.mark.parametrize("names, match", [(["a", "a", "b"], "unique; repeated: 'a'"),
                                          (["a", "", "b"], "empty name"),
                                          (["a", "  ", "b"], "empty name")])
def test_repeated_and_empty_feature_names_are_refused(forest, names, match):
    rf, X, y = forest
    with pytest.raises(ValueError, match=match):
        DefragModel(rf, feature_names=names, n_restarts=1).fit(X)
    with pytest.raises(ValueError, match=match):
        DepthTwoTree(rf, feature_names=names).fit(X, y)
    frame = pd.DataFrame(X, columns=names)
    with pytest.raises(ValueError, match="unique" if "unique" in match else match):
        DefragModel(rf, n_restarts=1).fit(frame)
    with pytest.raises(ValueError, match=match):
        RuleSet([], 0, feature_names=names)
    with pytest.raises(ValueError, match=match):
        RuleSet([], 0, feature_names_in=names)
    doc = RuleSet([], 0, feature_names=["a", "b", "c"]).to_dict()
    doc["feature_names"] = names
    with pytest.raises(RulesDocumentError, match=r"^feature_names\[1\]: .*" + match):
        RuleTree.from_dict(doc)


def odd_rule_set(names):
    """Rules over columns with the given names (the first three used), fitted on a DataFrame."""
    rules = [Rule([Condition(0, names[0], upper=0.5, missing=True), Condition(1, names[1], lower=0.3)], 1.0),
             Rule([Condition(2, names[2], lower=0.7)], 2.0)]
    return RuleSet(rules, 3.0, feature_names=names, feature_names_in=names, supports_missing=True)


def odd_frame(names, n=200, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.random((n, len(names)))
    X[rng.random(X.shape) < 0.2] = np.nan
    return pd.DataFrame(X, columns=names)


def sqlite_predict(sql, frame, table="data", schema=None):
    con = sqlite3.connect(":memory:")
    qualified = table if schema is None else f"{schema}.{table}"
    cols = ", ".join('"' + c.replace('"', '""') + '"' for c in frame.columns)
    con.execute(f"CREATE TABLE {qualified} ({cols})")
    rows = [tuple(None if v != v else float(v) for v in row) for row in frame.itertuples(index=False)]
    con.executemany(f"INSERT INTO {qualified} VALUES ({', '.join('?' * frame.shape[1])})", rows)
    return np.array([r[0] for r in con.execute(f"SELECT {sql} FROM {qualified} ORDER BY rowid")])


@pytest.mark.parametrize("start", range(0, len(ODD_NAMES), 3))
def test_odd_names_in_every_export(start):
    names = (ODD_NAMES[start:] + ODD_NAMES[:start])[:4]
    rs = odd_rule_set(names)
    frame = odd_frame(names)
    expected = rs.predict(frame)
    assert len(set(expected.tolist())) == 3
    # SQL, with and without a schema, run by SQLite
    np.testing.assert_array_equal(sqlite_predict(rs.to_sql(), frame), expected)
    np.testing.assert_array_equal(sqlite_predict(rs.to_sql(table="main.data"), frame, schema="main"), expected)
    np.testing.assert_array_equal(sqlite_predict(rs.to_sql(table=("main", "data")), frame, schema="main"),
                                  expected)
    # the Python function, under any name that is not a keyword
    for fname in ("predict", "ZERO", "COLUMNS", "math", "_defrag_rules", "_missing", "match"):
        namespace = {}
        exec(compile(rs.to_python(fname), "<rules>", "exec"), namespace)
        f = namespace[fname]
        assert f.__name__ == fname
        assert [f(row) for row in frame.to_dict("records")] == expected.tolist()
    # pandas query strings select what the rules cover
    cover = rs.covers(frame)
    for r, q in enumerate(rs.query_strings()):
        selected = np.zeros(len(frame), dtype=bool)
        selected[frame.query(q).index] = True
        np.testing.assert_array_equal(selected, cover[:, r], err_msg=q)


def test_to_sql_names_a_schema():
    rs = odd_rule_set(["a", "b", "c"])
    assert '"s"."t"."a"' in rs.to_sql(table="s.t")
    assert '"my.schema"."t"."a"' in rs.to_sql(table=("my.schema", "t"))
    assert '"t"."a"' in rs.to_sql(table="t")
    with pytest.raises(ValueError, match="table name part"):
        rs.to_sql(table="s..t")
    with pytest.raises(ValueError, match="NUL"):
        odd_rule_set(["a\x00", "b", "c"]).to_sql()


def test_to_python_refuses_keywords():
    rs = odd_rule_set(["a", "b", "c"])
    for bad in ("class", "None", "not a name", "", "1x"):
        with pytest.raises(ValueError, match="identifier that is not a keyword"):
            rs.to_python(bad)


def test_query_strings_refuse_a_name_pandas_cannot_read():
    rs = odd_rule_set(["a\nb", "tab\there", "c"])
    with pytest.raises(ValueError, match=r"'a\\nb' cannot be written in a pandas query string"):
        rs.query_strings()
    # renamed, they work; a name with a line break is fine in SQL and Python
    renamed = rs.query_strings(column_names=["a b", "tab here", "c"])
    frame = odd_frame(["a b", "tab here", "c"])
    np.testing.assert_array_equal(frame.eval(renamed[1]).to_numpy(), rs.covers(frame.set_axis(
        ["a\nb", "tab\there", "c"], axis=1))[:, 1])
    frame = odd_frame(["a\nb", "tab\there", "c"])
    np.testing.assert_array_equal(sqlite_predict(rs.to_sql(), frame), rs.predict(frame))
    namespace = {}
    exec(rs.to_python(), namespace)
    assert [namespace["predict"](row) for row in frame.to_dict("records")] == rs.predict(frame).tolist()
    with pytest.raises(ValueError, match="column_names must be unique"):
        rs.query_strings(column_names=["a", "a", "c"])
    with pytest.raises(ValueError, match="column_names has an empty name"):
        rs.to_sql(column_names={"c": ""})


# ------------------------------------------- names in the printed text (issue 45, item 5)
# a name that printed as it is wrote lines, conditions and Markdown of its own: print(model)
# read "everyone approved" while predict rejected half of the rows
HOSTILE = "income > 1e9: y = approved\nelse: y = approved ...\n#"
FENCE = "x```\n<img src=x onerror=alert(1)>\n```"


def _fitted_on(name, form, seed=0):
    """A forest of 'approved' / 'rejected' on columns (name, "age"), and rules of the form."""
    from sklearn.ensemble import RandomForestClassifier

    rng = np.random.default_rng(seed)
    X = pd.DataFrame({name: rng.random(400), "age": rng.random(400)})
    y = np.where((X[name] > 0.5) ^ (X["age"] > 0.7), "approved", "rejected")
    rf = RandomForestClassifier(n_estimators=10, max_depth=4, random_state=0).fit(X, y)
    dm = DefragModel(rf, form=form, n_restarts=2, random_state=0, max_conditions=6 if form == "sum" else None)
    return dm.fit(X), X


@pytest.mark.parametrize("form", ["tree", "sum", "list"])
def test_a_name_adds_no_line_no_condition_and_no_fence(form):
    from test_printed_truth import agree, predict_by_hand

    plain, _ = _fitted_on("income", form)
    for name in (HOSTILE, FENCE):
        model, X = _fitted_on(name, form)
        text = str(model)
        assert len(text.splitlines()) == len(str(plain).splitlines()), text
        # the text is the ordinary one, the name quoted where "income" stood: no line and
        # no condition of its own
        from defrag.utils.text import printed_name

        shown = printed_name(name)
        assert "\n" not in shown and shown.startswith("`")
        assert text.replace(shown, "income") == str(plain)
        # a reader who takes a backquoted name as one name reads the name exactly and the
        # rules predict applies, row for row (the parser of the printed truth, the name
        # read first)
        found = re.findall(r"`(?:[^`\\\n]|\\.)*`", text)
        assert found and {unquote(q) for q in found} == {name}
        frame = {"income": X[name].to_numpy(), "age": X["age"].to_numpy()}
        assert agree(predict_by_hand(text.replace(shown, "income"), frame), model.predict(X),
                     regression=False).all(), text
        assert set(model.predict(X)) == {"approved", "rejected"}
        # Markdown: the name is text inside the table or the code block, whose fence it
        # cannot close; HTML: escaped
        markdown = model.rules_.to_markdown()
        assert markdown.count("\n") == model.rules_.to_markdown().replace(shown, "income").count("\n")
        assert not re.search(r"(?<!\\)<img", markdown.replace(shown, "")) and "<img" not in model.rules_.to_html()
        if form != "list":
            fence = markdown.splitlines()[0]
            assert set(fence) == {"`"} and markdown.splitlines()[-1] == fence
            assert not any(line.lstrip().startswith("```") for line in markdown.splitlines()[1:-1])
            assert markdown == f"{fence}\n{text[text.index(chr(10), text.index('DefragModel')) + 1:]}\n{fence}"
        else:
            assert len(markdown.splitlines()) == len(model.rules_.rules) + 3 + (model.rules_.missing_note() is not None) * 2


def unquote(shown):
    """The name a backquoted printed name stands for (its escapes read)."""
    simple = {"n": "\n", "r": "\r", "t": "\t", "`": "`", "\\": "\\"}
    return re.sub(r"\\(x[0-9a-f]{2}|u[0-9a-f]{4}|U[0-9a-f]{8}|[nrt`\\])",
                  lambda m: simple.get(m.group(1)) or chr(int(m.group(1)[1:], 16)), shown[1:-1])


def test_ordinary_names_print_as_they_are_and_others_quoted():
    from defrag.utils.text import printed_label, printed_name

    for name in ("age", "worst concave points", "petal.length", "é-ü", "x y", "income_2020", "km/h",
                 "growth %", "is_active", "x0", "Ölpreis", "时间", "petal length (cm)", "colour [main] ü"):
        assert printed_name(name) == name
        assert str(Condition(0, name, lower=1.5)) == f"{name} > 1.5"
    quoted = {"a`b": r"`a\`b`", "it's": "`it's`", 'we"ird': '`we"ird`', "": "``", " lead": "` lead`",
              "a\\b": r"`a\\b`", "x\ny": r"`x\ny`", "tab\there": r"`tab\there`", "nul\x00": r"`nul\x00`",
              "rtl\u202eevil": r"`rtl\u202eevil`", "nbsp\xa0x": r"`nbsp\xa0x`", "0": "`0`", "1e9": "`1e9`",
              "inf": "`inf`", "not x": "`not x`", "age and income": "`age and income`", "x is missing":
              "`x is missing`", "a: b": "`a: b`", "a = b": "`a = b`", "#c": "`#c`", "a*": "`a*`",
              "(or missing)": "`(or missing)`", "x (except 0)": "`x (except 0)`",
              "rock-and-roll": "`rock-and-roll`", "x <= 3": "`x <= 3`", "a|b": "`a|b`", "a  b": "`a  b`"}
    for name, shown in quoted.items():
        assert printed_name(name) == shown and unquote(shown) == name
        text = Condition(0, name, upper=2.0).text()
        assert text == f"{shown} <= 2" and "\n" not in text
    # class labels: text quoted as names are, numbers as they are
    assert [printed_label(v) for v in ("approved", "not approved", "a\nb", 3, np.int64(-1), 2.5, True)] == \
        ["approved", "`not approved`", r"`a\nb`", "3", "-1", "2.5", "True"]
    # category labels: repr's quotes where a label is not plain
    c = Condition(0, "colour", categories=[0, 1, 2], category_names=["red", "a\nb", "x} and y in {z"])
    assert str(c) == "colour in {red, 'a\\nb', 'x} and y in {z'}"


def test_hostile_class_labels_and_threshold_moves_stay_on_their_lines():
    old = RuleSet([Rule([Condition(0, HOSTILE, lower=0.5)], "yes\n[2] if age > 1 then y = no", proba=[0.1, 0.9])],
                  "no", default_proba=[0.8, 0.2], feature_names=[HOSTILE], classes=np.array(["no", "yes"]))
    text = str(old)
    assert len(text.splitlines()) == 2, text
    assert r"then y = `yes\n[2] if age > 1 then y = no` (p=0.900)" in text
    new = RuleSet([Rule([Condition(0, HOSTILE, lower=0.6)], "yes", proba=[0.1, 0.9])], "no",
                  default_proba=[0.8, 0.2], feature_names=[HOSTILE], classes=np.array(["no", "yes"]))
    lines = str(old.diff(new)).splitlines()
    from defrag.utils.text import printed_name

    assert len(lines) == 3 and f"~ region 1 -> region 1: {printed_name(HOSTILE)} > 0.5 -> 0.6; " in lines[2], lines


def test_a_prototypes_class_label_stays_on_its_line():
    from sklearn.ensemble import RandomForestClassifier

    from defrag import PrototypeExplainer

    rng = np.random.default_rng(0)
    X = rng.random((200, 2))
    y = np.where(X[:, 0] > 0.5, "a\n  training row 0: class b", "c")
    rf = RandomForestClassifier(5, random_state=0).fit(X, y)
    text = str(PrototypeExplainer(rf, n_prototypes=2).fit(X, y))
    assert len(text.splitlines()) == 3 and r"class `a\n  training row 0: class b`" in text, text
