/* IQ2_XXS, IQ2_XS, IQ2_S, IQ1_S and IQ1_M rows sixteen at a time: a copy made when the table opens
 * (instead of a bfloat16 copy, 2 bytes a number), and its AVX-512 VNNI scan (included by _quants.c
 * once, after quantise_query; iq_grids.h says what the numbers are).
 *
 * Stored, eight numbers share one grid index (8-11 bits) and a sign byte or index: reading them
 * means a lookup per eight numbers of each row.  Measured side by side on one core (GPT-2-shaped
 * IQ2_XXS, random blocks, load 1.3): a scan of the stored indices with a gather per 64 numbers
 * (vpgatherdd from the grid's bytes, 11.2 MB) 2.16 ms, a scan of these planes (16.0 MB) 1.47 ms,
 * one read of the 10.0 MB stored 0.72 ms.  So the grids are read out once, into planes of codes.
 *
 * IQ2_XXS and IQ2_XS are the exception (iq_indexed): a grid of 256 or 512 entries is two or four byte lookups of
 * 128 (vpermi2b) for each byte of codes, so their copies keep the stored grid indices (IQ2_XS's ninth bits as a
 * mask) and each number's sign as a bit (iq_index_copy_block: 1120 and 1248 bytes for 16 rows' 1056 and 1184
 * stored, against 1696 and 1824 as planes), and the scan looks the codes up as it goes (iq_index_run).  Each lane
 * of its registers is one row: its four bytes are the row's four indices of a run of 32, and the query's numbers
 * are put in the order that matches (iq_index_query_order), so no sums are moved between lanes, and the signs are
 * words of minus bits, not sign bytes gathered bit by bit (vpshufbitqmb) as until 7 December: measured in one
 * process against that (a Zen 4 EPYC, load 0.3-0.5), the same scores to the bit, one core's scan of GPT-2-shaped
 * rows in its cache IQ2_XXS 0.875 -> 0.812 ms, IQ2_XS 1.036 -> 0.994 ms; the whole table on two threads 0.434 ->
 * 0.372 and 0.564 -> 0.530 ms.  The scans alone, in one
 * process, the planes and the indices in turns (6 December, 20:15-20:40 UTC, a Zen 4 EPYC, load 0.6-1.1), two
 * threads: Qwen2-7B-sized IQ2_XXS 8.7-11.0 ms as planes, 6.8-7.6 ms as indices (one plain read of the stored
 * bytes 5.2-6.3 ms), IQ2_XS 10.9-11.5 against 9.2 ms (read 5.5-5.7 ms); GPT-2-shaped, from the cache, IQ2_XXS
 * 1.20-1.43 against 1.07-1.23 ms, IQ2_XS 0.71-1.02 against 0.59-1.06 ms.  IQ2_S's grid of 1,024 and IQ1's of
 * 2,048 would take 8-16 lookups a byte, so they keep the planes.
 *
 * A group of 16 rows, per block of 256 numbers (iq_group_block_bytes: IQ2_S 1824 bytes, IQ1_S 1184, IQ1_M 1248;
 * stored: 1312, 800, 896):
 *   half d[16]                    each row's float16 d, as stored (IQ1_M's put together)
 *   uint8 odd[256 / sub][16]      (IQ2) each scale's odd integer 2 ls + 1, for each row
 *   uint8 runs[8][16]             (IQ1) chunk c of row r: bit e says its run of 8 numbers e is -1/8 (the low
 *                                 nibble, as vpermd and vpermps read it), the high nibble the odd 2 s + 1 of
 *                                 the chunk's scale (IQ1_M: of its first 16 numbers)
 *   uint8 second[4][16]           (IQ1_M) chunks 2 i and 2 i + 1 of row r: the odd of their numbers 16-31, in
 *                                 the low and the high nibble (2 s + 1 is at most 15)
 *   uint8 grid[8][2][64]          per 32 numbers c and step t = 0..7 (numbers 32 c + 4 t .. + 3): bits
 *                                 2 (t % 4) of vector t / 4's bytes 4 r .. 4 r + 3 are row r's grid
 *                                 codes m (0-2); IQ2 puts each c's minus masks right after its grid:
 *   uint64 minus[8]               (IQ2) step t's bit 4 r + k: number 32 c + 4 t + k of row r is minus
 * Rows past the table's end are zeros (they score 0: their scale is not read).  IQ1's odd integers share
 * bytes with its minus runs, which a chunk reads together anyway: 64 (IQ1_S) or 128 (IQ1_M) bytes less a
 * block than a byte each, 5 % and 9 % of the copy the scan streams.
 *
 * The scan: per step, one gf2p8affineqb turns 64 bytes' bits 2u, 2u + 1 into 64 bytes (CODE_MATRIX):
 * IQ1's code m = g + 1 (0-2), IQ2's unsigned u = g + 43 (51-86), made 86 - u = 43 - g by one masked
 * subtraction where the minus bit is set.  vpdpbusd adds four bytes times the query's four into each
 * row's own lane, against xq = 256 high + low (split_query), as quants_groups.h does for Q4_K.  Measured
 * on one core, 2,048 GPT-2-shaped rows in the cache, against a shift, an and, a masked add and vpshufb a
 * step, IQ1's minus runs by a masked subtraction each and each 16 numbers weighed apart: IQ1_S 16.2 ->
 * 10.6 us, IQ1_M 16.5 -> 12.3, IQ2_XXS 17.1 -> 13.2, IQ2_XS 18.1 -> 14.6, IQ2_S 18.2 -> 14.5.
 *
 * Exactness.  Per scale (16 or 32 numbers) and row, U = 256 (u . high) + (u . low) is exact in int32 (|U|
 * <= 32 x 86 x 2^14 < 2^26).  IQ2: S = U - 43 Q, Q = sum xq over the scale's numbers (the same for every
 * row), is sum (+-g) xq exactly.  IQ1: S = 8 U - 7 Q, less 2 Q8 for each run of 8 whose delta is minus
 * (Q8: xq's sum over the run; the query's 16 sums a scale hold every choice of runs), is sum (8 g + 8
 * delta) xq exactly (all below 2^24).  The weight of a scale's numbers, d step / 8 times odd (step, a
 * power of two from 2^-100 to 2^86: quantise_query), is exact in float32: d step / 8 is a multiple of
 * 2^-127 with 11 significant bits, times odd (<= 31) 16 bits, below 2^104 (float32 holds multiples of
 * 2^-149).  So w S is, unrounded, sum_j v_j x~_j over the scale's numbers (x~ = step xq, v gguf's numbers:
 * iq_grids.h), and |w S| <= sum_j |v_j x~_j|.  In float32, S is rounded once when widened (IQ2's may pass
 * 2^24: 32 x 43 x 2^14), then one fused multiply-add adds w S into the row's lane, and the lane takes
 * width / 16 terms at most: each term goes through at most width / 16 + 2 roundings, fewer than the width that
 * gamma_width allows, and the sizes add up to sum_j |v_j x~_j| <= |v| |x~|.  This is the integer scan's
 * bound at the top of _quants.c with no spread and no rounding of the numbers, so StoredScreen.error_bound
 * holds as is.
 * A query quantise_query cannot take (huge or tiny numbers), and a build without VNNI, are scanned
 * in float32 from the stored blocks (rows_portable over iq_dequantise_block: the float bound,
 * smaller than this one).
 *
 * Against the query in bytes (coarse: a table's own search, StoredScreen.bounded_scores and bytes_search).
 * Against 256 high + low, half of the scan's instructions are the products with the low bytes; without them,
 * one vpdpbusd a step.  quantise_query_bytes holds x = step xq + e with |xq| <= 127 and a free step (the run's
 * largest over 127), and measures |e| for this query.  iq1_group_bytes takes S / 8 = U + T / 8 in float32, exact
 * (U = m . xq at most 32 x 2 x 127, T the minus runs' integer sum at most 9 x 32 x 127: a multiple of 1/8 below
 * 2^13).  Each term is then rounded by odd step (once), the fused multiply-add into its block's sum (once), that
 * sum's other terms (at most 15), the block's sum times d into the lane (once) and the lane's other blocks (width
 * / 256), each by 2^-24 of what it rounds: fewer than width roundings a term, so the sum is within gamma_width
 * sum_j |v_j x~_j| of v . x~, x~ = step xq (Higham 3.1).  IQ2 likewise (iq2_group_bytes): S = U - 43 Q exact in
 * int32 and float32 (U at most 86 x 32 x 127), odd step / 8 rounded once, the same chain after it.  And
 * |v . x~ - v . x| = |v . e| <= |v| |e|.  Divided by |v|: |e| + (1 + |e| / |x|) |x| times the float bound, what
 * StoredScreen._bound gives with |e| / |x| (rounded up) for the query's rounding.  Measured: |e| is 0.0016 |x| for
 * the GPT-2-shaped IQ1_S table's own rows as queries (a margin of 1.6e-3 against the 16-bit scan's 3.9e-4, 12-18
 * rows for the exact pass against 10-11), and its whole query takes 1.01x-1.09x of one read of the stored bytes
 * against 1.24x-1.40x (docs/benchmarks.md, 6 December).
 */
