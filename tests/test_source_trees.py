"""The trees every source reads (defrag/sources): walking them with walk_tree reaches the
library's own leaves, their values add up to the library's raw predictions, and the
split table holds exactly their internal nodes."""
import numpy as np
import pytest
from sklearn.ensemble import (
    ExtraTreesClassifier,
    ExtraTreesRegressor,
    GradientBoostingClassifier,
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)

from defrag.sources import adapt, walk_tree
from defrag.sources.base import Tree


def data(seed=0, n=500, nan=False):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4)) * [1, 10, 0.1, 100]
    X[:, 3] = np.round(X[:, 3])  # ties at the thresholds
    y = (X[:, 0] + 0.1 * X[:, 1] > 0).astype(int) + (X[:, 2] > 0.05)
    if nan:
        X[rng.random(X.shape) < 0.1] = np.nan
    return X, y


def walked(source, X):
    Xe = source.encoding.transform(X)
    return np.stack([walk_tree(tree, Xe) for tree in source.trees()], axis=1)


def check_internal_nodes_are_the_split_table(source):
    table = source.split_table(keep_duplicates=True)
    n_internal = sum(int((~t.is_leaf).sum()) for t in source.trees())
    assert len(table) == n_internal


@pytest.mark.parametrize("nan", [False, True])
def test_scikit_learn_forest_trees_reach_apply_leaves(nan):
    X, y = data(nan=nan)
    rf = RandomForestClassifier(n_estimators=10, random_state=0).fit(X, y)
    source = adapt(rf)
    np.testing.assert_array_equal(walked(source, X), rf.apply(X))
    # the forest's probabilities are the mean of its leaves' class fractions
    leaves = rf.apply(X)
    proba = np.mean([t.value[leaves[:, i]] for i, t in enumerate(source.trees())], axis=0)
    np.testing.assert_allclose(proba, rf.predict_proba(X), rtol=1e-12)
    assert all(t.n_node_samples is not None for t in source.trees())
    check_internal_nodes_are_the_split_table(source)


def test_gradient_boosting_leaf_values_add_up_to_the_raw_score():
    X, y = data()
    gb = GradientBoostingClassifier(n_estimators=15, random_state=0).fit(X, y)  # 3 classes
    source = adapt(gb)
    trees = source.trees()
    leaves = walked(source, X)
    np.testing.assert_array_equal(leaves, gb.apply(X).reshape(len(X), -1))
    raw = np.zeros((len(X), 3))
    for i, tree in enumerate(trees):
        raw[:, tree.output] += tree.value[leaves[:, i], 0]
    init = gb.decision_function(X) - raw
    np.testing.assert_allclose(init - init[0], 0.0, atol=1e-9)  # only the constant initial score
    assert [t.output for t in trees[:6]] == [0, 1, 2, 0, 1, 2]
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        adapt(ExtraTreesRegressor(n_estimators=2))


@pytest.mark.parametrize("nan", [False, True])
def test_hist_gradient_boosting_trees_add_up_to_the_raw_prediction(nan):
    X, y = data(nan=nan)
    hgb = HistGradientBoostingRegressor(max_iter=15, random_state=0).fit(X, np.nan_to_num(X[:, 0]) + y)
    source = adapt(hgb)
    leaves = walked(source, X)
    raw = sum(t.value[leaves[:, i], 0] for i, t in enumerate(source.trees()))
    np.testing.assert_allclose(raw + hgb._baseline_prediction.ravel(), hgb.predict(X), rtol=1e-9)
    check_internal_nodes_are_the_split_table(source)


def test_categorical_hist_gradient_boosting_trees_follow_the_category_sets():
    rng = np.random.default_rng(1)
    X = np.column_stack([rng.integers(0, 9, 800), rng.normal(size=800)]).astype(float)
    y = np.isin(X[:, 0], [1, 4, 7]).astype(int) ^ (X[:, 1] > 0.5)
    hgb = HistGradientBoostingClassifier(max_iter=10, categorical_features=[0],
                                         random_state=0).fit(X, y)
    source = adapt(hgb)
    leaves = walked(source, X)
    raw = sum(t.value[leaves[:, i], 0] for i, t in enumerate(source.trees()))
    np.testing.assert_allclose(raw + hgb._baseline_prediction.ravel(), hgb.decision_function(X),
                               rtol=1e-9, atol=1e-12)
    assert any(np.any(t.kind != 0) for t in source.trees())


