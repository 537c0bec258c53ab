"""Crafted rule-tree and sum documents the reader used to accept (issue 45, finding 6 and
the documents' and diff's part of finding 9): what the reader accepts predicts, prints,
exports and diffs alike, in time and memory linear in its size, under the memory guard;
what it cannot hold exactly it refuses with the JSON path named."""
import copy
import json
import time
import tracemalloc

import numpy as np
import pytest
from sklearn.datasets import make_friedman1
from sklearn.ensemble import RandomForestRegressor

from defrag import DefragModel, DefragMemoryError, max_memory
from defrag.rules import Leaf, Node, RulesDocumentError, RuleTree, from_json
from defrag.rules import explanation as reader_module
from defrag import Condition, Rule, RuleSet


@pytest.fixture(scope="module")
def friedman():
    X, y = make_friedman1(400, random_state=0)
    forest = RandomForestRegressor(n_estimators=20, random_state=0).fit(X, y)
    return X, y, forest


@pytest.fixture(scope="module")
def sum_document(friedman):
    X, y, forest = friedman
    return json.loads(DefragModel(forest, max_conditions=7, form="sum").fit(X, y).rules_.to_json())


@pytest.fixture(scope="module")
def tree_document(friedman):
    X, y, forest = friedman
    return json.loads(DefragModel(forest, form="tree").fit(X, y).rules_.to_json())


def refused(doc, path):
    with pytest.raises(RulesDocumentError) as info:
        from_json(json.dumps(doc))
    assert info.value.path == path, str(info.value)
    return str(info.value)


def traced(fn):
    """(fn(), the peak of the memory it allocated)."""
    tracemalloc.start()
    try:
        return fn(), tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def balanced(depth, lo=0.0, hi=1.0):
    """A complete tree of boxes on x0 over [lo, hi): 2**depth - 1 boxes."""
    if depth == 0:
        return Leaf((lo + hi) / 2)
    mid = (lo + hi) / 2
    return Node([Condition(0, "x0", upper=mid)], balanced(depth - 1, lo, mid), balanced(depth - 1, mid, hi))


# ------------------------------------------------------------------- memory and time
def test_predict_of_a_large_tree_takes_its_output_and_a_bounded_block(monkeypatch):
    tree = from_json(RuleTree([balanced(12)], feature_names=["x0", "x1"]).to_json())  # 4,095 boxes
    X = np.random.RandomState(0).rand(20_000, 2)
    monkeypatch.setattr(reader_module, "ROUTE_BLOCK_BYTES", 1 << 20)
    p, peak = traced(lambda: tree.predict(X))
    # rows x boxes booleans would be 82 MB
    assert peak < 6 * 2**20, peak
    region = np.floor(X[:, 0] * 2**12).astype(np.int64)  # (x0's interval, in reading order)
    np.testing.assert_array_equal(p, tree.predictions()[region])
    namespace = {}
    exec(tree.to_python(), namespace)
    assert [namespace["predict"](list(x)) for x in X[:300]] == list(p[:300])
    np.testing.assert_array_equal(tree.apply(X), np.floor(X[:, 0] * 2**12))


def test_an_output_past_the_memory_guard_is_refused_before_it_is_allocated():
    tree = RuleTree([balanced(10)], feature_names=["x0", "x1"])  # 1,024 leaves
    X = np.random.RandomState(0).rand(100_000, 2)
    with max_memory("50M"), pytest.raises(DefragMemoryError, match="RuleTree.covering"):
        tree.covering(X)  # 100,000 x 1,023 booleans (its boxes)


def test_a_sum_of_many_terms_predicts_without_rows_by_terms_of_items(sum_document):
    doc = copy.deepcopy(sum_document)
    doc["nodes"] = [{"prediction": 0.001, "support": 1}] * 20_000
    doc["terms"] = list(range(20_000))
    doc["decimals"] = 3
    started = time.perf_counter()
    tree = from_json(json.dumps(doc))
    assert time.perf_counter() - started < 10  # (a quadratic check of the roots took minutes at 100,000)
    X = np.random.RandomState(0).rand(500, 10)
    p, peak = traced(lambda: tree.predict(X))
    assert peak < 48 * 2**20, peak  # rows x terms items were 80 MB, and a copy per term
    # base + 20,000 x 0.001, added in units of 0.001 (decimals 3)
    np.testing.assert_array_equal(p, np.full(500, (round(tree.base * 1000) + 20_000) / 1000))


