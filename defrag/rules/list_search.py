"""A rule list searched for over the ensemble's splits, one rule at a time.

A rule is a box: a set of *literals*, each one side of one of the ensemble's splits
(literal l < L: s_l = 1, the split's right side; literal L + l: s_l = 0, its left side).
The list is grown greedily, as CART grows a tree but one region at a time: the points
no rule has taken yet (``left``) are one region predicted by one constant (the default);
the next rule is the box whose first-match points R, taken out of ``left``, gain most
(below), over (conditions printed) ** cost_power: 0, the gain alone; 1, the gain per
condition the reader reads (an interval ``a < x <= b`` is one). Each rule starts
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
regions' target sums and counts, is kept as ONE_SIDED = False: it takes half-space rules
that mix classes, which no later rule can undo).

Every step is vectorised: the target sums of all literals inside a region are one
product of the boolean split matrix with the region's targets (BLAS), the sums of all
candidate boxes one product of their cover matrix; Python loops run over rules, moves
and the literals of one box only, never over samples.
"""
import numpy as np
from threadpoolctl import threadpool_limits

# Moves per rule (each the best single add / drop / threshold move); a box seldom needs
# more than a handful: FAB's boxes start close, and each add is one CART split.
MAX_MOVES = 12
# Candidate boxes refined per rule besides the empty box (the best few by score).
N_STARTS = 2
ONE_SIDED = True
# A move must raise the score by this share of the constant's loss (rounding).
REL_TOL = 1e-9


def _score(s, c):
    """|s|^2 / c per row (0 where c = 0)."""
    c = np.asarray(c, dtype=np.float64)
    return np.where(c > 0, np.einsum("...j,...j->...", s, s) / np.maximum(c, 1), 0.0)


