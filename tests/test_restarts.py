"""Restart selection keeps only the selected restart's parameters."""
import itertools

import numpy as np

from defrag._restarts import Restart, _BestKeeper, _selection_key


def restart(index, error, k, bound):
    return Restart(index, {"eta": np.full((k, 3), float(index))}, k, np.array([bound]),
                   np.array([0]), error)


def test_best_keeper_keeps_the_minimum_whatever_the_finishing_order():
    specs = [(0, 5.0, 3, -10.0), (1, 4.0, 4, -12.0), (2, 4.0, 3, -11.0), (3, 4.0, 3, -11.0),
             (4, 6.0, 2, -9.0)]
    # ties on error and rules go to the larger bound, then the earlier restart: index 2
    for order in itertools.permutations(range(len(specs))):
        keeper = _BestKeeper()
        results = [keeper.offer(restart(*specs[i])) for i in order]
        best = keeper.best
        assert best.index == 2
        assert best.params["eta"][0, 0] == 2.0
        assert min(results, key=_selection_key) is best
        assert all(r.params is None for r in results if r is not best)


def test_a_restart_with_a_nan_error_or_bound_is_never_preferred():
    specs = [(0, np.nan, 2, -5.0), (1, 7.0, 3, -10.0), (2, 7.0, 3, np.nan)]
    for order in itertools.permutations(range(len(specs))):
        keeper = _BestKeeper()
        for i in order:
            keeper.offer(restart(*specs[i]))
        assert keeper.best.index == 1
