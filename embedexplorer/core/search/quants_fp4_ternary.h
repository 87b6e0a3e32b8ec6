/* NVFP4, TQ1_0, IQ3_XXS and IQ3_S rows sixteen at a time: a copy made when the table opens (in place
 * of a bfloat16 copy, 3.6, 9.5, 5.2 and 4.7 times their stored bytes), and its AVX-512 VNNI scan (the IQ3s'
 * needs VBMI too, which vnni_scan asks for).
 * Included by _quants.c once, just before quant_scores (it uses quantise_query, split_query and
 * quants_fp4_ternary_blocks.h).
 *
 * As Q4_K's groups (quants_groups.h): the 16 int32 lanes of a register are 16 rows; one 64-byte load
 * holds four stored bytes of each row; the query's four matching bytes are broadcast to every lane and
 * vpdpbusd adds each row's four products into the row's own lane.
 *   NVFP4 (64 numbers a block): the stored bytes moved, not widened, so the scan reads as many bytes as
 *     one read of the table: per block, 64 bytes of scales: for sub-block s = 0..3, each row's scale
 *     byte as nvfp4_scale_code gives it (the same number, its bits those of a float32's top); then for s,
 *     t = 0..1, bytes 8 s + 4 t .. + 3 of each row's qs (low nibbles numbers 16 s + 4 t .., high ones
 *     16 s + 8 + 4 t ..): 576 bytes for 16 x 36 stored.  A nibble picks its value by vpshufb (vpermb
 *     where VBMI is: no masking) from the doubled e2m1 values plus 12 (so unsigned for vpdpbusd).
 *   TQ1_0 (256 numbers a block): each block's 16 float16 d first (padded to 64 bytes for all blocks),
 *     then per block each row's 256 base-3 digits (0-2) as 2-bit codes: byte j of 64 holds numbers j,
 *     64 + j, 128 + j, 192 + j in bits 0-1, 2-3, 4-5, 6-7; for t = 0..15, bytes 4 t .. + 3 of each row:
 *     1024 bytes a block, 1.24 times the 16 x 54 stored.  A mask picks numbers 64 s + 4 t .. (times
 *     4^s, exact multiples, shifted back exactly).  Scanned as stored, five digits to a byte looked up by
 *     VBMI's byte permutes (two, and a blend, a digit), the GPT-2-shaped table took 1.25 ms of one core
 *     against 0.59 ms for this copy: the scan is bound by its instructions, not by the bytes.
 *   IQ3_S (256 numbers a block): each block's 16 float16 d and 8 x 16 odd scales 1 + 2 ls first (padded to
 *     64 bytes for all blocks), then per block and sub-block s of 32 numbers (iq3_sub_bytes): two registers
 *     of grid indices as stored (half h: byte 4 r + l the low byte of row r's index 8 s + 4 h + l, numbers
 *     32 s + 16 h + 4 l .. + 3), the indices' ninth bits (a 64-bit word a half, bit 4 r + l), and eight words
 *     of minus bits (word 4 h + i: bit 4 r + l is number 32 s + 16 h + 4 l + i of row r negative): 1,824
 *     bytes a block for 16 x 110 stored (1.04 times).  IQ3_XXS (98 bytes) the same without ninth bits, its
 *     signs from llama.cpp's ksigns_iq2xs, its scale's 1 + 2 ls: 1,696 bytes for 1,568 (1.08 times).  The
 *     scan looks each index's four codes up by vpermi2b (grid_byte_lookup: 256 or 512 entries), turns code
 *     i of 64 indices into 64 bytes c + o by one vpermb and o - c where minus by one masked subtraction, and
 *     adds them by one vpdpbusd against the query's numbers i, 4 + i, 8 + i, 12 + i of the half, so each of
 *     the 16 lanes stays one row's.  Until 7 December the copy held every number as a 4-bit code (the
 *     grid's values looked up once, at open: 1.25 and 1.41 times the stored bytes), which a scan reads in
 *     fewer instructions; measured in one process against it, the same scores to the bit, the whole scan on
 *     two threads (a Zen 4 EPYC, load 0.4-0.8): GPT-2-shaped IQ3_XXS 0.60 -> 0.46 ms, IQ3_S 0.67 -> 0.59;
 *     Qwen2-7B-sized IQ3_XXS 10.4 -> 8.9 ms, IQ3_S 9.9 -> 9.2 (one thread 16.2 -> 18.1: IQ3_S's lookups of
 *     512 entries take seven instructions, so one core's scan is bound by them, two cores' by the memory).
 * Rows past the table's end are zeros (their scales and d 0: they add nothing, and are not stored).
 *
 * Why each score is within StoredScreen.error_bound (the integer scan's, _quants.c's top, spread 1):
 * the query is quantise_query's, x = x~ + e with x~_j = step_k xq_j (k the run of 32 numbers, which holds
 * two NVFP4 sub-blocks, or one TQ1_0 run, or one IQ3_S or IQ3_XXS sub-block: every 4 t .. + 3 above lies
 * inside one run).  For each piece (an NVFP4 sub-block of 16 numbers, a TQ1_0 run or IQ3 sub-block of 32)
 * and row, in int32, S = sum_j c_j xq_j, c_j the number's integer value (the doubled e2m1 value k, q - 1,
 * or g sign), computed as 256 sum (c + o) high + sum (c + o) low - o sum xq (o the offset 12, 1, 15, 62 for
 * IQ3_XXS; the last term the low sums' starting value for NVFP4 and the IQ3s), exactly: |xq| <= 2^14 (high
 * in [-64, 64], low in [-128, 127]), so NVFP4's parts are at most 16 x 24 x 64 x 256, 16 x 24 x 128 and 16
 * x 12 x 2^14, all below 2^23 (IQ3_S's 32 x 30 x 64 x 256, 32 x 30 x 128, 32 x 15 x 2^14: below 2^24;
 * IQ3_XXS's 32 x 124 x 64 x 256, 32 x 124 x 128, 32 x 62 x 2^14: below 2^27); TQ1_0's first two come 4^i
 * times as large (i <= 3, the bit pair: 32 x 128 x 64 x 256 and 32 x 128 x 128, below 2^27), exact
 * multiples of 4^i, shifted back exactly before 32 x 2^14 is taken off.  |S| <= 16 x 12 x 2^14 < 2^18
 * (NVFP4), 32 x 2^14 = 2^19 (TQ1_0), 32 x 15 x 2^14 < 2^23 (IQ3_S): exact as float32 too; IQ3_XXS's, up to
 * 32 x 62 x 2^14 < 2^25, is rounded to float32 once, by at most 2^-24 of |S| <= sum |c_j xq_j|: one more
 * rounding of each of its terms.  The piece's weight w = d step is exact: NVFP4's d = (1 + f / 8) 2^(P -
 * 11) (4 bits, 2^-10 to 240; w is put together from its bits, (P << 23 | f << 20) + (116 + s) << 23 for
 * step 2^s, with P - 11 + s in [-110, 67]; a zero scale adds nothing), TQ1_0's float16 d (11 bits, at least
 * 2^-24) and IQ3_S's d (1 + 2 ls) (11 + 5 bits, at least 2^-24) times a power of two step in [2^-100, 2^60]
 * (IQ3_XXS's d (1 + 2 ls) step / 4: at least 2^-126) (quantise_query; above 2^60 see below): normal, 16
 * bits at most. So S w = sum_j v_j x~_j exactly, v_j being gguf's very numbers
 * (quants_fp4_ternary_blocks.h), and one fused multiply-add adds it into the row's lane.  Each term v_j
 * x~_j thus goes through at most width / 16 + 1 roundings (the adds, the scale's product; width / 16 + 2
 * for IQ3_XXS), fewer than width: the computed sum is sum v_j x~_j (1 + theta_j), |theta_j| <= gamma_width
 * (Higham 3.1), the bound of the integer scan of Q4_0 as it is.  Below float32's normal range: every
 * product S w is 0 or at least 2^-126 (a multiple of it), and an addition whose result is subnormal is
 * exact, so the relative bound holds throughout; the scale's product may be subnormal, off by at most
 * 2^-150, nothing beside the bound (|x| is at least 2^-87 for a step of 2^-100).
 * No overflow: |S w| < 2^25 x 2^21 x 2^60, and fewer than 2^20 terms a row (a width below 2^24).
 *
 * A query with a step above 2^60 (numbers past 2^74), a width of 2^24 or more, and every build without
 * VNNI (which keeps the bfloat16 copy in the app: stored_search.py) is scored per row in float64
 * (fp4t_rows_exact): each number gguf's, each product exact in float64, the sum off by at most
 * width 2^-53 of sum |v_j x_j|, the score rounded once to float32: far inside the bound.  A row whose
 * scale is 0 (it points nowhere: length 0, infinite or NaN, which a float16 d of infinity or NaN gives)
 * scores 0.
 */
