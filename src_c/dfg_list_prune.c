#include "dfg_list_prune.h"

#include <stdlib.h>
#include <string.h>

#include "dfg_list_loss.h"

/* Column r of cover: the conjunction of rule r's kept conditions other than skip. */
static void rule_column(const uint8_t *holds, int64_t n, const int64_t *rule_ptr, const uint8_t *keep,
                        int64_t r, int64_t skip, uint8_t *cover, int64_t n_rules) {
    for (int64_t i = 0; i < n; i++) cover[i * n_rules + r] = 1;
    for (int64_t c = rule_ptr[r]; c < rule_ptr[r + 1]; c++) {
        if (!keep[c] || c == skip) continue;
        const uint8_t *h = holds + c * n;
        for (int64_t i = 0; i < n; i++) cover[i * n_rules + r] &= (uint8_t)(h[i] != 0);
    }
}

int dfg_list_prune(const uint8_t *holds, int64_t n_samples, int64_t n_conditions,
                   const int64_t *rule_ptr, int64_t n_rules, const double *y,
                   const int64_t *y_class, int64_t n_classes, double budget, int64_t n_passes,
                   int keep_one, uint8_t *keep, uint8_t *cover, const volatile int *stop) {
    const int64_t n = n_samples;
    if (n < 0 || n_conditions < 0 || n_rules < 0 || n_passes < 0 || rule_ptr == NULL ||
        (n_conditions > 0 && keep == NULL) ||
        (n > 0 && n_rules > 0 && cover == NULL) || (n > 0 && n_conditions > 0 && holds == NULL) ||
        (n_rules > 0 && n > INT64_MAX / n_rules) || (n_conditions > 0 && n > INT64_MAX / n_conditions) ||
        n_rules >= INT64_MAX - 1 || !dfg_list_targets_ok(n, y, y_class, n_classes))
        return DFG_EINVAL;
    if (rule_ptr[0] != 0 || rule_ptr[n_rules] != n_conditions) return DFG_EINVAL;
    for (int64_t r = 0; r < n_rules; r++)
        if (rule_ptr[r + 1] < rule_ptr[r]) return DFG_EINVAL;
    int64_t *order = malloc((size_t)(n_conditions > 0 ? n_conditions : 1) * sizeof(int64_t));
    int64_t *held = malloc((size_t)(n_conditions > 0 ? n_conditions : 1) * sizeof(int64_t));
    int64_t *identity = malloc((size_t)(n_rules > 0 ? n_rules : 1) * sizeof(int64_t));
    uint8_t *saved = malloc((size_t)(n > 0 ? n : 1));
    int status = DFG_OK;
    if (order == NULL || held == NULL || identity == NULL || saved == NULL) {
        status = DFG_ENOMEM;
        goto done;
    }
    for (int64_t r = 0; r < n_rules; r++) identity[r] = r;
    for (int64_t c = 0; c < n_conditions; c++) {
        int64_t count = 0;
        for (int64_t i = 0; i < n; i++) count += holds[c * n + i] != 0;
        held[c] = count;
        order[c] = c;
    }
    /* within each rule: rows held, most first, ties by position (a stable insertion sort:
     * a rule has a few conditions) */
    for (int64_t r = 0; r < n_rules; r++)
        for (int64_t a = rule_ptr[r] + 1; a < rule_ptr[r + 1]; a++) {
            const int64_t v = order[a];
            int64_t b = a;
            while (b > rule_ptr[r] && held[order[b - 1]] < held[v]) {
                order[b] = order[b - 1];
                b--;
            }
            order[b] = v;
        }
    for (int64_t r = 0; r < n_rules; r++) rule_column(holds, n, rule_ptr, keep, r, -1, cover, n_rules);
    for (int64_t pass = 0; pass < n_passes; pass++) {
        int changed = 0;
        for (int64_t r = 0; r < n_rules; r++) {
            for (int64_t a = rule_ptr[r]; a < rule_ptr[r + 1]; a++) {
                const int64_t c = order[a];
                if (!keep[c]) continue;
                if (keep_one) { /* the rule's last kept condition stays */
                    int64_t kept = 0;
                    for (int64_t b = rule_ptr[r]; b < rule_ptr[r + 1]; b++) kept += keep[b] != 0;
                    if (kept < 2) continue;
                }
                if (dfg_stop_requested(stop)) {
                    status = DFG_EINTERRUPTED;
                    goto done;
                }
                for (int64_t i = 0; i < n; i++) saved[i] = cover[i * n_rules + r];
                rule_column(holds, n, rule_ptr, keep, r, c, cover, n_rules);
                double loss;
                int all_matched;
                status = dfg_list_loss_unchecked(cover, n, n_rules, identity, n_rules, y, y_class, n_classes,
                                                 &loss, &all_matched);
                if (status != DFG_OK) goto done;
                if (loss <= budget && all_matched) {
                    keep[c] = 0;
                    changed = 1;
                } else {
                    for (int64_t i = 0; i < n; i++) cover[i * n_rules + r] = saved[i];
                }
            }
        }
        if (!changed) break;
    }
done:
    free(order);
    free(held);
    free(identity);
    free(saved);
    return status;
}
