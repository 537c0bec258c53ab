"""The split table's orderings against NumPy's plain ones: its rows sorted as np.lexsort
sorts them (by stable sorts, or not at all where they are in order already) and the splits
of largest gain as a stable argsort of the gains picks them."""
import numpy as np
import pytest

from defrag.splits.table import SplitTable, _lexsorted


@pytest.mark.parametrize("seed", range(4))
def test_lexsorted_is_numpys_lexsort(seed):
    rng = np.random.default_rng(seed)
    for trial in range(300):
        n = int(rng.integers(1, 80))
        keys = (rng.integers(0, 2, n).astype(np.uint8), rng.integers(0, 3, n),
                rng.choice([0.0, -0.0, 1.5, 2.0, np.inf], n), rng.integers(0, 4 if trial % 3 else 70000, n))
        if trial % 4 == 0:  # rows in order already: no sort at all
            keys = tuple(k[np.lexsort(keys)] for k in keys)
        got = _lexsorted(keys)
        if trial % 4 == 0:
            assert got is None
        np.testing.assert_array_equal(np.arange(n) if got is None else got, np.lexsort(keys))


def test_top_rows_is_a_stable_argsort_of_the_gains():
    rng = np.random.default_rng(0)
    for trial in range(200):
        L = int(rng.integers(1, 300))
        gain = (rng.choice([0.0, -0.0, 1.0, 2.5, np.inf, -np.inf, 3.0], size=L) if trial % 2
                else rng.normal(size=L).round(1))
        table = SplitTable(np.zeros(L, dtype=np.int64), np.arange(L, dtype=float), 1, gain=gain)
        for n in (0, 1, L // 3, L - 1, L, L + 5):
            expected = np.sort(np.argsort(-table.gain, kind="stable")[:n])
            np.testing.assert_array_equal(table.top_rows(n), expected)
            top = table.top(n)
            np.testing.assert_array_equal(top.threshold, table.threshold[expected] if n < L else table.threshold)
    no_gain = SplitTable(np.zeros(5, dtype=np.int64), np.arange(5.0), 1)
    np.testing.assert_array_equal(no_gain.top_rows(2), np.arange(5))


def test_a_table_is_the_same_built_from_shuffled_splits():
    # the canonical order (feature, threshold, missing direction) and the duplicates
    # merged (largest gain kept) whatever order the splits come in
    rng = np.random.default_rng(3)
    feature = rng.integers(0, 6, 500)
    threshold = rng.integers(0, 20, 500) / 4.0
    missing = rng.integers(0, 2, 500)
    gain = rng.random(500)
    ref = SplitTable(feature, threshold, 6, missing_right=missing, gain=gain)
    assert np.all(np.diff(ref.feature) >= 0) and len(ref) < 500
    for seed in range(3):
        p = np.random.default_rng(seed).permutation(500)
        t = SplitTable(feature[p], threshold[p], 6, missing_right=missing[p], gain=gain[p])
        for name in ("feature", "threshold", "missing_right", "gain"):
            np.testing.assert_array_equal(getattr(t, name), getattr(ref, name))
