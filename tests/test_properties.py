"""Property tests: the C kernels against the plain NumPy equations (tests/reference.py)
on hypothesis-generated small problems (random N, D, L, K, number of classes, ties in
thresholds and features, NaN with either missing direction, clamped eta, category sets).

The number of examples comes from the settings profile of tests/conftest.py: a fixed,
bounded "ci" run by default, DEFRAG_FUZZ_EXAMPLES=N for N examples per property.
"""
import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import reference as ref  # noqa: E402
from defrag import _testing  # noqa: E402
from defrag.fit import _fit  # noqa: E402
from defrag.rules import _rules_eval  # noqa: E402
from defrag.splits import _encoding  # noqa: E402
from defrag.splits.table import SplitTable  # noqa: E402
from defrag.prototypes import tree_distance  # noqa: E402
from test_kernels import EPS, make_params, sets_arrays  # noqa: E402

# Features and thresholds come from one coarse grid, so features tie with each other
# and with thresholds, and thresholds repeat.
GRID = np.linspace(0.0, 1.0, 6)


@st.composite
def problems(draw, max_n=40, max_d=4, max_splits=20, max_k=5):
    """(rng, X, splits, dense S, eta, n_classes, y) of a small random problem."""
    n = draw(st.integers(1, max_n))
    d = draw(st.integers(1, max_d))
    n_splits = draw(st.integers(0, max_splits))
    k = draw(st.integers(1, max_k))
    n_classes = draw(st.sampled_from([0, 1, 2, 3]))
    nan_share = draw(st.sampled_from([0.0, 0.2, 1.0]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    X = np.ascontiguousarray(rng.choice(GRID, size=(n, d)))
    X[rng.random((n, d)) < nan_share] = np.nan
    missing_right = (rng.random(n_splits) < 0.5).astype(np.uint8)
    splits = SplitTable(rng.integers(0, d, n_splits), rng.choice(GRID, n_splits), d,
                        keep_duplicates=True, missing_right=missing_right, supports_missing=True)
    S = np.where(np.isnan(X[:, splits.feature]), splits.missing_right.astype(bool),
                 X[:, splits.feature] > splits.threshold).astype(np.float64)
    eta = rng.random((k, len(splits)))
    extreme = rng.random(eta.shape)  # clamped entries take the bit kernel's popcount path
    eta[extreme < 0.2] = EPS
    eta[extreme > 0.8] = 1 - EPS
    eta = np.clip(eta, EPS, 1 - EPS)
    if n_classes == 0:
        y = rng.standard_normal(n)
    else:
        y = rng.integers(0, n_classes, n).astype(np.int32)
    return rng, X, splits, S, eta, n_classes, y


def problem_of(splits, X, y, n_classes, path):
    kw = {"ranks": splits.ranks(X)} if path == "ranks" else {"bits": splits.pack(X)}
    return _fit.Problem(splits.feat_ptr, y_value=y if n_classes == 0 else None,
                        y_class=y if n_classes else None, n_classes=n_classes,
                        missing_right=splits.missing_right, **kw)


@given(problems())
def test_encodings_and_log_bernoulli_match_numpy(p):
    rng, X, splits, S, eta, _, _ = p
    mr = splits.missing_right
    np.testing.assert_array_equal(splits.binary_features(X), S.astype(bool))
    packed = splits.pack(X)
    unpacked = np.unpackbits(packed.view(np.uint8), axis=1, bitorder="little")[:, : len(splits)]
    np.testing.assert_array_equal(unpacked.astype(bool), S.astype(bool))
    expected = ref.log_bernoulli(S, eta)
    by_ranks = _testing.loglik_ranks(splits.ranks(X), splits.feat_ptr, eta, 1, mr)
    by_bits = _testing.loglik_bits(packed, len(splits), eta, EPS)
    np.testing.assert_allclose(by_ranks, expected, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(by_bits, expected, rtol=1e-9, atol=1e-12)


@given(problems(), st.integers(1, 6))
def test_split_statistics_match_numpy(p, k):
    rng, X, splits, S, _, _, _ = p
    beta = rng.dirichlet(np.ones(k), size=X.shape[0])
    expected = beta.T @ S
    by_ranks = _testing.split_stats_ranks(splits.ranks(X), splits.feat_ptr, beta, 1,
                                          splits.missing_right)
    by_bits = _testing.split_stats_bits(splits.pack(X), len(splits), beta)
    np.testing.assert_allclose(by_ranks, expected, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(by_bits, expected, rtol=1e-9, atol=1e-12)


@given(problems(), st.sampled_from(["ranks", "bits"]), st.integers(1, 5))
def test_log_joint_bound_estep_mstep_match_numpy(p, path, n_updates):
    rng, X, splits, S, eta, n_classes, y = p
    n, k = X.shape[0], eta.shape[0]
    prob = problem_of(splits, X, y, n_classes, path)
    params = make_params(rng, k, len(splits), n_classes, eta)
    if n_classes:
        params["gamma"] = np.clip(params["gamma"], EPS, None)

    logf = _testing.log_joint(prob, params)
    logf_ref = ref.log_joint(S, params, y, n_classes)
    # the rank path adds log(1 - eta) and log-odds tables of size |log EPS| = 23 each:
    # near zero, an absolute error of a few ulps of those terms per split
    np.testing.assert_allclose(logf, logf_ref, rtol=1e-9, atol=1e-13 * (len(splits) + 1))

    omega = ref.omega(len(splits), n_classes)
    assert prob.omega == pytest.approx(omega, rel=1e-15)
    beta = rng.dirichlet(np.ones(k), size=n)
    bound, colsum = _testing.lower_bound(logf, beta, omega)
    expected_bound = ref.lower_bound(logf_ref, beta, omega)
    assert abs(bound - expected_bound) <= 1e-9 * max(abs(expected_bound), 1.0)
    np.testing.assert_allclose(colsum, beta.sum(axis=0), rtol=1e-12)

    new_beta = beta.copy()
    _, value, done = _testing.estep(logf, new_beta, omega, n_updates, 0.0)
    assert 1 <= done <= n_updates  # stops early only when no column sum moves at all
    expected_beta = ref.estep_fab(logf_ref, beta, omega, n_updates)
    np.testing.assert_allclose(new_beta, expected_beta, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(new_beta.sum(axis=1), 1.0, rtol=1e-12)
    expected_value = ref.lower_bound(logf_ref, expected_beta, omega)
    assert abs(value - expected_value) <= 1e-9 * max(abs(expected_value), 1.0)

    new_params = {name: np.array(a) for name, a in params.items()}
    _testing.mstep(prob, new_beta, new_params, EPS, 1e-12)
    for name, expected in ref.mstep(S, new_beta, y, n_classes, EPS, 1e-12).items():
        np.testing.assert_allclose(new_params[name], expected, rtol=1e-9, atol=1e-12, err_msg=name)


@st.composite
def rule_sets(draw, max_n=40, max_rules=5, max_conditions=4):
    """(X, rule_ptr, feature, lower, upper, missing, kind, sets) of random rules over a
    numeric column and two category-code columns (negative, large and missing codes)."""
    n = draw(st.integers(0, max_n))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    X = np.empty((n, 3))
    X[:, 0] = rng.choice(GRID, n)
    X[:, 1] = rng.integers(-2, 8, n)
    X[:, 2] = rng.choice([0, 1, 5, 63, 64, 65, 130], n)
    X[rng.random((n, 3)) < draw(st.sampled_from([0.0, 0.2]))] = np.nan
    sizes = rng.integers(0, max_conditions + 1, draw(st.integers(0, max_rules)))
    m = int(sizes.sum())
    feature = rng.integers(0, 3, m).astype(np.int32)
    kind = np.where(feature == 0, 0, rng.integers(0, 3, m)).astype(np.uint8)
    lower = np.where(rng.random(m) < 0.3, -np.inf, rng.choice(GRID, m))
    upper = np.where(rng.random(m) < 0.3, np.inf, rng.choice(GRID, m))
    lower[kind > 0], upper[kind > 0] = -np.inf, np.inf
    sets = [sorted(rng.choice([0, 1, 3, 5, 7, 63, 64, 130], rng.integers(0, 4), replace=False))
            if c else [] for c in kind]
    rule_ptr = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    missing = (rng.random(m) < 0.5).astype(np.uint8)
    return X, rule_ptr, feature, lower, upper, missing, kind, sets


def numpy_cover(X, rule_ptr, feature, lower, upper, missing, kind, sets):
    cover = np.ones((X.shape[0], rule_ptr.size - 1), dtype=bool)
    for c in range(feature.size):
        x = X[:, feature[c]]
        if kind[c] == 0:
            inside = (lower[c] < x) & (x <= upper[c])
        else:
            inside = ref.set_test(np.nan_to_num(x, nan=-1), sets[c], kind[c] == 2)
        r = np.searchsorted(rule_ptr, c, side="right") - 1
        cover[:, r] &= np.where(np.isnan(x), missing[c] == 1, inside)
    return cover


@given(rule_sets(), st.integers(1, 2))
def test_rule_coverage_matches_numpy(rules, n_threads):
    X, rule_ptr, feature, lower, upper, missing, kind, sets = rules
    ptr, words = sets_arrays(sets)
    # the library passes set arrays only with at least one condition (the kernel rejects
    # an empty kind array as invalid)
    args = dict(kind=kind, set_ptr=ptr, set_words=words) if feature.size else {}
    expected = numpy_cover(X, rule_ptr, feature, lower, upper, missing, kind, sets)
    cover = _rules_eval.rules_cover(X, rule_ptr, feature, lower, upper, missing, n_threads, **args)
    np.testing.assert_array_equal(cover, expected)
    first = _rules_eval.rules_first(X, rule_ptr, feature, lower, upper, missing, n_threads, **args)
    leading = np.argmax(np.column_stack([expected, np.ones(len(X), bool)]), axis=1)
    np.testing.assert_array_equal(first, np.where(expected.any(axis=1), leading, -1))
    # the same sets as splits of the packed encoding (a threshold for the numeric ones)
    packed = _encoding.pack_rows(X, feature, upper.copy(), n_threads, missing, **args)
    S = np.unpackbits(packed.view(np.uint8), axis=1, bitorder="little")[:, : feature.size]
    for c in range(feature.size):
        x = X[:, feature[c]]
        s = x > upper[c] if kind[c] == 0 else ref.set_test(np.nan_to_num(x, nan=-1), sets[c], kind[c] == 2)
        np.testing.assert_array_equal(S[:, c].astype(bool), np.where(np.isnan(x), missing[c] == 1, s))


@given(st.integers(0, 12), st.integers(0, 12), st.integers(1, 8), st.integers(1, 4),
       st.booleans(), st.integers(0, 2**32 - 1), st.integers(1, 2))
def test_tree_distance_matches_numpy(n_a, n_b, n_trees, n_leaves, equal_weights, seed, n_threads):
    rng = np.random.default_rng(seed)
    A = rng.integers(0, n_leaves, (n_a, n_trees))
    B = rng.integers(0, n_leaves, (n_b, n_trees))
    w = np.ones(n_trees) if equal_weights else rng.random(n_trees) * (rng.random(n_trees) < 0.7)
    if not equal_weights:
        w[rng.integers(0, n_trees)] += 0.5  # a positive sum
    w = w.astype(np.float32)
    D = tree_distance(A, B, w, n_threads)
    shared = (A[:, None, :] == B[None, :, :]).astype(np.float64)
    expected = 1.0 - shared @ w.astype(np.float64) / float(w.astype(np.float64).sum())
    assert D.dtype == np.float32 and D.shape == (n_a, n_b)
    np.testing.assert_allclose(D, expected, rtol=0, atol=1e-6)
    assert np.all((D >= 0) & (D <= 1))
    if equal_weights:  # the exact count of shared trees over their number, in float
        share = shared.sum(axis=2).astype(np.float32) / np.float32(n_trees)
        np.testing.assert_array_equal(D, np.float32(1) - share)
    DA = tree_distance(A, A, w, n_threads)
    np.testing.assert_array_equal(np.diag(DA), 0.0)
    np.testing.assert_array_equal(DA, DA.T)
