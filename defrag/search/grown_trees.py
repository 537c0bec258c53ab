"""The trees of a grown path as printed (search/tree_path.py grows them): each price's
steps, the boxes read out and the nodes' values, from which the tree of any size is built
when it is read, sibling leaves of one class merged; and a sum of trees from its steps and
backfitted values."""
import dataclasses

import numpy as np

from ..rules.conditions import comparisons
from ..rules.tree import Leaf, Node, RuleTree


@dataclasses.dataclass
class GrownTrees:
    """Each price's tree as grown on all the search rows, from which the tree candidate of
    any size is built when it is read (``tree``): its steps (leaf, box), the boxes as read
    out (box -> Rule), each node's values as a leaf (``leaf_values``) and the RuleTree's
    names. A fit builds only the trees it prints."""

    steps: dict  # price -> [(leaf, box)]
    read: dict  # box (literals) -> its conditions as read out
    values: dict  # price -> {node: (prediction, probabilities or None)}
    names: dict
    merged: dict = dataclasses.field(default_factory=dict)  # (price, steps) -> kept's steps

    def tree(self, price, size):
        return tree_of(self.kept(price, size), self.read, self.values[price], self.names)

    def kept(self, price, size):
        """The steps of the tree of size regions as printed: a step whose two sides end
        in leaves that print the same class is one leaf (classification); once per tree."""
        key = (price, min(size - 1, len(self.steps[price])))
        if key not in self.merged:
            self.merged[key] = merged_steps(self.steps[price][:key[1]], self.values[price])
        return self.merged[key]

    def n_regions(self, price, size):
        return len(self.kept(price, size)) + 1

    def n_conditions(self, price, size):
        """The tree's printed comparisons (RuleTree.n_conditions), without building it."""
        return int(sum(comparisons(c) for _, box in self.kept(price, size) for c in self.read[tuple(box)]))

    def labels(self, price, size):
        """The predictions its leaves print."""
        kept = self.kept(price, size)
        original = getattr(kept, "original", None)  # renumbered where leaves merged
        inner = {leaf for leaf, _ in kept}
        nodes = {0} | {c for t in range(len(kept)) for c in (2 * t + 1, 2 * t + 2)}
        return [self.values[price][v if original is None else original[v]][0] for v in nodes - inner]


def leaf_values(means, classes, n_classes):
    """Each node's (prediction, class probabilities or None) as a leaf, from its mean target
    vector (the tree kernel's node outputs): once per node for the trees of every size."""
    if n_classes:
        return {v: (classes[int(np.argmax(out))], out / max(out.sum(), 1e-300)) for v, out in means.items()}
    return {v: (float(out[0]), None) for v, out in means.items()}


def merged_steps(steps, values):
    """steps (leaf, box) without those whose two sides end in leaves of one class, as
    (leaf, box) with each kept step's children renumbered as tree_of reads them (step t
    splits into 2t + 1 and 2t + 2); a removed step's node becomes a leaf of its own value
    (the mean over both sides' rows, whose most probable class is theirs). Regression
    (values without probabilities): steps as they are."""
    if not steps or next(iter(values.values()))[1] is None:
        return list(steps)
    split_of = {leaf: t for t, (leaf, _) in enumerate(steps)}
    merged = set()

    def label(v):  # the class a node prints as a leaf once merged, or None for a node
        if v not in split_of:
            return values[v][0]
        t = split_of[v]
        a, b = label(2 * t + 1), label(2 * t + 2)
        if a is not None and b is not None and a == b:
            merged.add(t)
            return a
        return None

    label(0)
    if not merged:
        return list(steps)
    # renumber: kept step k splits node v into 2k + 1 and 2k + 2, read by tree_of
    kept, number = [], {0: 0}
    for t, (leaf, box) in enumerate(steps):  # steps in growth order: a node before its children
        if t in merged or leaf not in number:
            continue
        k = len(kept)
        kept.append((number[leaf], box))
        number[2 * t + 1], number[2 * t + 2] = 2 * k + 1, 2 * k + 2
    return Renumbered(kept, {new: old for old, new in number.items()})


class Renumbered(list):
    """Kept steps renumbered, with the original node of each new number (``original``)."""

    def __init__(self, steps, original):
        super().__init__(steps)
        self.original = original


def tree_of(steps, read, values, names):
    """The RuleTree of steps (leaf, box): boxes as read out (read: literals -> conditions),
    leaves the nodes' values (leaf_values)."""
    split_of = {leaf: (t, read[tuple(box)]) for t, (leaf, box) in enumerate(steps)}
    original = getattr(steps, "original", None)

    def build(v):
        key = v if original is None else original[v]
        if v in split_of:
            t, conditions = split_of[v]
            return Node(conditions, build(2 * t + 1), build(2 * t + 2), key=key)
        return Leaf(*values[key], key=key)

    return RuleTree([build(0)], **names)


def sum_of(steps, model, read, classes, n_classes, names):
    """The RuleTree (a sum) of additive steps (term, node, split l) and their model (base,
    values) backfitted on the search rows (additive_value_path): each split's condition the
    readout of its literal l (s_l = 1: the "then" branch)."""
    base, values = model
    terms = []
    for t in range(len(values)):
        splits = {nd: (k, l) for k, (nd, l) in enumerate([(nd, l) for (i, nd, l) in steps if i == t])}

        def build(v, splits=splits, t=t):
            if v in splits:
                k, l = splits[v]
                return Node(read[(l,)].conditions, build(2 * k + 1), build(2 * k + 2), key=v)
            return Leaf(float(np.asarray(values[t].get(v, 0.0)).ravel()[0]), key=v)

        terms.append(build(0))
    if not terms:
        terms = [Leaf(0.0)]
    return RuleTree(terms, base=float(np.asarray(base).ravel()[0]),
                    **{**names, "classes": classes if n_classes else None})
