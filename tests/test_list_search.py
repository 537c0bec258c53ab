"""form="list" (defrag/search/list_search.py, defrag/search/list_path.py): the vectorised
gains against plain per-literal NumPy, the boxes' simplification, the list's size
(n_regions, path_, with_size), what it predicts, and its parameters' checks."""
import threading
import warnings

import numpy as np
import pytest
from sklearn.datasets import load_wine, make_friedman1
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

from defrag import DefragModel
from defrag.search import list_path
from defrag.search.list_path import (
    N_FOLDS,
    _fixed_list_losses,
    _simpler_within_one_se,
    _size_losses,
    _cross_validated,
    one_se_size,
)
from defrag.search.list_search import component_boxes, grow_boxes, grow_list_sizes, literal_groups, simplified_boxes
from list_search_reference import ListSearch
from defrag.rules.lists import first_match_index
from defrag.splits import SplitTable


def simplified_box(S, box, group):
    return simplified_boxes(S, [box], group)[0]


def _region_loss(T):
    return float(np.sum((T - T.mean(axis=0)) ** 2)) if T.shape[0] else 0.0


def _random_problem(seed, n=120, L=9, d=3):
    rng = np.random.default_rng(seed)
    S = rng.random((n, L)) < 0.5
    T = rng.random((n, d))
    feature = np.repeat(np.arange(L), 2)[:2 * L] % 4
    group = np.arange(2 * L)
    return S, T, feature, group, rng


@pytest.mark.parametrize("one_sided", [False, True])
def test_literal_gains_match_plain_numpy(one_sided, monkeypatch):
    monkeypatch.setattr("list_search_reference.ONE_SIDED", one_sided)
    S, T, feature, group, rng = _random_problem(0)
    search = ListSearch(S, T, feature, group)
    left = rng.random(S.shape[0]) < 0.8
    rows = np.flatnonzero(left)
    s, c = search._literal_sums(rows)
    sL, cL = T[left].sum(axis=0), float(left.sum())
    gains = search._gain(s, c, sL, cL)
    base = _region_loss(T[left])
    for j in range(2 * S.shape[1]):  # the reference: every literal's region, one at a time
        column = S[:, j] if j < S.shape[1] else ~S[:, j - S.shape[1]]
        R = left & column
        assert c[j] == R.sum()
        np.testing.assert_allclose(s[j], T[R].sum(axis=0), rtol=1e-6)  # float32 products
        if one_sided:  # the loss R's own points lose against the constant of left
            mean_left = T[left].mean(axis=0)
            expected = float(np.sum((T[R] - mean_left) ** 2)) - _region_loss(T[R])
        else:  # the drop in loss when left is split into R and the rest
            expected = base - _region_loss(T[R]) - _region_loss(T[left & ~column])
        if R.sum() >= 1 and (left & ~column).sum() >= 1:
            assert gains[j] == pytest.approx(expected, rel=1e-5, abs=1e-6)
        else:
            assert gains[j] == -np.inf


def test_group_sums_match_literal_sums():
    S, T, feature, group, rng = _random_problem(1)
    search = ListSearch(S, T, feature, group)
    rows = np.flatnonzero(rng.random(S.shape[0]) < 0.6)
    s, c = search._literal_sums(rows)
    some = np.array([0, 3, S.shape[1] + 2, S.shape[1] + 5])
    gs, gc = search._group_sums(some, rows)
    np.testing.assert_allclose(gs, s[some], rtol=1e-6)
    np.testing.assert_array_equal(gc, c[some])


def test_simplified_box_keeps_the_cover_and_the_tightest_thresholds():
    rng = np.random.default_rng(2)
    x = rng.random((300, 2))
    thresholds = np.array([0.1, 0.2, 0.3, 0.5, 0.7])
    splits = SplitTable(np.array([0, 0, 0, 0, 1]), thresholds, 2)
    S = splits.binary_features(x)
    _, group = literal_groups(splits)
    L = len(splits)
    box = [0, 1, 2, L + 3]  # x0 > 0.1, > 0.2, > 0.3 and x0 <= 0.5
    kept = simplified_box(S, box, group)
    assert kept == [2, L + 3]

    def cover(b):
        return np.logical_and.reduce([S[:, j] if j < L else ~S[:, j - L] for j in b])

    np.testing.assert_array_equal(cover(kept), cover(box))


