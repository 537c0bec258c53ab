#include "dfg_cover.h"

int dfg_first_cover(const uint8_t *cover, int64_t n_samples, int64_t n_rules, int64_t *first,
                    int n_threads) {
    if (n_samples < 0 || n_rules < 0 || n_threads < 1) return DFG_EINVAL;
    (void)n_threads; /* used only by the OpenMP pragma */
    #pragma omp parallel for schedule(static) num_threads(dfg_team(n_threads))
    for (int64_t n = 0; n < n_samples; n++) {
        const uint8_t *row = cover + n * n_rules;
        int64_t r = 0;
        while (r < n_rules && !row[r]) r++;
        first[n] = r;
    }
    return DFG_OK;
}
