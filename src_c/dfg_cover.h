/*
 * dfg_cover.h - the first covering rule of each row of a rule list's cover matrix (the
 * rule list's first-match groups, defrag/rules/lists.py): a scan of N x R bytes that NumPy
 * does as an argmax and a fancy-indexed check, while holding the GIL between them.
 */
#ifndef DFG_COVER_H
#define DFG_COVER_H

#include "dfg_common.h"

/* first[n] = the smallest r with cover[n * n_rules + r] != 0, n_rules where none. */
int dfg_first_cover(const uint8_t *cover, int64_t n_samples, int64_t n_rules, int64_t *first,
                    int n_threads);

#endif
