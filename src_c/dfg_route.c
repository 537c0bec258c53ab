#include "dfg_route.h"
#include "dfg_portable.h"

#include <stdlib.h>
#ifdef _OPENMP
#include <omp.h>
#endif

int dfg_route_check(const dfg_route_tree *tree, int64_t n_boxes) {
    const int64_t I = tree->n_items;
    if (I < 1 || tree->n_terms < 1 || n_boxes < 0) return DFG_EINVAL;
    for (int64_t t = 0; t < tree->n_terms; t++)
        if (tree->roots[t] < 0 || tree->roots[t] >= I) return DFG_EINVAL;
    for (int64_t i = 0; i < I; i++) {
        int64_t b = tree->box[i];
        if (b < -1 || b >= n_boxes) return DFG_EINVAL;
        if (b >= 0 && (tree->then_item[i] <= i || tree->then_item[i] >= I || tree->else_item[i] <= i ||
                       tree->else_item[i] >= I))
            return DFG_EINVAL;
    }
    return DFG_OK;
}

/* Whether rule r holds on x, adding the comparisons a reader makes to *read: its
   conditions in order until the first that fails (dfg_route.h). */
static inline int rule_reading(const double *x, const dfg_ruleset *rules, const uint8_t *cost, int64_t r,
                               double *read) {
    for (int64_t c = rules->rule_ptr[r]; c < rules->rule_ptr[r + 1]; c++) {
        double v = dfg_as_compared(x[rules->feature[c]]);
        int is_set = rules->sets && rules->sets->kind[c] != DFG_KIND_NUMERIC;
        if (v != v) {
            if (rules->missing[c] != 1) { *read += 1.0; return 0; }
        } else if (!(is_set ? dfg_sets_test(rules->sets, c, v)
                            : (v > rules->lower[c]) & (v <= rules->upper[c]))) {
            *read += (is_set || v <= rules->lower[c]) ? 1.0 : (double)cost[c];
            return 0;
        }
        *read += (double)cost[c];
    }
    return 1;
}

int dfg_route(const double *X, int64_t n_samples, int64_t n_features, const dfg_ruleset *boxes,
              const dfg_route_tree *tree, const uint8_t *cost, const int64_t *label, int64_t *items,
              double *reads, int64_t *visits, int n_threads) {
    if (n_samples < 0 || n_threads < 1) return DFG_EINVAL;
    int status = dfg_ruleset_check(boxes, n_features);
    if (status == DFG_OK && reads && !cost && boxes->rule_ptr[boxes->n_rules] > 0) status = DFG_EINVAL;
    if (status == DFG_OK) status = dfg_route_check(tree, boxes->n_rules);
    if (status != DFG_OK) return status;
    int32_t *strict;
    int64_t n_strict;
    if (dfg_ruleset_strict_features(boxes, n_features, &strict, &n_strict) != DFG_OK) return DFG_ENOMEM;
    const int64_t T = tree->n_terms, I = tree->n_items;
    const int team = n_samples > 4096 ? dfg_team(n_threads) : 1;
    /* one count per thread and item, added in thread order (integers: any order gives the same) */
    int64_t *counts = NULL;
    if (visits) {
        counts = (int64_t *)calloc((size_t)team * (size_t)I, sizeof(int64_t));
        if (!counts) { free(strict); return DFG_ENOMEM; }
    }
    int nan = 0;
    #pragma omp parallel num_threads(team) reduction(|:nan) if(team > 1)
    {
        int me = 0;
#ifdef _OPENMP
        me = omp_get_thread_num();
#endif
        int64_t *mine = counts ? counts + (int64_t)me * I : NULL;
        #pragma omp for schedule(static)
        for (int64_t n = 0; n < n_samples; n++) {
            DFG_PREFETCH_ROW(X, n, n_samples, n_features);
            const double *x = X + n * n_features;
            for (int64_t s = 0; s < n_strict; s++) nan |= x[strict[s]] != x[strict[s]];
            double read = 0.0;
            for (int64_t t = 0; t < T; t++) {
                int64_t i = tree->roots[t];
                if (mine) mine[i]++;
                while (tree->box[i] >= 0) {
                    int holds = reads ? rule_reading(x, boxes, cost, tree->box[i], &read)
                                      : dfg_rule_covers(x, boxes, tree->box[i]);
                    i = holds ? tree->then_item[i] : tree->else_item[i];
                    if (mine) mine[i]++;
                }
                if (items) items[n * T + t] = label ? label[i] : i;
            }
            if (reads) reads[n] = read;
        }
    }
    if (visits)
        for (int me = 0; me < team; me++)
            for (int64_t i = 0; i < I; i++) visits[i] += counts[(int64_t)me * I + i];
    free(counts);
    free(strict);
    return nan ? DFG_ENAN : DFG_OK;
}
