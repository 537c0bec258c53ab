"""The printed rules are the whole truth (issue 22, item 2): the text of a fitted model's
rules, parsed back into conditions and applied by hand to rows with 20% missing values,
gives what ``predict`` gives, row for row, for XGBoost, LightGBM and scikit-learn sources,
regression and classification, fitted with and without missing values; categorical sets
and LightGBM's zero-as-missing included.

The parser reads only the text (``str(model)``): the rule lines, the default and the note
below them on missing values. The rows are training rows with values knocked out, so
that each printed threshold splits them as the real one does (conditions.printed_between).
"""
import re

import numpy as np
import pytest

from defrag import DefragModel

NAN_SHARE = 0.2

# ---------------------------------------------------------------- parsing the text
_RULE = re.compile(r"^\[\s*(\d+)\] if (.*) then y = (.*?)   \(support \d+, weight [-\d.e+]+\)$")
_DEFAULT = re.compile(r"^\[\s*\*\] otherwise y = (.*)$")
_SUFFIX = re.compile(r"(\*| \(or missing\)| \(or missing or 0\)| \(except 0\))$")
_NUMBER = r"[-+]?(?:\d+\.?\d*(?:e[-+]?\d+)?|inf)"
_BETWEEN = re.compile(rf"^({_NUMBER}) (<=?) (.+) (<=?) ({_NUMBER})$")
_ONE_SIDE = re.compile(rf"^(.+) (>=|>|<=|<) ({_NUMBER})$")
_SET = re.compile(r"^(.+?) (not in|in) \{(.*)\}$")
_IS_MISSING = re.compile(r"^(.+) is missing( or 0)?$")
_NOT_MISSING = re.compile(r"^(.+) is (not missing|any number)$")


def split_conditions(text):
    """The conditions of one rule: split at ' and ' outside braces and quotes."""
    parts, depth, quote, start, i = [], 0, None, 0, 0
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 1
            elif ch == quote:
                quote = None
        elif ch in "'\"" and depth:
            quote = ch
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        elif depth == 0 and text.startswith(" and ", i):
            parts.append(text[start:i])
            start = i + 5
            i += 4
        i += 1
    parts.append(text[start:])
    return parts


def split_labels(body):
    """The labels of a printed set (quoted with repr where they need it)."""
    import ast

    labels, i = [], 0
    while i < len(body):
        if body[i] in "'\"":
            j = i + 1
            while body[j] != body[i]:
                j += 2 if body[j] == "\\" else 1
            labels.append(ast.literal_eval(body[i:j + 1]))
            i = j + 1
        else:
            j = body.find(", ", i)
            j = len(body) if j < 0 else j
            labels.append(body[i:j])
            i = j
        if body.startswith(", ", i):
            i += 2
    return labels


