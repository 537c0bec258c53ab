"""The one-pass kernels that print rules on the training rows (src_c/dfg_condition_stats.c,
its bit-packed dfg_condition_bits) against plain NumPy per condition."""
import numpy as np
import pytest

from defrag.rules import _rules_eval
from defrag.splits.inputs import ZERO_THRESHOLD
from defrag.rules.conditions import Condition, conditions_on_training_rows
from reference import printed_bound
from defrag.rules.extract import _unit_columns


def random_inputs(seed, n=517, d=5):
    """Columns with ties, NaN, exact zeros and tiny values (LightGBM's zero-as-missing),
    and one column of small category codes."""
    rng = np.random.default_rng(seed)
    X = np.round(rng.normal(size=(n, d)), int(rng.integers(0, 3)))  # many ties
    X[rng.random((n, d)) < 0.1] = np.nan
    X[rng.random((n, d)) < 0.05] = 0.0
    X[rng.random((n, d)) < 0.03] = 1e-40
    X[:, d - 1] = np.where(np.isnan(X[:, d - 1]), np.nan, rng.integers(0, 70, n))
    return X


def random_conditions(seed, X):
    rng = np.random.default_rng(seed + 1000)
    d = X.shape[1]
    conds = []
    for _ in range(12):
        f = int(rng.integers(0, d - 1))
        col = X[:, f][~np.isnan(X[:, f])]
        # bounds on training values (ties), between them, and outside them
        lo, hi = np.sort(rng.choice(np.concatenate([col, rng.normal(size=3)]), 2))
        which = rng.integers(0, 3)
        conds.append(Condition(f, f"x{f}", lower=None if which == 1 else lo, upper=None if which == 2 else hi,
                               missing=bool(rng.integers(0, 2)), zero_missing=bool(rng.integers(0, 2))))
    for negated in (False, True):
        conds.append(Condition(d - 1, "c", categories=rng.choice(70, 9, replace=False), negated=negated,
                               missing=bool(rng.integers(0, 2))))
    return conds


def reference_on_training_rows(c, X):
    """What Condition.on_training_rows computed condition by condition before the kernels."""
    column = X[:, c.feature]
    lower = upper = None
    if not c.is_set:
        lower = None if c.lower is None else printed_bound(c.lower, column)
        upper = None if c.upper is None else printed_bound(c.upper, column)
    return lower, upper, bool(np.isnan(column).any()), float(np.mean(c.holds(X)))


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("n_threads", [1, 3])
def test_conditions_on_training_rows_match_numpy_per_condition(seed, n_threads):
    X = random_inputs(seed)
    conds = random_conditions(seed, X)
    new = conditions_on_training_rows(conds, X, n_threads=n_threads)
    for c, got in zip(conds, new):
        lower, upper, seen, share = reference_on_training_rows(c, X)
        if not c.is_set:
            crossed = None not in (lower, upper) and lower >= upper
            if not crossed:
                assert (got.printed_lower, got.printed_upper) == (lower, upper), c
                # the printed bounds are the bounds (but at LightGBM's zero threshold)
                assert got.lower == (c.lower if c.lower is None or abs(c.lower) == ZERO_THRESHOLD else lower), c
                assert got.upper == (c.upper if c.upper is None or abs(c.upper) == ZERO_THRESHOLD else upper), c
            else:  # no training row between the bounds: both kept
                assert (got.lower, got.upper) == (c.lower, c.upper), c
        assert got.missing_seen == seen and got.train_share == share, c
        assert got.categories == c.categories
        np.testing.assert_array_equal(got.holds(X), c.holds(X))  # the same split of every training row