#ifndef EMBEDEXPLORER_QUANTS_FP4_TERNARY_H
#define EMBEDEXPLORER_QUANTS_FP4_TERNARY_H

#define FP4T_MAX_STEP_EXPONENT 60
#define FP4T_MAX_WIDTH ((Py_ssize_t)1 << 24)
#define NVFP4_GROUP_BLOCK (64 + 512)
#define TQ1_0_GROUP_CODES 1024
/* NVFP4's scan looks its nibbles up with VBMI's byte permutes where the CPU has them. */
#define FP4T_VBMI_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,avx512vbmi,gfni,f16c,fma")))

#define IQ3_S_HEADER (2 * GROUP_ROWS + 8 * GROUP_ROWS)

static int fp4t_kind(int kind)
{
    return kind == KIND_NVFP4 || kind == KIND_TQ1_0 || kind == KIND_IQ3_XXS || kind == KIND_IQ3_S;
}

/* The kinds whose copy is also scanned against the query in signed bytes (coarse: a table's own search). */
static int fp4t_bytes_kind(int kind)
{
    return kind == KIND_TQ1_0 || kind == KIND_IQ3_XXS || kind == KIND_IQ3_S;
}

/* TQ1_0's d of every block at the group's start, padded to 64 bytes; IQ3_S's d and scales likewise. */
static Py_ssize_t tq1_0_headers(Py_ssize_t blocks)
{
    return (blocks * 2 * GROUP_ROWS + 63) / 64 * 64;
}

static Py_ssize_t iq3_s_headers(Py_ssize_t blocks)
{
    return (blocks * IQ3_S_HEADER + 63) / 64 * 64;
}

/* Where an IQ3 copy's sub-block of 32 numbers of 16 rows has its minus words: after two registers of grid indices
 * and IQ3_S's two words of ninth bits (see the top). */
static Py_ssize_t iq3_minus_at(int kind)
{
    return 128 + (kind == KIND_IQ3_S ? 16 : 0);
}

/* The sub-block's bytes: those, then eight words of minus bits. */
static Py_ssize_t iq3_sub_bytes(int kind)
{
    return iq3_minus_at(kind) + 64;
}

