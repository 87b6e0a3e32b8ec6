/* Dot products of bfloat16 rows with a float32 query: the screening pass of a neighbour query.
 *
 * A neighbour query reads the whole table once, so it runs at the speed of memory.
 * Rows rounded to bfloat16 are half the bytes of float32 ones, and widening a
 * bfloat16 to float32 is a 16-bit shift, so this pass reads half as much and keeps
 * up with memory.  Python picks the few rows that could be among the best from these
 * scores and computes their exact cosines from the float32 rows (bf16_rows.py).
 *
 * numpy has no such loop (its float16 and casting loops are 20-40 times slower), and
 * the BLAS it ships reads float32 only.  The loop is compiled three times on x86
 * (AVX-512, AVX2, plain) and the best one the CPU runs is picked once at import.
 */
#include "scan_common.h"

/* Independent sums per row: enough for the compiler to fill a 512-bit register
 * without reordering any single sum. */
#define LANES 16

static ALWAYS_INLINE float widen(uint16_t bits)
{
    uint32_t wide = (uint32_t)bits << 16;
    float value;
    memcpy(&value, &wide, sizeof value);
    return value;
}

/* A row's dot product with the query, in LANES independent sums (one per vector lane).
 * Every loop below that has no hand-written vector code is built on these. */
#define DEFINE_DOT(NAME, TYPE, WIDEN)                                                              \
    static ALWAYS_INLINE float NAME(const TYPE *row, const float *query, Py_ssize_t width)         \
    {                                                                                              \
        float lanes[LANES] = {0};                                                                  \
        Py_ssize_t j = 0;                                                                          \
        for (; j + LANES <= width; j += LANES)                                                     \
            for (int lane = 0; lane < LANES; lane++)                                               \
                lanes[lane] += WIDEN(row[j + lane]) * query[j + lane];                             \
        float total = 0.0f;                                                                        \
        for (; j < width; j++)                                                                     \
            total += WIDEN(row[j]) * query[j];                                                     \
        for (int lane = 0; lane < LANES; lane++)                                                   \
            total += lanes[lane];                                                                  \
        return total;                                                                              \
    }

#define AS_FLOAT(x) (x)
DEFINE_DOT(dot_bf16, uint16_t, widen)
DEFINE_DOT(dot_f32, float, AS_FLOAT)

static ALWAYS_INLINE void scan_rows(const uint16_t *rows, const float *query, float *out,
                                    Py_ssize_t start, Py_ssize_t stop, Py_ssize_t width)
{
    Py_ssize_t ahead = PREFETCH_BYTES / (width * 2) + 1;
    for (Py_ssize_t i = start; i < stop; i++) {
        if (i + ahead < stop) /* a page ahead: scan_common.h says why */
            prefetch_pages(rows + (i + ahead) * width, width * 2);
        out[i] = dot_bf16(rows + i * width, query, width);
    }
}

typedef void (*scan_function)(const uint16_t *, const float *, float *, Py_ssize_t, Py_ssize_t, Py_ssize_t);

static void scan_plain(const uint16_t *rows, const float *query, float *out,
                       Py_ssize_t start, Py_ssize_t stop, Py_ssize_t width)
{
    scan_rows(rows, query, out, start, stop, width);
}

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define SCAN_X86 1
__attribute__((target("avx512f"))) static void scan_avx512(const uint16_t *rows, const float *query, float *out,
                                                           Py_ssize_t start, Py_ssize_t stop, Py_ssize_t width)
{
    scan_rows(rows, query, out, start, stop, width);
}

__attribute__((target("avx2,fma"))) static void scan_avx2(const uint16_t *rows, const float *query, float *out,
                                                          Py_ssize_t start, Py_ssize_t stop, Py_ssize_t width)
{
    scan_rows(rows, query, out, start, stop, width);
}
#endif

static scan_function chosen_scan = scan_plain;
static const char *chosen_name = "plain";

static void choose_scan(void)
{
#ifdef SCAN_X86
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) {
        chosen_scan = scan_avx512;
        chosen_name = "avx512f";
    } else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
        chosen_scan = scan_avx2;
        chosen_name = "avx2";
    }
#endif
}

struct scan_job {
    const uint16_t *rows;
    const float *query;
    float *out;
    Py_ssize_t width;
};

static void scan_chunk(const void *job, Py_ssize_t start, Py_ssize_t stop)
{
    const struct scan_job *scan = job;
    chosen_scan(scan->rows, scan->query, scan->out, start, stop, scan->width);
}

