/* IQ4_XS, TQ2_0 and MXFP4 rows sixteen at a time: a copy made when the table opens (in place of a
 * bfloat16 copy, 4-8 times the size), and its AVX-512 VNNI scan.  Included by _quants.c once, just
 * before quant_scores (it uses quantise_query, split_query and the blocks of quants_lookup_blocks.h).
 *
 * As Q4_K's groups (quants_groups.h): the 16 int32 lanes of a register are 16 rows; one 64-byte load
 * holds four code bytes of each row; the query's matching four bytes are broadcast to every lane and
 * vpdpbusd adds each row's four products into the row's own lane.  IQ4_XS and MXFP4 codes index a
 * table of 16 values (vpshufb: llama.cpp's IQ4_NL values plus 128, MXFP4's doubled e2m1 values plus
 * 12, so unsigned for vpdpbusd); TQ2_0's 2-bit codes are masked in place (bits 2s, 2s + 1: the sums
 * come out 4^s times too large, exact multiples, shifted back exactly).
 *
 * A group, per block, after a header part (each block's part, padded at the end to 64 bytes):
 *   IQ4_XS (256 numbers)  header: half d[16], int8 ls - 32 [8][16] (160 bytes);
 *                         codes: for sub-block i, t = 0..3, bytes 16 i + 4 t .. + 3 of each row's qs
 *                         (low nibbles numbers 32 i + 4 t .., high ones 32 i + 16 + 4 t ..): 2048 bytes;
 *   TQ2_0 (256 numbers)   header: half d[16] (32 bytes); codes: for h = 0, 1, t = 0..7, bytes
 *                         32 h + 4 t .. + 3 of each row's qs (numbers 128 h + 32 s + 4 t .., s = 0..3): 1024;
 *   MXFP4 (32 numbers)    header: uint8 e[16] (16 bytes; the padding and blocks whose codes all mean 0
 *                         hold 127, as their numbers are 0 whatever e is); codes: for t = 0..3, bytes 4 t ..
 *                         of each row's qs (numbers 4 t .., 16 + 4 t ..): 256.
 * Rows past the table's end are zeros.  Bytes: IQ4_XS 2208 a block for 2176 stored, TQ2_0 1056 for
 * 1056, MXFP4 272 for 272, plus the header's padding (GPT-2-shaped: at most 64 bytes a group).
 * The scans ask for the codes ahead (GROUPS_PREFETCH_BYTES, scan_common.h): the Qwen2-7B-sized IQ4_XS
 * table's query took 44.7 ms without, 13.4 ms a page ahead (two threads, load 3.3-3.8, side by side
 * with a plain read's 22-27 ms).
 *
 * Why each score is within StoredScreen.error_bound (the integer scan's, _quants.c's top, spread 1):
 * the query is quantise_query's, x = x~ + e with x~_j = step_k xq_j (k the run of 32 numbers, which is
 * an IQ4_XS sub-block, a TQ2_0 quarter block, an MXFP4 block).  For each run and row, in int32:
 *   S = sum_j c_j xq_j, c_j the number's integer value (IQ4_NL value, q - 1, doubled e2m1 value),
 * computed as 256 sum (c + o) high + sum (c + o) low - o sum xq (o the offset 128, 1, 12), exactly:
 * |xq| <= 2^14 (high in [-64, 64], low in [-128, 127]), so the parts are at most 32 x 241 x 64 x 256,
 * 32 x 241 x 128 and 128 x 32 x 2^14, all below 2^28.  |S| < 2^21 (TQ2_0) and 2^23 (MXFP4) convert to
 * float32 exactly; IQ4_XS's |S| may reach 2^26, so its conversion rounds once, by 2^-24 of |S| <=
 * sum |c_j xq_j|.  The run's weight w (d (ls - 32) step, d step, 2^(e - 128) step) is exact: d (ls - 32)
 * has at most 16 significant bits, the lowest at least 2^-24, and step is a power of two of at least
 * 2^-100 (quantise_query), so w has at most 16 bits, the lowest at least 2^-124 (MXFP4: a power of two,
 * checked per group to lie in [2^-149, 2^80]).  So S w = sum_j v_j x~_j, v_j being gguf's very numbers
 * (quants_lookup_blocks.h: exact products), up to IQ4_XS's one rounding; one fused multiply-add adds it
 * into the row's lane.  Each term v_j x~_j thus goes through at most width / 32 + 1 roundings (the
 * conversion and the adds; the scale's product is StoredScreen's _SCALE_ROUNDING), far fewer than
 * width: the computed sum is sum v_j x~_j (1 + theta_j), |theta_j| <= gamma_width (Higham 3.1), the
 * bound of the integer scan of Q4_0 as it is.  Below float32's normal range nothing rounds: S w and
 * every partial sum are multiples of 2^-149 (w's lowest bit is at least that), and every such multiple
 * below 2^-126 is a float32 exactly.
 * Overflow: a query whose steps exceed 2^60 (numbers past 2^74) or a width of 2^24 or more is scored
 * per row in float64 instead; below that |w| < 2^81, |S w| < 2^107 and a row's sum (fewer than 2^19
 * runs) below 2^127 (MXFP4's |S w| < 2^103, TQ2_0's 2^97).  MXFP4: a group holding a block whose w
 * would fall outside [2^-149, 2^80] (e below 2, or far from the query's steps: gguf's scales run from
 * 2^-128 to 2^127) is scored per row in float64 (tests/core/test_lookup_groups.py puts such rows in).
 *
 * Scored per row in float64 (lookup_rows_exact): each number gguf's, each product exact in float64,
 * the sum off by at most width 2^-53 of sum |v_j x_j|, the score rounded once to float32: far inside
 * the bound.  That is also the scan of these kinds without groups (a build without VNNI keeps the
 * bfloat16 copy instead: stored_search.py).  A row whose scale is 0 (it points nowhere: its length is
 * 0, infinite or NaN, which a float16 d of infinity or NaN gives) scores 0.
 */