class Parsed:
    """One printed condition: a test on present values, and how it treats a missing
    value (and zero, where the text says zero is missing or excluded)."""

    def __init__(self, text, marked_missing):
        self.text = text
        suffix = _SUFFIX.search(text)
        self.or_missing = self.zero_missing = self.except_zero = False
        if suffix:
            text = text[:suffix.start()]
            s = suffix.group(1)
            self.or_missing = s in ("*", " (or missing)", " (or missing or 0)")
            self.zero_missing = s == " (or missing or 0)"
            self.except_zero = s == " (except 0)"
            assert s != "*" or marked_missing, "a condition carries the mark, but no note explains it"
        self.kind = None
        m = _IS_MISSING.match(text)
        if m:
            self.kind, self.name = "is_missing", m.group(1)
            self.or_missing, self.zero_missing = True, bool(m.group(2))
            return
        m = _NOT_MISSING.match(text)
        if m:  # any present value ("not missing"; "any number" as "(or missing)" says)
            self.kind, self.name, self.tests = "interval", m.group(1), []
            return
        m = _SET.match(text)
        if m:
            self.kind, self.name = "set", m.group(1)
            self.negated = m.group(2) == "not in"
            self.labels = split_labels(m.group(3))
            return
        m = _BETWEEN.match(text)
        if m:
            self.kind, self.name = "interval", m.group(3)
            self.tests = [(">=" if m.group(2) == "<=" else ">", float(m.group(1))),
                          (m.group(4), float(m.group(5)))]
            return
        m = _ONE_SIDE.match(text)
        assert m, f"cannot parse the condition {text!r}"
        self.kind, self.name = "interval", m.group(1)
        self.tests = [(m.group(2), float(m.group(3)))]

    def holds(self, column, known=None):
        """Truth values on a column of the data as the user holds it (a NumPy array of
        numbers, or of labels for a categorical column); known: the labels seen in
        training, where the text says that other labels count as missing."""
        values = np.asarray(column, dtype=object)
        missing = np.array([v is None or (isinstance(v, float) and v != v) for v in values])
        if known is not None:
            missing |= np.array([_label_text(v) not in known for v in values])
        zero = np.array([not m and isinstance(v, (int, float, np.number)) and v == 0
                         for v, m in zip(values, missing)])
        if self.kind == "is_missing":
            present = np.zeros(len(values), dtype=bool)
        elif self.kind == "set":
            inside = np.array([not m and _label_text(v) in self.labels for v, m in zip(values, missing)])
            present = ~inside if self.negated else inside
        else:
            x = np.where(missing, 0.0, values).astype(np.float64)
            present = np.ones(len(values), dtype=bool)
            ops = {">": np.greater, ">=": np.greater_equal, "<": np.less, "<=": np.less_equal}
            for op, t in self.tests:
                present &= ops[op](x, t)
        if self.except_zero:
            present &= ~zero
        is_missing = missing | (zero if self.zero_missing else False)
        return np.where(is_missing, self.or_missing, present & ~missing)


def _label_text(v):
    """A value as its label prints: integer-valued numbers without '.0'."""
    if isinstance(v, (float, np.floating)) and float(v).is_integer():
        return str(int(v))
    return str(v)


def parse_rules(text):
    """[(conditions, prediction text)] of each rule in order, the default's prediction
    text, and whether unknown categories count as missing, from the printed rules."""
    lines = text.splitlines()
    marked = any(line.startswith("* or missing") for line in lines)
    unknown_missing = any(line.endswith("a category the model was not trained with counts as missing")
                          for line in lines)
    rules, default = [], None
    for line in lines:
        m = _RULE.match(line)
        if m:
            conds = [] if m.group(2) == "always" else [Parsed(c, marked) for c in split_conditions(m.group(2))]
            rules.append((conds, m.group(3)))
            continue
        m = _DEFAULT.match(line)
        if m:
            default = m.group(1)
    assert default is not None, text
    return rules, default, unknown_missing


_LEAF_TAIL = re.compile(r"   \(support \d+(, [\d.]+%)?\)$")
_BRANCH = re.compile(r"^( *)(if|elif) (.*?):(?: (.*))?$")
_ELSE = re.compile(r"^( *)else: (.*)$")
_PART = re.compile(r"^  \+ part \d+:$")
_SUM_HEAD = re.compile(r"^(y|p\(.*\)) = (\S+)$")


def _leaf(text):
    """A leaf's printed value: its text without the support (and a tree's "y = ")."""
    text = _LEAF_TAIL.sub("", text).strip()
    return text[4:] if text.startswith("y = ") else text


def parse_block(lines, i, indent, marked):
    """A printed tree from lines[i] at this indent: ([(conditions, then), ...], else leaf
    text, next line), then a leaf text or a nested block."""
    branches = []
    while i < len(lines):
        m = _BRANCH.match(lines[i])
        if m and len(m.group(1)) == indent:
            conds = [Parsed(c, marked) for c in split_conditions(m.group(3))]
            if m.group(4):
                branches.append((conds, _leaf(m.group(4))))
                i += 1
            else:
                block, i = parse_block(lines, i + 1, indent + 4, marked)
                branches.append((conds, block))
            continue
        m = _ELSE.match(lines[i])
        assert m and len(m.group(1)) == indent, f"expected an else at indent {indent}: {lines[i]!r}"
        return (branches, _leaf(m.group(2))), i + 1
    raise AssertionError("a block without its else")


