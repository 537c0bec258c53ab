/*
 * dfg_sets.h - category sets of categorical splits and rule conditions.
 *
 * A categorical input value is a category code: an integer >= 0 held in a double
 * (NaN is a missing value, which callers handle before asking about sets).
 * Item j of a dfg_sets (a split, or a rule condition) is one of
 *   kind[j] == DFG_KIND_NUMERIC      not a set test (the caller's threshold test)
 *   kind[j] == DFG_KIND_IN_SET       true iff the code is in set j
 *   kind[j] == DFG_KIND_NOT_IN_SET   true iff the code is not in set j
 * Set j is the bitset words[ptr[j] .. ptr[j + 1]): code c is in it iff bit c % 64
 * of its word c / 64 is set. A negative code, or one past the set's last word, is
 * in no set; a non-integer code is truncated toward zero (callers pass integers).
 */
#ifndef DFG_SETS_H
#define DFG_SETS_H

#include "dfg_common.h"

#define DFG_KIND_NUMERIC 0
#define DFG_KIND_IN_SET 1
#define DFG_KIND_NOT_IN_SET 2

typedef struct {
    int64_t n;              /* items */
    const uint8_t *kind;    /* n kinds */
    const int64_t *ptr;     /* n + 1 word offsets: ptr[0] == 0, non-decreasing */
    const uint64_t *words;  /* ptr[n] words */
} dfg_sets;

/* DFG_OK when sets describes exactly n items with valid kinds and offsets. */
int dfg_sets_check(const dfg_sets *sets, int64_t n);

/* Whether code v is in set j (v not NaN). */
static inline int dfg_sets_member(const dfg_sets *sets, int64_t j, double v) {
    int64_t n_words = sets->ptr[j + 1] - sets->ptr[j];
    if (!(v >= 0.0) || v >= 64.0 * (double)n_words) return 0;
    int64_t c = (int64_t)v;
    return (int)((sets->words[sets->ptr[j] + (c >> 6)] >> (c & 63)) & 1u);
}

/* The set test of item j (kind IN_SET or NOT_IN_SET) on code v (not NaN). */
static inline int dfg_sets_test(const dfg_sets *sets, int64_t j, double v) {
    return dfg_sets_member(sets, j, v) ^ (sets->kind[j] == DFG_KIND_NOT_IN_SET);
}

#endif
