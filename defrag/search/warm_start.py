"""A warm start (``reference_rules``): yesterday's explanation edited on today's rows.

The reference (a tree; a list is the tree whose "then" branches are its rules) is read as
steps over the search's split literals (search/tree_path.py's representation of a grown tree:
step t splits node ``leaf`` by a box into nodes 2t + 1 and 2t + 2): each numeric bound of a
condition becomes the literal of today's split of its feature with the nearest threshold
(a bound that no search row separates from it is kept as it was printed), a category set
the literal of today's split of that set. Where a bound has no split of its feature today
the reference cannot be edited: its regions are read as they are, outputs re-estimated.

The edits (``edit_steps``), top-down on the rows of a fit (a fold's training part, or all
the search rows), each only where it pays more than its price, the fit's ``reference_edit_price``
(0.02 by default) times the squared error of those rows about their mean (the
targets the trees are grown on, T):

- *moved*: a literal of a box replaced by another of its group (the same feature and side:
  another threshold) where that raises the box's drop of the squared error (CART's) by
  more than the price;
- *removed*: a box that leaves a side with fewer rows than a region keeps, or whose split
  and every split below it together drop the squared error by less than the weakest split
  of the tree the search picks otherwise (the floor, relative to the rows' squared error),
  becomes a leaf: the regions below it are one (a removal gains nothing on the rows it is
  fitted on, so it pays no price);
- *added*: a leaf whose best box (the tree kernel's, one split) drops the loss by more than
  the floor plus the price is split.

A leaf's outputs are re-estimated (the mean of the outputs U over its rows) where they
differ from the reference's by more than OUTPUT_Z standard errors of that mean (per class
share in classification, where the printed class changes or a share moves that much), else
kept as printed: a retrain moves every mean a little, which is not a change of the model.

Honest scores: the edits are made on each fold's training part and the edited tree scored
on its validation rows, as every searched candidate is (search/tree_path.py), so the
reference's score is never in-sample; then made once more on all the search rows for the
tree printed.
"""
import copy
import math

import numpy as np

from ..rules import RuleSet
from ..rules.tree import Leaf, Node, RuleTree
from ..splits.table import NOT_IN_SET, NUMERIC

# A leaf's outputs are re-estimated where they are more than this many standard errors of
# the new mean from the reference's.
OUTPUT_Z = 2.0


# --------------------------------------------------------------------- the reference
def reference_tree(reference, names, classes):
    """The reference's RuleTree (a list: the tree whose "then" branches are its rules),
    checked against the fit's features (names) and classes (None: regression):
    ValueError naming the difference."""
    theirs = reference.feature_names
    if theirs is not None and list(theirs) != list(names):
        if len(theirs) != len(names):
            raise ValueError(f"reference_rules are over {len(theirs)} features; this fit has {len(names)}")
        i = next(i for i in range(len(names)) if theirs[i] != names[i])
        raise ValueError(f"reference_rules are over other features: feature {i} is {theirs[i]!r} there and "
                         f"{names[i]!r} here")
    used = [c.feature for c in _conditions_of(reference)]
    if used and max(used) >= len(names):
        raise ValueError(f"reference_rules read feature {max(used)}; this fit has {len(names)} features")
    if (reference.classes is None) != (classes is None) or (
            classes is not None and not np.array_equal(np.asarray(reference.classes), np.asarray(classes))):
        what = "values" if reference.classes is None else f"classes {list(reference.classes)}"
        here = "values" if classes is None else f"classes {list(classes)}"
        raise ValueError(f"reference_rules predict {what}; this fit predicts {here}")
    if isinstance(reference, RuleSet):
        node = Leaf(reference.default_prediction, reference.default_proba)
        for rule in reversed(reference.rules):  # a rule of no condition covers every row: the rest is unread
            node = Node(rule.conditions, Leaf(rule.prediction, rule.proba), node) if rule.conditions else \
                Leaf(rule.prediction, rule.proba)
        return RuleTree([node], feature_names=reference.feature_names, classes=reference.classes,
                        supports_missing=reference.supports_missing, encoding=reference.encoding)
    if reference.form == "sum":
        raise ValueError("reference_rules: a sum of trees cannot warm-start a fit yet; give a tree of rules or "
                         "a list")
    return reference


