"""Trees of rules and sums of trees (defrag/rules/tree.py): routing, predictions, the
comparisons a reader makes per row, and printing, against a plain row-by-row reading of
the same tree (issue 36)."""
import math

import numpy as np
import pytest

from defrag.rules.conditions import Condition
from defrag.rules.ruleset import Rule
from defrag.rules.tree import Leaf, Node, RuleTree, from_units, to_units

NAMES = ["a", "b", "c"]


def conditions():
    a = Condition(0, "a", upper=3.0)
    b = Condition(1, "b", lower=2.0, missing=True)
    ab = Condition(1, "b", lower=-1.0, upper=5.0)
    c = Condition(2, "c", categories=[1, 4])
    return a, b, ab, c


def tree_of_rules():
    a, b, ab, c = conditions()
    return RuleTree([Node([a, b], Leaf("A", [1.0, 0, 0, 0]),
                          Node([ab], Node([c], Leaf("B", [0, 1.0, 0, 0]), Leaf("C", [0, 0, 1.0, 0])),
                               Leaf("D", [0, 0, 0, 1.0])))],
                    classes=np.array(["A", "B", "C", "D"]), feature_names=NAMES, supports_missing=True)


def rows(n=500, seed=0):
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.uniform(-2, 8, n), rng.uniform(-3, 8, n), rng.integers(0, 6, n).astype(float)])
    X[rng.random(X.shape) < 0.1] = np.nan
    return X


def by_hand(node, x):
    """(leaf, comparisons read) of one row down a tree, condition by condition."""
    read = 0
    while isinstance(node, Node):
        holds = True
        for cond in node.conditions:
            ok = bool(cond.holds(x[None, :])[0])
            two = cond.lower is not None and cond.upper is not None and not cond.is_set
            value = x[cond.feature]
            # an interval a < x <= b: one comparison where x <= a (or x is missing) fails it
            read += 1 if (not ok and (not two or math.isnan(value) or value <= cond.lower)) else (2 if two else 1)
            if not ok:
                holds = False
                break
        node = node.then if holds else node.otherwise
    return node, read


def test_a_tree_routes_predicts_and_counts_comparisons_as_a_reader_does():
    tree = tree_of_rules()
    X = rows()
    leaves = tree.leaves()
    expected = [by_hand(tree.terms[0], x) for x in X]
    np.testing.assert_array_equal(tree.apply(X), [leaves.index(leaf) for leaf, _ in expected])
    np.testing.assert_array_equal(tree.predict(X), [leaf.prediction for leaf, _ in expected])
    np.testing.assert_array_equal(tree.checks(tree.encode(X)), [read for _, read in expected])
    np.testing.assert_array_equal(tree.predict_proba(X), np.vstack([leaf.proba for leaf, _ in expected]))
    assert tree.n_regions == 4 and tree.n_conditions == 5  # the interval counts two
    cover = tree.covers(X)  # each box's conditions, read on their own
    expected = [Rule(node.conditions, None).covers(tree.encode(X)) for node in tree.nodes()]
    np.testing.assert_array_equal(cover, np.column_stack(expected))


def test_a_sum_adds_one_value_per_part_in_fixed_decimals():
    a, b, ab, c = conditions()
    tree = RuleTree([Node([a], Leaf(1.25), Leaf(-0.5)), Node([c], Node([b], Leaf(0.1), Leaf(0.3)), Leaf(0.0))],
                    base=10.0, feature_names=NAMES, supports_missing=True)
    X = rows()
    values = []
    for x in X:
        total = 10.0
        for root in tree.terms:
            leaf, _ = by_hand(root, x)
            total += leaf.prediction
        values.append(total)
    np.testing.assert_allclose(tree.predict(X), values, rtol=1e-12)
    assert tree.n_regions == 2 * 3 and tree.n_conditions == 3
    assert tree.apply(X).shape == (len(X), 2)
    # the text prints the numbers with the sum's decimals exactly
    text = str(tree)
    assert "y = 10.000" in text and "+1.250" in text  # 4 digits of the total's range (2.05)


def test_a_two_class_sum_decides_on_the_printed_decimals():
    a, _, _, c = conditions()
    # 0.3 + 0.2 is 0.5 in decimals but 0.49999999999999994 in a float sum from 0.3 first
    tree = RuleTree([Node([a], Leaf(0.2), Leaf(0.3))], base=0.3, classes=np.array([0, 1]), feature_names=NAMES,
                    supports_missing=True)
    X = np.array([[1.0, 0, 0], [5.0, 0, 0]])
    # 0.3 + 0.2 = 0.5 is not above 1/2; 0.3 + 0.3 = 0.6 is
    np.testing.assert_array_equal(tree.predict(X), [0, 1])
    np.testing.assert_allclose(tree.predict_proba(X)[:, 1], [0.5, 0.6])


@pytest.mark.parametrize("decimals", [-3, 0, 2, 6])
def test_units_round_trip(decimals):
    values = np.array([0.0, 1.5, -123456.0, 9.99e4])
    units = to_units(values, decimals)
    again = from_units(units, decimals)
    np.testing.assert_array_equal(to_units(again, decimals), units)


def test_printed_copy_keeps_predictions_and_orders_boxes_by_share():
    tree = tree_of_rules()
    X = rows()
    printed = tree.on_training_rows(tree.encode(X))
    np.testing.assert_array_equal(printed.predict(X), tree.predict(X))
    assert sum(lf.support for lf in printed.leaves()) == len(X)
    box = printed.terms[0].conditions
    assert [c.train_share for c in box] == sorted(c.train_share for c in box)


def test_a_node_needs_a_condition_and_a_sum_a_base():
    with pytest.raises(ValueError, match="at least one condition"):
        RuleTree([Node([], Leaf(1.0), Leaf(2.0))])  # (a list's rule may have none)
    with pytest.raises(ValueError, match="one term"):
        RuleTree([Leaf(1.0), Leaf(2.0)])
    with pytest.raises(ValueError, match="two classes"):
        RuleTree([Leaf(1.0)], base=0.0, classes=np.array([0, 1, 2]))
