/* A neighbour query's first pass over GGUF quantised rows, read as the file stores them.
 *
 * A Q4_K table is 0.56 bytes a number, a bfloat16 copy of it 2: scanning the blocks in
 * place reads a quarter of the bytes and makes no copy.  Each row's score is its dot
 * product with the float32 query, times the row's stored reciprocal length (0 for a
 * row that points nowhere), as for 16-bit rows (_scan.c).
 *
 * Why the score is within StoredScreen.error_bound of the exact cosine (times |query|):
 * every number is first dequantised to the very float32 the gguf package's dequantize
 * gives (the rows the exact pass reads), not an approximation of it:
 *   Q8_0  v = d * q           d float16 (11 significant bits), q int8 (7 bits): 18 bits, exact;
 *   Q4_0  v = d * (q - 8)     11 + 4 bits, exact;
 *   Q6_K  v = (d * s) * (q - 32)   d * s (s int8) has 18 bits, q - 32 at most 32 in size:
 *                             at most 23 bits, so both products are exact in float32;
 *   Q4_K  v = (d * s) * q - (m * n)   d * s and m * n (s, n 6-bit) have 17 bits, times q
 *                             (4 bits) 21: exact; gguf then rounds the difference once,
 *                             and a fused multiply-subtract rounds the same exact
 *                             difference once, to the same float32;
 *   Q5_K  v = (d * s) * q - (m * n)   as Q4_K with q of 5 bits (the fifth from qh): 22 bits, exact,
 *                             the difference rounded once as gguf does.  Q5_K is scanned by its copy
 *                             sixteen rows at a time, made at open (AVX-512 VNNI, quants_groups_q5k.h,
 *                             whose top is its proof: Q4_K's integer bound with its spread), else in
 *                             float32 from its blocks (rows_plain) where a copy is given to no scan.
 * The scan then sums v_j * x_j in float32: 16 lanes (times the unrolling) each add
 * width / 16 fused products in turn, and the lanes are added in a tree, so no product
 * goes through more than width roundings, and the sum is within gamma_width of the sum
 * of |v_j x_j| (Higham, Accuracy and Stability, 3.1), which is at most |v| |x| by
 * Cauchy-Schwarz: accumulation_error(width) in Python.  This is the bound of a 16-bit
 * row's scan with no rounding of its numbers, so neighbours.search keeps every row that
 * could be among the best and rescores it in float64 from the dequantised numbers.
 *
 * On AVX-512, Q8_0, Q4_0, Q6_K (and Q4_K, below) rows are scanned against the query held as 16-bit
 * integers (quantise_query): x = step_B xq + e, with step_B a power of two per run B of 32 numbers,
 * so |e| <= QUERY_ROUNDING |x|.  Each stored integer (q, q - 8 or q - 32) times xq is summed in pairs
 * (by VNNI in fours: quants_vnni.h) exactly (int32, below 2^24, so exact as float32 too), and a
 * block's pair sums are multiplied by d step_B (Q8_0, Q4_0: a Q4_0 block is one run, q - 8 at most 8
 * in size) or d s step_B (Q6_K), products of a float16, a small integer and a power of two: exact.
 * So the sum is, up to float32 rounding, sum v_j (step xq)_j = v.x - v.e: within gamma_width
 * |v| |x - e| of it as above, and |v.e| <= |v| |e| (Cauchy-Schwarz).  Divided by |v| by the scale,
 * the score is within QUERY_ROUNDING |x| + (1 + QUERY_ROUNDING) times the float bound of the cosine
 * times |x|: StoredScreen.error_bound adds exactly that.
 *
 * Q4_K against the integer query sums (d s step) (q . xq) and (m n) (step sum xq) apart and
 * subtracts (min offsets summed once per 8 sub-blocks): the exact real result is
 * sum_j (d s q_j - m n) x~_j with x~ = step xq, and every product and sum rounds by at most
 * gamma_width of its own size, so the error is within gamma_width sum_j (|d s| q_j + |m n|)
 * |x~_j| <= gamma_width A |x~| (A, the root of the row's q4_k_spreads, is measured at each
 * open).  gguf's numbers v_j are d s q_j - m n rounded once: sum (d s q_j - m n) x~_j is
 * within 2^-24 (1 + 2^-24) |v| |x~| of v . x~.  Divided by |v|: QUERY_ROUNDING |x| plus
 * (1 + QUERY_ROUNDING) |x| (gamma_width A / |v| + 2^-23), the table's largest A / |v| being
 * StoredScreen.spread (above 64, the table keeps the float scan).  From the second query on, a
 * Q4_K table is scanned by groups of 16 rows (quants_groups.h): the same integer sums, each term
 * through at most width / 32 + 2 roundings, so the same bound.  Q6_K likewise (quants_groups_q6k.h).
 *
 * Q4_0 (from its second query), Q4_1, Q5_0, Q5_1 and IQ4_NL (from the open) are scanned the same way,
 * by groups of 16 rows (quants_groups32.h, whose top proves their bound: Q4_0's above, or Q4_K's with
 * a spread for Q4_1 and Q5_1); without VNNI the last four are scanned as a bfloat16 copy, as before.
 * NVFP4, TQ1_0, IQ3_XXS and IQ3_S likewise from the open (quants_fp4_ternary.h, whose top proves their bound:
 * Q4_0's).
 *
 * Built three times on x86 (AVX-512 by hand, AVX2 and plain from portable C), the best
 * one the CPU runs picked at import; -march=native is never used (the wheel runs anywhere).
 */
