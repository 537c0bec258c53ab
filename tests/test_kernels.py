"""C kernels against plain NumPy versions of the same equations (tests/reference.py)."""
import os

import numpy as np
import pytest

import reference as ref
from defrag.splits import _encoding
from defrag.fit import _fit
from defrag.rules import _rules_eval
from defrag import _testing
from defrag.splits.table import SplitTable

EPS = 1e-10


def rel(a, b):
    return float(np.max(np.abs(np.asarray(a) - b) / np.maximum(np.abs(b), 1e-300)))


def problem_data(seed, n=400, d=4, n_splits=60, k=5):
    rng = np.random.default_rng(seed)
    X = np.ascontiguousarray(rng.random((n, d)))
    # Integer-valued thresholds and features give ties and duplicate thresholds.
    X[:, 0] = np.round(X[:, 0] * 10) / 10
    splits = SplitTable(rng.integers(0, d - 1, n_splits), np.round(rng.random(n_splits), 1), d,
                        keep_duplicates=True)
    S = ref.binary_features(X, splits.feature, splits.threshold)
    eta = rng.random((k, len(splits)))
    eta[0, :10] = EPS  # clamped entries take the popcount path of the bit kernel
    eta[1, 5:20] = 1 - EPS
    eta[2, ::3] = EPS
    return rng, X, splits, S, eta


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_ranks_and_bits_encode_the_binary_features(seed):
    _, X, splits, S, _ = problem_data(seed)
    ranks = splits.ranks(X)
    # thermometer: s_l = 1 iff the sample's rank on feature d exceeds l's position
    pos = np.arange(len(splits)) - splits.feat_ptr[splits.feature]
    S_from_ranks = ranks[splits.feature].T > pos
    np.testing.assert_array_equal(S_from_ranks, S.astype(bool))
    packed = splits.pack(X)
    unpacked = np.unpackbits(packed.view(np.uint8), axis=1, bitorder="little")[:, : len(splits)]
    np.testing.assert_array_equal(unpacked.astype(bool), S.astype(bool))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_log_bernoulli_rank_and_bit_paths_match_formula(seed):
    _, X, splits, S, eta = problem_data(seed)
    expected = ref.log_bernoulli(S, eta)
    by_ranks = _testing.loglik_ranks(splits.ranks(X), splits.feat_ptr, eta)
    by_bits = _testing.loglik_bits(splits.pack(X), len(splits), eta, EPS)
    assert rel(by_ranks, expected) <= 1e-9
    assert rel(by_bits, expected) <= 1e-9


def test_log_bernoulli_rank_path_on_many_features_of_every_size():
    # The rank kernel adds up to four features' tables per pass over the rows while
    # they fit in 512 KB together. Groups here: (0 1 2 4) with feature 3 (no split)
    # skipped, (5) whose table alone passes the budget, (6 8 9 10), then (11 12),
    # which the budget ends before 13 (three tables of 6,002 x 5 doubles pass it),
    # and (13 14): groups of four, one and two, and a group cut short.
    rng = np.random.default_rng(4)
    sizes = [30, 20, 25, 0, 10, 14000, 40, 0, 15, 5, 12, 6000, 6000, 6000, 10]
    n, d, k = 150, len(sizes), 5
    X = np.ascontiguousarray(rng.random((n, d)))
    feature = np.repeat(np.arange(d), sizes)
    threshold = np.concatenate([np.sort(rng.random(m)) for m in sizes])
    splits = SplitTable(feature, threshold, d, keep_duplicates=True)
    S = ref.binary_features(X, splits.feature, splits.threshold)
    eta = np.clip(rng.random((k, len(splits))), EPS, 1 - EPS)
    eta[1, ::4] = EPS
    expected = ref.log_bernoulli(S, eta)
    assert rel(_testing.loglik_ranks(splits.ranks(X), splits.feat_ptr, eta), expected) <= 1e-9


