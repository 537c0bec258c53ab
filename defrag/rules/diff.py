"""What changed between two explanations (``RuleTree.diff``, any forms): regions
kept, changed (the same conditions with moved thresholds), added and removed, and on rows
X the share whose prediction changed and whose region changed, and the rows that moved
between which regions.

A region is described by the conditions a row meets on its way there: down a tree, each
box with the branch taken (the box holds, or not); a rule of a list, its own conditions
(the rules above it failing is the list's order); a list's default, "otherwise". The parts
of two sums of trees are paired by the regions they share (a part may have moved). Two
regions (of paired parts) are

- *kept* where their descriptions are equal (their predictions may differ: a refit's);
- *changed* where they test the same features the same way (the same branches, the same
  bounds present, the same category sets) with other thresholds; the moves are listed;
- else the old one is *removed* and the new one *added*.

Regions match in reading order: the first old region with a description is matched with
the first new one of the same description, and so on. A row's region changed where the new
explanation puts it in a region that is not the match of its old one (an unmatched region's
rows all changed).

The text leads with the headline: on X, the share of rows whose prediction changed (in
regression with the mean and largest absolute change over the rows, and the tolerance), then
the regions' counts (kept, changed, added, removed), then the details. In regression a
prediction changed where it moved by more than the tolerance, ``tol``; by default
(``tol=None``) RELATIVE_TOL of the spread of the old explanation's predictions: their
standard deviation on X, or without X the range of its values (a sum's: its parts' ranges
added up, the widest its predictions can spread); the new explanation's where the old one's
is 0 (a single region). A kept region's prediction reads as moved likewise.

The report (the text, its HTML, the JSON document and its schema) is rules/diff_report.py's
ExplanationDiff. This module reads both explanations through their attributes (a tree's or a sum's
``terms``, a list's ``rules``) and does not import the class, which imports it for its
``diff``.
"""
import bisect
import heapq

import numpy as np

from .diff_report import JSON_SCHEMA, RELATIVE_TOL, TOLERANCE_BASES, ExplanationDiff, json_prediction
from .tree_nodes import Leaf, Node

__all__ = ["ExplanationDiff", "JSON_SCHEMA", "TOLERANCE_BASES", "check_comparable", "explanation_diff",
           "regions_of"]

# the moves of rows between regions listed, the largest first
MAX_MOVES = 20
# A region description that more parts of the new sum share is scored against the nearest
# NEAREST_PARTS of them on each side (by place) only: pairing takes time and memory
# linear in the regions (two sums of 2,000 alike parts were paired all against all: 114 s
# and 1.4 GB); a real sum's description is in a few parts, and all of them count
NEAREST_PARTS = 8
# rounds of that pairing, each among the parts still unpaired (a round after which every
# old part has shared descriptions with a free new part only where the window missed it)
PAIRING_ROUNDS = 8

# --------------------------------------------------------------------- regions
def _is_tree(rules):
    """A tree or a sum, not an ordered list (a list's regions are its rules, each read on its own)."""
    return getattr(rules, "form", None) in ("tree", "sum")


def check_comparable(old, new):
    """ValueError naming the difference where two explanations read different features (their
    feature names, the DataFrame columns they read, their numbers of features) or predict
    different things (values against classes, other classes)."""
    for attribute, what in (("feature_names", "feature"), ("feature_names_in", "column")):
        a, b = getattr(old, attribute, None), getattr(new, attribute, None)
        if a is None or b is None or list(a) == list(b):
            continue
        a, b = list(a), list(b)
        if len(a) != len(b):
            raise ValueError(f"the two explanations are over different features: {len(a)} against {len(b)}")
        i = next(i for i in range(len(a)) if a[i] != b[i])
        raise ValueError(f"the two explanations are over different features: {what} {i} is {a[i]!r} in the "
                         f"first and {b[i]!r} in the second")
    a_classes, b_classes = old.classes, new.classes
    if (a_classes is None) != (b_classes is None):
        raise ValueError("the two explanations predict different things: one classes, the other values")
    if a_classes is not None and not np.array_equal(np.asarray(a_classes), np.asarray(b_classes)):
        raise ValueError(f"the two explanations predict different classes: {list(a_classes)} against "
                         f"{list(b_classes)}")


def _skeleton(c):
    """How a condition tests its feature, its thresholds aside."""
    if c.is_set:
        return (c.feature, "set", c.categories, c.negated, c.missing)
    return (c.feature, c.lower is not None, c.upper is not None, c.missing)


def _exact(c):
    return _skeleton(c) + (c.lower, c.upper)


def _box_key(conditions, key):
    return tuple(sorted(key(c) for c in conditions))