def _conditions_of(reference):
    if isinstance(reference, RuleSet):
        return [c for r in reference.rules for c in r.conditions]
    return [c for n in reference.nodes() for c in n.conditions]


def reference_literals(root, splits, X):
    """{id(node): (literals, exact)} for every Node under root: its box as literals of the
    split table (see the module's docstring), exact where no row of X (coded) lies between
    a bound and its literal's threshold; None where a condition has no literal today."""
    L = len(splits)
    out = {}

    def nearest(feature, bound, missing_right):
        # numeric splits of the feature, those sending NaN the way the condition does first
        at = np.flatnonzero((splits.feature == feature) & (splits.kind == NUMERIC))
        if at.size == 0:
            return None
        same = at[splits.missing_right[at].astype(bool) == missing_right]
        at = same if same.size else at
        return int(at[np.argmin(np.abs(splits.threshold[at] - bound))])

    def literals_of(conditions):
        lits, exact = [], True
        for c in conditions:
            if c.categories is not None:
                wanted = set(np.asarray(c.categories).tolist())
                found = [l for l in np.flatnonzero((splits.feature == c.feature) & (splits.kind != NUMERIC)).tolist()
                         if set(np.asarray(splits.set_of(l)).tolist()) == wanted]
                if not found:
                    return None
                l = found[0]
                # literal l: s_l = 1 (in the set, or not in it for a NOT_IN_SET split)
                holds_in = splits.kind[l] != NOT_IN_SET
                lits.append(l if holds_in != bool(c.negated) else L + l)
                continue
            for bound, side in ((c.lower, 0), (c.upper, 1)):
                if bound is None:
                    continue
                # lower: x > t (literal l, NaN right where the condition takes it); upper: x <= t
                l = nearest(c.feature, bound, bool(c.missing) == (side == 0))
                if l is None:
                    return None
                t = float(splits.threshold[l])
                x = X[:, c.feature]
                exact &= not np.any((x > min(t, bound)) & (x <= max(t, bound)))
                lits.append(l + side * L)
        return sorted(lits), exact

    def visit(item):
        if isinstance(item, Leaf):
            return True
        box = literals_of(item.conditions)
        if box is None:
            return False
        out[id(item)] = box
        return visit(item.then) and visit(item.otherwise)

    return out if visit(root) else None


# --------------------------------------------------------------------- edits
def literal_columns(S, literals, rows=None):
    """The truth of each literal (columns) on the rows of S (all where rows is None): l < L
    is s_l = 1, L + l is s_l = 0."""
    L = S.shape[1]
    literals = np.asarray(literals, dtype=np.int64)
    cols = S[:, literals % L] if rows is None else S[np.ix_(rows, literals % L)]
    return np.where(literals < L, cols, ~cols)


def split_drops(T, then, min_leaf):
    """CART's drop of the squared error of T (n, d) when its rows split into then (n, k:
    one column per candidate) and the rest: (k,), -inf where a side has fewer than min_leaf."""
    n = T.shape[0]
    total = T.sum(axis=0)
    n1 = then.sum(axis=0).astype(np.float64)
    s1 = then.T.astype(np.float64) @ T
    n0, s0 = n - n1, total - s1
    with np.errstate(divide="ignore", invalid="ignore"):
        drop = (s1 ** 2).sum(axis=1) / n1 + (s0 ** 2).sum(axis=1) / n0 - float((total ** 2).sum()) / max(n, 1)
    return np.where((n1 >= min_leaf) & (n0 >= min_leaf), drop, -np.inf)


def squared_error(T):
    return float(((T - T.mean(axis=0)) ** 2).sum()) if T.shape[0] else 0.0


