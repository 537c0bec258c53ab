/*
 * dfg_box_refine.h - the best box inside a set of rows ("left"), by local moves from a few
 * starts: the search shared by the rule list (dfg_list_search.h: left is the rows no
 * earlier rule took) and the box tree (dfg_tree_path.h: left is a leaf's rows).
 *
 * S (n x L, row-major, 0/1) holds every split as a binary feature; literal l < L is
 * s_l = 1 (the split's right side), literal L + l is s_l = 0. A box is a set of literals;
 * its region R is the rows of left where every literal holds. T (n x d, row-major) are
 * the targets; s_X, c_X: the target sums and count of rows X, m_X = s_X / max(c_X, 1).
 * A box's gain and score, by mode:
 *
 *   DFG_GAIN_ONE_SIDED (the list): gain = c_R |m_R - m_left|^2, what R's own rows gain,
 *     -inf where c_R < min_support or c_left - c_R < 1; score = gain (a condition stays
 *     wherever it lowers the loss at all);
 *   DFG_GAIN_TWO_SIDED (the tree): gain = CART's drop when left splits into R and the rest
 *     B, computed as the sum of both sides' one-sided gains, c_R |m_R - m_left|^2 +
 *     c_B |m_B - m_left|^2 (the same number as |s_R|^2 / c_R + |s_B|^2 / c_B -
 *     |s_left|^2 / c_left, without its cancellation where the targets' mean is large
 *     against their spread), -inf where either side has fewer than min_support rows;
 *     score = gain - lam * (len - 1), len the box's length, lam = price * resid.
 *
 * resid is the squared error of left about its mean (sum of T^2 in row order, less
 * |s_left|^2 / c_left).
 *
 * The search (dfg_refine_best): the starts are the empty box and the n_starts best
 * candidate boxes by score (ties: the lower index; -inf scores are skipped); each moves up
 * to max_moves times: the best of the add move (the literal of best score, the box's own
 * literals excluded, ties: the lower literal) and the drop moves; where none is better
 * (below), the best threshold move (each literal to the literal of best gain in its group,
 * ties: the lower literal, kept only if it is another literal). Moves compare by (score,
 * -length), the first of equals kept (add, then drops / threshold moves by position). A
 * move is better when its score exceeds the box's by rel_tol * scale (scale: the squared
 * error of all n rows about their mean, at least 1e-300), or is within that and the box it
 * gives is shorter. The box kept is the best of the refined starts by (score, -length)
 * whose box is not empty and gains more than rel_tol * scale.
 *
 * Arithmetic is double. The sum of squares of a d-vector is taken in the order of NumPy's
 * einsum on x86-64 (two lanes, the 4-step unrolled loop for d >= 8), so that scores tie
 * exactly where the NumPy references' tie. The literals' target sums over a region are
 * updated from the previous region's (or left's) by the rows that joined or left, or
 * recomputed, whichever touches fewer rows; with OpenMP the literals are shared among the
 * threads, each literal summed by one thread in row order, so that results do not depend
 * on the thread count.
 */
#ifndef DFG_BOX_REFINE_H
#define DFG_BOX_REFINE_H

#include "dfg_common.h"

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

/* Checks a problem as the searches take it: sizes (n, L, d >= 0, their products within
 * range), the pointers, the candidates in CSR form (cand_ptr: n_candidates + 1 entries from
 * 0, nondecreasing; literals in [0, 2 L): they index S's columns), max_moves >= 0. *bound
 * is set to dfg_list_search_box_bound's. DFG_EINVAL where one fails. The values of S (0 or
 * 1), T (finite) and literal_feature (>= 0) are the caller's to check, once (the growth
 * runs once per price and fold of a fit): none of them indexes memory. */
int dfg_refine_check(const uint8_t *S, const double *T, int64_t n, int64_t L, int64_t d,
                     const int64_t *literal_feature, const int64_t *literal_group, const int64_t *cand_ptr,
                     const int64_t *cand_literals, int64_t n_candidates, int64_t max_moves, int64_t *bound);

/* box sorted ascending (duplicates kept). */
void dfg_box_sort(int64_t *box, int64_t len);

enum { DFG_GAIN_ONE_SIDED = 0, DFG_GAIN_TWO_SIDED = 1 };

typedef struct {
    int mode;            /* DFG_GAIN_ONE_SIDED or DFG_GAIN_TWO_SIDED */
    double price;        /* two-sided only, finite: lam = price * resid */
    int64_t min_support; /* one-sided: R's rows at least; two-sided: each side's */
    int64_t max_moves;   /* >= 0 */
    int64_t n_starts;    /* >= 0 */
    double rel_tol;      /* finite, >= 0 */
} dfg_refine_settings;