#ifndef EMBEDEXPLORER_QUANTS_IQ_H
#define EMBEDEXPLORER_QUANTS_IQ_H

static int iq_kind(int kind)
{
    return kind >= KIND_IQ2_XXS && kind <= KIND_IQ1_M;
}

/* IQ2_XXS and IQ2_XS keep their grid indices as stored in their copy (iq_index_copy_block): a grid of 256 or 512
 * entries is two or four byte lookups of 128 (vpermi2b) for each byte of codes, where IQ2_S's and IQ1's would
 * take 8-16. */
static int iq_indexed(int kind)
{
    return kind == KIND_IQ2_XXS || kind == KIND_IQ2_XS;
}

/* An indexed copy's bytes per 32 numbers of 16 rows: 64 grid indices' low bytes, eight words of minus bits, and
 * IQ2_XS's ninth bits. */
static Py_ssize_t iq_index_chunk_bytes(int kind)
{
    return 128 + (kind == KIND_IQ2_XS ? 8 : 0);
}

/* Bytes before the grid planes: d, then the odd integers (IQ2), or the runs' bytes and IQ1_M's second odds;
 * an indexed copy: d, then its ls (4 bits) as nibbles. */
static Py_ssize_t iq_header_bytes(int kind)
{
    if (iq_indexed(kind))
        return 2 * GROUP_ROWS + (256 / IQ_SUB[kind - IQ_FIRST_KIND]) / 2 * GROUP_ROWS;
    if (iq_is_one_bit(kind))
        return 2 * GROUP_ROWS + 8 * GROUP_ROWS + (kind == KIND_IQ1_M ? 4 * GROUP_ROWS : 0);
    return 2 * GROUP_ROWS + (256 / IQ_SUB[kind - IQ_FIRST_KIND]) * GROUP_ROWS;
}

/* The header, the grid planes, and per 32 numbers the minus masks (IQ2). */
static Py_ssize_t iq_group_block_bytes(int kind)
{
    if (iq_indexed(kind))
        return iq_header_bytes(kind) + 8 * iq_index_chunk_bytes(kind);
    return iq_header_bytes(kind) + 8 * 2 * 64 + (iq_is_one_bit(kind) ? 0 : 8 * 8 * 8);
}

/* Row r's eight numbers i (0-31) of an IQ2_XXS or IQ2_XS block: grid index and sign byte (the eighth sign the
 * parity: iq_signs). */
static ALWAYS_INLINE void iq_index_eight(int kind, const uint8_t *block, int i, unsigned *index, unsigned *signs)
{
    if (kind == KIND_IQ2_XXS) { /* per 32 numbers four grid bytes, then 4 x 7 sign bits and ls */
        *index = block[2 + 8 * (i / 4) + i % 4];
        *signs = iq_signs((iq_word(block + 2 + 8 * (i / 4) + 4, 4) >> (7 * (i % 4))) & 127u);
    } else { /* a word each: 9-bit grid index, 7 sign bits */
        uint32_t q = iq_word(block + 2 + 2 * i, 2);
        *index = q & 511u, *signs = iq_signs(q >> 9);
    }
}

/* Scale t (0 .. 256 / sub - 1) of an IQ2_XXS or IQ2_XS block: its ls, 0-15. */
static ALWAYS_INLINE unsigned iq_index_ls(int kind, const uint8_t *block, int t)
{
    if (kind == KIND_IQ2_XXS)
        return iq_word(block + 2 + 8 * t + 4, 4) >> 28;
    return (block[66 + t / 2] >> (4 * (t % 2))) & 15u;
}

/* An indexed kind's block b of a group of rows (present of them, row_bytes apart from the first's block b) into its
 * copy, zeros at first: d; scale t's ls of row r in nibble t % 2 of header byte 16 (t / 2) + r; then per run of 32
 * numbers c, iq_index_chunk_bytes: row r's four grid indices l (numbers 8 l .. 8 l + 7 of the run; their low byte)
 * at 4 r + l; eight words of minus bits, word t's bit 4 r + l saying number 8 l + t of row r is negative; IQ2_XS:
 * the indices' ninth bits, bit 4 r + l of a 64-bit word, as the index bytes lie. */
