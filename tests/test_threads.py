"""Threads (defrag/utils/threads.py): a fit in any thread honours threadpoolctl's limits
and n_jobs, and fits side by side in threads never run more kernel threads than cores
in total (the process's core budget)."""
import logging
import re
import threading
import time

import pytest
import threadpoolctl
from sklearn.datasets import make_classification
from sklearn.ensemble import RandomForestClassifier

from defrag import DefragModel
from defrag.fit import _fit
from defrag.utils import _common, threads


@pytest.fixture(scope="module")
def data():
    # 17,000 rows: two threads' worth (8,192 rows a thread)
    X, y = make_classification(17000, 6, n_informative=4, random_state=0)
    forest = RandomForestClassifier(3, max_depth=5, random_state=0).fit(X[:2000], y[:2000])
    return X, y, forest


def small_fit(forest, **params):
    return DefragModel(forest, **{"n_restarts": 2, "n_components": 4, "max_iter": 20, "subsample": None,
                                  "random_state": 0, **params}, form="list")


def in_thread(fn):
    out = {}

    def run():
        try:
            out["value"] = fn()
        except BaseException as exc:  # handed to the test
            out["error"] = exc

    worker = threading.Thread(target=run)
    worker.start()
    worker.join()
    if "error" in out:
        raise out["error"]
    return out["value"]


def budgets(caplog):
    """(workers, OpenMP threads) of each fit's restarts, from the 'defrag' log."""
    return [tuple(map(int, m.groups())) for m in
            (re.search(r"restarts on (\d+) workers x (\d+) OpenMP threads", r.getMessage())
             for r in caplog.records) if m]


def test_threadpoolctl_sees_defrag_and_its_limit_holds_in_every_thread():
    info = [i for i in threadpoolctl.threadpool_info() if i["internal_api"] == "defrag"]
    assert len(info) == 1 and info[0]["user_api"] == "openmp"
    with threadpoolctl.threadpool_limits(1):
        assert threads.threads_now() == 1
        assert in_thread(threads.threads_now) == 1  # OpenMP's own limit holds in this thread only
    with threadpoolctl.threadpool_limits(limits=1, user_api="openmp"):
        assert in_thread(threads.threads_now) == 1
    assert in_thread(threads.threads_now) == min(threads.available_cores(), _common.build_info()[1])


def test_a_fit_in_another_thread_honours_the_limit_and_n_jobs(data, caplog):
    X, y, forest = data
    caplog.set_level(logging.INFO, logger="defrag")

    def fit(n, **params):
        return in_thread(lambda: small_fit(forest, **params).fit(X[:n], y[:n]))

    with threadpoolctl.threadpool_limits(1):
        limited = fit(17000)
    assert budgets(caplog) == [(1, 1)]
    caplog.clear()
    fit(3000, n_jobs=1)
    (workers, _), = budgets(caplog)
    assert workers == 1
    free = fit(17000)
    assert str(free.rules_) == str(limited.rules_)  # any thread count, the same rules


def test_fits_side_by_side_never_run_more_threads_than_cores(data, monkeypatch):
    # four fits in four threads (joblib's threading backend, a server's request threads):
    # the OpenMP threads of the restarts running at once never exceed the cores
    X, y, forest = data
    cores = threads.available_cores()
    lock = threading.Lock()
    running, peak = [0], [0]
    kernel = _fit.fit

    def counted(*args, **kwargs):
        live = kwargs.get("live_threads", args[14] if len(args) > 14 else None)
        n = int(live[0]) if live is not None else int(args[9])
        with lock:
            running[0] += n
            peak[0] = max(peak[0], running[0])
        try:
            return kernel(*args, **kwargs)
        finally:
            with lock:
                running[0] -= n

    monkeypatch.setattr(_fit, "fit", counted)
    results = []
    workers = [threading.Thread(target=lambda: results.append(
        small_fit(forest, n_restarts=3).fit(X, y)))
        for _ in range(4)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert len(results) == 4
    assert 1 <= peak[0] <= cores, (peak[0], cores)
    assert threads.CORES.held == 0
    assert len({str(m.rules_) for m in results}) == 1


def test_the_budget_waits_for_a_free_core_and_nested_fits_share_a_grant(monkeypatch):
    monkeypatch.setattr(threads, "available_cores", lambda: 2)
    budget = threads.CoreBudget()
    assert budget.acquire(5) == 2
    got = []
    waiter = threading.Thread(target=lambda: got.append(budget.acquire(2)))
    waiter.start()
    time.sleep(0.3)
    assert got == []  # every core held: it waits
    budget.release(1)
    waiter.join(5)
    assert got == [1]  # what came free
    budget.release(2)
    assert budget.held == 0

    monkeypatch.setattr(threads, "CORES", budget)
    with threads.fit_threads(2) as outer:
        held = budget.held
        with threads.fit_threads(8) as inner:
            assert inner == outer and budget.held == held  # nothing more taken
            assert threads.threads_now() <= outer
    assert budget.held == 0


def test_n_jobs_beyond_the_cores_runs_as_many_workers_as_threads():
    cores = threads.available_cores()
    workers, per_worker = threads.thread_budget(4 * cores, 100, 1000)
    assert workers * per_worker <= threads.threads_now()
    with threadpoolctl.threadpool_limits(1):
        assert threads.thread_budget(4, 100, 10 ** 6) == (1, 1)
        assert threads.threads_from_n_jobs(-1) == 1
    assert threads.thread_budget(None, 20, 10 ** 6) == (1, threads.threads_now())