def test_bound_neighbours_are_the_training_values_next_to_each_bound():
    X = random_inputs(7)
    rng = np.random.default_rng(7)
    feature = rng.integers(0, X.shape[1], 40).astype(np.int32)
    value = np.where(rng.random(40) < 0.5, X[rng.integers(0, len(X), 40), feature], rng.normal(size=40) * 3)
    value = np.where(np.isnan(value), 0.25, value)
    for threads in (1, 2):
        below, above = _rules_eval.bound_neighbours(X, feature, value, n_threads=threads)
        for b in range(40):
            col = X[:, feature[b]][~np.isnan(X[:, feature[b]])]
            le, gt = col[col <= value[b]], col[col > value[b]]
            assert below[b] == (le.max() if le.size else -np.inf)
            assert above[b] == (gt.min() if gt.size else np.inf)
    with pytest.raises(ValueError, match="bound_neighbours"):
        _rules_eval.bound_neighbours(X, feature, np.full(40, np.nan))
    with pytest.raises(ValueError, match="bound_neighbours"):
        _rules_eval.bound_neighbours(X, np.full(40, X.shape[1], dtype=np.int32), value)


def test_condition_counts_count_zero_as_missing_only_where_asked():
    X = np.array([[0.0], [1e-40], [np.nan], [2.0], [-1.0]])
    feature = np.zeros(2, dtype=np.int32)
    lower, upper = np.full(2, -0.5), np.full(2, 0.5)
    missing = np.zeros(2, dtype=np.uint8)
    holds, n_nan = _rules_eval.condition_holds(X, feature, lower, upper, missing,
                                               np.array([0, 1], dtype=np.uint8), ZERO_THRESHOLD,
                                               output="count")
    assert holds.tolist() == [2, 0] and n_nan.tolist() == [1]


@pytest.mark.parametrize("seed", range(4))
def test_unit_columns_match_the_bits_of_each_unit(seed):
    X = random_inputs(seed, n=333)
    rng = np.random.default_rng(seed)
    units = [(int(f), side, float(rng.normal())) for f, side in
             zip(rng.integers(0, X.shape[1] - 1, 8), rng.choice(["lower", "upper"], 8))]
    units += [(X.shape[1] - 1, part, np.sort(rng.choice(70, 5, replace=False))) for part in ("in", "out")]
    missing_ok = rng.random(X.shape[1]) < 0.5
    cols = _unit_columns(X, units, [missing_ok[d] for d, _, _ in units])
    for j, (d, part, value) in enumerate(units):
        col = X[:, d]
        if part in ("in", "out"):
            present = np.isin(col, value) ^ (part == "out")
        else:
            present = col > value if part == "lower" else col <= value
        expect = np.where(np.isnan(col), missing_ok[d], present)
        got = np.unpackbits(cols[j].view(np.uint8), bitorder="little")[:len(X)].astype(bool)
        np.testing.assert_array_equal(got, expect, str((d, part)))


@pytest.mark.parametrize("seed", range(4))
def test_conditions_holds_is_condition_holds(seed):
    from defrag.rules.conditions import conditions_holds

    X = random_inputs(seed)
    conds = random_conditions(seed, X)
    for threads in (1, 2):
        got = conditions_holds(conds, X, n_threads=threads)
        assert got.shape == (len(conds), len(X))
        for c, row in zip(conds, got):
            np.testing.assert_array_equal(row, c.holds(X), str(c))
    assert conditions_holds([], X).shape == (0, len(X))


def test_infinite_values_hold_as_condition_holds_says():
    # -inf satisfies a condition without a lower bound (x <= t), +inf one without an upper
    from defrag.rules.conditions import conditions_holds

    X = np.array([[-np.inf], [0.2], [0.7], [np.inf]])
    conds = [Condition(0, "x", upper=0.5), Condition(0, "x", lower=0.5), Condition(0, "x", lower=0.1, upper=0.5)]
    for c, row in zip(conds, conditions_holds(conds, X)):
        np.testing.assert_array_equal(row, c.holds(X), str(c))
    bits = _unit_columns(X, [(0, "upper", 0.5), (0, "lower", 0.5)], [False, False])
    np.testing.assert_array_equal(np.unpackbits(bits.view(np.uint8), axis=1, bitorder="little")[:, :4],
                                  [[1, 1, 0, 0], [0, 0, 1, 1]])
