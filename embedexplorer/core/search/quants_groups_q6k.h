/* Q6_K rows sixteen at a time: a copy of the table made for the queries after the first, and its
 * AVX-512 VNNI scan (included by _quants.c once, next to quants_groups.h, whose Q4_K copy is the
 * same idea: one row per int32 lane, the query's four bytes broadcast, no sums across lanes).
 *
 * Scanned as stored (quants_vnni.h), each 64 numbers of a row cost a permute of the weights, a
 * conversion, a subtraction and a fused multiply-add besides their two vpdpbusd, and each row
 * ends in a sum across lanes.  Here a sub-block of 16 numbers of 16 rows (256 products) costs
 * eight vpdpbusd and about thirteen other instructions, its weights a load and a conversion.
 *
 * Each number's 6-bit code q (0-63; the number is d s (q - 32)) is put together once, when the
 * copy is made, and the codes of four numbers of a row are spread over three bytes so that one
 * 64-byte load and one `and` give vpdpbusd four codes of each of 16 rows:
 *   P0 = q[16k + i]     | (bits 0-1 of q[16k + 12 + i]) << 6
 *   P1 = q[16k + 4 + i] | (bits 2-3 of q[16k + 12 + i]) << 6
 *   P2 = q[16k + 8 + i] | (bits 4-5 of q[16k + 12 + i]) << 6
 * for sub-block k and i = 0..3, so q & 63 of P0, P1 and P2 are numbers 16k + 0..11 and three
 * affine byte maps (GFNI) and one ternary-logic OR put numbers 16k + 12..15 together.
 * A group of 16 rows, per block of 256 numbers (Q6K_GROUP_BLOCK_BYTES, 64-byte aligned pieces):
 *   uint8 planes[16][3][64]  sub-block k's P0, P1, P2, byte 4 r + i for row r, i = 0..3
 *   int8 s[16][16]           sub-block k's scale for row r at 16 k + r, as stored
 *   half d[16]               each row's float16 scale, as stored; then 32 bytes of zeros
 * Rows past the table's end are zeros.  The copy is 3392 / 3360 of the stored bytes (GPT-2-sized:
 * 32.3 MB for 32.0 MB): the 32 bytes of padding keep every 64-byte load on one cache line.
 *
 * Exactness (the integer scan's, _quants.c's top): for sub-block k and row r, the integer
 *   S = sum_j (q_j - 32) xq_j over its 16 numbers = 256 (q . high) + (q . low) - 32 sum xq
 * is kept exactly in int32: |q . high| <= 16 x 63 x 64, so 256 times it is below 2^24, |q . low|
 * <= 16 x 63 x 128, and 32 sum xq (the query's, made once per query: q6_k_centres) at most 2^23,
 * so every partial sum is below 2^25 and S itself, |q - 32| <= 32, at most 16 x 32 x 2^14 = 2^23:
 * exact as float32 too.  Its weight s (d step) is exact: d step is a float16 times a power of two
 * of at least 2^-100 (normal), at most 11 significant bits, times s (int8, 7 bits) 18 bits.
 * One fused multiply-add adds S times it into the row's lane: each term d s step S goes through
 * at most width / 16 roundings, fewer than the width gamma_width allows, and is at most
 * sum_j |v_j| |x~_j| over its sub-block in size (v_j = d s (q_j - 32), gguf's number, exactly):
 * the bound of the scan as stored holds as it is.
 */
#ifndef EMBEDEXPLORER_QUANTS_GROUPS_Q6K_H
#define EMBEDEXPLORER_QUANTS_GROUPS_Q6K_H

#define Q6K_PLANES_BYTES (16 * 3 * 64)
#define Q6K_GROUP_BLOCK_BYTES (Q6K_PLANES_BYTES + 16 * 16 + 64)

/* Bytes of the grouped copy of count Q6_K rows of width numbers. */
static Py_ssize_t q6_k_groups_bytes(Py_ssize_t count, Py_ssize_t width)
{
    return (count + 15) / 16 * (width / 256) * Q6K_GROUP_BLOCK_BYTES;
}

struct q6k_group_job {
    const uint8_t *rows;
    Py_ssize_t count, blocks;
    uint8_t *groups;
};

