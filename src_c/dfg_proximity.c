#include "dfg_proximity.h"
#include "dfg_cpu.h"
#include "dfg_portable.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SSE2__) || defined(_M_X64)
#include <emmintrin.h>
#define DFG_PROX_SSE2 1
#endif

/*
 * GEMM-style layout. Trees with zero weight are dropped (they add nothing), the
 * others kept in order. A is packed in panels of PA points and B in panels of PB
 * points, each panel tree-major ([tree][point in panel]), so an 8 x 8 micro-kernel
 * keeps its 64 accumulators in registers over all trees: per tree it loads 8 leaves
 * of B and 8 of A and does 64 compare / masked-add pairs (AVX2 when the CPU has it,
 * chosen at run time; SSE2 in two halves of 4 x 8 otherwise). B is processed in chunks
 * of panels sized to stay in L2 while the A panels stream past them.
 *
 * Every accumulator adds w_t for t in tree order, in float, in both the SSE2 and
 * the scalar code, so results are identical across paths and thread counts.
 */
#define PA 8
#define PB 8
#define CHUNK_BYTES (192 * 1024)

static void pack(const int32_t *src, int64_t n, int64_t n_trees, int point_major,
                 const int64_t *keep, int64_t n_keep, int panel, int32_t *dst,
                 int n_threads) {
    int64_t n_panels = (n + panel - 1) / panel;
    (void)n_threads; /* unused without OpenMP */
    #pragma omp parallel for schedule(static) num_threads(dfg_team(n_threads))
    for (int64_t p = 0; p < n_panels; p++) {
        int32_t *d = dst + p * n_keep * panel;
        for (int64_t k = 0; k < n_keep; k++) {
            int64_t t = keep[k];
            for (int i = 0; i < panel; i++) {
                int64_t s = p * panel + i;
                if (s >= n) s = n - 1; /* padding: computed, never stored */
                d[k * panel + i] = point_major ? src[s * n_trees + t] : src[t * n + s];
            }
        }
    }
}

#if defined(DFG_PROX_SSE2) && DFG_X86_DISPATCH
#include <immintrin.h>
#define DFG_PROX_AVX2 1
DFG_TARGET("avx2") static void micro_kernel_avx2(
    const int32_t *a, const int32_t *b, const float *w, int64_t n_keep, float acc[PA][PB]) {
    __m256 c0 = _mm256_setzero_ps(), c1 = _mm256_setzero_ps(), c2 = _mm256_setzero_ps(),
           c3 = _mm256_setzero_ps(), c4 = _mm256_setzero_ps(), c5 = _mm256_setzero_ps(),
           c6 = _mm256_setzero_ps(), c7 = _mm256_setzero_ps();
    for (int64_t k = 0; k < n_keep; k++) {
        __m256i bv = _mm256_loadu_si256((const __m256i *)(b + k * PB));
        __m256 wv = _mm256_set1_ps(w[k]);
        const int32_t *ak = a + k * PA;
#define DFG_STEP(c, i) c = _mm256_add_ps(c, _mm256_and_ps(_mm256_castsi256_ps( \
            _mm256_cmpeq_epi32(bv, _mm256_set1_epi32(ak[i]))), wv))
        DFG_STEP(c0, 0); DFG_STEP(c1, 1); DFG_STEP(c2, 2); DFG_STEP(c3, 3);
        DFG_STEP(c4, 4); DFG_STEP(c5, 5); DFG_STEP(c6, 6); DFG_STEP(c7, 7);
#undef DFG_STEP
    }
    _mm256_storeu_ps(acc[0], c0); _mm256_storeu_ps(acc[1], c1);
    _mm256_storeu_ps(acc[2], c2); _mm256_storeu_ps(acc[3], c3);
    _mm256_storeu_ps(acc[4], c4); _mm256_storeu_ps(acc[5], c5);
    _mm256_storeu_ps(acc[6], c6); _mm256_storeu_ps(acc[7], c7);
}

/* Equal weights: integer counts of shared leaves (compare, then subtract the -1 mask). */
DFG_TARGET("avx2") static void count_kernel_avx2(
    const int32_t *a, const int32_t *b, int64_t n_keep, int32_t cnt[PA][PB]) {
    __m256i c0 = _mm256_setzero_si256(), c1 = _mm256_setzero_si256(), c2 = _mm256_setzero_si256(),
            c3 = _mm256_setzero_si256(), c4 = _mm256_setzero_si256(), c5 = _mm256_setzero_si256(),
            c6 = _mm256_setzero_si256(), c7 = _mm256_setzero_si256();
    for (int64_t k = 0; k < n_keep; k++) {
        __m256i bv = _mm256_loadu_si256((const __m256i *)(b + k * PB));
        const int32_t *ak = a + k * PA;
#define DFG_STEP(c, i) c = _mm256_sub_epi32(c, _mm256_cmpeq_epi32(bv, _mm256_set1_epi32(ak[i])))
        DFG_STEP(c0, 0); DFG_STEP(c1, 1); DFG_STEP(c2, 2); DFG_STEP(c3, 3);
        DFG_STEP(c4, 4); DFG_STEP(c5, 5); DFG_STEP(c6, 6); DFG_STEP(c7, 7);
#undef DFG_STEP
    }
    _mm256_storeu_si256((__m256i *)cnt[0], c0); _mm256_storeu_si256((__m256i *)cnt[1], c1);
    _mm256_storeu_si256((__m256i *)cnt[2], c2); _mm256_storeu_si256((__m256i *)cnt[3], c3);
    _mm256_storeu_si256((__m256i *)cnt[4], c4); _mm256_storeu_si256((__m256i *)cnt[5], c5);
    _mm256_storeu_si256((__m256i *)cnt[6], c6); _mm256_storeu_si256((__m256i *)cnt[7], c7);
}
#endif

