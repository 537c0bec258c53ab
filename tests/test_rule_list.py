"""Rules that predict: the printed rule list is the predictor, split selection keeps
the splits of largest gain, FAB's penalty counts all the ensemble's splits, and the
paper preset runs Algorithm 1 unchanged."""
import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, load_diabetes
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

from conftest import xor_data
from reference import printed_bound
from defrag import Condition, DefragModel, Rule
from defrag.rules.lists import fit_rule_list, list_loss
from defrag.sources import adapt


@pytest.fixture(scope="module")
def cancer():
    X, y = load_breast_cancer(return_X_y=True)
    rf = RandomForestClassifier(n_estimators=30, random_state=0).fit(X[:400], y[:400])
    return rf, X[:400], y[:400], X[400:], y[400:]


def first_match_by_hand(rules, X):
    """Index of the first rule whose conditions all hold, len(rules) for none (plain NumPy)."""
    first = np.full(X.shape[0], len(rules))
    for j in reversed(range(len(rules))):
        first = np.where(rules[j].covers(X), j, first)
    return first


@pytest.mark.parametrize("task", ["classification", "regression"])
def test_predictions_are_the_printed_rules_read_first_match(task, cancer):
    if task == "classification":
        rf, Xtr, ytr, Xte, yte = cancer
    else:
        X, y = load_diabetes(return_X_y=True)
        rf = RandomForestRegressor(n_estimators=30, min_samples_leaf=5, random_state=0).fit(X[:300], y[:300])
        Xtr, ytr, Xte, yte = X[:300], y[:300], X[300:], y[300:]
    m = DefragModel(rf, n_restarts=5, random_state=0, form="list").fit(Xtr, ytr)
    for X in (Xtr, Xte):
        first = first_match_by_hand(m.rules_.rules, X)
        np.testing.assert_array_equal(m.apply(X), first)
        expected = np.array([r.prediction for r in m.rules_.rules] + [m.rules_.default_prediction])[first]
        np.testing.assert_array_equal(m.predict(X), expected)
        np.testing.assert_array_equal(m.predict(X), m.rules_.predict(X))
    # each output is refitted on the training points the rule is the first match for
    first = m.apply(Xtr)
    target = ytr  # fitted to y
    for j, rule in enumerate(m.rules_.rules):
        assert rule.support == np.sum(first == j) > 0
        if task == "classification":
            counts = np.bincount(target[first == j], minlength=2)
            assert rule.prediction == np.argmax(counts)
            np.testing.assert_allclose(rule.proba, counts / counts.sum())
        else:
            # the mean, rounded to the decimals printed
            assert rule.prediction == pytest.approx(target[first == j].mean(), abs=0.5 * 10.0 ** -m.rules_.decimals)
    rest = target[first == len(m.rules_.rules)]
    if task == "regression":
        assert m.rules_.default_prediction == pytest.approx(rest.mean(), abs=0.5 * 10.0 ** -m.rules_.decimals)
    ev = m.evaluate(Xte, yte)
    error = np.mean(m.predict(Xte) != yte) if task == "classification" else np.mean((m.predict(Xte) - yte) ** 2)
    assert ev["error"] == pytest.approx(error)
    assert ev["error_mixture_map"] == pytest.approx(
        np.mean(m.predict_map(Xte) != yte) if task == "classification" else np.mean((m.predict_map(Xte) - yte) ** 2))
    assert m.n_regions_ == len(m.rules_.rules) + 1


def test_restart_kept_is_the_one_with_the_smallest_list_error(cancer):
    rf, Xtr, ytr, _, _ = cancer
    m = DefragModel(rf, n_restarts=6, form="restarts", random_state=0).fit(Xtr, ytr)
    assert m.restart_errors_.min() == pytest.approx(np.mean(m.predict(Xtr) != ytr), rel=1e-12)
    best = m.restart_errors_ == m.restart_errors_.min()
    assert m.n_regions_ == m.restart_n_regions_[best].min()


