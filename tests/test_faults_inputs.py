"""Errors that said the wrong thing, a printout that was not quite true, and parameters
that were taken by their truth value (issue 40)."""
import numpy as np
import pytest
from sklearn.ensemble import IsolationForest, RandomForestClassifier, RandomTreesEmbedding

from defrag import DefragModel, PrototypeExplainer, ProxyTree, RuleSet
from defrag.baselines import BornAgainTree, DepthTwoTree, InTrees, NodeHarvest

RNG = np.random.default_rng(0)
X = RNG.normal(size=(300, 4))
Y = (X[:, 0] > 0).astype(int)


@pytest.fixture(scope="module")
def forest():
    return RandomForestClassifier(5, max_depth=3, random_state=0).fit(X, Y)


# ----------------------------------------------------------- errors that say what is wrong

def test_xgboost_vector_leaves_are_named_as_such():
    xgb = pytest.importorskip("xgboost")
    Y2 = np.c_[Y, X[:, 1] > 0].astype(int)
    model = xgb.XGBClassifier(n_estimators=3, tree_method="hist", multi_strategy="multi_output_tree").fit(X, Y2)
    for fit in (lambda: DefragModel(model).fit(X), lambda: DefragModel(model).fit(X, Y),
                lambda: InTrees(model).fit(X, Y), lambda: PrototypeExplainer(model).fit(X, Y)):
        with pytest.raises(TypeError, match=r"vector leaves \(multi_strategy='multi_output_tree'"):
            fit()


@pytest.mark.parametrize("make, what", [
    (lambda: RandomTreesEmbedding(5, random_state=0).fit(X), "RandomTreesEmbedding is an unsupervised embedding"),
    (lambda: IsolationForest(n_estimators=5, random_state=0).fit(X), "IsolationForest is an outlier detector"),
])
def test_tree_models_that_predict_nothing_are_refused_as_what_they_are(make, what):
    model = make()
    for fit in (lambda: DefragModel(model).fit(X), lambda: DefragModel(model).fit(X, Y),
                lambda: NodeHarvest(model).fit(X, Y)):
        with pytest.raises(TypeError, match=what + ".*unsupported estimator type"):
            fit()


def test_a_lone_tree_is_no_ensemble_for_the_rules_but_gives_prototypes_leaves():
    from sklearn.tree import DecisionTreeClassifier

    tree = DecisionTreeClassifier(max_depth=3, random_state=0).fit(X, Y)
    with pytest.raises(TypeError, match="unsupported estimator type .*DecisionTreeClassifier"):
        DefragModel(tree).fit(X)
    assert PrototypeExplainer(tree, n_prototypes=2, distance="rf").fit(X, Y).prototypes_.size == 2


# ----------------------------------------------------------- a printout that says it all

def test_lightgbm_zero_bounds_say_what_0_means():
    lgb = pytest.importorskip("lightgbm")
    Xz = X.copy()
    Xz[RNG.random(len(X)) < 0.3, 0] = 0.0
    for zero_as_missing in (True, False):
        model = lgb.LGBMClassifier(n_estimators=10, zero_as_missing=zero_as_missing, min_child_samples=5,
                                   verbose=-1).fit(Xz, (Xz[:, 0] > 0).astype(int))
        rules = DefragModel(model, random_state=0).fit(Xz).rules_
        listing = str(rules)
        assert "x0 > 0" in listing or "x0 >= 0" in listing or "x0 <= 0" in listing or "x0 < 0" in listing
        # 1e-36 reads as 0 (as missing with zero_as_missing): "x0 > 0" alone would say it holds
        assert "a bound printed as 0 is LightGBM's zero: a value within 10^-35 of 0 counts as 0" in listing
        assert "LightGBM's zero" in rules.to_markdown()


def test_no_zero_note_without_a_bound_at_the_zero_threshold(forest):
    assert "LightGBM's zero" not in str(DefragModel(forest, n_restarts=2, random_state=0).fit(X).rules_)


# ----------------------------------------------------------- parameters taken by their truth value

@pytest.mark.parametrize("params, words", [
    ({"keep_duplicate_splits": "yes"}, "The 'keep_duplicate_splits' parameter of DefragModel must be an instance "
                                       "of 'bool'"),
    ({"keep_duplicate_splits": None}, "The 'keep_duplicate_splits' parameter of DefragModel must be an instance "
                                      "of 'bool'"),
    ({"keep_duplicate_splits": 1}, "The 'keep_duplicate_splits' parameter of DefragModel must be an instance "
                                   "of 'bool'"),
    ({"feature_names": "abcd"}, "feature_names must be a sequence of names"),
    ({"feature_names": {"a", "b", "c", "d"}}, "feature_names must be a sequence of names"),
    ({"eps_schedule": 0.3}, "eps_schedule must be a sequence of numbers"),
    ({"eps_schedule": "0.3"}, "eps_schedule must be a sequence of numbers"),
    ({"tol": True}, r"The 'tol' parameter of DefragModel must be a float in the range \[0.0, inf\). Got True"),
    ({"prune_tol": True}, r"The 'prune_tol' parameter of DefragModel must be a float in the range \[0.0, 1.0\]. "
                          "Got True"),
    ({"n_components": True}, r"The 'n_components' parameter of DefragModel must be an int in the range \[1, inf\). "
                             "Got True"),
])
def test_defrag_model_refuses_a_parameter_of_another_kind(forest, params, words):
    with pytest.raises(ValueError, match=words):
        DefragModel(forest, n_restarts=2, **params).fit(X)


def test_the_other_estimators_refuse_them_too(forest):
    for make in (BornAgainTree, DepthTwoTree, InTrees, NodeHarvest):
        with pytest.raises(ValueError, match="feature_names must be a sequence of names"):
            make(forest, feature_names="abcd").fit(X, Y)
    with pytest.raises(ValueError, match="p_alt must be a number"):
        BornAgainTree(forest, p_alt=True).fit(X, Y)
    with pytest.raises(ValueError, match="type_decay must be 1 or 2"):
        InTrees(forest, type_decay=True).fit(X, Y)
    with pytest.raises(ValueError, match="alpha must be a finite number"):
        ProxyTree(alpha=True).fit(X, X[:, 0])
    with pytest.raises(ValueError, match="feature_names must be a sequence of names"):
        RuleSet([], 0, feature_names="ab")
    # what they take: sequences, NumPy bools, ()
    DefragModel(forest, n_restarts=2, keep_duplicate_splits=np.bool_(True), eps_schedule=(),
                feature_names=np.array(["a", "b", "c", "d"])).fit(X)
