"""Restarts fitted on a subsample and selected by training error on all rows."""
import numpy as np
import pytest
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

from conftest import xor_data
from defrag import DefragModel
from defrag.fit.config import AUTO_SEARCH_ROWS, AUTO_SUBSAMPLE, AUTO_SUBSAMPLE_ABOVE, FitConfig


@pytest.fixture(scope="module")
def xor_4000():
    Xtr, ytr, Xte, yte = xor_data(3, n=4000)
    rf = RandomForestClassifier(n_estimators=20, max_depth=6, random_state=0).fit(Xtr, ytr)
    return rf, Xtr, ytr, Xte, yte


def test_restarts_on_a_subsample_are_selected_on_all_rows(xor_4000):
    rf, Xtr, ytr, Xte, yte = xor_4000
    m = DefragModel(rf, n_restarts=4, subsample=1000, form="restarts", random_state=0).fit(Xtr, ytr)
    assert m.subsample_size_ == 1000
    assert m.restart_errors_.shape == (4,)
    # the error rates are taken on all 4,000 rows: the kept model's is its error on X
    n_wrong = np.count_nonzero(m.predict(Xtr) != ytr)
    assert m.restart_errors_.min() == pytest.approx(n_wrong / len(Xtr), rel=1e-12)
    assert n_wrong > 1000 * 0.05  # 10% label noise: more errors than a 1,000-row count could hold
    # the kept restart is the one with the fewest rules among those of the smallest error
    # on all rows (XOR: two rules and the default describe it as a list)
    best = m.restart_errors_ == m.restart_errors_.min()
    assert m.n_regions_ == m.restart_n_regions_[best].min(), str(m)
    assert 3 <= m.n_regions_ <= 8, str(m)
    assert m.evaluate(Xte, yte)["error"] <= 0.15
    # rules, supports and pruning still use every training row
    assert sum(r.support for r in m.rules_.rules) <= len(Xtr)
    assert max(r.support for r in m.rules_.rules) > 1000 / 4


def test_subsample_result_does_not_depend_on_n_jobs(xor_4000):
    rf, Xtr, ytr, _, _ = xor_4000
    a = DefragModel(rf, n_restarts=4, subsample=0.25, random_state=1, n_jobs=1, form="list").fit(Xtr, ytr)
    b = DefragModel(rf, n_restarts=4, subsample=0.25, random_state=1, n_jobs=2, form="list").fit(Xtr, ytr)
    assert a.subsample_size_ == b.subsample_size_ == 1000
    np.testing.assert_array_equal(a.restart_errors_, b.restart_errors_)
    np.testing.assert_array_equal(a.eta_, b.eta_)
    assert str(a.rules_) == str(b.rules_)


def test_subsample_changes_the_fit_and_none_uses_all_rows(xor_4000):
    rf, Xtr, ytr, _, _ = xor_4000
    kw = dict(n_restarts=3, form="restarts", random_state=0)  # (the searched list: 3,000 rows, below)
    full = DefragModel(rf, subsample=None, **kw).fit(Xtr, ytr)
    auto = DefragModel(rf, **kw).fit(Xtr, ytr)  # 4,000 rows: no subsample
    sub = DefragModel(rf, subsample=800, **kw).fit(Xtr, ytr)
    assert full.subsample_size_ == auto.subsample_size_ == len(Xtr)
    np.testing.assert_array_equal(full.eta_, auto.eta_)
    assert sub.subsample_size_ == 800
    assert sub.eta_.shape[1] == full.eta_.shape[1]
    assert not np.array_equal(sub.lower_bound_, full.lower_bound_)
    # a single restart is never subsampled, whatever subsample says
    one = DefragModel(rf, n_restarts=1, subsample=800, form="restarts", random_state=0).fit(Xtr, ytr)
    assert one.subsample_size_ == len(Xtr)


def test_auto_subsample_size():
    def config(**params):
        return FitConfig.from_params(DefragModel(**params).get_params())

    m = config(n_restarts=20, form="restarts")
    assert m.subsample_size(AUTO_SUBSAMPLE_ABOVE) == AUTO_SUBSAMPLE_ABOVE
    assert m.subsample_size(AUTO_SUBSAMPLE_ABOVE + 1) == AUTO_SUBSAMPLE
    assert config(subsample=0.5).subsample_size(1001) == 501
    assert config(subsample=10**9).subsample_size(1000) == 1000
    # the searched list: the restarts on the rows the list is searched on
    assert config().subsample_size(10_000) == AUTO_SEARCH_ROWS == 3000
    assert config().subsample_size(1000) == 1000