def test_rule_list_orders_greedily_and_prunes_within_the_tolerance():
    rng = np.random.default_rng(0)
    X = rng.random((400, 3))
    y = (X[:, 0] > 0.5).astype(np.int32)  # x2 is noise
    noisy = Condition(2, "x2", lower=0.02)  # holds for ~98% of the points
    wide = Rule([Condition(1, "x1", upper=2.0)], None)  # always: it would take everything
    right = Rule([Condition(0, "x0", lower=0.5), noisy], None)
    fitted = fit_rule_list([wide, right], X, y, 2, np.array([0, 1]))
    # the rule on x0 goes first; the always-rule left last becomes the default
    assert len(fitted.rules) == 1 and fitted.rules[0].conditions[0].feature == 0
    # the near-vacuous condition on x2 costs nothing to drop at tolerance 0 only if the
    # loss does not grow: the points with x2 <= 0.02 and x0 > 0.5 are then correct too
    assert [c.feature for c in fitted.rules[0].conditions] == [0]
    assert fitted.loss == 0.0 and fitted.default_prediction == 0
    # a condition that saves errors stays at tolerance 0 and goes at a large one
    both = ((X[:, 0] > 0.5) & (X[:, 2] > 0.5)).astype(np.int32)
    exact = Rule([Condition(0, "x0", lower=0.5), Condition(2, "x2", lower=0.5)], None)
    kept = fit_rule_list([exact], X, both, 2, np.array([0, 1]), prune_tol=0.0)
    assert [c.feature for c in kept.rules[0].conditions] == [0, 2] and kept.loss == 0.0
    # budget: the loss of one constant, all that dropping both conditions costs
    dropped = fit_rule_list([exact], X, both, 2, np.array([0, 1]), prune_tol=1.0)
    assert dropped.rules == [] and dropped.loss == min(both.sum(), len(both) - both.sum())
    # list_loss: misclassified points of refitted outputs, by hand
    cover = np.column_stack([X[:, 0] > 0.5, np.ones(400, bool)])
    assert list_loss(cover, y, 2) == 0.0
    assert list_loss(cover[:, ::-1], y, 2) == min(y.sum(), 400 - y.sum())


def test_split_selection_keeps_the_splits_of_largest_gain(cancer):
    rf, Xtr, ytr, _, _ = cancer
    m = DefragModel(rf, max_splits=50, n_restarts=1, random_state=0, form="list").fit(Xtr, ytr)
    full = adapt(rf).split_table().without_idle_directions(Xtr)
    assert len(m.splits_) == 50 and m.n_all_splits_ == len(full)
    # the gain of a split: the largest sample-weighted impurity decrease of its nodes
    gain = {}
    for tree in adapt(rf).trees():
        for j in np.flatnonzero(~tree.is_leaf):
            key = (int(tree.feature[j]), float(tree.threshold[j]))
            gain[key] = max(gain.get(key, -np.inf), tree.gain[j])
    kept = set(zip(m.splits_.feature.tolist(), m.splits_.threshold.tolist()))
    threshold = min(gain[k] for k in kept)
    assert all(g <= threshold for k, g in gain.items() if k not in kept)
    np.testing.assert_allclose(sorted(gain[k] for k in kept), sorted(m.splits_.gain))
    auto = DefragModel(rf, n_restarts=1, random_state=0, form="list").fit(Xtr, ytr)
    assert len(auto.splits_) == int(np.ceil(10 * np.sqrt(len(Xtr))))


