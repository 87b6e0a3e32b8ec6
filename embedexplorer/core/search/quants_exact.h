/* The exact pass of a search over quantised rows: each candidate's dot product with the query in float64
 * (included by _quants.c once, after quants_iq.h).
 *
 * row_dot64 (quants_blocks.h) is the definition: dequantise's very numbers, eight running sums (number j
 * into sum j % 8), each product and each addition rounded once, the eight added in order at the end.  Where
 * the CPU has AVX-512, row_dot64_avx512 keeps those eight sums in the eight lanes of one register and
 * rounds every product and addition as they are rounded there (the _round_ forms, which a compiler may not
 * fuse into one multiply-add), so its dots are row_dot64's bit for bit; only the time differs.  The
 * numbers of the IQ1/IQ2 kinds come 16 at a time from iq_decode's codes by one permute of a table of the
 * eight values a code can stand for, times the scale's weight computed as iq_dequantise_block computes it
 * (the same float32 product: IQ1's dl (g + delta); IQ2's db (+-g), equal to -(db g) even for infinities, and
 * a NaN db stays that NaN either way).  Ten GPT-2-shaped rows a call, one core, in microseconds a row, before
 * and after (with iq_eight's spread codes): IQ1_S 1.08 -> 0.26, IQ2_XXS 1.27 -> 0.40, IQ2_S 1.29 -> 0.41,
 * Q8_0 0.40 -> 0.35, Q4_K 0.41 -> 0.18 (docs/benchmarks.md).  IQ3_XXS's and IQ3_S's come 16 at a time the same way
 * from their grid runs (iq3_block_products): a hundred rows a call, one core, 7 December, GPT-2-shaped IQ3_XXS 0.73 ->
 * 0.24, IQ3_S 3.57 -> 0.31; Qwen2-7B-sized IQ3_XXS 3.41 -> 1.06, IQ3_S 19.7 -> 1.43.
 */
#ifndef EMBEDEXPLORER_QUANTS_EXACT_H
#define EMBEDEXPLORER_QUANTS_EXACT_H

typedef double (*exact_row_function)(int, const uint8_t *, Py_ssize_t, const double *);

static double row_dot64_plain(int kind, const uint8_t *row, Py_ssize_t width, const double *query)
{
    return row_dot64(kind, row, width, NULL, query);
}

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define EXACT_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,f16c")))
#define EXACT_ROUNDING (_MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)

/* dequantise_block as the portable build compiles it: never inlined into code allowed to fuse its
 * multiplications and additions, so the numbers are the same in every build. */
__attribute__((noinline)) static void dequantise_block_plain(int kind, const uint8_t *block, float *v)
{
    dequantise_block(kind, block, v);
}

/* The eight running sums plus eight numbers times the query's eight, as row_dot64 adds them. */
EXACT_TARGET static ALWAYS_INLINE __m512d add_products(__m512d sums, __m256 numbers, const double *query)
{
    __m512d products = _mm512_mul_round_pd(_mm512_cvtps_pd(numbers), _mm512_loadu_pd(query), EXACT_ROUNDING);
    return _mm512_add_round_pd(sums, products, EXACT_ROUNDING);
}

/* Sixteen numbers of a float32 vector added to the sums: numbers 0-7, then 8-15. */
EXACT_TARGET static ALWAYS_INLINE __m512d add_sixteen(__m512d sums, __m512 numbers, const double *query)
{
    sums = add_products(sums, _mm512_castps512_ps256(numbers), query);
    __m256 upper = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(numbers), 1));
    return add_products(sums, upper, query + 8);
}

/* One IQ1/IQ2 block's 256 numbers added to the sums, 16 at a time from their codes. */
EXACT_TARGET static ALWAYS_INLINE __m512d iq_block_products(int kind, const uint8_t *block, __m512d sums,
                                                            const double *query)
{
    /* A code is grid index m (0-2) plus 4 for a minus: IQ1's m - 1 plus or minus 1/8, IQ2's +-(8, 25, 43). */
    static const float one_bit[16] = {-0.875f, 0.125f, 1.125f, 0.0f, -1.125f, -0.125f, 0.875f, 0.0f};
    static const float two_bit[16] = {8.0f, 25.0f, 43.0f, 0.0f, -8.0f, -25.0f, -43.0f, 0.0f};
    int one = iq_is_one_bit(kind), sub = IQ_SUB[kind - IQ_FIRST_KIND];
    const __m512 values = _mm512_loadu_ps(one ? one_bit : two_bit);
    struct iq_block read;
    iq_decode(kind, block, &read);
    float d = widen_half(read.d);
    for (int i = 0; i < 16; i++) {
        int k = 16 * i / sub; /* the scale of numbers 16 i .. 16 i + 15 */
        float weight = one ? d * (float)read.odd[k] : d * (0.5f + (float)(read.odd[k] >> 1)) * 0.25f;
        __m512i codes = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(read.code + 16 * i)));
        __m512 numbers = _mm512_mul_ps(_mm512_permutexvar_ps(codes, values), _mm512_set1_ps(weight));
        sums = add_sixteen(sums, numbers, query + 16 * i);
    }
    return sums;
}