static PyObject *bf16_scores(PyObject *self, PyObject *args)
{
    Py_buffer rows, query, out, progress;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*y*w*w*", &rows, &query, &out, &progress))
        return NULL;

    PyObject *result = NULL;
    Py_ssize_t width = query.len / (Py_ssize_t)sizeof(float);
    Py_ssize_t count = out.len / (Py_ssize_t)sizeof(float);
    if (width == 0 || query.len % (Py_ssize_t)sizeof(float) != 0) {
        PyErr_SetString(PyExc_ValueError, "the query must hold at least one float32");
    } else if (rows.len != count * width * (Py_ssize_t)sizeof(uint16_t)) {
        PyErr_SetString(PyExc_ValueError, "rows must hold len(out) x len(query) bfloat16 numbers");
    } else if (check_progress(&progress)) {
        struct scan_job job = {rows.buf, query.buf, out.buf, width};
        result = share_chunks_released(scan_chunk, &job, count, &progress);
    }
    PyBuffer_Release(&rows);
    PyBuffer_Release(&query);
    PyBuffer_Release(&out);
    PyBuffer_Release(&progress);
    return result;
}

/* ---- Rows read as the file stores them: bfloat16 or float16, one scale per row ------------
 *
 * A half-precision table is scanned in place (no rounded copy): each row's dot product
 * with the query is multiplied by the row's stored reciprocal length, so the score is a
 * cosine times the query's length.  A scale of 0 marks a row that points nowhere (all
 * zeros, or NaN or infinity in it): its score is 0 whatever the products were.
 */


#define DEFINE_SCALED(NAME, DOT)                                                                   \
    static ALWAYS_INLINE void NAME(const uint16_t *rows, const float *query, const float *scale,   \
                                   float *out, Py_ssize_t start, Py_ssize_t stop, Py_ssize_t width)\
    {                                                                                              \
        for (Py_ssize_t i = start; i < stop; i++) {                                                \
            float total = DOT(rows + i * width, query, width);                                     \
            out[i] = scale[i] == 0.0f ? 0.0f : total * scale[i];                                   \
        }                                                                                          \
    }

#define DEFINE_SQUARES(NAME, WIDEN)                                                                \
    static ALWAYS_INLINE void NAME(const uint16_t *rows, double *out, Py_ssize_t start,            \
                                   Py_ssize_t stop, Py_ssize_t width)                              \
    {                                                                                              \
        for (Py_ssize_t i = start; i < stop; i++) {                                                \
            const uint16_t *row = rows + i * width;                                                \
            double lanes[8] = {0};                                                                 \
            Py_ssize_t j = 0;                                                                      \
            for (; j + 8 <= width; j += 8)                                                         \
                for (int lane = 0; lane < 8; lane++) {                                             \
                    double v = (double)WIDEN(row[j + lane]);                                       \
                    lanes[lane] += v * v;                                                          \
                }                                                                                  \
            double total = 0.0;                                                                    \
            for (; j < width; j++) {                                                               \
                double v = (double)WIDEN(row[j]);                                                  \
                total += v * v;                                                                    \
            }                                                                                      \
            for (int lane = 0; lane < 8; lane++)                                                   \
                total += lanes[lane];                                                              \
            out[i] = total;                                                                        \
        }                                                                                          \
    }

DEFINE_DOT(dot_f16, uint16_t, widen_half)
DEFINE_SCALED(scaled_bf16_rows, dot_bf16)
DEFINE_SCALED(scaled_f16_rows, dot_f16)
DEFINE_SQUARES(squares_bf16_rows, widen)
DEFINE_SQUARES(squares_f16_rows, widen_half)

typedef void (*scaled_function)(const uint16_t *, const float *, const float *, float *, Py_ssize_t, Py_ssize_t,
                                Py_ssize_t);
typedef void (*squares_function)(const uint16_t *, double *, Py_ssize_t, Py_ssize_t, Py_ssize_t);

#define DEFINE_BUILD(SUFFIX, ATTR)                                                                  \
    ATTR static void scaled_bf16_##SUFFIX(const uint16_t *r, const float *q, const float *s, float *o, \
                                          Py_ssize_t a, Py_ssize_t b, Py_ssize_t w)                 \
    {                                                                                              \
        scaled_bf16_rows(r, q, s, o, a, b, w);                                                     \
    }                                                                                              \
    ATTR static void scaled_f16_##SUFFIX(const uint16_t *r, const float *q, const float *s, float *o, \
                                         Py_ssize_t a, Py_ssize_t b, Py_ssize_t w)                  \
    {                                                                                              \
        scaled_f16_rows(r, q, s, o, a, b, w);                                                      \
    }                                                                                              \
    ATTR static void squares_bf16_##SUFFIX(const uint16_t *r, double *o, Py_ssize_t a, Py_ssize_t b, \
                                           Py_ssize_t w)                                            \
    {                                                                                              \
        squares_bf16_rows(r, o, a, b, w);                                                          \
    }                                                                                              \
    ATTR static void squares_f16_##SUFFIX(const uint16_t *r, double *o, Py_ssize_t a, Py_ssize_t b,  \
                                          Py_ssize_t w)                                             \
    {                                                                                              \
        squares_f16_rows(r, o, a, b, w);                                                           \
    }

