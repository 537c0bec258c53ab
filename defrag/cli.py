"""The ``defrag`` command line (also ``python -m defrag``).

    defrag explain MODEL DATA    rules that explain a fitted model on a data file
    defrag predict RULES DATA    score a data file with rules saved as JSON
    defrag demo                  a random forest on a bundled data set, simplified
    defrag config                how the compiled kernels were built

MODEL: an XGBoost model file (.json or .ubj), a LightGBM model text file, a CatBoost model
file (.cbm), or a scikit-learn ensemble (or Pipeline) saved with skops (.skops); a pickle
or joblib file only with
--allow-pickle, since unpickling runs any code the file holds. DATA: CSV, or Parquet with
pyarrow. Each file is read once (a pipe works). Every error with the user's files is one
line on stderr and exit status 2; standard output that fails (a full disk, a closed pipe)
one line and 1; Ctrl-C one line and 130.
"""
import argparse
import csv
import importlib
import io
import json
import logging
import os
import re
import shutil
import stat
import subprocess
import sys
import textwrap
import time
import warnings

import numpy as np

from .model_files import (
    ModelFileError,
    check_lightgbm_text,
    check_xgboost_json,
    check_xgboost_model,
    read_ubjson,
)
from .rules import rule_count_text
from .utils.progress import PROGRESS_AFTER_S as FIT_PROGRESS_AFTER_S
from .utils.progress import progress_to, shows_bar

FORMATS = ("text", "json", "sql", "markdown", "python")
DATASETS = {
    "breast_cancer": ("classification", "load_breast_cancer"),
    "wine": ("classification", "load_wine"),
    "diabetes": ("regression", "load_diabetes"),
}
# progress goes to stderr once a fit has run this long (the API's delay)
PROGRESS_AFTER_S = FIT_PROGRESS_AFTER_S


class CommandError(Exception):
    """A problem with the user's files or data: printed as one line, exit status 2."""


def _one_line(text):
    """text as one line: XGBoost's stack trace and '[time] file:line: ' prefixes dropped,
    line breaks (scikit-learn's lists of names) and runs of spaces made single spaces."""
    text = str(text).split("Stack trace:")[0]
    text = re.sub(r"\[\d\d:\d\d:\d\d\] [^ ]+:\d+: ", "", text)
    return " ".join(text.split())


def _whole(text):
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None


