/*
 * dfg_common.h - shared definitions for the defrag C kernels.
 *
 * Plain C99, no Python API, no global state. Every kernel checks its sizes and
 * returns a status code. OpenMP is optional: without it the pragmas are ignored
 * and every kernel runs on one thread with identical results.
 *
 * Determinism: results never depend on the thread count. Sums over samples are
 * split into fixed blocks of DFG_BLOCK rows (independent of the thread count),
 * each block summed in order, and the block sums added in block order.
 */
#ifndef DFG_COMMON_H
#define DFG_COMMON_H

#include <stddef.h>
#include <stdint.h>

#define DFG_OK 0
#define DFG_EINVAL (-1) /* a size or argument is out of range */
#define DFG_ENOMEM (-2) /* an allocation failed */
/* (-3 is DFG_ENAN, dfg_rules.h) */
#define DFG_EINTERRUPTED (-4) /* the caller's stop flag was set: the kernel returned early */

/* Rows per reduction block: fixed so that sums are identical for any thread count. */
#define DFG_BLOCK 2048

static inline int64_t dfg_n_blocks(int64_t n) { return (n + DFG_BLOCK - 1) / DFG_BLOCK; }

/*
 * Stopping early. The kernels that can run for long take `const volatile int *stop`: a
 * flag that another thread (the caller's) may set while the kernel runs, NULL for none.
 * They read it between units of work (an outer iteration and its stages, a block of
 * rows, a feature, a tile of distances) and return DFG_EINTERRUPTED once it is set,
 * their outputs then unspecified, after freeing what they allocated. Reading it
 * changes no arithmetic: a run that is not stopped gives the same result bit for bit.
 * The flag is read, never written, and needs no lock: a plain int that goes from 0
 * to 1 once, read through volatile so that every check loads it again.
 */
static inline int dfg_stop_requested(const volatile int *stop) { return stop != NULL && *stop != 0; }

/*
 * Threads. Every parallel region starts dfg_team(n_threads) threads: at least 1 and at
 * most DFG_MAX_THREADS, whatever count a caller hands a kernel. libgomp lays out the
 * start data of a team on the calling thread's stack, so a count of 100,000 overflowed
 * it (SIGSEGV) before any thread ran. The kernels check n_threads >= 1 at entry; this
 * bound is the last line for counts too large to start: the Python layer caps its own
 * at the cores the process may use (defrag/utils/_common.pyx, kernel_threads).
 * Results do not depend on the thread count, so the bound changes no output.
 */
#define DFG_MAX_THREADS 1024

static inline int dfg_team(int n_threads) {
    return n_threads < 1 ? 1 : (n_threads > DFG_MAX_THREADS ? DFG_MAX_THREADS : n_threads);
}

/* Words of 64 bits needed for n bits. */
static inline int64_t dfg_n_words(int64_t nbits) { return (nbits + 63) / 64; }

#endif
