/* Q2_K and Q3_K rows sixteen at a time: the copy of the table made at open where the CPU has
 * AVX-512 VNNI (in place of a bfloat16 copy, 2 bytes a number against their 0.33 and 0.43), and
 * its scan (included by _quants.c once, after quants_groups.h, whose idea this is: the 16 int32
 * lanes of a register are 16 rows, the query's four matching bytes are broadcast to every lane,
 * and vpdpbusd adds each row's four products into that row's own lane).
 *
 * Both types keep a 2-bit code per number, in 16 sub-blocks of 16.  In a group, four sub-blocks
 * (a quad) share four 64-byte words: lane r (bytes 4r .. 4r + 3) is row r, and byte p of word t holds
 * at bits 2i the code of number 4t + p of the quad's sub-block i.  An and with 3 << 2i gives, with
 * no shift, 4^i times the codes of numbers 4t .. 4t + 3 of sub-block i for 16 rows, against the
 * query's bytes for those four numbers: call that factor f.  Q3_K's third bit (hmask) is a 64-bit
 * mask per sub-block and word (bit 4r + p), added as 4 f by one masked byte add: the code is then
 * (q + 4) f, unsigned as vpdpbusd needs, and 4 f times the query's sum T over the sub-block is taken
 * off in int32 (as Q6_K's 32); its sub-block 3 is shifted down instead (f = 1: 7 x 64 > 255).
 *
 * A group, per block of 256 numbers:
 *   Q2_K (1344 bytes, the stored 16 x 84 exactly): half d[16], dmin[16]; uint8 scales[16][16]
 *     (each sub-block's stored byte, scale and min nibbles, for each row); per quad its words[4][64].
 *   Q3_K (1824 bytes, 16 x 114 against 16 x 110 stored): half d[16]; int8 scales[16][16] (s - 32);
 *     per quad its words[4][64], then uint64 masks[4][4] (sub-block, word).
 * Rows past the table's end are zeros.  One core, GPT-2-shaped (50,257 x 768), load 3-3.7: about
 * 15-16 ns a row (Q2_K) and 18 (Q3_K), where the copies' first layout (one sub-block a load, three
 * shifts) took 17-19 and 19-22 (the first layout's figures on a quiet machine: 18.7 and 21.9).
 *
 * Exactness (the integer scan's, _quants.c's top).  A sub-block's 16 numbers all lie in one run
 * of 32 of the query, so they share its step (two sub-blocks a run).  For each sub-block and row
 * the integer S = sum (f c) xq over its 16 numbers is 256 ((f c) . high) + ((f c) . low), exact in
 * int32 (f c at most 192: at most 16 x 192 x 2^14 < 2^26 in size).  Q3_K: S - 4 f T (|T| <= 2^18)
 * is exactly f sum q xq, at most 16 x 16 x 4 x 2^14 = 2^24 in size, so exact as float32; its weight
 * (s - 32) step / f is a 6-bit integer times a power of two (at least 2^-106: normal), exact; one
 * fused multiply-add adds S times it, exactly (s - 32) step sum q xq = sum_j v_j x~_j / d over the
 * sub-block (x~ = step xq; gguf's v_j are products, exact), into the block's sum, and one more adds
 * that sum times d into the row's lane.  So each term goes through at most 16 + 1 + width / 256
 * roundings (fewer than width) and the error is within gamma_width of the sum of |v_j x~_j|: Q6_K's
 * bound unchanged (error_bound as for Q6_K: no spread).
 * Q2_K is Q4_K's case: S (rounded once to float32) times sc step / f (a 4-bit integer times a power
 * of two, from a table vpermps indexes with the scale nibble: exact) into the block's sum, and the
 * min offsets m (step T) (4 + 18 bits: exact, from a second table) into the block's min sum; those
 * times d and dmin into two lanes by fused multiply-adds, subtracted at the end: each term through
 * at most 16 + 3 + width / 256 roundings, and each is at most sum_j (|d sc| q_j + |dmin m|) |x~_j|
 * over its sub-block, so the error is within gamma_width A |x~| with A the root of the row's
 * q2_k_spreads (StoredScreen.spread, measured at each open), and gguf rounds each v_j once (2^-24
 * of it: value_rounding) as for Q4_K.
 */
#ifndef EMBEDEXPLORER_QUANTS_GROUPS_Q2Q3_H
#define EMBEDEXPLORER_QUANTS_GROUPS_Q2Q3_H

