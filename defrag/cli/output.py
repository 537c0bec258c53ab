"""What the commands write: the rules in each format (the same exports as the API),
text to a file or standard output, progress on standard error, and standard output
whose failure (a closed pipe, a full disk) is told apart from a file's."""
import json
import logging
import math
import os
import time

from ..utils.progress import PROGRESS_AFTER_S as FIT_PROGRESS_AFTER_S
from ..utils.progress import progress_to, shows_bar
from .errors import CommandError

FORMATS = ("text", "json", "sql", "markdown", "python")
# progress goes to stderr once a fit has run this long (the API's delay)
PROGRESS_AFTER_S = FIT_PROGRESS_AFTER_S


def render(model, fmt, evaluation=None):
    """The fitted model's rules in one of FORMATS: str(model), or the rules' export; the
    JSON document carries evaluation (a dict of figures, the text's footer) where given."""
    rules = model.rules_
    if fmt == "text":
        return str(model)
    if fmt == "json":
        if evaluation is None:
            return rules.to_json(indent=2)
        document = rules.to_dict()
        document["evaluation"] = evaluation
        return json.dumps(document, indent=2, allow_nan=False, ensure_ascii=False)
    if fmt == "sql":
        return rules.to_sql()
    if fmt == "python":
        return rules.to_python()
    return rules.to_markdown()  # the table (a list) or text block (a tree) of a notebook


def _figure(value):
    return f"{value:.3g}"


def quality_figures(scores, n_rows, against_y):
    """The figures of the footer for the JSON document: n_rows, fidelity and, with a target,
    evaluate's errors (and R^2); a figure that is not a finite number is null."""
    keys = ("error", "model_error", "r2", "model_r2", "fidelity") if against_y else ("fidelity",)
    figures = {"n_rows": int(n_rows)}
    for key in keys:
        if key in scores:
            value = scores[key]
            figures[key] = None if value is None or not math.isfinite(value) else float(value)
    return figures


def quality_footer(scores, n_rows, task, against_y):
    """The one line below the text on how good the explanation is on the rows it was given
    (``evaluate``'s keys): with a target (against_y), the explanation's and the model's
    errors (and R^2 in regression), then the fidelity; without one, the fidelity only."""
    rows = f"On these {n_rows} row{'' if n_rows == 1 else 's'}: "
    if task == "classification":
        fidelity = "fidelity {} (share of rows where the rules give the model's label)"
    else:
        fidelity = "fidelity {} (R^2 of the rules against the model's predictions)"
    parts = []
    if against_y:
        if task == "classification":
            parts.append(f"explanation error {_figure(scores['error'])}")
            if scores.get("model_error") is not None:
                parts.append(f"model error {_figure(scores['model_error'])}")
            parts[-1] += " (misclassification rate)"
        else:
            r2 = "" if scores.get("r2") is None else f" (R^2 {_figure(scores['r2'])})"
            parts.append(f"explanation MSE {_figure(scores['error'])}{r2}")
            if scores.get("model_error") is not None:
                r2 = "" if scores.get("model_r2") is None else f" (R^2 {_figure(scores['model_r2'])})"
                parts.append(f"model MSE {_figure(scores['model_error'])}{r2}")
    if scores.get("fidelity") is not None:
        parts.append(fidelity.format(_figure(scores["fidelity"])))
    elif not against_y:
        return rows + "no quality figure: the model gives no predictions to compare with, and no --target was given"
    line = rows + ", ".join(parts)
    return line if against_y else line + "; --target COL adds the errors against it"


class Progress:
    """Progress of a long fit on stderr, once the fit has run PROGRESS_AFTER_S seconds: the
    fit's own (utils/progress.py, as in the API: one tqdm bar where stderr is a terminal),
    else the defrag logger's lines (each restart, the restarts done and the best error).
    ``verbose``: DefragModel's setting for the fit."""

    def __init__(self, quiet, err):
        self.quiet, self.err = quiet, err
        self.start = time.perf_counter()
        self.handler = self.level = None
        self.verbose = 0 if quiet else "auto"
        self.place = None

    def elapsed(self):
        return time.perf_counter() - self.start

    def __enter__(self):
        if self.quiet:
            return self
        self.place = progress_to(self.err, PROGRESS_AFTER_S)
        self.place.__enter__()
        if not shows_bar(self.verbose, self.err):
            self.handler = logging.StreamHandler(self.err)
            self.handler.setFormatter(logging.Formatter("[defrag %(elapsed).0fs] %(message)s"))

            def late(record):
                record.elapsed = self.elapsed()
                return record.elapsed >= PROGRESS_AFTER_S

            self.handler.addFilter(late)
            logger = logging.getLogger("defrag")
            logger.addHandler(self.handler)
            self.level = logger.level
            logger.setLevel(logging.INFO)
        return self

    def __exit__(self, *exc):
        if self.handler is not None:
            logger = logging.getLogger("defrag")
            logger.removeHandler(self.handler)
            logger.setLevel(self.level)
        if self.place is not None:
            self.place.__exit__(*exc)
        return False

    def say(self, message):
        if not self.quiet and self.elapsed() >= PROGRESS_AFTER_S:
            print(f"[defrag {self.elapsed():.0f}s] {message}", file=self.err)


def write_text(text, path, out):
    if path is None:
        print(text, file=out)
        return
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text if text.endswith("\n") else text + "\n")
    except OSError as exc:
        raise CommandError(f"cannot write {path}: {exc.strerror or exc}") from None


class OutputError(Exception):
    """Standard output did not take the output (a closed pipe, a full disk): args[0] is
    the OSError."""


class Output:
    """The output stream, its write errors raised as OutputError: the commands' other
    OSErrors are a file's, which they report themselves."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, text):
        try:
            return self._stream.write(text)
        except OSError as exc:
            raise OutputError(exc) from None

    def flush(self):
        try:
            self._stream.flush()
        except OSError as exc:
            raise OutputError(exc) from None

    def __getattr__(self, name):
        return getattr(self._stream, name)


def say(err, line):
    """line on err, unless err cannot take it either."""
    try:
        print(line, file=err)
        err.flush()
    except (OSError, ValueError):  # (ValueError: a closed stream)
        pass


def silence(stream):
    """stream's file descriptor pointed at /dev/null: the interpreter flushes standard output
    at exit, and would report the same failure again in a stack trace."""
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation: a StringIO
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)
