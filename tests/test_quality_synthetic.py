"""benchmarks/quality.py --synthetic: the generated data sets a change is checked on where
the public cases cannot tell it from noise. Each loads as its task says, the same arrays on
every call (a benchmark compared before and after a change must see the same data)."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "benchmarks"))
import quality  # noqa: E402


def test_every_synthetic_case_loads_its_task_and_the_same_data_each_time():
    assert len(quality.SYNTHETIC) == 12 and not set(quality.SYNTHETIC) & set(quality.CASES)
    tasks = []
    for name in quality.SYNTHETIC:
        X, y, task = quality.load(name)
        X2, y2, _ = quality.load(name)
        np.testing.assert_array_equal(X, X2)
        np.testing.assert_array_equal(y, y2)
        assert quality.task_of(name) == task and X.shape[0] == y.shape[0] >= 400
        classes = np.unique(y).size
        if task == "regression":
            assert classes > 100
        else:
            assert classes == (2 if task == "binary" else int(name.split("_")[1][0]))
        tasks.append(task)
    assert tasks.count("regression") == 6 and tasks.count("binary") == 3 and tasks.count("multiclass") == 3


def test_the_additive_case_keeps_its_idle_features_idle():
    # the first five features carry the terms, the others none: the share of y's variance
    # that each feature's ten bins explain (a square's is not a correlation)
    X, y = quality._additive(4000, 8, 0)
    shares = []
    for j in range(8):
        bins = np.minimum((X[:, j] * 10).astype(int), 9)
        means = np.bincount(bins, weights=y) / np.bincount(bins)
        shares.append(np.var(means[bins]) / np.var(y))
    assert min(shares[:5]) > 0.012 and max(shares[5:]) < 0.006
