"""The searched tree's path (search/tree_path.py, search/path_readout.py): every candidate of
``path_`` is ``path_rules_``'s at the same index, built when read; ``with_size`` gives what
a refit with that size or budget prints."""
import pickle
import warnings

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, make_friedman1
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

from defrag import DefragModel
from defrag.search.list_path import MIN_VALIDATION, N_FOLDS


@pytest.fixture(scope="module", params=["classification", "regression"])
def fitted(request):
    if request.param == "classification":
        X, y = load_breast_cancer(return_X_y=True)
        X, y = X[:300], y[:300]
        forest = RandomForestClassifier(n_estimators=20, random_state=0).fit(X, y)
    else:
        X, y = make_friedman1(400, noise=1.0, random_state=0)
        forest = RandomForestRegressor(n_estimators=20, random_state=0).fit(X, y)
    return forest, X, y


def test_each_candidate_of_the_path_prints_as_the_path_counts_it(fitted):
    forest, X, y = fitted
    model = DefragModel(forest, max_conditions=9, random_state=0).fit(X, y)
    path = model.path_
    assert len(model.path_rules_) == len(path["size"])
    for i, tree in enumerate(model.path_rules_):
        assert tree.form == path["form"][i]
        assert tree.n_conditions == path["n_conditions"][i]
        assert tree.n_regions == path["n_regions"][i]
        # printed for the training rows: the leaves' supports add up to the rows
        assert sum(lf.support for lf in tree.leaves(0)) == len(X)
    assert str(model.path_rules_[path["chosen"]]) == str(model.rules_)
    assert model.path_rules_[-1] is model.path_rules_[len(path["size"]) - 1]
    assert [str(t) for t in model.path_rules_[:3]] == [str(model.path_rules_[i]) for i in range(3)]
    with pytest.raises(IndexError):
        model.path_rules_[len(path["size"])]


def test_a_pickled_model_builds_its_path_as_the_fitted_one(fitted):
    forest, X, y = fitted
    model = DefragModel(forest, random_state=0).fit(X, y)
    copy = pickle.loads(pickle.dumps(model))  # before any candidate but the chosen is built
    texts = [str(t) for t in model.path_rules_]
    assert [str(t) for t in copy.path_rules_] == texts
    assert np.array_equal(copy.predict(X), model.predict(X))


@pytest.mark.parametrize("size", [dict(n_regions=2), dict(n_regions=5), dict(max_conditions=3),
                                  dict(max_conditions=8)])
def test_with_size_prints_what_a_refit_of_that_size_prints(fitted, size):
    forest, X, y = fitted
    budget = dict(max_conditions=8) if "max_conditions" in size else {}
    model = DefragModel(forest, random_state=0, **budget).fit(X, y)
    refit = DefragModel(forest, random_state=0, **size).fit(X, y)
    sized = model.with_size(**size)
    assert str(sized.rules_) == str(refit.rules_)
    assert sized.n_conditions_ == refit.n_conditions_ and sized.n_regions_ == refit.n_regions_
    np.testing.assert_array_equal(sized.predict(X), refit.predict(X))


def test_a_sum_is_asked_with_a_budget_and_for_at_most_two_classes(fitted):
    from sklearn.datasets import load_wine

    forest, X, y = fitted
    with pytest.raises(ValueError, match="form='sum' prints a sum of small trees within a budget"):
        DefragModel(forest, form="sum").fit(X, y)
    model = DefragModel(forest, form="sum", max_conditions=6, random_state=0).fit(X, y)
    assert model.rules_.form == "sum" and model.n_conditions_ <= 6
    # with_size as the refit: a sum's size is its budget, never a count of regions
    with pytest.raises(ValueError, match=r"holds sums of trees only \(form='sum'\): use with_size\(max_conditions=\)"):
        model.with_size(n_regions=4)
    smaller = model.with_size(max_conditions=3)
    assert smaller.rules_.form == "sum" and smaller.n_conditions_ <= 3
    assert str(smaller.rules_) == str(DefragModel(forest, form="sum", max_conditions=3, random_state=0).fit(X, y).rules_)
    Xw, yw = load_wine(return_X_y=True)
    wine = RandomForestClassifier(n_estimators=10, random_state=0).fit(Xw, yw)
    with pytest.raises(ValueError, match="a regression or two classes, not 3"):
        DefragModel(wine, form="sum", max_conditions=6).fit(Xw, yw)


def test_every_searched_form_has_one_path_schema(fitted):
    """Issue 49: path_ has the same keys and types for a list, a tree and a sum; its
    ``chosen`` candidate is the printed explanation, and with_size of a list keeps the
    schema."""
    forest, X, y = fitted
    fits = [DefragModel(forest, random_state=0, n_restarts=2, **kw).fit(X, y)
            for kw in ({}, {"form": "list"}, {"max_conditions": 6}, {"form": "sum", "max_conditions": 6})]
    keys = set(fits[0].path_)
    for model in fits:
        path = model.path_
        assert set(path) == keys
        n = len(path["form"])
        assert n == len(model.path_rules_)
        for key in ("literal_price", "size", "n_regions", "n_conditions", "validation_error", "mean_checks",
                    "train_error"):
            assert isinstance(path[key], np.ndarray) and path[key].shape == (n,), key
        assert model.path_rules_[path["chosen"]] is model.rules_ or path["printed"] == "restarts"
        assert path["printed"] in ("searched", "restarts")
        assert np.array_equal(path["n_conditions"], [r.n_conditions for r in model.path_rules_])
    listed = fits[1]
    assert set(map(str, listed.path_["form"])) == {"list"} and np.all(np.isnan(listed.path_["literal_price"]))
    assert np.array_equal(listed.path_["n_regions"], listed.path_["size"])
    again = listed.with_size(n_regions=2)
    assert set(again.path_) == keys and again.path_rules_[again.path_["chosen"]] is again.rules_
    assert {"tree"} <= set(map(str, fits[0].path_["form"])) and "sum" in set(map(str, fits[3].path_["form"]))


