"""The router (src_c/dfg_route.h, defrag/rules/_route.pyx): random trees and sums of boxes
against a plain row-by-row walk of the same nodes (tests/test_rule_tree.py's by_hand):
the leaf each row reaches, the comparisons a reader makes, the rows through each node,
whatever the thread count; and the arrays it refuses."""
import numpy as np
import pytest

from defrag.rules import _route
from defrag.rules.conditions import Condition
from defrag.rules.tree import Leaf, Node, RuleTree
from test_rule_tree import by_hand

N_FEATURES = 4


def random_condition(rng, n_features=N_FEATURES):
    f = int(rng.integers(n_features))
    kind = rng.integers(5)
    missing = bool(rng.random() < 0.3)
    if f == 3:  # a categorical feature: codes 0..5
        return Condition(f, "d", categories=rng.choice(6, size=int(rng.integers(1, 4)), replace=False),
                         negated=bool(rng.random() < 0.3), missing=missing)
    a, b = np.sort(rng.uniform(-3, 3, 2))
    lower, upper = [(a, b), (a, None), (None, b), (np.inf, None), (None, np.inf)][kind]
    return Condition(f, "abc"[f], lower=lower, upper=upper, missing=missing)


def random_node(rng, depth, counter):
    if depth == 0 or rng.random() < 0.25:
        counter[0] += 1
        return Leaf(float(counter[0]), key=("leaf", counter[0]))
    counter[0] += 1
    key = ("node", counter[0])
    box = [random_condition(rng) for _ in range(int(rng.integers(1, 4)))]
    return Node(box, random_node(rng, depth - 1, counter), random_node(rng, depth - 1, counter), key=key)


def random_rows(rng, n):
    X = np.column_stack([rng.uniform(-4, 4, (n, 3)), rng.integers(0, 6, n).astype(float)])
    X[rng.random(X.shape) < 0.15] = np.nan
    X[rng.random(X.shape) < 0.02] = -np.inf
    return X


def walk_order(node):
    out = [node]
    if isinstance(node, Node):
        out += walk_order(node.then) + walk_order(node.otherwise)
    return out


@pytest.mark.parametrize("seed", range(12))
def test_random_trees_and_sums_route_as_a_row_by_row_walk(seed):
    rng = np.random.default_rng(seed)
    counter = [0]
    n_terms = 1 + seed % 3
    terms = [random_node(rng, 4, counter) for _ in range(n_terms)]
    tree = RuleTree(terms, base=None if n_terms == 1 else 0.5, feature_names=["a", "b", "c", "d"],
                    supports_missing=True)
    X = random_rows(rng, 300)
    walked = [[by_hand(root, x) for root in tree.terms] for x in X]
    leaf_number = [{id(lf): k for k, lf in enumerate(tree.leaves(t))} for t in range(n_terms)]
    expected = np.array([[leaf_number[t][id(w[t][0])] for t in range(n_terms)] for w in walked])
    np.testing.assert_array_equal(tree.route(X), expected)
    np.testing.assert_array_equal(tree.checks(X), [sum(r for _, r in w) for w in walked])
    visits = {}
    for w in walked:
        for t, root in enumerate(tree.terms):
            node = root
            while True:  # the nodes on the row's path down term t, to its leaf
                visits[(t, node.key)] = visits.get((t, node.key), 0) + 1
                if node is w[t][0]:
                    break
                node = node.then if w[t][0] in walk_order(node.then) else node.otherwise
    counts = tree.key_counts(X)
    assert counts == {k: v for k, v in counts.items() if v} | {k: 0 for k in counts if k not in visits}
    assert {k: v for k, v in counts.items() if v} == visits


def test_threads_give_the_same_routes_checks_and_counts():
    rng = np.random.default_rng(5)
    counter = [0]
    tree = RuleTree([random_node(rng, 5, counter) for _ in range(2)], base=0.0,
                    feature_names=["a", "b", "c", "d"], supports_missing=True)
    X = random_rows(rng, 20_000)  # above the kernel's threshold for a thread team
    one = tree.route(X, n_threads=1), tree.checks(X, n_threads=1), tree.key_counts(X, n_threads=1)
    two = tree.route(X, n_threads=2), tree.checks(X, n_threads=2), tree.key_counts(X, n_threads=2)
    np.testing.assert_array_equal(one[0], two[0])
    np.testing.assert_array_equal(one[1], two[1])
    assert one[2] == two[2]