#include "scan_common.h"

#include <math.h>

/* Explicit values: the Python side names them (stored_search.py).  Q5_K: scanned by its grouped
 * copy only (quants_groups_q5k.h), else in float32; Q2_K and Q3_K are scanned by low_bit_scores
 * (quants_groups_q2q3.h).  A kind whose BLOCK_NUMBERS is 0 is not built here.
 * IQ4_XS, TQ2_0 and MXFP4: quants_lookup.h.  NVFP4, TQ1_0, IQ3_XXS and IQ3_S: quants_fp4_ternary.h.
 * The IQ1/IQ2 kinds 18-22: iq_scores (quants_iq.h). */
enum {
    KIND_Q8_0 = 0, KIND_Q4_0 = 1, KIND_Q4_K = 2, KIND_Q6_K = 3, KIND_Q5_K = 4, KIND_Q4_1 = 5, KIND_Q5_0 = 6,
    KIND_Q5_1 = 7, KIND_IQ4_NL = 8, KIND_Q2_K = 9, KIND_Q3_K = 10, KIND_IQ4_XS = 11, KIND_TQ2_0 = 12,
    KIND_MXFP4 = 13, KIND_NVFP4 = 14, KIND_TQ1_0 = 15, KIND_IQ3_XXS = 16, KIND_IQ3_S = 17, KIND_IQ2_XXS = 18,
    KIND_IQ2_XS = 19, KIND_IQ2_S = 20, KIND_IQ1_S = 21, KIND_IQ1_M = 22, KINDS = 23
};

/* Numbers and bytes per block of each kind (GGML_QUANT_SIZES). */
static const Py_ssize_t BLOCK_NUMBERS[KINDS] = {[KIND_Q8_0] = 32, [KIND_Q4_0] = 32, [KIND_Q4_K] = 256,
                                                [KIND_Q6_K] = 256, [KIND_Q5_K] = 256, [KIND_Q4_1] = 32,
                                                [KIND_Q5_0] = 32, [KIND_Q5_1] = 32, [KIND_IQ4_NL] = 32,
                                                [KIND_Q2_K] = 256, [KIND_Q3_K] = 256, [KIND_IQ4_XS] = 256,
                                                [KIND_TQ2_0] = 256, [KIND_MXFP4] = 32, [KIND_NVFP4] = 64,
                                                [KIND_TQ1_0] = 256, [KIND_IQ3_XXS] = 256, [KIND_IQ3_S] = 256,
                                                [KIND_IQ2_XXS] = 256, [KIND_IQ2_XS] = 256, [KIND_IQ2_S] = 256,
                                                [KIND_IQ1_S] = 256, [KIND_IQ1_M] = 256};
static const Py_ssize_t BLOCK_BYTES[KINDS] = {[KIND_Q8_0] = 34, [KIND_Q4_0] = 18, [KIND_Q4_K] = 144,
                                              [KIND_Q6_K] = 210, [KIND_Q5_K] = 176, [KIND_Q4_1] = 20,
                                              [KIND_Q5_0] = 22, [KIND_Q5_1] = 24, [KIND_IQ4_NL] = 18,
                                              [KIND_Q2_K] = 84, [KIND_Q3_K] = 110, [KIND_IQ4_XS] = 136,
                                              [KIND_TQ2_0] = 66, [KIND_MXFP4] = 17, [KIND_NVFP4] = 36,
                                              [KIND_TQ1_0] = 54, [KIND_IQ3_XXS] = 98, [KIND_IQ3_S] = 110,
                                              [KIND_IQ2_XXS] = 66, [KIND_IQ2_XS] = 74, [KIND_IQ2_S] = 82,
                                              [KIND_IQ1_S] = 50, [KIND_IQ1_M] = 56};

/* A copy of a table's rows sixteen at a time, made by chunks of rows (quants_group_copy.h): the kind, the
 * stored rows, how many and their blocks each, and where the groups go. */
struct kind_group_job {
    int kind;
    const uint8_t *rows;
    Py_ssize_t count, blocks;
    uint8_t *groups;
};

#include "quants_blocks.h"

#define LANES 16

/* Portable rows: each block dequantised into a small buffer, then its products added
 * into LANES running sums (the compiler vectorises both loops). */
static ALWAYS_INLINE void rows_portable(int kind, const uint8_t *rows, Py_ssize_t row_bytes, const float *query,
                                        const float *scale, float *out, Py_ssize_t start, Py_ssize_t stop,
                                        Py_ssize_t width)
{
    Py_ssize_t per_block = BLOCK_NUMBERS[kind], block_bytes = BLOCK_BYTES[kind];
    float v[256];
    for (Py_ssize_t i = start; i < stop; i++) {
        const uint8_t *row = rows + i * row_bytes;
        float lanes[LANES] = {0};
        for (Py_ssize_t b = 0; b * per_block < width; b++) {
            dequantise_block(kind, row + b * block_bytes, v);
            const float *x = query + b * per_block;
            for (Py_ssize_t j = 0; j < per_block; j += LANES)
                for (int lane = 0; lane < LANES; lane++)
                    lanes[lane] += v[j + lane] * x[j + lane];
        }
        for (int half = LANES / 2; half > 0; half /= 2) /* a tree: log2(LANES) roundings */
            for (int lane = 0; lane < half; lane++)
                lanes[lane] += lanes[lane + half];
        out[i] = scale[i] == 0.0f ? 0.0f : lanes[0] * scale[i];
    }
}

