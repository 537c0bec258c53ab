"""The command line's start: a Ctrl-C while defrag loads.

``python -m defrag`` and the ``defrag`` script import the package (NumPy and the compiled
kernels: about a third of a second) before the command line's ``main`` can catch
anything, and a KeyboardInterrupt there would end the process with Python's stack trace
through the imports. The command line says a Ctrl-C in one line with exit status 130
(defrag/cli/app.py); ``loading`` does the same while the package loads, in a process
that is defrag's command line, and leaves a KeyboardInterrupt as it is anywhere else (a
program that imports defrag). This module imports nothing but the standard library's
sys and os, so that it runs before anything slow.
"""
import contextlib
import os
import sys

# the exit status of a command ended by Ctrl-C (128 + SIGINT's number, as a shell says it)
INTERRUPTED = 130


def is_command_line():
    """Whether this process is defrag's command line: ``python -m defrag`` (while Python
    finds the module, ``sys.argv[0]`` is "-m"; then the path of defrag/__main__.py), or
    the ``defrag`` script that pip writes.

    Returns
    -------
    bool
        True in the command line's process.
    """
    first = sys.argv[0] if sys.argv else ""
    if first == "-m":
        args = list(getattr(sys, "orig_argv", ()))
        return "-mdefrag" in args or any(a == "-m" and b == "defrag" for a, b in zip(args, args[1:]))
    folder, name = os.path.split(first)
    if name == "__main__.py":
        return os.path.basename(folder) == "defrag"
    for suffix in (".exe", "-script.pyw", "-script.py"):
        name = name[:-len(suffix)] if name.endswith(suffix) else name
    return name == "defrag"


@contextlib.contextmanager
def loading():
    """Around the imports of defrag's command line: a KeyboardInterrupt there, in the
    command line's process, is one line on stderr and exit status 130 (SystemExit); in
    any other process it is raised as it is.

    Yields
    ------
    None
    """
    try:
        yield
    except KeyboardInterrupt:
        if not is_command_line():
            raise
        try:
            print("defrag: interrupted", file=sys.stderr)
            sys.stderr.flush()
        except (OSError, ValueError):  # (a closed stderr: the status says it)
            pass
        raise SystemExit(INTERRUPTED) from None
