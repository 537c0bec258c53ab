"""The command line's errors: a problem with the user's files or data is a CommandError,
printed as one line (exit status 2); a library's error is shortened to one line."""
import importlib
import re


class CommandError(Exception):
    """A problem with the user's files or data: printed as one line, exit status 2."""


def one_line(text):
    """text as one line: XGBoost's stack trace and '[time] file:line: ' prefixes dropped,
    line breaks (scikit-learn's lists of names) and runs of spaces made single spaces."""
    text = str(text).split("Stack trace:")[0]
    text = re.sub(r"\[\d\d:\d\d:\d\d\] [^ ]+:\d+: ", "", text)
    return " ".join(text.split())


def library_error(exc, limit=300):
    """A library's error as one line (its message, else its type), at most limit
    characters (XGBoost may quote a whole model document)."""
    text = one_line(exc) or type(exc).__name__
    return text if len(text) <= limit else text[:limit - 3] + "..."


def optional_import(module, purpose, install=None):
    """An optional dependency, or a CommandError saying how to install it."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise CommandError(f"{purpose} needs {module.split('.')[0]}: pip install "
                           f"{install or module}") from None


def pandas():
    """pandas, which every data file needs."""
    return optional_import("pandas", "reading data files")