def apply_block(block, frame, rows, known):
    """The leaf text of each row (indices rows) of frame through a parsed block."""
    branches, other = block
    out = np.empty(len(rows), dtype=object)
    left = np.ones(len(rows), dtype=bool)
    for conds, then in branches:
        holds = left.copy()
        for c in conds:
            col = np.asarray(frame[c.name], dtype=object)[rows]
            holds &= c.holds(col, None if known is None or c.kind != "set" else known.get(c.name))
        if isinstance(then, tuple):
            out[holds] = apply_block(then, frame, rows[holds], known)
        else:
            out[holds] = then
        left &= ~holds
    out[left] = other
    return out


def predict_by_hand(text, frame, known=None):
    """The printed explanation applied to the rows of frame (a dict of named columns): a
    list's first rule that holds, else its default; a tree's branches; a sum's first
    number plus one value of each part. known: the training labels of the categorical
    columns (the user knows them)."""
    lines = text.splitlines()
    marked = any(line.startswith("* or missing") for line in lines)
    unknown_missing = any(line.endswith("a category the model was not trained with counts as missing")
                          for line in lines)
    known = known if unknown_missing else None
    n = len(next(iter(frame.values())))
    body = [line for line in lines if line.startswith(("if ", "elif ", "else", "    ", "  + ", "y = ", "p("))]
    if body and body[0].startswith("if "):  # a tree
        block, _ = parse_block(body, 0, 0, marked)
        return apply_block(block, frame, np.arange(n), known)
    if body and _SUM_HEAD.match(body[0]):  # a sum of trees
        head = _SUM_HEAD.match(body[0])
        decimals = "." in head.group(2) and len(head.group(2).split(".")[1]) == 4 and head.group(1) != "y"
        total = np.full(n, float(head.group(2)))
        i = 1
        while i < len(body):
            assert _PART.match(body[i]), body[i]
            block, i = parse_block(body, i + 1, 8, marked)
            total = total + np.array([float(v) for v in apply_block(block, frame, np.arange(n), known)])
        if head.group(1) == "y":
            return np.array([repr(float(v)) for v in total], dtype=object)
        rule = next(re.search(r"y = (.*) where p\(.*\) > 0\.5, else (.*?)\.?$", line) for line in lines
                    if " where p(" in line)
        del decimals
        # the values are multiples of 1e-4: their sum in those units is the text's, exactly
        second = np.rint(total * 10_000) > 5_000
        return np.where(second, rule.group(1), rule.group(2)).astype(object)
    rules, default, unknown_missing = parse_rules(text)
    known = known if unknown_missing else None
    n = len(next(iter(frame.values())))
    out = np.array([default] * n, dtype=object)
    done = np.zeros(n, dtype=bool)
    for conds, prediction in rules:
        holds = np.ones(n, dtype=bool)
        for c in conds:
            holds &= c.holds(frame[c.name], None if known is None or c.kind != "set" else known.get(c.name))
        out[holds & ~done] = prediction
        done |= holds
    return out


def agree(printed, predicted, regression):
    """Row-wise agreement of printed predictions (text) with predict's values."""
    if regression:
        values = np.array([float(p) for p in printed])
        return np.isclose(values, predicted.astype(float), rtol=1e-5, atol=1e-12)
    return np.array([p.split(" (p=")[0] == str(q) for p, q in zip(printed, predicted)])


# -------------------------------------------------------------------- the cases
def numeric_data(regression, nan_at_fit, seed=0, n=400):
    rng = np.random.default_rng(seed)
    X = rng.random((n, 4))
    signal = np.sin(4 * X[:, 0]) + 2 * (X[:, 1] > 0.4) * X[:, 2] - X[:, 3]
    y = signal + 0.05 * rng.standard_normal(n) if regression else (signal > np.median(signal)).astype(int)
    if nan_at_fit:
        X[rng.random(X.shape) < 0.1] = np.nan
    return X, y