@pytest.mark.parametrize("seed", range(6))
def test_simplified_box_drops_literals_as_the_plain_cover_test_does(seed):
    # the tightest literal per group, then in order of most often true each literal whose
    # removal leaves the cover as it is, tested by recomputing the cover without it
    rng = np.random.default_rng(seed)
    n, L = 200, 30
    S = rng.random((n, L)) < rng.uniform(0.5, 0.98, L)  # mostly true: many literals change nothing
    group = np.arange(2 * L) // 3  # groups of three literals
    for _ in range(10):
        box = sorted(set(rng.choice(2 * L, int(rng.integers(1, 12))).tolist()))

        def holds(j):
            return S[:, j] if j < L else ~S[:, j - L]

        tightest = {}
        for j in box:
            c = int(holds(j).sum())
            if group[j] not in tightest or (c, j) < tightest[group[j]][::-1]:
                tightest[group[j]] = (j, c)
        keep = [j for j, _ in sorted(tightest.values(), key=lambda jc: (-jc[1], jc[0]))]
        count = int(np.logical_and.reduce([holds(j) for j in keep]).sum())
        for j in list(keep):
            rest = [k for k in keep if k != j]
            cover = np.logical_and.reduce([holds(k) for k in rest]) if rest else np.ones(n, dtype=bool)
            if int(cover.sum()) == count:
                keep = rest
        assert simplified_box(S, box, group) == sorted(keep)


def test_simplified_boxes_are_each_boxs_simplified_box():
    rng = np.random.default_rng(7)
    S = rng.random((150, 20)) < rng.uniform(0.3, 0.95, 20)
    group = np.arange(40) // 4
    boxes = [sorted(set(rng.choice(40, int(rng.integers(0, 15))).tolist())) for _ in range(30)]
    assert simplified_boxes(S, boxes, group) == [simplified_box(S, b, group) for b in boxes]
    assert any(simplified_box(S, b, group) != b for b in boxes)


def test_component_boxes_are_the_literals_each_component_fixes():
    rng = np.random.default_rng(3)
    kappa, L = 0.1, 12
    # three restarts' etas, near 0, near 1 and in between, and a component repeated
    etas = [rng.choice([0.01, 0.05, 0.1, 0.5, 0.9, 0.95, 0.99], size=(k, L)) for k in (4, 1, 3)]
    etas[2][1] = etas[0][0]
    keep = np.array([0, 2, 3, 5, 8, 11])

    def fixed(eta):
        return tuple([j for j in range(eta.size) if eta[j] > 1 - kappa] +
                     [eta.size + j for j in range(eta.size) if eta[j] < kappa])

    expected = {fixed(eta[keep]) for e in etas for eta in e}
    assert component_boxes(etas, kappa, keep) == expected
    assert len(expected) == 7  # the repeated component's box once
    assert component_boxes(etas, kappa) == {fixed(eta) for e in etas for eta in e}
    assert component_boxes([np.zeros((0, L))], kappa) == set()


def test_one_se_size_takes_the_smallest_size_within_one_standard_error():
    losses = np.array([[1.0] * 8, [0.5, 0.6, 0.4, 0.5] * 2, [0.45, 0.55, 0.45, 0.55] * 2,
                       [0.44, 0.56, 0.44, 0.56] * 2])
    assert one_se_size(losses) == 2
    assert one_se_size(np.array([[1.0, 1.0], [0.0, 0.0]])) == 2


