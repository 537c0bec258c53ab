"""What changed between two explanations (defrag/rules/diff.py, RuleTree.diff, RuleSet.diff,
``defrag diff``; issue 37): regions kept, changed with their threshold moves, added and
removed; the rows whose prediction and region changed, against a row-by-row count."""
import json

import numpy as np
import pytest

from defrag import cli
from defrag.rules import Rule, RuleSet
from defrag.rules.conditions import Condition
from defrag.rules.diff import JSON_SCHEMA
from defrag.rules.tree import Leaf, Node, RuleTree

NAMES = ["a", "b", "c"]


def tree(a_upper=3.0, split_last=False, names=NAMES):
    a = Condition(0, names[0], upper=a_upper)
    b = Condition(1, names[1], lower=2.0)
    last = Node([Condition(2, names[2], lower=0.5)], Leaf(3.0), Leaf(4.0)) if split_last else Leaf(3.0)
    return RuleTree([Node([a], Leaf(1.0), Node([b], Leaf(2.0), last))], feature_names=names)


def rows(n=2000, seed=0):
    return np.random.default_rng(seed).uniform(0, 5, (n, 3))


def test_a_moved_threshold_changes_every_region_below_it_and_moves_the_rows_between():
    X = rows()
    d = tree().diff(tree(a_upper=3.5), X)
    assert (len(d.kept), len(d.changed), len(d.added), len(d.removed)) == (0, 3, 0, 0)
    for x in d.changed:
        assert x["threshold_moves"] == [{"feature": "a", "bound": "upper", "old": 3.0, "new": 3.5}]
    between = (X[:, 0] > 3.0) & (X[:, 0] <= 3.5)
    assert d.n_rows == len(X)
    assert d.region_changed == pytest.approx(between.mean())
    # those rows went from region 2 (b > 2) or 3 to region 1, whose prediction is another
    assert d.prediction_changed == pytest.approx(between.mean())
    moves = {(m["old_region"], m["new_region"]): m["rows"] for m in d.moves}
    assert moves == {(2, 1): int((between & (X[:, 1] > 2)).sum()), (3, 1): int((between & (X[:, 1] <= 2)).sum())}
    text = str(d)
    assert "a <= 3 -> 3.5" in text and "region changed on" in text


def test_a_new_split_removes_one_region_and_adds_two_the_others_kept():
    X = rows()
    d = tree().diff(tree(split_last=True), X)
    assert len(d.kept) == 2 and len(d.changed) == 0
    assert [x["old_region"] for x in d.removed] == [3]
    assert [x["new_region"] for x in d.added] == [3, 4]
    old_last = (X[:, 0] > 3.0) & (X[:, 1] <= 2.0)
    assert d.region_changed == pytest.approx(old_last.mean())  # every row of the removed region
    assert d.prediction_changed == pytest.approx((old_last & (X[:, 2] <= 0.5)).mean())  # 3 -> 4 there
    same = tree().diff(tree(), X)
    assert same.unchanged and same.region_changed == 0 and same.prediction_changed == 0 and not same.moves


def test_rule_sets_compare_rule_by_rule_and_with_trees():
    a, b = Condition(0, "a", upper=3.0), Condition(1, "b", lower=2.0)
    old = RuleSet([Rule([a], 1.0), Rule([b], 2.0)], 3.0, feature_names=NAMES)
    new = RuleSet([Rule([Condition(0, "a", upper=2.5)], 1.0), Rule([b], 2.5)], 3.0, feature_names=NAMES)
    X = rows()
    d = old.diff(new, X)
    assert [(x["old_region"], x["new_region"]) for x in d.kept] == [(2, 2), (3, 3)]
    assert d.kept[0]["new_prediction"] == 2.5
    assert d.changed[0]["threshold_moves"] == [{"feature": "a", "bound": "upper", "old": 3.0, "new": 2.5}]
    expected = np.asarray(old.predict(X)) != np.asarray(new.predict(X))
    assert d.prediction_changed == pytest.approx(expected.mean())
    assert d.region_changed == pytest.approx(((X[:, 0] > 2.5) & (X[:, 0] <= 3.0)).mean())
    # a list against the tree of the same regions: the list's default is "otherwise"
    mixed = old.diff(tree(), X)
    assert mixed.kinds == ("list", "tree") and mixed.prediction_changed == 0.0