def knock_out(X, seed=1, zero=False):
    """Training rows with 20% of the values missing (and, with zero, 10% set to 0)."""
    rng = np.random.default_rng(seed)
    X = np.array(X, dtype=np.float64)
    if zero:
        X[rng.random(X.shape) < 0.1] = 0.0
    X[rng.random(X.shape) < NAN_SHARE] = np.nan
    return X


def source_model(library, regression, nan_at_fit, X, y):
    if library == "xgboost":
        xgb = pytest.importorskip("xgboost")
        cls = xgb.XGBRegressor if regression else xgb.XGBClassifier
        return cls(n_estimators=15, max_depth=3, n_jobs=1, random_state=0).fit(X, y)
    if library == "lightgbm":
        lgb = pytest.importorskip("lightgbm")
        cls = lgb.LGBMRegressor if regression else lgb.LGBMClassifier
        return cls(n_estimators=15, num_leaves=6, min_child_samples=10, n_jobs=1, verbose=-1,
                   random_state=0).fit(X, y)
    if library == "hist":
        from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor

        cls = HistGradientBoostingRegressor if regression else HistGradientBoostingClassifier
        return cls(max_iter=15, max_leaf_nodes=6, random_state=0).fit(X, y)
    from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

    cls = RandomForestRegressor if regression else RandomForestClassifier
    return cls(n_estimators=15, max_depth=4, random_state=0).fit(X, y)


def check_truthful(model, frame, X_predict, regression, known=None):
    text = str(model)
    predicted = model.predict(X_predict)
    np.testing.assert_array_equal(predicted, model.rules_.predict(X_predict))
    ok = agree(predict_by_hand(text, frame, known), predicted, regression)
    assert ok.all(), (f"the printed rules disagree with predict on {np.count_nonzero(~ok)} of "
                      f"{ok.size} rows:\n{text}")


@pytest.mark.parametrize("nan_at_fit", [False, True], ids=["complete", "nan"])
@pytest.mark.parametrize("regression", [True, False], ids=["regression", "classification"])
@pytest.mark.parametrize("library", ["xgboost", "lightgbm", "hist", "forest"])
def test_printed_rules_predict_as_predict_on_missing_values(library, regression, nan_at_fit):
    X, y = numeric_data(regression, nan_at_fit)
    model = DefragModel(source_model(library, regression, nan_at_fit, X, y), n_restarts=2,
                        random_state=0).fit(X)
    names = model.rules_.feature_names
    # the training rows, and new rows (values between a printed threshold and the one the
    # fit found would read differently were they not the same number)
    for X_test in (knock_out(X), knock_out(np.random.default_rng(7).random((2000, X.shape[1])), seed=2)):
        check_truthful(model, {n: X_test[:, d] for d, n in enumerate(names)}, X_test, regression)


def test_lightgbm_zero_as_missing_prints_the_truth():
    lgb = pytest.importorskip("lightgbm")
    X, y = numeric_data(True, False)
    X = np.where(X < 0.15, 0.0, X)  # zeros the model reads as missing
    source = lgb.LGBMRegressor(n_estimators=15, num_leaves=6, min_child_samples=10, zero_as_missing=True,
                               n_jobs=1, verbose=-1, random_state=0).fit(X, y)
    model = DefragModel(source, n_restarts=2, random_state=0, form="list").fit(X)
    assert any(c.zero_missing for r in model.rules_.rules for c in r.conditions)
    X_test = knock_out(X, zero=True)
    check_truthful(model, {n: X_test[:, d] for d, n in enumerate(model.rules_.feature_names)}, X_test, True)


COLOURS = ["red", "green", "blue", "grey", "white"]


def categorical_data(n=500, seed=0):
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(seed)
    colour = rng.choice(COLOURS, n)
    x = rng.random(n)
    y = ((np.isin(colour, ["red", "blue"])) ^ (x > 0.5)).astype(int)
    frame = pd.DataFrame({"colour": pd.Categorical(colour, categories=COLOURS), "x": x})
    return frame, y