def moved_box(S, rows, T, box, group, min_leaf, price):
    """(box, drop, moves) on the rows of S: each literal of box in turn replaced by the one
    of its group whose box drops the squared error of T (those rows') most, where that drops
    it by more than price more."""
    box = list(box)
    moves = 0
    cols = literal_columns(S, box, rows)
    drop = float(split_drops(T, cols.all(axis=1, keepdims=True), min_leaf)[0])
    for i in range(len(box)):  # over the box's literals
        others = np.delete(cols, i, axis=1).all(axis=1)
        members = np.flatnonzero(group == group[box[i]])
        drops = split_drops(T, others[:, None] & literal_columns(S, members, rows), min_leaf)
        j = int(np.argmax(drops))
        if drops[j] > drop + price and int(members[j]) != box[i]:
            box[i], drop, moves = int(members[j]), float(drops[j]), moves + 1
            cols[:, i] = literal_columns(S, [box[i]], rows)[:, 0]
    return sorted(box), drop, moves


class EditedSteps:
    """The reference edited on some rows: ``steps`` (leaf, box) as a grown tree's (step t
    splits node leaf into 2t + 1 and 2t + 2, a node before its children); ``kept``: node id
    -> the reference's Node whose box it tests unmoved; ``leaves``: leaf node id -> the
    reference's Leaf it is, or None (a region an edit made); ``counts`` of the edits
    (moved literals, removed and added regions)."""

    def __init__(self):
        self.steps, self.kept, self.leaves = [], {}, {}
        self.counts = dict(moved=0, removed=0, added=0)


def edit_steps(root, literals, S, rows, T, grow, group, min_leaf, floor, price):
    """The EditedSteps of the reference (root; literals: reference_literals') on the rows of
    S (T: those rows' targets): see the module's docstring. grow(local) is the kernel's best
    box of rows[local] (or None); floor and price are drops of the squared error (absolute)."""
    out = EditedSteps()

    def split(v, box, local):
        t = len(out.steps)
        out.steps.append((v, box))
        holds = literal_columns(S, box, rows[local]).all(axis=1)
        return (2 * t + 1, local[holds]), (2 * t + 2, local[~holds])

    def leaf(v, local, item):
        if local.size >= 2 * min_leaf:
            box = grow(local)
            if box is not None:
                drop = float(split_drops(T[local], literal_columns(S, box, rows[local]).all(axis=1, keepdims=True),
                                         min_leaf)[0])
                if drop > floor + price:
                    out.counts["added"] += 1
                    for w, _ in split(v, box, local):
                        out.leaves[w] = None
                    return
        out.leaves[v] = item

    def subtree_error(item, local):
        # the squared error left in the reference's leaves below item, on these rows
        if isinstance(item, Leaf):
            return squared_error(T[local])
        holds = literal_columns(S, literals[id(item)][0], rows[local]).all(axis=1)
        return subtree_error(item.then, local[holds]) + subtree_error(item.otherwise, local[~holds])

    def visit(v, item, local):
        if isinstance(item, Leaf):
            return leaf(v, local, item)
        box, drop, moves = moved_box(S, rows[local], T[local], literals[id(item)][0], group, min_leaf, price)
        # removed where a side is too small, or where the split and every split below it
        # together drop the loss by less than the weakest split the search keeps (a split
        # of its own may drop little where the ones below pay: an XOR's first)
        if drop == -np.inf or squared_error(T[local]) - subtree_error(item, local) < floor:
            out.counts["removed"] += _leaves_under(item) - 1
            return leaf(v, local, None)
        out.counts["moved"] += moves
        if moves == 0:
            out.kept[v] = item
        (a, then), (b, other) = split(v, box, local)
        visit(a, item.then, then)
        visit(b, item.otherwise, other)

    visit(0, root, np.arange(rows.size))
    return out


def _leaves_under(item):
    return 1 if isinstance(item, Leaf) else _leaves_under(item.then) + _leaves_under(item.otherwise)


