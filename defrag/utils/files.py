"""Files read whole, by the library (a warm start's ``reference_rules``) and the command
line (its model, rules and data files): refused by kind before they are read, and by size.

A device reads without end (/dev/zero, /dev/urandom: until memory runs out), a directory
not at all, and a named pipe waits in ``open`` for a writer that may never come: only a
regular file is read, or a pipe where the caller reads its input once from one (the
command line's DATA, ``<(zcat d.csv.gz)``). A file is opened before it is checked (the
check is of what was opened, not of a path that may change in between), without waiting
on a pipe, and read up to the size limit and no further, so that a file that grows, or
one of /proc whose size says 0, stops there too.
"""
import os
import select
import stat

# the largest rules document read from a file: 14 times the JSON of a tree of 50,000 boxes
# (18 MiB), far beyond any explanation a fit prints
MAX_RULES_BYTES = 256 * 1024 * 1024

_CHUNK = 1 << 20  # bytes read at a time up to a limit
_WAIT = 0.1  # seconds a pipe is waited for before the main thread looks at its signals again


class FileReadError(ValueError):
    """A path that cannot be read as the file asked for: its message is one line that
    names the path and why (no such file, a directory, a device, too large)."""


def _refused_kind(mode, path, what, pipes):
    """Why a file of this mode is not read (None: it is read)."""
    if stat.S_ISDIR(mode):
        return f"{path} is a directory, not a {what}"
    if stat.S_ISREG(mode) or (pipes and stat.S_ISFIFO(mode)):
        return None
    kinds = "a device or socket" if pipes else "a device, socket or named pipe"
    return f"{path} is not a regular file ({kinds}), not a {what}"


def _size_text(n):
    return f"{n / 1024 ** 2:.0f} MiB" if n >= 1024 ** 2 else f"{n} bytes"


def read_file_bytes(path, what, max_bytes=None, pipes=False):
    """Return the bytes of a regular file (or of a pipe, where pipes allows one).

    Parameters
    ----------
    path : str or os.PathLike
        The file.
    what : str
        What the file is, as the messages name it ("rules file").
    max_bytes : int, default=None
        The most bytes read; a larger file is refused. None: no limit.
    pipes : bool, default=False
        Whether a named pipe (or a process substitution) is read; otherwise it is
        refused before anything waits on it.

    Returns
    -------
    bytes
        The file's bytes.

    Raises
    ------
    FileReadError
        A ValueError saying why the path is not read: missing, a directory, a device
        (or a pipe), larger than max_bytes, or an error of the operating system.
    """
    shown = os.fsdecode(path)
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise FileReadError(f"no such {what}: {shown}") from None
    except (OSError, ValueError) as exc:  # (ValueError: a NUL in the path)
        raise FileReadError(f"cannot read {shown}: {getattr(exc, 'strerror', None) or exc}") from None
    refused = _refused_kind(mode, shown, what, pipes)
    if refused:  # (before open: opening a pipe waits for its writer)
        raise FileReadError(refused)
    # a pipe put in the path's place since: opened without waiting, refused below
    flags = os.O_RDONLY | getattr(os, "O_BINARY", 0) | getattr(os, "O_CLOEXEC", 0)
    if not stat.S_ISFIFO(mode):
        flags |= getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise FileReadError(f"cannot read {shown}: {exc.strerror or exc}") from None
    with open(fd, "rb", closefd=True) as f:
        try:
            opened = os.fstat(fd)
            refused = _refused_kind(opened.st_mode, shown, what, pipes)
            if refused:
                raise FileReadError(refused)
            if max_bytes is None:
                return _read_pipe(fd) if stat.S_ISFIFO(opened.st_mode) else f.read()
            if opened.st_size > max_bytes:
                raise FileReadError(_too_large(shown, what, max_bytes))
            chunks, size = [], 0
            while size <= max_bytes:  # (a file that says 0 bytes, or grows, stops at the limit)
                chunk = f.read(min(_CHUNK, max_bytes + 1 - size))
                if not chunk:
                    break
                chunks.append(chunk)
                size += len(chunk)
        except OSError as exc:
            raise FileReadError(f"cannot read {shown}: {exc.strerror or exc}") from None
    if size > max_bytes:
        raise FileReadError(_too_large(shown, what, max_bytes))
    return b"".join(chunks)


def _read_pipe(fd):
    """All of a pipe's bytes, waiting for them at most _WAIT seconds at a time: a Ctrl-C that
    another thread received (the kernel sends SIGINT to any thread of the process) would not
    wake a read blocked in the main thread, and Python raises KeyboardInterrupt there only
    between two waits."""
    chunks = []
    while True:
        ready, _, _ = select.select([fd], [], [], _WAIT)
        if not ready:
            continue
        chunk = os.read(fd, _CHUNK)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def _too_large(shown, what, max_bytes):
    return f"{shown} is larger than a {what} may be ({_size_text(max_bytes)})"