DEFINE_BUILD(plain, )
#ifdef SCAN_X86
DEFINE_BUILD(avx512, __attribute__((target("avx512f"))))
DEFINE_BUILD(avx2, __attribute__((target("avx2,fma"))))
#endif

#ifdef SCAN_X86
#include <immintrin.h>
/* float16 rows widened by the F16C instruction, eight numbers at a time: the portable
 * widening above costs about a dozen integer operations per number, which made the scan
 * twice as slow as bfloat16's. */
__attribute__((target("avx2,fma,f16c"))) static void scaled_f16_f16c(const uint16_t *rows, const float *query,
                                                                     const float *scale, float *out,
                                                                     Py_ssize_t start, Py_ssize_t stop,
                                                                     Py_ssize_t width)
{
    for (Py_ssize_t i = start; i < stop; i++) {
        const uint16_t *row = rows + i * width;
        __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
        Py_ssize_t j = 0;
        for (; j + 16 <= width; j += 16) {
            __m256 a = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(row + j)));
            __m256 b = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(row + j + 8)));
            acc0 = _mm256_fmadd_ps(a, _mm256_loadu_ps(query + j), acc0);
            acc1 = _mm256_fmadd_ps(b, _mm256_loadu_ps(query + j + 8), acc1);
        }
        __m256 acc = _mm256_add_ps(acc0, acc1);
        __m128 half = _mm_add_ps(_mm256_castps256_ps128(acc), _mm256_extractf128_ps(acc, 1));
        half = _mm_add_ps(half, _mm_movehl_ps(half, half));
        half = _mm_add_ss(half, _mm_movehdup_ps(half));
        float total = _mm_cvtss_f32(half);
        for (; j < width; j++)
            total += widen_half(row[j]) * query[j];
        out[i] = scale[i] == 0.0f ? 0.0f : total * scale[i];
    }
}

/* Numbers 0-31 as 16-bit indices: with a row's offset added, vpermt2w's picks for a realigned load. */
static const uint16_t NUMBERS_0_31[32] = {0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15,
                                          16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31};

/* A row's whole runs of 32 numbers read by loads of whole 64-byte lines, each run put together from two lines by
 * one vpermt2w.  A file's table rarely starts on a line (GGUF aligns to 32 bytes, safetensors to 8): a 64-byte
 * load across two lines cost this scan a third more time (GPT-2-shaped bfloat16 rows, one core: 3.9-4.0 ms at
 * offsets 2, 16 and 32 against 2.9 ms on the line).  Every line read holds a number of the row, so no read leaves
 * the row's pages. */
__attribute__((target("avx512f,avx512bw"))) static ALWAYS_INLINE void bf16_pairs_realigned(
    const uint16_t *row, const float *paired, Py_ssize_t whole, __m512 acc[4])
{
    Py_ssize_t offset = (Py_ssize_t)(((uintptr_t)row % 64) / 2); /* numbers before the row in its first line */
    const uint16_t *line = row - offset;
    const __m512i high = _mm512_set1_epi32((int)0xFFFF0000u);
    const __m512i picks = _mm512_add_epi16(_mm512_loadu_si512((const void *)NUMBERS_0_31),
                                           _mm512_set1_epi16((short)offset));
    __m512i current = _mm512_load_si512((const void *)line);
    Py_ssize_t j = 0;
    for (; j + 64 <= whole; j += 64) {
        __m512i next = _mm512_load_si512((const void *)(line + j + 32));
        __m512i after = _mm512_load_si512((const void *)(line + j + 64));
        __m512i a = _mm512_permutex2var_epi16(current, picks, next);
        __m512i b = _mm512_permutex2var_epi16(next, picks, after);
        current = after;
        acc[0] = _mm512_fmadd_ps(_mm512_castsi512_ps(_mm512_slli_epi32(a, 16)), _mm512_loadu_ps(paired + j), acc[0]);
        acc[1] = _mm512_fmadd_ps(_mm512_castsi512_ps(_mm512_and_si512(a, high)),
                                 _mm512_loadu_ps(paired + j + 16), acc[1]);
        acc[2] = _mm512_fmadd_ps(_mm512_castsi512_ps(_mm512_slli_epi32(b, 16)), _mm512_loadu_ps(paired + j + 32),
                                 acc[2]);
        acc[3] = _mm512_fmadd_ps(_mm512_castsi512_ps(_mm512_and_si512(b, high)),
                                 _mm512_loadu_ps(paired + j + 48), acc[3]);
    }
    if (j < whole) { /* one run of 32 left */
        __m512i a = _mm512_permutex2var_epi16(current, picks, _mm512_load_si512((const void *)(line + j + 32)));
        acc[0] = _mm512_fmadd_ps(_mm512_castsi512_ps(_mm512_slli_epi32(a, 16)), _mm512_loadu_ps(paired + j), acc[0]);
        acc[1] = _mm512_fmadd_ps(_mm512_castsi512_ps(_mm512_and_si512(a, high)),
                                 _mm512_loadu_ps(paired + j + 16), acc[1]);
    }
}