def step_sides(S, rows, steps, node):
    """Per step of the tree of steps, on the rows of S: (at, holds), the positions in rows
    of the split node's rows and where its box holds on them; node (zeros, one per row) is
    left holding each row's leaf."""
    for t, (v, box) in enumerate(steps):  # over the steps, not rows
        at = np.flatnonzero(node == v)
        holds = literal_columns(S, box, rows[at]).all(axis=1)
        node[at] = np.where(holds, 2 * t + 1, 2 * t + 2)
        yield at, holds


def route_steps(S, rows, steps):
    """Each row's leaf (node id) in the tree of steps, for the rows of S."""
    node = np.zeros(rows.size, dtype=np.int64)
    for _ in step_sides(S, rows, steps, node):
        pass
    return node


def weakest_split(S, T, steps):
    """The smallest drop of the squared error of T among the splits of the tree of steps
    (on all rows of S), as a share of T's squared error about its mean: inf without splits."""
    sse = squared_error(T)
    drops = [split_drops(T[at], holds[:, None], 1)[0]
             for at, holds in step_sides(S, np.arange(S.shape[0]), steps, np.zeros(S.shape[0], dtype=np.int64))]
    return min(drops) / sse if drops and sse > 0 else math.inf


def leaf_outputs(node, U, leaves, classes, n_classes):
    """leaf node id -> (prediction, probabilities or None) of every leaf (leaves: node id ->
    the reference's Leaf or None), node the rows' leaves, U their outputs: the mean of U
    over the leaf's rows, or the reference's leaf's outputs where the mean is within
    OUTPUT_Z standard errors of them (see the module's docstring); a leaf without rows keeps
    the reference's, or takes the mean of all rows."""
    overall = U.mean(axis=0) if U.shape[0] else np.zeros(U.shape[1])
    out = {}
    for v, old in leaves.items():  # over leaves, not rows
        rows = node == v
        count = int(np.count_nonzero(rows))
        mean = np.add.reduce(U[rows], axis=0) / count if count else overall
        if old is not None and (count == 0 or _within(old, mean, U[rows], count, classes, n_classes)):
            out[v] = (old.prediction, old.proba)
        elif n_classes:
            out[v] = (classes[int(np.argmax(mean))], mean / max(mean.sum(), 1e-300))
        else:
            out[v] = (float(mean[0]), None)
    return out


def _within(old, mean, U_rows, count, classes, n_classes):
    if n_classes:
        if np.asarray(old.prediction).item() != np.asarray(classes[int(np.argmax(mean))]).item():
            return False
        if old.proba is None:
            return True
        se = np.sqrt(mean * (1.0 - mean) / count)
        return bool(np.all(np.abs(np.asarray(old.proba, dtype=np.float64) - mean) <= OUTPUT_Z * se + 1e-12))
    se = float(np.std(U_rows[:, 0]) / math.sqrt(count)) if count > 1 else math.inf
    return abs(float(old.prediction) - float(mean[0])) <= OUTPUT_Z * se + 1e-12


def edited_tree(edited, literals, values, read, names):
    """The RuleTree of EditedSteps: a box of the reference that no edit moved, and whose
    bounds no search row tells apart from today's thresholds, prints its conditions as they
    were; any other box as read out today (read: box -> conditions), so that the tree
    printed routes rows as the edits scored them; leaves values[node]."""
    split_of = {v: (t, box) for t, (v, box) in enumerate(edited.steps)}

    def build(v):
        if v in split_of:
            t, box = split_of[v]
            item = edited.kept.get(v)
            if item is not None and literals[id(item)][1]:
                conditions = [copy.copy(c) for c in item.conditions]
            else:
                conditions = read[tuple(box)]
            return Node(conditions, build(2 * t + 1), build(2 * t + 2), key=v)
        return Leaf(*values[v], key=v)

    return RuleTree([build(0)], **names)