def test_penalty_counts_all_splits_and_the_paper_preset_is_algorithm_1():
    Xtr, ytr, _, _ = xor_data(0)
    rf = RandomForestClassifier(n_estimators=30, random_state=0).fit(Xtr, ytr)
    # with every split kept, the two penalties are one: the same bits
    a = DefragModel(rf, max_splits=None, form="paper", n_restarts=3, random_state=0).fit(Xtr, ytr)
    b = DefragModel(rf, max_splits=None, form="paper", penalty_splits="selected", n_restarts=3,
                    random_state=0).fit(Xtr, ytr)
    paper = DefragModel.paper(rf, n_restarts=3, random_state=0).fit(Xtr, ytr)
    for m in (b, paper):
        np.testing.assert_array_equal(m.eta_, a.eta_)
        np.testing.assert_array_equal(m.lower_bound_, a.lower_bound_)
    assert paper.get_params()["max_splits"] is None and paper.get_params()["form"] == "paper"
    np.testing.assert_array_equal(paper.predict(Xtr), paper.predict_map(Xtr))
    # on a selection the penalty over all splits is larger: its bound is lower
    sel = DefragModel(rf, max_splits=100, form="paper", n_restarts=1, eps_schedule=(), max_iter=1,
                      random_state=0).fit(Xtr, ytr)
    sel_small = DefragModel(rf, max_splits=100, form="paper", penalty_splits="selected", n_restarts=1,
                            eps_schedule=(), max_iter=1, random_state=0).fit(Xtr, ytr)
    # the same start, a larger omega: a lower bound at the first iteration
    assert sel.lower_bound_[0] < sel_small.lower_bound_[0]


def test_printed_thresholds_split_the_training_points_as_the_real_ones(cancer):
    rf, Xtr, ytr, _, _ = cancer
    m = DefragModel(rf, n_restarts=3, random_state=0, form="list").fit(Xtr, ytr)
    for rule in m.rules_.rules:
        for c in rule.conditions:
            column = Xtr[:, c.feature]
            for real, printed in ((c.lower, c.printed_lower), (c.upper, c.printed_upper)):
                if real is None:
                    continue
                assert np.array_equal(column <= real, column <= printed)
                assert repr(printed).removesuffix(".0") in str(c) and len(repr(printed)) <= len(repr(real))
    column = np.array([0.1, 0.2, 0.3049, 0.31, np.nan])
    assert printed_bound(0.30495, column) == 0.305  # no point between 0.3049 and 0.31
    assert printed_bound(0.3, np.array([0.29, 0.3001])) == 0.3
    # the nearest 3-digit decimal (896) lies below a training point at the threshold: 897 fits
    assert printed_bound(896.04, np.array([800.0, 896.04, 897.6])) == 897.0


def test_or_missing_is_printed_only_where_training_had_missing_values(cancer):
    rf, Xtr, ytr, _, _ = cancer
    m = DefragModel(rf, n_restarts=3, random_state=0, form="list").fit(Xtr, ytr)
    # (a condition the trees send NaN to may carry the mark "*": none was missing in training)
    assert "(or missing)" not in str(m)
    Xn = Xtr.copy()
    Xn[::5] = np.nan
    rfn = RandomForestClassifier(n_estimators=30, random_state=0).fit(Xn, ytr)
    mn = DefragModel(rfn, n_restarts=3, random_state=0, form="list").fit(Xn, ytr)
    assert all(("(or missing)" in str(c)) == c.missing for r in mn.rules_.rules for c in r.conditions)


def test_rules_the_others_predict_as_well_are_dropped():
    rng = np.random.default_rng(0)
    X = rng.random((300, 2))
    y = (X[:, 0] > 0.5).astype(np.int32)
    useful = Rule([Condition(0, "x0", lower=0.5)], None)
    idle = Rule([Condition(1, "x1", upper=0.3)], None)  # its points: the default's class anyway
    fitted = fit_rule_list([useful, idle], X, y, 2, np.array([0, 1]))
    assert len(fitted.rules) == 1 and fitted.loss == 0.0
    # a constant regression target is one rule, the default
    rf = RandomForestRegressor(n_estimators=5, random_state=0).fit(X, np.ones(300))
    m = DefragModel(rf, n_restarts=2, random_state=0, form="list").fit(X, np.ones(300))
    assert m.n_regions_ == 1 and len(m.rules_.rules) == 0 and m.rules_.default_prediction == 1.0


