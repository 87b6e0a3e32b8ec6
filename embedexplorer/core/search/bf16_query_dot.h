/* bfloat16 rows against the query rounded to bfloat16 too: one vdpbf16ps per 32 numbers (AVX512_BF16), included by
 * _scan.c once, after scaled_bf16_pairs and half_buffers_fit.
 *
 * scaled_bf16_pairs widens each run of 32 numbers into two float32 registers and takes two fused multiply-adds: on
 * a core that runs each 512-bit instruction in two halves (Zen 4) that is the arithmetic, not memory, that sets a
 * query's time.  Measured on one core of a Zen 4 EPYC (7 December, quiet), a Qwen2-7B-sized bfloat16 table (152,064
 * x 3,584, 1.09 GB, rows 56 bytes off a line): the pairs' scan 100-105 ms, this one 44-53 ms, one plain read of the
 * bytes 43-54 ms.
 *
 * Exactness.  The query x is scaled by s = 2^k, its largest number in [1, 2), and each number rounded to the nearest
 * bfloat16 b (ties to even), a subnormal one to 0 (vdpbf16ps reads subnormals as 0).  bf16_query returns |x s - b|
 * / s, found in float64 exactly as the sum of squares allows (x s - b is exact in float64; the caller rounds the
 * root up): the query's rounding for this query, as the byte scans of quants_iq.h measure theirs.  A product of two
 * bfloat16 numbers is exact in float32 (8 + 8 significant bits); vdpbf16ps adds the two products of a lane into the
 * lane's sum, each addition rounded once (round to nearest even), so a term meets at most width / 32 + 38 roundings
 * (its lane's chain, the reduction of two registers of 16 lanes, the tail's 31 scalar sums): at most width, which
 * accumulation_error allows.  vdpbf16ps also flushes subnormal inputs and results to 0: each flush moves the sum by
 * less than 2^-126, at most 4 width of them in a row, so less than 4 width 2^-126 / s <= 4 width 2^-126 |x| over
 * all, which for a row of length at least 2^-64 and a width below 2^24 is below 2^-36 |x| |r|: the caller adds
 * 2^-35 (room for rows that are bfloat16 roundings) to the query's rounding and uses this scan only on tables whose
 * rows that score (a reciprocal length not 0) have lengths in [2^-64, 2^64], so that no sum (at most 2^64 x 2 x
 * 2^12) can overflow.  A score, the sum over s times the reciprocal length, is exact in float64 and rounded once to
 * float32; where it is subnormal that is off by less than 2^-149, below 2^-35 |x| for the queries this scan takes
 * (largest number in [2^-40, 2^40], a width below 2^24; any other, the float32 scan). */
#ifndef EMBEDEXPLORER_BF16_QUERY_DOT_H
#define EMBEDEXPLORER_BF16_QUERY_DOT_H

#include <float.h>
#include <math.h>

#ifdef SCAN_X86
#define BF16_DOT_TARGET __attribute__((target("avx512f,avx512bw,avx512bf16")))

static int bf16_dot_cpu; /* the CPU has AVX512_BF16 and AVX512BW: set once at import (choose_bf16_dot) */

static void choose_bf16_dot(void)
{
    __builtin_cpu_init();
    bf16_dot_cpu = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                   __builtin_cpu_supports("avx512bf16");
}

/* Sixteen lanes' dot products of a row's whole runs of 32 numbers with the query's: rows off a 64-byte line are read
 * by whole lines and put together by vpermt2w, as bf16_pairs_realigned does (an odd address, never a file's
 * table, by unaligned loads). */
BF16_DOT_TARGET static ALWAYS_INLINE __m512 bf16_dot_runs(const uint16_t *row, const __m512bh *query, Py_ssize_t runs)
{
    __m512 first = _mm512_setzero_ps(), second = _mm512_setzero_ps();
    Py_ssize_t r = 0;
    if ((uintptr_t)row % 64 != 0 && (uintptr_t)row % 2 == 0) {
        Py_ssize_t offset = (Py_ssize_t)(((uintptr_t)row % 64) / 2);
        const uint16_t *line = row - offset;
        const __m512i picks = _mm512_add_epi16(_mm512_loadu_si512((const void *)NUMBERS_0_31),
                                               _mm512_set1_epi16((short)offset));
        __m512i current = _mm512_load_si512((const void *)line);
        for (; r + 2 <= runs; r += 2) {
            __m512i next = _mm512_load_si512((const void *)(line + 32 * r + 32));
            __m512i after = _mm512_load_si512((const void *)(line + 32 * r + 64));
            first = _mm512_dpbf16_ps(first, (__m512bh)_mm512_permutex2var_epi16(current, picks, next), query[r]);
            second = _mm512_dpbf16_ps(second, (__m512bh)_mm512_permutex2var_epi16(next, picks, after), query[r + 1]);
            current = after;
        }
        if (r < runs) {
            __m512i next = _mm512_load_si512((const void *)(line + 32 * r + 32));
            first = _mm512_dpbf16_ps(first, (__m512bh)_mm512_permutex2var_epi16(current, picks, next), query[r]);
        }
        return _mm512_add_ps(first, second);
    }
    for (; r + 2 <= runs; r += 2) {
        first = _mm512_dpbf16_ps(first, (__m512bh)_mm512_loadu_si512((const void *)(row + 32 * r)), query[r]);
        second = _mm512_dpbf16_ps(second, (__m512bh)_mm512_loadu_si512((const void *)(row + 32 * r + 32)),
                                  query[r + 1]);
    }
    if (r < runs)
        first = _mm512_dpbf16_ps(first, (__m512bh)_mm512_loadu_si512((const void *)(row + 32 * r)), query[r]);
    return _mm512_add_ps(first, second);
}