static ALWAYS_INLINE uint32_t q6k_word(const uint8_t *at)
{
    uint32_t word;
    return memcpy(&word, at, sizeof word), word;
}

/* One stored block's planes (as above) into the copy at planes, row r: four numbers to a 32-bit word.
 * Sub-block k's 16 numbers are 16 bytes of ql in a row (one nibble) and 16 of qh (one pair of bits),
 * as dequantise_block reads them. */
static ALWAYS_INLINE void q6_k_planes(const uint8_t *block, uint8_t *planes, int r)
{
    for (int k = 0; k < 16; k++) {
        int h = k / 8, first = 16 * (k % 8); /* the sub-block's half and place in it */
        uint32_t codes[4];
        for (int v = 0; v < 4; v++) {
            uint32_t low = q6k_word(block + 64 * h + (first + 4 * v) % 64) >> (4 * (first / 64));
            uint32_t high = q6k_word(block + 128 + 32 * h + (first + 4 * v) % 32) >> (2 * (first / 32));
            codes[v] = (low & 0x0F0F0F0Fu) | (high & 0x03030303u) << 4;
        }
        for (int p = 0; p < 3; p++) {
            uint32_t word = codes[p] | ((codes[3] >> (2 * p)) & 0x03030303u) << 6;
            memcpy(planes + 192 * k + 64 * p + 4 * r, &word, sizeof word);
        }
    }
}

/* Rows start .. stop - 1 into their groups (start is a multiple of 16: CHUNK_ROWS is). */
static void q6k_group_chunk(const void *job, Py_ssize_t start, Py_ssize_t stop)
{
    const struct q6k_group_job *q = job;
    Py_ssize_t row_bytes = q->blocks * 210;
    if (stop == q->count)
        stop = (stop + 15) / 16 * 16; /* the last group's missing rows: zeros */
    for (Py_ssize_t g = start / 16; g * 16 < stop; g++)
        for (Py_ssize_t b = 0; b < q->blocks; b++) {
            uint8_t *at = q->groups + (g * q->blocks + b) * Q6K_GROUP_BLOCK_BYTES;
            uint8_t *scales = at + Q6K_PLANES_BYTES, *d = scales + 16 * 16;
            memset(at, 0, Q6K_GROUP_BLOCK_BYTES);
            for (int r = 0; r < 16 && g * 16 + r < q->count; r++) {
                const uint8_t *block = q->rows + (g * 16 + r) * row_bytes + b * 210;
                q6_k_planes(block, at, r);
                for (int k = 0; k < 16; k++)
                    scales[16 * k + r] = block[192 + k];
                memcpy(d + 2 * r, block + 208, 2);
            }
        }
}

static PyObject *q6_k_groups(PyObject *self, PyObject *args)
{
    Py_buffer rows, out, progress;
    Py_ssize_t width;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*nw*w*", &rows, &width, &out, &progress))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t blocks = width / 256, count = blocks > 0 ? rows.len / (blocks * 210) : 0;
    if (width <= 0 || width % 256 != 0 || rows.len != count * blocks * 210 ||
        out.len != q6_k_groups_bytes(count, width)) {
        PyErr_SetString(PyExc_ValueError, "out must hold the groups of every 16 Q6_K rows of width numbers");
    } else if (check_progress(&progress)) {
        struct q6k_group_job job = {rows.buf, count, blocks, out.buf};
        result = share_chunks_released(q6k_group_chunk, &job, count, &progress);
    }
    PyBuffer_Release(&rows);
    PyBuffer_Release(&out);
    PyBuffer_Release(&progress);
    return result;
}

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
/* A byte map over GF(2) moving bits from, from + 1 of each byte to to, to + 1 (all others 0):
 * output bit i is the parity of the input and matrix byte 7 - i (quants_vnni.h's QH_BITS). */
#define Q6K_MOVE(from, to) ((long long)((1ull << (from)) << (8 * (7 - (to))) | (1ull << ((from) + 1)) << (8 * (6 - (to)))))

/* Four bytes of the query, the same in every lane. */
VNNI_TARGET static ALWAYS_INLINE __m512i q6k_four(const int8_t *at)
{
    int32_t word;
    memcpy(&word, at, sizeof word);
    return _mm512_set1_epi32(word);
}

