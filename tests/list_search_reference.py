"""The NumPy reference of the rule-list search (src_c/dfg_list_search.c, called through
defrag.search.list_search.grow_boxes): the same greedy search, vectorised over the split
matrix, slow on purpose. tests/test_list_search_kernel.py compares the two; the
algorithm is described in defrag/search/list_search.py's docstring."""
import numpy as np
from threadpoolctl import threadpool_limits

from defrag.search.list_search import MAX_MOVES, N_STARTS, REL_TOL, box_cover, grow_boxes, literal_column

# The gain of a rule: what its own points gain (True, the kernel's), or CART's two-sided
# gain (False, measured and left out; the tests check both against plain sums).
ONE_SIDED = True


def _score(s, c):
    """|s|^2 / c per row (0 where c = 0)."""
    c = np.asarray(c, dtype=np.float64)
    return np.where(c > 0, np.einsum("...j,...j->...", s, s) / np.maximum(c, 1), 0.0)


class ListSearch:
    """The greedy search over the boolean split matrix S (n, L) with targets T (n, d).

    literal_feature: the feature of each of the 2L literals; literal_group: literals that
    are thresholds of one feature on one side (polishing moves within a group). A box's
    score is its gain (TreeSearch prices its literals)."""

    def __init__(self, S, T, literal_feature, literal_group, min_support=1):
        self.lam = 0.0  # the price per literal at the current step (TreeSearch's; grow sets it)
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
        return len(box)

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

    def _add_costs(self, box):
        """The cost of box with each literal added (its length)."""
        return len(box) + 1

    def _score_of(self, gain, cost):
        """A box's score: its gain."""
        return gain

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
        sc = self._score_of(g, self._add_costs(box))
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
    def _price(self, resid, cL):
        """The price per literal where the rows left have squared error resid about their
        mean: none (TreeSearch's is literal_price * resid)."""
        return 0.0

    def candidate_starts(self, candidates):
        """(the non-empty candidate boxes, their covers as columns, their costs)."""
        cand = [list(b) for b in candidates if len(b)]
        C = np.column_stack([self.cover(b) for b in cand]).astype(np.float64) if cand else \
            np.zeros((self.n, 0))
        ccost = np.array([self.cost(b) for b in cand], dtype=np.float64)
        return cand, C, ccost

    def best_box(self, left, candidates):
        """(box, gain, score) of the best refined start in left (a mask of rows), or None:
        the empty box and the N_STARTS best candidates (candidates: candidate_starts's)."""
        cand, C, ccost = candidates
        T_left = self.T[left]
        sL, cL = T_left.sum(axis=0), float(T_left.shape[0])
        resid = float(np.sum(T_left ** 2)) - float(_score(sL, cL))
        self.lam = self._price(resid, cL)
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
        return best

    def grow(self, candidates, max_rules):
        """Up to max_rules rules (boxes, in order), greedily; stops when no box gains."""
        candidates = self.candidate_starts(candidates)
        left = np.ones(self.n, dtype=bool)
        rules = []
        if self.L == 0:  # no split: one region
            return rules
        with threadpool_limits(limits=1, user_api="blas"):  # same sums whatever the threads
            while len(rules) < max_rules and left.sum() >= 2:
                best = self.best_box(left, candidates)
                if best is None:
                    break
                box = sorted(best[0])
                rules.append(box)
                left &= ~self.cover(box)
        return rules


def grow_list_sizes(S, T, literal_feature, literal_group, candidates, max_rules):
    """defrag.search.list_search.grow_list_sizes (see its docstring; the C growth of
    src_c/dfg_list_path.c) in NumPy: Python loops over steps and rules, the sums are BLAS
    products of the split matrix, the appends are grow_boxes's on the default's rows."""
    S = np.ascontiguousarray(S, dtype=bool)
    T = np.asarray(T, dtype=np.float64).reshape(S.shape[0], -1)
    n, L = S.shape
    lists = [[]]
    if n < 2 or L == 0:
        return lists
    tol = REL_TOL * max(float(np.sum((T - T.mean(axis=0)) ** 2)), 1e-300)
    rules = []
    region = np.zeros(n, dtype=np.intp)  # each row's first-match rule; len(rules): the default
    # a region's best split and the default's next rule change only where a move touched
    # that region: each is computed once and kept (None: to compute)
    splits, append = [], None
    while len(rules) < max_rules:
        if append is None:
            left = np.flatnonzero(region == len(rules))
            append = (-np.inf, None, None)
            grown = grow_boxes(S[left], T[left], literal_feature, literal_group, candidates, 1) \
                if left.size >= 2 else []
            if grown:
                inside = box_cover(S[left], grown[0])
                gain = float(split_gain(T[left[inside]].sum(axis=0)[None], [inside.sum()], T[left].sum(axis=0),
                                        float(left.size))[0])
                append = (gain, grown[0], left[inside])
            if left.size >= 2:
                # CART's split of the default's region: the grown box scores what its own
                # rows gain, a balanced split can lower the loss more (the smaller side is
                # the rule, the default keeps the bulk)
                gain, j, taken = _best_split(S, T, left)
                if gain > append[0]:
                    if 2 * taken.size > left.size:
                        j, taken = (j + L if j < L else j - L), np.setdiff1d(left, taken)
                    append = (gain, [j], taken)
        for i in range(len(rules)):  # over the list's rules
            if splits[i] is None:
                splits[i] = _best_split(S, T, np.flatnonzero(region == i))
        best_gain, move = tol, None
        if append[0] > best_gain:
            best_gain, move = append[0], ("append",)
        for i, (gain, _, _) in enumerate(splits):  # the first of equals: the earlier rule
            if gain > best_gain:
                best_gain, move = gain, ("split", i)
        if move is None:
            break
        if move[0] == "append":
            rules.append(sorted(append[1]))
            region[region == len(rules) - 1] = len(rules)
            region[append[2]] = len(rules) - 1
            splits.append(None)
            append = None
        else:
            i = move[1]
            _, j, taken = splits[i]
            rules.insert(i, sorted(rules[i] + [j]))
            region[region >= i] += 1
            region[taken] = i
            splits[i:i + 1] = [None, None]
        lists.append([list(b) for b in rules])
    return lists


def _best_split(S, T, rows):
    """(gain, literal, the rows on its side) of the best single-literal split of a region
    (rows), CART's; gain -inf where none splits it."""
    if rows.size < 2:
        return -np.inf, None, None
    S_rows = S[rows].astype(np.float64)  # the region's rows only: the regions partition the rows
    s_right, c_right = S_rows.T @ T[rows], S_rows.sum(axis=0)
    s_all, c_all = T[rows].sum(axis=0), float(rows.size)
    gains = split_gain(s_right, c_right, s_all, c_all)
    j = int(np.argmax(gains))  # the first of equals: the lower split (its s = 1 side)
    return float(gains[j]), j, rows[literal_column(S[rows], j)]


def split_gain(s, c, s_all, c_all):
    """The drop of the squared error when a region (target sums s_all, count c_all) is
    split into the rows of each row of (s, c) and the rest (CART's gain); -inf where a
    side is empty."""
    c = np.asarray(c, dtype=np.float64)
    ok = (c > 0) & (c < c_all)
    rest = s_all - s
    gain = (np.einsum("ij,ij->i", s, s) / np.maximum(c, 1) + np.einsum("ij,ij->i", rest, rest) / np.maximum(c_all - c, 1)
            - float(s_all @ s_all) / c_all)
    return np.where(ok, gain, -np.inf)