def _positive_int(text):
    value = _whole(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _n_jobs(text):
    value = _whole(text)
    if value == 0:
        raise argparse.ArgumentTypeError("must be a positive number of threads, or -1 for all cores")
    return value


# ------------------------------------------------------------------------ files
def _pandas():
    try:
        import pandas
    except ImportError:  # pragma: no cover - depends on the installation
        raise CommandError("reading data files needs pandas: pip install pandas") from None
    return pandas


# first bytes of the compressed files pandas reads (it guesses from a file's name, which a
# pipe does not have), and their pandas names
_COMPRESSED = ((b"\x1f\x8b", "gzip"), (b"\xfd7zXZ\x00", "xz"), (b"\x28\xb5\x2f\xfd", "zstd"),
               (b"PK\x03\x04", "zip"))


def _compression(data):
    if data[:3] == b"BZh" and data[4:10] == b"1AY&SY":  # bzip2: its magic, a level, a block header
        return "bz2"
    return next((name for magic, name in _COMPRESSED if data.startswith(magic)), None)


class DataFile:
    """A data file read once: its bytes, parsed in memory. A named pipe or a process
    substitution (``<(zcat d.csv.gz)``) can be read only once, and a second open of a FIFO
    waits for a writer that never comes; so the columns the model reads as text are
    parsed again from the same bytes, not from the path. Parquet is recognised by its
    first bytes (or a .parquet / .pq name), a compressed CSV by its first bytes."""

    def __init__(self, path):
        self.path = path
        self.data = _read_file(path, "data file")
        self.parquet = self.data.startswith(b"PAR1") or path.lower().endswith((".parquet", ".pq"))
        self.compression = None if self.parquet else _compression(self.data)

    def _parse(self, **options):
        pd = _pandas()
        source = io.BytesIO(self.data)
        try:
            if self.parquet:
                return pd.read_parquet(source)
            return pd.read_csv(source, compression=self.compression, **options)
        except ImportError as exc:
            raise CommandError(f"reading Parquet needs pyarrow: pip install \"defrag[parquet]\" ({exc})") from None
        except Exception as exc:  # noqa: BLE001 - whatever pandas / pyarrow refuse is the file's
            raise CommandError(f"cannot read {self.path} as {'Parquet' if self.parquet else 'CSV'}: "
                               f"{_library_error(exc)}") from None

    def frame(self):
        """A DataFrame of the file (pandas' guess of each CSV column's type)."""
        return self._parse()

    def cells(self, columns):
        """A DataFrame of the CSV's columns named, every cell the text written there (no
        missing value: "" and "NA" as they are); None for Parquet, whose columns keep the
        types they were written with, or when no column is named."""
        if self.parquet or not columns:
            return None
        return self._parse(dtype=str, keep_default_na=False, usecols=list(dict.fromkeys(columns)))


def write_data(frame, path, out, formulas="escape"):
    """frame as CSV on out (path None) or in path (Parquet when it ends in .parquet or
    .pq); a CSV's cells that a spreadsheet would run as formulas are escaped unless
    formulas is 'keep' (escape_formulas)."""
    parquet = path is not None and path.lower().endswith((".parquet", ".pq"))
    if not parquet and formulas == "escape":
        frame = escape_formulas(frame)
    # pandas leaves a carriage return inside a cell unquoted where lines end in \n, and a
    # reader then ends the row there: every field is quoted where a cell holds one
    options = {} if parquet or not _holds_carriage_return(frame) else {"quoting": csv.QUOTE_ALL}
    if path is None:
        frame.to_csv(out, index=False, **options)
        return
    try:
        if parquet:
            frame.to_parquet(path, index=False)
        else:
            frame.to_csv(path, index=False, **options)
    except ImportError as exc:
        raise CommandError(f"writing Parquet needs pyarrow ({exc})") from None
    except OSError as exc:
        raise CommandError(f"cannot write {path}: {exc.strerror or exc}") from None


# A text cell that starts with one of these is a formula to a spreadsheet (Excel, LibreOffice,
# Google Sheets), which runs it when the file is opened: OWASP's list for CSV injection.
# A cell that is a plain number ("-1.5", "+3") reads as that number and stays as it is.
FORMULA_START = r"^[=+\-@\t\r]"
PLAIN_NUMBER = r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?"


def _text_columns(frame):
    """Positions of frame's columns that may hold text (object, string, categorical)."""
    pd = _pandas()
    return [j for j, dtype in enumerate(frame.dtypes)
            if dtype == object or dtype.name == "category" or pd.api.types.is_string_dtype(dtype)]


def _cells(values):
    """values (one column, any cells) as an object Series, and its .str accessor (None
    where no cell is text: pandas refuses the accessor there)."""
    cells = _pandas().Series(np.asarray(values, dtype=object), dtype=object)
    try:
        return cells, cells.str
    except AttributeError:
        return cells, None


def escape_formulas(frame):
    """frame with every text cell (and column name) that a spreadsheet would read as a
    formula prefixed with a single quote (OWASP's advice for CSV files: the quote makes
    the cell text, and a spreadsheet shows it without the quote)."""
    out = frame.copy()
    for j in _text_columns(out):
        out.isetitem(j, _escaped(out.iloc[:, j]))
    out.columns = list(_escaped([str(c) for c in out.columns]))
    return out


def _escaped(values):
    """values with the text cells that start a formula quoted; values itself where none does."""
    cells, text = _cells(values)
    if text is None:
        return values
    risky = (text.contains(FORMULA_START, na=False) & ~text.fullmatch(PLAIN_NUMBER, na=False)).to_numpy(bool)
    if not risky.any():
        return values
    cells[risky] = "'" + cells[risky]
    return cells.to_numpy()


def _holds_carriage_return(frame):
    for values in [[str(c) for c in frame.columns]] + [frame.iloc[:, j] for j in _text_columns(frame)]:
        _, text = _cells(values)
        if text is not None and text.contains("\r", regex=False, na=False).any():
            return True
    return False


# ------------------------------------------------------------------ model files
# A model file is read once, recognised by its first bytes (not its name), and checked
# before a library's loader sees it: LightGBM's and XGBoost's loaders trust their input
# and can take the process down on a file cut short or nested too deeply
# (defrag.model_files). A pickle runs code when loaded, so it loads only on request.
#
# MODEL_FORMATS: (name, test of (path, bytes), loader(path, bytes) -> (model, library)),
# first match wins. A new format is one test, one loader and one entry.

def _is_lightgbm_text(path, data):
    return data.startswith((b"tree\n", b"tree\r\n"))


def _is_json(path, data):
    head = data[:64].lstrip(b"\xef\xbb\xbf \t\r\n")
    return head.startswith(b"{") and head[1:].lstrip(b" \t\r\n")[:1] in (b'"', b"}")


def _is_ubjson(path, data):
    # XGBoost writes an object whose first key has an int64 length ('L')
    return data.startswith(b"{L") or (path.lower().endswith(".ubj") and data.startswith(b"{"))


def _is_zip(path, data):
    return data.startswith((b"PK\x03\x04", b"PK\x05\x06"))


def _checked(check, data, path, what):
    """check(data), its ModelFileError as one line naming the file."""
    try:
        return check(data)
    except ModelFileError as exc:
        raise CommandError(f"cannot read {path} as {what}: {exc}") from None


def _library_error(exc, limit=300):
    """A library's error as one line (its message, else its type), at most limit
    characters (XGBoost may quote a whole model document)."""
    text = _one_line(exc) or type(exc).__name__
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _import(module, purpose, install=None):
    try:
        return importlib.import_module(module)
    except ImportError:
        raise CommandError(f"{purpose} needs {module.split('.')[0]}: pip install "
                           f"{install or module}") from None


def _load_lightgbm_text(path, data):
    text = _checked(check_lightgbm_text, data, path, "a LightGBM model")
    lgb = _import("lightgbm", "a LightGBM model file", "\"defrag[lightgbm]\"")
    try:
        return lgb.Booster(model_str=text), "lightgbm"
    except Exception as exc:  # noqa: BLE001 - LightGBMError and its Python side's errors
        raise CommandError(f"LightGBM cannot load {path}: {_library_error(exc)}") from None


def _load_xgboost(path, doc, raw):
    _checked(check_xgboost_model, doc, path, "an XGBoost model")
    xgb = _import("xgboost", "an XGBoost model file", "\"defrag[xgboost]\"")
    booster = xgb.Booster()
    try:
        booster.load_model(bytearray(raw))  # the bytes checked, not the file again
    except Exception as exc:  # noqa: BLE001 - XGBoostError (its message may be binary)
        raise CommandError(f"XGBoost cannot load {path}: {_library_error(exc)}") from None
    return booster, "xgboost"


def _load_json(path, data):
    doc, raw = _checked(check_xgboost_json, data, path, "an XGBoost JSON model")
    if isinstance(doc, dict) and "rules" in doc and ("schema" in doc or "schema_version" in doc):
        raise CommandError(f"{path} is a defrag rules file, not a model: score data with it by "
                           "'defrag predict RULES DATA'")
    if not isinstance(doc, dict) or "learner" not in doc:
        raise CommandError(f"{path} is JSON but not an XGBoost model (it has no 'learner')")
    return _load_xgboost(path, doc, raw)


def _load_ubjson(path, data):
    doc = _checked(read_ubjson, data, path, "an XGBoost UBJSON model")
    if not isinstance(doc, dict) or "learner" not in doc:
        raise CommandError(f"{path} is UBJSON but not an XGBoost model (it has no 'learner')")
    return _load_xgboost(path, doc, data)


# Types a skops file of a supported scikit-learn model holds beyond those skops trusts by
# default (numpy arrays, scikit-learn estimators and losses): the trees, and the
# check_array partial of HistGradientBoosting's categorical preprocessing.
SKOPS_TRUSTED = (
    "sklearn.tree._tree.Tree",
    "sklearn.ensemble._hist_gradient_boosting.predictor.TreePredictor",
    "functools.partial",
    "sklearn.utils.validation.check_array",
)


def _load_skops(path, data):
    sio = _import("skops.io", "a skops file", "\"defrag[skops]\"")
    try:
        untrusted = sorted(set(sio.get_untrusted_types(data=data)) - set(SKOPS_TRUSTED))
    except Exception as exc:  # noqa: BLE001 - a zip that is not a skops file, or a damaged one
        raise CommandError(f"cannot read {path} as a skops file: {_library_error(exc)}") from None
    if untrusted:
        listed = ", ".join(untrusted[:5]) + (f" and {len(untrusted) - 5} more" if len(untrusted) > 5 else "")
        raise CommandError(f"{path} holds types defrag does not trust ({listed}); defrag loads skops "
                           "files of scikit-learn tree ensembles")
    try:
        model = sio.loads(data, trusted=list(SKOPS_TRUSTED))
    except Exception as exc:  # noqa: BLE001 - any failure to rebuild is the file's
        raise CommandError(f"cannot load {path} as a skops file: {_library_error(exc)}") from None
    return model, _library_of_object(model)


# CatBoost's binary model format (.cbm) starts with these bytes
CATBOOST_MAGIC = b"CBM1"
# CatBoost's loader trusts its input: a damaged .cbm can make it run without end, so the
# file is first loaded (and exported as the JSON defrag reads) by a child process with a
# time and memory limit; only a file that passed is loaded here.
CATBOOST_CHECK = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))
import catboost, tempfile, os
model = catboost.CatBoost().load_model(blob=sys.stdin.buffer.read())
with tempfile.TemporaryDirectory() as tmp:
    model.save_model(os.path.join(tmp, "model.json"), format="json")