def test_subsample_regression():
    Xtr, ytr, Xte, yte = xor_data(1, n=3000, regression=True)
    rf = RandomForestRegressor(n_estimators=20, min_samples_leaf=5, max_features=1,
                               random_state=0).fit(Xtr, ytr)
    m = DefragModel(rf, subsample=1000, form="restarts", random_state=0).fit(Xtr, ytr)
    mse = np.mean((m.predict(Xtr) - ytr) ** 2)
    # (the predictions rounded to the decimals printed)
    np.testing.assert_allclose(m.restart_errors_.min(), mse, rtol=1e-3)
    assert m.evaluate(Xte, yte)["error"] <= 0.05


@pytest.mark.parametrize("bad", [0, -5, 0.0, 1.5, "all", True, np.nan])
def test_bad_subsample_is_a_value_error(xor_4000, bad):
    rf, Xtr, ytr, _, _ = xor_4000
    with pytest.raises(ValueError, match="subsample"):
        DefragModel(rf, subsample=bad, form="list").fit(Xtr[:100], ytr[:100])


@pytest.mark.parametrize("form", ["restarts", "paper"])
def test_restart_errors_are_rates_and_logs_have_no_nan(form, caplog):
    """Subsampled restarts are scored on all rows by the caller: the log never says
    'training error nan', and restart_errors_ are rates on all rows, not counts."""
    Xtr, ytr, _, _ = xor_data(3, n=1500)
    rf = RandomForestClassifier(n_estimators=10, max_depth=4, random_state=0).fit(Xtr, ytr)
    with caplog.at_level("INFO", logger="defrag"):
        m = DefragModel(rf, n_restarts=3, subsample=500, form=form, verbose=1, random_state=0).fit(Xtr, ytr)
    text = caplog.text
    assert "training error" in text and "nan" not in text.lower(), text
    assert np.all((m.restart_errors_ >= 0) & (m.restart_errors_ <= 1))
    if form == "restarts":  # the kept list's rate is its error on all rows
        assert m.restart_errors_.min() == pytest.approx(np.mean(m.predict(Xtr) != ytr), rel=1e-12)
    else:
        assert m.restart_errors_.min() == pytest.approx(np.mean(m.predict_map(Xtr) != ytr), rel=1e-12)
    logged = [float(line.rsplit(" ", 1)[1]) for line in text.splitlines() if "training error" in line]
    np.testing.assert_allclose(sorted(logged), sorted(m.restart_errors_), rtol=1e-5)


@pytest.mark.parametrize("task", ["classification", "regression"])
def test_a_tree_of_the_models_predictions_reads_only_the_restarts_rows(xor_4000, task, monkeypatch):
    # a tree (or sum) explaining the model on a subsample is grown on the subsample's rows
    # with the model's predictions of them: the other rows are read, not predicted; the
    # restarts are scored on their own rows. form="list" refits its rules on every row.
    from defrag.sources.sklearn_trees import SklearnTreesSource

    _, Xtr, ytr, _, _ = xor_4000
    if task == "classification":
        model = RandomForestClassifier(n_estimators=20, max_depth=6, random_state=0).fit(Xtr, ytr)
    else:
        model = RandomForestRegressor(n_estimators=20, max_depth=6, random_state=0).fit(Xtr, ytr + Xtr[:, 1])
    predicted = []
    for method in ("predict", "predict_proba"):
        original = getattr(SklearnTreesSource, method)

        def counted(self, X, original=original):
            predicted.append(len(X))
            return original(self, X)

        monkeypatch.setattr(SklearnTreesSource, method, counted)
    tree = DefragModel(model, n_restarts=3, random_state=0).fit(Xtr)
    assert tree.subsample_size_ == AUTO_SEARCH_ROWS < len(Xtr)
    assert predicted and max(predicted) == AUTO_SEARCH_ROWS, predicted
    # the printed regions count every training row
    assert sum(lf.support for lf in tree.rules_.leaves(0)) == len(Xtr), str(tree)
    if task == "classification":
        # error rates over the 3,000 rows: counts of misclassified rows over 3,000
        counts = tree.restart_errors_ * AUTO_SEARCH_ROWS
        np.testing.assert_allclose(counts, np.round(counts), rtol=0, atol=1e-9)
        assert not np.allclose(tree.restart_errors_ * len(Xtr), np.round(tree.restart_errors_ * len(Xtr)))
    predicted.clear()
    DefragModel(model, n_restarts=3, form="list", random_state=0).fit(Xtr)
    assert max(predicted) == len(Xtr)