/* bfloat16 rows 32 numbers to a 512-bit load, no widening instruction: in each 32-bit word
 * the low half is an even-numbered number (shifted up 16 bits it is that float32) and the
 * high half the next one (its low bits cleared).  The query comes "paired" (pair_query):
 * in each run of 32, its 16 even-numbered numbers, then its 16 odd-numbered ones.  A third
 * of the instructions of widening 16 at a time, which kept the scan of a table the last
 * level cache holds at 1.5x-1.6x a plain read of it. */
__attribute__((target("avx512f,avx512bw"))) static void scaled_bf16_pairs(const uint16_t *rows, const float *paired,
                                                                            const float *scale, float *out,
                                                                            Py_ssize_t start, Py_ssize_t stop,
                                                                            Py_ssize_t width)
{
    const __m512i high = _mm512_set1_epi32((int)0xFFFF0000u);
    Py_ssize_t whole = width / 32 * 32;
    Py_ssize_t ahead = PREFETCH_BYTES / (width * 2) + 1;
    for (Py_ssize_t i = start; i < stop; i++) {
        const uint16_t *row = rows + i * width;
        if (i + ahead < stop)
            prefetch_pages(rows + (i + ahead) * width, width * 2);
        __m512 acc[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()};
        Py_ssize_t j = whole;
        if ((uintptr_t)row % 64 != 0 && (uintptr_t)row % 2 == 0) {
            bf16_pairs_realigned(row, paired, whole, acc);
        } else {
            for (j = 0; j + 64 <= whole; j += 64) {
                __m512i a = _mm512_loadu_si512((const void *)(row + j));
                __m512i b = _mm512_loadu_si512((const void *)(row + j + 32));
                acc[0] = _mm512_fmadd_ps(_mm512_castsi512_ps(_mm512_slli_epi32(a, 16)), _mm512_loadu_ps(paired + j),
                                         acc[0]);
                acc[1] = _mm512_fmadd_ps(_mm512_castsi512_ps(_mm512_and_si512(a, high)),
                                         _mm512_loadu_ps(paired + j + 16), acc[1]);
                acc[2] = _mm512_fmadd_ps(_mm512_castsi512_ps(_mm512_slli_epi32(b, 16)),
                                         _mm512_loadu_ps(paired + j + 32), acc[2]);
                acc[3] = _mm512_fmadd_ps(_mm512_castsi512_ps(_mm512_and_si512(b, high)),
                                         _mm512_loadu_ps(paired + j + 48), acc[3]);
            }
            for (; j < whole; j += 32) {
                __m512i a = _mm512_loadu_si512((const void *)(row + j));
                acc[0] = _mm512_fmadd_ps(_mm512_castsi512_ps(_mm512_slli_epi32(a, 16)), _mm512_loadu_ps(paired + j),
                                         acc[0]);
                acc[1] = _mm512_fmadd_ps(_mm512_castsi512_ps(_mm512_and_si512(a, high)),
                                         _mm512_loadu_ps(paired + j + 16), acc[1]);
            }
        }
        float total = _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(acc[0], acc[1]), _mm512_add_ps(acc[2], acc[3])));
        for (; j < width; j++) /* the tail of the paired query is in its own order */
            total += widen(row[j]) * paired[j];
        out[i] = scale[i] == 0.0f ? 0.0f : total * scale[i];
    }
}

/* float16 rows widened 16 at a time by AVX-512's own conversion. */
__attribute__((target("avx512f"))) static void scaled_f16_avx512_wide(const uint16_t *rows, const float *query,
                                                                      const float *scale, float *out,
                                                                      Py_ssize_t start, Py_ssize_t stop,
                                                                      Py_ssize_t width)
{
    Py_ssize_t ahead = PREFETCH_BYTES / (width * 2) + 1;
    for (Py_ssize_t i = start; i < stop; i++) {
        const uint16_t *row = rows + i * width;
        if (i + ahead < stop)
            prefetch_pages(rows + (i + ahead) * width, width * 2);
        __m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
        Py_ssize_t j = 0;
        for (; j + 32 <= width; j += 32) {
            __m512 a = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(row + j)));
            __m512 b = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(row + j + 16)));
            acc0 = _mm512_fmadd_ps(a, _mm512_loadu_ps(query + j), acc0);
            acc1 = _mm512_fmadd_ps(b, _mm512_loadu_ps(query + j + 16), acc1);
        }
        float total = _mm512_reduce_add_ps(_mm512_add_ps(acc0, acc1));
        for (; j < width; j++)
            total += widen_half(row[j]) * query[j];
        out[i] = scale[i] == 0.0f ? 0.0f : total * scale[i];
    }
}