struct bf16_dot_job {
    const uint16_t *rows;
    const __m512bh *query; /* the scaled query in bfloat16, whole runs of 32 (bf16_query) */
    const float *tail;     /* its numbers past the last whole run, as float32 */
    const float *scale;
    float *out;
    double unscale; /* 1 / s: a power of two */
    Py_ssize_t width;
};

BF16_DOT_TARGET static void bf16_dot_chunk(const void *job, Py_ssize_t start, Py_ssize_t stop)
{
    const struct bf16_dot_job *q = job;
    Py_ssize_t runs = q->width / 32, whole = runs * 32;
    for (Py_ssize_t i = start; i < stop; i++) {
        const uint16_t *row = q->rows + i * q->width;
        float total = _mm512_reduce_add_ps(bf16_dot_runs(row, q->query, runs));
        for (Py_ssize_t j = whole; j < q->width; j++)
            total += widen(row[j]) * q->tail[j - whole];
        /* total times 1 / s times the reciprocal length is exact in float64, then rounded once */
        q->out[i] = q->scale[i] == 0.0f ? 0.0f : (float)((double)total * q->unscale * (double)q->scale[i]);
    }
}

/* The bfloat16 nearest v (ties to even), 0 for a subnormal one; v finite. */
static uint16_t nearest_bf16_normal(float v)
{
    uint32_t bits;
    memcpy(&bits, &v, sizeof bits);
    uint32_t rounded = (bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16;
    return (rounded & 0x7F80u) == 0 ? 0 : (uint16_t)rounded;
}

/* The query times s = 2^k (its largest number in [1, 2)) in bfloat16 (whole runs of 32) and float32 (the tail past
 * them); returns |x s - b| / s in float64 (the query's rounding, before the caller rounds it up), or -1 where the
 * query is not finite, its largest number is outside [2^-40, 2^40] or it is 2^24 numbers or more wide (the flushes'
 * share of the bound assumes otherwise: see the top). */
static double bf16_query(const float *query, Py_ssize_t width, uint16_t *bits, float *tail, double *unscale)
{
    double largest = 0.0;
    for (Py_ssize_t j = 0; j < width; j++) {
        double size = fabs((double)query[j]);
        if (!(size <= DBL_MAX))
            return -1.0;
        largest = size > largest ? size : largest;
    }
    if (!(largest >= 0x1p-40 && largest <= 0x1p40) || width >= ((Py_ssize_t)1 << 24))
        return -1.0;
    int exponent;
    frexp(largest, &exponent); /* largest = m 2^exponent, m in [0.5, 1) */
    double s = ldexp(1.0, 1 - exponent), squares = 0.0;
    Py_ssize_t whole = width / 32 * 32;
    for (Py_ssize_t j = 0; j < width; j++) {
        double scaled = (double)query[j] * s, off; /* exact: a float32 times a power of two, below 2 */
        if (j < whole) {
            bits[j] = nearest_bf16_normal((float)scaled);
            off = scaled - (double)widen(bits[j]);
        } else { /* the tail's sums are in float32: a subnormal may round */
            tail[j - whole] = (float)scaled;
            off = scaled - (double)tail[j - whole];
        }
        squares += off * off; /* each off exact in float64 */
    }
    *unscale = 1.0 / s;
    return sqrt(squares) / s;
}

#endif

/* bf16_query_scores(rows, query, scale, out, progress): half_scores for bfloat16 rows with the query in bfloat16;
 * returns the query's rounding (bf16_query's), or -1.0 having written nothing where this scan does not apply (no
 * AVX512_BF16, a query out of its range): the caller scans with half_scores then. */
static PyObject *bf16_query_scores(PyObject *self, PyObject *args)
{
    Py_buffer rows, query, scale, out, progress;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*y*y*w*w*", &rows, &query, &scale, &out, &progress))
        return NULL;
    PyObject *result = NULL;
    if (half_buffers_fit(&rows, &query, &scale, &out) && check_progress(&progress)) {
        double rounding = -1.0;
#ifdef SCAN_X86
        if (bf16_dot_cpu) {
            Py_ssize_t width = query.len / (Py_ssize_t)sizeof(float), count = out.len / (Py_ssize_t)sizeof(float);
            /* the query's whole runs on a 64-byte line, and its tail */
            uint16_t *bits = PyMem_RawMalloc((size_t)(width / 32 * 32 + 32) * sizeof(uint16_t) + 64);
            float *tail = PyMem_RawMalloc(32 * sizeof(float));
            if (bits == NULL || tail == NULL) {
                result = PyErr_NoMemory();
            } else {
                __m512bh *aligned = (__m512bh *)(((uintptr_t)bits + 63) & ~(uintptr_t)63);
                struct bf16_dot_job job = {rows.buf, aligned, tail, scale.buf, out.buf, 1.0, width};
                rounding = bf16_query(query.buf, width, (uint16_t *)aligned, tail, &job.unscale);
                if (rounding >= 0.0)
                    result = share_chunks_released(bf16_dot_chunk, &job, count, &progress);
            }
            PyMem_RawFree(bits);
            PyMem_RawFree(tail);
        }
#endif
        if (result != NULL) {
            Py_DECREF(result);
            result = PyFloat_FromDouble(rounding);
        } else if (!PyErr_Occurred()) {
            result = PyFloat_FromDouble(-1.0);
        }
    }
    PyBuffer_Release(&rows);
    PyBuffer_Release(&query);
    PyBuffer_Release(&scale);
    PyBuffer_Release(&out);
    PyBuffer_Release(&progress);
    return result;
}

#endif
