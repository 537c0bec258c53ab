"""scikit-learn's contracts, checked as scikit-learn checks its own estimators: every estimator
of the public API through ``parametrize_with_checks`` (each given an UNFITTED ensemble, which
its fit clones and fits on (X, y), as a meta-estimator does), its ``_parameter_constraints``
through ``check_param_validation``, and cross-validation of an explainer with an unfitted
ensemble, a frozen fitted one and a fitted one (which warns, saying what to do)."""
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_classification
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
from sklearn.frozen import FrozenEstimator
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.utils._param_validation import InvalidParameterError
from sklearn.utils.estimator_checks import check_param_validation, parametrize_with_checks

from defrag import DefragModel, PrototypeExplainer, ProxyTree, ProxyTreeClassifier
from defrag.baselines import BornAgainTree, DepthTwoTree, InTrees, NodeHarvest


def _rfc():
    return RandomForestClassifier(n_estimators=5, random_state=0)


def _rfr():
    return RandomForestRegressor(n_estimators=5, random_state=0)


# small settings where the defaults would make the checks slow (they fit each estimator
# about fifty times); the contracts do not depend on them
ESTIMATORS = [
    DefragModel(_rfc(), n_restarts=1, random_state=0),
    DefragModel(_rfr(), n_restarts=1, random_state=0),
    # the 2016 mixture of experts (a softmax gate; predict is the experts' mixture)
    DefragModel(_rfc(), method="em-kl", n_restarts=1, max_iter=5, random_state=0),
    BornAgainTree(_rfc(), depth_grid=(2, 3), n_generated=20, random_state=0),
    BornAgainTree(_rfr(), depth_grid=(2, 3), n_generated=20, random_state=0),
    InTrees(_rfc()),
    InTrees(_rfr()),
    NodeHarvest(_rfc(), random_state=0),
    NodeHarvest(_rfr(), random_state=0),
    DepthTwoTree(_rfc(), random_state=0),
    DepthTwoTree(_rfr(), random_state=0),
    ProxyTree(_rfr(), random_state=0),
    ProxyTree(random_state=0),  # no reference: a maximum-likelihood CART of y
    ProxyTreeClassifier(_rfc(), random_state=0),
    PrototypeExplainer(_rfc(), random_state=0),
]


def _expected_failed_checks(estimator):
    """Checks that cannot apply, each with its reason (none today: an explainer given an
    unfitted ensemble behaves as any scikit-learn estimator)."""
    return {}


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=_expected_failed_checks)
def test_scikit_learn_estimator_checks(estimator, check):
    check(estimator)


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=lambda e: type(e).__name__)
def test_parameter_constraints(estimator):
    # each declared constraint refused with scikit-learn's InvalidParameterError at fit
    check_param_validation(type(estimator).__name__, estimator)


def test_clear_messages_kept_where_constraints_cannot_say():
    X, y = make_classification(n_samples=60, n_features=4, random_state=0)
    with pytest.raises(InvalidParameterError, match="The 'form' parameter of DefragModel must be a str among"):
        DefragModel(_rfc(), form="rules").fit(X, y)
    # what a constraint cannot express: two parameters together
    with pytest.raises(ValueError, match="set n_regions .* or max_conditions .*, not both"):
        DefragModel(_rfc(), n_regions=3, max_conditions=4).fit(X, y)


@pytest.fixture(scope="module")
def classification():
    return make_classification(n_samples=200, n_features=5, n_informative=3, random_state=0)