static void iq_index_copy_block(int kind, const uint8_t *first, Py_ssize_t row_bytes, int present, uint8_t *at)
{
    uint8_t *header = at + 2 * GROUP_ROWS;
    const int scales = 256 / IQ_SUB[kind - IQ_FIRST_KIND];
    for (int r = 0; r < present; r++) {
        const uint8_t *block = first + r * row_bytes;
        memcpy(at + 2 * r, block, 2);
        for (int t = 0; t < scales; t++)
            header[GROUP_ROWS * (t / 2) + r] |= (uint8_t)(iq_index_ls(kind, block, t) << (4 * (t % 2)));
        for (int c = 0; c < 8; c++) {
            uint8_t *chunk = at + iq_header_bytes(kind) + iq_index_chunk_bytes(kind) * c;
            for (int l = 0; l < 4; l++) {
                unsigned index, signs, bit = 4u * (unsigned)(r % 2) + (unsigned)l;
                iq_index_eight(kind, block, 4 * c + l, &index, &signs);
                chunk[4 * r + l] = (uint8_t)index;
                for (int t = 0; t < 8; t++)
                    chunk[64 + 8 * t + r / 2] |= (uint8_t)(((signs >> t) & 1u) << bit);
                if (index > 255u)
                    chunk[128 + r / 2] |= (uint8_t)(1u << bit);
            }
        }
    }
}

/* Rows start .. stop - 1 into their groups (start is a multiple of 16: CHUNK_ROWS is). */
static void iq_group_chunk(const void *job, Py_ssize_t start, Py_ssize_t stop)
{
    const struct kind_group_job *q = job;
    Py_ssize_t block_bytes = BLOCK_BYTES[q->kind], row_bytes = q->blocks * block_bytes;
    Py_ssize_t group_bytes = iq_group_block_bytes(q->kind), scales = 256 / IQ_SUB[q->kind - IQ_FIRST_KIND];
    if (stop == q->count)
        stop = (stop + GROUP_ROWS - 1) / GROUP_ROWS * GROUP_ROWS; /* the last group's missing rows: zeros */
    struct iq_block read;
    for (Py_ssize_t g = start / GROUP_ROWS; g * GROUP_ROWS < stop; g++)
        for (Py_ssize_t b = 0; b < q->blocks; b++) {
            uint8_t *at = q->groups + (g * q->blocks + b) * group_bytes;
            memset(at, 0, (size_t)group_bytes);
            if (iq_indexed(q->kind)) {
                Py_ssize_t present = q->count - g * GROUP_ROWS;
                iq_index_copy_block(q->kind, q->rows + g * GROUP_ROWS * row_bytes + b * block_bytes, row_bytes,
                                    present < GROUP_ROWS ? (int)present : GROUP_ROWS, at);
                continue;
            }
            uint8_t *header = at + 2 * GROUP_ROWS, *planes = at + iq_header_bytes(q->kind);
            int one_bit = iq_is_one_bit(q->kind);
            for (int r = 0; r < GROUP_ROWS && g * GROUP_ROWS + r < q->count; r++) {
                iq_decode(q->kind, q->rows + (g * GROUP_ROWS + r) * row_bytes + b * block_bytes, &read);
                memcpy(at + 2 * r, &read.d, 2);
                for (Py_ssize_t k = 0; k < scales; k++) {
                    if (!one_bit) /* IQ2: a byte each */
                        header[GROUP_ROWS * k + r] = read.odd[k];
                    else if (scales == 8 || k % 2 == 0) /* IQ1: the chunk's (first) scale, in its runs' byte */
                        header[GROUP_ROWS * (scales == 8 ? k : k / 2) + r] |= (uint8_t)(read.odd[k] << 4);
                    else /* IQ1_M's second scale of chunk k / 2 */
                        header[8 * GROUP_ROWS + GROUP_ROWS * (k / 4) + r] |=
                            (uint8_t)(read.odd[k] << (4 * (k / 2 % 2)));
                }
                for (int c = 0; c < 8; c++) {
                    uint8_t *chunk = planes + (one_bit ? 128 : 192) * c;
                    const uint8_t *code = read.code + 32 * c;
                    for (int v = 0; v < 2; v++) /* numbers 16 v + 4 u + k: step 4 v + u, bits 2 u */
                        for (int k = 0; k < 4; k++)
                            chunk[64 * v + 4 * r + k] =
                                (uint8_t)((code[16 * v + k] & 3) | (code[16 * v + 4 + k] & 3) << 2 |
                                          (code[16 * v + 8 + k] & 3) << 4 | (code[16 * v + 12 + k] & 3) << 6);
                    if (one_bit) { /* a run of 8 shares its delta: bit e of row r's runs byte for chunk c */
                        for (int e = 0; e < 4; e++)
                            header[GROUP_ROWS * c + r] |= (uint8_t)(((code[8 * e] >> 2) & 1u) << e);
                        continue;
                    }
                    for (int t = 0; t < 8; t++) { /* bits 4 r .. 4 r + 3 of step t's 64-bit mask */
                        unsigned nibble = 0;
                        for (int k = 0; k < 4; k++)
                            nibble |= ((code[4 * t + k] >> 2) & 1u) << k;
                        chunk[128 + 8 * t + r / 2] |= (uint8_t)(nibble << (4 * (r % 2)));
                    }
                }
            }
        }
}

struct iq_job {
    int kind;
    const uint8_t *groups, *rows;
    Py_ssize_t width;
    const float *query, *scale;
    float *out;
    const int8_t *high, *low;   /* NULL: the float scan of the stored rows */
    const int8_t *first;        /* IQ2_XS: high, then low, with each run's last 16 numbers 0 (iq_index_run) */
    const float *eighths;       /* each run of 32's step / 8 (exact: a power of two); against bytes, its step */
    const int32_t *offsets;     /* IQ2: 43 times the sum of xq over each 16 numbers, then over each 32 */
    const int32_t *minus_sums;  /* IQ1: each scale's 16 sums for the 16 ways its runs' deltas can go (against
                                 * bytes: each sum over 8 as a float32, in the same place) */
};

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
/* The matrix under which gf2p8affineqb turns bits 2u and 2u + 1 of each byte (a grid code m) into the
 * byte base ^ (m & 1 ? one : 0) ^ (m & 2 ? two : 0): output bit i is the parity of byte 7 - i and the
 * input, so byte 7 - i picks bit 2u where bit i of one is set and bit 2u + 1 where bit i of two is.
 * Any three bytes for m = 0, 1, 2 can be had this way (m = 3 never occurs), with no shift or mask. */
#define CODE_ROW(one, two, u, i)                                                                                \
    ((uint64_t)(((((one) >> (i)) & 1u) << (2 * (u))) | ((((two) >> (i)) & 1u) << (2 * (u) + 1))) << (8 * (7 - (i))))
#define CODE_MATRIX(one, two, u)                                                                                \
    (CODE_ROW(one, two, u, 0) | CODE_ROW(one, two, u, 1) | CODE_ROW(one, two, u, 2) | CODE_ROW(one, two, u, 3) | \
     CODE_ROW(one, two, u, 4) | CODE_ROW(one, two, u, 5) | CODE_ROW(one, two, u, 6) | CODE_ROW(one, two, u, 7))
#define CODE_MATRICES(one, two) \
    {CODE_MATRIX(one, two, 0), CODE_MATRIX(one, two, 1), CODE_MATRIX(one, two, 2), CODE_MATRIX(one, two, 3)}