def knock_out_frame(frame, seed=1, unknown=None):
    """frame with 20% of each column missing, and (unknown) 5% of the colours a label
    the model never saw."""
    rng = np.random.default_rng(seed)
    frame = frame.copy()
    if unknown is not None:
        frame["colour"] = frame["colour"].cat.add_categories([unknown])
        frame.loc[rng.random(len(frame)) < 0.05, "colour"] = unknown
    for col in frame.columns:
        frame.loc[rng.random(len(frame)) < NAN_SHARE, col] = np.nan
    return frame


def frame_columns(frame):
    return {c: np.asarray(frame[c].astype(object).where(frame[c].notna(), np.nan)) for c in frame.columns}


@pytest.mark.parametrize("form", ["auto", "list"])
@pytest.mark.parametrize("library", ["xgboost", "lightgbm", "hist"])
def test_categorical_sets_print_the_truth(library, form):
    frame, y = categorical_data()
    if library == "xgboost":
        xgb = pytest.importorskip("xgboost")
        source = xgb.XGBClassifier(n_estimators=15, max_depth=3, enable_categorical=True, tree_method="hist",
                                   n_jobs=1, random_state=0).fit(frame, y)
    elif library == "lightgbm":
        lgb = pytest.importorskip("lightgbm")
        source = lgb.LGBMClassifier(n_estimators=15, num_leaves=6, min_child_samples=10, min_data_per_group=5,
                                    cat_smooth=1, n_jobs=1, verbose=-1, random_state=0).fit(frame, y)
    else:
        from sklearn.ensemble import HistGradientBoostingClassifier

        source = HistGradientBoostingClassifier(max_iter=15, categorical_features="from_dtype",
                                                random_state=0).fit(frame, y)
    model = DefragModel(source, n_restarts=2, random_state=0, form=form).fit(frame)
    conditions = [c for nd in model.rules_.nodes() for c in nd.conditions] if form == "auto" else \
        [c for r in model.rules_.rules for c in r.conditions]
    assert any(c.is_set for c in conditions), str(model)
    # XGBoost refuses a category it was not trained with (predict raises): none there
    test = knock_out_frame(frame, unknown=None if library == "xgboost" else "purple")
    check_truthful(model, frame_columns(test), test, False, known={"colour": set(COLOURS)})


def test_lightgbm_category_codes_print_the_truth():
    lgb = pytest.importorskip("lightgbm")
    rng = np.random.default_rng(0)
    n = 500
    code = rng.integers(0, 6, n).astype(float)
    x = rng.random(n)
    y = ((code % 3 == 0) ^ (x > 0.6)).astype(int)
    X = np.column_stack([code, x])
    source = lgb.LGBMClassifier(n_estimators=15, num_leaves=6, min_child_samples=10, min_data_per_group=5,
                                cat_smooth=1, n_jobs=1, verbose=-1, random_state=0)
    source.fit(X, y, categorical_feature=[0])
    model = DefragModel(source, n_restarts=2, random_state=0, form="list").fit(X)
    assert any(c.is_set for r in model.rules_.rules for c in r.conditions), str(model)
    X_test = knock_out(X)
    X_test[np.random.default_rng(2).random(len(X_test)) < 0.05, 0] = 9.0  # a code never seen: not in any set
    # (were the text to say that unknown categories count as missing, code 9 would be read so)
    check_truthful(model, {n: X_test[:, d] for d, n in enumerate(model.rules_.feature_names)}, X_test, False,
                   known={"x0": {str(k) for k in range(6)}})


