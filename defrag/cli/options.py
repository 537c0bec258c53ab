"""Argument types and the options several commands share."""
import argparse


def _whole(text):
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None


def positive_int(text):
    value = _whole(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def non_negative_int(text):
    value = _whole(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be at least 0, got {value}")
    return value


def n_jobs(text):
    value = _whole(text)
    if value == 0:
        raise argparse.ArgumentTypeError("must be a positive number of threads, or -1 for all cores")
    return value


def common_options(parser):
    """--n-jobs, --seed and --quiet, for the commands that fit."""
    parser.add_argument("--n-jobs", type=n_jobs, default=-1, metavar="N",
                        help="threads for the restarts (default -1: all cores)")
    parser.add_argument("--seed", type=int, default=0, metavar="S", help="random seed (default 0)")
    parser.add_argument("--quiet", action="store_true", help="no progress on standard error")