def test_a_nan_where_the_source_has_no_rule_for_missing_values_is_refused():
    tree = RuleTree([Node([Condition(0, "a", upper=1.0)], Leaf(1.0), Leaf(2.0))], feature_names=["a", "b"])
    X = np.array([[0.0, 0.0], [2.0, np.nan]])
    np.testing.assert_array_equal(tree.predict(X), [1.0, 2.0])  # b is read by no condition
    with pytest.raises(ValueError, match="NaN"):
        tree.predict(np.array([[np.nan, 0.0]]))
    with pytest.raises(ValueError, match="NaN"):
        tree.checks(np.array([[np.nan, 0.0]]))


def kernel_arrays():
    """One box (x0 <= 1) at item 0, two leaves."""
    return dict(box=np.array([0, -1, -1]), then_item=np.array([1, -1, -1]), else_item=np.array([2, -1, -1]),
                roots=np.array([0]), rule_ptr=np.array([0, 1]), feature=np.array([0], dtype=np.int32),
                lower=np.array([-np.inf]), upper=np.array([1.0]), missing=np.array([0], dtype=np.uint8))


def test_the_kernel_routes_a_box_and_reports_reads_and_visits():
    X = np.array([[0.0], [2.0], [1.0]])
    visits = np.zeros(3, dtype=np.int64)
    items, reads = _route.route(X, reads=True, cost=np.array([1], dtype=np.uint8), visits=visits,
                                **kernel_arrays())
    np.testing.assert_array_equal(items[:, 0], [1, 2, 1])
    np.testing.assert_array_equal(reads, [1.0, 1.0, 1.0])
    np.testing.assert_array_equal(visits, [3, 2, 1])


@pytest.mark.parametrize("change", [
    dict(then_item=np.array([0, -1, -1])),           # a child that is not a later item: a cycle
    dict(else_item=np.array([3, -1, -1])),           # past the last item
    dict(box=np.array([1, -1, -1])),                 # a box that is not a rule
    dict(roots=np.array([3])),                       # a root past the items
    dict(feature=np.array([1], dtype=np.int32)),     # a feature X lacks
])
def test_the_kernel_refuses_malformed_arrays(change):
    with pytest.raises(ValueError):
        _route.route(np.zeros((2, 1)), **(kernel_arrays() | change))


def test_the_kernel_refuses_outputs_of_the_wrong_size():
    with pytest.raises(ValueError, match="visits"):
        _route.route(np.zeros((2, 1)), visits=np.zeros(2, dtype=np.int64), **kernel_arrays())
    with pytest.raises(ValueError, match="cost"):
        _route.route(np.zeros((2, 1)), reads=True, **kernel_arrays())


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("intervals_only", [False, True])  # (only intervals: the dense boxes suit)
def test_a_list_takes_the_dense_first_match_and_reaches_the_walks_leaves(seed, intervals_only):
    """A list (each box's "then" a leaf, the boxes in turn down the "else" branches) read for
    its leaves alone goes through dfg_rules_first; asked for readings too, the router walks
    it: the same leaves, NaN and categories included."""
    from defrag.rules import Rule, RuleSet

    rng = np.random.default_rng(seed)
    rules = [Rule([random_condition(rng, 3 if intervals_only else N_FEATURES) for _ in range(int(rng.integers(1, 4)))],
                  float(r)) for r in range(7)]
    rs = RuleSet(rules, -1.0, feature_names=["a", "b", "c", "d"], supports_missing=True)
    X = rs.encode(random_rows(rng, 5000))
    arrays = dict(rs._items(), **rs._compiled())
    dense, _ = _route.route(X, **arrays)
    walked, _ = _route.route(X, reads=True, cost=np.ones(len(arrays["feature"]), dtype=np.uint8), **arrays)
    np.testing.assert_array_equal(dense, walked)
    by_hand = [next((r for r, rule in enumerate(rules)
                     if all(c.holds(x[None, :])[0] for c in rule.conditions)), len(rules)) for x in X[:300]]
    np.testing.assert_array_equal(rs.apply(X[:300]), by_hand)