static Py_ssize_t fp4t_group_bytes(int kind, Py_ssize_t blocks)
{
    if (kind == KIND_IQ3_S || kind == KIND_IQ3_XXS)
        return iq3_s_headers(blocks) + blocks * 8 * iq3_sub_bytes(kind);
    return kind == KIND_NVFP4 ? blocks * NVFP4_GROUP_BLOCK : tq1_0_headers(blocks) + blocks * TQ1_0_GROUP_CODES;
}

/* Bytes of the whole copy of count rows of width numbers. */
static Py_ssize_t fp4t_groups_bytes(int kind, Py_ssize_t count, Py_ssize_t width)
{
    return (count + GROUP_ROWS - 1) / GROUP_ROWS * fp4t_group_bytes(kind, width / BLOCK_NUMBERS[kind]);
}

/* Row r's block b into its group (see the top). */
static void fp4t_place(int kind, const uint8_t *block, Py_ssize_t b, int r, uint8_t *group, Py_ssize_t blocks)
{
    if (kind == KIND_NVFP4) {
        uint8_t *at = group + b * NVFP4_GROUP_BLOCK;
        for (int s = 0; s < 4; s++) {
            at[GROUP_ROWS * s + r] = nvfp4_scale_code(block[s]);
            for (int t = 0; t < 2; t++)
                memcpy(at + 64 + 64 * (2 * s + t) + 4 * r, block + 4 + 8 * s + 4 * t, 4);
        }
    } else if (kind == KIND_IQ3_S || kind == KIND_IQ3_XXS) {
        uint8_t *header = group + b * IQ3_S_HEADER;
        uint8_t *codes = group + iq3_s_headers(blocks) + b * 8 * iq3_sub_bytes(kind);
        memcpy(header + 2 * r, block, 2);
        for (int s = 0; s < 8; s++) {
            uint32_t word = kind == KIND_IQ3_XXS ? iq3_xxs_word(block, s) : 0;
            int ls = kind == KIND_IQ3_XXS ? (int)(word >> 28) : (block[106 + s / 2] >> (4 * (s % 2))) & 15;
            header[2 * GROUP_ROWS + GROUP_ROWS * s + r] = (uint8_t)(1 + 2 * ls);
            uint8_t *sub = codes + s * iq3_sub_bytes(kind), *minus = sub + iq3_minus_at(kind);
            for (int h = 0; h < 2; h++) /* index l of half h: numbers 32 s + 16 h + 4 l .. + 3 */
                for (int l = 0; l < 4; l++) {
                    int k = 8 * s + 4 * h + l, bit = 4 * (r % 2) + l;
                    unsigned index = block[2 + k];
                    if (kind == KIND_IQ3_S && (block[66 + k / 8] >> (k % 8)) & 1)
                        sub[128 + 8 * h + r / 2] |= (uint8_t)(1u << bit); /* the index's ninth bit */
                    sub[64 * h + 4 * r + l] = (uint8_t)index;
                    for (int i = 0; i < 4; i++) { /* number 4 k + i's sign: word 4 h + i, bit 4 r + l */
                        int j = 4 * k + i;
                        int negative = kind == KIND_IQ3_XXS ? iq3_xxs_minus(word, j - 32 * s)
                                                            : (block[74 + j / 8] >> (j % 8)) & 1;
                        minus[8 * (4 * h + i) + r / 2] |= (uint8_t)(negative << bit);
                    }
                }
        }
    } else {
        uint8_t *codes = group + tq1_0_headers(blocks) + b * TQ1_0_GROUP_CODES;
        float v[256];
        uint8_t packed[64];
        memcpy(group + 2 * (GROUP_ROWS * b + r), block + 52, 2);
        tq1_0_block(block, 1.0f, v); /* the digits less 1: -1, 0, 1 */
        for (int j = 0; j < 64; j++)
            packed[j] = (uint8_t)((int)(v[j] + 1) | (int)(v[64 + j] + 1) << 2 | (int)(v[128 + j] + 1) << 4 |
                                  (int)(v[192 + j] + 1) << 6);
        for (int t = 0; t < 16; t++)
            memcpy(codes + 64 * t + 4 * r, packed + 4 * t, 4);
    }
}

/* Rows start .. stop - 1 into their groups (start is a multiple of 16: CHUNK_ROWS is). */
static void fp4t_group_chunk(const void *job, Py_ssize_t start, Py_ssize_t stop)
{
    const struct kind_group_job *q = job;
    Py_ssize_t row_bytes = q->blocks * BLOCK_BYTES[q->kind], size = fp4t_group_bytes(q->kind, q->blocks);
    if (stop == q->count)
        stop = (stop + GROUP_ROWS - 1) / GROUP_ROWS * GROUP_ROWS; /* the last group's missing rows: zeros */
    for (Py_ssize_t g = start / GROUP_ROWS; g * GROUP_ROWS < stop; g++) {
        uint8_t *group = q->groups + g * size;
        memset(group, 0, (size_t)size);
        for (int r = 0; r < GROUP_ROWS && g * GROUP_ROWS + r < q->count; r++) {
            const uint8_t *row = q->rows + (g * GROUP_ROWS + r) * row_bytes;
            for (Py_ssize_t b = 0; b < q->blocks; b++)
                fp4t_place(q->kind, row + b * BLOCK_BYTES[q->kind], b, r, group, q->blocks);
        }
    }
}