"""
CATBOOST_CHECK_SECONDS = 120


def _is_catboost(path, data):
    return data.startswith(CATBOOST_MAGIC)


def _load_catboost(path, data):
    catboost = _import("catboost", "a CatBoost model file", "\"defrag[catboost]\"")
    try:
        check = subprocess.run([sys.executable, "-c", CATBOOST_CHECK], input=data, capture_output=True,
                               timeout=CATBOOST_CHECK_SECONDS)
    except subprocess.TimeoutExpired:
        raise CommandError(f"cannot read {path} as a CatBoost model: CatBoost's loader ran for over "
                           f"{CATBOOST_CHECK_SECONDS} s on it (a damaged file?)") from None
    if check.returncode != 0:
        lines = [line for line in check.stderr.decode(errors="replace").splitlines() if line.strip()]
        raise CommandError(f"cannot read {path} as a CatBoost model: "
                           f"{lines[-1] if lines else f'its loader failed (exit {check.returncode})'}")
    try:
        return catboost.CatBoost().load_model(blob=data), "catboost"  # the bytes checked
    except Exception as exc:  # noqa: BLE001 - CatBoostError
        raise CommandError(f"CatBoost cannot load {path}: {_library_error(exc)}") from None


MODEL_FORMATS = (
    ("LightGBM model text", _is_lightgbm_text, _load_lightgbm_text),
    ("XGBoost JSON", _is_json, _load_json),
    ("XGBoost UBJSON", _is_ubjson, _load_ubjson),
    ("skops", _is_zip, _load_skops),
    ("CatBoost", _is_catboost, _load_catboost),
)

# first bytes of a pickle (protocol 2 and later) and of joblib's compressed files
_PICKLE_MAGIC = (b"\x80", b"\x78\x01", b"\x78\x5e", b"\x78\x9c", b"\x78\xda", b"\x1f\x8b", b"BZh",
                 b"\xfd7zXZ", b"\x5d\x00\x00", b"\x04\x22\x4d\x18")


def _library_of_object(model):
    """'xgboost' or 'lightgbm' for those libraries' raw Boosters (no scikit-learn
    predict), else 'sklearn' (DefragModel asks the model for its predictions)."""
    kind = type(model)
    if kind.__name__ == "Booster" and (kind.__module__ or "").startswith(("xgboost", "lightgbm")):
        return kind.__module__.split(".")[0]
    return "sklearn"


def _load_pickle(path, data):
    joblib = _import("joblib", "a pickle or joblib file")
    try:
        model = joblib.load(io.BytesIO(data))  # pickles too
    except Exception as exc:  # noqa: BLE001 - any unpickling failure is the file's
        raise CommandError(f"cannot load {path} as a pickle or joblib file: "
                           f"{type(exc).__name__}: {exc}") from None
    return model, _library_of_object(model)


def _check_path(path, what):
    """A one-line error unless path is a file or a pipe (a device such as /dev/zero would
    be read without end)."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise CommandError(f"no such {what}: {path}") from None
    except OSError as exc:
        raise CommandError(f"cannot read {path}: {exc.strerror or exc}") from None
    if stat.S_ISDIR(mode):
        raise CommandError(f"{path} is a directory, not a {what}")
    if not (stat.S_ISREG(mode) or stat.S_ISFIFO(mode)):
        raise CommandError(f"{path} is not a regular file (a device or socket), not a {what}")


