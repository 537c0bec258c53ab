"""A data file's columns as the model reads them: matched to its feature names, and its
categorical features coded as the model's source says (sources.SourceModel's
categorical_columns, reads_pandas_categoricals and encoding.text_labels), the same for
every library."""
import numpy as np

from ..utils.text import printed_name
from .errors import CommandError, library_error, pandas as _pandas


def match_columns(frame, names, n_features, command, err, say_extra=True, labels=None):
    """The columns of frame the model (or the rules, for predict) reads, in its order: by
    name when it has names (a missing one is an error naming it, extra ones are ignored,
    and said so when say_extra), else by position with a warning (which says so where the
    rules name their features, labels, but not the data's columns)."""
    reader, s_ = ("the rules", "") if command == "predict" else ("the model", "s")  # verbs agree
    if names is not None:
        names = [str(n) for n in names]
        have = set(map(str, frame.columns))
        missing = [n for n in names if n not in have]
        if missing:
            more = (f" (and {len(missing) - 1} more: {', '.join(map(printed_name, missing[1:6]))})"
                    if len(missing) > 1 else "")
            spaced = [c for c in map(str, frame.columns) if c.replace(" ", "_") == missing[0]]
            hint = (f"; LightGBM writes spaces in names as '_', the data have {spaced[0]!r}"
                    if spaced else "")
            raise CommandError(f"the data have no column {missing[0]!r}, a feature of {reader}"
                               f"{more}{hint}")
        extra = [c for c in map(str, frame.columns) if c not in set(names)]
        if extra and say_extra:
            listed = _listed(extra, 8)
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
    what = (f"{reader} store{s_} no feature names" if labels is None else
            f"{reader} name their features ({_listed(labels, 5)}) but were fitted on an array, not on "
            "columns of these names")
    print(f"defrag {command}: warning: {what}; the data's columns are taken by position "
          f"({_listed(frame.columns, 5)})", file=err)
    return frame


def _listed(names, limit):
    """Up to limit names as printed (utils/text.py: one line, each readable as one name),
    then how many more."""
    names = list(names)
    more = f" and {len(names) - limit} more" if len(names) > limit else ""
    return ", ".join(printed_name(n) for n in names[:limit]) + more


def categorical_columns(source):
    """{column index: the model's categories, or None where it reads category codes} of
    the features the model splits by category (SourceModel.categorical_columns)."""
    try:
        return source.categorical_columns()
    except (TypeError, ValueError, KeyError, AttributeError) as exc:  # a malformed dump
        raise CommandError(f"the model's categorical features: {library_error(exc)}") from None


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


def no_missing_category(X, categorical, path, library):
    """A model that reads a category as its text (CatBoost) has no missing category (it
    refuses NaN in a categorical feature): a missing cell there (a Parquet null; a CSV's
    cells are all labels) is a CommandError naming the column and the first such row."""
    for j in categorical:
        col = X.columns[j]
        missing = np.flatnonzero(X[col].isna().to_numpy())
        if missing.size:
            raise CommandError(
                f"{path}: column {col!r} is a categorical feature of the {library} model and {missing.size} of "
                f"its cells {'is' if missing.size == 1 else 'are'} missing (the first in data row "
                f"{missing[0] + 1}); {library} reads a category as its text and has no missing category: "
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