#define Q2_K_GROUP_BYTES (4 * GROUP_ROWS + 16 * GROUP_ROWS + 16 * 64)
#define Q3_K_GROUP_BYTES (2 * GROUP_ROWS + 16 * GROUP_ROWS + 4 * (4 * 64 + 16 * 8))

static int quantise_query(const float *x, Py_ssize_t width, int16_t *xq, float *step);
static int quantise_query_bytes(const float *x, Py_ssize_t width, int8_t *xq, int16_t *xq16, float *step,
                                double *rounding);

static Py_ssize_t low_bit_group_size(int kind)
{
    return kind == KIND_Q2_K ? Q2_K_GROUP_BYTES : Q3_K_GROUP_BYTES;
}

/* Four bytes as a little-endian word: byte p is bits 8p .. 8p + 7. */
static ALWAYS_INLINE uint32_t word_at(const uint8_t *at)
{
    return (uint32_t)at[0] | (uint32_t)at[1] << 8 | (uint32_t)at[2] << 16 | (uint32_t)at[3] << 24;
}

/* One row's block into lane r of a group's block: d (and dmin), the scales, the codes (written
 * whole); Q3_K's high bits are ORed into masks[k][i] (bit 4r + p). */
static void low_bit_lane(int kind, const uint8_t *block, int r, uint8_t *at, uint64_t masks[16][4])
{
    int q3 = kind == KIND_Q3_K;
    const uint8_t *qs = block + (q3 ? 32 : 16);
    memcpy(at + 2 * r, block + (q3 ? 108 : 80), 2);
    if (q3) {
        int8_t scale[16];
        q3_k_scales(block + 96, scale);
        for (int k = 0; k < 16; k++)
            at[2 * GROUP_ROWS + GROUP_ROWS * k + r] = (uint8_t)scale[k];
    } else {
        memcpy(at + 2 * GROUP_ROWS + 2 * r, block + 82, 2);
        for (int k = 0; k < 16; k++)
            at[4 * GROUP_ROWS + GROUP_ROWS * k + r] = block[k];
    }
    uint8_t *codes = at + (q3 ? 18 : 20) * GROUP_ROWS;
    for (int k = 0; k < 16; k++) {
        /* Sub-block k's numbers 4t + p are qs[base + 4t + p] >> shift (two_bit_code), hmask[16 (k % 2) + 4t + p]. */
        int base = 32 * (k / 8) + 16 * (k % 2), shift = 2 * ((k % 8) / 2);
        /* Numbers 4t .. 4t + 3 of sub-block k at bits 2 (k % 4) of word t of quad k / 4. */
        for (int t = 0; t < 4; t++) {
            uint32_t word = ((word_at(qs + base + 4 * t) >> shift) & 0x03030303u) << (2 * (k % 4));
            uint8_t *quad = codes + (q3 ? 384 : 256) * (k / 4) + 64 * t + 4 * r;
            for (int p = 0; p < 4; p++)
                quad[p] |= (uint8_t)(word >> (8 * p));
            if (q3) {
                uint32_t bits = (word_at(block + 16 * (k % 2) + 4 * t) >> (k / 2)) & 0x01010101u;
                uint32_t four = (bits & 1) | ((bits >> 7) & 2) | ((bits >> 14) & 4) | ((bits >> 21) & 8);
                masks[k][t] |= (uint64_t)four << (4 * r);
            }
        }
    }
}

/* Rows start .. stop - 1 into their groups (start is a multiple of 16: CHUNK_ROWS is). */
static void low_bit_group_chunk(const void *job, Py_ssize_t start, Py_ssize_t stop)
{
    const struct kind_group_job *q = job;
    Py_ssize_t block_bytes = q->kind == KIND_Q2_K ? Q2_K_BYTES : Q3_K_BYTES, size = low_bit_group_size(q->kind);
    if (stop == q->count)
        stop = (stop + GROUP_ROWS - 1) / GROUP_ROWS * GROUP_ROWS; /* the last group's missing rows: zeros */
    for (Py_ssize_t g = start / GROUP_ROWS; g * GROUP_ROWS < stop; g++)
        for (Py_ssize_t b = 0; b < q->blocks; b++) {
            uint8_t *at = q->groups + (g * q->blocks + b) * size;
            uint64_t masks[16][4] = {{0}};
            memset(at, 0, (size_t)size);
            for (int r = 0; r < GROUP_ROWS && g * GROUP_ROWS + r < q->count; r++)
                low_bit_lane(q->kind, q->rows + ((g * GROUP_ROWS + r) * q->blocks + b) * block_bytes, r, at, masks);
            if (q->kind == KIND_Q3_K) /* after each quad's codes: its sub-blocks' masks, four each */
                for (int k = 0; k < 16; k++)
                    memcpy(at + 18 * GROUP_ROWS + 384 * (k / 4) + 256 + 32 * (k % 4), masks[k], sizeof masks[k]);
        }
}

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
/* The end of a group: each row's score times its scale (0 where the scale is 0), rows start .. stop - 1. */
VNNI_TARGET static ALWAYS_INLINE void group_scores(__m512 total, Py_ssize_t g, const float *scale, float *out,
                                                   Py_ssize_t stop)
{
    store_group_scores(total, scale, out, g * 16, stop);
}