/* The search's state; its fields are the implementation's (dfg_box_refine.c), but for
 * lcount, lacc and ltot (the rows of left and their sums) and box_cap (the bound on a box's
 * literals), which callers read. */
typedef struct {
    /* the problem */
    const uint8_t *S;
    const double *T;
    int64_t n, L, d, W, L2; /* W = d + 1 (the count last); L2 = 2 L */
    int64_t *feat;           /* dense feature id of each literal */
    int64_t n_feat;
    int64_t *gord, *glo, *ghi; /* literals by (group, literal); literal j's group: gord[glo[j] .. ghi[j]) */
    const int64_t *cand_ptr, *cand_literals;
    int64_t n_cand;
    double *cand_cost, *cand_s, *cand_score;
    uint8_t *chosen;
    int64_t *starts;
    /* settings */
    int two_sided;
    double price, tol, min_support;
    int gain_only; /* a score is its gain (one-sided, or no price) */
    int64_t max_moves, n_starts;
    int n_threads;
    int avx2; /* the AVX2 build of the sums runs */
    const volatile int *stop;
    /* sets of rows as bits (nw words of 64 rows, row r: bit r % 64 of word r / 64; none
       past n): lit_bits[l nw ..] the rows with s_l = 1, cand_bits[m nw ..] candidate m's
       cover (all rows) */
    int64_t nw;
    uint64_t *lit_bits, *cand_bits;
    /* the rows left (lbits), their literals' sums (acc[k L + l]: sum of T[., k] (k = d: 1)
       over the rows with s_l = 1) and totals */
    uint64_t *lbits;
    double *lacc, *ltot;
    int64_t lcount;
    /* the region of the current box in left (rbits), and its sums */
    uint64_t *rbits;
    double *racc, *rtot;
    /* the step's left: sums, mean, penalty */
    double *sL, *mL;
    double cL, lam;
    /* scratch */
    uint64_t *nbits, *box_words, *suffix_words, *one_words;
    int64_t *rows_a, *rows_b, *one, *which, *one_i;
    int64_t n_one;
    double *gain2, *score2, *vec, *sR, *extra, *etot, *gacc, *gbuf;
    int64_t *gcol;
    int64_t box_cap;
    int64_t *box_tmp, *box_work;
} dfg_refine;

/* Sets up the search over all n rows (left: none yet) for inputs checked by the caller:
 * S n x L (0/1), T n x d (finite), literal_feature (>= 0) and literal_group (2 L each),
 * the candidate boxes in CSR form (cand_ptr: n_candidates + 1 entries from 0,
 * nondecreasing; literals in [0, 2 L)), kept by pointer; n, L >= 1. The boxes grown hold
 * at most dfg_list_search_box_bound's bound literals. DFG_ENOMEM where memory runs out;
 * dfg_refine_free frees what was allocated, either way. */
int dfg_refine_init(dfg_refine *c, const uint8_t *S, const double *T, int64_t n, int64_t L, int64_t d,
                    const int64_t *literal_feature, const int64_t *literal_group, const int64_t *cand_ptr,
                    const int64_t *cand_literals, int64_t n_candidates, const dfg_refine_settings *settings,
                    int n_threads, const volatile int *stop);
void dfg_refine_free(dfg_refine *c);

/* Left is all n rows. */
void dfg_refine_left_all(dfg_refine *c);
/* Left is the rows rows[0 .. nr) (ascending, distinct, < n). Its sums (lacc: W L, ltot: W,
 * as the fields below hold them, which callers may read) are copied from acc and tot, the
 * caller's (as the sums of those rows), or computed where acc is NULL. */
void dfg_refine_left_rows(dfg_refine *c, const int64_t *rows, int64_t nr, const double *acc, const double *tot);
/* The rows of box leave left (its sums updated by the rows that left, or anew). */
void dfg_refine_take_rows(dfg_refine *c, const int64_t *box, int64_t len);

/* The best box in left (at least 2 rows): *have = 1 and the box in box[0 .. *len)
 * (box_cap entries at least: dfg_list_search_box_bound's bound), in move order, with its
 * gain and score; *have = 0 where no start gives one. DFG_EINTERRUPTED where the stop flag
 * was set (read before each move). */
int dfg_refine_best(dfg_refine *c, int64_t *box, int64_t *len, double *gain, double *score, int *have);

#endif
