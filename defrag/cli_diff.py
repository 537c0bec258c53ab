"""``defrag diff OLD.json NEW.json DATA``: what changed between two explanations saved by
``defrag explain --format json`` (``RuleTree.diff``): regions kept, changed (with their
threshold moves), added and removed, and on the data's rows the share whose prediction and
whose region changed, and the rows that moved between which regions. Text, or ``--json``
(the schema of ``ExplanationDiff.to_dict``).

Exit status as the other commands' (defrag/cli.py's ``main``): 0 with the changes
printed, 2 with one line on stderr naming the problem (two explanations over different
features, a file that is not a rules file, data without a feature's column).

The command line's file helpers live in defrag/cli.py, which registers this command and
hands them over (``add_parser``): this module does not import it.
"""
import dataclasses

import numpy as np

from .rules.diff import check_comparable


@dataclasses.dataclass(frozen=True)
class Helpers:
    """defrag/cli.py's helpers the command uses: read_rules(path), DataFile(path),
    match_columns(...), written_columns(...), prepare_frame(...), and CommandError (its
    message: the one line of an exit with status 2)."""

    read_rules: object
    DataFile: object
    match_columns: object
    written_columns: object
    prepare_frame: object
    CommandError: object


def add_parser(sub, helpers):
    """The ``diff`` command on the subparsers ``sub`` (cli.py's build_parser)."""
    d = sub.add_parser("diff", help="what changed between two explanations saved as JSON",
                       description="Compare two explanations written by 'defrag explain --format json' "
                                   "(a yesterday's and a today's, say): regions kept, changed (with their "
                                   "threshold moves), added and removed, and on the data's rows the share "
                                   "whose prediction changed and whose region changed, and the rows that "
                                   "moved between which regions. Exit status 2 where the two are over "
                                   "different features.")
    d.add_argument("old", metavar="OLD.json", help="the earlier explanation")
    d.add_argument("new", metavar="NEW.json", help="the later explanation")
    d.add_argument("data", metavar="DATA", help="CSV file, or Parquet (needs pyarrow): the rows compared")
    d.add_argument("--json", action="store_true",
                   help="write the diff as JSON (its schema: ExplanationDiff.to_dict) instead of text")
    d.add_argument("--tol", type=float, default=0.0, metavar="T",
                   help="regression: a prediction changed where it moved by more than T (default 0)")
    d.set_defaults(func=lambda args, out, err: diff(args, out, err, helpers))
    return d


def diff(args, out, err, h):
    """Run ``defrag diff``; its exit status."""
    old, new = h.read_rules(args.old), h.read_rules(args.new)
    try:
        check_comparable(old, new)
    except ValueError as exc:
        raise h.CommandError(f"{args.old} and {args.new}: {exc}") from None
    X = _rows(new, args.data, err, h)
    try:
        result = old.diff(new, X, tol=args.tol)
    except (TypeError, ValueError) as exc:
        raise h.CommandError(str(exc)) from None
    print(result.to_json(indent=2) if args.json else str(result), file=out)
    return 0


def _rows(rules, path, err, h):
    """The data's rows as the rules read them (as ``defrag predict`` reads them)."""
    data = h.DataFile(path)
    frame = data.frame()
    n_features = None if rules.feature_names is None else len(rules.feature_names)
    X = h.match_columns(frame, rules.feature_names_in, n_features, "predict", err, say_extra=False)
    enc = rules.encoding
    categorical = {} if enc is None else {
        j: (None if enc.categories[j] is None else list(enc.categories[j])) for j in np.flatnonzero(enc.categorical)}
    text_labels = bool(getattr(enc, "text_labels", False))
    raw = data.cells(h.written_columns(X, categorical, text_labels))
    return h.prepare_frame(X, categorical, raw, text_labels=text_labels)