def test_subsampled_fits_print_thresholds_for_all_training_rows():
    Xtr, ytr, _, _ = xor_data(2, n=3000)
    Xtr = Xtr.copy()
    Xtr[::50, 1] = np.nan  # missing values, few enough that a subsample may hold none
    rf = RandomForestClassifier(n_estimators=20, max_depth=6, random_state=0).fit(Xtr, ytr)
    m = DefragModel(rf, subsample=200, n_restarts=4, random_state=0, form="list").fit(Xtr, ytr)
    for rule in m.rules_.rules:
        for c in rule.conditions:
            column = Xtr[:, c.feature]
            assert c.missing_seen == bool(np.isnan(column).any())
            for real, printed in ((c.lower, c.printed_lower), (c.upper, c.printed_upper)):
                if real is not None:
                    assert np.array_equal(column <= real, column <= printed)


@pytest.mark.parametrize("n_classes", [0, 3])
def test_list_loss_and_first_match_counts_match_the_rule_by_rule_definition(n_classes):
    from defrag.rules.lists import first_match_counts, list_loss

    rng = np.random.default_rng(4)
    for n_rules in (0, 1, 4):
        cover = rng.random((500, n_rules)) < 0.3
        y = rng.integers(0, 3, 500) if n_classes else rng.normal(size=500) * 100 + 5
        left, loss, counts = np.ones(500, dtype=bool), 0.0, []
        for r in range(n_rules):  # the definition: first matches, rule by rule
            first = cover[:, r] & left
            part = y[first]
            counts.append(first.sum())
            if part.size:
                loss += (part.size - np.bincount(part).max()) if n_classes else np.sum((part - part.mean()) ** 2)
            left &= ~first
        rest = y[left]
        if rest.size:
            loss += (rest.size - np.bincount(rest).max()) if n_classes else np.sum((rest - rest.mean()) ** 2)
        assert list_loss(cover, y, n_classes) == pytest.approx(loss, rel=1e-12, abs=1e-9)
        np.testing.assert_array_equal(first_match_counts(cover), counts)


def _numpy_list_loss(cover, y, n_classes):
    """list_loss as NumPy computes it (the library's before src_c/dfg_list_loss.h)."""
    from defrag.rules.lists import first_match_index

    first, groups = first_match_index(cover), cover.shape[1] + 1
    if n_classes:
        counts = np.bincount(first * n_classes + y, minlength=groups * n_classes)
        return float(y.size - counts.reshape(groups, n_classes).max(axis=1).sum())
    size = np.bincount(first, minlength=groups)
    mean = np.bincount(first, weights=y, minlength=groups) / np.maximum(size, 1)
    residual = y - mean[first]
    return float(np.sum(np.bincount(first, weights=residual * residual, minlength=groups)))


@pytest.mark.parametrize("n_classes", [0, 2, 5])
def test_list_loss_in_c_is_numpys_bit_for_bit(n_classes):
    # the same sums in the same order: the list's decisions (loss against the best so far
    # or a budget) cannot differ; lists of 0 to 200 rules (NumPy's pairwise sum changes
    # its blocks at 8 and 128 groups), orders that skip and repeat columns
    from defrag.rules.lists import _loss_and_all_matched, list_loss

    rng = np.random.default_rng(n_classes)
    for n, n_columns in ((0, 3), (1, 1), (37, 0), (300, 6), (700, 12), (400, 200)):
        cover = rng.random((n, n_columns)) < rng.uniform(0.02, 0.6)
        y = rng.integers(0, n_classes, n) if n_classes else rng.normal(size=n) * 10.0 ** rng.integers(-3, 6, n)
        orders = [None] + [rng.integers(0, n_columns, size=k) for k in (1, 3, n_columns) if n_columns]
        for order in orders:
            columns = cover if order is None else cover[:, order]
            expected = _numpy_list_loss(columns, y, n_classes)
            assert list_loss(cover, y, n_classes, order) == expected
            loss, all_matched = _loss_and_all_matched(cover, y, n_classes, order)
            # rule r is a first match where it covers a row no earlier rule covers
            matched = [(columns[:, r] & ~columns[:, :r].any(axis=1)).any() for r in range(columns.shape[1])]
            assert loss == expected and all_matched == all(matched)
    from defrag.rules._rules_eval import pairwise_sum

    for n in (0, 7, 8, 9, 127, 128, 129, 1000):
        a = rng.random(n) * 10.0 ** rng.integers(-8, 8, n)
        assert pairwise_sum(a) == np.sum(a)