/* The query in the order scaled_bf16_pairs reads it (a new buffer, or NULL when out of memory). */
static float *pair_query(const float *query, Py_ssize_t width)
{
    float *paired = PyMem_RawMalloc((size_t)width * sizeof(float));
    if (paired == NULL)
        return NULL;
    Py_ssize_t whole = width / 32 * 32;
    for (Py_ssize_t j = 0; j < whole; j += 32)
        for (int k = 0; k < 16; k++) {
            paired[j + k] = query[j + 2 * k];
            paired[j + 16 + k] = query[j + 2 * k + 1];
        }
    for (Py_ssize_t j = whole; j < width; j++)
        paired[j] = query[j];
    return paired;
}
#endif

/* What half_scores and bf16_query_scores check of their buffers: a query of whole float32 numbers, len(out) rows of
 * that many 16-bit numbers, one float32 scale a row; 0 with a ValueError set where they do not fit. */
static int half_buffers_fit(const Py_buffer *rows, const Py_buffer *query, const Py_buffer *scale, const Py_buffer *out)
{
    Py_ssize_t width = query->len / (Py_ssize_t)sizeof(float), count = out->len / (Py_ssize_t)sizeof(float);
    if (width == 0 || query->len % (Py_ssize_t)sizeof(float) != 0) {
        PyErr_SetString(PyExc_ValueError, "the query must hold at least one float32");
    } else if (rows->len != count * width * (Py_ssize_t)sizeof(uint16_t)) {
        PyErr_SetString(PyExc_ValueError, "rows must hold len(out) x len(query) 16-bit numbers");
    } else if (scale->len != out->len) {
        PyErr_SetString(PyExc_ValueError, "scale must hold one float32 per row");
    } else {
        return 1;
    }
    return 0;
}

#include "bf16_query_dot.h"

/* [kind]: 0 bfloat16, 1 float16 */
static scaled_function chosen_scaled[2] = {scaled_bf16_plain, scaled_f16_plain};
static squares_function chosen_squares[2] = {squares_bf16_plain, squares_f16_plain};

static void choose_half(void)
{
#ifdef SCAN_X86
    if (strcmp(chosen_name, "avx512f") == 0) {
        chosen_scaled[0] = scaled_bf16_avx512, chosen_scaled[1] = scaled_f16_avx512;
        chosen_squares[0] = squares_bf16_avx512, chosen_squares[1] = squares_f16_avx512;
    } else if (strcmp(chosen_name, "avx2") == 0) {
        chosen_scaled[0] = scaled_bf16_avx2, chosen_scaled[1] = scaled_f16_avx2;
        chosen_squares[0] = squares_bf16_avx2, chosen_squares[1] = squares_f16_avx2;
    }
    if (strcmp(chosen_name, "plain") != 0 && __builtin_cpu_supports("f16c"))
        chosen_scaled[1] = scaled_f16_f16c;
    if (strcmp(chosen_name, "avx512f") == 0)
        chosen_scaled[1] = scaled_f16_avx512_wide;
    if (strcmp(chosen_name, "avx512f") == 0 && __builtin_cpu_supports("avx512bw")) /* vpermt2w: realigned rows */
        chosen_scaled[0] = scaled_bf16_pairs;
#endif
}

struct half_job {
    const uint16_t *rows;
    const float *query, *scale;
    float *scores;
    double *squares;
    Py_ssize_t count, width;
    int kind;
};

static void half_chunk(const void *job, Py_ssize_t start, Py_ssize_t stop)
{
    const struct half_job *half = job;
    if (half->scores != NULL)
        chosen_scaled[half->kind](half->rows, half->query, half->scale, half->scores, start, stop, half->width);
    else
        chosen_squares[half->kind](half->rows, half->squares, start, stop, half->width);
}

static PyObject *half_scores(PyObject *self, PyObject *args)
{
    Py_buffer rows, query, scale, out, progress;
    int kind;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*iy*y*w*w*", &rows, &kind, &query, &scale, &out, &progress))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t width = query.len / (Py_ssize_t)sizeof(float);
    Py_ssize_t count = out.len / (Py_ssize_t)sizeof(float);
    if (kind != 0 && kind != 1) {
        PyErr_SetString(PyExc_ValueError, "kind must be 0 (bfloat16) or 1 (float16)");
    } else if (half_buffers_fit(&rows, &query, &scale, &out) && check_progress(&progress)) {
        const float *query_used = query.buf;
        float *paired = NULL;
#ifdef SCAN_X86
        if (kind == 0 && chosen_scaled[0] == scaled_bf16_pairs) {
            paired = pair_query(query.buf, width);
            query_used = paired;
        }
#endif
        if (query_used == NULL) {
            PyErr_NoMemory();
        } else {
            struct half_job job = {rows.buf, query_used, scale.buf, out.buf, NULL, count, width, kind};
            result = share_chunks_released(half_chunk, &job, job.count, &progress);
        }
        PyMem_RawFree(paired);
    }
    PyBuffer_Release(&rows);
    PyBuffer_Release(&query);
    PyBuffer_Release(&scale);
    PyBuffer_Release(&out);
    PyBuffer_Release(&progress);
    return result;
}