# ------------------------------------------------------------ the printed form
def test_listing_marks_missing_values_unseen_in_training():
    from defrag.rules import Condition, Rule, RuleSet

    seen = Condition(0, "a", upper=0.5, missing=True, missing_seen=True)
    unseen = Condition(1, "b", lower=0.35, missing=True, missing_seen=False)
    plain = Condition(1, "b", upper=0.2)
    rs = RuleSet([Rule([seen, unseen], 0), Rule([plain], 1)], 2, feature_names=["a", "b"],
                 supports_missing=True)
    lines = str(rs).splitlines()
    assert lines[0].startswith("[1] if a <= 0.5 (or missing) and b > 0.35* then y = 0")
    assert lines[1].startswith("[2] if b <= 0.2 then y = 1")
    assert lines[-1] == ('* or missing (none was missing there in training); a missing value fails '
                         'every condition without * or "(or missing)"')
    # a condition on its own says it in full; so do the rule and the table's text
    assert str(unseen) == "b > 0.35 (or missing)"
    assert rs.rules[0].condition_text() == "a <= 0.5 (or missing) and b > 0.35 (or missing)"
    # nothing to say: no note
    assert str(RuleSet([Rule([plain], 1)], 2, feature_names=["a", "b"], supports_missing=True)).count("\n") == 1
    # a "not in" set that fails on a missing value is said once
    negated = Condition(0, "a", categories=[1, 2], negated=True)
    text = str(RuleSet([Rule([negated], 1)], 2, feature_names=["a", "b"], supports_missing=True))
    assert text.splitlines()[-1] == 'a missing value fails every condition without "(or missing)"'


def test_issue_example_xgboost_classifier_on_a_missing_b():
    """The issue's example: rules on a, b from an XGBoost classifier fitted without
    missing values; the row a=0.502, b=NaN."""
    xgb = pytest.importorskip("xgboost")
    rng = np.random.default_rng(3)
    X = rng.random((600, 2))
    y = ((X[:, 0] > 0.5) & (X[:, 1] < 0.35)).astype(int)
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(X, columns=["a", "b"])
    model = DefragModel(xgb.XGBClassifier(n_estimators=15, max_depth=3, n_jobs=1, random_state=0).fit(frame, y),
                        n_restarts=2, random_state=0).fit(frame)
    test = frame.copy()
    test.loc[rng.random(len(test)) < NAN_SHARE, "b"] = np.nan
    test.loc[rng.random(len(test)) < NAN_SHARE, "a"] = np.nan
    check_truthful(model, frame_columns(test), test, False)


def test_unknown_categories_are_said_where_labels_are_known():
    from defrag.rules import Condition, Rule, RuleSet
    from defrag.splits.inputs import InputEncoding

    enc = InputEncoding(2, categorical=[True, True], categories=[np.array(["a", "b"], dtype=object), None])
    labelled = Condition(0, "x0", categories=[0], category_names=["a", "b"], missing=True)
    coded = Condition(1, "x1", categories=[2], missing=True)
    note = "a category the model was not trained with counts as missing"
    for conds, said in (([labelled], True), ([coded], False)):
        rs = RuleSet([Rule(conds, 1)], 0, feature_names=["x0", "x1"], supports_missing=True, encoding=enc)
        assert str(rs).endswith(note) == said, str(rs)
    strict = InputEncoding(2, categorical=[True, True], categories=enc.categories, unknown="error")
    rs = RuleSet([Rule([labelled], 1)], 0, feature_names=["x0", "x1"], supports_missing=True, encoding=strict)
    assert note not in str(rs)  # XGBoost refuses such a category: predict raises


@pytest.mark.parametrize("budget", [None, 3, 8], ids=["default", "budget3", "budget8"])
@pytest.mark.parametrize("regression", [True, False], ids=["regression", "classification"])
@pytest.mark.parametrize("library", ["lightgbm", "forest"])
def test_printed_trees_and_sums_predict_as_predict(library, regression, budget):
    """Trees of rules and sums of trees (issue 36): the text, parsed and applied by hand
    to rows with missing values, is predict."""
    X, y = numeric_data(regression, nan_at_fit=True)
    model = DefragModel(source_model(library, regression, True, X, y), n_restarts=2, max_conditions=budget,
                        random_state=0).fit(X)
    assert model.rules_.form in ("tree", "sum")
    if budget is not None:
        assert model.n_conditions_ <= budget
    names = model.rules_.feature_names
    for X_test in (knock_out(X), knock_out(np.random.default_rng(7).random((2000, X.shape[1])), seed=2)):
        check_truthful(model, {n: X_test[:, d] for d, n in enumerate(names)}, X_test, regression)
