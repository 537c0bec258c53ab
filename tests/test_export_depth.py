"""Exports that run at every size (issue 45, finding 7): a real fit with n_regions=300 gave
SQL that SQLite refused ("parser stack overflow": a CASE nested per box, 19 deep),
``to_python`` stopped compiling at a nesting of 98 (Python's 100 levels of indentation),
pandas query strings recursed past Python's limit on else-chains near 500 (a long ``and``
chain), and a sum of 2,000 terms or a rule of 1,100 conditions was an expression deeper
than SQLite's 1,000. Every export of trees, sums and lists of such sizes must run and give
``predict``'s answer on every row (NaN, +-inf, categories, LightGBM's zero band).
"""
import re
import sqlite3

import numpy as np
import pytest

from defrag import Condition, DefragMemoryError, DefragModel, Rule, RuleSet, RuleTree, max_memory
from defrag.rules import Leaf, Node
from defrag.rules.tree_export import PYTHON_NESTING, SQL_NESTING
from test_export import _edge_frame, _edge_rules, _python_predict, _sqlite_predict

pd = pytest.importorskip("pandas")


def _boxes(regression=True, numeric=False):
    """Boxes of every condition kind (test_export's edge rules) and their encoding; numeric:
    intervals on x and "a b" only (DuckDB plans a thousand edge boxes in minutes)."""
    rules = _edge_rules(regression=regression)
    if not numeric:
        return [r.conditions for r in rules.rules], rules
    ts = np.random.default_rng(99).normal(size=40)
    return [[Condition(3, "x", lower=t, missing=k % 3 == 0)] if k % 2 else
            [Condition(3, "x", upper=t), Condition(0, "a b", lower=ts[-k])] for k, t in enumerate(ts)], rules


def _outputs(rng, n, rules):
    if rules.classes is None:
        return list(rng.normal(size=n) * 10.0 ** rng.integers(-3, 4, n))
    return list(rng.choice(rules.classes, n))


def _tree(shape, n_leaves, seed=0, regression=True):
    """A tree of n_leaves leaves over the edge boxes: "then" (each box's "then" side the
    rest of the tree), "else" (its "else" side), "random" (random splits of the leaves)."""
    rng = np.random.default_rng(seed)
    boxes, rules = _boxes(regression)
    outs = iter(_outputs(rng, n_leaves, rules))

    def box():
        return boxes[int(rng.integers(len(boxes)))]

    if shape in ("then", "else"):
        node = Leaf(next(outs))
        for _ in range(n_leaves - 1):
            node = Node(box(), node, Leaf(next(outs))) if shape == "then" else Node(box(), Leaf(next(outs)), node)
    else:  # random splits, grown without recursion: (leaves, where to attach)
        holder = [None]
        stack = [(n_leaves, holder, 0)]
        while stack:
            n, parent, slot = stack.pop()
            if n == 1:
                item = Leaf(next(outs))
            else:
                k = int(rng.integers(1, n))
                item = Node(box(), None, None)
                stack += [(k, item, "then"), (n - k, item, "otherwise")]
            if isinstance(parent, list):
                parent[slot] = item
            else:
                setattr(parent, slot, item)
        node = holder[0]
    return RuleTree([node], feature_names=rules.feature_names, classes=rules.classes, supports_missing=True,
                    encoding=rules.encoding, feature_names_in=rules.feature_names_in)


def _sum(n_terms, seed=0, regression=True, numeric=False):
    rng = np.random.default_rng(seed)
    boxes, rules = _boxes(regression, numeric)
    terms = []
    for _ in range(n_terms):
        inner = Node(boxes[int(rng.integers(len(boxes)))], Leaf(float(rng.normal())), Leaf(float(rng.normal())))
        terms.append(Node(boxes[int(rng.integers(len(boxes)))], inner, Leaf(float(rng.normal()))))
    classes = None if regression else np.array(["no", "yes"])
    base = float(rng.normal()) if regression else 0.5
    if not regression:  # probabilities that sum near 1/2, so both classes are predicted
        for t in terms:
            for lf in (t.then.then, t.then.otherwise, t.otherwise):
                lf.prediction = lf.prediction / (4 * n_terms ** 0.5)
    return RuleTree(terms, base=base, feature_names=rules.feature_names, classes=classes, supports_missing=True,
                    encoding=rules.encoding, feature_names_in=rules.feature_names_in)


def _frame(n=600, seed=0):
    return _edge_frame(n, seed)