def make_params(rng, k, n_splits, n_classes, eta):
    p = {"eta": eta.copy(), "alpha": rng.dirichlet(np.ones(k))}
    if n_classes == 0:
        p.update(mean=rng.standard_normal(k), precision=rng.random(k) + 0.5)
    else:
        p["gamma"] = rng.dirichlet(np.ones(n_classes), size=k)
    return p


@pytest.mark.parametrize("n_classes", [0, 2, 3])
@pytest.mark.parametrize("path", ["ranks", "bits"])
def test_log_joint_bound_estep_mstep_match_numpy(n_classes, path):
    rng, X, splits, S, eta = problem_data(7 + n_classes)
    n, k = X.shape[0], eta.shape[0]
    y = rng.standard_normal(n) if n_classes == 0 else rng.integers(0, n_classes, n).astype(np.int32)
    kw = {"ranks": splits.ranks(X)} if path == "ranks" else {"bits": splits.pack(X)}
    prob = _fit.Problem(splits.feat_ptr, y_value=y if n_classes == 0 else None,
                         y_class=y if n_classes else None, n_classes=n_classes, **kw)
    params = make_params(rng, k, len(splits), n_classes, eta)

    logf = _testing.log_joint(prob, params)
    logf_ref = ref.log_joint(S, params, y, n_classes)
    assert rel(logf, logf_ref) <= 1e-9

    omega = ref.omega(len(splits), n_classes)
    assert prob.omega == pytest.approx(omega, rel=1e-15)
    beta = rng.dirichlet(np.ones(k), size=n)
    bound, colsum = _testing.lower_bound(logf, beta, omega)
    assert abs(bound - ref.lower_bound(logf_ref, beta, omega)) <= 1e-9 * abs(bound)
    np.testing.assert_allclose(colsum, beta.sum(axis=0), rtol=1e-12)

    new_beta = beta.copy()
    colsum, value, n_updates = _testing.estep(logf, new_beta, omega, 4, 0.0)
    assert n_updates == 4
    expected_beta = ref.estep_fab(logf_ref, beta, omega, 4)
    np.testing.assert_allclose(new_beta, expected_beta, rtol=1e-9, atol=1e-14)
    assert abs(value - ref.lower_bound(logf_ref, expected_beta, omega)) <= 1e-9 * abs(value)
    # App. C: each update of eq. 35 raises the bound
    assert value >= bound - 1e-9 * abs(bound)

    em_beta = beta.copy()
    _testing.estep(logf, em_beta, 0.0, 1, 0.0)
    np.testing.assert_allclose(em_beta, ref.softmax(logf_ref), rtol=1e-9, atol=1e-14)

    new_params = {name: np.array(a) for name, a in params.items()}
    _testing.mstep(prob, new_beta, new_params, EPS, 1e-12)
    expected = ref.mstep(S, new_beta, y, n_classes, EPS, 1e-12)
    for name, value in expected.items():
        assert rel(new_params[name], value) <= 1e-9, name


