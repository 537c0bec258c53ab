"""Restart selection keeps only the selected restart's parameters."""
import itertools

import numpy as np

from defrag.fit.restarts import Restart, _BestKeeper, _selection_key


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


def test_thread_shares_go_to_the_restarts_still_running():
    from defrag.fit.restarts import _ThreadShares

    n_rows = 10**6  # enough rows for any share
    shares = _ThreadShares(n_restarts=5, workers=4, threads=2, n_samples=n_rows)
    live = [shares.start(i) for i in range(4)]
    assert [int(v[0]) for v in live] == [2, 2, 2, 2]  # one restart still waits
    shares.finish(1)
    assert [int(v[0]) for v in live] == [2, 2, 2, 2]
    live.append(shares.start(4))  # none waits now: 8 threads over 4 running
    assert sorted(int(v[0]) for v in (live[0], live[2], live[3], live[4])) == [2, 2, 2, 2]
    shares.finish(0)
    shares.finish(2)
    assert int(live[3][0]) + int(live[4][0]) == 8 and min(int(live[3][0]), int(live[4][0])) == 4
    shares.finish(3)
    assert int(live[4][0]) == 8 and shares.threads_for(4, n_rows) == 8
    # a share never exceeds what the rows keep busy
    assert shares.threads_for(4, 9000) == 1


def test_a_run_gives_the_same_result_when_its_threads_change_midway():
    import threading

    from conftest import xor_data
    from sklearn.ensemble import RandomForestRegressor

    from defrag import split_table_from_estimator
    from defrag.fit._fit import fit
    from defrag.fit.restarts import INNER, initial_state
    from defrag.fit.mixture import kernel_problem
    from defrag.fit.targets import Target

    X, y, _, _ = xor_data(2, n=40_000, regression=True)
    rf = RandomForestRegressor(n_estimators=5, min_samples_leaf=200, random_state=0).fit(X, y)
    splits = split_table_from_estimator(rf)
    target = Target(np.ascontiguousarray(y), 0, float(y.mean()), float(y.std()), float(y.var()),
                     1e-9 * float(y.var()))
    problem = kernel_problem(splits, splits.kernel_input(splits.prepare(X), 1), target)

    def run(n_threads, live=None, flip=False):
        params, beta = initial_state(np.random.default_rng(0), len(X), len(splits), 4, target, 1e-10)
        stop = threading.Event()
        if flip:  # another thread changes the share while the run goes on
            def flipper():
                while not stop.is_set():
                    live[0] = 3 - live[0]
            t = threading.Thread(target=flipper)
            t.start()
        try:
            K, trace, _ = fit(problem, params, beta, "fab", 30, 1e-9, 1e-8, 1e-10, target.var_floor,
                              n_threads, INNER, (0.1,), 3, 0, live)
        finally:
            stop.set()
            if flip:
                t.join()
        return K, trace, params, beta

    a = run(1)
    b = run(1, live=np.array([2], dtype=np.int32), flip=True)
    assert a[0] == b[0]
    np.testing.assert_array_equal(a[1], b[1])
    np.testing.assert_array_equal(a[2]["eta"][:a[0]], b[2]["eta"][:b[0]])
    np.testing.assert_array_equal(a[3][:, :a[0]], b[3][:, :b[0]])