def _duckdb_predict(rules, X):
    duckdb = pytest.importorskip("duckdb")
    con = duckdb.connect()
    con.register("data", X)
    return [r[0] for r in con.execute(f"SELECT {rules.to_sql()} FROM data").fetchall()]


def _same(got, expected):
    got = np.asarray(got, dtype=expected.dtype)
    assert np.array_equal(got, expected), np.flatnonzero(got != expected)[:10]


def _check_sql_and_python(rules, X, duckdb=True):
    """SQLite, DuckDB and the Python function give predict's value on every row."""
    expected = rules.predict(X)
    assert len(set(expected.tolist())) > 1  # the rows reach several regions
    _same(_sqlite_predict(rules, X), expected)
    if duckdb:
        _same(_duckdb_predict(rules, X), expected)
    _same(_python_predict(rules, X), expected)


def _check_queries(tree, X, leaves=None):
    """The query of each leaf (every leaf, or those given) selects exactly the rows that
    reach it."""
    X = X.reset_index(drop=True)
    reached = tree.apply(X)
    queries = tree.query_strings()
    for k in range(len(queries)) if leaves is None else leaves:
        selected = np.zeros(len(X), dtype=bool)
        selected[X.query(queries[k]).index] = True
        np.testing.assert_array_equal(selected, reached == k, err_msg=f"leaf {k}")


def _case_nesting(sql):
    """The deepest nesting of CASE ... END in SQL text."""
    depth = best = 0
    for word in re.findall(r"\b(?:CASE|END)\b", sql):
        depth += 1 if word == "CASE" else -1
        best = max(best, depth)
    return best


