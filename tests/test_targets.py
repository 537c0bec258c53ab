"""The targets DefragModel fits, checked before the fit (fit/targets.py, fit/prepare.py):
regression targets of any scale give the same rules, scaled outputs, or a ValueError that
names their range; a classifier given continuous values, too many restarts and data of
fewer rows than the default max_rules (found by a fault hunt)."""
import warnings

import numpy as np
import pytest
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

import defrag
from defrag import DefragModel
from defrag.fit.config import MAX_RESTARTS
from defrag.utils.memory import DefragMemoryError


@pytest.fixture(scope="module")
def regression():
    rng = np.random.RandomState(0)
    X = rng.randn(200, 3)
    y = X[:, 0] + 0.5 * (X[:, 1] > 0) + 0.1 * rng.randn(200)
    return RandomForestRegressor(n_estimators=10, random_state=0).fit(X, y), X, y


def _conditions(model):
    return [[str(c) for c in rule.conditions] for rule in model.rules_.rules]


@pytest.mark.parametrize("kwargs", [{}, {"form": "restarts"}, {"form": "paper"}, {"method": "em"}])
def test_scaled_targets_give_the_same_rules(regression, kwargs):
    # the one-SE rule's standard error once overflowed above 1e77 (one rule), targets
    # within 1e-12 of zero were "constant", and the restarts' lists dropped every rule of
    # targets under about 1e-6 (absolute tolerances): the rules depend on the scale of y
    rf, X, y = regression
    kwargs = {"form": "list", **kwargs}
    base = DefragModel(rf, random_state=0, **kwargs).fit(X, y)
    assert len(base.rules_) >= 1
    for scale in (2.0**-150, 2.0**-40, 2.0**-20, 2.0**40, 2.0**150):
        model = DefragModel(rf, random_state=0, **kwargs).fit(X, y * scale)
        assert _conditions(model) == _conditions(base), scale
        # a power of two scales every sum exactly (FAB's mixture, which some outputs come
        # from, converges to within its tolerance), to the decimals each prints
        half_units = 0.5 * 10.0 ** -model.rules_.decimals + 0.5 * 10.0 ** -base.rules_.decimals * scale
        np.testing.assert_allclose(model.predict(X), base.predict(X) * scale, rtol=1e-8, atol=half_units)


@pytest.mark.parametrize("scale, message", [
    (1e61, r"^y: values as large as -?2\.\d+e\+61; defrag fits regression targets within \+-1e\+60"),
    (1e200, r"^y: values as large as -?2\.\d+e\+200"),
    (1e-61, r"^y: values that span only 4\.\d+e-61; defrag fits .*vary by at least 1e-60: rescale y"),
])
def test_targets_out_of_range_are_refused(regression, scale, message):
    rf, X, y = regression
    with pytest.raises(ValueError, match=message):
        DefragModel(rf, random_state=0, form="list").fit(X, y * scale)


def test_constant_targets_of_any_size_fit_one_rule(regression):
    rf, X, _ = regression
    for value in (0.0, 1e-200, -3.0, 1e50):
        assert len(DefragModel(rf, random_state=0, form="list").fit(X, np.full(X.shape[0], value)).rules_.rules) == 0
    with pytest.raises(ValueError, match=r"^y: values as large as 1e\+200"):
        DefragModel(rf, random_state=0, form="list").fit(X, np.full(X.shape[0], 1e200))


def test_the_predictions_out_of_range_are_named(regression):
    rf, X, y = regression
    big = RandomForestRegressor(n_estimators=3, random_state=0).fit(X, y * 1e70)
    with pytest.raises(ValueError, match=r"^the ensemble's predictions \(the targets where y is None\): values"):
        DefragModel(big, random_state=0, form="list").fit(X)


def test_a_classifier_with_continuous_values_is_refused(regression):
    rf, X, y = regression
    clf = RandomForestClassifier(n_estimators=5, random_state=0).fit(X, (y > 0).astype(int))
    # every distinct number would have been a class of its own: 200 classes, no rule
    with pytest.raises(ValueError, match=r"^y: continuous values, not class labels.*task='regression'"):
        DefragModel(clf, random_state=0, form="list").fit(X, y)
    with pytest.raises(ValueError, match=r"^the ensemble's predictions .*: continuous values, not class labels"):
        DefragModel(rf, task="classification", random_state=0, form="list").fit(X)
    # labels stored as floats are labels, whole or not where the model has them as classes
    model = DefragModel(clf, random_state=0, form="list").fit(X, (y > 0).astype(float))
    assert set(model.classes_) == {0.0, 1.0} and len(model.rules_.rules) >= 1
    cb = pytest.importorskip("catboost")  # (scikit-learn's classifiers refuse such labels)
    halves = np.where(y > 0, 0.5, 1.5)
    clf_halves = cb.CatBoostClassifier(iterations=10, depth=2, verbose=0, allow_writing_files=False).fit(X, halves)
    for args in ((X,), (X, halves)):
        model = DefragModel(clf_halves, random_state=0, form="list").fit(*args)
        assert model.classes_.tolist() == [0.5, 1.5]


