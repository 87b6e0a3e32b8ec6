/* Q5_K rows sixteen at a time: a copy of the table made at open (instead of a bfloat16 copy, a third
 * of its bytes), its spread measured in the same pass, and its AVX-512 VNNI scan (included by
 * _quants.c once, after quants_groups.h, whose design this extends with each number's fifth bit).
 *
 * A group of 16 rows, per block of 256 numbers (Q5_K_GROUP_BLOCK_BYTES, 2880 for 16 x 176 stored):
 *   half d[16], dmin[16]       each row's two float16 scales, as stored
 *   uint8 s[8][16], m[8][16]   each sub-block's 6-bit scale and min, for each row
 *   uint8 qs[32][64]           as Q4_K's groups: for c = 0..3, t = 0..7 (s = 8 c + t), bytes 4t .. 4t + 3
 *                              of the block's qs[32 c ..] for each of the 16 rows in turn: the low
 *                              nibbles are numbers 64 c + 4t + i, the high ones 64 c + 32 + 4t + i
 *   uint64 fifth[32][2]        for each s, two 64-bit masks, one bit per byte of qs[s]: bit 4 r + i
 *                              of the first is the fifth bit of row r's number 64 c + 4t + i (qh's
 *                              bit 2 c of byte 4t + i), of the second that of number 64 c + 32 + 4t + i
 *                              (bit 2 c + 1)
 * Rows past the table's end are zeros.  So one 64-byte load and one mask load (kmov) per vector of
 * nibbles: the low nibbles are an and, the high ones one affine byte map (GFNI: the byte shifted
 * down four), and each gets its fifth bit by one masked byte add of 16 before vpdpbusd, which adds
 * each row's four products into that row's own int32 lane (no sums across lanes, no permutes).
 *
 * Exactness (the integer scan's, _quants.c's top, with q of five bits): for each sub-block and row,
 * S = sum q xq over its 32 numbers (0 <= q <= 31, |xq| <= 2^14) is kept as 256 (q . high) + (q . low)
 * in int32: |q . high| <= 32 x 31 x 64, so 256 times it is at most 16,252,928 < 2^24, and |S| <=
 * 32 x 31 x 2^14 = 16,252,928 < 2^24 too: every partial sum is exact in int32 and S is exact as a
 * float32.  A sub-block's weight s d step is exact (a float16 times a power of two of at least
 * 2^-100, normal, times a 6-bit s: 17 bits), and one fused multiply-add adds S times it into the
 * row's lane: one rounding.  The mins: m (6 bits) times step sum xq (at most 2^19 steps: exact)
 * summed over the block's eight sub-blocks by fused multiply-adds, that times dmin added into a
 * second lane, taken off at the end.  So each term d s step S or dmin m step sum xq goes through at
 * most width / 32 + 2 roundings, fewer than the width that gamma_width allows, and each term is at
 * most sum_j (|d s| q_j + |dmin m|) |x~_j| in size over its sub-block (x~ = step xq): the sum's error
 * is within gamma_width A |x~|, with A^2 = sum over the row of (|d s| q + |dmin m|)^2 (Cauchy-Schwarz),
 * which q5_k_groups measures for every row (the spread; StoredScreen.spread is the table's largest
 * A / |v|).  gguf's numbers v_j are d s q_j - dmin m rounded once (d s q_j: 17 + 5 bits, exact;
 * dmin m: 17 bits, exact): sum (d s q_j - dmin m) x~_j is within 2^-24 (1 + 2^-24) |v| |x~| of
 * v . x~, and |v . (x - x~)| <= |v| QUERY_ROUNDING |x|.  Divided by |v|: the bound of Q4_K's integer
 * scan, term for term (StoredScreen.error_bound with the spread and 2^-23 for gguf's rounding).  A
 * row whose d or dmin is infinite or NaN has an infinite or NaN length: its scale is 0 and it
 * scores 0 whatever its lanes hold.  The spread is summed in float64 from exact integer sums
 * (q5_k_group_row): within 2^-40 of itself, and Python multiplies its root by 1.001.
 */