/* IQ1: m itself.  IQ2: u = g + 43 for the grid's g = 8, 25, 43 (51, 68, 86); a minus sign makes it
 * 43 - g = 86 - u (iq_group_vnni). */
static const uint64_t IQ1_CODES[4] = CODE_MATRICES(1, 2);
static const uint64_t IQ2_PLUS[4] = CODE_MATRICES(51 ^ 68, 51 ^ 86);

/* Sixteen rows' four products, against four bytes of the query broadcast (quants_groups.h's). */
#define IQ_DOT(sum, u, bytes) _mm512_dpbusd_epi32((sum), (u), four_bytes(bytes))

/* One group's scores of IQ2_S's planes (a scale per 16 numbers), before the rows' scales. */
VNNI_TARGET static ALWAYS_INLINE __m512 iq_group_vnni(const uint8_t *group, Py_ssize_t blocks, Py_ssize_t group_bytes,
                                                       const int8_t *high, const int8_t *low,
                                                       const float *eighths, const int32_t *sixteens)
{
    const __m512i eighty_six = _mm512_set1_epi8(86);
    __m512 acc = _mm512_setzero_ps();
    for (Py_ssize_t b = 0; b < blocks; b++) {
        const uint8_t *at = group + b * group_bytes;
        const __m512 d = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)at));
        const uint8_t *odd = at + 2 * GROUP_ROWS, *planes = odd + 16 * GROUP_ROWS;
        for (int c = 0; c < 8; c++) {
            prefetch_part(at + GROUPS_PREFETCH_BYTES, group_bytes, c, 8); /* ahead: scan_common.h */
            const uint8_t *chunk = planes + 192 * c;
            __m512i sums[2][2]; /* numbers 0-15 and 16-31 of the chunk: u . high, u . low */
            for (int v = 0; v < 2; v++) {
                __m512i grid = _mm512_loadu_si512((const void *)(chunk + 64 * v)), h = _mm512_setzero_si512(), l = h;
                for (int u = 0; u < 4; u++) {
                    int t = 4 * v + u;
                    uint64_t minus;
                    memcpy(&minus, chunk + 128 + 8 * t, 8);
                    __m512i bytes = _mm512_gf2p8affine_epi64_epi8(grid, _mm512_set1_epi64((long long)IQ2_PLUS[u]), 51);
                    bytes = _mm512_mask_sub_epi8(bytes, _cvtu64_mask64(minus), eighty_six, bytes); /* 43 - g */
                    Py_ssize_t j = 256 * b + 32 * c + 4 * t;
                    h = IQ_DOT(h, bytes, high + j);
                    l = IQ_DOT(l, bytes, low + j);
                }
                sums[v][0] = h, sums[v][1] = l;
            }
            Py_ssize_t k = 8 * b + c; /* the query's run of 32 */
            const __m512 d_step = _mm512_mul_ps(d, _mm512_set1_ps(eighths[k]));
            for (int v = 0; v < 2; v++) {
                __m512i s = _mm512_sub_epi32(_mm512_add_epi32(_mm512_slli_epi32(sums[v][0], 8), sums[v][1]),
                                             _mm512_set1_epi32(sixteens[2 * k + v]));
                __m512 weight = _mm512_mul_ps(six_bit(odd + GROUP_ROWS * (2 * c + v)), d_step);
                acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s), weight, acc);
            }
        }
    }
    return acc;
}

/* Chunk c's odd integers for its numbers 16 v .. 16 v + 15, one a row: the high nibble of its runs' bytes (v 0, or
 * IQ1_S's one scale), or IQ1_M's second odds, chunks 2 i and 2 i + 1 in one byte's low and high nibble. */
VNNI_TARGET static ALWAYS_INLINE __m512i iq1_odd(const uint8_t *header, __m512i runs, int c, int v)
{
    if (v == 0)
        return _mm512_srli_epi32(runs, 4);
    const uint8_t *second = header + 8 * GROUP_ROWS + GROUP_ROWS * (c / 2);
    __m512i pair = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)second));
    return c % 2 ? _mm512_srli_epi32(pair, 4) : _mm512_and_si512(pair, _mm512_set1_epi32(15));
}

/* One group's scores for IQ1_S (sub 32) or IQ1_M (sub 16): the grid codes m = g + 1 themselves are the
 * bytes, and a scale's S = sum (8 g + 8 delta) xq = 8 sum m xq - 7 Q - sum of 2 Q8 over its runs of 8
 * whose delta is minus (Q, Q8: xq's sum over the scale's numbers, over the run).  The last two terms
 * depend on the row only through which of the chunk's four runs are minus: a 4-bit index (each row's
 * nibble) into the query's 16 sums for the scale, looked up for 16 rows by one vpermd. */
VNNI_TARGET static ALWAYS_INLINE __m512 iq1_group_vnni(const uint8_t *group, Py_ssize_t blocks, Py_ssize_t group_bytes,
                                                        const int sub, const int8_t *high, const int8_t *low,
                                                        const float *eighths, const int32_t *minus_sums)
{
    __m512 acc = _mm512_setzero_ps();
    for (Py_ssize_t b = 0; b < blocks; b++) {
        const uint8_t *at = group + b * group_bytes;
        const __m512 d = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)at));
        const uint8_t *header = at + 2 * GROUP_ROWS;
        const uint8_t *planes = at + iq_header_bytes(sub == 32 ? KIND_IQ1_S : KIND_IQ1_M);
        for (int c = 0; c < 8; c++) {
            prefetch_part(at + GROUPS_PREFETCH_BYTES, group_bytes, c, 8); /* ahead: scan_common.h */
            Py_ssize_t k = 8 * b + c; /* the query's run of 32 */
            __m512i sums[2][2]; /* numbers 0-15 and 16-31 of the chunk: m . high, m . low */
            for (int v = 0; v < 2; v++) {
                __m512i grid = _mm512_loadu_si512((const void *)(planes + 128 * c + 64 * v));
                __m512i h = _mm512_setzero_si512(), l = h;
                for (int u = 0; u < 4; u++) {
                    __m512i m = _mm512_gf2p8affine_epi64_epi8(grid, _mm512_set1_epi64((long long)IQ1_CODES[u]), 0);
                    Py_ssize_t j = 256 * b + 32 * c + 16 * v + 4 * u;
                    h = IQ_DOT(h, m, high + j);
                    l = IQ_DOT(l, m, low + j);
                }
                sums[v][0] = h, sums[v][1] = l;
            }
            /* vpermd reads the low 4 bits of each lane (the minus runs), the high nibble is the chunk's odd */
            __m512i runs = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(header + GROUP_ROWS * c)));
            const __m512 d_step = _mm512_mul_ps(d, _mm512_set1_ps(eighths[k]));
            for (int v = 0; v < 32 / sub; v++) {
                __m512i h = sub == 32 ? _mm512_add_epi32(sums[0][0], sums[1][0]) : sums[v][0];
                __m512i l = sub == 32 ? _mm512_add_epi32(sums[0][1], sums[1][1]) : sums[v][1];
                const int32_t *sums16 = minus_sums + (sub == 32 ? 16 * k : 32 * k + 16 * v);
                __m512i s = _mm512_add_epi32(_mm512_add_epi32(_mm512_slli_epi32(h, 11), _mm512_slli_epi32(l, 3)),
                                             _mm512_permutexvar_epi32(runs, _mm512_loadu_si512((const void *)sums16)));
                __m512 weight = _mm512_mul_ps(_mm512_cvtepi32_ps(iq1_odd(header, runs, c, v)), d_step);
                acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s), weight, acc);
            }
        }
    }
    return acc;
}

