"""Progress of a long fit, the same for the API and the CLI: once a fit has run
PROGRESS_AFTER_S seconds, one bar of the restarts done and the best training error so far.

The bar is tqdm's (``tqdm.auto``: a widget in a notebook, text on a terminal), written to
stderr, where stderr is a terminal or the fit runs in a notebook, and only with
``verbose="auto"`` (DefragModel's default). tqdm is an optional extra
(``pip install "defrag[progress]"``); without it, or where no bar is shown (stderr not a
terminal, ``verbose`` >= 1), the progress goes to the "defrag" logger as INFO records,
which ``verbose`` >= 1, the user's logging configuration or the CLI shows. ``verbose=0``
says nothing. Library code never prints: the bar is tqdm's, the rest is logging.

The CLI sets where stderr is and the delay (``progress_to``); a test injects the clock.
"""
import contextlib
import contextvars
import importlib.util
import logging
import math
import sys
import time
import warnings

logger = logging.getLogger("defrag")

# a fit shorter than this says nothing
PROGRESS_AFTER_S = 2.0

# (stream, delay) of the CLI's progress_to; None: sys.stderr, PROGRESS_AFTER_S
_settings = contextvars.ContextVar("defrag_progress", default=None)


@contextlib.contextmanager
def progress_to(stream, after=None):
    """Within the block, fits show their progress on stream (a file object; the CLI's
    stderr) once they have run ``after`` seconds (default PROGRESS_AFTER_S)."""
    token = _settings.set((stream, after))
    try:
        yield
    finally:
        _settings.reset(token)


def _is_terminal(stream):
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):  # no isatty, a closed file
        return False


def in_notebook():
    """Whether this process is a Jupyter kernel (IPython's ZMQ shell), where tqdm.auto
    draws a widget."""
    ipython = sys.modules.get("IPython")
    if ipython is None:  # never imported: not a notebook
        return False
    try:
        shell = ipython.get_ipython()
    except AttributeError:
        return False
    return shell is not None and type(shell).__name__ == "ZMQInteractiveShell"


def check_verbose(verbose):
    """verbose as given ("auto") or as an int; ValueError unless it is "auto", a bool or
    an integer >= 0."""
    if verbose == "auto":
        return verbose
    level = None
    if not isinstance(verbose, str):
        try:
            level = int(verbose)
        except (TypeError, ValueError):
            pass
    if level is None or level != verbose or level < 0:
        raise ValueError(f"verbose must be 'auto' or an integer >= 0; got {verbose!r}")
    return level


def shows_bar(verbose, stream):
    """Whether a long fit with this verbose draws its bar on stream (tqdm installed)."""
    return RestartProgress.mode_for(verbose, stream) == "bar" and importlib.util.find_spec("tqdm") is not None


def _open_bar(total, initial, stream):
    """A tqdm.auto bar on stream, or None without tqdm."""
    try:
        with warnings.catch_warnings():
            # tqdm.auto warns where a notebook lacks ipywidgets, and falls back to text
            warnings.simplefilter("ignore")
            from tqdm.auto import tqdm  # optional extra "progress"
    except ImportError:
        return None
    return tqdm(total=total, initial=initial, desc="defrag restarts", unit="restart", file=stream,
                leave=False, dynamic_ncols=True, disable=False)


class RestartProgress:
    """The progress of one fit's restarts: call it before the first restart (0, NaN) and
    after each with the restarts done and the best training error so far (a rate);
    ``close()`` when the restarts end. The bar opens at a call, so a fit whose first
    restart outlasts the delay shows it once that restart ends.

    mode: "bar" (verbose "auto", stderr a terminal or a notebook: the tqdm bar, once the
    fit has run ``after`` seconds since ``start``), "log" (INFO records on the "defrag"
    logger: verbose >= 1, or "auto" where no bar can be shown), "off" (verbose 0)."""

    def __init__(self, n_restarts, verbose, start=None, clock=time.perf_counter):
        stream, after = _settings.get() or (None, None)
        self.stream = sys.stderr if stream is None else stream
        self.after = PROGRESS_AFTER_S if after is None else after
        self.n_restarts = int(n_restarts)
        self.clock = clock
        self.start = clock() if start is None else start
        self.mode = self.mode_for(verbose, self.stream)
        self.bar = None

    @staticmethod
    def mode_for(verbose, stream):
        """"bar", "log" or "off" (see the class)."""
        level = check_verbose(verbose)
        if level == 0:
            return "off"
        if level == "auto" and (_is_terminal(stream) or in_notebook()):
            return "bar"
        return "log"

    def __call__(self, n_done, best_error):
        if self.mode == "off":
            return
        if self.mode == "bar":
            if self.bar is None:
                if self.clock() - self.start < self.after:
                    return
                self.bar = _open_bar(self.n_restarts, n_done, self.stream)
                if self.bar is None:  # no tqdm: the progress as log records
                    self.mode = "log"
            else:
                self.bar.update(n_done - self.bar.n)
            if self.bar is not None:
                if not math.isnan(best_error):  # (NaN: no restart scored yet)
                    self.bar.set_postfix_str(f"best error {best_error:.4g}", refresh=True)
                return
        if n_done > 0:
            logger.info("%d of %d restarts done, best error so far %.6g", n_done, self.n_restarts, best_error)

    def close(self):
        if self.bar is not None:
            self.bar.close()
            self.bar = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False