#ifndef EMBEDEXPLORER_QUANTS_GROUPS_Q5K_H
#define EMBEDEXPLORER_QUANTS_GROUPS_Q5K_H

#define Q5_K_GROUP_BLOCK_BYTES (2 * GROUP_ROWS * 2 + 2 * 8 * GROUP_ROWS + 128 * GROUP_ROWS + 32 * 2 * 8)

struct q5_k_group_job {
    const uint8_t *rows;
    Py_ssize_t count, blocks;
    uint8_t *groups;
    double *spreads;
};

/* One Q5_K block's eight 6-bit scales and mins (q4_k_scales's unpacking, kept as integers). */
static ALWAYS_INLINE void q5_k_six_bits(const uint8_t *packed, uint8_t *scale, uint8_t *min)
{
    for (int j = 0; j < 4; j++) {
        scale[j] = packed[j] & 63;
        min[j] = packed[j + 4] & 63;
        scale[j + 4] = (packed[j + 8] & 0x0F) | ((packed[j] >> 6) << 4);
        min[j + 4] = (packed[j + 8] >> 4) | ((packed[j + 4] >> 6) << 4);
    }
}

/* Four bytes' bit `bit` as four bits, byte i's as bit i: each masked bit moved to bit 24 + i by one
 * product (the four partial products land on distinct bits, so nothing carries). */
static ALWAYS_INLINE uint64_t q5_k_four_bits(uint32_t word, int bit)
{
    return (uint64_t)((((word >> bit) & 0x01010101u) * 0x01020408u) >> 24);
}

/* One row's block into its group's block (row r of 16). */
static void q5_k_group_row(const uint8_t *block, int r, uint8_t *at)
{
    uint8_t *six = at + 4 * GROUP_ROWS, *qs = six + 2 * 8 * GROUP_ROWS;
    /* 8-byte aligned: 2368 and 2880 are multiples of 8 */
    uint64_t *fifth = (uint64_t *)(void *)(qs + 128 * GROUP_ROWS);
    const uint8_t *qh = block + 16, *packed_qs = block + 48;
    uint8_t scale[8], min[8];
    memcpy(at + 2 * r, block, 2), memcpy(at + 2 * GROUP_ROWS + 2 * r, block + 2, 2);
    q5_k_six_bits(block + 4, scale, min);
    for (int sub = 0; sub < 8; sub++)
        six[GROUP_ROWS * sub + r] = scale[sub], six[GROUP_ROWS * (8 + sub) + r] = min[sub];
    for (int c = 0; c < 4; c++)
        for (int t = 0; t < 8; t++) {
            int s = 8 * c + t;
            uint32_t word;
            memcpy(qs + 64 * s + 4 * r, packed_qs + 32 * c + 4 * t, 4);
            memcpy(&word, qh + 4 * t, 4); /* the fifth bits of numbers 4t .. 4t + 3 of each sub-block */
            fifth[2 * s] |= q5_k_four_bits(word, 2 * c) << (4 * r);
            fifth[2 * s + 1] |= q5_k_four_bits(word, 2 * c + 1) << (4 * r);
        }
}

/* A block's part of its row's spread: sum of (|d s| q + |dmin m|)^2 over its 256 numbers, from each
 * sub-block's exact integer sums of q and q^2 (a^2 sum q^2 + 2 a b sum q + 32 b^2 with a = |d s|,
 * b = |dmin m|: a and b have 17 bits, so each product is exact in float64, and the block's part, a
 * sum of 24 terms of one sign, is within 2^-48 of itself). */
static double q5_k_block_spread(const uint8_t *block)
{
    const uint8_t *qh = block + 16, *packed_qs = block + 48;
    uint8_t scale[8], min[8];
    q5_k_six_bits(block + 4, scale, min);
    double d = fabs((double)half_at(block)), dmin = fabs((double)half_at(block + 2)), total = 0.0;
    for (int sub = 0; sub < 8; sub++) {
        int32_t sum = 0, squares = 0;
        const uint8_t *nibbles = packed_qs + 32 * (sub / 2);
        int shift = (sub & 1) * 4;
        for (int j = 0; j < 32; j++) {
            int32_t q = ((nibbles[j] >> shift) & 0x0F) | (((qh[j] >> sub) & 1) << 4);
            sum += q, squares += q * q;
        }
        double a = d * scale[sub], b = dmin * min[sub];
        total += a * a * squares + 2.0 * a * b * sum + 32.0 * b * b;
    }
    return total;
}

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
/* The byte shifted down four, as an affine map over GF(2): output bit i is the parity of the byte and
 * matrix byte 7 - i, here input bit i + 4 for i < 4, nothing above. */