def test_split_statistics_rank_and_bit_paths_agree():
    rng, X, splits, S, _ = problem_data(3)
    beta = rng.dirichlet(np.ones(6), size=X.shape[0])
    expected = beta.T @ S
    by_ranks = _testing.split_stats_ranks(splits.ranks(X), splits.feat_ptr, beta)
    by_bits = _testing.split_stats_bits(splits.pack(X), len(splits), beta)
    np.testing.assert_allclose(by_ranks, expected, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(by_bits, expected, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("n_classes", [0, 2])
def test_whole_run_is_the_same_on_rank_and_bit_paths(n_classes):
    rng, X, splits, S, eta = problem_data(11)
    n = X.shape[0]
    y = (X[:, 1] > 0.5) + 0.1 * rng.standard_normal(n) if n_classes == 0 else (X[:, 1] > 0.5).astype(np.int32)
    runs = []
    for kw in ({"ranks": splits.ranks(X)}, {"bits": splits.pack(X)}):
        prob = _fit.Problem(splits.feat_ptr, y_value=np.asarray(y, float) if n_classes == 0 else None,
                             y_class=y if n_classes else None, n_classes=n_classes, **kw)
        init = np.random.default_rng(5)
        params = make_params(init, 6, len(splits), n_classes, np.clip(init.random((6, len(splits))), 0.1, 0.9))
        beta = init.dirichlet(np.ones(6), size=n)
        K, trace, phases = _fit.fit(prob, params, beta, "fab", 30, 1e-9, 1e-8, EPS, 1e-9, 1,
                                     (5, 2, 20), (0.1, 0.01), 10)
        runs.append((K, trace, params["eta"][:K], params["alpha"][:K]))
    assert runs[0][0] == runs[1][0]
    np.testing.assert_allclose(runs[0][1], runs[1][1], rtol=1e-9)
    np.testing.assert_allclose(runs[0][2], runs[1][2], rtol=1e-7, atol=1e-12)


def test_rule_pruning_kernel_drops_only_redundant_conditions():
    rng = np.random.default_rng(0)
    X = np.ascontiguousarray(rng.random((500, 2)))
    # x0 > 0.5; x0 > -1 (always true, redundant); x1 <= 0.3; x1 <= 2 (redundant)
    cols = _rules_eval.condition_holds(X, np.array([0, 0, 1, 1], dtype=np.int32),
                                       np.array([0.5, -1.0, -np.inf, -np.inf]),
                                       np.array([np.inf, np.inf, 0.3, 2.0]),
                                       np.zeros(4, dtype=np.uint8), np.zeros(4, dtype=np.uint8), 0.0,
                                       output="bits")
    keep = np.ones(4, dtype=np.uint8)
    covered = _rules_eval.prune_conditions(cols, 500, keep)
    assert covered == int(np.sum((X[:, 0] > 0.5) & (X[:, 1] <= 0.3)))
    np.testing.assert_array_equal(keep, [1, 0, 1, 0])
    assert _rules_eval.count_all(cols, 500) == covered
    assert _rules_eval.count_all(cols[:0], 500) == 500


def test_estep_with_extreme_penalties_matches_numpy():
    # omega as for L = 28,000 splits, one component almost empty: its penalty is
    # ~14,000 nats larger, which underflows the multiplicative update and must
    # take the exact path; another row has logf spread beyond exp's range.
    rng = np.random.default_rng(4)
    n, k = 3000, 4
    logf = rng.normal(scale=300.0, size=(n, k))
    logf[:10, 0] += 20000.0
    beta = rng.dirichlet(np.ones(k), size=n)
    beta[:, 0] = 1e-12
    beta /= beta.sum(axis=1, keepdims=True)
    omega = 14000.0
    new_beta = beta.copy()
    _, value, n_updates = _testing.estep(logf, new_beta, omega, 5, 0.0)
    expected = ref.estep_fab(logf, beta, omega, n_updates)
    np.testing.assert_allclose(new_beta, expected, rtol=1e-9, atol=1e-14)
    assert abs(value - ref.lower_bound(logf, expected, omega)) <= 1e-9 * abs(value)


def nan_problem(seed, n=500, d=3, n_splits=50, k=4):
    rng = np.random.default_rng(seed)
    X = np.ascontiguousarray(rng.random((n, d)))
    X[rng.random((n, d)) < 0.15] = np.nan
    missing_right = (rng.random(n_splits) < 0.5).astype(np.uint8)
    splits = SplitTable(rng.integers(0, d, n_splits), np.round(rng.random(n_splits), 2), d,
                        keep_duplicates=True, missing_right=missing_right, supports_missing=True)
    # dense reference of the binary features with missing values
    S = np.where(np.isnan(X[:, splits.feature]), splits.missing_right.astype(bool),
                 X[:, splits.feature] > splits.threshold).astype(np.float64)
    eta = rng.random((k, len(splits)))
    eta[0, :8] = EPS
    eta[1, 8:16] = 1 - EPS
    return rng, X, splits, S, eta


@pytest.mark.parametrize("seed", [0, 1])
def test_missing_values_in_ranks_bits_loglik_and_statistics(seed):
    rng, X, splits, S, eta = nan_problem(seed)
    mr = splits.missing_right
    np.testing.assert_array_equal(splits.binary_features(X), S.astype(bool))
    unpacked = np.unpackbits(splits.pack(X).view(np.uint8), axis=1, bitorder="little")[:, : len(splits)]
    np.testing.assert_array_equal(unpacked.astype(bool), S.astype(bool))
    ranks = splits.ranks(X)
    expected = ref.log_bernoulli(S, eta)
    assert rel(_testing.loglik_ranks(ranks, splits.feat_ptr, eta, 1, mr), expected) <= 1e-9
    assert rel(_testing.loglik_bits(splits.pack(X), len(splits), eta, EPS), expected) <= 1e-9
    beta = rng.dirichlet(np.ones(5), size=X.shape[0])
    np.testing.assert_allclose(_testing.split_stats_ranks(ranks, splits.feat_ptr, beta, 1, mr),
                               beta.T @ S, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(_testing.split_stats_bits(splits.pack(X), len(splits), beta),
                               beta.T @ S, rtol=1e-9, atol=1e-12)


def fit_nan_problem(splits, X, y, **problem_kw):
    """(K, bound trace, eta) of a FAB run with a fixed random start on X."""
    prob = _fit.Problem(splits.feat_ptr, y_class=y, n_classes=2, **problem_kw)
    init = np.random.default_rng(5)
    params = make_params(init, 5, len(splits), 2, np.clip(init.random((5, len(splits))), 0.1, 0.9))
    beta = init.dirichlet(np.ones(5), size=len(X))
    K, trace, _ = _fit.fit(prob, params, beta, "fab", 30, 1e-9, 1e-8, EPS, 1e-9, 1,
                            (5, 2, 20), (0.1, 0.01), 3)
    return K, trace, params["eta"][:K]


@pytest.mark.parametrize("complete_columns", [(), (0, 2)])
def test_missing_values_whole_run_same_on_both_paths(complete_columns):
    rng, X, splits, S, _ = nan_problem(3, n=800)
    # Features without a missing training value: the run drops their missing flags.
    for d in complete_columns:
        X[:, d] = np.nan_to_num(X[:, d], nan=0.37)
    y = (np.nan_to_num(X[:, 0], nan=0.9) > 0.5).astype(np.int32)
    runs = [fit_nan_problem(splits, X, y, missing_right=splits.missing_right, **kw)
            for kw in ({"ranks": splits.ranks(X)}, {"bits": splits.pack(X)})]
    assert runs[0][0] == runs[1][0]
    # The paths round differently (prefix sums against sums over set bits), and 37
    # FAB iterations amplify that to 5e-8 on the second data set.
    rtol = 1e-9 if not complete_columns else 1e-6
    np.testing.assert_allclose(runs[0][1], runs[1][1], rtol=rtol)
    np.testing.assert_allclose(runs[0][2], runs[1][2], rtol=100 * rtol, atol=1e-10)


def test_dropping_the_missing_flags_of_complete_features_changes_no_result():
    # The fit drops the flags of features with no missing training value (their
    # missing rank is never read): the same run as with those flags cleared by hand.
    rng, X, splits, S, _ = nan_problem(3, n=800)
    for d in (0, 2):
        X[:, d] = np.nan_to_num(X[:, d], nan=0.37)
    y = (np.nan_to_num(X[:, 0], nan=0.9) > 0.5).astype(np.int32)
    cleared = splits.missing_right.copy()
    cleared[np.isin(splits.feature, [0, 2])] = 0
    assert cleared.any() and not np.array_equal(cleared, splits.missing_right)
    runs = [fit_nan_problem(splits, X, y, missing_right=flags, ranks=splits.ranks(X))
            for flags in (splits.missing_right, cleared)]
    assert runs[0][0] == runs[1][0]
    np.testing.assert_array_equal(runs[0][1], runs[1][1])
    np.testing.assert_array_equal(runs[0][2], runs[1][2])


def sets_arrays(sets):
    """(ptr, words) bitsets of lists of codes, built bit by bit (code c: bit c % 64 of word c // 64)."""
    ptr = [0]
    words = []
    for codes in sets:
        n = (max(codes) // 64 + 1) if len(codes) else 0
        w = [0] * n
        for c in codes:
            w[c // 64] |= 1 << (c % 64)
        words += w
        ptr.append(ptr[-1] + n)
    return np.array(ptr, dtype=np.int64), np.array(words, dtype=np.uint64)


def categorical_problem(seed, n=300):
    """Column 0 numeric, columns 1-2 category codes (with negative, large and missing
    ones); splits of every kind, sets reaching past one 64-bit word."""
    rng = np.random.default_rng(seed)
    X = np.empty((n, 3))
    X[:, 0] = rng.random(n)
    X[:, 1] = rng.integers(-2, 8, n)
    X[:, 2] = rng.choice([0, 1, 5, 63, 64, 65, 130, 1000], n)
    X[rng.random((n, 3)) < 0.1] = np.nan
    feature = np.array([0, 1, 1, 2, 0, 2, 1, 2], dtype=np.int32)
    kind = np.array([0, 1, 2, 1, 0, 2, 1, 1], dtype=np.uint8)
    sets = [[], [1, 3], [0, 7], [63, 64, 130], [], [1, 65], [], [0]]
    threshold = np.array([0.5, 0, 0, 0, 0.2, 0, 0, 0], dtype=np.float64)
    missing_right = np.array([1, 0, 1, 1, 0, 0, 1, 0], dtype=np.uint8)
    S = np.empty((n, feature.size), dtype=bool)
    for l in range(feature.size):
        x = X[:, feature[l]]
        s = x > threshold[l] if kind[l] == 0 else ref.set_test(np.nan_to_num(x, nan=-1), sets[l], kind[l] == 2)
        S[:, l] = np.where(np.isnan(x), missing_right[l] == 1, s)
    return np.ascontiguousarray(X), feature, threshold, kind, sets, missing_right, S


@pytest.mark.parametrize("seed", [0, 1])
def test_pack_rows_with_category_sets_matches_numpy(seed):
    X, feature, threshold, kind, sets, missing_right, S = categorical_problem(seed)
    ptr, words = sets_arrays(sets)
    for threads in (1, 2):
        packed = _encoding.pack_rows(X, feature, threshold, threads, missing_right, kind=kind,
                                 set_ptr=ptr, set_words=words)
        unpacked = np.unpackbits(packed.view(np.uint8), axis=1, bitorder="little")[:, :feature.size]
        np.testing.assert_array_equal(unpacked.astype(bool), S)
    # without sets, the numeric splits are unchanged
    numeric = np.flatnonzero(kind == 0)
    plain = _encoding.pack_rows(X, feature[numeric], threshold[numeric], 1, missing_right[numeric])
    np.testing.assert_array_equal(np.unpackbits(plain.view(np.uint8), axis=1, bitorder="little")[:, :2],
                                  S[:, numeric])


def test_condition_columns_and_rule_kernels_match_numpy():
    X, feature, threshold, kind, sets, missing_right, S = categorical_problem(2)
    n = len(X)
    # every split as a condition column, numeric and set splits together
    ptr, words = sets_arrays(sets)
    for missing in (0, 1):
        cols = _rules_eval.condition_holds(X, feature, threshold, np.full(feature.size, np.inf),
                                           np.full(feature.size, missing, dtype=np.uint8),
                                           np.zeros(feature.size, dtype=np.uint8), 0.0, kind=kind,
                                           set_ptr=ptr, set_words=words, output="bits")
        for l in range(feature.size):
            bits = np.unpackbits(cols[l].view(np.uint8), bitorder="little")[:n].astype(bool)
            expected = np.where(np.isnan(X[:, feature[l]]), bool(missing), S[:, l])
            np.testing.assert_array_equal(bits, expected)
    # rules: (x0 <= 0.5 and x1 in {1, 3}), (x2 not in {63, 64, 130} or missing), (x1 in {})
    rule_ptr = np.array([0, 2, 3, 4], dtype=np.int64)
    cfeat = np.array([0, 1, 2, 1], dtype=np.int32)
    ckind = np.array([0, 1, 2, 1], dtype=np.uint8)
    csets = [[], [1, 3], [63, 64, 130], []]
    lower = np.array([-np.inf, -np.inf, -np.inf, -np.inf])
    upper = np.array([0.5, np.inf, np.inf, np.inf])
    missing = np.array([0, 0, 1, 0], dtype=np.uint8)
    ptr, words = sets_arrays(csets)
    args = dict(kind=ckind, set_ptr=ptr, set_words=words)
    x0, x1, x2 = X[:, 0], X[:, 1], X[:, 2]
    expected = np.stack([
        (x0 <= 0.5) & ref.set_test(np.nan_to_num(x1, nan=-1), [1, 3], False) & ~np.isnan(x1),
        np.isnan(x2) | ref.set_test(np.nan_to_num(x2, nan=63), [63, 64, 130], True),
        np.zeros(n, dtype=bool),
    ], axis=1)
    cover = _rules_eval.rules_cover(X, rule_ptr, cfeat, lower, upper, missing, 2, **args)
    np.testing.assert_array_equal(cover, expected)
    first = _rules_eval.rules_first(X, rule_ptr, cfeat, lower, upper, missing, 1, **args)
    np.testing.assert_array_equal(first, np.where(expected.any(axis=1), np.argmax(expected, axis=1), -1))


def test_category_set_arrays_are_checked():
    X, feature, threshold, kind, sets, missing_right, _ = categorical_problem(0, n=10)
    ptr, words = sets_arrays(sets)
    bad_kind = kind.copy()
    bad_kind[0] = 3
    bad_ptr = ptr.copy()
    bad_ptr[2] = ptr[1] - 1  # decreasing offsets
    for k, p, w in ((bad_kind, ptr, words), (kind, bad_ptr, words), (kind, ptr, words[:-1]),
                    (kind[:-1], ptr, words), (kind, ptr[:-1], words)):
        with pytest.raises(ValueError):
            _encoding.pack_rows(X, feature, threshold, 1, missing_right, kind=k, set_ptr=p, set_words=w)
    rule_ptr = np.array([0, 1], dtype=np.int64)
    one = dict(rule_ptr=rule_ptr, feature=np.array([1], np.int32), lower=np.array([-np.inf]),
               upper=np.array([np.inf]), missing=np.array([0], np.uint8))
    with pytest.raises(ValueError):
        _rules_eval.rules_cover(X, **one, kind=np.array([4], np.uint8), set_ptr=np.array([0, 0]),
                          set_words=np.zeros(0, np.uint64))
    with pytest.raises(ValueError):
        _rules_eval.rules_cover(X, **one, kind=np.array([1], np.uint8), set_ptr=np.array([0, 2]),
                          set_words=np.zeros(1, np.uint64))


def test_vectorised_log_gives_the_same_bits_on_every_build(kernel_env):
    # without FMA contraction every build makes the same operations: the tables'
    # logs do not depend on the CPU
    x = log_test_values()
    p = np.random.default_rng(2).random(3000)
    runs = {}
    for env, _ in LOG_KINDS.values():
        kernel_env(**env)
        runs[_testing.log_kind()] = (_testing.log_array(x), _testing.log_array(p, odds=True))
    if len(runs) < 2:
        pytest.skip("this CPU has only the baseline build")
    assert 0 in runs
    for logs, odds in runs.values():
        np.testing.assert_array_equal(logs, runs[0][0])
        np.testing.assert_array_equal(odds, runs[0][1])


def test_fit_rejects_nan_in_the_initial_eta():
    # the fit's tables skip the (0, 1) check on eta, so the start must be checked
    rng = np.random.default_rng(0)
    ranks = np.ascontiguousarray(rng.integers(0, 3, size=(2, 50)).astype(np.int32))
    problem = _fit.Problem(np.array([0, 2, 4], dtype=np.int64), ranks=ranks,
                            y_class=np.zeros(50, np.int32), n_classes=1)
    params = {"eta": np.full((2, 4), 0.5), "alpha": np.array([0.5, 0.5]), "gamma": np.ones((2, 1))}
    params["eta"][1, 2] = np.nan
    with pytest.raises(ValueError, match="invalid argument"):
        _fit.fit(problem, params, np.full((50, 2), 0.5), "fab", 5, 1e-6, 1e-8, 1e-10, 1e-12)


# each build of the vectorised log: the environment that selects it, and its log_kind()
LOG_KINDS = {"avx512": ({}, 2), "avx2": ({"DEFRAG_NO_AVX512": "1"}, 1),
             "baseline": ({"DEFRAG_NO_AVX2": "1"}, 0)}


def log_test_values():
    rng = np.random.default_rng(0)
    tiny = np.finfo(np.float64).tiny
    return np.concatenate([
        np.exp(rng.uniform(-700, 700, 20000)),               # the whole exponent range
        1.0 + rng.uniform(-1e-6, 1e-6, 2000),                # near 1, where log is small
        np.ldexp(1.0, np.arange(-1022, 1023)),               # exact powers of two
        np.sqrt(0.5) * (1 + rng.uniform(-1e-12, 1e-12, 500)),  # the reduction boundary
        [tiny, 1.0, np.finfo(np.float64).max, 1e-10 / (1 - 1e-10), (1 - 1e-10) / 1e-10],
    ])


def test_the_environment_is_read_once(kernel_env):
    # a kernel call reads no environment: DEFRAG_NO_AVX2 set after the first dispatch
    # changes the build only once the CPU is read again (dfg_cpu_reread)
    kernel_env()
    wide = _testing.log_kind()
    if wide == 0:
        pytest.skip("this CPU has only the baseline build")
    os.environ["DEFRAG_NO_AVX2"] = "1"
    assert _testing.log_kind() == wide
    kernel_env(DEFRAG_NO_AVX2="1")
    assert _testing.log_kind() == 0


@pytest.mark.parametrize("kind", list(LOG_KINDS))
def test_vectorised_log_is_within_one_ulp_of_numpy(kind, kernel_env):
    env, expected = LOG_KINDS[kind]
    kernel_env(**env)  # a narrower build of the kernel
    if _testing.log_kind() != expected:
        pytest.skip(f"this CPU has no {kind} build")
    x = log_test_values()
    got, want = _testing.log_array(x), np.log(x)
    ulp = np.spacing(np.abs(want))
    assert np.all(np.abs(got - want) <= np.maximum(ulp, 0.0)), np.max(np.abs(got - want) / ulp)
    assert _testing.log_array(np.array([1.0]))[0] == 0.0
    # log-odds: the division then the same log
    p = np.concatenate([np.random.default_rng(1).random(5000), [1e-10, 0.5, 1 - 1e-10]])
    np.testing.assert_array_equal(_testing.log_array(p, odds=True), _testing.log_array(p / (1 - p)))
    with pytest.raises(ValueError):
        _testing.log_array(np.array([0.0]))