def test_fixed_list_losses_match_a_plain_refit_per_fold():
    rng = np.random.default_rng(3)
    n, k = 90, 3
    cover = rng.random((n, k)) < 0.4
    fold = rng.permutation(n) % N_FOLDS
    first = np.array([np.flatnonzero(row)[0] if row.any() else k for row in cover])
    for n_classes in (0, 3):
        y = rng.integers(0, 3, n) if n_classes else rng.normal(size=n)
        losses = _fixed_list_losses(cover, y, n_classes, fold)
        for i in range(n):  # the reference: each row's region refitted without its fold
            train = (fold != fold[i]) & (first == first[i])
            if n_classes:
                counts = np.bincount(y[train], minlength=n_classes)
                assert losses[i] == float(np.argmax(counts) != y[i])
            else:
                mean = y[train].mean() if train.any() else 0.0
                assert np.isclose(losses[i], (mean - y[i]) ** 2)


def _plain_size_losses(lists, S_tr, y_tr, n_classes, S_val, y_val):
    """_size_losses one size at a time: each list's first matches, its outputs refitted on
    the training part (bincounts in row order: the same sums)."""
    out = []
    for boxes in lists:
        regions = []
        for S in (S_tr, S_val):
            cover = np.column_stack([S[:, [l for l in b if l < S.shape[1]]].all(axis=1)
                                     & ~S[:, [l - S.shape[1] for l in b if l >= S.shape[1]]].any(axis=1)
                                     for b in boxes]) if boxes else np.zeros((S.shape[0], 0), bool)
            regions.append(first_match_index(cover))
        g_tr, g_va = regions
        m = len(boxes) + 1
        if n_classes:
            counts = np.bincount(g_tr * n_classes + y_tr, minlength=m * n_classes).reshape(m, n_classes)
            out.append((np.argmax(counts, axis=1)[g_va] != y_val).astype(float))
        else:
            size = np.bincount(g_tr, minlength=m)
            mean = np.bincount(g_tr, weights=y_tr, minlength=m) / np.maximum(size, 1)
            out.append((mean[g_va] - y_val) ** 2)
    return np.array(out)


@pytest.mark.parametrize("at_once", [1 << 22, 1])
def test_size_losses_of_all_sizes_at_once_as_one_by_one(at_once, monkeypatch):
    # every size's regions from one gather of the distinct boxes' covers, in blocks of
    # sizes (1: one size a block), against each size's list on its own: identical
    monkeypatch.setattr(list_path, "SIZES_AT_ONCE", at_once)
    rng = np.random.default_rng(11)
    L = 7
    S_tr, S_val = rng.random((80, L)) < 0.5, rng.random((30, L)) < 0.5
    pool = [sorted(rng.choice(2 * L, size=rng.integers(1, 4), replace=False).tolist()) for _ in range(6)]
    lists = [[]] + [[pool[i] for i in rng.choice(6, size=k, replace=False)] for k in range(1, 6)]
    for n_classes in (0, 4):
        y_tr = rng.integers(0, 4, 80) if n_classes else rng.normal(size=80)
        y_val = rng.integers(0, 4, 30) if n_classes else rng.normal(size=30)
        got = _size_losses(lists, S_tr, y_tr, n_classes, S_val, y_val)
        np.testing.assert_array_equal(got, _plain_size_losses(lists, S_tr, y_tr, n_classes, S_val, y_val))


def test_the_simpler_list_within_one_standard_error_is_printed():
    close = np.array([0.0, 1.0] * 50)  # error 0.5, standard error 0.05
    better = np.array([0.0] * 54 + [1.0] * 46)  # error 0.46: within one SE of close
    assert _simpler_within_one_se((better, 10), (close, 4))  # fewer conditions, close enough
    assert not _simpler_within_one_se((better, 4), (close, 10))
    far = np.array([0.0] * 30 + [1.0] * 70)  # error 0.7: outside one SE
    assert not _simpler_within_one_se((better, 10), (far, 2))
    assert _simpler_within_one_se((far, 2), (better, 10))
    assert not _simpler_within_one_se((close, 4), (close, 4))  # a tie: the searched list


