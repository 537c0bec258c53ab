"""A rule list searched for over the ensemble's splits, one rule at a time.

A rule is a box: a set of *literals*, each one side of one of the ensemble's splits
(literal l < L: s_l = 1, the split's right side; literal L + l: s_l = 0, its left side).
The list is grown greedily, as CART grows a tree but one region at a time: the points
no rule has taken yet (``left``) are one region predicted by one constant (the default);
the next rule is the box whose first-match points R, taken out of ``left``, gain most
(below): a condition stays wherever it lowers the loss at all. Each rule starts
from the best of the candidate boxes (FAB's components: that is what makes this defrag)
and from the empty box, and moves while its score rises:

* add a literal (split the box the way CART splits a node),
* drop a literal (prune a condition that does not pay for itself),
* move a threshold to another of the ensemble's split points on the same feature and
  side (polish).

The loss is the sum of squared errors of vector targets T (n, d) about each region's
mean: the values (d = 1) in regression, the class indicators in classification (the Gini
impurity CART splits by, times the count).
The gain of a rule with region R inside ``left`` (L below) is what R's own points gain
against the constant of ``left``, c_R |m_R - m_L|^2 (m the regions' means): the rule's
region is final in a list, the rest is split by the rules after it (the two-sided gain
of CART, |s_R|^2 / c_R + |s_L - s_R|^2 / (c_L - c_R) - |s_L|^2 / c_L with s and c the
regions' target sums and counts, is not used: it takes half-space rules that mix
classes, which no later rule can undo).

The search runs in C (src_c/dfg_list_search.c, grow_boxes below): each move's target
sums of every literal inside a region are updated from the previous region's by the rows
that joined or left it. Its NumPy reference, the same search vectorised over the split
matrix, is tests/list_search_reference.py; the two give the same boxes wherever the
target sums are exact (counts, class indicators).
"""
import numbers
from dataclasses import dataclass

import numpy as np

from ..utils.threads import threads_now
from . import _list_search

# Moves per rule (each the best single add / drop / threshold move); a box seldom needs
# more than a handful: FAB's boxes start close, and each add is one CART split.
MAX_MOVES = 12
# Candidate boxes refined per rule besides the empty box (the best few by score).
N_STARTS = 2
# A move must raise the score by this share of the constant's loss (rounding).
REL_TOL = 1e-9
# |T| times the rows must stay below this: the squares of the sums stay finite.
MAX_MAGNITUDE = 1e150