/* Rows start .. stop - 1 (start a multiple of 16) of a Q3_K table's groups against xq = 256 high + low, or with low
 * NULL (a constant where inlined) against the query in single bytes (the coarse scan, quants_iq.h's top): one
 * vpdpbusd per four numbers, the codes (q + 4) f at most 112 (sub-block 3 shifted down: 7), so the sum with -4 f T is
 * f sum q xq exactly in int32 and float32 (at most 16 x 112 x 127 < 2^18), and the weight (s - 32) step 4^-i is
 * rounded once (a free step, 4^-i exact: at least 2^-93, normal): each term through at most 16 + 3 + width / 256
 * roundings, fewer than width, within Q3_K's bound (no spread).
 * centre: per sub-block k, -4 T 4^i (int32) then step 4^-i (float32) with i = k % 4, or 0 when it is 3. */
VNNI_TARGET static ALWAYS_INLINE void q3_k_groups(const uint8_t *groups, Py_ssize_t blocks, const int8_t *high,
                                                  const int8_t *low, const void *centre, const float *scale,
                                                  float *out, Py_ssize_t start, Py_ssize_t stop)
{
    const int32_t *offsets = centre;
    const float *steps = (const float *)centre + 16 * blocks;
    for (Py_ssize_t g = start / GROUP_ROWS; g * GROUP_ROWS < stop; g++) {
        const uint8_t *group = groups + g * blocks * Q3_K_GROUP_BYTES;
        __m512 acc = _mm512_setzero_ps();
        for (Py_ssize_t b = 0; b < blocks; b++) {
            const uint8_t *at = group + b * Q3_K_GROUP_BYTES;
            const uint8_t *scales = at + 2 * GROUP_ROWS, *codes = scales + 16 * GROUP_ROWS;
            __m512 sums = _mm512_setzero_ps(); /* the block's, before d */
            for (int quad = 0; quad < 4; quad++) {
                prefetch_part(at + GROUPS_PREFETCH_BYTES, Q3_K_GROUP_BYTES, quad, 4); /* ahead: scan_common.h */
                const uint8_t *words_at = codes + 384 * quad;
                __m512i words[4];
                for (int t = 0; t < 4; t++)
                    words[t] = _mm512_loadu_si512((const void *)(words_at + 64 * t));
                for (int i = 0; i < 4; i++) { /* sub-block 4 quad + i: q + 4 times 4^i (at bits 2i; i = 3 shifted) */
                    int k = 4 * quad + i;
                    const __m512i bits = _mm512_set1_epi8((char)(i < 3 ? 3 << (2 * i) : 3));
                    const __m512i third = _mm512_set1_epi8((char)(i < 3 ? 4 << (2 * i) : 4));
                    /* Against bytes two short chains of the products; else the low bytes' and the high ones'.  The
                     * first starts from -4 T 4^i, the codes' offset. */
                    __m512i first = _mm512_set1_epi32(offsets[16 * b + k]), second = _mm512_setzero_si512();
                    for (int t = 0; t < 4; t++) {
                        uint64_t mask;
                        memcpy(&mask, words_at + 256 + 32 * i + 8 * t, sizeof mask);
                        __m512i c = _mm512_and_si512(i < 3 ? words[t] : _mm512_srli_epi16(words[t], 6), bits);
                        c = _mm512_mask_add_epi8(c, _cvtu64_mask64(mask), c, third);
                        Py_ssize_t j = 256 * b + 16 * k + 4 * t;
                        if (low == NULL && t % 2 == 0) {
                            first = _mm512_dpbusd_epi32(first, c, four_bytes(high + j));
                        } else if (low == NULL) {
                            second = _mm512_dpbusd_epi32(second, c, four_bytes(high + j));
                        } else {
                            second = _mm512_dpbusd_epi32(second, c, four_bytes(high + j));
                            first = _mm512_dpbusd_epi32(first, c, four_bytes(low + j));
                        }
                    }
                    __m512i total = low == NULL ? _mm512_add_epi32(first, second)
                                                : _mm512_add_epi32(_mm512_slli_epi32(second, 8), first);
                    __m128i row_scales = _mm_loadu_si128((const __m128i *)(scales + GROUP_ROWS * k));
                    __m512 weight = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(row_scales)),
                                                  _mm512_set1_ps(steps[16 * b + k]));
                    sums = _mm512_fmadd_ps(_mm512_cvtepi32_ps(total), weight, sums);
                }
            }
            /* F16C widens float16 exactly, subnormals, infinities and NaN too, as widen_half does. */
            acc = _mm512_fmadd_ps(_mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)at)), sums, acc);
        }
        group_scores(acc, g, scale, out, stop);
    }
}