def _read_file(path, what):
    """The bytes of a file, or a one-line error for a path that is not a readable file."""
    _check_path(path, what)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as exc:
        raise CommandError(f"cannot read {path}: {exc.strerror or exc}") from None
    if not data:
        raise CommandError(f"{path} is empty")
    return data


def _not_a_model(path, data):
    """The one-line reason a file that no loader took is refused."""
    if data.startswith(_PICKLE_MAGIC):
        return (f"{path} is a pickle or joblib file; loading one runs any code it holds, so defrag "
                "loads it only with --allow-pickle (give it only for files you trust; save "
                "scikit-learn models with skops as .skops to need no flag)")
    hint = {".ubj": "not UBJSON (an XGBoost .ubj model starts with '{L')",
            ".json": "not JSON text of an XGBoost model",
            ".txt": "not a LightGBM model text (which starts with the line 'tree')",
            ".skops": "not a skops file (a zip archive)",
            ".cbm": "not a CatBoost model (which starts with CBM1)"}.get(os.path.splitext(path)[1].lower())
    what = hint or "not a model file defrag reads"
    return (f"{path} is {what}; defrag reads XGBoost JSON or UBJSON, LightGBM model text, CatBoost "
            ".cbm and skops files, and pickle or joblib files only with --allow-pickle")


def load_model(path, allow_pickle=False):
    """(model, library) of a model file: 'xgboost' or 'lightgbm' for a raw Booster, else
    'sklearn'. A pickle or joblib file is loaded only when allow_pickle is true."""
    return load_model_bytes(_read_file(path, "model file"), path, allow_pickle)


def load_model_bytes(data, path, allow_pickle=False):
    """load_model of a file's bytes (path names it in messages and gives its extension)."""
    for _, accepts, load in MODEL_FORMATS:
        if accepts(path, data):
            return load(path, data)
    if allow_pickle:
        return _load_pickle(path, data)
    raise CommandError(_not_a_model(path, data))


def model_source(model, path):
    """The defrag source of a loaded model, its trees read and checked (an index outside
    a tree is an error here, before any library predicts with it); an unsupported or
    unfitted model is a one-line error."""
    from .sources import adapt  # the readers import scikit-learn: loaded by the commands that need them

    try:
        source = adapt(model)
        source.trees()
        source.encoding  # noqa: B018 - read (and checked) now, not while predicting
    except (TypeError, ValueError) as exc:  # NotFittedError is a ValueError
        raise CommandError(f"{path}: {exc}") from None
    except (IndexError, KeyError, AttributeError, OverflowError) as exc:  # a malformed model
        raise CommandError(f"{path}: a malformed model ({type(exc).__name__}: {_library_error(exc)})") from None
    return source


def model_columns(model, library):
    """The model's feature names, when it stores real ones (not LightGBM's Column_0...,
    nor CatBoost's 0, 1, ... of a model trained on an array)."""
    if library == "catboost":
        names = [str(n) for n in (model.feature_names_ or [])]
        return None if names == [str(i) for i in range(len(names))] else names
    if library == "xgboost":
        return model.feature_names
    if library == "lightgbm":
        names = model.feature_name()
        return None if all(n == f"Column_{i}" for i, n in enumerate(names)) else names
    from .sources import unwrap  # (the readers import scikit-learn; see model_source)

    names = getattr(unwrap(model), "feature_names_in_", None)
    if names is None:
        names = getattr(model, "feature_names_in_", None)
    return None if names is None else [str(n) for n in names]


def match_columns(frame, names, n_features, command, err, say_extra=True):
    """The columns of frame the model (or the rules, for predict) reads, in its order: by
    name when it has names (a missing one is an error naming it, extra ones are ignored,
    and said so when say_extra), else by position with a warning."""
    reader, s_ = ("the rules", "") if command == "predict" else ("the model", "s")  # verbs agree
    if names is not None:
        names = [str(n) for n in names]
        have = set(map(str, frame.columns))
        missing = [n for n in names if n not in have]
        if missing:
            more = f" (and {len(missing) - 1} more: {', '.join(missing[1:6])})" if len(missing) > 1 else ""
            spaced = [c for c in map(str, frame.columns) if c.replace(" ", "_") == missing[0]]
            hint = (f"; LightGBM writes spaces in names as '_', the data have {spaced[0]!r}"
                    if spaced else "")
            raise CommandError(f"the data have no column {missing[0]!r}, a feature of {reader}"
                               f"{more}{hint}")
        extra = [c for c in map(str, frame.columns) if c not in set(names)]
        if extra and say_extra:
            listed = ", ".join(extra[:8]) + (f" and {len(extra) - 8} more" if len(extra) > 8 else "")
            print(f"defrag {command}: note: ignoring {len(extra)} data column"
                  f"{'s' if len(extra) > 1 else ''} {reader} do{'es' if s_ else ''} "
                  f"not use: {listed}", file=err)
        frame = frame.copy()
        frame.columns = [str(c) for c in frame.columns]
        return frame[names]
    if n_features is not None and frame.shape[1] != n_features:
        raise CommandError(f"{reader} store{s_} no feature names to match the data's columns by, and "
                           f"{reader} read{s_} {n_features} features where the data have "
                           f"{frame.shape[1]} columns")
    print(f"defrag {command}: warning: {reader} store{s_} no feature names; the data's columns are "
          f"taken by position ({', '.join(map(str, frame.columns[:5]))}"
          f"{', ...' if frame.shape[1] > 5 else ''})", file=err)
    return frame


def _categorical_columns(model, library, source):
    """{column index: categories or None} of the features the model splits by category."""
    try:
        return _model_categories(model, library, source)
    except (TypeError, ValueError, KeyError, AttributeError) as exc:  # a malformed dump
        raise CommandError(f"the model's categorical features: {_library_error(exc)}") from None