struct fp4t_job {
    int kind;
    const uint8_t *rows, *groups;
    Py_ssize_t width;
    const float *query, *scale;
    float *out;
    const int8_t *high, *low; /* the integer query's two bytes, or NULL: scored in float64 */
    const float *step;
    const int32_t *offsets; /* o times each piece's sum of xq (see the top) */
    const int32_t *exponents; /* NVFP4: (116 + s) << 23 for each run's step 2^s */
    int vbmi; /* VBMI's byte permutes here */
    int far;  /* a copy no last-level cache holds (far_copy): IQ3_XXS's lines asked for into the second level */
};

/* Rows start .. stop - 1 scored in float64 from gguf's numbers (see the top). */
static void fp4t_rows_exact(const struct fp4t_job *q, Py_ssize_t start, Py_ssize_t stop)
{
    rows_float64(q->kind, q->rows, q->width, q->query, q->scale, q->out, start, stop);
}

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
/* Each row's score times its scale (0 where the scale is 0), stored for the group's live rows. */
VNNI_TARGET static ALWAYS_INLINE void fp4t_store(const struct fp4t_job *q, Py_ssize_t g, Py_ssize_t stop, __m512 acc)
{
    store_group_scores(acc, q->scale, q->out, g * 16, stop);
}

/* S = 256 (high sums) + (low sums) - o (the piece's sum of xq), as float32: exact (see the top). */
VNNI_TARGET static ALWAYS_INLINE __m512 fp4t_sum(__m512i upper, __m512i lower, int32_t offset)
{
    __m512i exact = _mm512_add_epi32(_mm512_slli_epi32(upper, 8), lower);
    return _mm512_cvtepi32_ps(_mm512_sub_epi32(exact, _mm512_set1_epi32(offset)));
}

/* One load's four products into the sub-block's sums: first the low nibbles' values (numbers j ..),
 * second the high ones' (numbers j + 8 ..). */
VNNI_TARGET static ALWAYS_INLINE void nvfp4_products(const struct fp4t_job *q, __m512i first, __m512i second,
                                                     Py_ssize_t j, __m512i *upper, __m512i *lower)
{
    *upper = _mm512_dpbusd_epi32(*upper, first, four_bytes(q->high + j));
    *lower = _mm512_dpbusd_epi32(*lower, first, four_bytes(q->low + j));
    *upper = _mm512_dpbusd_epi32(*upper, second, four_bytes(q->high + j + 8));
    *lower = _mm512_dpbusd_epi32(*lower, second, four_bytes(q->low + j + 8));
}

/* acc plus sub-block k's S times each row's weight d step = (1 + f / 8) 2^(P - 11 + s) (step = 2^s):
 * the code shifted to a float32's exponent and mantissa plus (116 + s) << 23, exact (see the top); a
 * row whose scale is 0 adds nothing.  lower began at -offset, so S = 256 upper + lower. */
VNNI_TARGET static ALWAYS_INLINE __m512 nvfp4_add_sub_block(const struct fp4t_job *q, const uint8_t *codes,
                                                            Py_ssize_t k, __m512i upper, __m512i lower, __m512 acc)
{
    __m512i code = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)codes));
    __m512i bits = _mm512_add_epi32(_mm512_slli_epi32(code, 20), _mm512_set1_epi32(q->exponents[k / 2]));
    __m512 sum = _mm512_cvtepi32_ps(_mm512_add_epi32(_mm512_slli_epi32(upper, 8), lower));
    return _mm512_mask3_fmadd_ps(sum, _mm512_castsi512_ps(bits), acc, _mm512_test_epi32_mask(code, code));
}

/* The nibbles' values plus 12 by vpshufb (AVX-512 BW) or, where VBMI is, vpermb, whose 64-entry table
 * (each value four times) reads six bits: no masking of the nibbles. */
#define NVFP4_GROUPS(NAME, TARGET, TABLE, LOW, HIGH)                                                                   \
    TARGET static void NAME(const struct fp4t_job *q, Py_ssize_t start, Py_ssize_t stop)                             \
    {                                                                                                                  \
        uint8_t shifted[64];                                                                                           \
        for (int j = 0; j < 64; j++)                                                                                   \
            shifted[j] = (uint8_t)(NVFP4_VALUES[j % 16] + 12);                                                         \
        const __m512i table = TABLE, nibble = _mm512_set1_epi8(0x0F);                                                  \
        (void)nibble;                                                                                                  \
        Py_ssize_t blocks = q->width / 64;                                                                             \
        for (Py_ssize_t g = start / GROUP_ROWS; g * GROUP_ROWS < stop; g++) {                                          \
            const uint8_t *group = q->groups + g * blocks * NVFP4_GROUP_BLOCK;                                         \
            __m512 acc = _mm512_setzero_ps();                                                                          \
            for (Py_ssize_t b = 0; b < blocks; b++) {                                                                  \
                const uint8_t *at = group + b * NVFP4_GROUP_BLOCK, *codes = at + 64;                                   \
                for (int s = 0; s < 4; s++) {                                                                          \
                    __m512i upper = _mm512_setzero_si512(), lower = _mm512_set1_epi32(-q->offsets[4 * b + s]);         \
                    for (int t = 0; t < 2; t++) {                                                                      \
                        __m512i bytes = _mm512_loadu_si512((const void *)(codes + 64 * (2 * s + t)));                  \
                        nvfp4_products(q, LOW, HIGH, 64 * b + 16 * s + 4 * t, &upper, &lower);                         \
                    }                                                                                                  \
                    acc = nvfp4_add_sub_block(q, at + GROUP_ROWS * s, 4 * b + s, upper, lower, acc);                   \
                }                                                                                                      \
            }                                                                                                          \
            fp4t_store(q, g, stop, acc);                                                                               \
        }                                                                                                              \
    }

