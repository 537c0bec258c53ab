"""The ``defrag`` command line (also ``python -m defrag``).

    defrag explain MODEL DATA    rules that explain a fitted model on a data file
    defrag predict RULES DATA    score a data file with rules saved as JSON
    defrag demo                  a random forest on a bundled data set, simplified
    defrag config                how the compiled kernels were built

MODEL: a pickled or joblib scikit-learn ensemble (or Pipeline), an XGBoost model file
(.json or .ubj) or a LightGBM model text file. DATA: CSV, or Parquet with pyarrow.
"""
import argparse
import logging
import os
import shutil
import sys
import textwrap
import time

import numpy as np

FORMATS = ("text", "json", "sql", "markdown", "python")
DATASETS = {
    "breast_cancer": ("classification", "load_breast_cancer"),
    "wine": ("classification", "load_wine"),
    "diabetes": ("regression", "load_diabetes"),
}
# progress goes to stderr once a fit has run this long
PROGRESS_AFTER_S = 2.0


class CommandError(Exception):
    """A problem with the user's files or data: printed as one line, exit status 2."""


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


def read_data(path):
    """A DataFrame of a CSV or Parquet file (text columns become categorical later)."""
    pd = _pandas()
    if not os.path.exists(path):
        raise CommandError(f"no such data file: {path}")
    if path.lower().endswith((".parquet", ".pq")):
        try:
            return pd.read_parquet(path)
        except ImportError as exc:
            raise CommandError(f"reading Parquet needs pyarrow: pip install \"defrag[parquet]\" ({exc})") from None
    try:
        return pd.read_csv(path)
    except (ValueError, UnicodeDecodeError) as exc:
        raise CommandError(f"cannot read {path} as CSV: {exc}") from None


def write_data(frame, path, out):
    if path is None:
        frame.to_csv(out, index=False)
    elif path.lower().endswith((".parquet", ".pq")):
        try:
            frame.to_parquet(path, index=False)
        except ImportError as exc:
            raise CommandError(f"writing Parquet needs pyarrow ({exc})") from None
    else:
        frame.to_csv(path, index=False)


def _library_of(path):
    """'xgboost', 'lightgbm' or 'pickle', from the file's first bytes."""
    with open(path, "rb") as f:
        head = f.read(4096)
    if head.startswith(b"tree\n") or b"\nversion=v" in head[:200]:
        return "lightgbm"
    stripped = head.lstrip()
    if stripped.startswith(b"{") and b'"learner"' in head:
        return "xgboost"
    if path.lower().endswith(".ubj") or (stripped.startswith(b"{") and b"learner" in head[:64]):
        return "xgboost"  # UBJSON: a '{' and length-prefixed keys
    return "pickle"


def load_model(path):
    """(model, library) of a model file."""
    if not os.path.exists(path):
        raise CommandError(f"no such model file: {path}")
    library = _library_of(path)
    if library == "lightgbm":
        try:
            import lightgbm as lgb
        except ImportError:
            raise CommandError("a LightGBM model file needs lightgbm: pip install lightgbm") from None
        return lgb.Booster(model_file=path), library
    if library == "xgboost":
        try:
            import xgboost as xgb
        except ImportError:
            raise CommandError("an XGBoost model file needs xgboost: pip install xgboost") from None
        booster = xgb.Booster()
        try:
            booster.load_model(path)
        except xgb.core.XGBoostError as exc:
            raise CommandError(f"cannot read {path} as an XGBoost model: {str(exc).splitlines()[0]}") from None
        return booster, library
    try:
        import joblib

        model = joblib.load(path)  # pickles too (joblib ships with scikit-learn)
    except Exception as exc:  # noqa: BLE001 - any unpickling failure is the file's
        raise CommandError(f"cannot load {path} as a pickled or joblib model: "
                           f"{type(exc).__name__}: {exc}") from None
    return model, library


def _model_columns(model, library):
    """The model's feature names, when it stores real ones."""
    if library == "xgboost":
        return model.feature_names
    if library == "lightgbm":
        names = model.feature_name()
        return None if all(n == f"Column_{i}" for i, n in enumerate(names)) else names
    from .sources import unwrap

    names = getattr(unwrap(model), "feature_names_in_", None)
    if names is None:
        names = getattr(model, "feature_names_in_", None)
    return None if names is None else [str(n) for n in names]