/* iq_group_vnni against the query in bytes (the coarse scan): one vpdpbusd a step, and per scale S = U - 43 Q in
 * int32 (U = u . xq at most 86 x 32 x 127: exact in float32), times odd step / 8 (rounded once), added into the
 * block's sum; the block's sum times d into the row's lane.  Lines asked for ahead as iq1_group_bytes's. */
VNNI_TARGET static ALWAYS_INLINE __m512 iq2_group_bytes(const uint8_t *group, Py_ssize_t blocks, Py_ssize_t group_bytes,
                                                         const int8_t *xq, const float *eighths,
                                                         const int32_t *sixteens)
{
    const __m512i eighty_six = _mm512_set1_epi8(86);
    __m512 acc = _mm512_setzero_ps();
    for (Py_ssize_t b = 0; b < blocks; b++) {
        const uint8_t *at = group + b * group_bytes;
        const __m512 d = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)at));
        const uint8_t *odd = at + 2 * GROUP_ROWS, *planes = odd + 16 * GROUP_ROWS;
        __m512 block = _mm512_setzero_ps();
        for (int c = 0; c < 8; c++) {
            prefetch_part(at + GROUPS_PREFETCH_BYTES, group_bytes, c, 8); /* ahead: scan_common.h */
            const uint8_t *chunk = planes + 192 * c;
            __m512i sums[2] = {_mm512_setzero_si512(), _mm512_setzero_si512()}; /* numbers 0-15, 16-31: u . xq */
            for (int v = 0; v < 2; v++) {
                __m512i grid = _mm512_loadu_si512((const void *)(chunk + 64 * v));
                for (int u = 0; u < 4; u++) {
                    int t = 4 * v + u;
                    uint64_t minus;
                    memcpy(&minus, chunk + 128 + 8 * t, 8);
                    __m512i bytes = _mm512_gf2p8affine_epi64_epi8(grid, _mm512_set1_epi64((long long)IQ2_PLUS[u]), 51);
                    bytes = _mm512_mask_sub_epi8(bytes, _cvtu64_mask64(minus), eighty_six, bytes); /* 43 - g */
                    sums[v] = IQ_DOT(sums[v], bytes, xq + 256 * b + 32 * c + 4 * t);
                }
            }
            Py_ssize_t k = 8 * b + c; /* the query's run of 32 */
            const __m512 step = _mm512_set1_ps(eighths[k]);
            for (int v = 0; v < 2; v++) {
                __m512i s = _mm512_sub_epi32(sums[v], _mm512_set1_epi32(sixteens[2 * k + v]));
                __m512 weight = _mm512_mul_ps(six_bit(odd + GROUP_ROWS * (2 * c + v)), step);
                block = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s), weight, block);
            }
        }
        acc = _mm512_fmadd_ps(block, d, acc);
    }
    return acc;
}

/* iq1_group_vnni against the query in bytes (the coarse scan): one vpdpbusd a step, and per scale S / 8 = U + T / 8
 * in float32 (U = m . xq, T the minus runs' sum: -7 Q less 2 Q8 of each minus run, looked up by vpermps from the
 * query's table of T / 8), exact there (a multiple of 1/8 below 2^13 in size), times odd step (rounded once),
 * added into the block's sum; the block's sum times d into the row's lane.  Lines are asked for ahead as in the
 * 16-bit scan: on a table in the cache it makes no difference (GPT-2-shaped IQ1_S, one process, queries with and
 * without in turns: 0.93x and 0.92x of the read), on one streamed from memory it does (Qwen2-7B-sized IQ1_S 1.17x
 * against 1.23x, IQ1_M 1.18x against 1.47x, IQ2_XXS 1.32x against 1.40x). */
VNNI_TARGET static ALWAYS_INLINE __m512 iq1_group_bytes(const uint8_t *group, Py_ssize_t blocks, Py_ssize_t group_bytes,
                                                         const int sub, const int8_t *xq, const float *steps,
                                                         const float *minus_eighths)
{
    __m512 acc = _mm512_setzero_ps();
    for (Py_ssize_t b = 0; b < blocks; b++) {
        const uint8_t *at = group + b * group_bytes;
        const __m512 d = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)at));
        const uint8_t *header = at + 2 * GROUP_ROWS;
        const uint8_t *planes = at + iq_header_bytes(sub == 32 ? KIND_IQ1_S : KIND_IQ1_M);
        __m512 block = _mm512_setzero_ps();
        for (int c = 0; c < 8; c++) {
            prefetch_part(at + GROUPS_PREFETCH_BYTES, group_bytes, c, 8); /* ahead: scan_common.h */
            Py_ssize_t k = 8 * b + c; /* the query's run of 32 */
            __m512i sums[2] = {_mm512_setzero_si512(), _mm512_setzero_si512()}; /* numbers 0-15, 16-31: m . xq */
            for (int v = 0; v < 2; v++) {
                __m512i grid = _mm512_loadu_si512((const void *)(planes + 128 * c + 64 * v));
                for (int u = 0; u < 4; u++) {
                    __m512i m = _mm512_gf2p8affine_epi64_epi8(grid, _mm512_set1_epi64((long long)IQ1_CODES[u]), 0);
                    sums[v] = IQ_DOT(sums[v], m, xq + 256 * b + 32 * c + 16 * v + 4 * u);
                }
            }
            if (sub == 32) /* a 32-number scale: both halves (two chains of sums, not one twice as long) */
                sums[0] = _mm512_add_epi32(sums[0], sums[1]);
            /* vpermps reads the low 4 bits of each lane (the minus runs), the high nibble is the chunk's odd */
            __m512i runs = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(header + GROUP_ROWS * c)));
            const __m512 step = _mm512_set1_ps(steps[k]);
            for (int v = 0; v < 32 / sub; v++) {
                const float *table = minus_eighths + (sub == 32 ? 16 * k : 32 * k + 16 * v);
                __m512 minus = _mm512_permutexvar_ps(runs, _mm512_loadu_ps(table));
                __m512 s = _mm512_add_ps(_mm512_cvtepi32_ps(sums[v]), minus);
                __m512 weight = _mm512_mul_ps(_mm512_cvtepi32_ps(iq1_odd(header, runs, c, v)), step);
                block = _mm512_fmadd_ps(s, weight, block);
            }
        }
        acc = _mm512_fmadd_ps(block, d, acc);
    }
    return acc;
}