NVFP4_GROUPS(nvfp4_groups, VNNI_TARGET, _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)shifted)),
             _mm512_shuffle_epi8(table, _mm512_and_si512(bytes, nibble)),
             _mm512_shuffle_epi8(table, _mm512_and_si512(_mm512_srli_epi16(bytes, 4), nibble)))
NVFP4_GROUPS(nvfp4_groups_vbmi, FP4T_VBMI_TARGET, _mm512_loadu_si512((const void *)shifted),
             _mm512_permutexvar_epi8(bytes, table), _mm512_permutexvar_epi8(_mm512_srli_epi16(bytes, 4), table))
#undef NVFP4_GROUPS

VNNI_TARGET static void tq1_0_groups(const struct fp4t_job *q, Py_ssize_t start, Py_ssize_t stop)
{
    Py_ssize_t blocks = q->width / 256, size = fp4t_group_bytes(KIND_TQ1_0, blocks), headers = tq1_0_headers(blocks);
    for (Py_ssize_t g = start / GROUP_ROWS; g * GROUP_ROWS < stop; g++) {
        const uint8_t *group = q->groups + g * size;
        __m512 acc = _mm512_setzero_ps();
        for (Py_ssize_t b = 0; b < blocks; b++) {
            const uint8_t *codes = group + headers + b * TQ1_0_GROUP_CODES;
            const __m512 d = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(group + 2 * GROUP_ROWS * b)));
            for (int half = 0; half < 2; half++) { /* loads 8 half .. + 7: runs 2 s + half */
                __m512i upper[4], lower[4];
                for (int s = 0; s < 4; s++)
                    upper[s] = lower[s] = _mm512_setzero_si512();
                /* Unrolled (as TQ2_0's, quants_lookup.h): 2,048 rows in the cache took 11.9 us, now 7.8. */
#pragma GCC unroll 8
                for (int i = 0; i < 8; i++) {
                    int t = 8 * half + i;
                    __m512i bytes = _mm512_loadu_si512((const void *)(codes + 64 * t));
                    for (int s = 0; s < 4; s++) { /* numbers 64 s + 4 t .., their digits times 4^s */
                        __m512i code = _mm512_and_si512(bytes, _mm512_set1_epi8((char)(3 << (2 * s))));
                        Py_ssize_t j = 256 * b + 64 * s + 4 * t;
                        upper[s] = _mm512_dpbusd_epi32(upper[s], code, four_bytes(q->high + j));
                        lower[s] = _mm512_dpbusd_epi32(lower[s], code, four_bytes(q->low + j));
                    }
                }
                for (int s = 0; s < 4; s++) {
                    Py_ssize_t k = 8 * b + 2 * s + half;
                    /* 4^s times the sum of digit xq, exactly: shifted back exactly, then the run's sum off. */
                    __m512i scaled = _mm512_add_epi32(_mm512_slli_epi32(upper[s], 8), lower[s]);
                    __m512i exact = _mm512_srai_epi32(scaled, 2 * s);
                    __m512 sum = _mm512_cvtepi32_ps(_mm512_sub_epi32(exact, _mm512_set1_epi32(q->offsets[k])));
                    acc = _mm512_fmadd_ps(sum, _mm512_mul_ps(d, _mm512_set1_ps(q->step[k])), acc);
                }
            }
        }
        fp4t_store(q, g, stop, acc);
    }
}
/* tq1_0_groups against the query in bytes (the coarse scan, quants_iq.h's top): one vpdpbusd a mask, the digit
 * sums 4^s times as large (at most 32 x 128 x 127 < 2^20) shifted back exactly, the run's sum of xq taken off:
 * S = sum (digit - 1) xq exact in int32 and float32; the run's weight d step rounded once (a free step), then one
 * fused multiply-add and the lane's adds, as above: fewer than width roundings a term. */
VNNI_TARGET static void tq1_0_groups_bytes(const struct fp4t_job *q, Py_ssize_t start, Py_ssize_t stop)
{
    Py_ssize_t blocks = q->width / 256, size = fp4t_group_bytes(KIND_TQ1_0, blocks), headers = tq1_0_headers(blocks);
    for (Py_ssize_t g = start / GROUP_ROWS; g * GROUP_ROWS < stop; g++) {
        const uint8_t *group = q->groups + g * size;
        __m512 acc = _mm512_setzero_ps();
        for (Py_ssize_t b = 0; b < blocks; b++) {
            const uint8_t *codes = group + headers + b * TQ1_0_GROUP_CODES;
            const __m512 d = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(group + 2 * GROUP_ROWS * b)));
            for (int half = 0; half < 2; half++) { /* loads 8 half .. + 7: runs 2 s + half */
                __m512i sums[4];
                for (int s = 0; s < 4; s++)
                    sums[s] = _mm512_setzero_si512();
#pragma GCC unroll 8
                for (int i = 0; i < 8; i++) {
                    int t = 8 * half + i;
                    __m512i bytes = _mm512_loadu_si512((const void *)(codes + 64 * t));
                    for (int s = 0; s < 4; s++) { /* numbers 64 s + 4 t .., their digits times 4^s */
                        __m512i code = _mm512_and_si512(bytes, _mm512_set1_epi8((char)(3 << (2 * s))));
                        sums[s] = _mm512_dpbusd_epi32(sums[s], code, four_bytes(q->high + 256 * b + 64 * s + 4 * t));
                    }
                }
                for (int s = 0; s < 4; s++) {
                    Py_ssize_t k = 8 * b + 2 * s + half;
                    __m512i exact = _mm512_srai_epi32(sums[s], 2 * s);
                    __m512 sum = _mm512_cvtepi32_ps(_mm512_sub_epi32(exact, _mm512_set1_epi32(q->offsets[k])));
                    acc = _mm512_fmadd_ps(sum, _mm512_mul_ps(d, _mm512_set1_ps(q->step[k])), acc);
                }
            }
        }
        fp4t_store(q, g, stop, acc);
    }
}
/* The IQ3 scan's tables, per kind (IQ3_XXS, IQ3_S): each grid entry's first two values' 3-bit codes (its low six
 * bits) in codes[0], its last two's in codes[1], for grid_byte_lookup; then for vpermb, which reads a byte's low six
 * bits, the value plus the offset o (15, IQ3_XXS 62) of the code in bits 0-2 (values[0]) and in bits 3-5
 * (values[1]).  Made once, when the module loads (iq3_fill_tables), not by every chunk of every query. */