/* Sixteen numbers of an IQ3 sub-block (numbers 32 s + 16 h ..) from their four grid runs and sixteen minus bits: each
 * run's 3-bit codes spread over its four lanes by one shift, a code and its minus bit looked up in a table of the
 * eight values and their negatives, times the scale's weight.  That is iq3_xxs_block's and iq3_s_block's db value
 * sign to the bit: a minus is the rounded product negated (and a NaN db stays that very NaN) either way. */
EXACT_TARGET static ALWAYS_INLINE __m512 iq3_sixteen(const __m512 values, const uint16_t runs[4], uint32_t minus,
                                                     float db)
{
    const __m512i shifts = _mm512_set_epi32(9, 6, 3, 0, 9, 6, 3, 0, 9, 6, 3, 0, 9, 6, 3, 0);
    __m512i spread = _mm512_set_epi32(runs[3], runs[3], runs[3], runs[3], runs[2], runs[2], runs[2], runs[2], runs[1],
                                      runs[1], runs[1], runs[1], runs[0], runs[0], runs[0], runs[0]);
    __m512i codes = _mm512_and_si512(_mm512_srlv_epi32(spread, shifts), _mm512_set1_epi32(7));
    codes = _mm512_mask_or_epi32(codes, (__mmask16)minus, codes, _mm512_set1_epi32(8));
    return _mm512_mul_ps(_mm512_set1_ps(db), _mm512_permutexvar_ps(codes, values));
}

/* One IQ3_XXS or IQ3_S block's 256 numbers added to the sums, 16 at a time (iq3_sixteen), where dequantise_block's
 * loop a number at a time took five times IQ3_XXS's time (Qwen2-7B-sized IQ3_S, 20 us a row: 2.4 ms of an 11 ms
 * query's exact pass of 113 rows). */
EXACT_TARGET static ALWAYS_INLINE __m512d iq3_block_products(int kind, const uint8_t *block, __m512d sums,
                                                             const double *query)
{
    static const float xxs_values[16] = {4, 12, 20, 28, 36, 44, 52, 62, -4, -12, -20, -28, -36, -44, -52, -62};
    static const float s_values[16] = {1, 3, 5, 7, 9, 11, 13, 15, -1, -3, -5, -7, -9, -11, -13, -15};
    const int s_kind = kind == KIND_IQ3_S;
    const __m512 values = _mm512_loadu_ps(s_kind ? s_values : xxs_values);
    const float d = half_at(block);
    for (int s = 0; s < 8; s++) {
        uint32_t word = s_kind ? 0 : iq3_xxs_word(block, s);
        float db = s_kind ? d * (float)(1 + 2 * ((block[106 + s / 2] >> (4 * (s % 2))) & 15))
                          : d * (0.5f + (float)(word >> 28)) * 0.5f;
        for (int h = 0; h < 2; h++) {
            uint16_t runs[4];
            uint32_t minus;
            for (int i = 0; i < 4; i++) {
                int k = 8 * s + 4 * h + i;
                runs[i] = s_kind ? iq3_s_run(block, k) : IQ3_XXS_GRID[block[2 + k]];
            }
            if (s_kind) { /* bit j % 8 of signs[j / 8] */
                minus = block[74 + 4 * s + 2 * h] | (uint32_t)block[75 + 4 * s + 2 * h] << 8;
            } else { /* two 7-bit sign indices and their parities */
                uint32_t first = (word >> (14 * h)) & 127, second = (word >> (14 * h + 7)) & 127;
                minus = (first | (uint32_t)__builtin_parity(first) << 7) |
                        (second | (uint32_t)__builtin_parity(second) << 7) << 8;
            }
            sums = add_sixteen(sums, iq3_sixteen(values, runs, minus, db), query + 32 * s + 16 * h);
        }
    }
    return sums;
}

EXACT_TARGET static double row_dot64_avx512(int kind, const uint8_t *row, Py_ssize_t width, const double *query)
{
    Py_ssize_t per_block = BLOCK_NUMBERS[kind];
    __m512d sums = _mm512_setzero_pd();
    float v[256];
    for (Py_ssize_t b = 0; b * per_block < width; b++) {
        const uint8_t *block = row + b * BLOCK_BYTES[kind];
        const double *x = query + b * per_block;
        if (iq_kind(kind)) {
            sums = iq_block_products(kind, block, sums, x);
            continue;
        }
        if (kind == KIND_IQ3_XXS || kind == KIND_IQ3_S) {
            sums = iq3_block_products(kind, block, sums, x);
            continue;
        }
        dequantise_block_plain(kind, block, v);
        for (Py_ssize_t j = 0; j < per_block; j += 16)
            sums = add_sixteen(sums, _mm512_loadu_ps(v + j), x + j);
    }
    double lanes[DOT64_SUMS], total = 0.0;
    _mm512_storeu_pd(lanes, sums);
    for (int s = 0; s < DOT64_SUMS; s++)
        total += lanes[s];
    return total;
}
#endif