/* Rows start .. stop - 1 (start a multiple of 16) of a Q2_K table's groups against xq = 256 high + low, or with low
 * NULL (a constant where inlined) against the query in single bytes (the coarse scan, quants_iq.h's top): one
 * vpdpbusd per four numbers, S = sum (f c) xq exact in int32 and float32 (at most 16 x 192 x 127 < 2^19); centre's
 * tables then hold v step 4^-i and v (step T) with the run's free step, rounded once and twice (T, the sub-block's
 * sum of xq, at most 16 x 127), so each term goes through at most 16 + 5 + width / 256 roundings, fewer than width:
 * Q2_K's bound above, with the spread.
 * centre: per sub-block k, v step (v = 0 .. 15) then v step T (float32, 32 a sub-block). */
VNNI_TARGET static ALWAYS_INLINE void q2_k_groups(const uint8_t *groups, Py_ssize_t blocks, const int8_t *high,
                                                  const int8_t *low, const void *centre, const float *scale,
                                                  float *out, Py_ssize_t start, Py_ssize_t stop)
{
    const float *tables = centre;
    for (Py_ssize_t g = start / GROUP_ROWS; g * GROUP_ROWS < stop; g++) {
        const uint8_t *group = groups + g * blocks * Q2_K_GROUP_BYTES;
        __m512 acc = _mm512_setzero_ps(), offsets = _mm512_setzero_ps();
        for (Py_ssize_t b = 0; b < blocks; b++) {
            const uint8_t *at = group + b * Q2_K_GROUP_BYTES;
            const uint8_t *scales = at + 4 * GROUP_ROWS, *codes = scales + 16 * GROUP_ROWS;
            __m512 sums = _mm512_setzero_ps(), mins = _mm512_setzero_ps(); /* the block's, before d and dmin */
            for (int quad = 0; quad < 4; quad++) {
                prefetch_part(at + GROUPS_PREFETCH_BYTES, Q2_K_GROUP_BYTES, quad, 4); /* ahead: scan_common.h */
                __m512i words[4];
                for (int t = 0; t < 4; t++)
                    words[t] = _mm512_loadu_si512((const void *)(codes + 64 * (4 * quad + t)));
                for (int i = 0; i < 4; i++) { /* sub-block 4 quad + i: its codes times 4^i, at bits 2i */
                    int k = 4 * quad + i;
                    const __m512i bits = _mm512_set1_epi8((char)(3 << (2 * i)));
                    /* Against bytes two short chains; else the high bytes' sums, then the low ones' onto them. */
                    __m512i c[4], two[2] = {_mm512_setzero_si512(), _mm512_setzero_si512()};
                    for (int t = 0; t < 4; t++) {
                        c[t] = _mm512_and_si512(words[t], bits);
                        int chain = low == NULL ? t % 2 : 0;
                        two[chain] = _mm512_dpbusd_epi32(two[chain], c[t], four_bytes(high + 256 * b + 16 * k + 4 * t));
                    }
                    __m512i total = _mm512_add_epi32(two[0], two[1]);
                    if (low != NULL) {
                        total = _mm512_slli_epi32(two[0], 8);
                        for (int t = 0; t < 4; t++)
                            total = _mm512_dpbusd_epi32(total, c[t], four_bytes(low + 256 * b + 16 * k + 4 * t));
                    }
                    __m512i packed = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(scales + GROUP_ROWS * k)));
                    const float *table = tables + 32 * (16 * b + k);
                    /* vpermps reads the low four bits of each index: the scale nibble, then the min's. */
                    __m512 sc_step = _mm512_permutexvar_ps(packed, _mm512_loadu_ps(table));
                    sums = _mm512_fmadd_ps(_mm512_cvtepi32_ps(total), sc_step, sums);
                    __m512 m_sum = _mm512_permutexvar_ps(_mm512_srli_epi32(packed, 4), _mm512_loadu_ps(table + 16));
                    mins = _mm512_add_ps(mins, m_sum);
                }
            }
            /* F16C widens float16 exactly, subnormals, infinities and NaN too, as widen_half does. */
            acc = _mm512_fmadd_ps(_mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)at)), sums, acc);
            offsets = _mm512_fmadd_ps(_mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(at + 32))), mins, offsets);
        }
        group_scores(_mm512_sub_ps(acc, offsets), g, scale, out, stop);
    }
}

