/*
 * dfg_prune.h - coverage counts of rule conditions and the greedy pruning of a
 * rule's conditions, over condition columns (the column layout of dfg_bits.h: bit n
 * of col[n / 64] is the condition's truth value for sample n). The counts use the
 * hardware popcount where the CPU has it (dfg_cpu.h).
 */
#ifndef DFG_PRUNE_H
#define DFG_PRUNE_H

#include "dfg_common.h"

/*
 * Number of samples satisfying all conditions cols[0..m) except the one at index
 * skip (skip < 0: none skipped); cols is m x dfg_n_words(n_samples). With no
 * condition left every sample is counted. Returns -1 on bad sizes.
 */
int64_t dfg_count_all(const uint64_t *cols, int64_t m, int64_t n_samples, int64_t skip);

/*
 * Rule pruning (AISTATS 2018 ext., sec. 3.2): while some kept condition can be
 * dropped without changing the number of covered samples, drop the first such.
 * keep (in/out, m flags) marks the conditions still in the rule.
 * Returns the number of covered samples, or -1 on bad sizes.
 */
int64_t dfg_prune_conditions(const uint64_t *cols, int64_t m, int64_t n_samples,
                             uint8_t *keep);

#endif