static uint8_t IQ3_CODES[2][2][512], IQ3_VALUES[2][2][64];

static void iq3_fill_tables(void)
{
    for (int s = 0; s < 2; s++) { /* 0: IQ3_XXS, 1: IQ3_S */
        for (int i = 0; i < (s ? 512 : 256); i++) {
            unsigned run = s ? IQ3_S_GRID[i] : IQ3_XXS_GRID[i];
            IQ3_CODES[s][0][i] = (uint8_t)(run & 63u), IQ3_CODES[s][1][i] = (uint8_t)(run >> 6);
        }
        for (int c = 0; c < 64; c++)
            for (int v = 0; v < 2; v++) {
                int code = v ? c >> 3 : c & 7;
                IQ3_VALUES[s][v][c] = (uint8_t)(s ? 15 + 2 * code + 1 : 62 + IQ3_XXS_VALUES[code]);
            }
    }
}

/* Those tables in registers for a scan. */
struct iq3_tables {
    __m512i low[8], high[8], first, second;
};

FP4T_VBMI_TARGET static void iq3_load_tables(int kind, struct iq3_tables *tables)
{
    int s = kind == KIND_IQ3_S;
    for (int t = 0; t < 8; t++)
        tables->low[t] = _mm512_loadu_si512((const void *)(IQ3_CODES[s][0] + 64 * t)),
        tables->high[t] = _mm512_loadu_si512((const void *)(IQ3_CODES[s][1] + 64 * t));
    tables->first = _mm512_loadu_si512((const void *)IQ3_VALUES[s][0]);
    tables->second = _mm512_loadu_si512((const void *)IQ3_VALUES[s][1]);
}

/* One group's scores for IQ3_S or IQ3_XXS (a constant where inlined) from its copy of grid indices (see the top):
 * per half of a sub-block, the 64 indices' codes looked up (grid_byte_lookup), then for value i = 0..3 of every
 * index the bytes c + o (vpermb), made o - c where the number is negative (one masked subtraction by its word of
 * minus bits), and one vpdpbusd against the query's four numbers i, 4 + i, 8 + i, 12 + i of the half (the order
 * grid_query_order puts them in), for the 16 rows at once.  Against the 16-bit query (low set) the sums S = 256
 * (u . high) + u . low - o Q of iq3_groups before; against the query in bytes (low NULL) S = u . xq - o Q; each S
 * weighed as before (see the top and the bytes' note below). */
FP4T_VBMI_TARGET static ALWAYS_INLINE __m512 iq3_group(int kind, const uint8_t *group, Py_ssize_t blocks,
                                                        const int8_t *high, const int8_t *low, const float *steps,
                                                        const int32_t *offsets, const struct iq3_tables *tables,
                                                        int far)
{
    const int xxs = kind == KIND_IQ3_XXS;
    const Py_ssize_t sub_bytes = iq3_sub_bytes(kind), minus_at = iq3_minus_at(kind), headers = iq3_s_headers(blocks);
    const __m512i twice = _mm512_set1_epi8(xxs ? 124 : 30); /* o - c = 2 o - (c + o) */
    const float quarter = xxs ? 0.25f : 1.0f;
    __m512 acc = _mm512_setzero_ps();
    for (Py_ssize_t b = 0; b < blocks; b++) {
        const uint8_t *header = group + b * IQ3_S_HEADER, *codes = group + headers + b * 8 * sub_bytes;
        const __m512 d = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)header));
        for (int s = 0; s < 8; s++) {
            const uint8_t *sub = codes + s * sub_bytes;
            Py_ssize_t k = 8 * b + s;
            /* Ahead (scan_common.h); IQ3_S, bound by its lookups, gained nothing from the second level when far
             * (Qwen2-7B-sized 9.1 -> 9.2 ms): it keeps the first. */
            prefetch_row_ahead(sub + GROUPS_PREFETCH_BYTES, sub_bytes, xxs && far);
            /* a chain of sums per half: u . high (the bytes' u . xq), and u . low from -o Q */
            __m512i upper[2] = {_mm512_setzero_si512(), _mm512_setzero_si512()};
            __m512i lower[2] = {_mm512_set1_epi32(-offsets[k]), _mm512_setzero_si512()};
            if (low == NULL)
                upper[0] = lower[0];
            for (int h = 0; h < 2; h++) {
                __m512i index = _mm512_loadu_si512((const void *)(sub + 64 * h));
                __mmask64 top = _mm512_movepi8_mask(index), ninth = 0;
                if (!xxs) {
                    uint64_t bits;
                    memcpy(&bits, sub + 128 + 8 * h, sizeof bits);
                    ninth = _cvtu64_mask64(bits);
                }
                __m512i pairs[2] = {grid_byte_lookup(tables->low, index, top, ninth, !xxs),
                                    grid_byte_lookup(tables->high, index, top, ninth, !xxs)};
                for (int i = 0; i < 4; i++) {
                    uint64_t minus;
                    memcpy(&minus, sub + minus_at + 8 * (4 * h + i), sizeof minus);
                    __m512i u = _mm512_permutexvar_epi8(pairs[i / 2], i % 2 ? tables->second : tables->first);
                    u = _mm512_mask_sub_epi8(u, _cvtu64_mask64(minus), twice, u);
                    Py_ssize_t j = 256 * b + 32 * s + 16 * h + 4 * i;
                    upper[h] = _mm512_dpbusd_epi32(upper[h], u, four_bytes(high + j));
                    if (low != NULL)
                        lower[h] = _mm512_dpbusd_epi32(lower[h], u, four_bytes(low + j));
                }
            }
            const uint8_t *odd_at = header + 2 * GROUP_ROWS + GROUP_ROWS * s;
            __m512i odd = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)odd_at));
            __m512 step = _mm512_set1_ps(steps[k] * quarter); /* a power of two: exact */
            __m512 weight = _mm512_mul_ps(_mm512_mul_ps(d, _mm512_cvtepi32_ps(odd)), step);
            __m512i sum = _mm512_add_epi32(upper[0], upper[1]);
            if (low != NULL)
                sum = _mm512_add_epi32(_mm512_slli_epi32(sum, 8), _mm512_add_epi32(lower[0], lower[1]));
            acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sum), weight, acc);
        }
    }
    return acc;
}