static PyObject *half_squares(PyObject *self, PyObject *args)
{
    Py_buffer rows, out, progress;
    int kind;
    Py_ssize_t width;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*inw*w*", &rows, &kind, &width, &out, &progress))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t count = out.len / (Py_ssize_t)sizeof(double);
    if (kind != 0 && kind != 1) {
        PyErr_SetString(PyExc_ValueError, "kind must be 0 (bfloat16) or 1 (float16)");
    } else if (width <= 0 || out.len % (Py_ssize_t)sizeof(double) != 0 ||
               rows.len != count * width * (Py_ssize_t)sizeof(uint16_t)) {
        PyErr_SetString(PyExc_ValueError, "rows must hold len(out) x width 16-bit numbers");
    } else if (check_progress(&progress)) {
        struct half_job job = {rows.buf, NULL, NULL, NULL, out.buf, count, width, kind};
        result = share_chunks_released(half_chunk, &job, job.count, &progress);
    }
    PyBuffer_Release(&rows);
    PyBuffer_Release(&out);
    PyBuffer_Release(&progress);
    return result;
}

/* ---- Several queries in one pass over the rows -----------------------------------------
 *
 * A token's vector after each of a model's layers is compared with the whole table: a
 * dozen queries.  A pass per query reads the table a dozen times, and BLAS's matrix
 * product for so few columns first copies the whole table into packed blocks (slower
 * than a pass per query).  These loops read each row once, while it sits in the first
 * cache, for every query: two rows against four queries at a time keep eight sums in
 * registers.  Rows are float32, or bfloat16 (half the bytes to read, the same sums).
 */
#define MANY_ROWS 2
#define MANY_QUERIES 4
/* Rows ahead to prefetch: a virtual machine's page walks are slow, and starting them
 * early hid them (a single query's pass took 15 ms instead of 27 ms on GPT-2's table). */
#define MANY_AHEAD 16

#define DEFINE_MANY_PLAIN(NAME, TYPE, DOT)                                                         \
    static void NAME(const TYPE *rows, const float *queries, float *out, Py_ssize_t count,         \
                     Py_ssize_t n_queries, Py_ssize_t width, Py_ssize_t start, Py_ssize_t stop)    \
    {                                                                                              \
        for (Py_ssize_t i = start; i < stop; i++)                                                  \
            for (Py_ssize_t q = 0; q < n_queries; q++)                                             \
                out[q * count + i] = DOT(rows + i * width, queries + q * width, width);            \
    }

DEFINE_MANY_PLAIN(many_f32_plain, float, dot_f32)
DEFINE_MANY_PLAIN(many_bf16_plain, uint16_t, dot_bf16)

typedef void (*many_f32_function)(const float *, const float *, float *, Py_ssize_t, Py_ssize_t, Py_ssize_t,
                                  Py_ssize_t, Py_ssize_t);
typedef void (*many_bf16_function)(const uint16_t *, const float *, float *, Py_ssize_t, Py_ssize_t, Py_ssize_t,
                                   Py_ssize_t, Py_ssize_t);

#ifdef SCAN_X86
__attribute__((target("avx2,fma"))) static ALWAYS_INLINE float sum8(__m256 v)
{
    __m128 half = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    half = _mm_add_ps(half, _mm_movehl_ps(half, half));
    half = _mm_add_ss(half, _mm_movehdup_ps(half));
    return _mm_cvtss_f32(half);
}

__attribute__((target("avx2,fma"))) static ALWAYS_INLINE __m256 load8_f32(const float *at)
{
    return _mm256_loadu_ps(at);
}

/* Eight bfloat16 numbers widened to float32: each is the high half of its float32. */
__attribute__((target("avx2,fma"))) static ALWAYS_INLINE __m256 load8_bf16(const uint16_t *at)
{
    __m256i wide = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)at));
    return _mm256_castsi256_ps(_mm256_slli_epi32(wide, 16));
}

/* Rows r .. r + n_rows - 1 (n_rows 1 or 2) against queries q .. q + n_q - 1 (n_q 1 to 4).
 * Called with constant counts, so every sum stays in a register. */
