"""``defrag predict RULES DATA``: a data file scored by rules saved as JSON, written back
with a prediction column."""
import contextlib
import warnings

import numpy as np

from .columns import match_columns, prepare_frame, written_columns
from .data_files import DataFile, write_data
from .errors import CommandError
from .rules_files import read_rules

NAME = "predict"


def add_parser(commands):
    """The command's parser, on the subparsers of the defrag parser."""
    p = commands.add_parser(NAME, help="score a data file with rules saved as JSON",
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
    return p


def rows_for_rules(rules, path, command, err):
    """(the data file's frame, its cells as written where the rules read them as text or
    None, its rows as the rules read them): the columns matched to the rules' by name,
    categories coded as the rules' encoding codes them."""
    data = DataFile(path)  # read once: DATA may be a pipe
    frame = data.frame()
    n_features = None if rules.feature_names is None else len(rules.feature_names)
    names = rules.feature_names_in
    if names is None and rules.feature_names is not None and \
            set(rules.feature_names) <= set(map(str, frame.columns)):
        # rules fitted on an array, with the names given at the fit: the data name the
        # features so, in whatever order
        names = rules.feature_names
    # the output keeps every column of the data, so unused ones are no news
    X = match_columns(frame, names, n_features, command, err, say_extra=False, labels=rules.feature_names)
    enc = rules.encoding
    categorical = {} if enc is None else {
        j: (None if enc.categories[j] is None else list(enc.categories[j]))
        for j in np.flatnonzero(enc.categorical)}
    text_labels = bool(getattr(enc, "text_labels", False))
    raw = data.cells(written_columns(X, categorical, text_labels))
    del data
    return frame, raw, prepare_frame(X, categorical, raw, text_labels=text_labels)


@contextlib.contextmanager
def matched_columns():
    """Around the rules' reading of the rows of rows_for_rules: their columns are matched
    there (by name, or by position as said there), so that the rules' warning that a
    frame's names are not theirs (rules fitted on an array) is no news."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "X has feature names, but", UserWarning)
        yield


def run(args, out, err):
    """Score a data file with rules saved by ``defrag explain --format json``."""
    rules = read_rules(args.rules)
    frame, raw, X = rows_for_rules(rules, args.data, NAME, err)
    try:
        with matched_columns():
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