/* A Q2_K or Q3_K table's groups against the 16-bit query or, low NULL, the query in bytes: each case its own code. */
VNNI_TARGET static void low_bit_groups_vnni(int kind, const uint8_t *groups, Py_ssize_t blocks, const int8_t *high,
                                            const int8_t *low, const void *centre, const float *scale, float *out,
                                            Py_ssize_t start, Py_ssize_t stop)
{
    if (kind == KIND_Q2_K && low == NULL)
        q2_k_groups(groups, blocks, high, NULL, centre, scale, out, start, stop);
    else if (kind == KIND_Q2_K)
        q2_k_groups(groups, blocks, high, low, centre, scale, out, start, stop);
    else if (low == NULL)
        q3_k_groups(groups, blocks, high, NULL, centre, scale, out, start, stop);
    else
        q3_k_groups(groups, blocks, high, low, centre, scale, out, start, stop);
}
#endif

struct low_bit_job {
    int kind;
    const uint8_t *rows, *groups; /* groups NULL: the float scan of the blocks as stored */
    Py_ssize_t width;
    const float *query, *scale, *step;
    float *out;
    const int8_t *high, *low;
    const void *centre;
};

static void low_bit_chunk(const void *job, Py_ssize_t start, Py_ssize_t stop)
{
    const struct low_bit_job *q = job;
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
    if (q->groups != NULL) {
        low_bit_groups_vnni(q->kind, q->groups, q->width / 256, q->high, q->low, q->centre, q->scale, q->out, start,
                            stop);
        return;
    }
#endif
    Py_ssize_t row_bytes = q->width / 256 * (q->kind == KIND_Q2_K ? Q2_K_BYTES : Q3_K_BYTES);
    rows_plain(q->kind, q->rows, row_bytes, q->query, q->scale, q->out, start, stop, q->width);
}

/* The query's copies the grouped scan reads (low_bit_query_prepare), held until low_bit_query_free. */
struct low_bit_query {
    int16_t *xq;
    float *step;
    int8_t *bytes;
    void *centre;
    double rounding; /* |x - x~| of the query the scan reads (coarse: its bytes; 0: scanned in float32) */
};

/* The query's bytes and per-sub-block sums for the grouped scan against groups: xq = 256 high + low, or with
 * ``coarse`` the query in signed bytes whose rounding it measures (quantise_query_bytes).  Where the
 * query is out of the integer scan's range, memory is short or the build has no VNNI, job->groups stays NULL: the
 * float scan of the blocks as stored. */