def test_a_model_of_several_outputs_is_named(regression):
    _, X, y = regression
    two = RandomForestRegressor(n_estimators=3, random_state=0).fit(X, np.c_[y, -y])
    with pytest.raises(ValueError, match=r"must be 1-D; got shape \(200, 2\) \(a model of several outputs"):
        DefragModel(two, random_state=0, form="list").fit(X)


def test_restarts_are_bounded_and_counted(regression):
    rf, X, y = regression
    for n in (MAX_RESTARTS + 1, 10**20):
        with pytest.raises(ValueError, match=rf"^The 'n_restarts' parameter of DefragModel must be an int in the "
                                             rf"range \[1, {MAX_RESTARTS}\] or a str among {{'auto'}}. Got {n} instead.$"):
            DefragModel(rf, n_restarts=n, form="list").fit(X, y)
    # the searched list keeps every restart's components: counted by the memory guard
    with defrag.max_memory("2M"), pytest.raises(DefragMemoryError, match="the restarts' components"):
        DefragModel(rf, n_restarts=MAX_RESTARTS, random_state=0, form="list").fit(X, y)


def test_fewer_rows_than_the_default_max_rules_fit(regression):
    # 2-9 rows were refused as a memory error under the default n_components=10
    rng = np.random.RandomState(0)
    X = rng.randn(9, 3)
    y = np.arange(9) % 2
    clf = RandomForestClassifier(n_estimators=10, random_state=0).fit(X, y)
    for n in range(1, 10):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            model = DefragModel(clf, random_state=0, form="list").fit(X[:n], y[:n])
        np.testing.assert_array_equal(model.predict(X[:n]), model.rules_.predict(X[:n]))
        assert len(model.rules_.rules) < max(n, 2)
    rf, Xr, yr = regression
    assert len(DefragModel(rf, n_regions=3, random_state=0, form="list").fit(Xr[:6], yr[:6]).rules_.rules) <= 2
    # EM fits exactly max_rules components: still refused, and so is FAB where the rows
    # are more than the default's
    with pytest.raises(DefragMemoryError, match="n_components=10 is more than the 8 rows"):
        DefragModel(clf, method="em", random_state=0, form="list").fit(X[:8], y[:8])
    with pytest.raises(DefragMemoryError, match="n_components=12 is more than the 11 rows"):
        DefragModel(rf, n_components=12, random_state=0, form="list").fit(Xr[:11], yr[:11])


def test_targets_that_are_no_array_or_mix_label_types_are_named(regression):
    from defrag.baselines import DepthTwoTree

    rf, X, y = regression
    clf = RandomForestClassifier(n_estimators=5, random_state=0).fit(X, (y > 0).astype(int))
    mixed = np.array([1 if v > 0 else "a" for v in y], dtype=object)
    for est in (DefragModel(clf, form="list"), DepthTwoTree(clf)):
        # was "y has None entries but X has 200 samples", and NumPy's "'<' not supported"
        for bad, name in ((1, "int"), ((v for v in y), "generator"), ("abc", "str")):
            with pytest.raises(TypeError, match=rf"^y must be array-like, one target per row of X; got {name}$"):
                est.fit(X, bad)
        with pytest.raises(ValueError, match=r"^y has 10 entries but X has 200 samples$"):
            est.fit(X, y[:10])
        with pytest.raises(TypeError, match=r"^class labels mix types that cannot be ordered \(int, str\)"):
            est.fit(X, mixed)


def test_the_list_search_of_many_classes_is_counted():
    # a column per class on each of the search's lists: 5,000 classes took 930 MB, which
    # the memory guard did not count
    rng = np.random.default_rng(0)
    X = rng.normal(size=(4000, 4))
    y = rng.integers(0, 1200, 4000)
    clf = RandomForestClassifier(n_estimators=3, max_depth=6, random_state=0).fit(X, y)
    with defrag.max_memory("150M"), pytest.raises(DefragMemoryError, match=r"\(the list search [0-9.]+ MB"):
        DefragModel(clf, n_restarts=1, random_state=0, form="list").fit(X, y)
    with defrag.max_memory("150M"):  # the restarts' own list: no search
        DefragModel(clf, form="restarts", n_restarts=1, max_iter=3, random_state=0).fit(X, y)


def test_apply_refuses_a_dask_collection_and_rules_map_it(regression):
    da = pytest.importorskip("dask.array")
    rf, X, y = regression
    model = DefragModel(rf, random_state=0, form="list").fit(X, y)
    with pytest.raises(TypeError, match="a Dask collection is taken only by"):
        model.apply(da.from_array(X, chunks=50))
    lazy = model.rules_.apply(da.from_array(X, chunks=50))
    np.testing.assert_array_equal(lazy.compute(), model.apply(X))