class _Box:
    """A box's conditions and their descriptions, worked out once for every region below it
    (a tree's box is a step of each of them)."""

    __slots__ = ("conditions", "exact", "skeleton", "_text")

    def __init__(self, conditions):
        self.conditions = conditions
        self.exact, self.skeleton = _box_key(conditions, _exact), _box_key(conditions, _skeleton)
        self._text = None

    def text(self):
        if self._text is None:
            self._text = " and ".join(c.text() for c in self.conditions)
        return self._text


class _Region:
    """One region: its part (term), its number in reading order within the part, its
    description (steps of (_Box, holds)), its prediction."""

    def __init__(self, term, index, steps, prediction, proba=None):
        self.term, self.index, self.steps, self.prediction = term, index, steps, prediction
        self.proba = proba
        self.exact = tuple((box.exact, holds) for box, holds in steps)
        self.skeleton = tuple((box.skeleton, holds) for box, holds in steps)

    def text(self):
        if not self.steps:
            return "otherwise"
        parts = []
        for box, holds in self.steps:
            text = box.text()
            parts.append(text if holds else f"not ({text})" if len(box.conditions) > 1 else f"not {text}")
        return " and ".join(parts)

    def label(self, sum_form):
        return f"part {self.term + 1} region {self.index + 1}" if sum_form else f"region {self.index + 1}"


def regions_of(rules):
    """The regions of an explanation: a list per part (a tree: one; a list: one, its rules
    then its default)."""
    if not _is_tree(rules):
        regions = [_Region(0, i, [(_Box(r.conditions), True)], r.prediction, r.proba)
                   for i, r in enumerate(rules.rules)]
        regions.append(_Region(0, len(rules.rules), [], rules.default_prediction, rules.default_proba))
        return [regions]
    out = []
    for t, root in enumerate(rules.terms):
        regions, stack = [], [(root, [])]
        while stack:  # reading order: a node's "then" before its "else"
            item, steps = stack.pop()
            if isinstance(item, Leaf):
                regions.append(_Region(t, len(regions), steps, item.prediction, item.proba))
            elif isinstance(item, Node):
                box = _Box(item.conditions)
                stack.append((item.otherwise, steps + [(box, False)]))
                stack.append((item.then, steps + [(box, True)]))
        out.append(regions)
    return out


def _row_regions(rules, X):
    """Each row's region number per part: int64 (n, parts)."""
    leaves = np.asarray(rules.apply(X))  # (a list's default: its last region)
    return leaves[:, None] if leaves.ndim == 1 else leaves  # (zero rows too: no reshape to infer)


def _moves(old_conds, new_conds):
    """The threshold moves of two boxes of the same skeleton: (feature name, bound, old, new)."""
    moves = []
    for a, b in zip(sorted(old_conds, key=_exact), sorted(new_conds, key=_exact)):
        for bound in ("lower", "upper"):
            va, vb = getattr(a, bound), getattr(b, bound)
            if va is not None and vb is not None and va != vb:
                moves.append({"feature": a.name, "bound": bound, "old": float(va), "new": float(vb)})
    return moves


def _match(old, new, attribute):
    """Pairs (i, j) of old and new regions of equal `attribute` (in reading order: each old
    region with the first new one of its description not yet matched), among those not
    yet matched (old[i] / new[j] None once matched)."""
    waiting = {}  # description -> the unmatched new regions of it, last first
    for j in reversed(range(len(new))):
        if new[j] is not None:
            waiting.setdefault(getattr(new[j], attribute), []).append(j)
    pairs = []
    for i, a in enumerate(old):
        if a is None:
            continue
        js = waiting.get(getattr(a, attribute))
        if js:
            j = js.pop()
            pairs.append((i, j))
            old[i] = new[j] = None
    return pairs


def _paired_parts(old_parts, new_parts):
    """(old part, new part) pairs of two explanations' parts (a tree's or a list's: its one
    part each): a sum's parts paired greedily by the regions they share (exactly, then by the
    same features tested; a description many parts share counts for the NEAREST_PARTS
    nearest on each side still unpaired, in rounds while they pair more), ties by their
    places; the parts that share none paired by their places, nearest first; a part left
    over pairs with none. Time and memory linear in the regions (and the parts' log)."""
    pairs, used_old, used_new = [], set(), set()
    for _ in range(PAIRING_ROUNDS):
        found = _shared_pairs(old_parts, new_parts, used_old, used_new)
        if not found:
            break
        pairs += found
    # the rest by place, nearest first (ties: the earlier old part, then new part): each
    # old part's nearest free new parts wait in a heap, looked up again once taken
    free = [u for u in range(len(new_parts)) if u not in used_new]
    heap = []

    def nearest(t):
        at = bisect.bisect_left(free, t)
        for u in free[max(at - 1, 0):at + 1]:
            heapq.heappush(heap, (abs(t - u), t, u))

    for t in range(len(old_parts)):
        if t not in used_old:
            nearest(t)
    while heap and free:
        _, t, u = heapq.heappop(heap)
        if t in used_old:
            continue
        at = bisect.bisect_left(free, u)
        if at == len(free) or free[at] != u:  # taken meanwhile
            nearest(t)
            continue
        del free[at]
        pairs.append((t, u))
        used_old.add(t)
    return sorted(pairs)