def _python_nesting(source):
    """The deepest indentation (in levels of four spaces) of Python source."""
    return max((len(line) - len(line.lstrip(" "))) // 4 for line in source.splitlines() if line.strip())


# ------------------------------------------------------------------- a real fit
def test_a_real_fit_of_300_regions_runs_in_sqlite_duckdb_python_and_pandas():
    """The reproduction: a random forest explained with n_regions=300 is a tree whose sides
    nest deep (a breast cancer classifier's nested 17 "then" sides; its SQL was refused).
    A classifier's same-class siblings now merge, so a regression forest of scikit-learn's
    diabetes data gives the 300 regions."""
    from sklearn.datasets import load_diabetes
    from sklearn.ensemble import RandomForestRegressor

    X, y = load_diabetes(return_X_y=True, as_frame=True)
    forest = RandomForestRegressor(n_estimators=100, random_state=5, n_jobs=1).fit(X, y)
    rules = DefragModel(forest, n_regions=300, random_state=0).fit(X).rules_
    assert rules.form == "tree" and rules.n_regions == 300
    data = X.copy()
    data[np.random.default_rng(0).random(X.shape) < 0.2] = np.nan  # missing values: NULL in SQL
    data = pd.concat([X, data], ignore_index=True)
    _check_sql_and_python(rules, data)
    _check_queries(rules, data.iloc[::4])


# ------------------------------------------------------------- trees by hand
@pytest.mark.parametrize("shape, n_leaves", [("then", 120), ("else", 2000), ("random", 3000)])
@pytest.mark.parametrize("regression", [True, False])
def test_deep_and_large_trees_run_in_sql_and_python(shape, n_leaves, regression):
    tree = _tree(shape, n_leaves, regression=regression)
    sql, source = tree.to_sql(), tree.to_python()
    # bounded whatever the tree: the tree's CASEs (and one for refusals), Python's blocks
    assert _case_nesting(sql) <= SQL_NESTING + 1
    assert _python_nesting(source) <= PYTHON_NESTING + 4
    compile(source, "<tree>", "exec")
    _check_sql_and_python(tree, _frame(2000, seed=n_leaves))


@pytest.mark.parametrize("sql_nesting, python_nesting", [(0, 0), (1, 1)])
def test_sides_written_into_their_parents_case_or_block_answer_as_nested_ones(monkeypatch, sql_nesting,
                                                                             python_nesting):
    """Past the nesting allowed, a side's leaves join the parent's CASE or block, each led
    by the side's test: with no nesting at all, SQL is one flat CASE and Python a flat run
    of ifs, and both still answer as predict."""
    from defrag.rules import tree_export

    monkeypatch.setattr(tree_export, "SQL_NESTING", sql_nesting)
    monkeypatch.setattr(tree_export, "PYTHON_NESTING", python_nesting)
    for shape, n, regression in (("random", 400, True), ("then", 60, False), ("random", 300, False)):
        tree = _tree(shape, n, seed=n, regression=regression)
        assert _case_nesting(tree.to_sql()) <= sql_nesting + 2
        assert _python_nesting(tree.to_python()) <= python_nesting + 4
        _check_sql_and_python(tree, _frame(1000, seed=n))
    _check_sql_and_python(_sum(30, seed=4, regression=False), _frame(1000, seed=4))


@pytest.mark.parametrize("regression", [True, False])
def test_sums_of_2000_terms_run_in_sql_and_python(regression):
    """(A chain of 2,000 additions is an expression 2,000 deep: SQLite and DuckDB refuse
    1,000.)"""
    X = _frame(400, seed=5)
    _check_sql_and_python(_sum(2000, regression=regression, numeric=True), X)
    _check_sql_and_python(_sum(1100, seed=1, regression=regression), X, duckdb=False)


def test_a_list_of_2000_rules_and_a_rule_of_1100_conditions_run_in_sql_and_python():
    rng = np.random.default_rng(1)
    boxes, edge = _boxes(numeric=True)
    rules = [Rule(boxes[int(rng.integers(len(boxes)))], float(v)) for v in rng.normal(size=2000)]
    # one box of 1,101 conditions (all hold where x > -1e6 and a b is present)
    wide = [Condition(3, "x", lower=-1e6 - k) for k in range(1100)] + [Condition(0, "a b", lower=-1e300)]
    rules.insert(0, Rule(wide, 99.0))
    kw = dict(supports_missing=True, encoding=edge.encoding, feature_names_in=edge.feature_names_in)
    rs = RuleSet(rules, -1.0, None, edge.feature_names, **kw)
    X = _frame(600, seed=7)
    _check_sql_and_python(rs, X)
    assert (rs.predict(X) == 99.0).any()
    tree = RuleTree([Node(wide, Leaf(99.0), Node(boxes[0], Leaf(1.0), Leaf(2.0)))], feature_names=edge.feature_names,
                    **kw)
    _check_sql_and_python(tree, X)
    _check_queries(tree, X)


# ------------------------------------------------------------- query strings
def test_query_strings_of_long_else_chains_evaluate():
    """The deepest leaves of a 600-box else chain (a query of 600 negated boxes) and of a
    then chain; every leaf of a random tree of 150 leaves."""
    X = _frame(300, seed=11)
    chain = _tree("else", 601)
    _check_queries(chain, X, leaves=[0, 300, 599, 600])
    _check_queries(_tree("then", 200, seed=2), X, leaves=[0, 198, 199])
    _check_queries(_tree("random", 150, seed=3), X)


def test_query_strings_of_a_sum_select_one_leaf_per_term():
    tree = _sum(40, seed=2)
    X = _frame(300, seed=12).reset_index(drop=True)
    reached = tree.apply(X)
    for t, queries in enumerate(tree.query_strings()):
        hits = np.zeros(len(X), dtype=np.int64)
        for k, q in enumerate(queries):
            rows = X.query(q).index.to_numpy()
            hits[rows] += 1
            assert np.all(reached[rows, t] == k)
        assert np.all(hits == 1)


def test_query_strings_of_a_huge_chain_are_refused_by_the_memory_guard_in_time():
    """Each query repeats its leaf's path: a 50,000-box chain's strings would hold 10**9
    conditions. The size is known before they are written."""
    import time

    tree = _tree("else", 50_001)
    start = time.perf_counter()
    with max_memory("1G"), pytest.raises(DefragMemoryError, match="RuleTree.query_strings"):
        tree.query_strings()
    with max_memory("1G"), pytest.raises(DefragMemoryError, match="RuleTree.to_frame"):
        tree.to_frame()
    assert time.perf_counter() - start < 30
    # the SQL and Python of the same tree are written, as long per box as a tenth of it
    small = _tree("else", 5_001)
    assert len(tree.to_sql()) < 1.2 * 10 * len(small.to_sql())
    assert len(tree.to_python()) < 1.2 * 10 * len(small.to_python())


def test_small_trees_read_as_one_case_and_a_run_of_ifs():
    """A small tree's SQL is one CASE with a WHEN per box, its Python a flat run of ifs."""
    root = Node([Condition(0, "age", lower=30.0)], Node([Condition(1, "income", upper=2.0)], Leaf(2.0), Leaf(1.0)),
                Leaf(0.0))
    tree = RuleTree([root], feature_names=["age", "income"], supports_missing=True)
    assert _case_nesting(tree.to_sql()) == 1
    assert "if x1 <= 2.0:\n            return 2.0\n        return 1.0" in tree.to_python()