static void low_bit_query_prepare(struct low_bit_job *job, struct low_bit_query *prep, const uint8_t *groups,
                                  int integer, int coarse)
{
    Py_ssize_t width = job->width;
    *prep = (struct low_bit_query){NULL, NULL, NULL, NULL, 0.0};
    if (groups == NULL || !integer || !integer_scan || !vnni_scan)
        return;
    int16_t *xq = prep->xq = PyMem_RawMalloc((size_t)width * sizeof(int16_t));
    float *step = prep->step = PyMem_RawMalloc((size_t)(width / 32) * 2 * sizeof(float));
    int8_t *bytes = prep->bytes = PyMem_RawMalloc((size_t)width * 2);
    size_t centre_bytes = (size_t)(width / 16) * (job->kind == KIND_Q3_K ? 8 : 32 * sizeof(float));
    void *centre = prep->centre = PyMem_RawMalloc(centre_bytes);
    if (xq == NULL || step == NULL || bytes == NULL || centre == NULL ||
        !(coarse ? quantise_query_bytes(job->query, width, bytes, xq, step, &prep->rounding)
                 : quantise_query(job->query, width, xq, step))) {
        prep->rounding = 0.0;
        return;
    }
    if (!coarse)
        split_query(xq, step, width, bytes, bytes + width, NULL, 0, NULL);
    for (Py_ssize_t k = 0; k < width / 16; k++) {
        int32_t sum = 0; /* at most 2^18 in size: exact as float32 */
        for (int j = 0; j < 16; j++)
            sum += xq[16 * k + j];
        /* The codes of sub-block k are 4^i times theirs where i = k % 4 (Q3_K's: but for i = 3). */
        int i = (int)(k % 4) < 3 || job->kind == KIND_Q2_K ? (int)(k % 4) : 0;
        if (job->kind == KIND_Q3_K) { /* -4 T 4^i, then step 4^-i (exact: 2^-104 at least, normal) */
            ((int32_t *)centre)[k] = -4 * sum * (1 << (2 * i));
            ((float *)centre)[width / 16 + k] = ldexpf(step[k / 2], -2 * i);
            continue;
        }
        /* Q2_K: v step 4^-i, then v step T, v = 0 .. 15 (exact for a power of two step; with a free step rounded
         * once and twice: q2_k_groups) */
        float *table = (float *)centre + 32 * k;
        for (int v = 0; v < 16; v++) {
            table[v] = ldexpf((float)v * step[k / 2], -2 * i);
            table[16 + v] = (float)v * ((float)sum * step[k / 2]);
        }
    }
    job->high = bytes, job->low = coarse ? NULL : bytes + width, job->step = step, job->centre = centre;
    job->groups = groups;
}

static void low_bit_query_free(struct low_bit_query *prep)
{
    PyMem_RawFree(prep->xq);
    PyMem_RawFree(prep->step);
    PyMem_RawFree(prep->bytes);
    PyMem_RawFree(prep->centre);
}

static PyObject *low_bit_scores(PyObject *self, PyObject *args)
{
    Py_buffer rows, query, scale, out, progress, groups = {0};
    int kind, integer = 0;
    (void)self;
    int coarse = 0;
    if (!PyArg_ParseTuple(args, "y*iy*y*w*w*|pz*p", &rows, &kind, &query, &scale, &out, &progress, &integer, &groups,
                          &coarse))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t width = query.len / (Py_ssize_t)sizeof(float), count = out.len / (Py_ssize_t)sizeof(float);
    Py_ssize_t block_bytes = kind == KIND_Q2_K ? Q2_K_BYTES : Q3_K_BYTES;
    if (kind != KIND_Q2_K && kind != KIND_Q3_K) {
        PyErr_SetString(PyExc_ValueError, "kind must be 9 (Q2_K) or 10 (Q3_K)");
    } else if (width == 0 || query.len % (Py_ssize_t)sizeof(float) != 0 || width % 256 != 0) {
        PyErr_SetString(PyExc_ValueError, "the query must hold a whole number of blocks of float32 numbers");
    } else if (rows.len != count * (width / 256) * block_bytes) {
        PyErr_SetString(PyExc_ValueError, "rows must hold len(out) rows of len(query) quantised numbers");
    } else if (groups.buf != NULL &&
               groups.len != (count + GROUP_ROWS - 1) / GROUP_ROWS * (width / 256) * low_bit_group_size(kind)) {
        PyErr_SetString(PyExc_ValueError, "groups must be copy_groups's copy of the rows");
    } else if (scale.len != out.len) {
        PyErr_SetString(PyExc_ValueError, "scale must hold one float32 per row");
    } else if (check_progress(&progress)) {
        struct low_bit_job job = {kind, rows.buf, NULL, width, query.buf, scale.buf, NULL, out.buf, NULL, NULL, NULL};
        struct low_bit_query prep;
        low_bit_query_prepare(&job, &prep, groups.buf, integer, coarse);
        result = share_chunks_released(low_bit_chunk, &job, count, &progress);
        if (result != NULL && coarse) {
            Py_DECREF(result);
            result = PyFloat_FromDouble(prep.rounding);
        }
        low_bit_query_free(&prep);
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

#endif
