#include "dfg_list_search.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int check_inputs(const uint8_t *S, const double *T, int64_t n, int64_t L, int64_t d,
                        const int64_t *literal_feature, const int64_t *literal_group,
                        const int64_t *cand_ptr, const int64_t *cand_literals, int64_t n_candidates,
                        const dfg_list_params *p, const int64_t *box_ptr, const int64_t *box_literals,
                        int64_t capacity, const int64_t *n_boxes, int n_threads) {
    if (!p || !n_boxes || !box_ptr || capacity < 0 || n_threads < 1) return DFG_EINVAL;
    if (p->max_rules < 0 || p->max_moves < 0 || p->n_starts < 0 ||
        !isfinite(p->rel_tol) || p->rel_tol < 0.0 || p->max_rules > INT64_MAX - 1)
        return DFG_EINVAL;
    if (capacity > 0 && !box_literals) return DFG_EINVAL;
    int64_t bound;
    if (dfg_refine_check(S, T, n, L, d, literal_feature, literal_group, cand_ptr, cand_literals, n_candidates,
                         p->max_moves, &bound) != DFG_OK)
        return DFG_EINVAL;
    if (p->max_rules > 0 && bound > capacity / p->max_rules) return DFG_EINVAL;
    return DFG_OK;
}

#define LS_ALLOC(ptr, count, type) ((ptr) = (type *)calloc((size_t)((count) > 0 ? (count) : 1), sizeof(type)))

int dfg_list_search_grow(const uint8_t *S, const double *T, int64_t n_samples, int64_t n_splits,
                         int64_t n_targets, const int64_t *literal_feature,
                         const int64_t *literal_group, const int64_t *cand_ptr,
                         const int64_t *cand_literals, int64_t n_candidates,
                         const dfg_list_params *params, int64_t *box_ptr, int64_t *box_literals,
                         int64_t capacity, int64_t *n_boxes, int n_threads,
                         const volatile int *stop) {
    int status = check_inputs(S, T, n_samples, n_splits, n_targets, literal_feature, literal_group, cand_ptr,
                              cand_literals, n_candidates, params, box_ptr, box_literals, capacity, n_boxes,
                              n_threads);
    if (status != DFG_OK) return status;
    *n_boxes = 0;
    box_ptr[0] = 0;
    const int64_t n = n_samples, L = n_splits, d = n_targets;
    if (L == 0 || n < 2 || params->max_rules == 0) return DFG_OK;

    const dfg_refine_settings settings = {DFG_GAIN_ONE_SIDED, 0.0, params->min_support, params->max_moves, params->n_starts,
                                          params->rel_tol};
    dfg_refine search;
    int64_t *best_box = NULL;
    status = dfg_refine_init(&search, S, T, n, L, d, literal_feature, literal_group, cand_ptr, cand_literals,
                             n_candidates, &settings, n_threads, stop);
    if (status != DFG_OK) goto done;
    LS_ALLOC(best_box, search.box_cap + 1, int64_t);
    if (!best_box) {
        status = DFG_ENOMEM;
        goto done;
    }
    dfg_refine_left_all(&search);
    while (*n_boxes < params->max_rules && search.lcount >= 2) {
        if (dfg_stop_requested(stop)) {
            status = DFG_EINTERRUPTED;
            goto done;
        }
        int have;
        int64_t best_len;
        double gain, score;
        status = dfg_refine_best(&search, best_box, &best_len, &gain, &score, &have);
        if (status != DFG_OK) goto done;
        if (!have) break;
        dfg_box_sort(best_box, best_len);
        const int64_t at = box_ptr[*n_boxes];
        if (best_len > capacity - at) {
            status = DFG_EINVAL; /* cannot happen: checked against the bound */
            goto done;
        }
        memcpy(box_literals + at, best_box, (size_t)best_len * sizeof(int64_t));
        box_ptr[*n_boxes + 1] = at + best_len;
        (*n_boxes)++;
        dfg_refine_take_rows(&search, best_box, best_len);
    }
done:
    dfg_refine_free(&search);
    free(best_box);
    return status;
}