def _categorical_columns(model, library, n_features):
    """{column index: categories or None} of the features the model splits by category."""
    if library == "lightgbm":  # categorical features list their categories in feature_infos
        dump = model.dump_model()
        infos = dump.get("feature_infos") or {}
        names = dump.get("feature_names") or []
        flagged = [j for j, n in enumerate(names) if isinstance(infos.get(n), dict) and infos[n].get("values")]
        cats = dump.get("pandas_categorical") or []
        return {j: (cats[i] if i < len(cats) else None) for i, j in enumerate(flagged)}
    from .sources import adapt

    enc = adapt(model, n_features).encoding
    return {j: (None if enc.categories[j] is None else list(enc.categories[j]))
            for j in np.flatnonzero(enc.categorical)}


def prepare_frame(frame, columns=None, categorical=None):
    """The columns (by name, in order) of frame, text and categorical features as pandas
    categorical columns (with the model's categories where it stores them)."""
    pd = _pandas()
    if columns is not None:
        missing = [c for c in columns if c not in frame.columns]
        if missing:
            raise CommandError(f"the data lack the model's columns: {', '.join(map(str, missing[:10]))}")
        frame = frame[list(columns)]
    frame = frame.copy()
    categorical = categorical or {}
    for j, col in enumerate(frame.columns):
        values = frame[col]
        if values.dtype.kind == "f" and j in categorical:
            whole = values.dropna()
            if (whole == np.trunc(whole)).all():  # integer categories read as floats (NaN)
                values = values.astype("Int64")
        if j in categorical and categorical[j] is not None:
            frame[col] = pd.Categorical(values, categories=categorical[j])
        elif j in categorical or values.dtype == object or pd.api.types.is_string_dtype(values.dtype):
            if values.dtype.name != "category":
                frame[col] = values.astype("category")
    return frame


def own_predictions(model, library, X):
    """The model's predictions on X (class labels or values), for fitting rules to them."""
    if library == "xgboost":
        import json

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
def _markdown(model):
    rules = model.rules_
    rows = [("#", "if", "then", "support")]
    for i, r in enumerate(rules, 1):
        rows.append((str(i), r.condition_text(), str(_prediction(r.prediction, r.proba)), str(r.support)))
    rows.append(("*", "otherwise", str(_prediction(rules.default_prediction, rules.default_proba)), ""))

    def cell(text):
        return text.replace("|", "\\|")

    lines = ["| " + " | ".join(cell(c) for c in rows[0]) + " |", "|---|---|---|--:|"]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows[1:]]
    return "\n".join(lines)


def _prediction(prediction, proba):
    from .rules.ruleset import prediction_text

    return prediction_text(prediction, proba)


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
    return _markdown(model)


class _Progress:
    """Progress of a long fit on stderr: the defrag logger's lines, once the fit has run
    PROGRESS_AFTER_S seconds."""

    def __init__(self, quiet, err):
        self.quiet, self.err = quiet, err
        self.start = time.perf_counter()
        self.handler = None

    def elapsed(self):
        return time.perf_counter() - self.start

    def __enter__(self):
        if not self.quiet:
            self.handler = logging.StreamHandler(self.err)
            self.handler.setFormatter(logging.Formatter("[defrag %(elapsed).0fs] %(message)s"))

            def late(record):
                record.elapsed = self.elapsed()
                return record.elapsed >= PROGRESS_AFTER_S

            self.handler.addFilter(late)
            logging.getLogger("defrag").addHandler(self.handler)
        return self

    def __exit__(self, *exc):
        if self.handler is not None:
            logging.getLogger("defrag").removeHandler(self.handler)
        return False

    def say(self, message):
        if not self.quiet and self.elapsed() >= PROGRESS_AFTER_S:
            print(f"[defrag {self.elapsed():.0f}s] {message}", file=self.err)


def _write_text(text, path, out):
    if path is None:
        print(text, file=out)
    else:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text if text.endswith("\n") else text + "\n")


# --------------------------------------------------------------------- commands
def explain(args, out, err):
    """Fit rules to a model on a data file and write them."""
    from . import DefragModel

    model, library = load_model(args.model)
    frame = read_data(args.data)
    y = None
    if args.target is not None:
        if args.target not in frame.columns:
            raise CommandError(f"the data have no column {args.target!r} (--target)")
        y = frame[args.target].to_numpy()
        frame = frame.drop(columns=[args.target])
    columns = _model_columns(model, library)
    if columns is not None and not set(columns) <= set(frame.columns):
        columns = None if len(frame.columns) == len(columns) else columns  # unnamed data: by position
    n_features = len(columns) if columns is not None else frame.shape[1]
    X = prepare_frame(frame, columns, _categorical_columns(model, library, n_features))
    if y is None and library != "pickle":
        y = own_predictions(model, library, X)  # a raw Booster has no scikit-learn predict
    with _Progress(args.quiet, err) as progress:
        dm = DefragModel(model, max_rules=args.max_rules, method=args.method,
                         n_restarts=args.n_restarts, n_jobs=args.n_jobs, random_state=args.seed,
                         verbose=0 if args.quiet else 1)
        try:
            dm.fit(X, y)
        except (TypeError, ValueError) as exc:
            raise CommandError(str(exc)) from None
        progress.say(f"{dm.n_rules_} rules fitted in {progress.elapsed():.1f} s")
    _write_text(render(dm, args.format), args.out, out)
    return 0