def test_smoothed_list_is_grown_on_the_predictions_and_scored_on_y():
    # each fold's lists grown on T_smooth (grow_list_sizes), their outputs the means of y
    # over first matches on the other folds, scored by squared error on y
    S, _, feature, group, rng = _random_problem(5, n=160)
    y = S[:, 0] * 2.0 - S[:, 3] + rng.normal(0, 1.5, S.shape[0])
    smooth = S[:, 0] * 2.0 - S[:, 3]
    T_smooth = (smooth - smooth.mean())[:, None]
    fold = rng.permutation(S.shape[0]) % N_FOLDS
    T_y = (y - y.mean())[:, None]
    (losses_y, lists_y), (losses, lists) = _cross_validated(S, [T_y, T_smooth], y, 0, [], feature, group, 5, fold)
    size = one_se_size(losses)
    assert lists == grow_list_sizes(S, T_smooth, feature, group, [], 4)
    assert lists_y == grow_list_sizes(S, T_y, feature, group, [], 4)  # y's, in the same call
    (alone, lists_alone), = _cross_validated(S, [T_y], y, 0, [], feature, group, 5, fold)
    np.testing.assert_array_equal(alone, losses_y)
    L = S.shape[1]

    def cover(b, rows):
        return np.column_stack([np.all([S[rows, j] if j < L else ~S[rows, j - L] for j in box], axis=0)
                                for box in b]) if b else np.zeros((rows.size, 0), dtype=bool)

    for f in range(N_FOLDS):
        tr, va = np.flatnonzero(fold != f), np.flatnonzero(fold == f)
        grown = grow_list_sizes(S[tr], T_smooth[tr], feature, group, [], 4)
        for k, b in enumerate(grown):
            g_tr, g_va = first_match_index(cover(b, tr)), first_match_index(cover(b, va))
            means = np.array([y[tr][g_tr == g].mean() if np.any(g_tr == g) else 0.0 for g in range(len(b) + 1)])
            np.testing.assert_allclose(losses[k, va], (means[g_va] - y[va]) ** 2)
    assert size == one_se_size(losses)


def _list_loss(S, T, boxes):
    """The squared error of T about each region's mean, regions by first match (plain)."""
    L = S.shape[1]
    region = np.full(S.shape[0], len(boxes))
    for i in reversed(range(len(boxes))):  # the first match wins: the earliest rule last
        holds = np.all([S[:, j] if j < L else ~S[:, j - L] for j in boxes[i]], axis=0)
        region[holds] = i
    return sum(float(np.sum((T[region == g] - T[region == g].mean(axis=0)) ** 2))
               for g in range(len(boxes) + 1) if np.any(region == g))


def _checked_growth(seed):
    """Checks each step of grow_list_sizes against plain sums over every move (below) on a
    random case; (region splits, default splits) among its steps."""
    rng = np.random.default_rng(seed)
    X = rng.random((200, 3))
    thresholds = np.linspace(0.15, 0.85, 5)
    S = np.column_stack([X[:, d] > t for d in range(3) for t in thresholds])
    L = S.shape[1]
    feature = np.tile(np.repeat(np.arange(3), 5), 2)
    group = np.concatenate([np.repeat(np.arange(3), 5), 3 + np.repeat(np.arange(3), 5)])
    y = 10.0 * (X[:, 0] > 0.5) + 4.0 * (X[:, 0] > 0.5) * (X[:, 1] > 0.3) + X[:, 2] + rng.normal(0, 0.3, 200)
    T = (y - y.mean())[:, None]
    lists = grow_list_sizes(S, T, feature, group, [], 6)
    assert [len(b) for b in lists] == list(range(len(lists))) and len(lists) >= 4
    splits_seen = default_splits = 0
    for before, after in zip(lists, lists[1:]):
        loss = _list_loss(S, T, after)
        assert loss < _list_loss(S, T, before)
        options = []
        for i, box in enumerate(before):
            for j in range(2 * L):
                if j not in box:
                    options.append(before[:i] + [sorted(box + [j])] + before[i:])
        left = np.ones(S.shape[0], dtype=bool)
        for box in before:
            left &= ~np.all([S[:, j] if j < L else ~S[:, j - L] for j in box], axis=0)
        appended = grow_boxes(S[left], T[left], feature, group, [], 1)
        if appended:
            options.append(before + [sorted(appended[0])])
        # the default's region split by one literal: the smaller side becomes the rule
        for j in range(2 * L):
            side = left & (S[:, j] if j < L else ~S[:, j - L])
            if 0 < side.sum() <= left.sum() / 2:
                options.append(before + [[j]])
        best = min(_list_loss(S, T, o) for o in options)
        assert loss == pytest.approx(best, rel=1e-9, abs=1e-9)
        assert any(o == after for o in options)
        splits_seen += after[:len(before)] != before
        default_splits += after[:len(before)] == before and len(after[-1]) == 1 and after[-1] != sorted(appended[0])
    return splits_seen, default_splits


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_each_size_appends_a_rule_or_splits_a_region_whichever_lowers_the_loss_more(seed):
    # against plain sums: every single-literal split of every rule's region (a narrower copy
    # of the rule inserted before it), the next rule of grow_boxes on the default's rows, and
    # every single-literal split of the default's region (CART's split of that leaf)
    splits_seen, _ = _checked_growth(seed)
    assert splits_seen >= 1  # the case needs a region split: a broad rule refined


