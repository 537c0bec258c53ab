/*
 * dfg_list_search.h - the greedy rule-list search over the ensemble's splits
 * (defrag/rules/list_search.py, ListSearch.grow, is the NumPy reference; the two
 * give the same boxes wherever the target sums are exact: counts, class indicators,
 * small integers).
 *
 * S (n x L, row-major, 0/1) holds every split as a binary feature; literal l < L is
 * s_l = 1 (the split's right side), literal L + l is s_l = 0. A box is a set of
 * literals (a rule); its region is the rows of `left` (the rows no earlier rule took)
 * where every literal holds. T (n x d, row-major) are the targets: the gain of a box
 * with region R (target sums s_R, count c_R) inside left (s_L, c_L) is
 *   c_R |s_R / c_R - s_L / c_L|^2     (ONE_SIDED: what R's own points gain),
 * -inf where c_R < min_support or c_L - c_R < 1. Its score is
 *   gain / cost ** cost_power - lam * cost
 * with cost the number of distinct features of its literals (at least 1) and
 * lam = condition_price * resid / c_L, resid the squared error of left about its
 * mean (condition_price: condition_penalty * log(n), computed by the caller as
 * NumPy computes it: the C library's log may differ in the last bit).
 *
 * Each rule starts from the empty box and the n_starts best candidate boxes (by
 * score, ties: the lower index; -inf scores are skipped) and moves up to max_moves
 * times: the best of the add move (the literal of best score, the box's own literals
 * excluded, ties: the lower literal) and the drop moves; where none is better
 * (below), the best threshold move (each literal to the literal of best gain in its
 * group, ties: the lower literal, kept only if it is another literal). Moves compare
 * by (score, -length), the first of equals kept (add, then drops / polish moves by
 * position). A move is better when its score exceeds the box's by rel_tol * scale
 * (scale: the squared error of all rows about their mean, at least 1e-300), or is
 * within that and the box it gives is shorter. The rule kept is the best of the
 * refined starts by (score, -length) whose box is not empty and gains more than
 * rel_tol * scale; its literals are sorted (duplicates, which a threshold move can
 * make, are kept) and its rows leave `left`. The search stops after max_rules rules,
 * when fewer than 2 rows are left, or when no start gives a rule (or at once when
 * L = 0).
 *
 * Arithmetic is double. The sum of squares of a d-vector is taken in the order of
 * NumPy's einsum on x86-64 (two lanes, the 4-step unrolled loop for d >= 8), so that
 * scores tie exactly where the reference's tie. The literals' target sums over a
 * region are updated from the previous region's (or left's) by the rows that joined
 * or left, or recomputed, whichever touches fewer rows; with OpenMP the literals are
 * shared among the threads, each literal summed by one thread in row order, so that
 * results do not depend on the thread count.
 */
#ifndef DFG_LIST_SEARCH_H
#define DFG_LIST_SEARCH_H

#include "dfg_common.h"

typedef struct {
    int64_t max_rules;      /* rules at most (>= 0) */
    double cost_power;      /* finite */
    double condition_price; /* condition_penalty * log(n), finite */
    int64_t min_support;    /* rows a rule's region needs */
    int64_t max_moves;      /* moves per refined box (>= 0; MAX_MOVES) */
    int64_t n_starts;       /* candidate boxes refined per rule (>= 0; N_STARTS) */
    double rel_tol;         /* finite, >= 0 (REL_TOL) */
} dfg_list_params;

/* sum_k x_k^2 in the order of NumPy's einsum ("...j,...j->...", contiguous, two lanes);
 * inline: it runs once per literal and move. */
static inline double dfg_sumsq_np(const double *x, int64_t n) {
    double a0 = 0.0, a1 = 0.0;
    int64_t i = 0;
    for (; n - i >= 8; i += 8) {
        a0 = x[i + 6] * x[i + 6] + a0;
        a1 = x[i + 7] * x[i + 7] + a1;
        a0 = x[i + 4] * x[i + 4] + a0;
        a1 = x[i + 5] * x[i + 5] + a1;
        a0 = x[i + 2] * x[i + 2] + a0;
        a1 = x[i + 3] * x[i + 3] + a1;
        a0 = x[i] * x[i] + a0;
        a1 = x[i + 1] * x[i + 1] + a1;
    }
    for (; i < n; i += 2) {
        a0 = x[i] * x[i] + a0;
        if (i + 1 < n) a1 = x[i + 1] * x[i + 1] + a1;
    }
    return a0 + a1;
}

/* Whether literal j (< L: split j holds; L + l: split l does not) holds on a row of S. */
static inline int dfg_literal_holds(const uint8_t *srow, int64_t j, int64_t L) {
    return j < L ? srow[j] != 0 : srow[j - L] == 0;
}

/* Literals per share of a sum over rows (dfg_list_literal_sums's m at most). */
#define DFG_LIST_CHUNK 64

/* acc[k L + l] += sign * s_l T[r, k] (k = d: sign) for the literals l = l0 .. l0 + m - 1
 * (m <= DFG_LIST_CHUNK) over the rows, in row order (the order of the additions to each
 * sum), four rows at a time; avx2: the AVX2 build (dfg_cpu_use_avx2), the same sums. */
void dfg_list_literal_sums(const uint8_t *S, const double *T, int64_t L, int64_t d, const int64_t *rows,
                           int64_t nr, double sign, double *acc, int64_t l0, int64_t m, int avx2);

/* Literals a grown box may hold: the longest candidate box plus max_moves (a move adds
 * at most one literal). *bound is set; DFG_EINVAL on bad sizes or overflow. */
int dfg_list_search_box_bound(const int64_t *cand_ptr, int64_t n_candidates, int64_t max_moves,
                              int64_t *bound);

/* Grows the list. S: n_samples x n_splits (entries 0 or 1); T: n_samples x n_targets
 * (finite); literal_feature (>= 0) and literal_group: 2 n_splits each; candidates in
 * CSR form: cand_ptr (n_candidates + 1, from 0, nondecreasing) into cand_literals
 * (each in [0, 2 n_splits)). Output: *n_boxes boxes, box i the literals
 * box_literals[box_ptr[i] .. box_ptr[i + 1]) (box_ptr: max_rules + 1 entries;
 * box_literals: capacity entries, at least max_rules times dfg_list_search_box_bound's
 * bound). stop: the caller's stop flag (dfg_common.h) or NULL, read before each move. */
int dfg_list_search_grow(const uint8_t *S, const double *T, int64_t n_samples, int64_t n_splits,
                         int64_t n_targets, const int64_t *literal_feature,
                         const int64_t *literal_group, const int64_t *cand_ptr,
                         const int64_t *cand_literals, int64_t n_candidates,
                         const dfg_list_params *params, int64_t *box_ptr, int64_t *box_literals,
                         int64_t capacity, int64_t *n_boxes, int n_threads,
                         const volatile int *stop);

#endif