def _model_categories(model, library, source):
    if library == "lightgbm":  # categorical features list their categories in feature_infos
        dump = model.dump_model()
        infos = dump.get("feature_infos") or {}
        names = dump.get("feature_names") or []
        flagged = [j for j, n in enumerate(names) if isinstance(infos.get(n), dict) and infos[n].get("values")]
        cats = dump.get("pandas_categorical") or []
        return {j: (cats[i] if i < len(cats) else None) for i, j in enumerate(flagged)}
    enc = source.encoding
    return {j: (None if enc.categories[j] is None else list(enc.categories[j]))
            for j in np.flatnonzero(enc.categorical)}


# The cells pandas reads as missing by default (read_csv's na_values): a text category
# column is read as written, and such a cell is missing unless it is one of the model's
# categories ("NA" for North America)
CSV_NA = frozenset(["", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND",
                    "1.#QNAN", "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null"])


def written_columns(frame, categorical, text_labels=False):
    """Names of frame's columns to read as written in a CSV (DataFile.cells): the
    categorical features whose categories the model stores as text, and with text_labels
    (CatBoost, which reads a category as its text) every categorical feature."""
    return [frame.columns[j] for j, cats in (categorical or {}).items()
            if text_labels or (cats is not None and all(isinstance(c, str) for c in cats))]


def prepare_frame(frame, categorical=None, raw=None, for_library=False, text_labels=False):
    """frame's categorical features as the model reads them (categorical: {column index:
    the model's categories, or None where it reads numbers as category codes}).

    * Columns in raw (a CSV's cells as written, written_columns): pandas' guess reads "07"
      as 7 and "NA" as missing, which match neither a text category nor what CatBoost
      hashes. With text_labels (CatBoost: a category is its text, and CatBoost has no
      missing category) every cell is a label, "" and "NA" included; otherwise a
      missing-looking cell (CSV_NA) is missing unless it is one of the model's categories.
    * Categories stored by the model: the values as objects, which the encoding looks up
      by label as it does in memory (an unseen label as the model takes it); for_library
      (the model's library predicts the frame itself), a pandas categorical of those
      categories, where a label outside them is an error.
    * Category codes (none stored): numbers stay numbers (a pandas categorical's codes
      would be the values' positions); text becomes a pandas categorical.
    * Other text columns become pandas categoricals (the encoding refuses them by name)."""
    pd = _pandas()
    frame = frame.copy()
    categorical = categorical or {}
    for j, col in enumerate(frame.columns):
        values = frame[col]
        cats = categorical.get(j)
        written = raw is not None and col in raw.columns
        if j not in categorical:  # not a categorical feature
            if values.dtype == object or pd.api.types.is_string_dtype(values.dtype):
                frame[col] = values.astype("category")
        elif cats is None:
            if written:  # CatBoost's categories before it is bound: the cells' text
                frame[col] = raw[col].astype(object)
            elif values.dtype.kind not in "biuf" and values.dtype.name != "category":
                frame[col] = values.astype("category")
        else:
            labels = _as_labels(raw[col] if written else values, cats, written and not text_labels)
            frame[col] = _library_categories(labels, cats, col) if for_library else labels
    return frame


def _as_labels(values, categories, csv_missing=False):
    """values (a column as read) as objects comparable with the model's categories: text
    where the categories are text (csv_missing: a missing-looking cell of the CSV missing
    unless it is a category), else as read (a whole float equals its int)."""
    if all(isinstance(c, str) for c in categories):
        missing = values.isna()
        text = values.astype(str).where(~missing)
        if not csv_missing:
            return text.astype(object)
        na = text.isin(CSV_NA) & ~text.isin(categories)
        return text.where(~na).astype(object)
    return values.astype(object).where(values.notna(), np.nan)


def _no_missing_category(X, categorical, path):
    """CatBoost has no missing category (it refuses NaN in a categorical feature): a missing
    cell there (a Parquet null; a CSV's cells are all labels) is a CommandError naming the
    column and the first such row."""
    for j in categorical:
        col = X.columns[j]
        missing = np.flatnonzero(X[col].isna().to_numpy())
        if missing.size:
            raise CommandError(
                f"{path}: column {col!r} is a categorical feature of the CatBoost model and {missing.size} of "
                f"its cells {'is' if missing.size == 1 else 'are'} missing (the first in data row "
                f"{missing[0] + 1}); CatBoost reads a category as its text and has no missing category: "
                "give those cells a label (in a CSV an empty cell or NA is read as that text)")


def _library_categories(labels, categories, col):
    """labels as a pandas categorical of the model's categories, for the library's own
    predict; a label outside them is a CommandError naming it (pandas would read it as
    missing)."""
    pd = _pandas()
    try:
        cat = pd.Categorical(labels, categories=categories)
    except (TypeError, ValueError) as exc:
        raise CommandError(f"the model's categories of column {col!r}: {exc}") from None
    unseen = labels.notna().to_numpy() & np.asarray(pd.isna(cat))
    if unseen.any():
        shown = ", ".join(map(repr, list(dict.fromkeys(labels[unseen].tolist()))[:5]))
        raise CommandError(f"column {col!r} has categories the model was not trained with: {shown}")
    return cat


def own_predictions(model, library, X):
    """The model's predictions on X (class labels or values), for fitting rules to them;
    what the library refuses in X is a one-line error."""
    try:
        return _own_predictions(model, library, X)
    except Exception as exc:  # noqa: BLE001 - XGBoostError, LightGBMError, their ValueErrors
        name = {"xgboost": "XGBoost", "lightgbm": "LightGBM"}[library]
        raise CommandError(f"{name} cannot predict the data: {_library_error(exc)}") from None