/* The indexed copies' scan needs VBMI's byte lookups too (vnni_scan asks for them). */
#define IQ_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,avx512vbmi,gfni,f16c,fma")))

/* An indexed kind's grid as vpermi2b tables, per kind (IQ2_XXS, IQ2_XS): each entry's low byte of codes (its numbers
 * 0-3) in codes[0], its high byte (numbers 4-7) in codes[1], 128 entries a pair of registers (IQ2_XXS fills four of
 * the eight).  Made once, when the module loads (iq_fill_index_tables), not by every chunk of every query. */
static uint8_t IQ2_INDEX_CODES[2][2][512];

static void iq_fill_index_tables(void)
{
    for (int s = 0; s < 2; s++) /* 0: IQ2_XXS, 1: IQ2_XS */
        for (int i = 0; i < (s ? 512 : 256); i++) {
            uint16_t word = s ? IQ2XS_GRID[i] : IQ2XXS_GRID[i];
            IQ2_INDEX_CODES[s][0][i] = (uint8_t)word, IQ2_INDEX_CODES[s][1][i] = (uint8_t)(word >> 8);
        }
}

/* Those tables in registers, and the odd integers 2 ls + 1 as float32 for vpermps, which reads the low four bits of
 * each lane (a nibble ls). */
struct iq_grid_tables {
    __m512i low[8], high[8];
    __m512 odd;
};

IQ_TARGET static ALWAYS_INLINE void iq_index_tables(int kind, struct iq_grid_tables *tables)
{
    static const float odd[16] = {1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31};
    int s = kind == KIND_IQ2_XS;
    for (int t = 0; t < 8; t++)
        tables->low[t] = _mm512_loadu_si512((const void *)(IQ2_INDEX_CODES[s][0] + 64 * t)),
        tables->high[t] = _mm512_loadu_si512((const void *)(IQ2_INDEX_CODES[s][1] + 64 * t));
    tables->odd = _mm512_loadu_ps(odd);
}

/* Sums of one run of 32 numbers of 16 rows, a lane a row: u . high and u . low over the run (all) and, for IQ2_XS,
 * over its first 16 numbers (first); with low NULL only the high ones (the query in bytes). */
struct iq_run_sums {
    __m512i all_high[2], all_low, first_high, first_low;
};

/* One run's sums from an indexed copy (iq_index_copy_block): its 64 indices' codes looked up (grid_byte_lookup), then
 * for number t = 0..7 of every index its bytes u = g + 43 (gf2p8affineqb from the codes' bits 2 (t % 4)), made
 * 43 - g where the word of minus bits t says so, and one vpdpbusd against the query's numbers t, 8 + t, 16 + t,
 * 24 + t (iq_index_query_order's bytes 4 t .. 4 t + 3), each lane's four bytes being its row's four indices.
 * IQ2_XS's scale of 16 numbers is two indices, half a lane: a second vpdpbusd against the same bytes of a query
 * whose last two indices' numbers are zeros (first: the first scale's sums; the second's are all less first). */
IQ_TARGET static ALWAYS_INLINE void iq_index_run(int kind, const uint8_t *chunk, const struct iq_grid_tables *tables,
                                                  const int8_t *high, const int8_t *low, const int8_t *first_high,
                                                  const int8_t *first_low, struct iq_run_sums *sums)
{
    const int large = kind == KIND_IQ2_XS;
    __m512i index = _mm512_loadu_si512((const void *)chunk);
    __mmask64 top = _mm512_movepi8_mask(index), ninth = 0;
    if (large) {
        uint64_t bits;
        memcpy(&bits, chunk + 128, sizeof bits);
        ninth = _cvtu64_mask64(bits);
    }
    __m512i codes[2] = {grid_byte_lookup(tables->low, index, top, ninth, large),
                        grid_byte_lookup(tables->high, index, top, ninth, large)};
    for (int t = 0; t < 8; t++) {
        uint64_t minus;
        memcpy(&minus, chunk + 64 + 8 * t, sizeof minus);
        __m512i bytes = _mm512_gf2p8affine_epi64_epi8(codes[t / 4], _mm512_set1_epi64((long long)IQ2_PLUS[t % 4]), 51);
        bytes = _mm512_mask_sub_epi8(bytes, _cvtu64_mask64(minus), _mm512_set1_epi8(86), bytes); /* 43 - g */
        /* two chains where nothing else breaks the one: XXS's four numbers of each index apart */
        __m512i *high_sum = large ? &sums->all_high[0] : &sums->all_high[t % 2];
        *high_sum = _mm512_dpbusd_epi32(*high_sum, bytes, four_bytes(high + 4 * t));
        if (low != NULL)
            sums->all_low = _mm512_dpbusd_epi32(sums->all_low, bytes, four_bytes(low + 4 * t));
        if (large)
            sums->first_high = _mm512_dpbusd_epi32(sums->first_high, bytes, four_bytes(first_high + 4 * t));
        if (large && low != NULL)
            sums->first_low = _mm512_dpbusd_epi32(sums->first_low, bytes, four_bytes(first_low + 4 * t));
    }
}

/* One group's scores from an indexed copy: iq_group_vnni's sums against xq = 256 high + low, or with low NULL
 * iq2_group_bytes's against the query in bytes (one vpdpbusd a number of 16 rows: IQ2_XS's two); the same integer
 * sums per scale (exact in int32) and the same roundings after them, in the same order.  Inlined with kind and
 * low's NULL as constants: each case its own code.  ``first``: IQ2_XS's query with each run's last 16 numbers 0. */