def _shared_pairs(old_parts, new_parts, used_old, used_new):
    """One round of _paired_parts: the parts not in used_old / used_new (which take the
    new pairs' parts) paired greedily by the regions they share."""
    holders = ({}, {})  # exact / skeleton description -> the free new parts holding it, in order
    for u, part in enumerate(new_parts):
        if u in used_new:
            continue
        for r in part:
            for k, key in enumerate((r.exact, r.skeleton)):
                held = holders[k].setdefault(key, [])
                if not held or held[-1] != u:
                    held.append(u)
    score = {}  # (t, u) -> [regions of t whose exact description u has, ... whose skeleton]
    for t, part in enumerate(old_parts):
        if t in used_old:
            continue
        for r in part:
            for k, key in enumerate((r.exact, r.skeleton)):
                held = holders[k].get(key, ())
                if len(held) > 2 * NEAREST_PARTS:
                    at = bisect.bisect_left(held, t)
                    held = held[max(at - NEAREST_PARTS, 0):at + NEAREST_PARTS]
                for u in held:
                    score.setdefault((t, u), [0, 0])[k] += 1
    pairs = []
    for t, u in sorted(score, key=lambda k: (-score[k][0], -score[k][1], abs(k[0] - k[1]), k)):
        if t not in used_old and u not in used_new:
            pairs.append((t, u))
            used_old.add(t)
            used_new.add(u)
    return pairs


def _values_range(rules):
    """The range of an explanation's values (its regions' predictions; a sum's: its parts'
    ranges added up, the widest its predictions can spread), finite values only."""
    total = 0.0
    for part in regions_of(rules):
        v = np.array([r.prediction for r in part], dtype=np.float64)
        v = v[np.isfinite(v)]
        total += float(v.max() - v.min()) if v.size else 0.0
    return total


def _spread(p):
    """The standard deviation of the finite predictions p (0 where none is)."""
    p = p[np.isfinite(p)]
    return float(np.std(p)) if p.size else 0.0


def _tolerance(old, new, tol, p_old=None, p_new=None):
    """Regression's tolerance and its basis (a key of TOLERANCE_BASES): tol where given,
    else RELATIVE_TOL of the old explanation's spread (its predictions' standard deviation
    where given, else its values' range), the new one's where that is 0."""
    if tol is not None:
        return float(tol), "given"
    if p_old is not None:
        spreads = (("old_predictions_std", _spread(p_old)), ("new_predictions_std", _spread(p_new)))
    else:
        spreads = (("old_values_range", _values_range(old)), ("new_values_range", _values_range(new)))
    for basis, spread in spreads:
        if spread > 0:
            return RELATIVE_TOL * spread, basis
    return 0.0, "constant"


def _kind(rules):
    return rules.form