def _own_predictions(model, library, X):
    if library == "xgboost":
        import xgboost as xgb

        objective = json.loads(model.save_config())["learner"]["objective"]["name"]
        p = model.predict(xgb.DMatrix(X, enable_categorical=True))
        if objective.startswith("binary:"):
            return (p > (0.0 if objective == "binary:logitraw" else 0.5)).astype(int)
        if objective.startswith("multi:"):
            return p.astype(int) if p.ndim == 1 else np.argmax(p, axis=1)
        return p
    if library == "lightgbm":
        objective = (str(model.dump_model().get("objective") or "").split() or [""])[0]
        p = model.predict(X)
        if objective in ("binary", "cross_entropy", "xentropy"):
            return (p > 0.5).astype(int)
        if objective.startswith("multiclass"):
            return np.argmax(p, axis=1)
        return p
    return None  # a scikit-learn model: DefragModel asks it


# ---------------------------------------------------------------------- outputs
def render(model, fmt):
    rules = model.rules_
    if fmt == "text":
        return str(model)
    if fmt == "json":
        return rules.to_json(indent=2)
    if fmt == "sql":
        return rules.to_sql()
    if fmt == "python":
        return rules.to_python()
    return rules.to_markdown()  # the table of a RuleSet in a notebook (rules/display.py)


class _Progress:
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


def _write_text(text, path, out):
    if path is None:
        print(text, file=out)
        return
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text if text.endswith("\n") else text + "\n")
    except OSError as exc:
        raise CommandError(f"cannot write {path}: {exc.strerror or exc}") from None


# --------------------------------------------------------------------- commands
def explain(args, out, err):
    """Fit rules to a model on a data file and write them."""
    from . import DefragMemoryError, DefragModel  # scikit-learn: only when a command fits

    model, library = load_model(args.model, args.allow_pickle)
    source = model_source(model, args.model)
    data = DataFile(args.data)  # read once: DATA may be a pipe
    frame = data.frame()
    y = None
    if args.target is not None:
        if args.target not in frame.columns:
            raise CommandError(f"the data have no column {args.target!r} (--target)")
        y = frame[args.target].to_numpy()
        frame = frame.drop(columns=[args.target])
    columns = model_columns(model, library)
    if args.target is not None and columns is not None and args.target in list(columns):
        raise CommandError(f"--target {args.target!r} is a feature of the model: the target must be "
                           "another column")
    frame = match_columns(frame, columns, source.n_features, "explain", err, say_extra=not args.quiet)
    categorical = _categorical_columns(model, library, source)
    text_labels = bool(getattr(source.encoding, "text_labels", False))  # CatBoost's
    raw = data.cells(written_columns(frame, categorical, text_labels))
    del data  # (its bytes: the fit needs the memory more)
    # an XGBoost or LightGBM model reads pandas categoricals of its categories (its own
    # predict, for y=None, and LightGBM's check of its pandas_categorical)
    X = prepare_frame(frame, categorical, raw, for_library=library != "sklearn", text_labels=text_labels)
    if library == "catboost":
        _no_missing_category(X, categorical, args.data)
    if y is None and library != "sklearn":
        y = own_predictions(model, library, X)  # a raw Booster has no scikit-learn predict
    with _Progress(args.quiet, err) as progress:
        dm = DefragModel(model, max_rules=args.max_rules, method=args.method, n_rules=args.n_rules,
                         n_restarts=args.n_restarts or "auto", n_jobs=args.n_jobs, random_state=args.seed,
                         verbose=progress.verbose)
        try:
            with warnings.catch_warnings():
                # a model without names read by position was said so above
                warnings.filterwarnings("ignore", "X has feature names, but", UserWarning)
                dm.fit(X, y)
        except (TypeError, ValueError, DefragMemoryError) as exc:
            raise CommandError(str(exc)) from None
        progress.say(f"{dm.n_rules_} rules fitted in {progress.elapsed():.1f} s")
    _write_text(render(dm, args.format), args.out, out)
    return 0


# what a rules file that is not one may be instead, by its first bytes
_NOT_RULES = (
    (_is_lightgbm_text, "a LightGBM model"),
    (lambda path, data: data.startswith(b"{L"), "an XGBoost UBJSON model"),
    (_is_zip, "a zip archive (a skops model?)"),
    (lambda path, data: data.startswith(_PICKLE_MAGIC), "a pickle or joblib file"),
)


def read_rules(path):
    """The RuleSet of a rules file written by 'defrag explain --format json'. A file that
    is not JSON text (a model, a pickle, binary) is refused before any parsing."""
    from . import RuleSet  # (defrag's estimators stay unloaded when rules only score)

    data = _read_file(path, "rules file")
    for accepts, what in _NOT_RULES:
        if accepts(path, data):
            raise CommandError(f"{path} is {what}, not a defrag rules file: models go to 'defrag "
                               "explain', rules it writes with --format json to 'defrag predict'")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CommandError(f"{path} is not a defrag rules file: not UTF-8 text (byte {exc.start})") from None
    if "\0" in text or not text.lstrip("\ufeff \t\r\n").startswith("{"):
        raise CommandError(f"{path} is not a defrag rules file: not JSON text (a rules file is "
                           "a JSON object)")
    text = text.lstrip("\ufeff")
    try:
        doc = json.loads(text)
    except RecursionError:
        raise CommandError(f"{path} is not a defrag rules file: JSON nested too deeply") from None
    except ValueError as exc:
        raise CommandError(f"{path} is not a defrag rules file: not JSON ({exc})") from None
    if isinstance(doc, dict) and "learner" in doc:
        raise CommandError(f"{path} is an XGBoost model, not a defrag rules file: models go to "
                           "'defrag explain', rules it writes with --format json to 'defrag predict'")
    try:
        return RuleSet.from_json(text)
    except (ValueError, TypeError, KeyError, IndexError, OverflowError, RecursionError) as exc:
        raise CommandError(f"{path} is not a valid defrag rules file: {type(exc).__name__}: {exc}") from None


