"""The items of a tree of rules (rules/tree.py): its regions (``Leaf``), its boxes
(``Node``), the order a reader meets them in (``walk``), and how a sum of trees holds its
numbers (decimals of one unit, added as integers)."""
import numpy as np


class Leaf:
    """A region: its prediction (a class label or a value; in a sum, the value the term
    adds), class probabilities (a tree in classification), the training rows it holds
    (``support``) and their share (``share``, when known)."""

    __slots__ = ("prediction", "proba", "support", "share", "key")

    def __init__(self, prediction, proba=None, support=0, share=None, key=None):
        self.key = key  # where the fit grew it (the trees of a path share keys); not printed
        self.prediction = prediction
        self.proba = None if proba is None else np.asarray(proba, dtype=np.float64)
        self.support = int(support)
        self.share = None if share is None else float(share)

    def __repr__(self):
        return f"Leaf({self.prediction!r})"


class Node:
    """A box: ``conditions`` (all of them hold: ``then``, else ``otherwise``)."""

    __slots__ = ("conditions", "then", "otherwise", "key")

    def __init__(self, conditions, then, otherwise, key=None):
        self.key = key
        if not conditions:
            raise ValueError("a node of a rule tree tests at least one condition")
        self.conditions = list(conditions)
        self.then = then
        self.otherwise = otherwise

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


# A sum of trees holds its numbers (the first line's and the leaves') as decimals of a
# fixed number of places, prints them with exactly those places and adds them as integers
# of that unit: the text's arithmetic is predict's, digit for digit (a float sum of values
# rounded for printing would differ from the printed decimals' sum, and over two classes
# could land on the other side of 1/2). Two classes: probabilities to PROBABILITY_DECIMALS
# places; regression: SIGNIFICANT_DIGITS digits of the largest number.
PROBABILITY_DECIMALS = 4
SIGNIFICANT_DIGITS = 6


def sum_decimals(values, classification):
    """The decimal places of a sum of trees whose numbers are values (negative: a unit of
    a power of ten above one)."""
    if classification:
        return PROBABILITY_DECIMALS
    largest = float(np.max(np.abs(np.asarray(values, dtype=np.float64)), initial=0.0))
    if not largest > 0.0:
        return 0
    return int(SIGNIFICANT_DIGITS - 1 - np.floor(np.log10(largest)))


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
