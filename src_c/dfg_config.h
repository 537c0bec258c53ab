/* dfg_config.h - how the kernels were built: with OpenMP or not (the CPU: dfg_cpu.h). */
#ifndef DFG_CONFIG_H
#define DFG_CONFIG_H

/* 1 when compiled with OpenMP. */
int dfg_has_openmp(void);
/* Threads OpenMP would use by default (1 without OpenMP). */
int dfg_max_threads(void);

#endif