def predict(args, out, err):
    """Score a data file with rules saved by ``defrag explain --format json``."""
    rules = read_rules(args.rules)
    data = DataFile(args.data)  # read once: DATA may be a pipe
    frame = data.frame()
    n_features = None if rules.feature_names is None else len(rules.feature_names)
    # the output keeps every column of the data, so unused ones are no news
    X = match_columns(frame, rules.feature_names_in, n_features, "predict", err, say_extra=False)
    enc = rules.encoding
    categorical = {} if enc is None else {
        j: (None if enc.categories[j] is None else list(enc.categories[j]))
        for j in np.flatnonzero(enc.categorical)}
    text_labels = bool(getattr(enc, "text_labels", False))
    raw = data.cells(written_columns(X, categorical, text_labels))
    del data
    X = prepare_frame(X, categorical, raw, text_labels=text_labels)
    try:
        pred = rules.predict(X)
    except (TypeError, ValueError) as exc:
        raise CommandError(str(exc)) from None
    result = frame.copy()
    for col in () if raw is None else raw.columns:  # their cells as written ("07", not 7)
        result[col] = raw[col]
    name = args.column
    while name in result.columns:
        name = "_" + name
    result[name] = pred
    write_data(result, args.out, out, args.csv_formulas)
    return 0


def demo(args, out, err):
    """Train a random forest on a bundled data set, simplify it, print the rules."""
    # scikit-learn and the estimators load with the command that needs them (`defrag
    # predict` and `--help` start without them)
    import sklearn.datasets
    from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
    from sklearn.model_selection import train_test_split

    from . import DefragModel

    task, loader = DATASETS[args.dataset]
    data = getattr(sklearn.datasets, loader)()  # plain arrays: pandas is optional
    X, y = data.data, data.target
    names = [str(n) for n in data.feature_names]
    if task == "classification" and hasattr(data, "target_names"):
        y = np.asarray(data.target_names)[y]
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.5, random_state=args.seed)
    Forest = RandomForestClassifier if task == "classification" else RandomForestRegressor
    t0 = time.perf_counter()
    forest = Forest(n_estimators=args.n_trees, random_state=args.seed, n_jobs=-1).fit(Xtr, ytr)
    forest_seconds = time.perf_counter() - t0

    with _Progress(args.quiet, err) as progress:
        t0 = time.perf_counter()
        model = DefragModel(forest, max_rules=args.max_rules, n_restarts=args.n_restarts,
                            feature_names=names, random_state=args.seed, n_jobs=args.n_jobs,
                            verbose=progress.verbose).fit(Xtr)
        defrag_seconds = time.perf_counter() - t0
    ev = model.evaluate(Xte, yte)

    if task == "classification":
        forest_error = float(np.mean(forest.predict(Xte) != np.asarray(yte)))
        metric = "test error"
    else:
        forest_error = float(np.mean((forest.predict(Xte) - np.asarray(yte)) ** 2))
        metric = "test MSE"
    n_leaves = sum(int(t.tree_.n_leaves) for t in forest.estimators_)
    width = max(40, shutil.get_terminal_size((100, 24)).columns)

    def para(text):
        print(textwrap.fill(text, width), file=out)

    para(f"defrag demo: {args.dataset} ({task}), {len(Xtr)} training and {len(Xte)} test points")
    para(f"A {type(forest).__name__} of {len(forest.estimators_)} trees ({n_leaves} leaves, "
         f"{model.n_all_splits_} distinct splits, the {len(model.splits_)} of largest gain used), "
         "simplified to fit its own predictions on the training points. The rules below are the "
         "predictor, read in order: the first rule that holds gives the prediction.")
    print(file=out)
    print(f"DefragModel: {rule_count_text(len(model.rules_))} ({model.task_}, {model.method.upper()})", file=out)
    for line in str(model.rules_).splitlines():
        print(textwrap.fill(line, width, subsequent_indent=" " * (line.find("]") + 2)), file=out)
    print(file=out)
    rows = [
        ("", "rules", metric, "coverage", "fidelity", "fit seconds"),
        ("ensemble", f"{n_leaves} leaves", f"{forest_error:.4g}", "1.000", "1.000", f"{forest_seconds:.2f}"),
        ("defrag", str(model.n_rules_), f"{ev['error']:.4g}", f"{ev['coverage']:.3f}",
         f"{ev['fidelity']:.3f}", f"{defrag_seconds:.2f}"),
    ]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        print("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))),
              file=out)
    if task == "classification":
        para("fidelity: share of test points where the rules predict the forest's class.")
    else:
        para("fidelity: R^2 of the rules' predictions against the forest's on the test points "
             "(1 = the same predictions, 0 = no better than their mean).")
    return 0


def config(args, out, err):
    from . import show_config  # (the package's own __init__; imported by the command only)

    print(show_config(), file=out)
    return 0