/* The exact pass's function for one row in the build in use. */
static exact_row_function exact_row(void)
{
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
    if (exact_avx512)
        return row_dot64_avx512;
#endif
    return row_dot64_plain;
}

/* Dot products in float64 of chosen rows with the query (row_dot64's, in the build's function: dequantise's
 * very numbers, the same order of sums for every row, so equal rows score exactly alike).  The exact pass of a
 * search (StoredScreen.exact_scores) reads only its candidates, a few rows: this saves gathering their
 * blocks, a float32 and a float64 copy of them and a product in numpy, which took longer than the rows.
 * Given every row's float64 length and float32 scale, each dot is divided by its row's length (0 where the
 * scale is 0: the row points nowhere), as StoredScreen did in numpy for 2.7 us of a 0.2-0.4 ms query. */
/* Bytes of a row of ``kind`` against a float64 query of ``query_bytes``; 0 when the kind is not one dot_rows reads
 * or the query is not whole blocks of float64. */
static Py_ssize_t exact_row_bytes(int kind, Py_ssize_t query_bytes)
{
    Py_ssize_t width = query_bytes / (Py_ssize_t)sizeof(double);
    if (kind < 0 || kind >= KINDS || BLOCK_NUMBERS[kind] == 0 || query_bytes % (Py_ssize_t)sizeof(double) != 0 ||
        width % BLOCK_NUMBERS[kind] != 0)
        return 0;
    return width / BLOCK_NUMBERS[kind] * BLOCK_BYTES[kind];
}

static PyObject *dot_rows(PyObject *self, PyObject *args)
{
    Py_buffer rows, ids, query, out, lengths = {.buf = NULL}, scale = {.buf = NULL};
    int kind;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*iy*y*w*|y*y*", &rows, &kind, &ids, &query, &out, &lengths, &scale))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t width = query.len / (Py_ssize_t)sizeof(double), count = ids.len / (Py_ssize_t)sizeof(int64_t);
    Py_ssize_t row_bytes = exact_row_bytes(kind, query.len);
    if (row_bytes == 0) {
        PyErr_SetString(PyExc_ValueError, "kind must be a dequantised kind and the query whole blocks of float64");
    } else if (rows.len % row_bytes != 0 || ids.len % (Py_ssize_t)sizeof(int64_t) != 0 ||
               out.len != count * (Py_ssize_t)sizeof(double)) {
        PyErr_SetString(PyExc_ValueError, "rows must be whole rows, ids int64 and out one float64 per id");
    } else if ((lengths.buf == NULL) != (scale.buf == NULL) ||
               (lengths.buf != NULL && (lengths.len != rows.len / row_bytes * (Py_ssize_t)sizeof(double) ||
                                        scale.len != rows.len / row_bytes * (Py_ssize_t)sizeof(float)))) {
        PyErr_SetString(PyExc_ValueError, "lengths (float64) and scale (float32) must come together, one per row");
    } else {
        const int64_t *chosen = ids.buf;
        Py_ssize_t rows_held = rows.len / row_bytes, bad = -1;
        for (Py_ssize_t i = 0; i < count && bad < 0; i++)
            if (chosen[i] < 0 || chosen[i] >= rows_held)
                bad = i;
        if (bad >= 0) {
            PyErr_Format(PyExc_IndexError, "row %lld is not in the table", (long long)chosen[bad]);
        } else {
            const uint8_t *blocks = rows.buf;
            const double *x = query.buf;
            double *dots = out.buf;
            exact_row_function dot = exact_row();
            Py_BEGIN_ALLOW_THREADS
            for (Py_ssize_t i = 0; i < count; i++)
                dots[i] = dot(kind, blocks + chosen[i] * row_bytes, width, x);
            if (lengths.buf != NULL) {
                const double *length = lengths.buf;
                const float *live = scale.buf;
                for (Py_ssize_t i = 0; i < count; i++)
                    dots[i] = live[chosen[i]] == 0.0f ? 0.0 : dots[i] / length[chosen[i]];
            }
            Py_END_ALLOW_THREADS
            result = Py_NewRef(Py_None);
        }
    }
    PyBuffer_Release(&rows);
    PyBuffer_Release(&ids);
    PyBuffer_Release(&query);
    PyBuffer_Release(&out);
    if (lengths.buf != NULL)
        PyBuffer_Release(&lengths);
    if (scale.buf != NULL)
        PyBuffer_Release(&scale);
    return result;
}

#endif