typedef void (*rows_function)(int, const uint8_t *, Py_ssize_t, const float *, const float *, float *, Py_ssize_t,
                              Py_ssize_t, Py_ssize_t);

static void rows_plain(int kind, const uint8_t *rows, Py_ssize_t row_bytes, const float *query, const float *scale,
                       float *out, Py_ssize_t start, Py_ssize_t stop, Py_ssize_t width)
{
    rows_portable(kind, rows, row_bytes, query, scale, out, start, stop, width);
}

static rows_function chosen_rows = rows_plain;
static const char *chosen_name = "plain";
/* Q8_0, Q4_0, Q4_K and Q6_K against a 16-bit integer query (AVX-512 builds only); all but Q8_0 by
 * VNNI's byte products where the CPU has them (quants_vnni.h). */
static int integer_scan = 0;
static int vnni_scan = 0;
/* The exact pass's float64 sums by AVX-512 (quants_exact.h: the same sums as the portable build's). */
static int exact_avx512 = 0;

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#include <immintrin.h>

#include "quants_avx512.h"
#include "quants_vnni.h"

__attribute__((target("avx2,fma"))) static void rows_avx2(int kind, const uint8_t *rows, Py_ssize_t row_bytes,
                                                          const float *query, const float *scale, float *out,
                                                          Py_ssize_t start, Py_ssize_t stop, Py_ssize_t width)
{
    rows_portable(kind, rows, row_bytes, query, scale, out, start, stop, width);
}

static void choose_rows(void)
{
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("f16c") &&
        __builtin_cpu_supports("fma")) {
        chosen_rows = rows_avx512;
        chosen_name = "avx512f";
        integer_scan = 1;
        exact_avx512 = __builtin_cpu_supports("avx512vl");
        vnni_scan = __builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx512vl") &&
                    __builtin_cpu_supports("gfni") && __builtin_cpu_supports("avx512vbmi"); /* the grids' lookups */
    } else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
        chosen_rows = rows_avx2;
        chosen_name = "avx2";
    }
}
#else
static void choose_rows(void) {}
static void split_query(const int16_t *xq, const float *step, Py_ssize_t width, int8_t *high, int8_t *low,
                        int32_t *centre, int32_t offset, float *paired)
{
    (void)xq, (void)step, (void)width, (void)high, (void)low, (void)centre, (void)offset, (void)paired;
}
#endif

#include "quants_groups.h"
#include "quants_groups_q2q3.h"
#include "quants_groups_q6k.h"
#include "quants_groups_q5k.h"

struct quant_job {
    int kind;
    const uint8_t *rows;
    Py_ssize_t row_bytes, width;
    const float *query, *scale;
    float *out;
    const int16_t *xq; /* the query as integers, or NULL: the float scan */
    const float *step;
    const int8_t *high, *low; /* xq as two bytes for VNNI (Q4_0, Q4_K, Q6_K), or NULL */
    const int32_t *centre;
    const float *paired; /* Q4_K by VNNI: each block's steps and sums side by side */
    const uint8_t *groups; /* Q4_K or a 32-number kind by VNNI: the rows sixteen at a time, or NULL */
};

static void quant_chunk(const void *job, Py_ssize_t start, Py_ssize_t stop)
{
    const struct quant_job *q = job;
    if (q->kind == KIND_Q5_K && q->groups == NULL) { /* Q5_K's blocks without its grouped copy: the float scan */
        rows_plain(q->kind, q->rows, q->row_bytes, q->query, q->scale, q->out, start, stop, q->width);
        return;
    }
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
    if (q->groups != NULL && q->kind == KIND_Q6_K &&
        q6_k_groups_vnni(q->groups, q->high, q->low, q->centre, q->step, q->scale, q->out, start, stop, q->width))
        return;
    if (q->groups != NULL && (q->kind == KIND_Q4_K || q->kind == KIND_Q5_K)) {
        (q->kind == KIND_Q5_K ? q5_k_groups_vnni : groups_vnni)(q->groups, q->width / 256, q->high, q->low, q->step,
                                                                q->scale, q->out, start, stop, q->width);
        return;
    }
    if (q->groups != NULL && is_grouped32(q->kind)) { /* quants_groups32.h */
        groups32_vnni(q->kind, q->groups, q->width / 32, q->high, q->low, q->centre, q->step, q->scale, q->out, start,
                      stop);
        return;
    }
    if (is_block32(q->kind) && q->kind != KIND_Q4_0) { /* without their groups: the float scan, portable C */
        rows_plain(q->kind, q->rows, q->row_bytes, q->query, q->scale, q->out, start, stop, q->width);
        return;
    }
    if (q->high != NULL) {
        rows_vnni(q->kind, q->rows, q->row_bytes, q->high, q->low, q->centre, q->step, q->paired, q->scale, q->out,
                  start, stop, q->width);
        return;
    }
    if (q->xq != NULL) {
        rows_integer(q->kind, q->rows, q->row_bytes, q->xq, q->step, q->scale, q->out, start, stop, q->width);
        return;
    }
#endif
    chosen_rows(q->kind, q->rows, q->row_bytes, q->query, q->scale, q->out, start, stop, q->width);
}