def warm_start(reference, p, splits, X, S, T, U, y_s, n_classes, folds, group, grow, min_leaf, floor, price,
               read_out):
    """The edited reference: (tree, losses, counts), losses per search row as the searched
    trees' (each fold's validation rows scored by the tree edited on its training part;
    None without folds: (parts, held_out) index lists, possibly empty), counts the edits of
    the tree printed (moved, removed, added). X: the search rows, coded; S, T, U: their
    split sides (splits: the search's split table), growth targets and outputs; y_s the
    fit's targets (class codes, or values); grow(rows) the kernel's best box of those rows
    or None; min_leaf(n): the rows a region keeps at least of n; floor: the weakest split's
    drop as a share of the rows' squared error; price: an edit's, likewise;
    read_out(boxes) -> {box: conditions}. None where a condition of the reference has no
    literal today."""
    tree = reference_tree(reference, p.names, p.classes if n_classes else None)
    root = tree.terms[0]
    literals = reference_literals(root, splits, X)
    if literals is None:
        return None
    classes = p.classes

    def edit(rows):
        sse = squared_error(T[rows])
        edited = edit_steps(root, literals, S, rows, T[rows], lambda local: grow(rows[local]), group,
                            min_leaf(rows.size), floor * sse, price * sse)
        node = route_steps(S, rows, edited.steps)
        return edited, leaf_outputs(node, U[rows], edited.leaves, classes, n_classes)

    parts, held_out = folds
    losses = None
    if parts:
        losses = np.empty(S.shape[0])
        for tr, va in zip(parts, held_out):  # over folds
            edited, values = edit(tr)
            losses[va] = _losses(values, route_steps(S, va, edited.steps), y_s[va], classes, n_classes)
    edited, values = edit(np.arange(S.shape[0]))
    read = read_out(sorted({tuple(b) for _, b in edited.steps}))
    return edited_tree(edited, literals, values, read, _names(p)), losses, edited.counts


def _losses(values, node, y, classes, n_classes):
    """The searched trees' losses of rows in leaves node (values: leaf -> outputs): the 0/1
    error of the printed class (y class codes), or the squared error."""
    keys = np.array(sorted(values))
    if n_classes:
        code = {c: k for k, c in enumerate(np.asarray(classes).tolist())}
        out = np.array([code[np.asarray(values[v][0]).item()] for v in keys])
    else:
        out = np.array([float(values[v][0]) for v in keys])
    predicted = out[np.searchsorted(keys, node)]
    return (predicted != y).astype(np.float64) if n_classes else (predicted - y) ** 2


def reference_regions(reference, p, X, y_s, U, n_classes, folds):
    """warm_start's result where the reference cannot be edited: its regions as they are on
    X (coded), outputs re-estimated as leaf_outputs does, cross-validated on the folds."""
    tree = reference_tree(reference, p.names, p.classes if n_classes else None)
    region = tree.route(X)[:, 0]
    old = tree.leaves()
    leaves = dict(enumerate(old))
    parts, held_out = folds
    losses = None
    if parts:
        losses = np.empty(X.shape[0])
        for tr, va in zip(parts, held_out):  # over folds
            values = leaf_outputs(region[tr], U[tr], leaves, p.classes, n_classes)
            losses[va] = _losses(values, region[va], y_s[va], p.classes, n_classes)
    values = leaf_outputs(region, U, leaves, p.classes, n_classes)
    number = {id(lf): i for i, lf in enumerate(old)}
    key = iter(range(10 ** 9))  # nodes numbered in reading order

    def copied(item):
        if isinstance(item, Leaf):
            return Leaf(*values[number[id(item)]], key=next(key))
        return Node([copy.copy(c) for c in item.conditions], copied(item.then), copied(item.otherwise),
                    key=next(key))

    return RuleTree([copied(tree.terms[0])], **_names(p)), losses, dict(moved=0, removed=0, added=0)


def _names(p):
    return dict(feature_names=p.names, classes=p.classes, supports_missing=p.splits.supports_missing,
                encoding=p.splits.encoding)