def test_xgboost_and_lightgbm_trees_reach_their_leaves():
    xgb = pytest.importorskip("xgboost")
    lgb = pytest.importorskip("lightgbm")
    X, y = data(nan=True)
    model = xgb.XGBClassifier(n_estimators=8, max_depth=3, random_state=0).fit(X, y)
    source = adapt(model)
    np.testing.assert_array_equal(walked(source, X), model.apply(X))
    assert [t.output for t in source.trees()[:3]] == [0, 1, 2]
    check_internal_nodes_are_the_split_table(source)

    model = lgb.LGBMRegressor(n_estimators=8, num_leaves=6, random_state=0, verbose=-1).fit(X, y)
    source = adapt(model)
    leaves = walked(source, X)
    np.testing.assert_array_equal(leaves, source.leaves(X))  # pred_leaf, mapped to node ids
    raw = sum(t.value[leaves[:, i], 0] for i, t in enumerate(source.trees()))
    np.testing.assert_allclose(raw, model.predict(X, raw_score=True), rtol=1e-9, atol=1e-12)
    counts = [t.n_node_samples[0] for t in source.trees()]
    assert counts == [len(X)] * len(counts)
    check_internal_nodes_are_the_split_table(source)


def _many(lefts, rights, **kw):
    """Tree.build_many of trees given as (left, right) lists, each a stump-like tree."""
    sizes = [len(a) for a in lefts]
    n = sum(sizes)
    feature = np.concatenate([np.where(np.asarray(a) >= 0, 0, -1) for a in lefts])
    return Tree.build_many(sizes, np.concatenate(lefts), np.concatenate(rights), feature, np.full(n, 0.5),
                           np.zeros(n, np.uint8), [np.arange(k, dtype=float) for k in sizes], **kw)


def test_many_trees_are_checked_as_each_tree_is():
    good = ([1, -1, -1], [2, -1, -1])
    stump = ([-1], [-1])
    trees = _many([good[0], stump[0], [1, 3, -1, -1, -1]], [good[1], stump[1], [2, 4, -1, -1, -1]])
    one_by_one = [Tree.build(a, b, np.where(np.asarray(a) >= 0, 0, -1), np.full(len(a), 0.5), np.zeros(len(a)),
                             np.arange(len(a), dtype=float))
                  for a, b in (good, stump, ([1, 3, -1, -1, -1], [2, 4, -1, -1, -1]))]
    for got, want in zip(trees, one_by_one):
        for name, value in vars(want).items():
            if isinstance(value, np.ndarray):
                np.testing.assert_array_equal(getattr(got, name), value)
            else:
                assert getattr(got, name) == value
    # each fault in one tree of several: a child outside its own tree (inside the next
    # tree's nodes), a shared child, a cycle, leaves that disagree, a feature out of range
    with pytest.raises(ValueError, match=r"children_right holds node 3, outside \[-1, 3\)"):
        _many([good[0], good[0]], [[3, -1, -1], good[1]])
    with pytest.raises(ValueError, match="exactly once"):
        _many([good[0], [1, -1, -1]], [good[1], [1, -1, -1]])
    with pytest.raises(ValueError, match="cycle"):
        _many([good[0], [1, 0, -1]], [good[1], [2, 0, -1]])
    with pytest.raises(ValueError, match="disagree on which nodes are leaves"):
        _many([good[0], [1, -1, -1]], [good[1], [2, 0, -1]])
    with pytest.raises(ValueError, match=r"feature holds feature 0, outside \[0, 0\)"):
        _many([good[0]], [good[1]], n_features=0)
    with pytest.raises(ValueError, match="one children_left"):
        Tree.build_many([3, 0], [1, -1, -1], [2, -1, -1], [0, -1, -1], np.zeros(3), np.zeros(3), [[0], []])
    # a cycle the root does not reach: every node but the root has one parent, and the
    # tree has nodes - 1 children, yet nodes 1, 2 loop between themselves
    cyclic = ([3, 2, 1, -1, -1, -1, -1], [4, 5, 6, -1, -1, -1, -1])
    with pytest.raises(ValueError, match="do not form a tree"):
        Tree.build(*cyclic, [0, 0, 0, -1, -1, -1, -1], np.zeros(7), np.zeros(7), np.zeros(7))
    with pytest.raises(ValueError, match="do not form a tree"):
        _many([good[0], cyclic[0]], [good[1], cyclic[1]])
    # children numbered before their parent (node 3 splits into 1 and 2) is a tree: the
    # levels are walked where the ids do not grow down the tree
    out_of_order = _many([good[0], [3, -1, -1, 1, -1]], [good[1], [4, -1, -1, 2, -1]])
    np.testing.assert_array_equal(out_of_order[1].children_left, [3, -1, -1, 1, -1])
    # per-node arrays and per-tree lists of the wrong length
    with pytest.raises(ValueError, match="threshold needs one entry per node"):
        Tree.build_many([3], good[0], good[1], [0, -1, -1], [0.5], np.zeros(3), [np.zeros(3)])
    with pytest.raises(ValueError, match="values needs one entry per tree"):
        Tree.build_many([3, 1], good[0] + [-1], good[1] + [-1], [0, -1, -1, -1], np.zeros(4), np.zeros(4),
                        [np.zeros(3)])