/* The query as 16-bit integers, 32 numbers to a step: x = step * xq + e.  Each step is a power of
 * two (so step times a block's float16 scale is exact) with the run's largest number, at least
 * 2^(exponent - 1), below 2^14 steps, so |xq| <= 2^14 (VNNI splits it into two signed bytes:
 * quants_vnni.h).  x / step is exact (a power of two) but where it falls below float32's normal
 * range, off by at most 2^-150 there; rounded to the nearest integer, |e_j| <= step (1/2 + 2^-150)
 * <= largest (1 + 2^-149) / 2^14, and |e| <= sqrt(32) |x| (1 + 2^-149) / 2^14 (QUERY_ROUNDING,
 * which Python adds to the bound).  False when a step would leave float32's comfortable range (a
 * query of huge or tiny numbers): the float scan. */
static int quantise_query(const float *x, Py_ssize_t width, int16_t *xq, float *step /* 2 x width / 32 */)
{
    for (Py_ssize_t b = 0; b * 32 < width; b++) {
        float largest = 0.0f;
        for (int j = 0; j < 32; j++)
            largest = fmaxf(largest, fabsf(x[32 * b + j]));
        int exponent = 0;
        frexpf(largest, &exponent); /* largest = f 2^exponent, 0.5 <= f < 1 */
        if (largest == 0.0f)
            exponent = 0;
        if (!(largest < 1e30f) || exponent - 14 < -100)
            return 0;
        step[b] = ldexpf(1.0f, exponent - 14);
        int32_t sum = 0;
        for (int j = 0; j < 32; j++) {
            float q = nearbyintf(x[32 * b + j] / step[b]);
            xq[32 * b + j] = (int16_t)(q > 16384.0f ? 16384.0f : (q < -16384.0f ? -16384.0f : q)); /* never held */
            sum += xq[32 * b + j];
        }
        /* The run's sum of xq times its step (at most 2^19 steps: exact), for Q4_K's min offsets. */
        step[width / 32 + b] = (float)sum * step[b];
    }
    return 1;
}

/* The query as signed bytes, 32 numbers to a step, for a first pass that measures its own rounding
 * (iq_scores's coarse scan): x = step * xq + e, step the run's largest size over 127 (rounded to float32, so
 * x / step rounds to at most 127 in size), xq rounded to the nearest integer.  Not a power of two as
 * quantise_query's: a free step leaves a third of the rounding on a table's own rows (|e| 0.0016 |x| against
 * 0.0048, GPT-2-shaped IQ1_S rows), and the weights it makes are rounded (quants_iq.h's top says why that is
 * within the bound).  *rounding gets |e|, summed in float64: step xq is exact there, so is x - step xq (within a
 * step of each other, or x alone where xq is 0), each square rounds by 2^-53 and the sum by width 2^-53, so
 * |e| (1 + 2^-40) bounds it.  xq16 gets the same integers, for the sums the minus runs need.  False where a run's
 * largest number is 2^64 or more (a step below 2^57 keeps every weighted sum far from float32's largest) or below
 * 2^-80 but not 0 (its weights would leave float32's normal range): the float scan. */
static int quantise_query_bytes(const float *x, Py_ssize_t width, int8_t *xq, int16_t *xq16, float *step,
                                double *rounding)
{
    double squares = 0.0;
    for (Py_ssize_t b = 0; b * 32 < width; b++) {
        float largest = 0.0f;
        for (int j = 0; j < 32; j++)
            largest = fmaxf(largest, fabsf(x[32 * b + j]));
        if (!(largest < 0x1p64f) || (largest != 0.0f && largest < 0x1p-80f))
            return 0;
        step[b] = largest == 0.0f ? 1.0f : largest / 127.0f;
        for (int j = 0; j < 32; j++) {
            float q = nearbyintf(x[32 * b + j] / step[b]);
            q = q > 127.0f ? 127.0f : (q < -127.0f ? -127.0f : q); /* never held: x / step is 127 at most */
            xq[32 * b + j] = (int8_t)q;
            xq16[32 * b + j] = (int16_t)q;
            double e = (double)x[32 * b + j] - (double)step[b] * (double)q;
            squares += e * e;
        }
    }
    *rounding = sqrt(squares) * (1.0 + 0x1p-40);
    return 1;
}

/* The query's copies the scan of Q8_0, Q4_0, Q4_K, Q6_K, Q5_K and the 32-number kinds reads (quant_query_prepare),
 * held until quant_query_free. */
struct quant_query {
    int16_t *xq;
    float *step;
    int8_t *bytes; /* VNNI's high and low bytes of xq, width each (coarse: the signed bytes alone) */
    int32_t *centre;
    float *paired;
    double rounding; /* |x - x~| of the query the scan reads (coarse: its bytes; 0: not read in bytes) */
};