class ListSearch:
    """The greedy search over the boolean split matrix S (n, L) with targets T (n, d).

    literal_feature: the feature of each of the 2L literals (cost: distinct features);
    literal_group: literals that are thresholds of one feature on one side (polishing
    moves within a group)."""

    def __init__(self, S, T, literal_feature, literal_group, min_support=1, cost_power=1.0,
                 condition_penalty=0.0):
        self.cost_power = float(cost_power)
        self.condition_penalty = float(condition_penalty)
        self.lam = 0.0  # the penalty per condition at the current step (grow sets it)
        self.one_sided = ONE_SIDED
        self.S = np.ascontiguousarray(S, dtype=bool)
        self.n, self.L = self.S.shape
        T = np.asarray(T, dtype=np.float64)
        self.T = T.reshape(self.n, -1)
        # float32 products: half the memory and time of float64; counts and class sums
        # are exact (below 2^24 rows), values and probabilities to 1e-7 relative
        self.Sf = self.S.astype(np.float32)
        self.Ta = np.hstack([self.T, np.ones((self.n, 1))]).astype(np.float32)
        self.literal_feature = np.asarray(literal_feature)
        self.literal_group = np.asarray(literal_group)
        self.n_features = int(self.literal_feature.max(initial=-1)) + 1
        self.min_support = int(min_support)
        q = float(np.einsum("ij,ij->", self.T, self.T))
        s = self.T.sum(axis=0)
        self.scale = max(q - float(_score(s, self.n)), 1e-300)  # loss of one constant

    # ------------------------------------------------------------ columns
    def literal_column(self, j):
        return literal_column(self.S, j)

    def cover(self, box):
        return box_cover(self.S, box)

    def cost(self, box):
        return max(1, len({int(self.literal_feature[j]) for j in box}))

    # ------------------------------------------------------------ gains
    def _gain(self, sR, cR, sL, cL):
        """Gain of regions (rows of sR, cR) inside left (sL, cL); -inf where a region or
        the rest is too small."""
        cR = np.asarray(cR, dtype=np.float64)
        if self.one_sided:  # c_R |m_R - m_L|^2: what R's own points gain; the rest is split later
            d = sR - cR[..., None] * (sL / max(cL, 1.0))
            g = _score(d, cR)
        else:
            g = _score(sR, cR) + _score(sL - sR, cL - cR) - float(_score(sL, cL))
        ok = (cR >= self.min_support) & (cL - cR >= 1)
        return np.where(ok, g, -np.inf)

    def _products(self, rows, cols=None):
        """(target sums, counts) of the right sides of the splits cols (all: None) over
        rows, from one product in float32 (counts and class sums are exact there): the
        rows' slice of S, or where the rows are most of them, all of S with the other rows'
        targets zeroed (no copy of S)."""
        Sf = self.Sf if cols is None else self.Sf[:, cols]
        if 2 * rows.size > self.n:
            w = np.zeros((self.n, self.Ta.shape[1]), dtype=np.float32)
            w[rows] = self.Ta[rows]
            out = Sf.T @ w
        else:
            out = Sf[rows].T @ self.Ta[rows]
        out = out.astype(np.float64)
        return out[:, :-1], out[:, -1]

    def _literal_sums(self, rows):
        """Target sums and counts of every literal restricted to rows (indices)."""
        right_s, right_c = self._products(rows)
        tot_s, tot_c = self.T[rows].sum(axis=0), float(rows.size)
        return np.vstack([right_s, tot_s - right_s]), np.concatenate([right_c, tot_c - right_c])

    def _group_sums(self, group, rows):
        """Target sums and counts of the literals of group restricted to rows."""
        right = group < self.L
        s, c = self._products(rows, np.where(right, group, group - self.L))
        tot_s, tot_c = self.T[rows].sum(axis=0), float(rows.size)
        return np.where(right[:, None], s, tot_s - s), np.where(right, c, tot_c - c)

    def _score_of(self, gain, cost):
        """A box's score: its gain over cost ** cost_power, less lam per condition."""
        cost = np.maximum(cost, 1)
        return gain / cost ** self.cost_power - self.lam * cost

    def _box_gain(self, box, left, sL, cL):
        region = self.cover(box) & left
        return float(self._gain(self.T[region].sum(axis=0)[None], [region.sum()], sL, cL)[0])

    def _scored(self, gain, box):
        return (self._score_of(gain, self.cost(box)), -len(box), box, gain)

    def _add_and_drop_moves(self, box, loo, sL, cL):
        """The best add (every literal at once, inside the region) and every drop. loo:
        _leave_one_out's (region, rows failing one literal, that literal) of the box."""
        region, one, which = loo
        moves = []
        s, c = self._literal_sums(np.flatnonzero(region))
        g = self._gain(s, c, sL, cL)
        named = np.zeros(self.n_features, dtype=bool)
        named[self.literal_feature[box]] = True
        costs = np.maximum(named.sum() + ~named[self.literal_feature], 1)
        sc = self._score_of(g, costs)
        if box:
            sc[np.asarray(box)] = -np.inf
        j = int(np.argmax(sc))
        if np.isfinite(sc[j]):
            moves.append((float(sc[j]), -(len(box) + 1), box + [j], float(g[j])))
        if len(box) > 1:  # every drop at once: the rows only literal i fails join
            extra = np.zeros((len(box), self.T.shape[1]))
            for k in range(self.T.shape[1]):  # over the target's columns
                extra[:, k] = np.bincount(which, weights=self.T[one, k], minlength=len(box))
            sR = self.T[region].sum(axis=0) + extra
            cR = float(region.sum()) + np.bincount(which, minlength=len(box))
            g = self._gain(sR, cR, sL, cL)
            for i in range(len(box)):  # over the box's literals
                rest = box[:i] + box[i + 1:]
                moves.append(self._scored(float(g[i]), rest))
        return moves

    def _leave_one_out(self, box, left):
        """(the box's region in left, the rows of left that fail exactly one literal, the
        index of that literal in box): the region without literal i is the region and
        the rows whose failing literal is i. An empty box: all of left, and no such rows."""
        if not box:
            return left, np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.intp)
        cols = np.column_stack([self.literal_column(j) for j in box])
        fails = np.count_nonzero(~cols, axis=1)
        one = np.flatnonzero(left & (fails == 1))
        return left & (fails == 0), one, np.argmin(cols[one], axis=1)

    def _polish_moves(self, box, loo, sL, cL):
        """Each literal moved to the best other threshold of its group (same feature and
        side), the others kept (loo: as for _add_and_drop_moves)."""
        region, one, which = loo
        moves = []
        for i in range(len(box)):  # over the box's literals
            rest = box[:i] + box[i + 1:]
            group = np.flatnonzero(self.literal_group == self.literal_group[box[i]])
            if group.size < 2:
                continue
            rows = np.union1d(np.flatnonzero(region), one[which == i])  # the region without literal i
            gs, gc = self._group_sums(group, rows)
            gg = self._gain(gs, gc, sL, cL)
            k = int(np.argmax(gg))
            if np.isfinite(gg[k]) and group[k] != box[i]:
                moves.append(self._scored(float(gg[k]), rest[:i] + [int(group[k])] + rest[i:]))
        return moves

    def refine(self, box, left, sL, cL):
        """The box after its best moves: (box, gain, score). Adds and drops first; where
        none raises the score, threshold moves (polishing)."""
        box = list(box)
        gain = self._box_gain(box, left, sL, cL) if box else -np.inf
        score = self._score_of(gain, self.cost(box)) if box else -np.inf
        tol = REL_TOL * self.scale

        def better(move):
            return move is not None and (move[0] > score + tol or (move[0] >= score - tol and -move[1] < len(box)))

        for _ in range(MAX_MOVES):
            loo = self._leave_one_out(box, left)  # the box's rows, read once a move
            best = max(self._add_and_drop_moves(box, loo, sL, cL), key=lambda m: m[:2], default=None)
            if not better(best):
                best = max(self._polish_moves(box, loo, sL, cL), key=lambda m: m[:2], default=None)
                if not better(best):
                    break
            score, box, gain = best[0], best[2], best[3]
        return box, gain, score

    # ------------------------------------------------------------ the list
    def grow(self, candidates, max_rules):
        """Up to max_rules rules (boxes, in order), greedily; stops when no box gains."""
        cand = [list(b) for b in candidates if len(b)]
        C = np.column_stack([self.cover(b) for b in cand]).astype(np.float64) if cand else \
            np.zeros((self.n, 0))
        ccost = np.array([self.cost(b) for b in cand], dtype=np.float64)
        left = np.ones(self.n, dtype=bool)
        rules = []
        if self.L == 0:  # no split: one region
            return rules
        with threadpool_limits(limits=1, user_api="blas"):  # same sums whatever the threads
            while len(rules) < max_rules and left.sum() >= 2:
                T_left = self.T[left]
                sL, cL = T_left.sum(axis=0), float(T_left.shape[0])
                # a condition must pay condition_penalty * log(n) times the variance of the
                # rows left (BIC's price of a parameter, Schwarz 1978)
                resid = float(np.sum(T_left ** 2)) - float(_score(sL, cL))
                self.lam = self.condition_penalty * np.log(self.n) * resid / cL
                starts = [[]]
                if cand:
                    rows = np.flatnonzero(left)
                    s = C[rows].T @ self.T[rows]
                    c = C[rows].sum(axis=0)
                    sc = self._score_of(self._gain(s, c, sL, cL), ccost)
                    for m in np.argsort(-sc, kind="stable")[:N_STARTS]:
                        if np.isfinite(sc[m]):
                            starts.append(cand[m])
                best = None
                for start in starts:
                    box, gain, score = self.refine(start, left, sL, cL)
                    if box and gain > REL_TOL * self.scale and \
                            (best is None or (score, -len(box)) > (best[2], -len(best[0]))):
                        best = (box, gain, score)
                if best is None:
                    break
                box = sorted(best[0])
                rules.append(box)
                left &= ~self.cover(box)
        return rules


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