def test_too_few_rows_to_validate_print_the_largest_tree_not_a_constant():
    # under MIN_VALIDATION rows a fold nothing is cross-validated: the tree printed is the
    # largest the path holds within the budget (as the list's), not the one-region constant
    n = MIN_VALIDATION * N_FOLDS - 1
    X = np.random.default_rng(0).normal(size=(n, 3))
    y = (X[:, 0] > 0).astype(int)
    forest = RandomForestClassifier(10, random_state=0).fit(X, y)
    for options in ({}, {"max_conditions": 3}, {"max_conditions": 1}):
        model = DefragModel(forest, random_state=0, **options).fit(X)
        assert model.n_regions_ == 2 and model.n_conditions_ == 1
        np.testing.assert_array_equal(model.predict(X), forest.predict(X))


def test_with_size_refuses_a_size_off_its_path_and_warns_where_a_refit_searches_more():
    X = np.random.default_rng(6).normal(size=(400, 4))
    y = X[:, 0] + (X[:, 1] > 0.3)
    forest = RandomForestRegressor(20, random_state=0).fit(X, y)
    three = DefragModel(forest, n_regions=3, random_state=0).fit(X)
    with pytest.raises(ValueError, match=r"n_regions=8: this fit's path holds trees of 1-3 regions"):
        three.with_size(n_regions=8)
    assert three.with_size(n_regions=2).n_regions_ == 2
    default = DefragModel(forest, random_state=0).fit(X)
    with pytest.warns(UserWarning, match="without a budget: no sums"):
        default.with_size(max_conditions=10)
    budget = DefragModel(forest, max_conditions=7, random_state=0).fit(X)
    with pytest.warns(UserWarning, match="for max_conditions=7"):
        budget.with_size(max_conditions=9)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # within the fit's own budget: what a refit prints
        smaller = budget.with_size(max_conditions=5)
    assert str(smaller) == str(DefragModel(forest, max_conditions=5, random_state=0).fit(X))


def _budget_candidates(sum_error, rng=np.random.default_rng(0)):
    """A plain tree of 4 conditions whose validation losses have mean 1.0 and standard error
    0.1, and a sum of 4 splits of mean validation error sum_error."""
    from defrag.search.tree_path import Candidate, standard_error

    losses = rng.normal(size=400)
    losses = 1.0 + (losses - losses.mean()) / losses.std(ddof=1) * 0.1 * np.sqrt(losses.size)
    tree = Candidate("tree", np.inf, 5, validation_error=float(losses.mean()), losses=losses,
                     validation_se=standard_error(losses), n_conditions=4, n_regions=5)
    total = Candidate("sum", np.inf, 4, validation_error=sum_error, losses=losses + (sum_error - 1.0),
                      validation_se=0.1, n_conditions=4, n_regions=16)
    return [tree, total]


@pytest.mark.parametrize("sum_error, regression, printed", [
    (1.05, True, "sum"),    # within one standard error of the tree's: the sum
    (1.0999, True, "sum"),
    (1.15, True, "tree"),   # beyond it: the tree
    (1.05, False, "tree"),  # two classes: the lowest validation error, as ever
    (0.95, False, "sum"),
])
def test_a_regression_budget_prints_the_sum_within_one_standard_error_of_the_best_tree(sum_error, regression,
                                                                                         printed):
    from defrag.search.tree_path import choose, standard_error

    candidates = _budget_candidates(sum_error)
    assert standard_error(candidates[0].losses) == pytest.approx(0.1)
    assert candidates[choose(candidates, max_conditions=4, regression=regression)].form == printed
    # a budget below the sum's conditions leaves the tree of 4 out too: the smallest printed
    assert candidates[choose(candidates, max_conditions=3, regression=regression)].n_conditions <= 4


def test_a_regression_fit_under_a_budget_and_its_with_size_print_the_same_sum_rule():
    """The fit's choice (sum within one standard error of the best tree) is what with_size
    reads off path_ (validation_se kept there), at the fit's budget and below it."""
    X, y = make_friedman1(600, noise=1.0, random_state=0)
    forest = RandomForestRegressor(50, min_samples_leaf=5, random_state=0).fit(X, y)
    model = DefragModel(forest, max_conditions=7, n_restarts=2, random_state=0).fit(X)
    path = model.path_
    assert np.all(np.isfinite(path["validation_se"][path["form"] != "list"]))
    for B in (7, 5, 3):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            sized = model.with_size(max_conditions=B)
        refit = DefragModel(forest, max_conditions=B, n_restarts=2, random_state=0).fit(X)
        assert str(sized.rules_) == str(refit.rules_)
        i = refit.path_["chosen"]
        trees = (path["form"] == "tree") & (path["n_conditions"] <= B) & np.isfinite(path["validation_error"])
        best_tree = np.flatnonzero(trees)[np.argmin(path["validation_error"][trees])]
        if refit.path_["form"][i] == "tree":  # no sum came within one standard error
            sums = (path["form"] == "sum") & (path["n_conditions"] <= B)
            assert not np.any(path["validation_error"][sums] <= path["validation_error"][best_tree]
                              + path["validation_se"][best_tree])