#define Q5_K_DOWN_FOUR ((long long)(0x10ull << 56 | 0x20ull << 48 | 0x40ull << 40 | 0x80ull << 32))

/* Vector s of a group's block: its 64 low-nibble numbers and its 64 high-nibble ones, each with its
 * fifth bit (one masked byte add of 16), 0-31 in each byte (see the top of the file). */
VNNI_TARGET static ALWAYS_INLINE void q5_k_numbers(const uint8_t *qs, const uint8_t *fifth, int s, __m512i *low,
                                                   __m512i *high)
{
    const __m512i sixteen = _mm512_set1_epi8(16);
    __m512i bytes = _mm512_loadu_si512((const void *)(qs + 64 * s));
    uint64_t masks[2];
    memcpy(masks, fifth + 16 * s, sizeof masks);
    __m512i ql = _mm512_and_si512(bytes, _mm512_set1_epi8(0x0F));
    __m512i qh = _mm512_gf2p8affine_epi64_epi8(bytes, _mm512_set1_epi64(Q5_K_DOWN_FOUR), 0);
    *low = _mm512_mask_add_epi8(ql, (__mmask64)masks[0], ql, sixteen);
    *high = _mm512_mask_add_epi8(qh, (__mmask64)masks[1], qh, sixteen);
}

/* Lanes 0-7 (half 0) or 8-15 (half 1) of sixteen float32, as float64 (exactly). */
VNNI_TARGET static ALWAYS_INLINE __m512d q5_k_half_wide(__m512 values, int half)
{
    __m256 part = half == 0 ? _mm512_castps512_ps256(values)
                            : _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(values), 1));
    return _mm512_cvtps_pd(part);
}

/* q5_k_block_spread for the 16 rows of a group's block at once, from the copy (their lanes; rows past
 * the table's end, zeros, give 0): the same integer sums (vpdpbusd of q with itself and with ones,
 * exact: at most 32 x 31^2) and the same float64 products and sums, in the same order. */
VNNI_TARGET static void q5_k_group_spreads(const uint8_t *at, double *part)
{
    const __m512i ones = _mm512_set1_epi8(1);
    const __m512 d = _mm512_abs_ps(_mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)at)));
    const __m512 dmin = _mm512_abs_ps(_mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(at + 2 * GROUP_ROWS))));
    const uint8_t *six = at + 4 * GROUP_ROWS, *qs = six + 2 * 8 * GROUP_ROWS, *fifth = qs + 128 * GROUP_ROWS;
    __m512d total[2] = {_mm512_setzero_pd(), _mm512_setzero_pd()};
    for (int c = 0; c < 4; c++) {
        __m512i squares[2] = {_mm512_setzero_si512(), _mm512_setzero_si512()}, sums[2] = {squares[0], squares[0]};
        for (int t = 0; t < 8; t++) {
            __m512i q[2];
            q5_k_numbers(qs, fifth, 8 * c + t, &q[0], &q[1]);
            for (int h = 0; h < 2; h++) {
                squares[h] = _mm512_dpbusd_epi32(squares[h], q[h], q[h]);
                sums[h] = _mm512_dpbusd_epi32(sums[h], q[h], ones);
            }
        }
        for (int h = 0; h < 2; h++) {
            int sub = 2 * c + h;
            __m512 a = _mm512_mul_ps(d, six_bit(six + GROUP_ROWS * sub));
            __m512 b = _mm512_mul_ps(dmin, six_bit(six + GROUP_ROWS * (8 + sub)));
            __m512 squares_f = _mm512_cvtepi32_ps(squares[h]), sums_f = _mm512_cvtepi32_ps(sums[h]); /* exact */
            for (int k = 0; k < 2; k++) {
                __m512d aw = q5_k_half_wide(a, k), bw = q5_k_half_wide(b, k);
                __m512d first = _mm512_mul_pd(_mm512_mul_pd(aw, aw), q5_k_half_wide(squares_f, k));
                __m512d second = _mm512_mul_pd(_mm512_mul_pd(_mm512_mul_pd(_mm512_set1_pd(2.0), aw), bw),
                                               q5_k_half_wide(sums_f, k));
                __m512d third = _mm512_mul_pd(_mm512_mul_pd(_mm512_set1_pd(32.0), bw), bw);
                total[k] = _mm512_add_pd(total[k], _mm512_add_pd(_mm512_add_pd(first, second), third));
            }
        }
    }
    _mm512_storeu_pd(part, total[0]);
    _mm512_storeu_pd(part + 8, total[1]);
}
#endif