/* Against the query in bytes (the coarse scan, quants_iq.h's top): one vpdpbusd per four numbers, and per sub-block
 * S = sum (c + o) xq - o sum xq in int32 (|xq| <= 127: IQ3_S's at most 32 x 30 x 127, IQ3_XXS's 32 x 124 x 127, both
 * below 2^19: exact in float32 too), so S = sum c xq exactly; the weight d (1 + 2 ls) step (/ 4) rounded once (a free
 * step; d (1 + 2 ls) is exact, and the weight normal: at least 2^-24 x 2^-87 x 2^-2), then one fused multiply-add and
 * the lane's adds: fewer than width roundings a term, as tq1_0_groups_bytes.  Each case its own code: the kind and
 * whether low is NULL are constants where iq3_group is inlined. */
FP4T_VBMI_TARGET static void iq3_groups(const struct fp4t_job *q, Py_ssize_t start, Py_ssize_t stop)
{
    struct iq3_tables tables;
    iq3_load_tables(q->kind, &tables);
    Py_ssize_t blocks = q->width / 256, size = fp4t_group_bytes(q->kind, blocks);
    for (Py_ssize_t g = start / GROUP_ROWS; g * GROUP_ROWS < stop; g++) {
        const uint8_t *group = q->groups + g * size;
        __m512 acc;
        if (q->kind == KIND_IQ3_XXS && q->low == NULL)
            acc = iq3_group(KIND_IQ3_XXS, group, blocks, q->high, NULL, q->step, q->offsets, &tables, q->far);
        else if (q->kind == KIND_IQ3_XXS)
            acc = iq3_group(KIND_IQ3_XXS, group, blocks, q->high, q->low, q->step, q->offsets, &tables, q->far);
        else if (q->low == NULL)
            acc = iq3_group(KIND_IQ3_S, group, blocks, q->high, NULL, q->step, q->offsets, &tables, q->far);
        else
            acc = iq3_group(KIND_IQ3_S, group, blocks, q->high, q->low, q->step, q->offsets, &tables, q->far);
        fp4t_store(q, g, stop, acc);
    }
}
#endif

static void fp4t_chunk(const void *job, Py_ssize_t start, Py_ssize_t stop)
{
    const struct fp4t_job *q = job;
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
    if (q->high != NULL) {
        if (q->kind == KIND_NVFP4 && q->vbmi)
            nvfp4_groups_vbmi(q, start, stop);
        else if (q->kind == KIND_NVFP4)
            nvfp4_groups(q, start, stop);
        else if (q->kind == KIND_IQ3_S || q->kind == KIND_IQ3_XXS)
            iq3_groups(q, start, stop);
        else if (q->low == NULL)
            tq1_0_groups_bytes(q, start, stop);
        else
            tq1_0_groups(q, start, stop);
        return;
    }
#endif
    fp4t_rows_exact(q, start, stop);
}

/* For tests: VBMI left unused (NVFP4's vpshufb scan, TQ1_0's bfloat16 copy), as on a CPU without it. */
static int fp4t_without_vbmi = 0;

/* Whether the CPU has VBMI's byte permutes (and tests have not turned them off). */
static int fp4t_vbmi(void)
{
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
    return !fp4t_without_vbmi && __builtin_cpu_supports("avx512vbmi");
#else
    return 0;
#endif
}

/* Whether this build scans the groups (AVX-512 VNNI). */
static int fp4t_grouped(int kind)
{
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
    (void)kind;
    return integer_scan && vnni_scan;
#else
    (void)kind;
    return 0;
#endif
}

/* The query's copies the groups' scan reads (fp4t_query_prepare), held until fp4t_query_free. */
struct fp4t_query {
    int16_t *xq;
    float *step;
    int8_t *bytes;
    int32_t *offsets, *exponents;
    double rounding; /* |x - x~| of the query the scan reads (coarse: its bytes; 0: scored in float64) */
};