def test_malformed_trees_are_refused():
    base = dict(feature=[0, -1, -1], threshold=[0.5, 0, 0], missing_right=[0, 0, 0],
                value=[0.0, 1.0, 2.0])
    Tree.build([1, -1, -1], [2, -1, -1], **base)  # well formed
    with pytest.raises(ValueError, match=r"children_right holds node 5, outside \[-1, 3\)"):
        Tree.build([1, -1, -1], [5, -1, -1], **base)
    with pytest.raises(ValueError, match="exactly once"):
        Tree.build([1, -1, -1], [1, -1, -1], **base)  # a child twice, node 2 unreached
    with pytest.raises(ValueError, match="cycle"):
        Tree.build([1, 0, -1], [2, 0, -1], **base)  # a cycle back to the root
    with pytest.raises(ValueError, match="disagree on which nodes are leaves"):
        Tree.build([1, -1, -1], [2, 0, -1], **base)
    with pytest.raises(ValueError, match=r"split_feature holds feature 0, outside \[0, 0\)"):
        Tree.build([1, -1, -1], [2, -1, -1], **base, n_features=0,
                   fields=("left_child", "right_child", "split_feature"))


@pytest.mark.parametrize("Forest", [RandomForestClassifier, ExtraTreesClassifier, RandomForestRegressor])
@pytest.mark.parametrize("nan", [False, True])
def test_a_forests_trees_summed_here_give_its_own_predictions_bit_for_bit(Forest, nan):
    # the searched tree's targets: the source sums the trees itself, in the forest's order
    # (its own method on one thread: the same sums)
    X, y = data(nan=nan and Forest is not ExtraTreesClassifier)
    if Forest is RandomForestRegressor:
        y = np.nan_to_num(X[:, 0]) * 3.0 + np.nan_to_num(X[:, 1])
    model = Forest(n_estimators=7, random_state=0, n_jobs=1).fit(X, y)
    source = adapt(model)
    if Forest is RandomForestRegressor:
        np.testing.assert_array_equal(source.predict(X), model.predict(X))
    else:
        np.testing.assert_array_equal(source.predict_proba(X), model.predict_proba(X))
        # a frame of other columns goes to the model's own method, and its message
        with pytest.raises(ValueError, match="features"):
            source.predict_proba(X[:, :2])