/* Fill job's query fields: the query as 16-bit integers where the integer scan runs, split in two bytes for VNNI
 * with each kind's centres (Q4_K: its paired steps and sums) and the groups where given; or, with ``coarse`` (Q4_K
 * and Q6_K rows as stored, on a VNNI build), as signed bytes whose rounding it measures (quantise_query_bytes: a
 * free step, each weight rounded once more, the sums exact: quants_vnni.h).  Elsewhere the float scan. */
static void quant_query_prepare(struct quant_job *job, struct quant_query *prep, const uint8_t *groups, int integer,
                                int coarse)
{
    int kind = job->kind;
    Py_ssize_t width = job->width;
    *prep = (struct quant_query){NULL, NULL, NULL, NULL, NULL, 0.0};
    if (!integer_scan || !integer)
        return;
    prep->xq = PyMem_RawMalloc((size_t)width * sizeof(int16_t));
    prep->step = PyMem_RawMalloc((size_t)(width / 32) * 2 * sizeof(float));
    if (prep->xq == NULL || prep->step == NULL)
        return;
    if (coarse) {
        prep->bytes = PyMem_RawMalloc((size_t)width);
        prep->centre = PyMem_RawMalloc((size_t)(width / 4) * sizeof(int32_t));
        prep->paired = PyMem_RawMalloc((size_t)(width / 16) * sizeof(float));
        if (!vnni_scan || prep->bytes == NULL || prep->centre == NULL || prep->paired == NULL ||
            !quantise_query_bytes(job->query, width, prep->bytes, prep->xq, prep->step, &prep->rounding)) {
            prep->rounding = 0.0;
            return;
        }
        int16_t *xq = prep->xq;
        for (Py_ssize_t j = 0; j < width; j += 4) /* 32 times each four numbers' sum of xq (Q6_K's centre) */
            prep->centre[j / 4] = 32 * ((int32_t)xq[j] + xq[j + 1] + xq[j + 2] + xq[j + 3]);
        for (Py_ssize_t k = 0; k < width / 32; k++) { /* Q4_K: per block its runs' steps, then step times sum xq */
            int32_t sum = 0;
            for (int j = 0; j < 32; j++)
                sum += xq[32 * k + j];
            prep->paired[16 * (k / 8) + k % 8] = prep->step[k];
            prep->paired[16 * (k / 8) + 8 + k % 8] = prep->step[k] * (float)sum; /* rounded once */
        }
        job->xq = prep->xq, job->step = prep->step, job->high = prep->bytes, job->centre = prep->centre;
        job->paired = prep->paired;
        return;
    }
    if (!quantise_query(job->query, width, prep->xq, prep->step))
        return;
    job->xq = prep->xq, job->step = prep->step;
    if (!vnni_scan || (kind == KIND_Q8_0 && groups == NULL)) /* Q8_0: by its groups */
        return;
    prep->bytes = PyMem_RawMalloc((size_t)width * 2);
    prep->centre = kind != KIND_Q4_K ? PyMem_RawMalloc((size_t)(width / 4) * sizeof(int32_t)) : NULL;
    /* Split as Q4_0's for the 32-number kinds (their groups replace the centres below). */
    prep->paired = kind == KIND_Q4_K ? PyMem_RawMalloc((size_t)(width / 16) * sizeof(float)) : NULL;
    if (prep->bytes == NULL || (kind != KIND_Q4_K ? prep->centre == NULL : prep->paired == NULL))
        return;
    split_query(prep->xq, prep->step, width, prep->bytes, prep->bytes + width, prep->centre, kind == KIND_Q6_K ? 32 : 8,
                prep->paired);
    job->high = prep->bytes, job->low = prep->bytes + width, job->centre = prep->centre, job->paired = prep->paired;
    job->groups = groups; /* NULL unless given */
    if (groups != NULL && is_grouped32(kind)) /* the groups' offsets: per run, not per four */
        group32_centres(kind, prep->xq, width, prep->centre);
}

static void quant_query_free(struct quant_query *prep)
{
    PyMem_RawFree(prep->xq);
    PyMem_RawFree(prep->step);
    PyMem_RawFree(prep->bytes);
    PyMem_RawFree(prep->centre);
    PyMem_RawFree(prep->paired);
}

#include "quants_lookup.h"
#include "quants_grid_lookup.h"
#include "quants_fp4_ternary.h"
#include "quants_iq.h"
#include "quants_exact.h"
#include "quants_top.h"
#include "quants_bytes_search.h"
#include "quants_group_copy.h"

