"""Progress of long fits (issue 26, item 5; defrag/utils/progress.py): one tqdm bar of the
restarts once a fit has run 2 s, on a terminal or in a notebook, with verbose="auto";
log records otherwise; nothing with verbose=0. The clock is injected: no timing."""
import io
import logging
import sys
import types

import numpy as np
import pytest
from conftest import xor_data
from sklearn.ensemble import RandomForestClassifier

from defrag import DefragModel, cli
from defrag.fit import pipeline
from defrag.utils import progress as prog


class Terminal(io.StringIO):
    def isatty(self):
        return True


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def _records(caplog):
    return [r.getMessage() for r in caplog.records if "restarts done" in r.getMessage()]


def _run(stream, verbose, caplog, times=(0.5, 2.5, 3.0), after=None):
    """Three restarts ending at times (seconds since the fit began): what stream shows."""
    clock = Clock()
    shown = []
    with prog.progress_to(stream, after), caplog.at_level(logging.INFO, logger="defrag"), \
            prog.RestartProgress(3, verbose, start=0.0, clock=clock) as progress:
        for done, (t, best) in enumerate(zip(times, (0.3, 0.2, 0.1)), 1):
            clock.now = t
            progress(done, best)
            shown.append(stream.getvalue())
    return shown


def test_the_bar_appears_once_the_fit_has_run_the_delay_on_a_terminal(caplog):
    pytest.importorskip("tqdm")
    stream = Terminal()
    shown = _run(stream, "auto", caplog)
    assert shown[0] == ""  # 0.5 s: nothing yet
    assert "defrag restarts" in shown[1] and "2/3" in shown[1] and "best error 0.2" in shown[1]
    assert "3/3" in shown[2] and "best error 0.1" in shown[2]
    assert _records(caplog) == []  # the bar, not log lines
    # a fit that has run the delay before its restarts begin shows the bar at once
    stream, clock = Terminal(), Clock()
    clock.now = 2.1
    with prog.progress_to(stream), prog.RestartProgress(3, "auto", start=0.0, clock=clock) as progress:
        progress(0, np.nan)
        assert "0/3" in stream.getvalue() and "best error" not in stream.getvalue()
    # a fit that ends before the delay shows nothing
    stream = Terminal()
    assert _run(stream, "auto", caplog, times=(0.1, 0.2, 1.9))[-1] == ""


def test_no_bar_where_stderr_is_not_a_terminal_or_verbose_is_0(caplog):
    stream = io.StringIO()
    assert _run(stream, "auto", caplog)[-1] == ""  # a file, a pipe: log records only
    assert _records(caplog) == [f"{k} of 3 restarts done, best error so far {b:.6g}"
                                for k, b in ((1, 0.3), (2, 0.2), (3, 0.1))]
    caplog.clear()
    for verbose in (0, False):
        stream = Terminal()
        assert _run(stream, verbose, caplog)[-1] == "" and _records(caplog) == []
    stream = Terminal()  # verbose >= 1: the restarts' log lines, no bar among them
    assert _run(stream, 1, caplog)[-1] == "" and len(_records(caplog)) == 3


def test_without_tqdm_the_progress_goes_to_the_log(caplog, monkeypatch):
    monkeypatch.setitem(sys.modules, "tqdm", None)  # import tqdm raises ImportError
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)
    stream = Terminal()
    assert _run(stream, "auto", caplog)[-1] == ""
    assert len(_records(caplog)) == 2  # from the delay on
    assert not prog.shows_bar("auto", stream)


def test_a_notebook_gets_the_bar(monkeypatch):
    class ZMQInteractiveShell:
        pass

    fake = types.ModuleType("IPython")
    fake.get_ipython = ZMQInteractiveShell
    monkeypatch.setitem(sys.modules, "IPython", fake)
    assert prog.in_notebook()
    assert prog.RestartProgress.mode_for("auto", io.StringIO()) == "bar"
    assert prog.RestartProgress.mode_for(0, io.StringIO()) == "off"
    fake.get_ipython = lambda: None  # IPython imported, no kernel
    assert not prog.in_notebook()
    assert prog.RestartProgress.mode_for("auto", io.StringIO()) == "log"


def test_verbose_is_checked():
    X, y, _, _ = xor_data(0, n=100)
    rf = RandomForestClassifier(n_estimators=3, max_depth=3, random_state=0).fit(X, y)
    for bad in ("yes", -1, 1.5, None):
        with pytest.raises(ValueError, match=r"The 'verbose' parameter of DefragModel must be a str among \{'auto'\} or an int"):
            DefragModel(rf, n_restarts=1, verbose=bad).fit(X)
    assert DefragModel().verbose == "auto"


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_a_fit_reports_each_restart_and_the_best_error_so_far(monkeypatch, n_jobs):
    calls = []

    class Recorded(prog.RestartProgress):
        def __call__(self, n_done, best_error):
            calls.append((n_done, best_error))
            super().__call__(n_done, best_error)

    monkeypatch.setattr(pipeline, "RestartProgress", Recorded)
    X, y, _, _ = xor_data(0, n=300)
    rf = RandomForestClassifier(n_estimators=5, max_depth=4, random_state=0).fit(X, y)
    stream = Terminal()
    with prog.progress_to(stream, after=0.0):
        model = DefragModel(rf, n_components=4, n_restarts=4, random_state=0, n_jobs=n_jobs).fit(X)
    assert [c[0] for c in calls] == [0, 1, 2, 3, 4]  # before the first restart, after each
    best = [c[1] for c in calls[1:]]
    assert all(b >= a for a, b in zip(best[1:], best[:-1]))  # never worse
    assert best[-1] == pytest.approx(np.min(model.restart_errors_))
    if prog.shows_bar("auto", stream):  # tqdm installed: the bar of the 4 restarts
        assert "4/4" in stream.getvalue()
    calls.clear()
    stream = Terminal()
    with prog.progress_to(stream, after=0.0):
        DefragModel(rf, n_components=4, n_restarts=2, random_state=0, n_jobs=n_jobs, verbose=0).fit(X)
    assert stream.getvalue() == "" and len(calls) == 3  # called, silent


def test_the_cli_draws_the_same_bar_on_a_terminal(monkeypatch):
    pytest.importorskip("tqdm")
    monkeypatch.setattr(cli.output, "PROGRESS_AFTER_S", 0.0)
    out, err = io.StringIO(), Terminal()
    assert cli.main(["demo", "--n-restarts", "2", "--n-trees", "5"], out, err) == 0
    assert "defrag restarts" in err.getvalue() and "2/2" in err.getvalue()
    assert "restart 1:" not in err.getvalue()  # the bar instead of the log lines
