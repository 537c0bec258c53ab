#include "dfg_sets.h"

int dfg_sets_check(const dfg_sets *sets, int64_t n) {
    if (!sets || sets->n != n || n < 0 || !sets->kind || !sets->ptr) return DFG_EINVAL;
    if (sets->ptr[0] != 0) return DFG_EINVAL;
    for (int64_t j = 0; j < n; j++) {
        if (sets->kind[j] > DFG_KIND_NOT_IN_SET || sets->ptr[j + 1] < sets->ptr[j]) return DFG_EINVAL;
        /* more words than codes below 2^53 could hold is a corrupt offset */
        if (sets->ptr[j + 1] - sets->ptr[j] > ((int64_t)1 << 47)) return DFG_EINVAL;
    }
    if (sets->ptr[n] > 0 && !sets->words) return DFG_EINVAL;
    return DFG_OK;
}
