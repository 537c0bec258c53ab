"""``defrag diff OLD.json NEW.json DATA``: what changed between two explanations saved by
``defrag explain --format json`` (``RuleTree.diff``, ``RuleSet.diff``). The headline first:
on the data's rows the share whose prediction changed (in regression, by how much, and the
tolerance: ``--tol``, by default 1% of the standard deviation of the old explanation's
predictions) and whose region changed, and the regions kept, changed, added and removed;
then the details: threshold moves, regions added and removed, the rows that moved between
which regions. Text, or ``--json`` (the schema of ``ExplanationDiff.to_dict``). Two explanations over
different features exit with status 2 and one line naming the first that differs."""
import math

from ..rules.diff import check_comparable
from .errors import CommandError
from .predict import rows_for_rules
from .rules_files import read_rules

NAME = "diff"


def add_parser(commands):
    """The command's parser, on the subparsers of the defrag parser."""
    d = commands.add_parser(NAME, help="what changed between two explanations saved as JSON",
                            description="Compare two explanations written by 'defrag explain --format json' "
                                        "(a yesterday's and a today's, say). First the headline: on the "
                                        "data's rows the share whose prediction changed (in regression by "
                                        "how much, and the tolerance) and whose region changed, and the "
                                        "regions kept, changed, added and removed; then the details "
                                        "(threshold moves, the rows that moved between which regions). "
                                        "Exit status 2 where "
                                        "the two are over different features.")
    d.add_argument("old", metavar="OLD.json", help="the earlier explanation")
    d.add_argument("new", metavar="NEW.json", help="the later explanation")
    d.add_argument("data", metavar="DATA", help="CSV file, or Parquet (needs pyarrow): the rows compared")
    d.add_argument("--json", action="store_true",
                   help="write the diff as JSON (its schema: ExplanationDiff.to_dict) instead of text")
    d.add_argument("--tol", type=float, default=None, metavar="T",
                   help="regression: a prediction changed where it moved by more than T (default: 1%% of the "
                        "standard deviation of the old explanation's predictions on the data)")
    return d


def run(args, out, err):
    """Compare two explanations on a data file's rows; the exit status."""
    if args.tol is not None and not (math.isfinite(args.tol) and args.tol >= 0):  # before any file is read
        raise CommandError(f"--tol must be a finite number >= 0; got {args.tol!r}")
    old, new = read_rules(args.old), read_rules(args.new)
    try:
        check_comparable(old, new)
    except ValueError as exc:
        raise CommandError(f"{args.old} and {args.new}: {exc}") from None
    _, _, X = rows_for_rules(new, args.data, NAME, err)
    try:
        result = old.diff(new, X, tol=args.tol)
    except (TypeError, ValueError) as exc:
        raise CommandError(str(exc)) from None
    out.write((result.to_json(indent=2) if args.json else str(result)) + "\n")
    return 0
