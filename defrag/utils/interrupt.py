"""Fits that stop on Ctrl-C within a second and leave the estimator as it was.

Python runs signal handlers in the main thread, between two bytecodes: while a C
kernel runs there, KeyboardInterrupt waits until the kernel returns (44 s for a
restart on 1,000,000 rows), and kernels in other threads (the restarts' pool) run on
after it. So while an estimator's fit runs in the main thread, each kernel reads the
fit's stop flag (a one-element int32 array, src_c/dfg_common.h) between units of work,
and a watcher thread sets it when SIGINT arrives: Python's C-level signal handler
writes the signal's number to the wakeup file descriptor (signal.set_wakeup_fd) at
once, whatever the main thread is doing, and the watcher reads it there. The kernels
return DFG_EINTERRUPTED, the Cython call lets Python's handler raise the
KeyboardInterrupt (PyErr_CheckSignals), no further kernel starts, the fit unwinds and
frees its arrays; the decorator puts the estimator's attributes back as they were and
clears the locals of the fit's frames in the traceback (a REPL keeps the last one).

The fit itself stays in the calling thread (its debugger, profiler, thread-local
settings and OpenMP limits are those of the caller), and Python code between kernels
is interrupted by Python as always. The watcher acts on SIGINT while its handler is
Python's default one (KeyboardInterrupt: scripts, the REPL, Jupyter's cells); a
program with a handler of its own decides itself what SIGINT does, and the kernels
then run to their end as before. A fit in another thread is not interrupted by
signals (Python delivers them to the main thread only).
"""
import contextvars
import functools
import numbers
import os
import signal
import socket
import threading
import traceback

import numpy as np

from . import _common
from .threads import fit_threads, threads_now

KernelInterrupted = _common.KernelInterrupted


def stop_requested():
    """Whether the fit this context works for has been asked to stop."""
    flag = _common.STOP_FLAG.get()
    return flag is not None and bool(flag[0])


def check_interrupt():
    """KernelInterrupted when the fit this context works for has been asked to stop:
    for Python code that runs long between kernel calls in a thread of the fit other
    than the main one (signals interrupt only the main thread's Python code)."""
    if stop_requested():
        raise KernelInterrupted("defrag: the fit was stopped")


def copy_context_run(fn):
    """fn wrapped to run in a copy of the current context (the stop flag and the
    threads of the fit): for the tasks a fit hands to a thread pool, e.g.
    ``pool.submit(copy_context_run(job), i)``."""
    return functools.partial(contextvars.copy_context().run, fn)


class SigintWatcher:
    """Sets the stop flags of the main thread's fits when SIGINT arrives, from a thread of
    its own woken through the wakeup file descriptor (see the module's docstring).
    ``watch(flag)`` / ``unwatch(flag)`` in the main thread around a fit; the wakeup
    descriptor another owner had set (asyncio's) gets back its place when no fit runs,
    and every signal number read meanwhile is handed on to it."""

    def __init__(self):
        self._lock = threading.Lock()
        self._flags = []
        self._reader = self._writer = None
        self._previous = -1  # the wakeup descriptor before ours

    def watch(self, flag):
        with self._lock:
            if self._reader is None:
                self._reader, self._writer = socket.socketpair()
                self._writer.setblocking(False)
                threading.Thread(target=self._run, args=(self._reader,), name="defrag-sigint",
                                 daemon=True).start()
            first = not self._flags
            self._flags.append(flag)
        if first:
            try:
                self._previous = signal.set_wakeup_fd(self._writer.fileno(), warn_on_full_buffer=False)
            except (ValueError, OSError):  # not the main thread, or no such descriptor here
                self._previous = None

    def unwatch(self, flag):
        with self._lock:
            kept = [f for f in self._flags if f is not flag]
            if len(kept) == len(self._flags):  # not watched: nothing to give back
                return
            self._flags = kept
            last = not kept
        if last and self._previous is not None:
            previous, self._previous = self._previous, -1
            signal.set_wakeup_fd(previous)

    def _run(self, reader):
        while True:
            try:
                data = reader.recv(512)
            except OSError:
                return
            if not data:
                return
            if signal.SIGINT in data and signal.getsignal(signal.SIGINT) is signal.default_int_handler:
                with self._lock:
                    for flag in self._flags:
                        flag[0] = 1
            previous = self._previous
            if previous is not None and previous >= 0:
                try:
                    os.write(previous, data)
                except OSError:
                    pass

    def after_fork_in_child(self):
        """The child has no watcher thread: a fresh start, the wakeup descriptor given back
        to its owner if a fit was watched when the process forked."""
        previous, watching = self._previous, bool(self._flags)
        self.__init__()
        if watching and previous is not None:
            try:
                signal.set_wakeup_fd(previous)
            except (ValueError, OSError):
                pass


SIGINT_WATCHER = SigintWatcher()
if hasattr(os, "register_at_fork"):  # POSIX
    os.register_at_fork(after_in_child=SIGINT_WATCHER.after_fork_in_child)


def _wanted_threads(estimator, threads):
    """The threads a fit asks for: threads(estimator) (all the threads there are when
    threads is None); 1 when the estimator's parameter is not a valid count (its fit
    then says so)."""
    if threads is None:
        return threads_now()
    try:
        wanted = threads(estimator)
    except (TypeError, ValueError, AttributeError):
        return 1
    if isinstance(wanted, bool) or not isinstance(wanted, numbers.Integral) or wanted < 1:
        return 1
    return int(wanted)


def _top_level_fit(fit, estimator, threads, args, kwargs):
    """fit with a stop flag (watched for SIGINT in the main thread) and its threads."""
    flag = np.zeros(1, dtype=np.int32)
    main = threading.current_thread() is threading.main_thread()
    token = _common.STOP_FLAG.set(flag)
    try:
        if main:
            SIGINT_WATCHER.watch(flag)
        with fit_threads(_wanted_threads(estimator, threads)):
            return fit(estimator, *args, **kwargs)
    finally:
        if main:
            SIGINT_WATCHER.unwatch(flag)
        _common.STOP_FLAG.reset(token)


def interruptible_fit(threads=None):
    """Decorator for an estimator's fit. The fit holds its threads of the process's core
    budget (utils/threads.py: threads(estimator) of them, all there are when None) while
    it runs; in the main thread its kernels stop within a second on Ctrl-C. When it
    raises, interrupted or not, the estimator's attributes are put back as they were
    before the call: a fit either completes or leaves no trace. A fit called inside
    another (in its context) shares that one's threads and stop flag."""

    def decorate(fit):
        @functools.wraps(fit)
        def wrapper(self, *args, **kwargs):
            before = dict(vars(self))
            try:
                if _common.THREAD_GRANT.get() is not None:  # inside a fit: its threads and flag
                    return fit(self, *args, **kwargs)
                return _top_level_fit(fit, self, threads, args, kwargs)
            except BaseException as exc:
                vars(self).clear()
                vars(self).update(before)
                if isinstance(exc, KeyboardInterrupt):
                    # the frames of the stopped fit hold its arrays (ranks, responsibilities),
                    # and an interactive session keeps the last traceback: drop their locals
                    traceback.clear_frames(exc.__traceback__)
                raise

        return wrapper

    return decorate
