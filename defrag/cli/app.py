"""The defrag parser and ``main``: each command is a module of this package with NAME,
add_parser(commands) and run(args, out, err), listed in COMMANDS."""
import argparse
import functools
import sys
import warnings

from . import config, demo, diff, explain, predict
from .errors import CommandError, one_line
from .output import Output, OutputError, say, silence

# the commands, in the order --help lists them. A new command is a module with NAME,
# add_parser(commands) (its arguments) and run(args, out, err) (its exit status), and
# one entry here.
COMMANDS = (explain, predict, diff, demo, config)


def build_parser():
    parser = argparse.ArgumentParser(
        prog="defrag", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Explain a fitted tree ensemble with a few readable rules, and deploy them.",
        epilog="examples:\n"
               "  defrag explain forest.skops train.csv --format json --out rules.json\n"
               "  defrag explain model.json train.csv --target label --max-conditions 7\n"
               "  defrag predict rules.json new.csv --out scored.csv\n"
               "  defrag diff old.json new.json new.csv\n\n"
               "Run 'defrag COMMAND --help' for a command's options.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        command.add_parser(commands).set_defaults(run=command.run)
    return parser


def main(argv=None, out=None, err=None):
    """Run the command line; its exit status: 0, 2 for an error with the user's files or
    data, 1 when standard output fails (a closed pipe, ``| head``; a full disk), 130 on
    Ctrl-C. Each is one line on stderr, never a stack trace."""
    out = out or sys.stdout
    err = err or sys.stderr
    args = build_parser().parse_args(argv)
    output = Output(out)
    try:
        with warnings.catch_warnings():
            # a library's warning is one line of the command's, as its errors are: not
            # Python's "file:line: Category: message" of a frame the user never wrote
            # (runpy's, under python -m defrag)
            warnings.showwarning = functools.partial(_warning_line, err, args.command)
            status = args.run(args, output, err)
        output.flush()  # (a full disk may say so only now)
        return status
    except CommandError as exc:
        say(err, f"defrag {args.command}: error: {one_line(exc)}")
        return 2
    except OutputError as exc:
        silence(out)
        reason = exc.args[0].strerror or type(exc.args[0]).__name__
        say(err, f"defrag {args.command}: error: cannot write the output: {reason}")
        return 1
    except KeyboardInterrupt:
        say(err, f"defrag {args.command}: interrupted")
        return 130


def _warning_line(err, command, message, category, filename, lineno, file=None, line=None):
    """warnings.showwarning of a command: "defrag COMMAND: warning: message" on err."""
    say(err, f"defrag {command}: warning: {one_line(message)}")