#define DEFINE_MANY_AVX2(NAME, TYPE, LOAD8, WIDEN)                                                  \
    __attribute__((target("avx2,fma"))) static ALWAYS_INLINE void NAME##_block(                    \
        const TYPE *rows, const float *queries, float *out, Py_ssize_t count, Py_ssize_t width,    \
        Py_ssize_t r, int n_rows, Py_ssize_t q, int n_q)                                           \
    {                                                                                              \
        __m256 acc[MANY_ROWS][MANY_QUERIES];                                                       \
        for (int a = 0; a < MANY_ROWS; a++)                                                        \
            for (int b = 0; b < MANY_QUERIES; b++)                                                 \
                acc[a][b] = _mm256_setzero_ps();                                                   \
        /* The rows to prefetch, kept inside the table at its end. */                              \
        const TYPE *ahead[MANY_ROWS];                                                              \
        for (int a = 0; a < n_rows; a++) {                                                         \
            Py_ssize_t later = r + a + MANY_AHEAD < count ? r + a + MANY_AHEAD : count - 1;        \
            ahead[a] = rows + later * width;                                                       \
        }                                                                                          \
        Py_ssize_t j = 0;                                                                          \
        for (; j + 8 <= width; j += 8) {                                                           \
            __m256 row[MANY_ROWS];                                                                 \
            for (int a = 0; a < n_rows; a++) {                                                     \
                _mm_prefetch((const char *)(ahead[a] + j), _MM_HINT_T0);                           \
                row[a] = LOAD8(rows + (r + a) * width + j);                                        \
            }                                                                                      \
            for (int b = 0; b < n_q; b++) {                                                        \
                __m256 query = _mm256_loadu_ps(queries + (q + b) * width + j);                     \
                for (int a = 0; a < n_rows; a++)                                                   \
                    acc[a][b] = _mm256_fmadd_ps(row[a], query, acc[a][b]);                         \
            }                                                                                      \
        }                                                                                          \
        for (int a = 0; a < n_rows; a++)                                                           \
            for (int b = 0; b < n_q; b++) {                                                        \
                float total = sum8(acc[a][b]);                                                     \
                for (Py_ssize_t t = j; t < width; t++)                                             \
                    total += WIDEN(rows[(r + a) * width + t]) * queries[(q + b) * width + t];      \
                out[(q + b) * count + r + a] = total;                                              \
            }                                                                                      \
    }                                                                                              \
                                                                                                   \
    __attribute__((target("avx2,fma"))) static void NAME(const TYPE *rows, const float *queries,   \
                                                         float *out, Py_ssize_t count,             \
                                                         Py_ssize_t n_queries, Py_ssize_t width,   \
                                                         Py_ssize_t start, Py_ssize_t stop)        \
    {                                                                                              \
        Py_ssize_t r = start;                                                                      \
        for (; r + MANY_ROWS <= stop; r += MANY_ROWS) {                                            \
            Py_ssize_t q = 0;                                                                      \
            for (; q + MANY_QUERIES <= n_queries; q += MANY_QUERIES)                               \
                NAME##_block(rows, queries, out, count, width, r, MANY_ROWS, q, MANY_QUERIES);     \
            switch (n_queries - q) {                                                               \
            case 3: NAME##_block(rows, queries, out, count, width, r, MANY_ROWS, q, 3); break;     \
            case 2: NAME##_block(rows, queries, out, count, width, r, MANY_ROWS, q, 2); break;     \
            case 1: NAME##_block(rows, queries, out, count, width, r, MANY_ROWS, q, 1); break;     \
            default: break;                                                                        \
            }                                                                                      \
        }                                                                                          \
        for (; r < stop; r++) {                                                                    \
            Py_ssize_t q = 0;                                                                      \
            for (; q + MANY_QUERIES <= n_queries; q += MANY_QUERIES)                               \
                NAME##_block(rows, queries, out, count, width, r, 1, q, MANY_QUERIES);             \
            for (; q < n_queries; q++)                                                             \
                NAME##_block(rows, queries, out, count, width, r, 1, q, 1);                        \
        }                                                                                          \
    }

DEFINE_MANY_AVX2(many_f32_avx2, float, load8_f32, AS_FLOAT)
DEFINE_MANY_AVX2(many_bf16_avx2, uint16_t, load8_bf16, widen)
#endif

static many_f32_function chosen_many_f32 = many_f32_plain;
static many_bf16_function chosen_many_bf16 = many_bf16_plain;

static void choose_many(void)
{
#ifdef SCAN_X86
    if (strcmp(chosen_name, "plain") != 0) {
        chosen_many_f32 = many_f32_avx2;
        chosen_many_bf16 = many_bf16_avx2;
    }
#endif
}

struct many_job {
    const void *rows;
    const float *queries;
    float *out;
    Py_ssize_t count, n_queries, width;
    int bf16;
};

static void many_chunk(const void *job, Py_ssize_t start, Py_ssize_t stop)
{
    const struct many_job *many = job;
    if (many->bf16)
        chosen_many_bf16(many->rows, many->queries, many->out, many->count, many->n_queries, many->width, start,
                         stop);
    else
        chosen_many_f32(many->rows, many->queries, many->out, many->count, many->n_queries, many->width, start,
                        stop);
}