static void count_kernel(int use_avx2, const int32_t *a, const int32_t *b, int64_t n_keep,
                         int32_t cnt[PA][PB]) {
#ifdef DFG_PROX_AVX2
    if (use_avx2) {
        count_kernel_avx2(a, b, n_keep, cnt);
        return;
    }
#endif
    (void)use_avx2;
    for (int i = 0; i < PA; i++)
        for (int j = 0; j < PB; j++) cnt[i][j] = 0;
    for (int64_t k = 0; k < n_keep; k++)
        for (int i = 0; i < PA; i++) {
            const int32_t l = a[k * PA + i];
            for (int j = 0; j < PB; j++) cnt[i][j] += b[k * PB + j] == l;
        }
}

/* Rows h .. h+3 of the A panel against the B panel. */
static void micro_kernel_half(const int32_t *a, int h, const int32_t *b, const float *w,
                              int64_t n_keep, float acc[PA][PB]) {
#ifdef DFG_PROX_SSE2
    __m128 c00 = _mm_setzero_ps(), c01 = _mm_setzero_ps(), c10 = _mm_setzero_ps(),
           c11 = _mm_setzero_ps(), c20 = _mm_setzero_ps(), c21 = _mm_setzero_ps(),
           c30 = _mm_setzero_ps(), c31 = _mm_setzero_ps();
    for (int64_t k = 0; k < n_keep; k++) {
        __m128i b0 = _mm_loadu_si128((const __m128i *)(b + k * PB));
        __m128i b1 = _mm_loadu_si128((const __m128i *)(b + k * PB + 4));
        __m128i av = _mm_loadu_si128((const __m128i *)(a + k * PA + h));
        __m128 wv = _mm_set1_ps(w[k]);
        __m128i x;
        x = _mm_shuffle_epi32(av, 0x00);
        c00 = _mm_add_ps(c00, _mm_and_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(b0, x)), wv));
        c01 = _mm_add_ps(c01, _mm_and_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(b1, x)), wv));
        x = _mm_shuffle_epi32(av, 0x55);
        c10 = _mm_add_ps(c10, _mm_and_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(b0, x)), wv));
        c11 = _mm_add_ps(c11, _mm_and_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(b1, x)), wv));
        x = _mm_shuffle_epi32(av, 0xAA);
        c20 = _mm_add_ps(c20, _mm_and_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(b0, x)), wv));
        c21 = _mm_add_ps(c21, _mm_and_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(b1, x)), wv));
        x = _mm_shuffle_epi32(av, 0xFF);
        c30 = _mm_add_ps(c30, _mm_and_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(b0, x)), wv));
        c31 = _mm_add_ps(c31, _mm_and_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(b1, x)), wv));
    }
    _mm_storeu_ps(acc[h], c00); _mm_storeu_ps(acc[h] + 4, c01);
    _mm_storeu_ps(acc[h + 1], c10); _mm_storeu_ps(acc[h + 1] + 4, c11);
    _mm_storeu_ps(acc[h + 2], c20); _mm_storeu_ps(acc[h + 2] + 4, c21);
    _mm_storeu_ps(acc[h + 3], c30); _mm_storeu_ps(acc[h + 3] + 4, c31);
#else
    for (int i = h; i < h + 4; i++)
        for (int j = 0; j < PB; j++) acc[i][j] = 0.0f;
    for (int64_t k = 0; k < n_keep; k++)
        for (int i = h; i < h + 4; i++)
            for (int j = 0; j < PB; j++)
                acc[i][j] += a[k * PA + i] == b[k * PB + j] ? w[k] : 0.0f;
#endif
}

static void micro_kernel(int use_avx2, const int32_t *a, const int32_t *b, const float *w,
                         int64_t n_keep, float acc[PA][PB]) {
#ifdef DFG_PROX_AVX2
    if (use_avx2) {
        micro_kernel_avx2(a, b, w, n_keep, acc);
        return;
    }
#endif
    (void)use_avx2;
    micro_kernel_half(a, 0, b, w, n_keep, acc);
    micro_kernel_half(a, 4, b, w, n_keep, acc);
}

static int64_t keep_first(const float *weights, int64_t n_trees) {
    for (int64_t t = 0; t < n_trees; t++)
        if (weights[t] != 0.0f) return t;
    return 0;
}

