"""evaluate's figures have a reference (issue 48.1): the model's error on the same rows,
R^2 in regression, the fidelity to the model; and every key it returns is in the one table
of docs/user_guide/reading.rst, which names no key it does not return."""
import os
import re

import numpy as np
import pytest
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
from sklearn.metrics import r2_score

from conftest import xor_data
from defrag import DefragModel
from defrag.baselines import DepthTwoTree

READING = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "docs", "user_guide",
                       "reading.rst")


def _forest(regression, seed=0):
    Xtr, ytr, Xte, yte = xor_data(seed, n=500, regression=regression)
    kind = RandomForestRegressor if regression else RandomForestClassifier
    return kind(n_estimators=10, max_depth=4, random_state=0).fit(Xtr, ytr), Xtr, ytr, Xte, yte


def test_classification_reports_the_model_error_beside_the_explanations():
    rf, Xtr, _, Xte, yte = _forest(False)
    m = DefragModel(rf, n_restarts=2, random_state=0).fit(Xtr)
    ev = m.evaluate(Xte, yte)
    assert ev["error"] == pytest.approx(np.mean(m.predict(Xte) != yte))
    assert ev["model_error"] == pytest.approx(np.mean(rf.predict(Xte) != yte))
    assert ev["fidelity"] == pytest.approx(np.mean(m.predict(Xte) == rf.predict(Xte)))
    assert "r2" not in ev and "model_r2" not in ev


def test_regression_reports_r2_of_both_and_fidelity_as_r2_against_the_model():
    rf, Xtr, _, Xte, yte = _forest(True)
    m = DefragModel(rf, n_restarts=2, random_state=0, form="sum", max_conditions=8).fit(Xtr)
    ev = m.evaluate(Xte, yte)
    pred, ens = m.predict(Xte), rf.predict(Xte)
    assert ev["error"] == pytest.approx(np.mean((pred - yte) ** 2))
    assert ev["model_error"] == pytest.approx(np.mean((ens - yte) ** 2))
    assert ev["r2"] == pytest.approx(r2_score(yte, pred))
    assert ev["model_r2"] == pytest.approx(r2_score(yte, ens))
    assert ev["fidelity"] == pytest.approx(r2_score(ens, pred))
    # one row: no R^2 (undefined), not a NaN with a warning
    one = m.evaluate(Xte[:1], yte[:1])
    assert one["r2"] is None and one["model_r2"] is None and one["fidelity"] is None


def test_a_baseline_reports_the_same_reference():
    rf, Xtr, ytr, Xte, yte = _forest(True, seed=1)
    ev = DepthTwoTree(rf).fit(Xtr, ytr).evaluate(Xte, yte)
    assert ev["model_error"] == pytest.approx(np.mean((rf.predict(Xte) - yte) ** 2))
    assert ev["model_r2"] == pytest.approx(r2_score(yte, rf.predict(Xte)))


def _table_keys():
    with open(READING, encoding="utf-8") as f:
        text = f.read()
    table = text[text.index(".. list-table::"):]
    table = table[:table.index("\nHow good is good")]
    return re.findall(r"^   \* - ``(\w+)``$", table, flags=re.M)


def test_the_one_table_documents_exactly_the_keys_evaluate_returns():
    keys = set()
    rf, Xtr, ytr, Xte, yte = _forest(False)
    for form in ("tree", "list"):
        keys |= set(DefragModel(rf, n_restarts=2, random_state=0, form=form).fit(Xtr).evaluate(Xte, yte))
    rf, Xtr, ytr, Xte, yte = _forest(True)
    keys |= set(DefragModel(rf, n_restarts=2, random_state=0, form="sum", max_conditions=8).fit(Xtr).evaluate(Xte, yte))
    keys |= set(DefragModel(rf, method="em-kl", n_components=3, n_restarts=1, max_iter=10,
                            random_state=0).fit(Xtr).evaluate(Xte, yte))
    keys |= set(DepthTwoTree(rf).fit(Xtr, ytr).evaluate(Xte, yte))
    documented = _table_keys()
    assert len(documented) == len(set(documented))
    assert set(documented) == keys


def _shares(region):
    """The share of rows in each region a row falls in (rows of region: one per row)."""
    counts = np.unique(np.asarray(region).reshape(len(region), -1), axis=0, return_counts=True)[1]
    return counts / len(region)


def test_region_keys_say_where_the_rows_fall_in_every_form():
    # issue 49.6: the same meaning for a tree, a sum and a list (coverage and overlap were 1
    # for every tree, whatever the rows)
    rf, Xtr, _, Xte, yte = _forest(True)
    tree = DefragModel(rf, n_restarts=2, random_state=0, form="tree").fit(Xtr)
    listed = DefragModel(rf, n_restarts=2, random_state=0, form="list").fit(Xtr)
    # an additive target: a sum of several parts, whose regions are combinations of leaves
    rng = np.random.default_rng(0)
    X = rng.random((600, 3))
    y = (X[:, 0] > 0.5) + 2.0 * (X[:, 1] > 0.3) + (X[:, 1] > 0.8) + 0.1 * rng.standard_normal(600)
    additive = RandomForestRegressor(n_estimators=10, max_depth=4, random_state=0).fit(X[:400], y[:400])
    the_sum = DefragModel(additive, n_restarts=2, random_state=0, form="sum", max_conditions=6).fit(X[:400])
    assert len(the_sum.rules_.terms) >= 2, str(the_sum)
    for model, Xe, ye in ((tree, Xte, yte), (listed, Xte, yte), (the_sum, X[400:], y[400:])):
        ev, shares = model.evaluate(Xe, ye), _shares(model.rules_.apply(Xe))  # a sum: a leaf per part
        assert ev["largest_region"] == pytest.approx(shares.max())
        assert ev["regions_reached"] == shares.size <= ev["n_regions"]
    assert the_sum.evaluate(X[400:], y[400:])["regions_reached"] > len(the_sum.rules_.leaves(0))
    cover = listed.rules_.covers(Xte)
    assert listed.evaluate(Xte, yte)["overlap_share"] == pytest.approx(np.mean(cover.sum(axis=1) > 1))
    # a leaf's conditions are those of its path: no row satisfies two regions of a tree or a sum
    assert tree.evaluate(Xte, yte)["overlap_share"] == the_sum.evaluate(X[400:], y[400:])["overlap_share"] == 0.0


def test_region_keys_of_the_paper_are_its_map_components():
    # form "paper" predicts by the most probable component: that is a row's region, not the
    # first of its rules that holds
    rf, Xtr, ytr, Xte, yte = _forest(False)
    paper = DefragModel.paper(rf, n_restarts=2, random_state=0).fit(Xtr, ytr)
    ev, shares = paper.evaluate(Xte, yte), _shares(paper.apply_map(Xte))
    assert ev["largest_region"] == pytest.approx(shares.max())
    assert ev["regions_reached"] == shares.size <= paper.n_regions_
    cover = paper.rules_.covers(Xte)
    assert ev["overlap_share"] == pytest.approx(np.mean(cover.sum(axis=1) > 1))