def explanation_diff(old, new, X=None, tol=None):
    """The ExplanationDiff from old to new (RuleTrees of any forms, in any pairing), on the rows
    of X where given (read as predict reads them). tol: a regression prediction changed where
    it moved by more than tol; None: RELATIVE_TOL of the spread of the old explanation's
    predictions (their standard deviation on X, else its values' range; the new one's where
    the old one's is 0). ValueError where the two read different features or predict
    different things (classes against values, other classes)."""
    for rules in (old, new):
        if getattr(rules, "form", None) not in ("list", "tree", "sum"):
            raise TypeError(f"diff compares two RuleTrees, not {type(rules).__name__}")
    check_comparable(old, new)
    if tol is not None and not (isinstance(tol, (int, float, np.integer, np.floating)) and not isinstance(tol, bool)
                                and np.isfinite(tol) and tol >= 0):
        raise ValueError(f"tol must be None or a finite number >= 0; got {tol!r}")
    sum_form = _kind(old) == "sum" or _kind(new) == "sum"
    old_parts, new_parts = regions_of(old), regions_of(new)
    kept, changed, added, removed = [], [], [], []
    pairs = _paired_parts(old_parts, new_parts)
    matched = {}  # (old part, new part) -> {new region number: old region number}
    for t, u in pairs:
        o, n = list(old_parts[t]), list(new_parts[u])
        matched[(t, u)] = {}
        for i, j in _match(o, n, "exact"):
            a, b = old_parts[t][i], new_parts[u][j]
            matched[(t, u)][j] = i
            kept.append({"old_part": t + 1, "new_part": u + 1, "old_region": i + 1, "new_region": j + 1,
                         "conditions": a.text(), "old_prediction": json_prediction(a.prediction),
                         "new_prediction": json_prediction(b.prediction)})
        for i, j in _match(o, n, "skeleton"):
            a, b = old_parts[t][i], new_parts[u][j]
            matched[(t, u)][j] = i
            moves = [m for (ca, _), (cb, _) in zip(a.steps, b.steps) for m in _moves(ca.conditions, cb.conditions)]
            changed.append({"old_part": t + 1, "new_part": u + 1, "old_region": i + 1, "new_region": j + 1,
                            "old_conditions": a.text(), "new_conditions": b.text(),
                            "old_prediction": json_prediction(a.prediction), "new_prediction": json_prediction(b.prediction),
                            "threshold_moves": moves})
    paired_old, paired_new = {t for t, _ in pairs}, {u for _, u in pairs}
    for t, part in enumerate(old_parts):
        done = set(matched[(t, dict(pairs)[t])].values()) if t in paired_old else set()
        removed += [{"old_part": t + 1, "old_region": a.index + 1, "conditions": a.text(),
                     "old_prediction": json_prediction(a.prediction)} for a in part if a.index not in done]
    back = {u: t for t, u in pairs}
    for u, part in enumerate(new_parts):
        done = set(matched[(back[u], u)]) if u in paired_new else set()
        added += [{"new_part": u + 1, "new_region": b.index + 1, "conditions": b.text(),
                   "new_prediction": json_prediction(b.prediction)} for b in part if b.index not in done]
    for items in (kept, changed):
        items.sort(key=lambda x: (x["old_part"], x["old_region"]))
    diff = ExplanationDiff(kept, changed, added, removed, sum(map(len, old_parts)), sum(map(len, new_parts)),
                           sum_form, (_kind(old), _kind(new)), parts=(len(old_parts), len(new_parts)))
    if X is None:
        if old.classes is None:
            diff.tolerance, diff.tolerance_basis = _tolerance(old, new, tol)
        return diff
    p_old, p_new = np.asarray(old.predict(X)), np.asarray(new.predict(X))
    n_rows = len(p_old)
    if old.classes is None:
        p_old, p_new = p_old.astype(np.float64), p_new.astype(np.float64)
        # (no rows: the spread of the explanations' own values, as without X)
        diff.tolerance, diff.tolerance_basis = _tolerance(old, new, tol, p_old, p_new) if n_rows \
            else _tolerance(old, new, tol)
        with np.errstate(invalid="ignore"):  # an infinite prediction kept: no change
            change = np.where(p_old == p_new, 0.0, np.abs(p_old - p_new))
        pred_changed = change > diff.tolerance
        diff.mean_change = float(change.mean()) if n_rows else 0.0
        diff.max_change = float(change.max()) if n_rows else 0.0
    else:
        pred_changed = p_old != p_new
    r_old, r_new = _row_regions(old, X), _row_regions(new, X)
    # a part only one side has: every row's region differs
    region_changed = np.full(n_rows, len(paired_old) < len(old_parts) or len(paired_new) < len(new_parts))
    moves = []
    for t, u in pairs:  # over parts, not rows
        lookup = np.full(len(new_parts[u]), -1, dtype=np.int64)
        for j, i in matched[(t, u)].items():
            lookup[j] = i
        moved = lookup[r_new[:, u]] != r_old[:, t]
        region_changed |= moved
        if moved.any():
            ij, counts = np.unique(np.column_stack([r_old[moved, t], r_new[moved, u]]), axis=0, return_counts=True)
            moves += [{"old_part": t + 1, "new_part": u + 1, "old_region": int(i) + 1, "new_region": int(j) + 1,
                       "rows": int(c), "share": float(c / n_rows)} for (i, j), c in zip(ij, counts)]
    moves.sort(key=lambda m: (-m["rows"], m["old_part"], m["old_region"], m["new_part"], m["new_region"]))
    diff.n_rows = n_rows
    diff.prediction_changed = float(pred_changed.mean()) if n_rows else 0.0
    diff.region_changed = float(region_changed.mean()) if n_rows else 0.0
    diff.moves = moves[:MAX_MOVES]
    return diff