# ----------------------------------------------------------------------- parser
def build_parser():
    parser = argparse.ArgumentParser(
        prog="defrag", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Explain a fitted tree ensemble with a few readable rules, and deploy them.",
        epilog="examples:\n"
               "  defrag explain forest.skops train.csv --format json --out rules.json\n"
               "  defrag explain model.json train.csv --target label --max-rules 5\n"
               "  defrag predict rules.json new.csv --out scored.csv\n\n"
               "Run 'defrag COMMAND --help' for a command's options.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    e = sub.add_parser(
        "explain", help="rules that explain a fitted model on a data file",
        description="Fit rules to a fitted tree ensemble on a data file and write them. Without "
                    "--target the rules fit the model's own predictions on the data. The data's "
                    "columns are matched to the model's feature names (other columns are "
                    "ignored); by position only when the model stores no names. Pickle and "
                    "joblib files load only with --allow-pickle: unpickling runs code.")
    e.add_argument("model", metavar="MODEL",
                   help="XGBoost model file (JSON or UBJ), LightGBM model text file, or a "
                        "scikit-learn ensemble or Pipeline saved with skops (.skops); a pickle or "
                        "joblib file only with --allow-pickle")
    e.add_argument("data", metavar="DATA", help="CSV file, or Parquet (needs pyarrow)")
    e.add_argument("--target", metavar="COL", help="column with the target to fit instead of the "
                   "model's predictions (dropped from the features)")
    e.add_argument("--max-rules", type=_positive_int, default=10, metavar="K",
                   help="most rules (default 10)")
    e.add_argument("--method", choices=("fab", "em"), default="fab",
                   help="fab chooses the number of rules, em fits exactly K (default fab)")
    e.add_argument("--n-rules", type=_positive_int, default=None, metavar="K",
                   help="regions of the rule list, its rules and the default (default: by "
                        "cross-validation)")
    e.add_argument("--n-restarts", type=_positive_int, default=None, metavar="N",
                   help="random restarts, their components the candidate rules (default 5)")
    e.add_argument("--format", choices=FORMATS, default="text", help="output format (default text)")
    e.add_argument("--out", metavar="FILE", help="write here instead of standard output")
    e.add_argument("--allow-pickle", action="store_true",
                   help="load MODEL even if it is a pickle or joblib file. Loading a pickle runs "
                        "any code it holds: give this only for files you trust. XGBoost, LightGBM "
                        "and skops files never need it")
    _common_options(e)
    e.set_defaults(func=explain)

    p = sub.add_parser("predict", help="score a data file with rules saved as JSON",
                       description="Score a data file with rules saved by 'defrag explain "
                                   "--format json': the data with a prediction column, as CSV "
                                   "(or Parquet when --out ends in .parquet).")
    p.add_argument("rules", metavar="RULES.json", help="rules written by 'defrag explain --format json'")
    p.add_argument("data", metavar="DATA", help="CSV file, or Parquet (needs pyarrow)")
    p.add_argument("--out", metavar="FILE", help="write here instead of standard output")
    p.add_argument("--column", default="prediction", help="name of the added column (default prediction)")
    p.add_argument("--csv-formulas", choices=("escape", "keep"), default="escape",
                   help="text cells of the CSV output that start with =, +, -, @, a tab or a carriage "
                        "return (a formula to a spreadsheet, which runs it on opening the file): "
                        "escape prefixes them with a single quote (the default, as OWASP advises; "
                        "plain numbers such as -1.5 are left alone), keep writes them as they are")
    p.set_defaults(func=predict)

    d = sub.add_parser("demo", help="simplify a random forest on a data set bundled with scikit-learn",
                       description="Train a random forest on a data set bundled with scikit-learn, "
                                   "simplify it into rules and compare the two on test points.")
    d.add_argument("--dataset", choices=sorted(DATASETS), default="breast_cancer")
    d.add_argument("--n-trees", type=_positive_int, default=100, metavar="N", help="forest size (default 100)")
    d.add_argument("--max-rules", type=_positive_int, default=10, metavar="K", help="most rules (default 10)")
    d.add_argument("--n-restarts", type=_positive_int, default=20, metavar="N",
                   help="random restarts (default 20)")
    _common_options(d)
    d.add_argument("--random-state", type=int, dest="seed", help=argparse.SUPPRESS)  # the old name
    d.set_defaults(func=demo)

    c = sub.add_parser("config", help="show how the compiled kernels were built",
                       description="Show how the compiled kernels were built (OpenMP, popcount).")
    c.set_defaults(func=config)
    return parser


def _common_options(p):
    p.add_argument("--n-jobs", type=_n_jobs, default=-1, metavar="N",
                   help="threads for the restarts (default -1: all cores)")
    p.add_argument("--seed", type=int, default=0, metavar="S", help="random seed (default 0)")
    p.add_argument("--quiet", action="store_true", help="no progress on standard error")


class _OutputError(Exception):
    """Standard output did not take the output (a closed pipe, a full disk): args[0] is
    the OSError."""


class _Output:
    """The output stream, its write errors raised as _OutputError: the commands' other
    OSErrors are a file's, which they report themselves."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, text):
        try:
            return self._stream.write(text)
        except OSError as exc:
            raise _OutputError(exc) from None

    def flush(self):
        try:
            self._stream.flush()
        except OSError as exc:
            raise _OutputError(exc) from None

    def __getattr__(self, name):
        return getattr(self._stream, name)


def _say(err, line):
    """line on err, unless err cannot take it either."""
    try:
        print(line, file=err)
        err.flush()
    except (OSError, ValueError):  # (ValueError: a closed stream)
        pass


def _silence(stream):
    """stream's file descriptor pointed at /dev/null: the interpreter flushes standard output
    at exit, and would report the same failure again in a stack trace."""
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation: a StringIO
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)


def main(argv=None, out=None, err=None):
    """Run the command line; its exit status: 0, 2 for an error with the user's files or
    data, 1 when standard output fails (a closed pipe, ``| head``; a full disk), 130 on
    Ctrl-C. Each is one line on stderr, never a stack trace."""
    out = out or sys.stdout
    err = err or sys.stderr
    args = build_parser().parse_args(argv)
    output = _Output(out)
    try:
        status = args.func(args, output, err)
        output.flush()  # (a full disk may say so only now)
        return status
    except CommandError as exc:
        _say(err, f"defrag {args.command}: error: {_one_line(exc)}")
        return 2
    except _OutputError as exc:
        _silence(out)
        reason = exc.args[0].strerror or type(exc.args[0]).__name__
        _say(err, f"defrag {args.command}: error: cannot write the output: {reason}")
        return 1
    except KeyboardInterrupt:
        _say(err, f"defrag {args.command}: interrupted")
        return 130
