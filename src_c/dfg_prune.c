#include "dfg_prune.h"
#include "dfg_cpu.h"
#include "dfg_portable.h"

#include <stdlib.h>
#include <string.h>

DFG_ALWAYS_INLINE int64_t count_all_impl(const uint64_t *cols, int64_t m,
                                         int64_t n_samples, int64_t skip) {
    int64_t n_words = dfg_n_words(n_samples), total = 0;
    for (int64_t w = 0; w < n_words; w++) {
        uint64_t word = ~(uint64_t)0;
        if (w == n_words - 1 && (n_samples & 63)) word = ((uint64_t)1 << (n_samples & 63)) - 1;
        for (int64_t j = 0; j < m; j++)
            if (j != skip) word &= cols[j * n_words + w];
        total += dfg_popcount64(word);
    }
    return total;
}

#if DFG_X86_DISPATCH
DFG_TARGET_POPCNT static int64_t count_all_hw(const uint64_t *cols, int64_t m,
                                              int64_t n_samples, int64_t skip) {
    return count_all_impl(cols, m, n_samples, skip);
}
#endif

static int64_t count_all_generic(const uint64_t *cols, int64_t m, int64_t n_samples,
                                 int64_t skip) {
    return count_all_impl(cols, m, n_samples, skip);
}

int64_t dfg_count_all(const uint64_t *cols, int64_t m, int64_t n_samples, int64_t skip) {
    if (m < 0 || n_samples < 0) return -1;
#if DFG_X86_DISPATCH
    if (dfg_cpu_has_popcnt()) return count_all_hw(cols, m, n_samples, skip);
#endif
    return count_all_generic(cols, m, n_samples, skip);
}

int64_t dfg_prune_conditions(const uint64_t *cols, int64_t m, int64_t n_samples,
                             uint8_t *keep) {
    if (m < 0 || n_samples < 0) return -1;
    int64_t n_words = dfg_n_words(n_samples);
    /* Gather the kept columns so that dropping one is a skip index. */
    int64_t *idx = (int64_t *)malloc((size_t)(m > 0 ? m : 1) * sizeof(int64_t));
    uint64_t *kept = (uint64_t *)malloc((size_t)((m > 0 ? m : 1) * (n_words > 0 ? n_words : 1)) * sizeof(uint64_t));
    if (!idx || !kept) { free(idx); free(kept); return -1; }
    int64_t n_kept = 0;
    for (int64_t j = 0; j < m; j++) {
        if (!keep[j]) continue;
        idx[n_kept] = j;
        memcpy(kept + n_kept * n_words, cols + j * n_words, (size_t)n_words * sizeof(uint64_t));
        n_kept++;
    }
    int64_t covered = dfg_count_all(kept, n_kept, n_samples, -1);
    int changed = 1;
    while (changed) {
        changed = 0;
        for (int64_t j = 0; j < n_kept; j++) {
            if (dfg_count_all(kept, n_kept, n_samples, j) != covered) continue;
            keep[idx[j]] = 0;
            memmove(kept + j * n_words, kept + (j + 1) * n_words,
                    (size_t)((n_kept - j - 1) * n_words) * sizeof(uint64_t));
            memmove(idx + j, idx + j + 1, (size_t)(n_kept - j - 1) * sizeof(int64_t));
            n_kept--;
            changed = 1;
            break;
        }
    }
    free(idx);
    free(kept);
    return covered;
}
