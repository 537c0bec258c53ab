"""What changed between two explanations (defrag/rules/diff.py, RuleTree.diff, RuleSet.diff,
``defrag diff``; issue 37): regions kept, changed with their threshold moves, added and
removed; the rows whose prediction and region changed, against a row-by-row count; the
headline first, and regression's tolerance relative to the predictions' spread (issue 47)."""
import json

import numpy as np
import pytest

from defrag import cli
from defrag.rules import Rule, RuleSet
from defrag.rules.conditions import Condition
from defrag.rules.diff import JSON_SCHEMA
from defrag.rules.tree import Leaf, Node, RuleTree

NAMES = ["a", "b", "c"]


def tree(a_upper=3.0, split_last=False, names=NAMES, values=(1.0, 2.0, 3.0, 4.0)):
    a = Condition(0, names[0], upper=a_upper)
    b = Condition(1, names[1], lower=2.0)
    v = values
    last = Node([Condition(2, names[2], lower=0.5)], Leaf(v[2]), Leaf(v[3])) if split_last else Leaf(v[2])
    return RuleTree([Node([a], Leaf(v[0]), Node([b], Leaf(v[1]), last))], feature_names=names)


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
        assert doc["headline"]["kept"] == len(d.kept) and doc["headline"]["removed"] == len(d.removed)
    html = tree().diff(tree(a_upper=3.5), X)._repr_html_()
    assert "<table>" in html and "changed" in html and "a upper 3 -&gt; 3.5" in html
    bad = dict(doc, version=1)
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
    with pytest.raises(TypeError, match="two RuleTrees"):
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
    # the headline first: the rows' changes with the tolerance, then the sizes and the counts
    between = (X[:, 0] > 3.0) & (X[:, 0] <= 3.5)
    lines = out.splitlines()
    assert lines[0].startswith(f"on 300 rows: prediction changed on {100 * between.mean():.1f}% (by more than ")
    assert "1% of the standard deviation of the old explanation's predictions" in lines[0]
    assert lines[2] == "0 kept, 3 changed, 0 added, 0 removed"
    assert cli.main(["diff", str(tmp_path / "old.json"), str(tmp_path / "new.json"), str(tmp_path / "d.csv"),
                     "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["rows"]["n_rows"] == 300 and len(doc["changed"]) == 3
    assert doc["headline"]["changed"] == 3 and doc["headline"]["prediction_changed"] == pytest.approx(between.mean())
    assert doc["tolerance"] == {"value": pytest.approx(0.01 * np.std(tree().predict(X))),
                                "basis": "old_predictions_std", "relative": 0.01}
    assert cli.main(["diff", str(tmp_path / "old.json"), str(tmp_path / "new.json"), str(tmp_path / "d.csv"),
                     "--json", "--tol", "0.5"]) == 0
    assert json.loads(capsys.readouterr().out)["tolerance"] == {"value": 0.5, "basis": "given", "relative": None}
    assert cli.main(["diff", str(tmp_path / "old.json"), str(tmp_path / "other.json"), str(tmp_path / "d.csv")]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1 and "defrag diff: error:" in captured.err
    assert "different features: feature 1 is 'b'" in captured.err


def test_the_headline_comes_first_with_the_share_changed_and_by_how_much():
    X = rows()
    old, new = tree(), tree(a_upper=3.5, split_last=True)
    d = old.diff(new, X)
    change = np.abs(np.asarray(old.predict(X)) - np.asarray(new.predict(X)))
    assert d.mean_change == pytest.approx(change.mean()) and d.max_change == pytest.approx(change.max())
    lines = str(d).splitlines()
    assert lines[0] == (f"on 2000 rows: prediction changed on {100 * (change > d.tolerance).mean():.1f}% "
                        f"(by more than {d.tolerance:.4g}: 1% of the standard deviation of the old "
                        f"explanation's predictions on the rows), mean absolute change {change.mean():.4g}, "
                        f"largest {change.max():.4g}; region changed on {100 * d.region_changed:.1f}%")
    assert lines[1] == "old: tree of 3 regions; new: tree of 4 regions"
    assert lines[2] == "0 kept, 2 changed, 2 added, 1 removed"
    assert lines[3].startswith("~ ") and lines[-1].startswith("  ")  # then the details, the moves last
    doc = d.to_dict()
    assert list(doc)[:4] == ["schema", "version", "headline", "tolerance"]
    assert doc["headline"] == {"n_rows": 2000, "prediction_changed": pytest.approx((change > d.tolerance).mean()),
                               "mean_change": pytest.approx(change.mean()), "max_change": pytest.approx(change.max()),
                               "region_changed": d.region_changed, "kept": 0, "changed": 2, "added": 2,
                               "removed": 1}
    # classification: the share, no amount and no tolerance
    a = RuleSet([Rule([Condition(0, "a", upper=3.0)], "x")], "y", feature_names=NAMES, classes=np.array(["x", "y"]))
    b = RuleSet([Rule([Condition(0, "a", upper=2.0)], "x")], "y", feature_names=NAMES, classes=np.array(["x", "y"]))
    c = a.diff(b, X)
    share = ((X[:, 0] > 2.0) & (X[:, 0] <= 3.0)).mean()
    assert str(c).splitlines()[0] == (f"on 2000 rows: prediction changed on {100 * share:.1f}%; "
                                      f"region changed on {100 * share:.1f}%")
    assert c.to_dict()["tolerance"] is None and c.to_dict()["headline"]["mean_change"] is None


def test_regression_tolerance_is_relative_to_the_spread_and_stated():
    X = rows()
    for scale in (1.0, 1000.0):  # the same diff whatever the unit of the values
        base = np.array([1.0, 2.0, 3.0, 4.0]) * scale
        old = tree(values=tuple(base))
        spread = np.std(np.asarray(old.predict(X)))
        small = tree(values=tuple(base + 0.004 * scale))  # half the tolerance: a refit's noise
        large = tree(values=tuple(base + np.array([0, 0, 0.02, 0]) * scale))  # region 3 moves beyond it
        d = old.diff(small, X)
        assert d.tolerance == pytest.approx(0.01 * spread) and d.tolerance_basis == "old_predictions_std"
        assert d.prediction_changed == 0.0 and d.mean_change == pytest.approx(0.004 * scale)
        assert f"by more than {0.01 * spread:.4g}: 1% of the standard deviation" in str(d).splitlines()[0]
        assert not any(line.startswith("= ") for line in str(d).splitlines())  # no kept value listed
        exact = old.diff(small, X, tol=0)
        assert exact.prediction_changed == 1.0 and exact.tolerance_basis == "given"
        assert "(by more than 0: given)" in str(exact)
        moved = old.diff(large, X)
        region3 = (X[:, 0] > 3.0) & (X[:, 1] <= 2.0)
        assert moved.prediction_changed == pytest.approx(region3.mean())
        assert [line for line in str(moved).splitlines() if line.startswith("= ")] == \
            [f"= region 3 -> region 3 kept; prediction {3 * scale:.6g} -> {3.02 * scale:.6g}"]
        # without rows: 1% of the range of the old values, stated with the counts
        alone = old.diff(small)
        assert alone.tolerance == pytest.approx(0.01 * 2 * scale) and alone.tolerance_basis == "old_values_range"
        assert str(alone).splitlines()[1] == (f"3 kept, 0 changed, 0 added, 0 removed; a prediction changed where "
                                              f"it moved by more than {0.02 * scale:.4g}: 1% of the range of the "
                                              f"old explanation's values")
        assert old.diff(large).to_dict()["tolerance"] == {"value": pytest.approx(0.02 * scale),
                                                          "basis": "old_values_range", "relative": 0.01}
    # a constant old explanation: the new one's spread
    constant = RuleSet([], 1.0, feature_names=NAMES)
    d = constant.diff(tree(), X)
    assert d.tolerance_basis == "new_predictions_std"
    assert d.tolerance == pytest.approx(0.01 * np.std(np.asarray(tree().predict(X))))
    assert constant.diff(constant, X).tolerance_basis == "constant"
    for bad in (-1.0, float("nan"), "0.1", True):
        with pytest.raises(ValueError, match="tol must be None or a finite number >= 0"):
            tree().diff(tree(), X, tol=bad)


def test_cli_diff_of_rule_sets_over_other_features_exits_2_in_one_line(tmp_path, capsys):
    import pandas as pd

    pd.DataFrame(rows(50), columns=NAMES).to_csv(tmp_path / "d.csv", index=False)
    old = RuleSet([Rule([Condition(0, "a", upper=3.0)], 1.0)], 2.0, feature_names=NAMES)
    for names, message in ((["a", "b", "z"], "different features: feature 2 is 'c' in the first and 'z'"),
                           (["a", "b"], "different features: 3 against 2")):
        other = RuleSet([Rule([Condition(0, "a", upper=3.0)], 1.0)], 2.0, feature_names=names)
        (tmp_path / "old.json").write_text(old.to_json())
        (tmp_path / "other.json").write_text(other.to_json())
        assert cli.main(["diff", str(tmp_path / "old.json"), str(tmp_path / "other.json"),
                         str(tmp_path / "d.csv")]) == 2
        captured = capsys.readouterr()
        assert captured.out == "" and captured.err.count("\n") == 1, captured.err
        assert "defrag diff: error:" in captured.err and message in captured.err


def test_a_diff_on_zero_rows_reports_the_regions_and_no_change():
    # zero rows: nothing changed on them, the tolerance read off the explanations' values
    # as without X (a spread of no predictions is no basis), the regions compared as ever
    d = tree().diff(tree(a_upper=3.5), rows()[:0])
    assert d.n_rows == 0 and d.region_changed == 0.0
    assert (len(d.kept), len(d.changed)) == (0, 3)
    assert d.tolerance == tree().diff(tree(a_upper=3.5)).tolerance
    assert "on 0 rows" in str(d)