static PyObject *scores_many(PyObject *self, PyObject *args)
{
    Py_buffer rows, queries, out, progress;
    Py_ssize_t width;
    int bf16;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*py*nw*w*", &rows, &bf16, &queries, &width, &out, &progress))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t floats = (Py_ssize_t)sizeof(float);
    Py_ssize_t row_bytes = width * (bf16 ? (Py_ssize_t)sizeof(uint16_t) : floats);
    Py_ssize_t n_queries = width > 0 ? queries.len / (width * floats) : 0;
    Py_ssize_t count = width > 0 ? rows.len / row_bytes : 0;
    if (width <= 0 || n_queries == 0 || queries.len != n_queries * width * floats) {
        PyErr_SetString(PyExc_ValueError, "queries must hold one or more rows of width float32 numbers");
    } else if (rows.len != count * row_bytes) {
        PyErr_SetString(PyExc_ValueError, "rows must hold whole rows of width numbers");
    } else if (out.len != n_queries * count * floats) {
        PyErr_SetString(PyExc_ValueError, "out must hold len(queries) x len(rows) float32 numbers");
    } else if (check_progress(&progress)) {
        struct many_job job = {rows.buf, queries.buf, out.buf, count, n_queries, width, bf16};
        result = share_chunks_released(many_chunk, &job, job.count, &progress);
    }
    PyBuffer_Release(&rows);
    PyBuffer_Release(&queries);
    PyBuffer_Release(&out);
    PyBuffer_Release(&progress);
    return result;
}

static PyObject *bf16_round(PyObject *self, PyObject *args)
{
    Py_buffer values, out;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*w*", &values, &out))
        return NULL;

    PyObject *result = NULL;
    Py_ssize_t count = values.len / (Py_ssize_t)sizeof(float);
    if (values.len % (Py_ssize_t)sizeof(float) != 0 || out.len != count * (Py_ssize_t)sizeof(uint16_t)) {
        PyErr_SetString(PyExc_ValueError, "out must hold one uint16 for each float32 of values");
    } else {
        const float *value_data = values.buf;
        uint16_t *out_data = out.buf;
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t i = 0; i < count; i++) {
            uint32_t bits;
            memcpy(&bits, &value_data[i], sizeof bits);
            /* Adding just under half of the dropped half, plus the last kept bit, rounds to nearest-even. */
            out_data[i] = (uint16_t)((bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16);
        }
        Py_END_ALLOW_THREADS
        result = Py_NewRef(Py_None);
    }
    PyBuffer_Release(&values);
    PyBuffer_Release(&out);
    return result;
}

static PyMethodDef scan_methods[] = {
    {"bf16_round", bf16_round, METH_VARARGS,
     "bf16_round(values, out)\n\n"
     "Write the bfloat16 nearest each float32 of values (ties to even) into out, as uint16 bits."},
    {"bf16_scores", bf16_scores, METH_VARARGS,
     "bf16_scores(rows, query, out, progress)\n\n"
     "Write the dot product of each bfloat16 row (uint16 bits, C order) with the float32 query\n"
     "into out (float32), without holding the GIL.  Threads that call it with the same zeroed\n"
     "progress (two int64) share the rows; each returns once every row is done."},
    {"bf16_query_scores", bf16_query_scores, METH_VARARGS,
     "bf16_query_scores(rows, query, scale, out, progress)\n\n"
     "half_scores for bfloat16 rows (kind 0) with the query scaled by a power of two and rounded to bfloat16\n"
     "(AVX512_BF16's vdpbf16ps): returns |query - its rounding| in float64, or -1.0 having written nothing\n"
     "where the CPU or the query does not allow this scan (bf16_query_dot.h)."},
    {"half_scores", half_scores, METH_VARARGS,
     "half_scores(rows, kind, query, scale, out, progress)\n\n"
     "Write scale[i] times the dot product of 16-bit row i (kind 0 bfloat16, 1 float16) with the\n"
     "float32 query into out (0 where scale[i] is 0), without the GIL; threads share rows as in bf16_scores."},
    {"scores_many", scores_many, METH_VARARGS,
     "scores_many(rows, bf16, queries, width, out, progress)\n\n"
     "Write the dot product of each row (float32, or bfloat16 bits when bf16 is true) with each\n"
     "float32 query into out[query, row], reading every row once for all queries, without the GIL;\n"
     "threads share rows as in bf16_scores."},
    {"half_squares", half_squares, METH_VARARGS,
     "half_squares(rows, kind, width, out, progress)\n\n"
     "Write each 16-bit row's sum of squares, in float64, into out; threads share rows as in bf16_scores."},
    HELPER_POOL_METHOD,
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef scan_module = {
    PyModuleDef_HEAD_INIT, "_scan", "A bfloat16 screening pass for neighbour queries.", -1, scan_methods,
};

PyMODINIT_FUNC PyInit__scan(void)
{
    choose_scan();
    choose_half();
    choose_many();
#ifdef SCAN_X86
    choose_bf16_dot();
#endif
    PyObject *module = PyModule_Create(&scan_module);
#ifdef SCAN_X86
    int bf16_query = bf16_dot_cpu;
#else
    int bf16_query = 0;
#endif
    if (module != NULL && (PyModule_AddStringConstant(module, "INSTRUCTIONS", chosen_name) < 0 ||
                           PyModule_AddIntConstant(module, "BF16_QUERY", bf16_query) < 0)) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