IQ_TARGET static ALWAYS_INLINE __m512 iq_index_group(int kind, const uint8_t *group, Py_ssize_t blocks,
                                                      const int8_t *high, const int8_t *low, const int8_t *first,
                                                      const float *eighths, const int32_t *sixteens,
                                                      const int32_t *thirty_twos, const struct iq_grid_tables *tables,
                                                      Py_ssize_t width)
{
    const Py_ssize_t group_bytes = iq_group_block_bytes(kind), chunk_bytes = iq_index_chunk_bytes(kind);
    const int large = kind == KIND_IQ2_XS;
    __m512 acc = _mm512_setzero_ps();
    for (Py_ssize_t b = 0; b < blocks; b++) {
        const uint8_t *at = group + b * group_bytes;
        const __m512 d = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)at));
        const uint8_t *header = at + 2 * GROUP_ROWS, *chunks = at + iq_header_bytes(kind);
        __m512 block = _mm512_setzero_ps(); /* against bytes: the block's sum, times d once */
        for (int c = 0; c < 8; c++) {
            prefetch_part(at + GROUPS_PREFETCH_BYTES, group_bytes, c, 8); /* ahead: scan_common.h */
            Py_ssize_t j = 256 * b + 32 * c, k = 8 * b + c;
            struct iq_run_sums sums = {{_mm512_setzero_si512(), _mm512_setzero_si512()}, _mm512_setzero_si512(),
                                       _mm512_setzero_si512(), _mm512_setzero_si512()};
            iq_index_run(kind, chunks + chunk_bytes * c, tables, high + j, low == NULL ? NULL : low + j,
                         large ? first + j : NULL, large && low != NULL ? first + width + j : NULL, &sums);
            __m512i all = _mm512_add_epi32(sums.all_high[0], sums.all_high[1]);
            if (low != NULL) /* 256 (u . high) + u . low */
                all = _mm512_add_epi32(_mm512_slli_epi32(all, 8), sums.all_low);
            const uint8_t *ls_at = header + GROUP_ROWS * (large ? c : c / 2); /* the run's scales' nibbles */
            __m512i ls = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)ls_at));
            const __m512 step = _mm512_set1_ps(eighths[k]);
            for (int v = 0; v < (large ? 2 : 1); v++) { /* S = u . xq - 43 Q, or 256 (u . high) + u . low - 43 Q */
                __m512i u = all;
                if (large) {
                    __m512i part = sums.first_high;
                    if (low != NULL)
                        part = _mm512_add_epi32(_mm512_slli_epi32(part, 8), sums.first_low);
                    u = v == 0 ? part : _mm512_sub_epi32(all, part);
                }
                __m512i s = _mm512_sub_epi32(u, _mm512_set1_epi32(large ? sixteens[2 * k + v] : thirty_twos[k]));
                int t = large ? 2 * c + v : c; /* the scale: nibble t % 2 of its rows' header bytes */
                __m512 odd = _mm512_permutexvar_ps(t % 2 ? _mm512_srli_epi32(ls, 4) : ls, tables->odd);
                if (low != NULL)
                    acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s), _mm512_mul_ps(odd, _mm512_mul_ps(d, step)), acc);
                else
                    block = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s), _mm512_mul_ps(odd, step), block);
            }
        }
        if (low == NULL)
            acc = _mm512_fmadd_ps(block, d, acc);
    }
    return acc;
}

IQ_TARGET static void iq_groups_vnni(const struct iq_job *q, Py_ssize_t start, Py_ssize_t stop)
{
    Py_ssize_t blocks = q->width / 256, group_bytes = iq_group_block_bytes(q->kind);
    const int32_t *sixteens = q->offsets, *thirty_twos = q->offsets + q->width / 16;
    struct iq_grid_tables tables;
    if (iq_indexed(q->kind))
        iq_index_tables(q->kind, &tables);
    for (Py_ssize_t g = start / GROUP_ROWS; g * GROUP_ROWS < stop; g++) {
        const uint8_t *group = q->groups + g * blocks * group_bytes;
        __m512 acc;
        if (q->kind == KIND_IQ2_XXS && q->low == NULL) /* a call each: kind and low constants where inlined */
            acc = iq_index_group(KIND_IQ2_XXS, group, blocks, q->high, NULL, NULL, q->eighths, sixteens, thirty_twos,
                                 &tables, q->width);
        else if (q->kind == KIND_IQ2_XXS)
            acc = iq_index_group(KIND_IQ2_XXS, group, blocks, q->high, q->low, NULL, q->eighths, sixteens, thirty_twos,
                                 &tables, q->width);
        else if (q->kind == KIND_IQ2_XS && q->low == NULL)
            acc = iq_index_group(KIND_IQ2_XS, group, blocks, q->high, NULL, q->first, q->eighths, sixteens,
                                 thirty_twos, &tables, q->width);
        else if (q->kind == KIND_IQ2_XS)
            acc = iq_index_group(KIND_IQ2_XS, group, blocks, q->high, q->low, q->first, q->eighths, sixteens,
                                 thirty_twos, &tables, q->width);
        else if (q->kind == KIND_IQ1_S && q->low == NULL)
            acc = iq1_group_bytes(group, blocks, group_bytes, 32, q->high, q->eighths, (const float *)q->minus_sums);
        else if (q->kind == KIND_IQ1_S)
            acc = iq1_group_vnni(group, blocks, group_bytes, 32, q->high, q->low, q->eighths, q->minus_sums);
        else if (q->kind == KIND_IQ1_M && q->low == NULL)
            acc = iq1_group_bytes(group, blocks, group_bytes, 16, q->high, q->eighths, (const float *)q->minus_sums);
        else if (q->kind == KIND_IQ1_M)
            acc = iq1_group_vnni(group, blocks, group_bytes, 16, q->high, q->low, q->eighths, q->minus_sums);
        else if (q->low == NULL) /* IQ2_S */
            acc = iq2_group_bytes(group, blocks, group_bytes, q->high, q->eighths, sixteens);
        else
            acc = iq_group_vnni(group, blocks, group_bytes, q->high, q->low, q->eighths, sixteens);
        store_group_scores(acc, q->scale, q->out, g * 16, stop);
    }
}
#endif

static void iq_chunk(const void *job, Py_ssize_t start, Py_ssize_t stop)
{
    const struct iq_job *q = job;
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
    if (q->high != NULL) {
        iq_groups_vnni(q, start, stop);
        return;
    }
#endif
    Py_ssize_t row_bytes = q->width / 256 * BLOCK_BYTES[q->kind];
    rows_portable(q->kind, q->rows, row_bytes, q->query, q->scale, q->out, start, stop, q->width);
}

/* The query's copies the groups' scan reads (iq_query_prepare), held until iq_query_free. */
struct iq_query {
    int16_t *xq;
    float *step;
    int8_t *bytes, *first;
    int32_t *terms;
    double rounding; /* |x - x~| of the query the scan reads (coarse: its bytes; 0: scanned in float32) */
};

/* The query's bytes in the order an indexed copy's scan reads them (grid_query_order, 8 numbers an index:
 * iq_index_run's lanes).  ``first`` (IQ2_XS): the same with each run's numbers 16-31 (its last two indices') as 0,
 * the first scale's alone. */
static void iq_index_query_order(int8_t *bytes, int8_t *first, Py_ssize_t width)
{
    grid_query_order(bytes, width, 8);
    if (first != NULL)
        for (Py_ssize_t at = 0; at < width; at++)
            first[at] = at % 4 < 2 ? bytes[at] : 0;
}

/* Fill job's query fields for the groups' scan: the query as 16-bit integers split in two bytes, or with
 * ``coarse`` as signed bytes whose rounding it measures; the minus runs' or IQ2's offsets; each run of 32's
 * step / 8 (IQ1 against bytes: its step, and the minus runs' sums over 8 in float32).  Where the integer scan
 * cannot run (no VNNI, a query either quantiser cannot take, no memory), job->high stays NULL: the float scan of
 * the stored rows. */