def test_the_parts_of_two_sums_pair_by_the_regions_they_share():
    a = Node([Condition(0, "a", upper=3.0)], Leaf(1.0), Leaf(-1.0))
    b = Node([Condition(1, "b", lower=2.0)], Leaf(0.5), Leaf(-0.5))
    c = Node([Condition(1, "b", lower=2.5)], Leaf(0.5), Leaf(-0.5))
    old = RuleTree([a, b], base=10.0, feature_names=NAMES)
    X = rows()
    swapped = old.diff(RuleTree([b, a], base=10.0, feature_names=NAMES), X)
    assert swapped.unchanged and swapped.region_changed == 0 and swapped.prediction_changed == 0
    assert sorted((x["old_part"], x["new_part"]) for x in swapped.kept) == [(1, 2), (1, 2), (2, 1), (2, 1)]
    moved = old.diff(RuleTree([c, a], base=10.0, feature_names=NAMES), X)
    assert [(x["old_part"], x["new_part"], x["threshold_moves"]) for x in moved.changed] == \
        [(2, 1, [{"feature": "b", "bound": "lower", "old": 2.0, "new": 2.5}])] * 2
    assert moved.region_changed == pytest.approx(((X[:, 1] > 2.0) & (X[:, 1] <= 2.5)).mean())
    assert "~ part 2 region 1 -> part 1 region 1: b > 2 -> 2.5" in str(moved)


def test_the_json_validates_against_the_documented_schema_and_the_html_is_a_table():
    jsonschema = pytest.importorskip("jsonschema")
    X = rows()
    for d in (tree().diff(tree(a_upper=3.5, split_last=True), X), tree().diff(tree()),
              RuleSet([Rule([Condition(0, "a", upper=3.0)], "x")], "y", feature_names=NAMES,
                      classes=np.array(["x", "y"])).diff(
                  RuleSet([Rule([Condition(0, "a", upper=2.0)], "x")], "y", feature_names=NAMES,
                          classes=np.array(["x", "y"])), X)):
        doc = json.loads(d.to_json())
        jsonschema.validate(doc, JSON_SCHEMA)
        assert doc == d.to_dict()
    html = tree().diff(tree(a_upper=3.5), X)._repr_html_()
    assert "<table>" in html and "changed" in html and "a upper 3 -&gt; 3.5" in html
    bad = dict(doc, version=2)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, JSON_SCHEMA)


def test_different_features_or_predictions_are_refused_with_a_clear_error():
    with pytest.raises(ValueError, match="different features: feature 1 is 'b' in the first and 'z'"):
        tree().diff(tree(names=["a", "z", "c"]))
    with pytest.raises(ValueError, match="different features: 3 against 4"):
        tree().diff(tree(names=["a", "b", "c", "d"]))
    classes = RuleSet([], "x", feature_names=NAMES, classes=np.array(["x", "y"]))
    with pytest.raises(ValueError, match="one classes, the other values"):
        tree().diff(classes)
    with pytest.raises(TypeError, match="RuleTree or a RuleSet"):
        tree().diff("rules.json")


def test_cli_diff_prints_the_changes_and_exits_2_on_other_features(tmp_path, capsys):
    import pandas as pd

    X = rows(300)
    pd.DataFrame(X, columns=NAMES).to_csv(tmp_path / "d.csv", index=False)
    (tmp_path / "old.json").write_text(tree().to_json())
    (tmp_path / "new.json").write_text(tree(a_upper=3.5).to_json())
    (tmp_path / "other.json").write_text(tree(names=["a", "z", "c"]).to_json())
    assert cli.main(["diff", str(tmp_path / "old.json"), str(tmp_path / "new.json"), str(tmp_path / "d.csv")]) == 0
    out = capsys.readouterr().out
    assert "3 changed" in out and "a <= 3 -> 3.5" in out
    assert cli.main(["diff", str(tmp_path / "old.json"), str(tmp_path / "new.json"), str(tmp_path / "d.csv"),
                     "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["rows"]["n_rows"] == 300 and len(doc["changed"]) == 3
    assert cli.main(["diff", str(tmp_path / "old.json"), str(tmp_path / "other.json"), str(tmp_path / "d.csv")]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1 and "defrag diff: error:" in captured.err
    assert "different features: feature 1 is 'b'" in captured.err
