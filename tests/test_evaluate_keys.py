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
