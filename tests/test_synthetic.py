"""Synthetic1 of sec. 7 (Hara & Hayashi 2017): the figures the core fit must reach."""
import numpy as np
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

from conftest import xor_data
from defrag import DefragModel


def test_synthetic1_classification_ten_seeds():
    n_rules, errors, forest_errors = [], [], []
    for seed in range(10):
        Xtr, ytr, Xte, yte = xor_data(seed)
        rf = RandomForestClassifier(n_estimators=100, random_state=seed, n_jobs=2).fit(Xtr, ytr)
        m = DefragModel(rf, n_components=10, n_restarts=20, random_state=0, n_jobs=2, form="list").fit(Xtr, ytr)
        ev = m.evaluate(Xte, yte)
        n_rules.append((m.n_components_, m.n_regions_))
        errors.append(ev["error"])
        forest_errors.append(np.mean(rf.predict(Xte) != yte))
    # FAB finds the 4 regions; printed as a list, XOR is two rules (the quadrants of one
    # class) and the default (the other two): 3 lines
    assert sum(k == 4 for k, _ in n_rules) >= 8, n_rules
    assert sum(r == 3 for _, r in n_rules) >= 8, n_rules
    assert np.mean(errors) <= np.mean(forest_errors) + 0.03, (np.mean(errors), np.mean(forest_errors))


def test_synthetic1_regression():
    # R's randomForest, used in the paper, grows regression trees with nodesize=5
    # and mtry=max(floor(D/3), 1) = 1: the same forest in scikit-learn terms.
    for seed in range(5):
        Xtr, ytr, Xte, yte = xor_data(seed, regression=True)
        rf = RandomForestRegressor(n_estimators=100, min_samples_leaf=5, max_features=1,
                                   random_state=seed, n_jobs=2).fit(Xtr, ytr)
        m = DefragModel(rf, n_restarts=20, random_state=0, n_jobs=2, form="list").fit(Xtr, ytr)
        ev = m.evaluate(Xte, yte)
        # XOR as a list: two quadrants of one value and the default (the other two), or
        # the four quadrants (the restarts' own list, where it cross-validates as well)
        assert m.n_regions_ in (3, 4), (seed, str(m))
        assert ev["error"] <= 0.05, (seed, ev)


def test_synthetic1_paper_preset():
    """Algorithm 1 as published (every split, MAP prediction): the 4 rules of the paper
    cover the space."""
    n_rules = []
    for seed in range(5):
        Xtr, ytr, Xte, yte = xor_data(seed)
        rf = RandomForestClassifier(n_estimators=100, random_state=seed, n_jobs=2).fit(Xtr, ytr)
        m = DefragModel.paper(rf, n_components=10, n_restarts=20, random_state=0, n_jobs=2).fit(Xtr, ytr)
        ev = m.evaluate(Xte, yte)
        coverage = np.mean(m.rules_.covers(Xte).any(axis=1))  # the paper's: rows a rule covers
        assert coverage >= 0.95 and ev["error"] == ev["error_mixture_map"], (seed, coverage, ev)
        n_rules.append(m.n_regions_)
    assert sum(k == 4 for k in n_rules) >= 4, n_rules