def checked_count(value, name, low=0):
    """value as an int; TypeError unless it is an integer (not a bool), ValueError below low."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, not {value!r}")
    if value < low:
        raise ValueError(f"{name} must be >= {low}, not {value}")
    return int(value)


def checked_split_matrix(S, name="S"):
    """S (rows x splits: each row's sides of the splits) as a C-ordered bool array; entries
    must be 0/1 (or booleans). The searches' kernels take its values as checked here."""
    S = np.asarray(S)
    if S.ndim != 2:
        raise ValueError(f"{name} must be 2-D (rows x splits), not of shape {S.shape}")
    if S.dtype.kind not in "biuf":
        raise TypeError(f"{name} must be boolean, not {S.dtype}")
    if S.dtype.kind != "b" and not np.all((S == 0) | (S == 1)):
        raise ValueError(f"{name} must hold only 0 and 1 (the sides of the splits)")
    return np.ascontiguousarray(S, dtype=bool)


def checked_targets(T, n):
    """T as a C-ordered float64 array (n, d), d >= 1 (a 1-D T: one column), finite and small
    enough for squared sums over n rows. The searches' kernels take its values as checked here."""
    T = np.asarray(T)
    if T.dtype.kind not in "biuf":
        raise TypeError(f"T must be numeric, not {T.dtype}")
    if T.ndim == 1:
        T = T.reshape(-1, 1)
    if T.ndim != 2 or T.shape[0] != n:
        raise ValueError(f"T must have one row per row of S ({n}), not shape {T.shape}")
    if T.shape[1] == 0:
        raise ValueError("T must have at least one column")
    T = np.ascontiguousarray(T, dtype=np.float64)
    if not np.all(np.isfinite(T)):
        raise ValueError("T holds NaN or infinite values")
    if T.size and np.abs(T).max() * n >= MAX_MAGNITUDE:
        raise ValueError(f"T's values are too large for squared sums over {n} rows: rescale T")
    return T


def _int_array(values, name, size):
    a = np.asarray(values)
    if a.ndim != 1 or a.shape[0] != size:
        raise ValueError(f"{name} must be a 1-D array of {size} entries, not of shape {a.shape}")
    if a.size and a.dtype.kind not in "iu":
        raise TypeError(f"{name} must hold integers, not {a.dtype}")
    return np.ascontiguousarray(a, dtype=np.int64)


def _candidate_csr(candidates, n_literals):
    """(indptr, literals) of the non-empty candidate boxes, in order (int64)."""
    boxes = []
    for b in candidates:
        a = np.asarray(b)
        if a.ndim != 1:
            raise ValueError(f"a candidate box must be a sequence of literals, not of shape {a.shape}")
        if a.size == 0:
            continue  # ListSearch.grow skips empty boxes
        if a.dtype.kind not in "iu":
            raise TypeError(f"candidate literals must be integers, not {a.dtype}")
        if a.min() < 0 or a.max() >= n_literals:
            raise ValueError(f"candidate literals must lie in [0, {n_literals})")
        boxes.append(a.astype(np.int64))
    ptr = np.zeros(len(boxes) + 1, dtype=np.int64)
    ptr[1:] = np.cumsum([b.size for b in boxes], dtype=np.int64)
    literals = np.concatenate(boxes) if boxes else np.zeros(0, dtype=np.int64)
    return ptr, np.ascontiguousarray(literals, dtype=np.int64)


@dataclass(frozen=True)
class CandidateBoxes:
    """Candidate boxes checked and packed once (CSR: the literals of box i are
    literals[ptr[i]:ptr[i + 1]]; empty boxes left out) for the searches of a
    cross-validation, which share them: candidate_boxes."""

    ptr: np.ndarray
    literals: np.ndarray
    n_literals: int


def candidate_boxes(candidates, n_literals):
    """CandidateBoxes of candidates (sequences of literals in [0, n_literals)), which
    grow_boxes and grow_list_sizes take in place of the boxes for a split table of
    n_literals / 2 splits."""
    return CandidateBoxes(*_candidate_csr(candidates, n_literals), int(n_literals))


def grow_boxes(S, T, literal_feature, literal_group, candidates, max_rules, min_support=1, n_threads=None):
    """Up to max_rules rules (boxes: sorted lists of literals, in list order) grown
    greedily on the split matrix S (n, L; bool) with targets T (n, d), from the empty box
    and the candidate boxes; stops when no box gains. literal_feature: the feature of
    each of the 2L literals; literal_group: literals that are
    thresholds of one feature on one side (threshold moves within a group). The C kernel
    (src_c/dfg_list_search.h) sums in double where the NumPy reference
    (tests/list_search_reference.py) multiplies in float32: the boxes are the same
    wherever the target sums are exact (counts, class indicators, small integers), and
    may differ in near ties otherwise. n_threads: the kernel's threads (None: as many as this thread
    may use); the result does not depend on it."""
    problem = checked_problem(S, T, literal_feature, literal_group, candidates, min_support, n_threads)
    return _grown(problem, checked_count(max_rules, "max_rules"))


@dataclass
class Problem:
    """A search's checked inputs: the kernel's arrays and settings."""

    S: np.ndarray  # (n, L) bool, C order
    T: np.ndarray  # (n, d) float64, C order, finite
    feature: np.ndarray
    group: np.ndarray
    ptr: np.ndarray  # the candidate boxes, CSR
    literals: np.ndarray
    min_support: int
    n_threads: int


def checked_problem(S, T, literal_feature, literal_group, candidates, min_support, n_threads):
    """The Problem of a box search's inputs (grow_boxes' arguments), each checked once: the
    kernels check only their sizes."""
    S = checked_split_matrix(S)
    n, L = S.shape
    T = checked_targets(T, n)
    feature = _int_array(literal_feature, "literal_feature", 2 * L)
    group = _int_array(literal_group, "literal_group", 2 * L)
    if feature.size and feature.min() < 0:
        raise ValueError("literal_feature must be >= 0")
    if isinstance(candidates, CandidateBoxes):
        if candidates.n_literals != 2 * L:
            raise ValueError(f"the candidate boxes are over {candidates.n_literals} literals, not {2 * L}")
        ptr, literals = candidates.ptr, candidates.literals
    else:
        ptr, literals = _candidate_csr(candidates, 2 * L)
    min_support = checked_count(min_support, "min_support")
    n_threads = threads_now() if n_threads is None else checked_count(n_threads, "n_threads", 1)
    return Problem(S, T, feature, group, ptr, literals, min_support, n_threads)


def _grown(problem, max_rules):
    """grow_boxes on a checked problem."""
    S, T = problem.S, problem.T
    n, L = S.shape
    if n < 2 or L == 0 or max_rules == 0:
        return []
    box_ptr, box_literals = _list_search.list_search_grow(
        S.view(np.uint8), T, problem.feature, problem.group, problem.ptr, problem.literals, int(max_rules),
        problem.min_support, MAX_MOVES, N_STARTS, REL_TOL,
        problem.n_threads)
    return [box_literals[box_ptr[i]:box_ptr[i + 1]].tolist() for i in range(box_ptr.size - 1)]


def grow_list_sizes(S, T, literal_feature, literal_group, candidates, max_rules, n_threads=None):
    """The list at every size, grown one region at a time: element k holds the boxes (in
    order) of the list of k + 1 regions. Each step takes the largest drop of the training
    loss (squared error of T about each region's mean) of:

    * a rule appended: the next rule of grow_boxes on the rows no rule takes (the default's),
      or the best single literal on them (CART's split of the default's region; the smaller
      side is the rule), whichever lowers the loss more;
    * a rule's region split the way CART splits a leaf: the rule's box with one more literal,
      inserted right before it, takes the rows of the region on that literal's side (the
      rule keeps the others).

    A list grown by appends alone cannot reach the rows of a broad early rule again; a tree
    splits them further (on servo, 8 regions: a training error of 33.9 by appends alone,
    26.2 for CART on the forest's predictions). The sizes are therefore not prefixes of one
    list. The growth runs in C (src_c/dfg_list_path.h); its NumPy reference is
    tests/list_search_reference.py's grow_list_sizes. n_threads: as grow_boxes's."""
    problem = checked_problem(S, T, literal_feature, literal_group, candidates, 1, n_threads)
    max_rules = checked_count(max_rules, "max_rules")
    n, L = problem.S.shape
    if n < 2 or L == 0:
        return [[]]
    max_rules = min(max_rules, n - 1)  # every region keeps a row: at most n regions
    kind, position, ptr, literals = _list_search.list_path_grow(
        problem.S.view(np.uint8), problem.T, problem.feature, problem.group, problem.ptr, problem.literals,
        max_rules, problem.min_support, MAX_MOVES, N_STARTS,
        REL_TOL, problem.n_threads)
    rules, lists = [], [[]]
    for t in range(kind.size):  # over the steps (at most max_rules), not rows
        rules.insert(int(position[t]), literals[ptr[t]:ptr[t + 1]].tolist())
        lists.append([list(b) for b in rules])
    return lists


def literal_groups(splits):
    """(feature, group) of the 2L literals of a split table: a group holds the numeric
    splits of one feature on one side (and the same missing direction), among which a
    threshold may move; a categorical split is a group of its own per side."""
    L = len(splits)
    feature = np.concatenate([splits.feature, splits.feature]).astype(np.int64)
    side = np.repeat([0, 1], L)
    numeric = np.concatenate([splits.kind, splits.kind]) == 0
    missing = np.concatenate([splits.missing_right, splits.missing_right]).astype(np.int64)
    own = np.arange(2 * L)
    key = np.where(numeric, (feature * 2 + side) * 2 + missing, -1 - own)
    _, group = np.unique(key, return_inverse=True)
    return feature, group


def component_boxes(component_etas, kappa, keep=None):
    """The distinct boxes of the components of component_etas (eta arrays, one row per
    component), over their splits ``keep`` (indices; None: all): the literals a component
    fixes, s_l = 1 (literal l) where eta > 1 - kappa, s_l = 0 (literal L + l) where eta <
    kappa, as sorted tuples. Restarts often fix the same literals: each box once."""
    etas = [np.asarray(e, dtype=np.float64) for e in component_etas]
    etas = [e if keep is None else e[:, keep] for e in etas if e.size]
    if not etas:
        return set()
    E = np.vstack(etas)
    fixed = np.hstack([E > 1.0 - kappa, E < kappa])  # literal l < L: s_l = 1; L + l: s_l = 0
    distinct = {row.tobytes(): row for row in fixed}  # over the components
    return {tuple(np.flatnonzero(row).tolist()) for row in distinct.values()}


def literal_column(S, j):
    """Literal j's truth on the rows of S (n x L splits): split j holds (j < L), or split
    j - L does not."""
    L = S.shape[1]
    return S[:, j] if j < L else ~S[:, j - L]


def box_cover(S, box):
    """The rows of S where every literal of box holds (all rows for an empty box)."""
    out = np.ones(S.shape[0], dtype=bool)
    for j in box:  # over the box's literals
        out &= literal_column(S, j)
    return out


def simplified_boxes(S, boxes, literal_group):
    """Each of boxes (sorted lists) without the literals that change no row's cover on S: of
    the nested thresholds of one group (a feature's side) only the tightest, then, the most
    often true first, each literal whose removal leaves the covered rows as they are (FAB
    fixes many nested thresholds of one feature); S's columns counted once."""
    n_true = np.count_nonzero(S, axis=0)  # rows where each split holds
    literal_group = np.asarray(literal_group)
    return [_simplified(S, box, literal_group, n_true) for box in boxes]


def _simplified(S, box, literal_group, n_true):
    n, L = S.shape
    if not len(box):
        return []
    box = np.asarray(box, dtype=np.int64)
    positive = box < L
    cols = np.where(positive, box, box - L)
    counts = np.where(positive, n_true[cols], n - n_true[cols])  # rows where each literal holds
    group = literal_group[box]
    # per group the literal true on fewest rows (ties: the lower literal)
    by_group = np.lexsort((box, counts, group))
    first = by_group[np.r_[True, group[by_group][1:] != group[by_group][:-1]]]
    order = first[np.lexsort((box[first], -counts[first]))]  # the most often true first
    # A literal's removal changes the cover where it is a row's only failing literal
    # among those not dropped yet. Such a row fails no later literal: a literal is kept
    # only as the last failing literal (in order) of some row, and then where one of
    # those rows fails no literal kept before it.
    fails = S[:, cols[order]] ^ positive[order]  # a literal fails where its split's side is the other
    failed = fails.any(axis=1)
    last = fails.shape[1] - 1 - np.argmax(fails[:, ::-1], axis=1)
    last = np.where(failed, last, -1)
    kept = []
    free = np.ones(fails.shape[0], dtype=bool)  # the rows that fail no literal kept so far
    for i in np.unique(last[failed]).tolist():  # over the candidates, in order
        if (free & (last == i)).any():
            kept.append(i)
            free &= ~fails[:, i]
    keep = box[order][kept].tolist()
    return sorted(keep)


def eta_of_box(box, L):
    """A component's eta that fixes exactly the literals of box (0.5 elsewhere), for the
    condition readout of rules/extract.py."""
    eta = np.full(L, 0.5)
    for j in box:
        eta[j if j < L else j - L] = 1.0 if j < L else 0.0
    return eta
