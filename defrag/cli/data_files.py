"""Data files: CSV (any compression pandas reads) or Parquet in, each read once (a pipe
works); CSV or Parquet out, with the cells a spreadsheet would run as formulas escaped."""
import csv
import io

import numpy as np

from ..utils.files import FileReadError, read_file_bytes
from .errors import CommandError, library_error, pandas as _pandas


def read_file(path, what, max_bytes=None):
    """The bytes of a file or a pipe (a device such as /dev/zero would be read without
    end), or a one-line error for a path that is not a readable file or is larger than
    max_bytes."""
    try:
        data = read_file_bytes(path, what, max_bytes, pipes=True)
    except FileReadError as exc:
        raise CommandError(str(exc)) from None
    if not data:
        raise CommandError(f"{path} is empty")
    return data


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
        self.data = read_file(path, "data file")
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
                               f"{library_error(exc)}") from None

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