/* Fill job's query fields for the groups' scan where this build scans them: the query as 16-bit integers split in
 * two bytes, or with ``coarse`` (fp4t_bytes_kind's kinds) as signed bytes whose rounding it measures
 * (quantise_query_bytes); each piece's offset times its sum of xq; NVFP4's steps' exponents.  Else job->high stays
 * NULL: every row in float64 (see the top). */
static void fp4t_query_prepare(struct fp4t_job *job, struct fp4t_query *prep, int integer, int coarse)
{
    int kind = job->kind;
    Py_ssize_t width = job->width, runs = width / 32, piece = kind == KIND_NVFP4 ? 16 : 32;
    Py_ssize_t offset = kind == KIND_NVFP4 ? 12 : kind == KIND_IQ3_S ? 15 : kind == KIND_IQ3_XXS ? 62 : 1;
    *prep = (struct fp4t_query){NULL, NULL, NULL, NULL, NULL, 0.0};
    if (!integer || job->groups == NULL || !fp4t_grouped(kind) || width >= FP4T_MAX_WIDTH)
        return;
    prep->xq = PyMem_RawMalloc((size_t)width * sizeof(int16_t));
    prep->step = PyMem_RawMalloc((size_t)runs * 2 * sizeof(float));
    prep->bytes = PyMem_RawMalloc((size_t)width * 2);
    prep->offsets = PyMem_RawMalloc((size_t)(width / piece) * sizeof(int32_t));
    prep->exponents = PyMem_RawMalloc((size_t)runs * sizeof(int32_t));
    int16_t *xq = prep->xq;
    float *step = prep->step;
    if (xq == NULL || step == NULL || prep->bytes == NULL || prep->offsets == NULL || prep->exponents == NULL ||
        !(coarse ? quantise_query_bytes(job->query, width, prep->bytes, xq, step, &prep->rounding)
                 : quantise_query(job->query, width, xq, step))) {
        prep->rounding = 0.0;
        return;
    }
    int highest = -1000;
    for (Py_ssize_t k = 0; k < runs; k++) {
        int exponent = 0;
        frexpf(step[k], &exponent); /* step = 2^(exponent - 1) (a free step: below 2^exponent) */
        highest = exponent - 1 > highest ? exponent - 1 : highest;
        prep->exponents[k] = (116 + exponent - 1) << 23;
    }
    for (Py_ssize_t k = 0; k < width / piece; k++) {
        int32_t sum = 0;
        for (Py_ssize_t j = 0; j < piece; j++)
            sum += xq[piece * k + j];
        prep->offsets[k] = (int32_t)offset * sum;
    }
    if (highest > FP4T_MAX_STEP_EXPONENT) {
        prep->rounding = 0.0;
        return;
    }
    if (!coarse)
        split_query(xq, step, width, prep->bytes, prep->bytes + width, NULL, 0, NULL);
    if (kind == KIND_IQ3_S || kind == KIND_IQ3_XXS)
        for (int half = 0; half < (coarse ? 1 : 2); half++)
            grid_query_order(prep->bytes + half * width, width, 4);
    job->high = prep->bytes, job->low = coarse ? NULL : prep->bytes + width, job->step = step;
    job->offsets = prep->offsets, job->exponents = prep->exponents, job->vbmi = fp4t_vbmi();
}

static void fp4t_query_free(struct fp4t_query *prep)
{
    PyMem_RawFree(prep->xq);
    PyMem_RawFree(prep->step);
    PyMem_RawFree(prep->bytes);
    PyMem_RawFree(prep->offsets);
    PyMem_RawFree(prep->exponents);
}

/* quant_scores for NVFP4, TQ1_0 and the IQ3s (its arguments checked): the groups against the integer query where
 * this build scans them, else every row in float64 (see the top).  ``coarse`` (TQ1_0, the IQ3s): against the query
 * in bytes, returning |x - x~| of the query it read (0.0 when it scored in float64). */
static PyObject *fp4t_scores(int kind, Py_buffer *rows, Py_buffer *query, Py_buffer *scale, Py_buffer *out,
                             Py_buffer *progress, int integer, Py_buffer *groups, Py_ssize_t count, Py_ssize_t width,
                             int coarse)
{
    if (groups->buf != NULL && groups->len != fp4t_groups_bytes(kind, count, width)) {
        PyErr_SetString(PyExc_ValueError, "groups must be copy_groups's copy of the rows");
        return NULL;
    }
    struct fp4t_job *job = PyMem_RawCalloc(1, sizeof *job);
    if (job == NULL)
        return PyErr_NoMemory();
    job->kind = kind, job->rows = rows->buf, job->groups = groups->buf, job->width = width;
    job->query = query->buf, job->scale = scale->buf, job->out = out->buf, job->far = far_copy(groups->len);
    struct fp4t_query prep;
    fp4t_query_prepare(job, &prep, integer, coarse);
    PyObject *result = share_chunks_released(fp4t_chunk, job, count, progress);
    if (result != NULL && coarse) {
        Py_DECREF(result);
        result = PyFloat_FromDouble(prep.rounding);
    }
    fp4t_query_free(&prep);
    PyMem_RawFree(job);
    return result;
}

static PyObject *fp4t_use_vbmi(PyObject *self, PyObject *args)
{
    int on;
    (void)self;
    if (!PyArg_ParseTuple(args, "p", &on))
        return NULL;
    fp4t_without_vbmi = !on;
    return PyBool_FromLong(fp4t_vbmi());
}

#endif
