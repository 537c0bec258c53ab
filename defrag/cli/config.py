"""``defrag config``: how the compiled kernels were built."""

NAME = "config"


def add_parser(commands):
    """The command's parser, on the subparsers of the defrag parser."""
    return commands.add_parser(NAME, help="show how the compiled kernels were built",
                               description="Show how the compiled kernels were built (OpenMP, popcount).")


def run(args, out, err):
    from .. import show_config  # (the package's own __init__; imported by the command only)

    print(show_config(), file=out)
    return 0