def _numpy_prune(conditions, holds, cover, y, n_classes, budget, passes=3, keep_one=False):
    """rules/lists.py's _prune as NumPy did it (before src_c/dfg_list_prune.h); keep_one:
    no rule loses its last condition."""
    n = cover.shape[0]
    for _ in range(passes):
        changed = False
        for r in range(len(conditions)):
            shares = [np.count_nonzero(h) for h in holds[r]]
            for c in sorted(range(len(shares)), key=lambda c: -shares[c]):
                if conditions[r][c] is None:
                    continue
                if keep_one and sum(x is not None for x in conditions[r]) < 2:
                    continue
                others = [h for i, h in enumerate(holds[r]) if i != c and conditions[r][i] is not None]
                old = cover[:, r].copy()
                cover[:, r] = np.logical_and.reduce(others) if others else np.ones(n, dtype=bool)
                loss = _numpy_list_loss(cover, y, n_classes)
                first = np.where(cover.any(axis=1), np.argmax(cover, axis=1), cover.shape[1]) if cover.shape[1] \
                    else np.zeros(n, dtype=int)
                matched = np.all(np.bincount(first, minlength=cover.shape[1] + 1)[:-1] > 0)
                if loss <= budget and matched:
                    conditions[r][c] = None
                    changed = True
                else:
                    cover[:, r] = old
        if not changed:
            break
    kept = [[i for i, c in enumerate(conds) if c is not None] for conds in conditions]
    return [[conds[i] for i in k] for conds, k in zip(conditions, kept)], cover


@pytest.mark.parametrize("n_classes", [0, 3])
def test_pruning_in_c_drops_what_numpy_drops(n_classes):
    # random lists of 0-6 rules with 0-5 conditions each (nested, nearly vacuous and empty
    # ones), budgets from the list's own loss up: the same conditions kept, the same cover
    from defrag.rules.lists import _prune

    rng = np.random.default_rng(7 + n_classes)
    for trial in range(60):
        n = int(rng.integers(1, 200))
        y = rng.integers(0, 3, n) if n_classes else np.round(rng.normal(size=n) * 3, int(rng.integers(0, 3)))
        sizes = rng.integers(0, 6, size=int(rng.integers(0, 7)))
        holds = [[rng.random(n) < rng.choice([0.3, 0.7, 0.95, 1.0]) for _ in range(k)] for k in sizes]
        conditions = [[f"c{r}.{i}" for i in range(k)] for r, k in enumerate(sizes)]
        cover = np.column_stack([np.logical_and.reduce(h) if h else np.ones(n, bool) for h in holds]) \
            if len(holds) else np.zeros((n, 0), bool)
        budget = _numpy_list_loss(cover, y, n_classes) * rng.choice([1.0, 1.05, 1.5])
        for keep_one in (False, True):
            expected, expected_cover = _numpy_prune([list(c) for c in conditions], holds, cover.copy(), y,
                                                    n_classes, budget, keep_one=keep_one)
            got, _, got_cover = _prune([list(c) for c in conditions], holds, cover.copy(), y, n_classes, budget,
                                       keep_one=keep_one)
            assert got == expected, (trial, keep_one)
            np.testing.assert_array_equal(got_cover, expected_cover)