#ifndef EMBEDEXPLORER_QUANTS_LOOKUP_H
#define EMBEDEXPLORER_QUANTS_LOOKUP_H

/* The largest step of the integer query the groups are scanned against (see the top), and the width. */
#define LOOKUP_MAX_STEP_EXPONENT 60
#define LOOKUP_MAX_WIDTH ((Py_ssize_t)1 << 24)
/* MXFP4's weight 2^(e - 128) step within [2^-149, 2^80]: e + step's exponent within [-21, 208]. */
#define MXFP4_LOWEST_SUM (-21)
#define MXFP4_HIGHEST_SUM 208
#define MXFP4_NEUTRAL_E 127

static int lookup_kind(int kind)
{
    return kind == KIND_IQ4_XS || kind == KIND_TQ2_0 || kind == KIND_MXFP4;
}

/* The kinds whose copy is also scanned against the query in signed bytes (coarse: a table's own search). */
static int lookup_bytes_kind(int kind)
{
    return kind == KIND_IQ4_XS || kind == KIND_TQ2_0;
}

/* Bytes of a group's header and codes for each block (see the top). */
static Py_ssize_t lookup_header_bytes(int kind)
{
    return kind == KIND_IQ4_XS ? 2 * GROUP_ROWS + 8 * GROUP_ROWS : kind == KIND_TQ2_0 ? 2 * GROUP_ROWS : GROUP_ROWS;
}

static Py_ssize_t lookup_code_bytes(int kind)
{
    return BLOCK_NUMBERS[kind] / 2 * GROUP_ROWS / (kind == KIND_TQ2_0 ? 2 : 1);
}

static Py_ssize_t lookup_headers(int kind, Py_ssize_t blocks)
{
    return (blocks * lookup_header_bytes(kind) + 63) / 64 * 64;
}

static Py_ssize_t lookup_group_bytes(int kind, Py_ssize_t blocks)
{
    return lookup_headers(kind, blocks) + blocks * lookup_code_bytes(kind);
}

/* Bytes of the whole copy of count rows of width numbers. */
static Py_ssize_t lookup_groups_bytes(int kind, Py_ssize_t count, Py_ssize_t width)
{
    return (count + GROUP_ROWS - 1) / GROUP_ROWS * lookup_group_bytes(kind, width / BLOCK_NUMBERS[kind]);
}

/* Whether every code of an MXFP4 block means 0 (0 and 8 are +0 and -0). */
static int mxfp4_all_zero(const uint8_t *block)
{
    for (int j = 1; j < 17; j++)
        if ((block[j] & 0x77) != 0)
            return 0;
    return 1;
}