def test_cross_val_score_with_an_unfitted_forest(classification):
    X, y = classification
    forest = RandomForestClassifier(n_estimators=20, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing to warn about: each fold fits its forest
        scores = cross_val_score(DefragModel(forest, n_restarts=2, random_state=0), X, y, cv=3)
    assert scores.shape == (3,) and np.all(scores > 0.6)
    assert not hasattr(forest, "estimators_")  # the parameter is left unfitted


def test_cross_val_score_with_a_frozen_fitted_forest(classification):
    X, y = classification
    forest = RandomForestClassifier(n_estimators=20, random_state=0).fit(X, y)
    model = DefragModel(FrozenEstimator(forest), n_restarts=2, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        scores = cross_val_score(model, X, y, cv=3)
    assert np.all(scores > 0.6)
    fitted = clone(model).fit(X, y)
    assert fitted.estimator_.estimator is forest  # explained as it is, not refitted


def test_a_fitted_forest_in_cross_validation_warns_what_to_do(classification):
    X, y = classification
    forest = RandomForestClassifier(n_estimators=20, random_state=0).fit(X, y)
    with pytest.warns(UserWarning) as record:
        cross_val_score(DefragModel(forest, n_restarts=2, random_state=0), X, y, cv=2)
    first_line = str(record[0].message).splitlines()[0]
    assert first_line.startswith("Wrap the fitted RandomForestClassifier in sklearn.frozen.FrozenEstimator")
    assert "or pass it unfitted" in first_line
    assert record[0].filename == __file__  # the user's line, not scikit-learn's or joblib's


def test_grid_search_over_the_explanation_and_the_forest(classification):
    X, y = classification
    search = GridSearchCV(DefragModel(RandomForestClassifier(n_estimators=10, random_state=0), n_restarts=1,
                                      random_state=0),
                          {"n_regions": [2, 4], "estimator__max_depth": [3, None]}, cv=2).fit(X, y)
    assert search.best_estimator_.n_regions_ == search.best_params_["n_regions"]
    assert search.best_estimator_.estimator_.max_depth == search.best_params_["estimator__max_depth"]


@pytest.mark.parametrize("make", [
    lambda est: DefragModel(est, n_restarts=1, random_state=0), lambda est: InTrees(est),
    lambda est: PrototypeExplainer(est, n_prototypes=4), lambda est: ProxyTreeClassifier(est)])
def test_fitted_ensemble_used_as_it_is_unfitted_one_cloned(make, classification):
    X, y = classification
    fitted = _rfc().fit(X, y)
    assert make(fitted).fit(X, y).estimator_ is fitted
    unfitted = _rfc()
    model = make(unfitted).fit(X, y)
    assert model.estimator_ is not unfitted and not hasattr(unfitted, "estimators_")
    np.testing.assert_array_equal(model.estimator_.predict(X), fitted.predict(X))  # same seed, same forest


# ------------------------------------------------------------------ displays and warnings

@pytest.mark.parametrize("make", [
    lambda est: DefragModel(est, n_restarts=1, random_state=0), lambda est: BornAgainTree(est, random_state=0),
    lambda est: InTrees(est), lambda est: NodeHarvest(est), lambda est: DepthTwoTree(est),
    lambda est: ProxyTreeClassifier(est, max_leaves=3), lambda est: PrototypeExplainer(est, n_prototypes=3)])
def test_every_explainer_prints_and_shows_its_explanation(make, classification):
    X, y = classification
    model = make(_rfc())
    assert str(model) == repr(model)  # unfitted: scikit-learn's repr
    model.fit(X, y)
    name = type(model).__name__
    text, html = str(model), model._repr_html_()
    title = next(line for line in text.splitlines() if line.startswith(name + ":"))  # "Name: N regions, ..."
    assert len(text.splitlines()) > 2 and title in html.replace("&#x27;", "'")  # the explanation, below its title
    assert html.startswith("<") and name in html
    bundle = model._repr_mimebundle_()
    assert bundle["text/plain"] == text and bundle["text/html"].startswith(html[:40])


def test_warnings_point_at_the_users_line(classification):
    X, y = classification
    forest = RandomForestClassifier(n_estimators=5, max_depth=2, random_state=0).fit(X, y)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        # fewer regions than asked: warned by the search, several calls deep behind fit's decorator
        model = DefragModel(forest, form="list", n_regions=40, n_restarts=1, random_state=0).fit(X, y)
        model.evaluate(X, np.where(y == 1, 7, y))  # a label the model was not fitted with
        import pandas as pd

        model.predict(pd.DataFrame(X, columns=[f"c{j}" for j in range(X.shape[1])]))  # names unseen at fit
    messages = [str(w.message) for w in record]
    assert any("n_regions=40" in m for m in messages) and any("not fitted with" in m for m in messages)
    assert any("feature names" in m for m in messages)
    assert [w.filename for w in record] == [__file__] * len(record), [(w.filename, w.lineno) for w in record]
    assert len(messages) == len(set(messages))  # each cause warns once
