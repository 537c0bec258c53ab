"""Sizes a careless or hostile caller gives as parameters (issue 40): each is bounded by
what the data allows, by a stated maximum, or counted by the memory guard before
anything is allocated; never a NumPy "Unable to allocate", an OverflowError or a
gigabyte array for a fit on 400 rows."""
import warnings

import numpy as np
import pytest
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

from defrag import DefragMemoryError, DefragModel, ProxyTree, ProxyTreeClassifier, bootstrap_instability, max_memory
from defrag.baselines import DepthTwoTree
from defrag.proxy import explain_local
from defrag.utils.memory import fit_estimate

RNG = np.random.default_rng(0)
X = RNG.normal(size=(400, 3))
Y = (X[:, 0] > 0).astype(int)
YR = X[:, 0] + 0.1 * RNG.normal(size=400)


@pytest.fixture(scope="module")
def forests():
    return (RandomForestClassifier(10, max_depth=4, random_state=0).fit(X, Y),
            RandomForestRegressor(10, max_depth=4, random_state=0).fit(X, YR))


@pytest.mark.parametrize("n_rules", [10 ** 12, 10 ** 19])
def test_n_rules_beyond_the_rows_is_bounded_by_them(forests, n_rules):
    clf, reg = forests
    with max_memory("200M"), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = DefragModel(clf, n_rules=n_rules, n_restarts=2, random_state=0).fit(X)
        # regression with y: the list grown on the predictions too, a (sizes x rows) loss each
        reg_model = DefragModel(reg, n_rules=n_rules, n_restarts=2, random_state=0).fit(X, YR)
    assert 1 <= model.n_rules_ <= X.shape[0] and 1 <= reg_model.n_rules_ <= X.shape[0]
    assert any(f"n_rules={n_rules}" in str(w.message) for w in caught)
    np.testing.assert_array_equal(model.predict(X), model.rules_.predict(X))


def test_max_rules_of_a_constant_target_sizes_nothing(forests):
    # one class: one component whatever max_rules says, so the guard's K > rows check
    # does not see max_rules; the list search took it as its number of sizes
    constant = RandomForestRegressor(5, random_state=0).fit(X, np.zeros(400))
    with max_memory("200M"):
        model = DefragModel(constant, max_rules=10 ** 12, n_restarts=2, random_state=0).fit(X)
    assert model.n_rules_ == 1


def test_the_lower_bound_trace_of_max_iter_is_counted(forests):
    base = dict(n_samples=400, n_fit=400, n_features=3, n_splits=50, n_groups=3, bit_words=0,
                max_group=20, n_components=10, n_classes=2, workers=1, threads=1, rule_list=True)
    assert (fit_estimate(**base, iterations=10 ** 7)["restarts in flight"]
            - fit_estimate(**base)["restarts in flight"]) == 12.0 * 10 ** 7
    # 10**7 iterations (the largest max_iter) hold 120 MB of trace a restart in flight
    with max_memory("60M"), pytest.raises(DefragMemoryError, match="max_iter="):
        DefragModel(forests[0], max_iter=10 ** 7, n_restarts=2, random_state=0).fit(X)


def test_a_proxy_trees_min_samples_leaf_beyond_the_rows_grows_a_leaf(forests):
    clf, reg = forests
    assert ProxyTree(reg, min_samples_leaf=10 ** 19).fit(X).n_leaves_ == 1
    assert ProxyTreeClassifier(clf, min_samples_leaf=10 ** 19).fit(X).n_leaves_ == 1


def test_a_depth_two_trees_max_depth_beyond_the_rows_grows_the_full_tree(forests):
    big = DepthTwoTree(forests[0], max_depth=10 ** 19).fit(X, Y)
    full = DepthTwoTree(forests[0], max_depth=399).fit(X, Y)
    assert big.n_rules_ == full.n_rules_


@pytest.mark.parametrize("n_samples", [10 ** 12, 10 ** 19])
def test_a_local_neighbourhood_is_counted_before_it_is_drawn(forests, n_samples):
    reg = forests[1]
    with pytest.raises(DefragMemoryError, match=f"explain_local on {n_samples} samples"):
        explain_local(reg, X[0], X.std(axis=0), n_samples=n_samples)


def test_bootstrap_resamples_have_a_stated_maximum():
    def factory():  # refused before any tree is fitted (10**6 fits ran for hours)
        raise AssertionError("a tree was fitted")

    with pytest.raises(ValueError, match=r"n_boot must be an integer in \[2, 1000\]"):
        bootstrap_instability(factory, X, YR, n_boot=10 ** 6)