int dfg_tree_distance(const int32_t *leaves_a, int64_t n_a, const int32_t *leaves_bt,
                      int64_t n_b, int64_t n_trees, const float *weights, float *out,
                      int n_threads, const volatile int *stop) {
    if (n_a < 0 || n_b < 0 || n_trees < 1 || n_threads < 1) return DFG_EINVAL;
    if (n_b > 0 && n_a > INT64_MAX / n_b) return DFG_EINVAL;
    if (n_a + PA > INT64_MAX / n_trees || n_b + PB > INT64_MAX / n_trees) return DFG_EINVAL;
    if ((uint64_t)(n_a + PA) * (uint64_t)n_trees > SIZE_MAX / sizeof(int32_t) ||
        (uint64_t)(n_b + PB) * (uint64_t)n_trees > SIZE_MAX / sizeof(int32_t))
        return DFG_EINVAL;
    /* total in tree order over the non-zero weights, exactly as the kernel adds them */
    float total = 0.0f;
    int64_t n_keep = 0;
    for (int64_t t = 0; t < n_trees; t++) {
        float w = weights[t];
        if (!(w >= 0.0f) || !isfinite(w)) return DFG_EINVAL;
        if (w != 0.0f) { total += w; n_keep++; }
    }
    if (!(total > 0.0f) || !isfinite(total)) return DFG_EINVAL;
    if (n_a == 0 || n_b == 0) return DFG_OK;

    int64_t panels_a = (n_a + PA - 1) / PA, panels_b = (n_b + PB - 1) / PB;
    int64_t *keep = malloc((size_t)n_keep * sizeof(int64_t));
    float *w = malloc((size_t)n_keep * sizeof(float));
    int32_t *pa = malloc((size_t)(panels_a * PA) * (size_t)n_keep * sizeof(int32_t));
    int32_t *pb = malloc((size_t)(panels_b * PB) * (size_t)n_keep * sizeof(int32_t));
    if (!keep || !w || !pa || !pb) {
        free(keep); free(w); free(pa); free(pb);
        return DFG_ENOMEM;
    }
    /* All non-zero weights equal (a random forest): proximity = shared / kept trees,
       counted in integers (exact; cheaper than masked float adds). */
    int equal = 1;
    const float first = weights[keep_first(weights, n_trees)];
    for (int64_t t = 0; t < n_trees; t++)
        if (weights[t] != 0.0f && weights[t] != first) equal = 0;
    for (int64_t t = 0, k = 0; t < n_trees; t++)
        if (weights[t] != 0.0f) { keep[k] = t; w[k] = weights[t]; k++; }
    pack(leaves_a, n_a, n_trees, 1, keep, n_keep, PA, pa, n_threads);
    pack(leaves_bt, n_b, n_trees, 0, keep, n_keep, PB, pb, n_threads);

    /* counts need n_keep <= 2^24 to be exact in float */
    if (equal && n_keep > (1 << 24)) equal = 0;
    const float denom = equal ? (float)n_keep : total;
    /* the AVX2 kernels give the same results as the SSE2 / scalar ones */
    int use_avx2 = dfg_cpu_use_avx2();
    int64_t chunk = CHUNK_BYTES / (n_keep * PB * (int64_t)sizeof(int32_t));
    if (chunk < 1) chunk = 1;
    int64_t n_chunks = (panels_b + chunk - 1) / chunk;
    /* tasks in chunk-major order, handed out dynamically: threads work on the same
       B chunk at about the same time, and a busy core does not hold up the others */
    int64_t n_tasks = n_chunks * panels_a;
    #pragma omp parallel for schedule(dynamic, 16) num_threads(dfg_team(n_threads))
    for (int64_t task = 0; task < n_tasks; task++) {
        /* a task is 8 points against one chunk of B: stopping skips the rest */
        if (dfg_stop_requested(stop)) continue;
        int64_t c = task / panels_a, p = task % panels_a;
        int64_t q0 = c * chunk, q1 = q0 + chunk < panels_b ? q0 + chunk : panels_b;
        {
            float acc[PA][PB];
            int32_t cnt[PA][PB];
            const int32_t *a = pa + p * n_keep * PA;
            for (int64_t q = q0; q < q1; q++) {
                if (equal) {
                    count_kernel(use_avx2, a, pb + q * n_keep * PB, n_keep, cnt);
                    for (int i = 0; i < PA; i++)
                        for (int j = 0; j < PB; j++) acc[i][j] = (float)cnt[i][j];
                } else {
                    micro_kernel(use_avx2, a, pb + q * n_keep * PB, w, n_keep, acc);
                }
                for (int i = 0; i < PA; i++) {
                    int64_t r = p * PA + i;
                    if (r >= n_a) break;
                    float *o = out + r * n_b + q * PB;
                    for (int j = 0; j < PB && q * PB + j < n_b; j++) {
                        float d = 1.0f - acc[i][j] / denom;
                        o[j] = d < 0.0f ? 0.0f : (d > 1.0f ? 1.0f : d);
                    }
                }
            }
        }
    }
    free(keep); free(w); free(pa); free(pb);
    return dfg_stop_requested(stop) ? DFG_EINTERRUPTED : DFG_OK;
}
