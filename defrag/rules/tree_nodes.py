"""The items of a rule tree (rules/tree.py: a list, a tree or a sum): its regions (``Leaf``), its boxes
(``Node``), the order a reader meets them in (``walk``), and how a sum of trees holds its
numbers (decimals of one unit, added as integers)."""
import decimal

import numpy as np

# any double's decimal, exactly (rounded)
_EXACT = decimal.Context(prec=800, Emin=-2000, Emax=2000)


class Leaf:
    """A region: its prediction (a class label or a value; in a sum, the value the term
    adds), class probabilities (classification, but for a sum), the training rows it holds
    (``support``; None where unknown, a list's default before it is counted) and their
    share (``share``, when known); a list's rule's mixture weight (``weight``)."""

    __slots__ = ("prediction", "proba", "support", "share", "key", "weight")

    def __init__(self, prediction, proba=None, support=0, share=None, key=None, weight=0.0):
        self.key = key  # where the fit grew it (the trees of a path share keys); not printed
        self.prediction = prediction
        self.proba = None if proba is None else np.asarray(proba, dtype=np.float64)
        self.support = None if support is None else int(support)
        self.share = None if share is None else float(share)
        self.weight = float(weight)

    def __repr__(self):
        return f"Leaf({self.prediction!r})"


class Node:
    """A box: ``conditions`` (all of them hold: ``then``, else ``otherwise``; none: every
    row, a list's rule of no condition), and the share of the training rows it holds for
    (``coverage``, when known)."""

    __slots__ = ("conditions", "then", "otherwise", "key", "coverage")

    def __init__(self, conditions, then, otherwise, key=None, coverage=None):
        self.key = key
        self.conditions = list(conditions)
        self.then = then
        self.otherwise = otherwise
        self.coverage = None if coverage is None else float(coverage)

    def __repr__(self):
        return f"Node({' and '.join(map(str, self.conditions))})"


def walk(node):
    """The nodes and leaves of a tree in reading order: a node, its "then" subtree, its
    "else" subtree."""
    stack = [node]
    while stack:
        item = stack.pop()
        yield item
        if isinstance(item, Node):
            stack.append(item.otherwise)
            stack.append(item.then)


# The numbers an explanation prints are the numbers it predicts. A regression value is
# rounded to decimals chosen from the spread of the values it predicts (SPREAD_DIGITS
# significant digits of their range), never from their size: an offset (prices in cents,
# timestamps) keeps every difference between two regions that the range shows. A sum of
# trees holds its numbers (the first line's and the leaves') as decimals of one unit,
# prints them with exactly those places and adds them as integers of that unit: the
# text's arithmetic is predict's, digit for digit (a float sum of values rounded for
# printing would differ from the printed decimals' sum, and over two classes could land on
# the other side of 1/2). Two classes: probabilities to PROBABILITY_DECIMALS places.
PROBABILITY_DECIMALS = 4
SPREAD_DIGITS = 4
# the digits of the largest value where the values do not spread (one value, or all equal),
# and at least those of its integer part below 10**DOUBLE_DIGITS (a double holds them all)
SIGNIFICANT_DIGITS = 6
DOUBLE_DIGITS = 15
# a sum's integers of its unit stay below 2**53 (doubles hold them exactly) with room for
# adding its numbers: their count times the largest
EXACT_INTEGER = 2.0 ** 53


def _finite(values):
    values = np.asarray(values, dtype=np.float64).ravel()
    return values[np.isfinite(values)]


def spread_decimals(values, spread=None):
    """The decimal places (negative: a unit of a power of ten above one) that keep
    SPREAD_DIGITS significant digits of spread (default: the range of the finite values),
    or SIGNIFICANT_DIGITS of the largest value where the spread is 0 (at least the digits
    of its integer part)."""
    values = _finite(values)
    if spread is None:
        with np.errstate(over="ignore"):  # a range past the largest double: inf, read below
            spread = float(values.max() - values.min()) if values.size else 0.0
    if spread > 0.0 and np.isfinite(spread):
        return int(SPREAD_DIGITS - 1 - np.floor(np.log10(spread)))
    largest = float(np.max(np.abs(values), initial=0.0))
    if not largest > 0.0:
        return 0
    # every digit of the integer part where a double holds them all (a constant of
    # 123456789 is not printed as 123457000; 1.5e25 stays 1.5e+25, and no rounding up
    # passes the largest double)
    exponent = int(np.floor(np.log10(largest)))
    digits = SIGNIFICANT_DIGITS - 1 - exponent
    return max(digits, 0) if exponent < DOUBLE_DIGITS else digits


def sum_decimals(values, classification, spread=None):
    """(decimals, coarse): the decimal places of a sum of trees whose numbers are values
    (spread_decimals of spread, the range its total can take), at most as many as keep the
    integers of the unit exact (EXACT_INTEGER); coarse where that bound took places off
    (the values so large against their spread that the printed sum loses some of it)."""
    if classification:
        return PROBABILITY_DECIMALS, False
    decimals = spread_decimals(values, spread)
    values = _finite(values)
    total = float(np.sum(np.abs(values)))
    if total > 0.0:
        exact = int(np.floor(np.log10(EXACT_INTEGER / total)))
        if exact < decimals:
            return exact, True
    return decimals, False


def rounded(values, decimals):
    """values rounded to decimals places (negative: to a power of ten above one), each
    the double nearest to its decimal (non-finite values as they are)."""
    values = np.asarray(values, dtype=np.float64)
    if decimals is None:
        return values.copy()
    unit = decimal.Decimal(1).scaleb(-int(decimals))
    out = [float(decimal.Decimal(float(v)).quantize(unit, rounding=decimal.ROUND_HALF_EVEN, context=_EXACT))
           if np.isfinite(v) else float(v) for v in values.ravel()]  # over a tree's values, not rows
    return np.array(out, dtype=np.float64).reshape(values.shape)


def number_text(value):
    """The shortest text that reads back as the double value ("2", "152.3", "1e+20")."""
    text = repr(float(value))
    return text[:-2] if text.endswith(".0") else text


def to_units(values, decimals):
    """values as integers of the unit 10**-decimals (int64)."""
    values = np.asarray(values, dtype=np.float64)
    scaled = values * 10.0 ** decimals if decimals >= 0 else values / 10.0 ** -decimals
    return np.rint(scaled).astype(np.int64)


def from_units(units, decimals):
    """Integers of the unit 10**-decimals as the nearest float64 (a correctly rounded
    division or product of exact values)."""
    units = np.asarray(units, dtype=np.float64)
    return units / 10.0 ** decimals if decimals >= 0 else units * 10.0 ** -decimals