/* One row's block b into group slot r. */
static void lookup_place(int kind, const uint8_t *block, Py_ssize_t b, int r, uint8_t *header, uint8_t *codes)
{
    if (kind == KIND_IQ4_XS) {
        memcpy(header + 2 * r, block, 2);
        for (int i = 0; i < 8; i++)
            header[2 * GROUP_ROWS + GROUP_ROWS * i + r] = (uint8_t)(int8_t)(iq4_xs_scale(block, i) - 32);
        for (int s = 0; s < 32; s++) /* s = 4 i + t: bytes 16 i + 4 t of qs */
            memcpy(codes + 64 * s + 4 * r, block + 8 + 4 * s, 4);
    } else if (kind == KIND_TQ2_0) {
        memcpy(header + 2 * r, block + 64, 2);
        for (int s = 0; s < 16; s++) /* s = 8 h + t: bytes 32 h + 4 t of qs */
            memcpy(codes + 64 * s + 4 * r, block + 4 * s, 4);
    } else {
        header[r] = mxfp4_all_zero(block) ? MXFP4_NEUTRAL_E : block[0];
        for (int t = 0; t < 4; t++)
            memcpy(codes + 64 * t + 4 * r, block + 1 + 4 * t, 4);
    }
    (void)b;
}

/* Rows start .. stop - 1 into their groups (start is a multiple of 16: CHUNK_ROWS is). */
static void lookup_group_chunk(const void *job, Py_ssize_t start, Py_ssize_t stop)
{
    const struct kind_group_job *q = job;
    int kind = q->kind;
    Py_ssize_t row_bytes = q->blocks * BLOCK_BYTES[kind], size = lookup_group_bytes(kind, q->blocks);
    Py_ssize_t headers = lookup_headers(kind, q->blocks), header_bytes = lookup_header_bytes(kind);
    Py_ssize_t code_bytes = lookup_code_bytes(kind);
    if (stop == q->count)
        stop = (stop + GROUP_ROWS - 1) / GROUP_ROWS * GROUP_ROWS; /* the last group's missing rows: zeros */
    for (Py_ssize_t g = start / GROUP_ROWS; g * GROUP_ROWS < stop; g++) {
        uint8_t *group = q->groups + g * size;
        memset(group, 0, (size_t)size);
        if (kind == KIND_MXFP4)
            memset(group, MXFP4_NEUTRAL_E, (size_t)headers);
        for (int r = 0; r < GROUP_ROWS && g * GROUP_ROWS + r < q->count; r++) {
            const uint8_t *row = q->rows + (g * GROUP_ROWS + r) * row_bytes;
            for (Py_ssize_t b = 0; b < q->blocks; b++)
                lookup_place(kind, row + b * BLOCK_BYTES[kind], b, r, group + b * header_bytes,
                             group + headers + b * code_bytes);
        }
    }
}

struct lookup_job {
    int kind;
    const uint8_t *rows, *groups;
    Py_ssize_t width;
    const float *query, *scale;
    float *out;
    const int8_t *high, *low; /* the integer query's two bytes, or NULL: scored in float64 */
    const float *step;
    const int32_t *sums; /* each run's sum of xq */
    int lowest_e, highest_e; /* MXFP4: the range of e whose weights are exact (see the top) */
    int far; /* a copy no last-level cache holds (far_copy): TQ2_0 and MXFP4 ask ahead into the second level */
};

/* Rows start .. stop - 1 scored in float64 from gguf's numbers (see the top). */
static void lookup_rows_exact(const struct lookup_job *q, Py_ssize_t start, Py_ssize_t stop)
{
    rows_float64(q->kind, q->rows, q->width, q->query, q->scale, q->out, start, stop);
}

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
/* A 16-value table in every 128-bit lane, each value plus offset (unsigned bytes for vpdpbusd). */
VNNI_TARGET static ALWAYS_INLINE __m512i lookup_table(const int8_t *values, int offset)
{
    uint8_t shifted[16];
    for (int j = 0; j < 16; j++)
        shifted[j] = (uint8_t)(values[j] + offset);
    return _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)shifted));
}

/* Each row's score times its scale (0 where the scale is 0), stored for the group's live rows. */
VNNI_TARGET static ALWAYS_INLINE void lookup_store(const struct lookup_job *q, Py_ssize_t g, Py_ssize_t stop,
                                                   __m512 acc)
{
    store_group_scores(acc, q->scale, q->out, g * 16, stop);
}