def _numpy_list_order(cover, y, n_classes, local_search=True):
    """rules/lists.py's steps 1 and 2 as NumPy did them (before src_c/dfg_list_order.h);
    a constant's loss is lists.py's _constant_loss, which NumPy computes."""
    from defrag.rules.lists import _constant_loss

    left = np.ones(cover.shape[0], dtype=bool)
    unused = list(range(cover.shape[1]))
    order = []
    while unused:  # the rule with the least own loss plus loss of a constant on the rest
        costs = [_constant_loss(y[cover[:, r] & left], n_classes)
                 + _constant_loss(y[left & ~cover[:, r]], n_classes) for r in unused]
        best = unused[int(np.argmin(costs))]
        order.append(best)
        unused.remove(best)
        left &= ~cover[:, best]
    current = _numpy_list_loss(cover[:, order], y, n_classes)
    improved = local_search
    while improved:  # one rule moved to another position while the loss strictly drops
        improved = False
        for i in range(len(order)):
            for j in range(len(order)):
                if i == j:
                    continue
                trial = list(order)
                trial.insert(j, trial.pop(i))
                loss = _numpy_list_loss(cover[:, trial], y, n_classes)
                if loss < current - 1e-12 * current:
                    order, current, improved = trial, loss, True
    return order


@pytest.mark.parametrize("n_classes", [0, 3])
def test_list_order_in_c_is_numpys(n_classes):
    # random lists of 0-9 rules (broad, narrow, identical and empty covers), targets with
    # ties (small integers) and without, and a NaN target (np.argmin takes the first NaN
    # cost): the same greedy order and the same order after the local search
    from defrag.rules.lists import list_order

    rng = np.random.default_rng(11 + n_classes)
    for trial in range(80):
        n, R = int(rng.integers(0, 150)), int(rng.integers(0, 10))
        cover = rng.random((n, R)) < rng.choice([0.05, 0.3, 0.7], size=R)
        if R > 2:
            cover[:, 1] = cover[:, 0]  # two rules that cover the same rows
        if n_classes:
            y = rng.integers(0, n_classes, n)
        else:
            y = np.round(rng.normal(size=n) * 10.0 ** rng.integers(-2, 4), int(rng.integers(0, 4)))
            if trial % 10 == 9 and n:
                y[rng.integers(n)] = np.nan
        for local in (False, True):
            expected = _numpy_list_order(cover, y, n_classes, local)
            got = list_order(cover, y, n_classes, local_search=local).tolist()
            assert got == expected, (trial, local)


def test_list_order_refuses_what_does_not_fit():
    from defrag.rules._rules_eval import list_order

    cover = np.ones((4, 2), dtype=np.uint8)
    with pytest.raises(ValueError, match="list_order"):  # a class code out of range
        list_order(cover, y_class=np.array([0, 1, 3, 0]), n_classes=3)
    with pytest.raises(ValueError, match="entries for 4 rows"):
        list_order(cover, np.zeros(3))
    with pytest.raises(ValueError, match="give y"):
        list_order(cover, y_class=np.zeros(4, dtype=np.int64))
    with pytest.raises(ValueError, match="n_classes"):
        list_order(cover, y_class=np.zeros(4, dtype=np.int64), n_classes=-1)
    with pytest.raises(TypeError):
        list_order(None, np.zeros(4))
    assert list_order(np.ones((0, 3), dtype=np.uint8), np.zeros(0)).tolist() == [0, 1, 2]
    assert list_order(np.ones((5, 0), dtype=np.uint8), np.zeros(5)).tolist() == []


def test_list_prune_refuses_what_does_not_fit():
    from defrag.rules._rules_eval import list_prune

    holds, y = np.ones((3, 4), dtype=np.uint8), np.zeros(4)
    with pytest.raises(ValueError, match="rule_ptr"):
        list_prune(holds, np.array([0, 2], dtype=np.int64), np.ones(3, np.uint8), 1.0, 3, y=y)
    with pytest.raises(ValueError, match="list_prune"):  # decreasing: the kernel refuses it
        list_prune(holds, np.array([0, 3, 2, 3], dtype=np.int64), np.ones(3, np.uint8), 1.0, 3, y=y)
    with pytest.raises(ValueError, match="keep"):
        list_prune(holds, np.array([0, 3], dtype=np.int64), np.ones(2, np.uint8), 1.0, 3, y=y)
    with pytest.raises(ValueError, match="n_passes"):
        list_prune(holds, np.array([0, 3], dtype=np.int64), np.ones(3, np.uint8), 1.0, -1, y=y)
    with pytest.raises(ValueError, match="entries for 4 rows"):
        list_prune(holds, np.array([0, 3], dtype=np.int64), np.ones(3, np.uint8), 1.0, 3, y=y[:2])
    with pytest.raises(ValueError, match="list_prune"):  # a class code out of range
        list_prune(holds, np.array([0, 3], dtype=np.int64), np.ones(3, np.uint8), 1.0, 3,
                   y_class=np.array([0, 0, 2, 0]), n_classes=2)