def test_the_defaults_region_is_split_where_one_literal_beats_the_grown_box():
    # the box search scores a rule by what its own rows gain; a balanced split of the
    # default's rows can lower the loss more (CART's step on that leaf)
    assert sum(_checked_growth(seed)[1] for seed in (0, 2)) >= 2


@pytest.mark.parametrize("frame", [False, True])
def test_the_second_list_grows_on_the_forests_predictions_of_the_search_rows(friedman, frame, monkeypatch):
    rf, X, y = friedman
    seen = []
    original = list_path._cross_validated

    def spy(S, targets, yy, *a):
        if len(targets) > 1:  # y's, then the predictions'
            seen.append((targets[1], yy))
        return original(S, targets, yy, *a)

    monkeypatch.setattr(list_path, "_cross_validated", spy)
    Xin = X
    if frame:
        pd = pytest.importorskip("pandas")
        Xin = pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])])
        rf = RandomForestRegressor(n_estimators=10, random_state=0).fit(Xin, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no feature-name warning from the forest
        model = DefragModel(rf, n_restarts=2, random_state=0, subsample=300, form="list").fit(Xin, y)
    np.testing.assert_array_equal(model.predict(Xin), model.rules_.predict(Xin))
    (T, yy), = seen
    # the search rows are a subsample: find them by their y (distinct values)
    where = {v: i for i, v in enumerate(y)}
    idx = np.array([where[v] for v in yy])
    pred = rf.predict(Xin.iloc[idx] if frame else X[idx])
    np.testing.assert_allclose(T[:, 0], pred - pred.mean())
    # not with classes, and not without y (the search's target is the predictions then)
    seen.clear()
    DefragModel(rf, n_restarts=2, random_state=0, form="list").fit(Xin)
    assert seen == []


@pytest.fixture(scope="module")
def wine():
    X, y = load_wine(return_X_y=True)
    rf = RandomForestClassifier(n_estimators=30, random_state=0).fit(X, y)
    return rf, X, y


@pytest.fixture(scope="module")
def friedman():
    X, y = make_friedman1(600, noise=1.0, random_state=0)
    rf = RandomForestRegressor(n_estimators=30, min_samples_leaf=5, random_state=0).fit(X, y)
    return rf, X, y


def test_searched_list_is_the_default_and_predicts_as_printed(wine, friedman):
    for rf, X, y in (wine, friedman):
        model = DefragModel(rf, n_restarts=4, random_state=0, form="list").fit(X, y)
        assert model.form == "list" and model.n_regions_ == len(model.rules_.rules) + 1
        np.testing.assert_array_equal(model.predict(X), model.rules_.predict(X))
        path = model.path_
        assert list(path["size"]) == list(range(1, len(path["size"]) + 1))
        assert np.all(np.diff(path["train_error"]) <= 1e-9)  # a longer list fits no worse
        assert path["validation_error"].shape == path["size"].shape
        assert path["printed"] in ("searched", "restarts")
        if path["printed"] == "searched":  # the printed list is a size on the path
            k = model.n_regions_
            assert path["n_conditions"][k - 1] == sum(len(r.conditions) for r in model.rules_.rules)
    # a 3-class forest summarised by at least one region per class
    assert DefragModel(wine[0], n_restarts=4, random_state=0, form="list").fit(*wine[1:]).n_regions_ >= 3


@pytest.mark.parametrize("k", [2, 4, 6])
def test_n_rules_gives_that_many_regions_and_with_size_the_same_list(friedman, k):
    rf, X, y = friedman
    model = DefragModel(rf, n_restarts=4, random_state=0, n_regions=k, form="list").fit(X, y)
    assert model.n_regions_ == k == len(model.rules_.rules) + 1
    assert np.all(np.isnan(model.path_["validation_error"]))  # the size was given
    default = DefragModel(rf, n_restarts=4, random_state=0, form="list").fit(X, y)
    sized = default.with_size(k)
    assert sized.n_regions_ == k and sized.n_regions == k and default.n_regions is None
    assert str(sized.rules_) == str(model.rules_)
    # a size on the path counts its own default: the training rows its rules leave
    first = sized.rules_.route(X)[:, 0]
    n_rules = len(sized.rules_.rules)
    assert sized.rules_.default_support == np.count_nonzero(first == n_rules)
    assert sized.rules_.default_share == pytest.approx(np.mean(first == n_rules))
    assert [r.share for r in sized.rules_.rules] == pytest.approx([np.mean(first == i) for i in range(n_rules)])
    np.testing.assert_array_equal(sized.predict(X), model.predict(X))
    np.testing.assert_array_equal(sized.predict(X), sized.rules_.predict(X))
    assert default.with_size(default.n_regions_).rules_.predict(X).tolist() == default.predict(X).tolist()


def test_path_rules_keeps_each_sizes_own_printed_list(friedman):
    rf, X, y = friedman
    model = DefragModel(rf, n_restarts=2, random_state=0, form="list").fit(X, y)
    assert isinstance(model.path_rules_, list) and len(model.path_rules_) == len(model.path_["size"])
    for k, rule_set in enumerate(model.path_rules_, start=1):  # each size's own printed list
        assert len(rule_set.rules) == k - 1
        assert sum(len(r.conditions) for r in rule_set.rules) == model.path_["n_conditions"][k - 1]
        sized = model.with_size(k)
        assert str(sized.rules_) == str(rule_set)
        np.testing.assert_array_equal(sized.predict(X), rule_set.predict(X))


def test_n_rules_beyond_the_reachable_size_warns(wine):
    rf, X, y = wine
    Xs, ys = X[:40], y[:40]  # two classes, a few rows: few regions lower the loss
    with pytest.warns(UserWarning, match="n_regions=30"):
        model = DefragModel(rf, n_restarts=2, random_state=0, n_regions=30, form="list").fit(Xs, ys)
    assert model.n_regions_ < 30 and model.n_regions_ == len(model.path_["size"])


def test_without_y_the_search_fits_the_forests_labels(wine):
    rf, X, _ = wine
    model = DefragModel(rf, n_restarts=4, random_state=0, form="list").fit(X)
    np.testing.assert_array_equal(model.predict(X), model.rules_.predict(X))
    # the error of the path is against the forest's labels
    agree = np.mean(model.predict(X) == rf.predict(X))
    assert 1 - agree == pytest.approx(model.path_["train_error"][model.n_regions_ - 1])


def test_same_list_whatever_the_workers(friedman):
    rf, X, y = friedman
    a = DefragModel(rf, n_restarts=4, random_state=3, n_jobs=1, form="list").fit(X, y)
    b = DefragModel(rf, n_restarts=4, random_state=3, n_jobs=2, form="list").fit(X, y)
    assert str(a.rules_) == str(b.rules_)
    np.testing.assert_array_equal(a.path_["train_error"], b.path_["train_error"])


def test_bad_n_rules_and_with_size(wine):
    rf, X, y = wine
    for bad in (0, -1, 2.5, True, "4"):
        with pytest.raises(ValueError, match="n_regions"):
            DefragModel(rf, n_regions=bad, form="list").fit(X, y)
    with pytest.raises(ValueError, match="sizes a searched explanation"):
        DefragModel(rf, n_regions=3, form="restarts").fit(X, y)
    with pytest.raises(ValueError, match="sizes a searched explanation"):
        DefragModel(rf, n_regions=3, method="em-kl", form="list").fit(X, y)
    with pytest.raises(ValueError, match="The .form. parameter of DefragModel must be a str among"):
        DefragModel(rf, form="searched").fit(X, y)
    model = DefragModel(rf, n_restarts=2, form="list", random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="n_regions must be an integer"):
        model.with_size(len(model.path_["size"]) + 1)
    old = DefragModel(rf, n_restarts=2, form="restarts", random_state=0).fit(X, y)
    assert not hasattr(old, "path_")
    with pytest.raises(ValueError, match="with_size reads the path"):
        old.with_size(2)



def test_a_search_where_no_literal_gains_stops_cleanly():
    # every literal's side holds on all rows or none: nothing to add, polish or drop
    S = np.zeros((50, 3), dtype=bool)
    T = np.random.default_rng(0).random((50, 2))
    feature, group = np.array([0, 1, 2, 0, 1, 2]), np.array([0, 1, 2, 3, 4, 5])
    search = ListSearch(S, T, feature, group)
    assert search.grow([[0]], 4) == []
    box, gain, _ = search.refine([], np.ones(50, dtype=bool), T.sum(axis=0), 50.0)
    assert box == [] and gain == -np.inf


def test_a_searched_model_pickles_and_clones_with_its_path(wine):
    import pickle

    from sklearn.base import clone

    rf, X, y = wine
    model = DefragModel(rf, n_restarts=2, random_state=0, form="list").fit(X, y)
    back = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(back.predict(X), model.predict(X))
    assert str(back.with_size(2).rules_) == str(model.with_size(2).rules_)
    with pytest.warns(UserWarning, match="FrozenEstimator"):  # a fitted forest in a clone: said once
        assert clone(model.with_size(2)).get_params()["n_regions"] == 2


@pytest.mark.parametrize("case", ["wine", "friedman"])
def test_cross_validation_lists_side_by_side_as_one_by_one(case, request, monkeypatch):
    # the fold lists (and, in regression, those grown on the forest's predictions) are
    # grown in threads: the same path and rules as grown in turn
    rf, X, y = request.getfixturevalue(case)
    grown_in = []
    original = list_path._grown

    def spy(*args):
        grown_in.append(threading.current_thread() is threading.main_thread())
        return original(*args)

    monkeypatch.setattr(list_path, "_grown", spy)
    monkeypatch.setattr(list_path, "threads_now", lambda: 2)
    monkeypatch.setattr(list_path, "SIDE_BY_SIDE_WORK", 0)
    threaded = DefragModel(rf, n_restarts=2, random_state=0, form="list").fit(X, y)
    assert grown_in and not any(grown_in)
    grown_in.clear()
    monkeypatch.setattr(list_path, "SIDE_BY_SIDE_WORK", 10 ** 12)
    in_turn = DefragModel(rf, n_restarts=2, random_state=0, form="list").fit(X, y)
    assert grown_in and all(grown_in)
    assert str(threaded.rules_) == str(in_turn.rules_)
    for key in ("size", "n_conditions", "train_error", "validation_error"):
        np.testing.assert_array_equal(threaded.path_[key], in_turn.path_[key])


def test_prune_rule_lists_drops_what_leaves_each_lists_loss_and_keeps_shared_rules():
    from defrag.rules import Condition, Rule
    from defrag.rules.lists import list_loss, prune_rule_lists, rule_columns

    rng = np.random.default_rng(5)
    X = rng.random((300, 3))
    y = (X[:, 0] > 0.5).astype(np.int64)  # class 1 on x0 > 0.5: x1 and x2 decide nothing
    wide = Rule([Condition(0, "x0", lower=0.5), Condition(1, "x1", upper=0.9)], None)
    exact = Rule([Condition(0, "x0", lower=0.5)], None)
    lists = [[exact], [wide], [exact, wide]]
    out = prune_rule_lists(lists, X, y, 2)
    assert out[0][0] is exact  # nothing to drop: the same object
    # x1 <= 0.9 changes no row's class: dropped where the list's loss stays; x0 > 0.5 stays
    assert [c.feature for c in out[1][0].conditions] == [0] and out[1][0] is not wide
    for before, after in zip(lists, out):
        loss = list_loss(rule_columns(before, X)[2], y, 2)
        assert list_loss(rule_columns(after, X)[2], y, 2) <= loss
    # in [exact, wide] the second rule takes no row whatever it holds: every rule keeps a
    # first match, so it cannot lose its conditions into a rule that matches none
    assert out[2][0] is exact


def test_classification_lists_are_printed_pruned_against_their_loss():
    # every size's printed list of a multiclass fit: pruning it again on the training rows
    # drops nothing (each condition left changes the list's training loss)
    from sklearn.datasets import make_classification
    from defrag.rules.lists import prune_rule_lists

    X, y = make_classification(600, 8, n_informative=5, n_classes=4, n_clusters_per_class=1, random_state=3)
    rf = RandomForestClassifier(30, random_state=0).fit(X, y)
    model = DefragModel(rf, random_state=0, form="list").fit(X, y)
    for rules in model.path_rules_:
        again = prune_rule_lists([list(rules.rules)], X, y, 4)[0]
        assert [len(r.conditions) for r in again] == [len(r.conditions) for r in rules.rules]


def test_pruning_never_merges_a_lists_last_rule_with_the_default():
    # the last rule and the default predict the same class on the noisy middle band: its
    # conditions change no loss, but a rule without any would take every row left and the
    # list would print a region fewer than its size (review of the pruning, 2026-11-27)
    from defrag.rules import Condition, Rule
    from defrag.rules.lists import prune_rule_lists

    rng = np.random.default_rng(0)
    X = rng.random((600, 3))
    x = X[:, 0]
    y = np.where(x < .4, 0, np.where(x >= .7, 1, (rng.random(600) < .35).astype(int)))
    a, b = Rule([Condition(0, "x0", lower=0.7)], None), Rule([Condition(0, "x0", lower=0.4)], None)
    assert [len(r.conditions) for r in prune_rule_lists([[a, b]], X, y, 2)[0]] == [1, 1]
    rf = RandomForestClassifier(30, max_depth=4, random_state=0).fit(X, y)
    model = DefragModel(rf, random_state=0, form="list").fit(X, y)
    assert [len(rules.rules) for rules in model.path_rules_] == [k - 1 for k in model.path_["size"]]
    sized = DefragModel(rf, random_state=0, n_regions=3, form="list").fit(X, y)
    assert sized.n_regions_ == 3 and len(sized.rules_.rules) == 2


def test_candidate_boxes_packed_once_search_as_the_boxes_do():
    # the cross-validation packs its candidates once (candidate_boxes) for all its lists
    from defrag.search.list_search import candidate_boxes

    rng = np.random.default_rng(5)
    n, L = 240, 12
    S = rng.random((n, L)) < 0.5
    T = (S[:, 0] & ~S[:, 3]).astype(float)[:, None] + 0.1 * rng.normal(size=(n, 1))
    feature, group = np.arange(2 * L) % L, np.arange(2 * L)
    boxes = [[0, L + 3], [], [5], [1, 2, L + 7]]
    packed = candidate_boxes(boxes, 2 * L)
    assert packed.ptr.tolist() == [0, 2, 3, 6]  # the empty box left out
    assert grow_list_sizes(S, T, feature, group, packed, 5) == grow_list_sizes(S, T, feature, group, boxes, 5)
    assert grow_boxes(S, T, feature, group, packed, 3) == grow_boxes(S, T, feature, group, boxes, 3)
    with pytest.raises(ValueError, match="over 20 literals, not 24"):
        grow_list_sizes(S, T, feature, group, candidate_boxes([[1]], 20), 5)
    with pytest.raises(ValueError, match="lie in"):
        candidate_boxes([[30]], 2 * L)