static PyObject *quant_scores(PyObject *self, PyObject *args)
{
    Py_buffer rows, query, scale, out, progress, groups = {0};
    int kind;
    (void)self;
    int integer = 0, coarse = 0;
    if (!PyArg_ParseTuple(args, "y*iy*y*w*w*|pz*p", &rows, &kind, &query, &scale, &out, &progress, &integer, &groups,
                          &coarse))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t width = query.len / (Py_ssize_t)sizeof(float);
    Py_ssize_t count = out.len / (Py_ssize_t)sizeof(float);
    if (kind < 0 || kind >= KINDS || kind == KIND_Q2_K || kind == KIND_Q3_K ||
        BLOCK_NUMBERS[kind] == 0) { /* Q2_K and Q3_K: low_bit_scores */
        PyErr_SetString(PyExc_ValueError, "kind must be 0-3 (Q8_0, Q4_0, Q4_K, Q6_K), 4 (Q5_K), 5-8 (Q4_1-IQ4_NL), "
                                          "11-13 (IQ4_XS, TQ2_0, MXFP4) or 14-17 (NVFP4, TQ1_0, IQ3_XXS, IQ3_S)");
    } else if (width == 0 || query.len % (Py_ssize_t)sizeof(float) != 0 || width % BLOCK_NUMBERS[kind] != 0) {
        PyErr_SetString(PyExc_ValueError, "the query must hold a whole number of blocks of float32 numbers");
    } else if (rows.len != count * (width / BLOCK_NUMBERS[kind]) * BLOCK_BYTES[kind]) {
        PyErr_SetString(PyExc_ValueError, "rows must hold len(out) rows of len(query) quantised numbers");
    } else if (coarse && !fp4t_bytes_kind(kind) && !lookup_bytes_kind(kind) && kind != KIND_Q4_K && kind != KIND_Q6_K) {
        PyErr_SetString(PyExc_ValueError, "the query in bytes is for Q4_K, Q6_K, TQ1_0, TQ2_0, IQ3 and IQ4_XS rows "
                                          "only among these kinds");
    } else if (scale.len == out.len && fp4t_kind(kind)) {
        if (check_progress(&progress))
            result = fp4t_scores(kind, &rows, &query, &scale, &out, &progress, integer, &groups, count, width, coarse);
    } else if (groups.buf != NULL && kind == KIND_Q6_K && groups.len != q6_k_groups_bytes(count, width)) {
        PyErr_SetString(PyExc_ValueError, "groups must be q6_k_groups's copy of the Q6_K rows");
    } else if (groups.buf != NULL && kind != KIND_Q6_K &&
               (kind == KIND_Q4_K || kind == KIND_Q5_K
                    ? groups.len != (count + GROUP_ROWS - 1) / GROUP_ROWS * (width / 256) *
                                        (kind == KIND_Q4_K ? GROUP_BLOCK_BYTES : Q5_K_GROUP_BLOCK_BYTES)
                : lookup_kind(kind) ? groups.len != lookup_groups_bytes(kind, count, width)
                : !is_grouped32(kind) || groups.len != (count + GROUP32_ROWS - 1) / GROUP32_ROWS *
                                                         (width / 32) * GROUP32_BYTES(kind))) {
        PyErr_SetString(PyExc_ValueError, "groups must be q4_k_groups's, q5_k_groups's, q6_k_groups's, "
                                          "or copy_groups's copy");
    } else if (scale.len != out.len) {
        PyErr_SetString(PyExc_ValueError, "scale must hold one float32 per row");
    } else if (lookup_kind(kind)) {
        if (check_progress(&progress))
            result = lookup_scores(kind, &rows, &query, &scale, &out, &progress, integer, groups.buf, count, width,
                                   coarse);
    } else if (coarse && (kind == KIND_Q4_K || kind == KIND_Q6_K) && groups.buf != NULL) {
        PyErr_SetString(PyExc_ValueError, "the query in bytes reads Q4_K and Q6_K rows as stored, not their groups");
    } else if (check_progress(&progress)) {
        struct quant_job job = {kind, rows.buf, (width / BLOCK_NUMBERS[kind]) * BLOCK_BYTES[kind], width,
                                query.buf, scale.buf, out.buf, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
        struct quant_query prep;
        quant_query_prepare(&job, &prep, groups.buf, integer, coarse);
        result = share_chunks_released(quant_chunk, &job, count, &progress);
        if (result != NULL && coarse) {
            Py_DECREF(result);
            result = PyFloat_FromDouble(prep.rounding);
        }
        quant_query_free(&prep);
    }
    PyBuffer_Release(&rows);
    PyBuffer_Release(&query);
    PyBuffer_Release(&scale);
    PyBuffer_Release(&out);
    PyBuffer_Release(&progress);
    if (groups.buf != NULL)
        PyBuffer_Release(&groups);
    return result;
}

/* For tests: run a given build ("plain", "avx2", "avx512f", "avx512f-float", or "avx512f-int16": the
 * integer query without VNNI) where this CPU can; answers the one now in use. */
static PyObject *use_build(PyObject *self, PyObject *args)
{
    const char *name;
    (void)self;
    if (!PyArg_ParseTuple(args, "s", &name))
        return NULL;
    choose_rows();
    if (strcmp(name, "plain") == 0) {
        chosen_rows = rows_plain, chosen_name = "plain", integer_scan = 0, vnni_scan = 0, exact_avx512 = 0;
    }
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
    else if (strcmp(name, "avx2") == 0 && strcmp(chosen_name, "plain") != 0) {
        chosen_rows = rows_avx2, chosen_name = "avx2", integer_scan = 0, vnni_scan = 0, exact_avx512 = 0;
    }
#endif
    else if (strcmp(name, "avx512f-float") == 0 && integer_scan) {
        integer_scan = 0, vnni_scan = 0; /* the AVX-512 build's float scan for every type */
        return PyUnicode_FromString("avx512f-float");
    } else if (strcmp(name, "avx512f-int16") == 0 && integer_scan) {
        vnni_scan = 0; /* the 16-bit integer scan of Q4_0, Q4_K and Q6_K too, where VNNI would be used */
        return PyUnicode_FromString("avx512f-int16");
    }
    return PyUnicode_FromString(chosen_name);
}

static PyMethodDef quant_methods[] = {
    {"q4_k_spreads", q4_k_spreads, METH_VARARGS,
     "q4_k_spreads(rows, width, out, progress)\n\nWrite each Q4_K row's sum of (|d s| q + |m n|)^2 (float64) into out;\n"
     "threads share rows as in quant_scores."},
    {"q4_k_groups", q4_k_groups, METH_VARARGS,
     "q4_k_groups(rows, width, out, progress)\n\nCopy Q4_K rows into out sixteen at a time (quants_groups.h), for\n"
     "quant_scores's groups; threads share rows as there."},
    {"q6_k_groups", q6_k_groups, METH_VARARGS,
     "q6_k_groups(rows, width, out, progress)\n\nCopy Q6_K rows into out sixteen at a time (quants_groups_q6k.h),\n"
     "for quant_scores's groups; threads share rows as there."},
    {"q5_k_groups", q5_k_groups, METH_VARARGS,
     "q5_k_groups(rows, width, out, spreads, progress)\n\nCopy Q5_K rows into out sixteen at a time\n"
     "(quants_groups_q5k.h, out 8-byte aligned) and write each row's spread (as q4_k_spreads's) into spreads;\n"
     "threads share rows."},
    {"block32_spreads", block32_spreads, METH_VARARGS,
     "block32_spreads(rows, kind, width, out, progress)\n\nWrite each Q4_1 or Q5_1 row's sum of (|d| q + |m|)^2\n"
     "(float64) into out; threads share rows as in quant_scores."},
    {"fp4t_use_vbmi", fp4t_use_vbmi, METH_VARARGS,
     "fp4t_use_vbmi(on)\n\nFor tests: let NVFP4 use VBMI where the CPU has it, or not; returns whether it does."},
    {"grouped_scan", grouped_scan, METH_NOARGS,
     "grouped_scan()\n\nTrue when quant_scores scans rows by their groups here (AVX-512 VNNI, GFNI\n"
     "and VBMI): Q4_K's from\n"
     "q4_k_groups, Q5_K's from q5_k_groups, Q6_K's from q6_k_groups, every other kind from copy_groups."},
    {"low_bit_scores", low_bit_scores, METH_VARARGS,
     "low_bit_scores(rows, kind, query, scale, out, progress, integer=False, groups=None, coarse=False)\n\n"
     "quant_scores for Q2_K and Q3_K rows: by their groups against the integer query where grouped_scan(), else in\n"
     "float32.  coarse: against the query in signed bytes, returning |x - x~| of the query it read (0.0 in\n"
     "float32)."},
    {"q2_k_spreads", q2_k_spreads, METH_VARARGS,
     "q2_k_spreads(rows, width, out, progress)\n\nq4_k_spreads for Q2_K rows."},
    {"iq_scores", iq_scores, METH_VARARGS,
     "iq_scores(groups, rows, kind, query, scale, out, progress, coarse=False)\n\n"
     "As quant_scores, for IQ1/IQ2 rows by their groups (copy_groups's copy), or by their stored blocks in\n"
     "float32 where the groups' scan cannot run.\n"
     "coarse: against the query in signed bytes, returning |x - x~| of the query it read\n"
     "(0.0 when it scanned in float32)."},
    {"copy_groups", copy_groups, METH_VARARGS,
     "copy_groups(rows, kind, width, out, progress)\n\nCopy rows of a kind that is scanned by its groups (1, 5-22)\n"
     "into out sixteen rows at a time (the kind's header says how), for quant_scores's, low_bit_scores's or\n"
     "iq_scores's groups; threads that call it with the same zeroed progress share the rows."},
    {"groups_size", groups_size, METH_VARARGS,
     "groups_size(kind, count, width)\n\nBytes of copy_groups's copy of count rows of width numbers."},
    {"dot_rows", dot_rows, METH_VARARGS,
     "dot_rows(rows, kind, ids, query, out, lengths=None, scale=None)\n\nWrite into out (float64) the dot product of\n"
     "each row ids[i] (int64) of quantised rows (kind as for dequantise) with the float64 query, from dequantise's\n"
     "numbers, summed in float64; with every row's lengths (float64) and scale (float32), over its row's length\n"
     "(0 where the scale is 0)."},
    {"bytes_search", bytes_search, METH_VARARGS,
     "bytes_search(groups, rows, kind, query, query64, scale, lengths, relative, length, exclude, ids_out,\n"
     "           cosines_out, helpers)\n\n"
     "An IQ1, IQ2, IQ3, IQ4_XS, Q2_K, Q3_K, TQ1_0 or TQ2_0 table's search in one call, or a Q4_K or Q6_K table's\n"
     "read as stored (groups empty): iq_scores's, quant_scores's or low_bit_scores's coarse scan, the rows in\n"
     "exclude set aside, and the k = len(ids_out) best by stored_top_k with the margin length (r + (1 + r)\n"
     "relative), r the query's measured rounding over length; their cosines (exact values over length) into\n"
     "cosines_out as float32.\n"
     "Returns how many, or -1 where stored_top_k would (the caller searches step by step).  helpers: the\n"
     "pass's helper threads (scan_threads.helpers_for)."},
    {"stored_top_k", stored_top_k, METH_VARARGS,
     "stored_top_k(scores, k, window, rows, kind, query, lengths, scale, ids_out, values_out)\n\n"
     "The k rows of quantised rows (kind as for dot_rows) with the highest exact cosine times |query| (float64\n"
     "query), best first, ties by id, among those whose float32 score is at or above the k-th best less window:\n"
     "their ids into ids_out (k int64) and cosines times |query| into values_out (k float64, 0 where scale is 0);\n"
     "returns how many, or -1 when a score is NaN or thousands of scores lie within window of the k-th best\n"
     "(nothing written that counts: neighbours.search's steps decide then).  Without the GIL."},
    {"dequantise", dequantise, METH_VARARGS,
     "dequantise(rows, kind, out)\n\nWrite the float32 numbers of quantised rows (GGUF blocks, uint8; kind as for\n"
     "quant_scores, or 4 Q5_K, 11 IQ4_XS, 12 TQ2_0, 13 MXFP4, 14 NVFP4, 15 TQ1_0, 16 IQ3_XXS, 17 IQ3_S, 18-22\n"
     "the IQ1/IQ2 kinds) into out,\n"
     "as gguf's dequantize gives them, without the GIL."},
    {"use_build", use_build, METH_VARARGS,
     "use_build(name)\n\nFor tests: scan with the named build (plain, avx2, avx512f, avx512f-float: no integer\n"
     "query, or avx512f-int16: no VNNI) where this CPU runs it, else the best one; returns the name of\n"
     "the build now in use."},
    {"quant_scores", quant_scores, METH_VARARGS,
     "quant_scores(rows, kind, query, scale, out, progress, integer=False, groups=None, coarse=False)\n\n"
     "Write scale[i] times the dot product of quantised row i (GGUF blocks as stored, uint8; kind 0\n"
     "Q8_0, 1 Q4_0, 2 Q4_K, 3 Q6_K, 5 Q4_1, 6 Q5_0, 7 Q5_1, 8 IQ4_NL, 11 IQ4_XS, 12 TQ2_0, 13 MXFP4, 14-17) with the\n"
     "float32 query into out (0 where scale[i] is 0), without the GIL; threads that call it with the same zeroed\n"
     "progress (two int64) share the rows.  With integer, every kind is scanned against the query held as\n"
     "16-bit integers where the build can (error bound in _quants.c); Q4_K by groups, q4_k_groups's copy\n"
     "(q6_k_groups's for Q6_K, copy_groups's for kinds 1, 5-8), when given and grouped_scan(); IQ4_XS,\n"
     "TQ2_0 and MXFP4 by copy_groups's copy there, else in float64 (quants_lookup.h); NVFP4 (14), TQ1_0 (15),\n"
     "IQ3_XXS (16), IQ3_S (17) by copy_groups's copy there, else in float64 (quants_fp4_ternary.h).  coarse\n"
     "(IQ4_XS, TQ2_0, TQ1_0, IQ3_XXS, IQ3_S): against the query in signed bytes, returning |x - x~| of the query\n"
     "it read (0.0 in float64)."},
    HELPER_POOL_METHOD,
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef quant_module = {
    PyModuleDef_HEAD_INIT, "_quants", "A neighbour query's first pass over GGUF quantised rows.", -1, quant_methods,
};

PyMODINIT_FUNC PyInit__quants(void)
{
    choose_rows();
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
    iq3_fill_tables(); /* the grids' lookup tables, once */
    iq_fill_index_tables();
#endif
    PyObject *module = PyModule_Create(&quant_module);
    /* quantise_query's |e| / |x| at most: sqrt(32) (1 + 2^-149) / 2^14, held as a double just above it */
    PyObject *rounding = PyFloat_FromDouble(sqrt(32.0) / 16384.0 * (1.0 + 0x1p-40));
    if (module == NULL || rounding == NULL || PyModule_AddStringConstant(module, "INSTRUCTIONS", chosen_name) < 0 ||
        PyModule_AddIntConstant(module, "GROUP_ROWS", GROUP_ROWS) < 0 ||
        PyModule_AddIntConstant(module, "GROUP_BLOCK_BYTES", GROUP_BLOCK_BYTES) < 0 ||
        PyModule_AddIntConstant(module, "Q6K_GROUP_BLOCK_BYTES", Q6K_GROUP_BLOCK_BYTES) < 0 ||
        PyModule_AddIntConstant(module, "Q5_K_GROUP_BLOCK_BYTES", Q5_K_GROUP_BLOCK_BYTES) < 0 ||
        PyModule_AddObjectRef(module, "QUERY_ROUNDING", rounding) < 0) {
        Py_XDECREF(rounding);
        Py_XDECREF(module);
        return NULL;
    }
    Py_DECREF(rounding);
    return module;
}
