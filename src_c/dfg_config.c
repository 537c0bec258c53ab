#include "dfg_config.h"

#ifdef _OPENMP
#include <omp.h>
int dfg_has_openmp(void) { return 1; }
int dfg_max_threads(void) { return omp_get_max_threads(); }
#else
int dfg_has_openmp(void) { return 0; }
int dfg_max_threads(void) { return 1; }
#endif