/* S = 256 (high sums) + (low sums) - offset (the run's sum of xq), as float32 (see the top). */
VNNI_TARGET static ALWAYS_INLINE __m512 run_sum(__m512i upper, __m512i lower, int32_t offset_sum)
{
    __m512i exact = _mm512_add_epi32(_mm512_slli_epi32(upper, 8), lower);
    return _mm512_cvtepi32_ps(_mm512_sub_epi32(exact, _mm512_set1_epi32(offset_sum)));
}

/* IQ4_XS's groups against xq = 256 high + low, or with low NULL (a constant where inlined) against the query in
 * bytes (the coarse scan, quants_iq.h's top): one vpdpbusd per four numbers, and per run S = sum (c + 128) xq - 128
 * sum xq in int32 (|xq| <= 127: the products' sums at most 32 x 241 x 127 < 2^20), so S = sum c xq exactly, and exact
 * in float32 (|S| <= 32 x 128 x 127 < 2^19); the weight d (ls - 32) (17 bits: exact) times the run's free step,
 * rounded once (normal: at least 2^-24 x 2^-87), then one fused multiply-add and the lane's adds: fewer than width
 * roundings a term, as TQ1_0's (quants_fp4_ternary.h). */
VNNI_TARGET static ALWAYS_INLINE void iq4_xs_scan(const struct lookup_job *q, const int8_t *low, Py_ssize_t start,
                                                  Py_ssize_t stop)
{
    const __m512i table = lookup_table(IQ4_NL_VALUES, 128), nibble = _mm512_set1_epi8(0x0F);
    Py_ssize_t blocks = q->width / 256, size = lookup_group_bytes(KIND_IQ4_XS, blocks);
    Py_ssize_t headers = lookup_headers(KIND_IQ4_XS, blocks);
    for (Py_ssize_t g = start / GROUP_ROWS; g * GROUP_ROWS < stop; g++) {
        const uint8_t *group = q->groups + g * size;
        __m512 acc = _mm512_setzero_ps();
        for (Py_ssize_t b = 0; b < blocks; b++) {
            const uint8_t *header = group + 160 * b, *codes = group + headers + 2048 * b;
            const __m512 d = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)header));
            for (int i = 0; i < 8; i++) {
                /* the low nibbles' and the high ones' sums: by the query's high bytes, and its low ones */
                __m512i upper[2] = {_mm512_setzero_si512(), _mm512_setzero_si512()}, lower[2] = {upper[0], upper[0]};
                for (int t = 0; t < 4; t++) {
                    __m512i bytes = _mm512_loadu_si512((const void *)(codes + 64 * (4 * i + t)));
                    /* into the second level (prefetch_part): against the first, in turns (7 December), one
                     * thread | two: Qwen2-7B-sized 15.0 -> 13.0 | 9.4 -> 9.2 ms, GPT-2-shaped 1.31 -> 0.99 |
                     * 0.61 -> 0.51 ms; TQ2_0's and MXFP4's take it only when far (prefetch_row_ahead) */
                    prefetch_row_second(codes + 64 * (4 * i + t) + GROUPS_PREFETCH_BYTES, 1);
                    __m512i first = _mm512_shuffle_epi8(table, _mm512_and_si512(bytes, nibble));
                    __m512i second = _mm512_shuffle_epi8(table, _mm512_and_si512(_mm512_srli_epi16(bytes, 4), nibble));
                    Py_ssize_t j = 256 * b + 32 * i + 4 * t;
                    upper[0] = _mm512_dpbusd_epi32(upper[0], first, four_bytes(q->high + j));
                    upper[1] = _mm512_dpbusd_epi32(upper[1], second, four_bytes(q->high + j + 16));
                    if (low != NULL) {
                        lower[0] = _mm512_dpbusd_epi32(lower[0], first, four_bytes(low + j));
                        lower[1] = _mm512_dpbusd_epi32(lower[1], second, four_bytes(low + j + 16));
                    }
                }
                Py_ssize_t k = 8 * b + i;
                __m512i sums = _mm512_add_epi32(upper[0], upper[1]);
                if (low != NULL)
                    sums = _mm512_add_epi32(_mm512_slli_epi32(sums, 8), _mm512_add_epi32(lower[0], lower[1]));
                __m512 sum = _mm512_cvtepi32_ps(_mm512_sub_epi32(sums, _mm512_set1_epi32(128 * q->sums[k])));
                __m512i ls = _mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)(header + 32 + 16 * i)));
                __m512 weight = _mm512_mul_ps(_mm512_mul_ps(d, _mm512_cvtepi32_ps(ls)), _mm512_set1_ps(q->step[k]));
                acc = _mm512_fmadd_ps(sum, weight, acc);
            }
        }
        lookup_store(q, g, stop, acc);
    }
}