def test_the_roots_of_many_terms_are_checked_in_linear_time(sum_document):
    doc = copy.deepcopy(sum_document)
    n = 100_000
    doc["nodes"] = [{"prediction": 0.0, "support": 1}] * n
    doc["terms"] = list(range(n))
    doc["terms"][-1] = 0  # a root twice: found without a search of the roots per term
    started = time.perf_counter()
    refused(doc, f"terms[{n - 1}]")
    assert time.perf_counter() - started < 10


# ------------------------------------------------------------------------ the diff
def many_parts(n_parts, shift=0.0, seed=0):
    """A sum of n_parts one-box parts over ten features, thresholds moved by shift."""
    rng = np.random.RandomState(seed)
    terms = []
    for p in range(n_parts):
        d = p % 10
        lower = round(float(rng.rand()), 3) + shift
        terms.append(Node([Condition(d, f"x{d}", lower=lower)], Leaf(0.001), Leaf(-0.001)))
    return RuleTree(terms, base=1.0, feature_names=[f"x{d}" for d in range(10)], decimals=3)


def test_the_diff_of_two_sums_of_many_parts_is_linear(sum_document):
    old, new = many_parts(2000), many_parts(2000, shift=0.001)
    started = time.perf_counter()
    d, peak = traced(lambda: old.diff(new))
    assert time.perf_counter() - started < 20  # 114 s when every part was scored against every part
    assert peak < 100 * 2**20, peak  # 1.4 GB
    # every part pairs with the one of its feature and threshold: none added or removed
    assert not d.added and not d.removed and len(d.kept) + len(d.changed) == 4000
    # alike parts, every one sharing its description with all the others
    same = RuleTree([Node([Condition(0, "x0", lower=0.5)], Leaf(1.0), Leaf(2.0))] * 3000, base=0.0,
                    feature_names=["x0"])
    started = time.perf_counter()
    d = same.diff(same)
    assert time.perf_counter() - started < 20
    assert len(d.kept) == 6000 and all(x["old_part"] == x["new_part"] for x in d.kept)


def test_the_diff_counts_the_regions_it_compares(tmp_path):
    old, new = many_parts(70), many_parts(70, shift=0.001)
    d = old.diff(new)
    doc = d.to_dict()
    # 70 parts of two regions: 140 regions listed, not 2**70 combinations (nor their overflow, 0)
    assert doc["old"]["n_regions"] == doc["new"]["n_regions"] == 140
    assert len(d.kept) + len(d.changed) + len(d.removed) == 140
    assert str(d).splitlines()[0] == ("old: sum of 70 parts with 140 regions in all; "
                                      "new: sum of 70 parts with 140 regions in all")
    tree = RuleTree([balanced(3)], feature_names=["x0", "x1"])
    assert str(tree.diff(tree)).splitlines()[0] == "old: tree of 8 regions; new: tree of 8 regions"


def test_an_infinite_prediction_writes_a_diff_in_strict_json():
    rules = RuleSet([Rule([Condition(0, "x0", upper=0.5)], float("inf"))], -float("inf"))
    other = RuleSet([Rule([Condition(0, "x0", upper=0.6)], 1.0)], 0.0)
    d = json.loads(rules.diff(other, np.array([[0.1], [0.55], [0.9]])).to_json())
    assert d["changed"][0]["old_prediction"] == "inf"