/* Rows start .. stop - 1 (start a multiple of 16) of groups against xq = 256 high + low, each score
 * times the row's scale (0 where the scale is 0).  centre: split_query's 32 sum xq over each four
 * numbers (width / 4); step: the runs' steps.  False when no memory was left for the sub-blocks'
 * offsets (the caller scans the rows as stored). */
VNNI_TARGET static int q6_k_groups_vnni(const uint8_t *groups, const int8_t *high, const int8_t *low,
                                        const int32_t *centre, const float *step, const float *scale, float *out,
                                        Py_ssize_t start, Py_ssize_t stop, Py_ssize_t width)
{
    Py_ssize_t blocks = width / 256;
    /* Each sub-block's -32 sum xq, where its low sums start (at most 2^23 in size). */
    int32_t *offsets = PyMem_RawMalloc((size_t)(width / 16) * sizeof(int32_t));
    if (offsets == NULL)
        return 0;
    for (Py_ssize_t k = 0; k < width / 16; k++)
        offsets[k] = -(centre[4 * k] + centre[4 * k + 1] + centre[4 * k + 2] + centre[4 * k + 3]);
    const __m512i six = _mm512_set1_epi8(63);
    const __m512i to_0 = _mm512_set1_epi64(Q6K_MOVE(6, 0)), to_2 = _mm512_set1_epi64(Q6K_MOVE(6, 2)),
                  to_4 = _mm512_set1_epi64(Q6K_MOVE(6, 4));
    for (Py_ssize_t g = start / 16; g * 16 < stop; g++) {
        const uint8_t *group = groups + g * blocks * Q6K_GROUP_BLOCK_BYTES;
        __m512 acc = _mm512_setzero_ps();
        for (Py_ssize_t b = 0; b < blocks; b++) {
            const uint8_t *at = group + b * Q6K_GROUP_BLOCK_BYTES;
            const int8_t *scales = (const int8_t *)(at + Q6K_PLANES_BYTES);
            /* F16C widens float16 exactly, subnormals, infinities and NaN too, as widen_half does. */
            const __m512 d = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(scales + 16 * 16)));
            for (int k = 0; k < 16; k++) {
                /* Ahead (GROUPS_PREFETCH_BYTES, scan_common.h), a 16th of the block a step; past the end harmless */
                prefetch_part(at + GROUPS_PREFETCH_BYTES, Q6K_GROUP_BLOCK_BYTES, k, 16);
                const uint8_t *planes = at + 192 * k;
                __m512i p0 = _mm512_loadu_si512((const void *)planes);
                __m512i p1 = _mm512_loadu_si512((const void *)(planes + 64));
                __m512i p2 = _mm512_loadu_si512((const void *)(planes + 128));
                __m512i codes[4] = {_mm512_and_si512(p0, six), _mm512_and_si512(p1, six), _mm512_and_si512(p2, six),
                                    _mm512_ternarylogic_epi32(_mm512_gf2p8affine_epi64_epi8(p0, to_0, 0),
                                                              _mm512_gf2p8affine_epi64_epi8(p1, to_2, 0),
                                                              _mm512_gf2p8affine_epi64_epi8(p2, to_4, 0), 0xFE)};
                Py_ssize_t j = 256 * b + 16 * k; /* the sub-block's first number */
                __m512i upper = _mm512_setzero_si512(), lower = _mm512_set1_epi32(offsets[j / 16]);
                for (int v = 0; v < 4; v++) {
                    upper = _mm512_dpbusd_epi32(upper, codes[v], q6k_four(high + j + 4 * v));
                    lower = _mm512_dpbusd_epi32(lower, codes[v], q6k_four(low + j + 4 * v));
                }
                __m512i sums = _mm512_add_epi32(_mm512_slli_epi32(upper, 8), lower);
                /* s (d step): exact; step[j / 32] is the query's run of this sub-block. */
                __m512 weight = _mm512_mul_ps(
                    _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)(scales + 16 * k)))),
                    _mm512_mul_ps(d, _mm512_set1_ps(step[j / 32])));
                acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sums), weight, acc);
            }
        }
        store_group_scores(acc, scale, out, g * 16, stop);
    }
    PyMem_RawFree(offsets);
    return 1;
}
#undef Q6K_MOVE
#endif

#endif