/* TQ2_0's groups against xq = 256 high + low, or with low NULL (a constant where inlined) against the query in bytes
 * (the coarse scan, quants_iq.h's top): one vpdpbusd a mask, the code sums 4^s times as large (at most 32 x 3 x 64 x
 * 127 < 2^20) shifted back exactly, the run's sum of xq taken off: S = sum (q - 1) xq exact in int32 and float32; the
 * run's weight d step rounded once (a free step; at least 2^-24 x 2^-87: normal), then one fused multiply-add and the
 * lane's adds: fewer than width roundings a term, as TQ1_0's (quants_fp4_ternary.h). */
VNNI_TARGET static ALWAYS_INLINE void tq2_0_scan(const struct lookup_job *q, const int8_t *low, Py_ssize_t start,
                                                 Py_ssize_t stop)
{
    Py_ssize_t blocks = q->width / 256, size = lookup_group_bytes(KIND_TQ2_0, blocks);
    Py_ssize_t headers = lookup_headers(KIND_TQ2_0, blocks);
    for (Py_ssize_t g = start / GROUP_ROWS; g * GROUP_ROWS < stop; g++) {
        const uint8_t *group = q->groups + g * size;
        __m512 acc = _mm512_setzero_ps();
        for (Py_ssize_t b = 0; b < blocks; b++) {
            const uint8_t *codes = group + headers + 1024 * b;
            const __m512 d = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(group + 32 * b)));
            for (int h = 0; h < 2; h++) {
                __m512i upper[4], lower[4];
                for (int s = 0; s < 4; s++)
                    upper[s] = lower[s] = _mm512_setzero_si512();
                /* Unrolled: otherwise GCC copies the eight sums from register to register on every pass
                 * (two copies a product); one core's 2,048 rows in the cache took 12.1 us, now 8.0. */
#pragma GCC unroll 8
                for (int t = 0; t < 8; t++) {
                    __m512i bytes = _mm512_loadu_si512((const void *)(codes + 64 * (8 * h + t)));
                    prefetch_row_ahead(codes + 64 * (8 * h + t) + GROUPS_PREFETCH_BYTES, 1, q->far);
                    for (int s = 0; s < 4; s++) { /* codes of numbers 128 h + 32 s + 4 t .., times 4^s */
                        __m512i code = _mm512_and_si512(bytes, _mm512_set1_epi8((char)(3 << (2 * s))));
                        Py_ssize_t j = 256 * b + 128 * h + 32 * s + 4 * t;
                        upper[s] = _mm512_dpbusd_epi32(upper[s], code, four_bytes(q->high + j));
                        if (low != NULL)
                            lower[s] = _mm512_dpbusd_epi32(lower[s], code, four_bytes(low + j));
                    }
                }
                for (int s = 0; s < 4; s++) {
                    Py_ssize_t k = 8 * b + 4 * h + s;
                    /* 4^s times sum q xq, exactly: shifted back exactly, then the run's sum taken off (q - 1). */
                    __m512i times = low == NULL ? upper[s] : _mm512_add_epi32(_mm512_slli_epi32(upper[s], 8), lower[s]);
                    __m512i exact = _mm512_srai_epi32(times, 2 * s);
                    __m512 sum = _mm512_cvtepi32_ps(_mm512_sub_epi32(exact, _mm512_set1_epi32(q->sums[k])));
                    acc = _mm512_fmadd_ps(sum, _mm512_mul_ps(d, _mm512_set1_ps(q->step[k])), acc);
                }
            }
        }
        lookup_store(q, g, stop, acc);
    }
}