static void iq_query_prepare(struct iq_job *job, struct iq_query *prep, const float *query, int coarse)
{
    Py_ssize_t width = job->width;
    int kind = job->kind;
    *prep = (struct iq_query){NULL, NULL, NULL, NULL, NULL, 0.0};
    if (!integer_scan || !vnni_scan)
        return;
    prep->xq = PyMem_RawMalloc((size_t)width * sizeof(int16_t));
    prep->step = PyMem_RawMalloc((size_t)(width / 32) * 2 * sizeof(float));
    prep->bytes = PyMem_RawMalloc((size_t)width * 2);
    prep->first = kind == KIND_IQ2_XS ? PyMem_RawMalloc((size_t)width * 2) : NULL;
    /* Read straight into the scan's instructions, not moved from an integer register to a vector for
     * each 32 numbers: IQ2's offsets, 43 times xq's sum over each 16 numbers then each 32; IQ1's 16
     * sums a scale (iq1_group_vnni); then each run of 32's step / 8. */
    prep->terms = PyMem_RawMalloc((size_t)(width / 16 + width / 32 + width + width / 32) * sizeof(int32_t));
    int16_t *xq = prep->xq;
    float *step = prep->step;
    int8_t *bytes = prep->bytes;
    int first_missing = kind == KIND_IQ2_XS && prep->first == NULL;
    if (xq == NULL || step == NULL || bytes == NULL || prep->terms == NULL || first_missing ||
        !(coarse ? quantise_query_bytes(query, width, bytes, xq, step, &prep->rounding)
                 : quantise_query(query, width, xq, step))) {
        prep->rounding = 0.0;
        return;
    }
    if (!coarse)
        split_query(xq, step, width, bytes, bytes + width, NULL, 0, NULL);
    if (iq_indexed(kind))
        for (int half = 0; half < (coarse ? 1 : 2); half++)
            iq_index_query_order(bytes + half * width, kind == KIND_IQ2_XS ? prep->first + half * width : NULL, width);
    int32_t *offsets = prep->terms, *minus_sums = prep->terms + width / 16 + width / 32;
    float *eighths = (float *)(minus_sums + width);
    int one_bit = iq_is_one_bit(kind), sub = IQ_SUB[kind - IQ_FIRST_KIND];
    for (Py_ssize_t k = 0; k < width / 32; k++) {
        int32_t eight[4] = {0, 0, 0, 0}; /* xq's sums over the run's four runs of 8 (|.| <= 2^17) */
        for (int i = 0; i < 32; i++)
            eight[i / 8] += xq[32 * k + i];
        int32_t first = eight[0] + eight[1], second = eight[2] + eight[3];
        if (!one_bit) { /* 43 times a sum over 32 numbers, |.| <= 43 x 2^19 < 2^25, fits in int32 */
            offsets[2 * k] = 43 * first, offsets[2 * k + 1] = 43 * second;
            offsets[width / 16 + k] = 43 * (first + second);
            continue;
        }
        /* bit e of p: run e's delta is minus.  Each sum is that of p without its lowest bit e, less
         * 2 Q8 of run e where the sum's numbers hold run e (IQ1_M: runs 0-1 for its first 16). */
        int32_t *sums = minus_sums + (sub == 32 ? 16 : 32) * k;
        for (int half = 0; half < 32 / sub; half++) {
            int32_t *table = sums + 16 * half;
            table[0] = -7 * (sub == 32 ? first + second : half ? second : first);
            for (int p = 1; p < 16; p++) {
                int lowest = p & -p, e = lowest == 1 ? 0 : lowest == 2 ? 1 : lowest == 4 ? 2 : 3;
                table[p] = table[p & (p - 1)] - (sub == 32 || e / 2 == half ? 2 * eight[e] : 0);
            }
        }
    }
    for (Py_ssize_t k = 0; k < width / 32; k++)
        eighths[k] = coarse && one_bit ? step[k] : step[k] * 0.125f; /* iq1_group_bytes weighs S / 8 */
    if (coarse && one_bit) /* the minus runs' sums as T / 8 in float32 (exact: integers below 2^17 over 8) */
        for (Py_ssize_t i = 0; i < (sub == 32 ? 16 : 32) * (width / 32); i++) {
            float eighth = (float)minus_sums[i] * 0.125f;
            memcpy(minus_sums + i, &eighth, sizeof eighth);
        }
    job->high = bytes, job->low = coarse ? NULL : bytes + width, job->eighths = eighths, job->offsets = offsets;
    job->first = prep->first;
    job->minus_sums = minus_sums;
}

static void iq_query_free(struct iq_query *prep)
{
    PyMem_RawFree(prep->xq);
    PyMem_RawFree(prep->step);
    PyMem_RawFree(prep->bytes);
    PyMem_RawFree(prep->first);
    PyMem_RawFree(prep->terms);
}

/* What iq_scores and bytes_search check of their buffers; 0 with a ValueError set when they do not fit. */
static int iq_buffers_fit(int kind, Py_ssize_t query_len, Py_ssize_t rows_len, Py_ssize_t groups_len,
                          Py_ssize_t scale_len, Py_ssize_t count)
{
    Py_ssize_t width = query_len / (Py_ssize_t)sizeof(float);
    if (!iq_kind(kind) || width == 0 || width % 256 != 0 || query_len % (Py_ssize_t)sizeof(float) != 0) {
        PyErr_SetString(PyExc_ValueError, "kind must be an IQ1/IQ2 kind and the query whole blocks of float32");
    } else if (rows_len != count * (width / 256) * BLOCK_BYTES[kind] ||
               groups_len != (count + GROUP_ROWS - 1) / GROUP_ROWS * (width / 256) * iq_group_block_bytes(kind)) {
        PyErr_SetString(PyExc_ValueError, "rows and groups must hold len(out) rows of len(query) numbers");
    } else if (scale_len != count * (Py_ssize_t)sizeof(float)) {
        PyErr_SetString(PyExc_ValueError, "scale must hold one float32 per row");
    } else {
        return 1;
    }
    return 0;
}

static PyObject *iq_scores(PyObject *self, PyObject *args)
{
    Py_buffer groups, rows, query, scale, out, progress;
    int kind, coarse = 0;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*y*iy*y*w*w*|p", &groups, &rows, &kind, &query, &scale, &out, &progress, &coarse))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t width = query.len / (Py_ssize_t)sizeof(float), count = out.len / (Py_ssize_t)sizeof(float);
    if (iq_buffers_fit(kind, query.len, rows.len, groups.len, scale.len, count) &&
        out.len % (Py_ssize_t)sizeof(float) == 0 && check_progress(&progress)) {
        struct iq_job job = {.kind = kind, .groups = groups.buf, .rows = rows.buf, .width = width,
                             .query = query.buf, .scale = scale.buf, .out = out.buf}; /* the rest NULL */
        struct iq_query prep;
        iq_query_prepare(&job, &prep, query.buf, coarse);
        result = share_chunks_released(iq_chunk, &job, count, &progress);
        if (result != NULL && coarse) {
            Py_DECREF(result);
            result = PyFloat_FromDouble(prep.rounding);
        }
        iq_query_free(&prep);
    }
    PyBuffer_Release(&groups);
    PyBuffer_Release(&rows);
    PyBuffer_Release(&query);
    PyBuffer_Release(&scale);
    PyBuffer_Release(&out);
    PyBuffer_Release(&progress);
    return result;
}

#endif