def box_of_component(eta, kappa):
    """The literals a component fixes: s_l = 1 where eta > 1 - kappa, s_l = 0 where < kappa."""
    L = eta.size
    return list(np.flatnonzero(eta > 1.0 - kappa)) + list(L + np.flatnonzero(eta < kappa))


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


def simplified_box(S, box, literal_group):
    """The box without literals that change no row's cover on S: of the nested thresholds
    of one group (a feature's side) only the tightest, then, the most often true first,
    each literal whose removal leaves the covered rows as they are (FAB fixes many
    nested thresholds of one feature)."""
    n, L = S.shape
    if not box:
        return []
    box = np.asarray(box)
    cols = np.where(box < L, box, box - L)
    counts = S[:, cols].sum(axis=0)
    counts = np.where(box < L, counts, n - counts)
    tightest = {}
    for j, c, g in zip(box.tolist(), counts.tolist(), literal_group[box].tolist()):
        if g not in tightest or (c, j) < tightest[g][::-1]:
            tightest[g] = (j, c)
    order = sorted(tightest.values(), key=lambda jc: (-jc[1], jc[0]))
    columns = {j: literal_column(S, j) for j, _ in order}
    keep = [j for j, _ in order]
    count = int(np.logical_and.reduce([columns[j] for j in keep]).sum())
    for j, _ in order:  # over the few literals left, each one pass over the rows
        rest = [k for k in keep if k != j]
        cover = np.logical_and.reduce([columns[k] for k in rest]) if rest else np.ones(n, dtype=bool)
        if int(cover.sum()) == count:
            keep = rest
    return sorted(keep)


def eta_of_box(box, L):
    """A component's eta that fixes exactly the literals of box (0.5 elsewhere), for the
    condition readout of rules/extract.py."""
    eta = np.full(L, 0.5)
    for j in box:
        eta[j if j < L else j - L] = 1.0 if j < L else 0.0
    return eta