VNNI_TARGET static void mxfp4_groups(const struct lookup_job *q, Py_ssize_t start, Py_ssize_t stop)
{
    const __m512i table = lookup_table(E2M1_VALUES, 12), nibble = _mm512_set1_epi8(0x0F);
    const __m512i lowest = _mm512_set1_epi8((char)q->lowest_e), highest = _mm512_set1_epi8((char)q->highest_e);
    Py_ssize_t blocks = q->width / 32, size = lookup_group_bytes(KIND_MXFP4, blocks);
    Py_ssize_t headers = lookup_headers(KIND_MXFP4, blocks);
    for (Py_ssize_t g = start / GROUP_ROWS; g * GROUP_ROWS < stop; g++) {
        const uint8_t *group = q->groups + g * size;
        __mmask64 outside = 0; /* any e whose weight may not be exact: this group in float64 */
        for (Py_ssize_t at = 0; at < headers; at += 64) {
            __m512i e = _mm512_loadu_si512((const void *)(group + at));
            outside |= _mm512_cmplt_epu8_mask(e, lowest) | _mm512_cmpgt_epu8_mask(e, highest);
        }
        if (outside) {
            lookup_rows_exact(q, g * GROUP_ROWS, (g + 1) * GROUP_ROWS < stop ? (g + 1) * GROUP_ROWS : stop);
            continue;
        }
        __m512 acc = _mm512_setzero_ps();
        for (Py_ssize_t b = 0; b < blocks; b++) {
            const uint8_t *codes = group + headers + 256 * b;
            __m512i e = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(group + 16 * b)));
            /* 2^(e - 128) for e >= 2 (gguf's e8m0_to_fp32_half), times the run's step: exact (see the top). */
            __m512 d = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_sub_epi32(e, _mm512_set1_epi32(1)), 23));
            /* Four sums (the low and high nibbles' numbers, by the query's high and low bytes): short chains. */
            __m512i upper[2] = {_mm512_setzero_si512(), _mm512_setzero_si512()}, lower[2] = {upper[0], upper[0]};
            for (int t = 0; t < 4; t++) {
                __m512i bytes = _mm512_loadu_si512((const void *)(codes + 64 * t));
                prefetch_row_ahead(codes + 64 * t + GROUPS_PREFETCH_BYTES, 1, q->far);
                __m512i first = _mm512_shuffle_epi8(table, _mm512_and_si512(bytes, nibble));
                __m512i second = _mm512_shuffle_epi8(table, _mm512_and_si512(_mm512_srli_epi16(bytes, 4), nibble));
                Py_ssize_t j = 32 * b + 4 * t;
                upper[0] = _mm512_dpbusd_epi32(upper[0], first, four_bytes(q->high + j));
                lower[0] = _mm512_dpbusd_epi32(lower[0], first, four_bytes(q->low + j));
                upper[1] = _mm512_dpbusd_epi32(upper[1], second, four_bytes(q->high + j + 16));
                lower[1] = _mm512_dpbusd_epi32(lower[1], second, four_bytes(q->low + j + 16));
            }
            __m512 sum = run_sum(_mm512_add_epi32(upper[0], upper[1]), _mm512_add_epi32(lower[0], lower[1]),
                                 12 * q->sums[b]);
            acc = _mm512_fmadd_ps(sum, _mm512_mul_ps(d, _mm512_set1_ps(q->step[b])), acc);
        }
        lookup_store(q, g, stop, acc);
    }
}

/* The groups' scan of each kind, against the 16-bit query or (low NULL) the query in bytes: each case its own code. */
VNNI_TARGET static void lookup_groups_vnni(const struct lookup_job *q, Py_ssize_t start, Py_ssize_t stop)
{
    if (q->kind == KIND_IQ4_XS && q->low == NULL)
        iq4_xs_scan(q, NULL, start, stop);
    else if (q->kind == KIND_IQ4_XS)
        iq4_xs_scan(q, q->low, start, stop);
    else if (q->kind == KIND_TQ2_0 && q->low == NULL)
        tq2_0_scan(q, NULL, start, stop);
    else if (q->kind == KIND_TQ2_0)
        tq2_0_scan(q, q->low, start, stop);
    else
        mxfp4_groups(q, start, stop);
}
#endif

static void lookup_chunk(const void *job, Py_ssize_t start, Py_ssize_t stop)
{
    const struct lookup_job *q = job;
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
    if (q->high != NULL) {
        lookup_groups_vnni(q, start, stop);
        return;
    }
#endif
    lookup_rows_exact(q, start, stop);
}

/* The query's copies the groups' scan reads (lookup_query_prepare), held until lookup_query_free. */
struct lookup_query {
    int16_t *xq;
    float *step;
    int8_t *bytes;
    int32_t *sums;
    double rounding; /* |x - x~| of the query the scan reads (coarse: its bytes; 0: scored in float64) */
};