def predict(args, out, err):
    """Score a data file with rules saved by ``defrag explain --format json``."""
    from .rules import RuleSet

    if not os.path.exists(args.rules):
        raise CommandError(f"no such rules file: {args.rules}")
    with open(args.rules, encoding="utf-8") as f:
        text = f.read()
    try:
        rules = RuleSet.from_json(text)
    except (ValueError, KeyError, TypeError) as exc:
        raise CommandError(f"{args.rules} is not a defrag rules file: {exc}") from None
    frame = read_data(args.data)
    columns = rules.feature_names_in
    enc = rules.encoding
    categorical = {} if enc is None else {
        j: (None if enc.categories[j] is None else list(enc.categories[j]))
        for j in np.flatnonzero(enc.categorical)}
    X = prepare_frame(frame, columns, categorical)
    try:
        pred = rules.predict(X)
    except (TypeError, ValueError) as exc:
        raise CommandError(str(exc)) from None
    result = frame.copy()
    name = args.column
    while name in result.columns:
        name = "_" + name
    result[name] = pred
    write_data(result, args.out, out)
    return 0


def demo(args, out, err):
    """Train a random forest on a bundled data set, simplify it, print the rules."""
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

    with _Progress(args.quiet, err):
        t0 = time.perf_counter()
        model = DefragModel(forest, max_rules=args.max_rules, n_restarts=args.n_restarts,
                            feature_names=names, random_state=args.seed, n_jobs=args.n_jobs,
                            verbose=0 if args.quiet else 1).fit(Xtr)
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
    print(f"DefragModel: {model.n_rules_} rules ({model.task_}, {model.method.upper()})", file=out)
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
    from . import show_config

    print(show_config(), file=out)
    return 0


# ----------------------------------------------------------------------- parser
def build_parser():
    parser = argparse.ArgumentParser(
        prog="defrag", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Explain a fitted tree ensemble with a few readable rules, and deploy them.",
        epilog="examples:\n"
               "  defrag explain forest.joblib train.csv --format json --out rules.json\n"
               "  defrag explain model.json train.csv --target label --max-rules 5\n"
               "  defrag predict rules.json new.csv --out scored.csv\n\n"
               "Run 'defrag COMMAND --help' for a command's options.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    e = sub.add_parser(
        "explain", help="rules that explain a fitted model on a data file",
        description="Fit rules to a fitted tree ensemble on a data file and write them. Without "
                    "--target the rules fit the model's own predictions on the data.")
    e.add_argument("model", metavar="MODEL",
                   help="pickled or joblib scikit-learn ensemble or Pipeline, XGBoost model file "
                        "(JSON or UBJ), or LightGBM model text file")
    e.add_argument("data", metavar="DATA", help="CSV file, or Parquet (needs pyarrow)")
    e.add_argument("--target", metavar="COL", help="column with the target to fit instead of the "
                   "model's predictions (dropped from the features)")
    e.add_argument("--max-rules", type=_positive_int, default=10, metavar="K",
                   help="most rules (default 10)")
    e.add_argument("--method", choices=("fab", "em"), default="fab",
                   help="fab chooses the number of rules, em fits exactly K (default fab)")
    e.add_argument("--n-restarts", type=_positive_int, default=20, metavar="N",
                   help="random restarts, the best kept (default 20)")
    e.add_argument("--format", choices=FORMATS, default="text", help="output format (default text)")
    e.add_argument("--out", metavar="FILE", help="write here instead of standard output")
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


def main(argv=None, out=None, err=None):
    out = out or sys.stdout
    err = err or sys.stderr
    args = build_parser().parse_args(argv)
    try:
        return args.func(args, out, err)
    except CommandError as exc:
        print(f"defrag {args.command}: error: {exc}", file=err)
        return 2
    except BrokenPipeError:  # the reader (head, less) closed the pipe: not an error of ours
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
