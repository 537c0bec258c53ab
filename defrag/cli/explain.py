"""``defrag explain MODEL DATA``: rules fitted to a model on a data file, written in a
format of the API's exports. The model is read by the API's readers and explained by
DefragModel as the API explains it: its own predictions (a raw XGBoost or LightGBM
Booster's too, read from its objective) unless --target names the column to fit."""
import warnings

from .columns import categorical_columns, match_columns, no_missing_category, prepare_frame, written_columns
from .data_files import DataFile
from .errors import CommandError, library_error
from .models import load_model, model_source
from .output import FORMATS, Progress, quality_figures, quality_footer, render, write_text
from .options import common_options, non_negative_int, positive_int

NAME = "explain"


def add_parser(commands):
    """The command's parser, on the subparsers of the defrag parser."""
    e = commands.add_parser(
        NAME, help="rules that explain a fitted model on a data file",
        description="Fit rules to a fitted tree ensemble on a data file and write them. Without "
                    "--target the rules fit the model's own predictions on the data. The data's "
                    "columns are matched to the model's feature names (other columns are "
                    "ignored); by position only when the model stores no names. Pickle and "
                    "joblib files load only with --allow-pickle: unpickling runs code.")
    e.add_argument("model", metavar="MODEL",
                   help="XGBoost model file (JSON or UBJ), LightGBM model text file, CatBoost .cbm, or a "
                        "scikit-learn ensemble or Pipeline saved with skops (.skops); a pickle or "
                        "joblib file only with --allow-pickle")
    e.add_argument("data", metavar="DATA", help="CSV file, or Parquet (needs pyarrow)")
    e.add_argument("--target", metavar="COL", help="column with the target to fit instead of the "
                   "model's predictions: the printed values are its values, the model gives the "
                   "splits (dropped from the features)")
    e.add_argument("--max-conditions", type=non_negative_int, default=None, metavar="B",
                   help="print at most B comparisons (a < x <= b counts two): the explanation of "
                        "smallest cross-validated error within that budget")
    e.add_argument("--n-regions", type=positive_int, default=None, metavar="K",
                   help="regions of the explanation (default: by cross-validation)")
    e.add_argument("--form", choices=("auto", "tree", "sum", "list", "restarts", "paper"), default="auto",
                   help="what is printed: a tree of rules, or under a budget a tree or a sum of "
                        "trees (auto, the default); tree; sum; list (an ordered rule list); restarts "
                        "(the kept restart's rules as a list); paper (the paper's rules, by MAP)")
    e.add_argument("--n-components", type=positive_int, default=10, metavar="K",
                   help="the mixture's components: FAB's upper bound, EM's K (default 10)")
    e.add_argument("--method", choices=("fab", "em"), default="fab",
                   help="fab chooses the number of components, em fits exactly K (default fab)")
    e.add_argument("--n-restarts", type=positive_int, default=None, metavar="N",
                   help="random restarts, their components the candidate rules (default 5)")
    e.add_argument("--format", choices=FORMATS, default="text", help="output format (default text)")
    e.add_argument("--out", metavar="FILE", help="write here instead of standard output")
    e.add_argument("--allow-pickle", action="store_true",
                   help="load MODEL even if it is a pickle or joblib file. Loading a pickle runs "
                        "any code it holds: give this only for files you trust. XGBoost, LightGBM, "
                        "CatBoost and skops files never need it")
    common_options(e)
    return e


def read_inputs(args, err, source):
    """(X, y) of the data file as the model reads it (y: the --target column, or None)."""
    data = DataFile(args.data)  # read once: DATA may be a pipe
    frame = data.frame()
    y = None
    if args.target is not None:
        if args.target not in frame.columns:
            raise CommandError(f"the data have no column {args.target!r} (--target)")
        y = frame[args.target].to_numpy()
        frame = frame.drop(columns=[args.target])
    columns = source.feature_names
    if args.target is not None and columns is not None and args.target in list(columns):
        raise CommandError(f"--target {args.target!r} is a feature of the model: the target must be "
                           "another column")
    frame = match_columns(frame, columns, source.n_features, NAME, err, say_extra=not args.quiet)
    categorical = categorical_columns(source)
    text_labels = bool(getattr(source.encoding, "text_labels", False))  # a category read as its text
    raw = data.cells(written_columns(frame, categorical, text_labels))
    del data  # (its bytes: the fit needs the memory more)
    X = prepare_frame(frame, categorical, raw, for_library=source.reads_pandas_categoricals,
                      text_labels=text_labels)
    if text_labels:
        no_missing_category(X, categorical, args.data, source.library)
    return X, y


def run(args, out, err):
    """Fit rules to a model on a data file and write them."""
    from .. import DefragMemoryError, DefragModel  # scikit-learn: only when a command fits

    model = load_model(args.model, args.allow_pickle)
    source = model_source(model, args.model)
    X, y = read_inputs(args, err, source)
    with Progress(args.quiet, err) as progress:
        dm = DefragModel(model, max_conditions=args.max_conditions, n_regions=args.n_regions, form=args.form,
                         n_components=args.n_components, method=args.method,
                         n_restarts=args.n_restarts or "auto", n_jobs=args.n_jobs, random_state=args.seed,
                         verbose=progress.verbose)
        try:
            with warnings.catch_warnings():
                # a model without names read by position was said so above
                warnings.filterwarnings("ignore", "X has feature names, but", UserWarning)
                dm.fit(X, y)
        except Exception as exc:  # noqa: BLE001 - sorted below
            if _raised_by(exc, model):  # the model's library refused the data (XGBoostError, LightGBMError)
                raise CommandError(f"{source.library} cannot predict the data: {library_error(exc)}") from None
            if isinstance(exc, (TypeError, ValueError, DefragMemoryError)):
                raise CommandError(str(exc)) from None
            raise
        progress.say(f"{dm.n_regions_} regions, {dm.n_conditions_} conditions, fitted in "
                     f"{progress.elapsed():.1f} s")
    if args.format in ("text", "json"):
        scores = _quality(dm, X, y)
    if args.format == "json":
        text = render(dm, "json", quality_figures(scores, len(X), y is not None))
    else:
        text = render(dm, args.format)
    if args.format == "text":
        text += "\n" + quality_footer(scores, len(X), dm.task_, y is not None)
    write_text(text, args.out, out)
    return 0


def _quality(dm, X, y):
    """evaluate's figures on the rows the rules were fitted on: against the --target column,
    or without one against the rules' own predictions (of which only the fidelity, the
    agreement with the model, is then a figure)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "X has feature names, but", UserWarning)  # said above
        return dm.evaluate(X, dm.predict(X) if y is None else y)



def _raised_by(exc, model):
    """The exception's class comes from the model's library (the package of its type)."""
    home = (type(model).__module__ or "").split(".")[0]
    return home not in ("", "builtins", "defrag") and (type(exc).__module__ or "").split(".")[0] == home