def test_list_loss_refuses_what_does_not_fit():
    from defrag.rules._rules_eval import list_loss

    cover = np.ones((4, 2), dtype=np.uint8)
    y, codes = np.zeros(4), np.zeros(4, dtype=np.int64)
    for order in ([2], [-1]):  # a column that is not there
        with pytest.raises(ValueError, match="list_loss"):
            list_loss(cover, np.array(order, dtype=np.int64), y)
    with pytest.raises(ValueError, match="list_loss"):  # a class code out of range
        list_loss(cover, np.zeros(1, dtype=np.int64), y_class=np.array([0, 1, 3, 0]), n_classes=3)
    with pytest.raises(ValueError, match="entries for 4 rows"):
        list_loss(cover, np.zeros(1, dtype=np.int64), y[:3])
    with pytest.raises(ValueError, match="give y"):
        list_loss(cover, np.zeros(1, dtype=np.int64), y_class=codes)  # n_classes 0 takes y
    with pytest.raises(ValueError, match="n_classes"):
        list_loss(cover, np.zeros(1, dtype=np.int64), y_class=codes, n_classes=-1)
    assert list_loss(cover, np.zeros(1, dtype=np.int64), y_class=codes, n_classes=1) == (0.0, True)
    for args in ((None, np.zeros(1, dtype=np.int64), y), (cover, None, y)):  # not an empty list
        with pytest.raises(TypeError):
            list_loss(*args)


@pytest.mark.parametrize("shape", [(0, 3), (5, 0), (1000, 1), (2049, 9)])
def test_first_match_index_is_numpys_first_true(shape):
    from defrag.rules.lists import first_match_index

    cover = np.random.default_rng(shape[0]).random(shape) < 0.15
    expected = np.where(cover.any(axis=1), np.argmax(cover, axis=1), shape[1]) if shape[1] else np.zeros(shape[0])
    np.testing.assert_array_equal(first_match_index(cover), expected)
    np.testing.assert_array_equal(first_match_index(cover[:, ::-1]),  # a strided view
                                  first_match_index(np.ascontiguousarray(cover[:, ::-1])))


@pytest.mark.parametrize("task", ["classification", "regression"])
def test_lists_that_share_rules_refit_as_each_list_alone(task, cancer):
    # the path's sizes share Rule objects: each rule's truth read once, the same refits
    from defrag.rules.lists import refit_rule_list, refit_rule_lists

    rf, X, y = cancer[:3]
    rng = np.random.default_rng(0)
    yy = y if task == "classification" else y + rng.normal(0, 0.3, y.size)
    n_classes = 2 if task == "classification" else 0
    rules = [Rule([Condition(j, f"x{j}", lower=float(np.median(X[:, j])))], None) for j in range(5)]
    lists = [rules[:1], rules[:3], [rules[2], rules[0], rules[4]], []]
    got = refit_rule_lists(lists, X, yy, n_classes, np.array([0, 1]) if n_classes else None)
    for fitted, rs in zip(got, lists):
        want = refit_rule_list(rs, X, yy, n_classes, np.array([0, 1]) if n_classes else None)
        assert fitted.loss == want.loss and str(fitted.default_prediction) == str(want.default_prediction)
        assert [(r.support, r.prediction) for r in fitted.rules] == [(r.support, r.prediction) for r in want.rules]