/* Rows start .. stop - 1 into their groups, and their spreads (start is a multiple of 16: CHUNK_ROWS is). */
static void q5_k_group_chunk(const void *job, Py_ssize_t start, Py_ssize_t stop)
{
    const struct q5_k_group_job *q = job;
    Py_ssize_t row_bytes = q->blocks * 176;
    for (Py_ssize_t i = start; i < stop; i++)
        q->spreads[i] = 0.0;
    if (stop == q->count)
        stop = (stop + GROUP_ROWS - 1) / GROUP_ROWS * GROUP_ROWS; /* the last group's missing rows: zeros */
    for (Py_ssize_t g = start / GROUP_ROWS; g * GROUP_ROWS < stop; g++)
        for (Py_ssize_t b = 0; b < q->blocks; b++) {
            uint8_t *at = q->groups + (g * q->blocks + b) * Q5_K_GROUP_BLOCK_BYTES;
            const uint8_t *first = q->rows + g * GROUP_ROWS * row_bytes + b * 176;
            int rows = q->count - g * GROUP_ROWS < GROUP_ROWS ? (int)(q->count - g * GROUP_ROWS) : GROUP_ROWS;
            double part[GROUP_ROWS];
            memset(at, 0, Q5_K_GROUP_BLOCK_BYTES);
            for (int r = 0; r < rows; r++)
                q5_k_group_row(first + r * row_bytes, r, at);
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
            if (vnni_scan) /* the copy is made for this scan: the CPU has VNNI (a third of the time at open) */
                q5_k_group_spreads(at, part);
            else
#endif
                for (int r = 0; r < rows; r++)
                    part[r] = q5_k_block_spread(first + r * row_bytes);
            for (int r = 0; r < rows; r++)
                q->spreads[g * GROUP_ROWS + r] += part[r];
        }
}

static PyObject *q5_k_groups(PyObject *self, PyObject *args)
{
    Py_buffer rows, out, spreads, progress;
    Py_ssize_t width;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*nw*w*w*", &rows, &width, &out, &spreads, &progress))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t blocks = width / 256, count = blocks > 0 ? rows.len / (blocks * 176) : 0;
    if (width <= 0 || width % 256 != 0 || rows.len != count * blocks * 176 ||
        out.len != (count + GROUP_ROWS - 1) / GROUP_ROWS * blocks * Q5_K_GROUP_BLOCK_BYTES ||
        ((uintptr_t)out.buf % 8) != 0 || spreads.len != count * (Py_ssize_t)sizeof(double)) {
        PyErr_SetString(PyExc_ValueError,
                        "out must hold the groups of every 16 Q5_K rows of width numbers (8-byte aligned), "
                        "spreads one float64 per row");
    } else if (check_progress(&progress)) {
        struct q5_k_group_job job = {rows.buf, count, blocks, out.buf, spreads.buf};
        result = share_chunks_released(q5_k_group_chunk, &job, count, &progress);
    }
    PyBuffer_Release(&rows);
    PyBuffer_Release(&out);
    PyBuffer_Release(&spreads);
    PyBuffer_Release(&progress);
    return result;
}

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
/* Rows start .. stop - 1 (start a multiple of 16) of Q5_K groups against xq = 256 high + low, each
 * score times the row's scale (0 where the scale is 0).  step: the runs' steps, then their step sum xq
 * (quantise_query). */