/* Fill job's query fields for the groups' scan where this build scans them: the query as 16-bit integers split in
 * two bytes, or with ``coarse`` (lookup_bytes_kind's kinds) as signed bytes whose rounding it measures
 * (quantise_query_bytes); each run's sum of xq; MXFP4's range of safe e.  Else job->high stays NULL: every row in
 * float64 (see the top). */
static void lookup_query_prepare(struct lookup_job *job, struct lookup_query *prep, int integer, int coarse)
{
    Py_ssize_t width = job->width, runs = width / 32;
    *prep = (struct lookup_query){NULL, NULL, NULL, NULL, 0.0};
    if (!(integer && integer_scan && vnni_scan && job->groups != NULL && width < LOOKUP_MAX_WIDTH))
        return;
    int16_t *xq = prep->xq = PyMem_RawMalloc((size_t)width * sizeof(int16_t));
    float *step = prep->step = PyMem_RawMalloc((size_t)runs * 2 * sizeof(float));
    int8_t *bytes = prep->bytes = PyMem_RawMalloc((size_t)width * 2);
    int32_t *sums = prep->sums = PyMem_RawMalloc((size_t)runs * sizeof(int32_t));
    if (xq == NULL || step == NULL || bytes == NULL || sums == NULL ||
        !(coarse ? quantise_query_bytes(job->query, width, bytes, xq, step, &prep->rounding)
                 : quantise_query(job->query, width, xq, step))) {
        prep->rounding = 0.0;
        return;
    }
    int lowest = 1000, highest = -1000;
    for (Py_ssize_t k = 0; k < runs; k++) {
        int exponent = 0;
        frexpf(step[k], &exponent); /* step = 2^(exponent - 1) (a free step: below 2^exponent) */
        lowest = exponent - 1 < lowest ? exponent - 1 : lowest;
        highest = exponent - 1 > highest ? exponent - 1 : highest;
        int32_t sum = 0;
        for (int j = 0; j < 32; j++)
            sum += xq[32 * k + j];
        sums[k] = sum;
    }
    if (highest > LOOKUP_MAX_STEP_EXPONENT) {
        prep->rounding = 0.0;
        return;
    }
    if (!coarse)
        split_query(xq, step, width, bytes, bytes + width, NULL, 0, NULL);
    int low_e = MXFP4_LOWEST_SUM - lowest, high_e = MXFP4_HIGHEST_SUM - highest;
    job->high = bytes, job->low = coarse ? NULL : bytes + width, job->step = step, job->sums = sums;
    job->lowest_e = low_e < 2 ? 2 : low_e > 255 ? 255 : low_e;
    job->highest_e = high_e > 255 ? 255 : high_e < 0 ? 0 : high_e;
    if (low_e > 255 || high_e < 0) /* no e is safe against this query */
        job->lowest_e = 255, job->highest_e = 0;
}

static void lookup_query_free(struct lookup_query *prep)
{
    PyMem_RawFree(prep->xq);
    PyMem_RawFree(prep->step);
    PyMem_RawFree(prep->bytes);
    PyMem_RawFree(prep->sums);
}

/* quant_scores for IQ4_XS, TQ2_0 and MXFP4 (its arguments checked): the groups against the integer query where this
 * build scans them, else every row in float64 (see the top).  ``coarse`` (IQ4_XS, TQ2_0): against the query in bytes,
 * returning |x - x~| of the query it read (0.0 when it scored in float64). */
static PyObject *lookup_scores(int kind, Py_buffer *rows, Py_buffer *query, Py_buffer *scale, Py_buffer *out,
                               Py_buffer *progress, int integer, const uint8_t *groups, Py_ssize_t count,
                               Py_ssize_t width, int coarse)
{
    struct lookup_job job = {kind, rows->buf, groups, width, query->buf, scale->buf, out->buf, NULL, NULL, NULL,
                             NULL, 0, 0, far_copy(groups == NULL ? 0 : lookup_groups_bytes(kind, count, width))};
    struct lookup_query prep;
    lookup_query_prepare(&job, &prep, integer, coarse);
    PyObject *result = share_chunks_released(lookup_chunk, &job, count, progress);
    if (result != NULL && coarse) {
        Py_DECREF(result);
        result = PyFloat_FromDouble(prep.rounding);
    }
    lookup_query_free(&prep);
    return result;
}

#endif