def test_cli_diff_checks_its_options_before_it_reads_a_file(tmp_path, capsys):
    from defrag import cli

    tree = RuleTree([balanced(2)], feature_names=["x0", "x1"])
    (tmp_path / "a.json").write_text(tree.to_json())
    missing = str(tmp_path / "no such data.csv")
    for tol in ("nan", "inf", "-1"):
        assert cli.main(["diff", str(tmp_path / "a.json"), str(tmp_path / "a.json"), missing, f"--tol={tol}"]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "--tol must be a finite number >= 0" in err, err


# -------------------------------------------------------------- what the reader refuses
@pytest.mark.parametrize("change, path", [
    ({"decimals": 18}, "base"), ({"decimals": 19}, "base"), ({"decimals": 300}, "base"),
    ({"decimals": 0, "base": 1e308}, "base"),
])
def test_a_sum_whose_units_overflow_is_refused(sum_document, change, path):
    message = refused(dict(sum_document, **change), path)
    assert "2**53 units" in message or "range" in message


def test_a_sum_of_parts_whose_units_add_past_the_limit_is_refused(sum_document):
    doc = copy.deepcopy(sum_document)
    doc["decimals"] = 0
    doc["base"] = 0.0
    for item in doc["nodes"]:
        if "prediction" in item:
            item["prediction"] = 2.0**52 + 2.0**50  # each value holds; base + the parts' largest do not
    assert "add up to" in refused(doc, "decimals")
    value = next(i for i, item in enumerate(doc["nodes"]) if "prediction" in item)
    doc["nodes"][value]["prediction"] = 2.0**60
    refused(doc, f"nodes[{value}].prediction")
    # each number and their total hold in units of 10**300, but the total is past a double
    doc["decimals"] = -300
    doc["base"] = 1.7e308
    for item in doc["nodes"]:
        if "prediction" in item:
            item["prediction"] = 1e308
    assert "range" in refused(doc, "decimals")


def test_what_the_reader_accepts_of_a_sum_predicts_as_it_prints(sum_document, friedman):
    X = friedman[0][:50]
    for decimals in (2, 6, 12):
        tree = from_json(json.dumps(dict(sum_document, decimals=decimals)))
        namespace = {}
        exec(tree.to_python(), namespace)
        assert list(tree.predict(X)) == [namespace["predict"](list(x)) for x in X]


def test_an_infinite_leaf_or_label_is_refused(tree_document):
    doc = copy.deepcopy(tree_document)
    leaf = next(i for i, item in enumerate(doc["nodes"]) if "prediction" in item)
    for value in ("inf", "-inf"):
        doc["nodes"][leaf]["prediction"] = value
        refused(doc, f"nodes[{leaf}].prediction")
    classes = RuleTree([Node([Condition(0, "x0", upper=0.5)], Leaf(1.0, [1.0, 0.0]), Leaf(2.0, [0.0, 1.0]))],
                       classes=np.array([1.0, 2.0]), feature_names=["x0"]).to_dict()
    classes["classes"] = [1.0, "inf"]
    refused(classes, "classes[1]")


def test_the_cli_diff_of_an_infinite_leaf_is_one_line(tmp_path, capsys, tree_document):
    from defrag import cli
    import pandas as pd

    doc = copy.deepcopy(tree_document)
    leaf = next(i for i, item in enumerate(doc["nodes"]) if "prediction" in item)
    doc["nodes"][leaf]["prediction"] = "inf"
    (tmp_path / "old.json").write_text(json.dumps(tree_document))
    (tmp_path / "new.json").write_text(json.dumps(doc))
    pd.DataFrame(np.random.RandomState(0).rand(20, 10), columns=[f"x{d}" for d in range(10)]).to_csv(
        tmp_path / "d.csv", index=False)
    assert cli.main(["diff", str(tmp_path / "old.json"), str(tmp_path / "new.json"), str(tmp_path / "d.csv"),
                     "--json"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"nodes[{leaf}].prediction" in err, err


def test_a_category_set_on_a_numeric_feature_and_a_bound_on_labels_are_refused(tree_document):
    doc = copy.deepcopy(tree_document)
    cond = doc["nodes"][0]["conditions"][0]
    feature = cond["feature"]
    cond.update(lower=None, upper=None, printed_lower=None, printed_upper=None, codes=[1, 2])
    assert "reads as a number" in refused(doc, "nodes[0].conditions[0].codes")
    doc = copy.deepcopy(tree_document)
    doc["encoding"]["categorical"][feature] = True
    doc["encoding"]["categories"][feature] = {"dtype": "object", "values": ["a", "b", "c"]}
    bound = "lower" if doc["nodes"][0]["conditions"][0]["lower"] is not None else "upper"
    assert "category labels" in refused(doc, f"nodes[0].conditions[0].{bound}")
    # category sets on a categorical feature read back
    for node in doc["nodes"]:
        for c in node.get("conditions", ()):
            if c["feature"] == feature:
                c.update(lower=None, upper=None, printed_lower=None, printed_upper=None, codes=[1, 2])
    assert from_json(json.dumps(doc)).nodes()[0].conditions[0].is_set


def test_a_rule_tree_is_schema_version_2(tree_document):
    refused(dict(tree_document, schema_version=1), "schema_version")
    no_version = dict(tree_document)
    del no_version["schema_version"]
    assert str(from_json(json.dumps(no_version))) == str(from_json(json.dumps(tree_document)))


def test_a_repeated_key_is_refused_with_its_path(tree_document):
    text = json.dumps(tree_document)
    leaf = next(i for i, item in enumerate(tree_document["nodes"]) if "prediction" in item)
    first = json.dumps(tree_document["nodes"][leaf])
    assert text.count(first) >= 1
    doubled = text.replace(first, '{"prediction": 1e9, ' + first[1:], 1)
    with pytest.raises(RulesDocumentError) as info:
        from_json(doubled)
    assert info.value.path.endswith(".prediction") and info.value.path.startswith("nodes[")
    with pytest.raises(RulesDocumentError) as info:
        RuleTree.from_json('{"rules": [], "default_prediction": 1.0, "default_prediction": 2.0}')
    assert info.value.path == "default_prediction"


@pytest.mark.parametrize("label", ["\x00", "a\x00", "\x00\x00"])
def test_a_label_with_a_nul_reads_back_as_it_was_written(label):
    classes = np.array([label, "b"], dtype=object)
    tree = RuleTree([Node([Condition(0, "x0", upper=0.5)], Leaf(label, [1.0, 0.0]), Leaf("b", [0.0, 1.0]))],
                    classes=classes, feature_names=["x0"])
    rules = RuleSet([Rule([Condition(0, "x0", upper=0.5)], label, proba=[1.0, 0.0])], "b", classes=classes,
                    default_proba=[0.0, 1.0], feature_names=["x0"])
    X = np.array([[0.1], [0.9]])
    for explanation in (tree, rules):
        back = from_json(explanation.to_json())
        assert list(back.classes) == [label, "b"]
        assert list(back.predict(X)) == [label, "b"] == list(explanation.predict(X))


def test_cli_predict_of_a_large_tree_takes_a_bounded_block(tmp_path, capsys, monkeypatch):
    from defrag import cli
    import pandas as pd

    tree = RuleTree([balanced(12)], feature_names=["x0", "x1"])  # 4,095 boxes
    (tmp_path / "tree.json").write_text(tree.to_json())
    X = np.random.RandomState(1).rand(30_000, 2)
    pd.DataFrame(X, columns=["x0", "x1"]).to_csv(tmp_path / "d.csv", index=False)
    monkeypatch.setattr(reader_module, "ROUTE_BLOCK_BYTES", 1 << 20)
    status, peak = traced(lambda: cli.main(["predict", str(tmp_path / "tree.json"), str(tmp_path / "d.csv"),
                                            "--out", str(tmp_path / "p.csv")]))
    assert status == 0, capsys.readouterr().err
    assert peak < 60 * 2**20, peak  # rows x boxes booleans: 123 MB
    written = pd.read_csv(tmp_path / "p.csv")
    np.testing.assert_array_equal(written["prediction"], tree.predict(written[["x0", "x1"]].to_numpy()))


def test_the_diff_of_two_large_trees_is_linear():
    old = RuleTree([balanced(13)], feature_names=["x0", "x1"])  # 8,192 regions
    moved = RuleTree([balanced(13)], feature_names=["x0", "x1"])
    moved.terms[0].conditions = [Condition(0, "x0", upper=0.51)]  # every region's first step moves
    started = time.perf_counter()
    d = old.diff(moved)
    assert time.perf_counter() - started < 15  # regions were matched all against all
    assert (len(d.kept), len(d.changed), len(d.added), len(d.removed)) == (0, 8192, 0, 0)
    assert all(x["old_region"] == x["new_region"] for x in d.changed)


def test_a_sum_counts_its_regions_exactly_past_int64():
    assert many_parts(70).n_regions == 2**70  # (0 in int64)


def test_routing_a_block_at_a_time_gives_what_routing_all_rows_at_once_gives(friedman, monkeypatch):
    from sklearn.ensemble import RandomForestClassifier

    X, y, forest = friedman
    labels = np.where(y > np.median(y), "high", "low")
    classifier = RandomForestClassifier(n_estimators=10, random_state=0).fit(X, labels)
    explanations = [DefragModel(forest, max_conditions=7, form="sum").fit(X, y).rules_,
                    DefragModel(forest, form="tree").fit(X, y).rules_,
                    DefragModel(classifier, max_conditions=7, form="sum").fit(X, labels).rules_,
                    DefragModel(classifier, form="tree").fit(X, labels).rules_]

    def everything(rules):
        out = [rules.predict(X), rules.apply(X), rules.covering(X), rules.checks(X), rules.key_counts(X)]
        if rules.classes is not None:
            out.append(rules.predict_proba(X))
        return out

    whole = [everything(rules) for rules in explanations]
    monkeypatch.setattr(reader_module, "ROUTE_BLOCK_BYTES", 1)  # a row per block
    for rules, expected in zip(explanations, whole):
        for rules in (rules, from_json(rules.to_json())):
            rules.__dict__.pop("_flat", None)
            for got, want in zip(everything(rules), expected):
                if isinstance(want, dict):  # (the keys of the fit's items are not written to JSON)
                    assert got == (want if rules.nodes()[0].key is not None else {})
                else:
                    np.testing.assert_array_equal(got, want)


def test_a_sum_gives_its_decimals(sum_document):
    assert "decimals" in refused(dict(sum_document, decimals=None), "decimals")