VNNI_TARGET static void q5_k_groups_vnni(const uint8_t *groups, Py_ssize_t blocks, const int8_t *high,
                                         const int8_t *low, const float *step, const float *scale, float *out,
                                         Py_ssize_t start, Py_ssize_t stop, Py_ssize_t width)
{
    const float *sums = step + width / 32;
    for (Py_ssize_t g = start / GROUP_ROWS; g * GROUP_ROWS < stop; g++) {
        const uint8_t *group = groups + g * blocks * Q5_K_GROUP_BLOCK_BYTES;
        __m512 acc = _mm512_setzero_ps(), offsets = _mm512_setzero_ps();
        for (Py_ssize_t b = 0; b < blocks; b++) {
            const uint8_t *at = group + b * Q5_K_GROUP_BLOCK_BYTES;
            /* Ahead (GROUPS_PREFETCH_BYTES, scan_common.h, a 32nd of the block a step): one core's time for the
             * first pass a page ahead, side by side in one process (load 3-4), Qwen2-7B-sized 29-36 ms against
             * 44-49 ms without, GPT-2-shaped 1.21-1.85 ms against 1.35-2.24 ms; two pages were no faster here,
             * kept as for the other grouped scans. */
            /* F16C widens float16 exactly, subnormals, infinities and NaN too, as widen_half does. */
            const __m512 d = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)at));
            const __m512 dmin = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(at + 2 * GROUP_ROWS)));
            const uint8_t *six = at + 4 * GROUP_ROWS, *qs = six + 2 * 8 * GROUP_ROWS, *fifth = qs + 128 * GROUP_ROWS;
            __m512 mins = _mm512_setzero_ps(); /* sum m step sum xq over the block's sub-blocks */
            for (int c = 0; c < 4; c++) {
                /* Sub-block 2c (low nibbles) and 2c + 1 (high nibbles), each number with its fifth bit. */
                __m512i lh = _mm512_setzero_si512(), ll = lh, hh = lh, hl = lh;
                for (int t = 0; t < 8; t++) {
                    prefetch_part(at + GROUPS_PREFETCH_BYTES, Q5_K_GROUP_BLOCK_BYTES, 8 * c + t, 32);
                    __m512i ql, qh;
                    q5_k_numbers(qs, fifth, 8 * c + t, &ql, &qh);
                    Py_ssize_t j = 256 * b + 64 * c + 4 * t;
                    lh = _mm512_dpbusd_epi32(lh, ql, four_bytes(high + j));
                    ll = _mm512_dpbusd_epi32(ll, ql, four_bytes(low + j));
                    hh = _mm512_dpbusd_epi32(hh, qh, four_bytes(high + j + 32));
                    hl = _mm512_dpbusd_epi32(hl, qh, four_bytes(low + j + 32));
                }
                __m512i sums_of[2] = {_mm512_add_epi32(_mm512_slli_epi32(lh, 8), ll),
                                      _mm512_add_epi32(_mm512_slli_epi32(hh, 8), hl)};
                for (int half = 0; half < 2; half++) {
                    int sub = 2 * c + half;
                    Py_ssize_t k = 8 * b + sub; /* the query's run */
                    __m512 d_step = _mm512_mul_ps(d, _mm512_set1_ps(step[k]));
                    __m512 weight = _mm512_mul_ps(six_bit(six + GROUP_ROWS * sub), d_step);
                    acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sums_of[half]), weight, acc);
                    mins = _mm512_fmadd_ps(six_bit(six + GROUP_ROWS * (8 + sub)), _mm512_set1_ps(sums[k]), mins);
                }
            }
            offsets = _mm512_fmadd_ps(dmin, mins, offsets);
        }
        store_group_scores(_mm512_sub_ps(acc, offsets), scale, out, g * 16, stop);
    }
}
#endif

#endif
