/* Q4_K rows sixteen at a time: a copy of the table made for the queries after the first, and
 * its AVX-512 VNNI scan (included by _quants.c once, after quants_vnni.h where that is built).
 *
 * Scanned as stored, each row's 64 numbers cost about nine vector instructions, and each row
 * ends in a sum across lanes and each block in unpacking and permuting its scales: about 170
 * instructions a GPT-2-sized row, so the scan was bound by instructions, not memory.  Here the
 * 16 int32 lanes of a register are 16 rows: 64 bytes hold four stored bytes of each row, the
 * query's four matching bytes are broadcast to every lane, and vpdpbusd adds each row's four
 * products into that row's own lane.  No sum across lanes, no permutes: a scale is a load.
 *
 * A group of 16 rows, per block of 256 numbers (GROUP_BLOCK_BYTES):
 *   half d[16], dmin[16]    each row's two float16 scales, as stored
 *   uint8 s[8][16], m[8][16]   each sub-block's 6-bit scale and min, for each row
 *   uint8 qs[32][64]   for c = 0..3, t = 0..7: bytes 4t .. 4t + 3 of the block's qs[32 c ..] for
 *                      each of the 16 rows in turn: low nibbles numbers 64 c + 4t .., high ones
 *                      numbers 64 c + 32 + 4t ..
 * Rows past the table's end are zeros.  The copy is 2368 / 2304 of the stored bytes (GPT-2-sized:
 * 22.3 MB for 21.7 MB): the scan is bound by the cache's bandwidth again, and float32 scales and
 * mins (3072 bytes) were slower, for all the instructions they saved.
 *
 * Exactness is the integer scan's (_quants.c's top): for each sub-block and row, the integer
 * S = sum q xq over its 32 numbers, kept as 256 (q . high) + (q . low) in int32, exactly (below
 * 2^23; the high nibbles are taken as 16 q, whose sums are 16 times as large and exactly a
 * multiple of 16, so the shifts put them back exactly).  A sub-block's weight s (d step) is
 * exact (d step: a float16 times a power of two of at least 2^-100, normal; times s, 17 bits),
 * and one fused multiply-add adds S times it into the row's lane.  The mins: m times step sum xq
 * summed over the block's eight sub-blocks, that times dmin added into a second lane, taken off
 * at the end.  So each term d s step S or dmin m step sum xq goes through at most width / 32 + 2
 * roundings, fewer than the width gamma_width allows: the bound holds as it is (every term is
 * at most sum_j (|d s| q_j + |dmin m|) |x~_j| in size, over its sub-block, as before).
 */
#ifndef EMBEDEXPLORER_QUANTS_GROUPS_H
#define EMBEDEXPLORER_QUANTS_GROUPS_H

#define GROUP_ROWS 16
#define GROUP_BLOCK_BYTES (2 * GROUP_ROWS * 2 + 2 * 8 * GROUP_ROWS + 128 * GROUP_ROWS)

struct group_job {
    const uint8_t *rows;
    Py_ssize_t count, blocks;
    uint8_t *groups;
};

/* Rows start .. stop - 1 into their groups (start is a multiple of 16: CHUNK_ROWS is). */
static void group_chunk(const void *job, Py_ssize_t start, Py_ssize_t stop)
{
    const struct group_job *q = job;
    Py_ssize_t row_bytes = q->blocks * 144;
    if (stop == q->count)
        stop = (stop + GROUP_ROWS - 1) / GROUP_ROWS * GROUP_ROWS; /* the last group's missing rows: zeros */
    for (Py_ssize_t g = start / GROUP_ROWS; g * GROUP_ROWS < stop; g++)
        for (Py_ssize_t b = 0; b < q->blocks; b++) {
            uint8_t *at = q->groups + (g * q->blocks + b) * GROUP_BLOCK_BYTES;
            uint16_t d[GROUP_ROWS] = {0}, dmin[GROUP_ROWS] = {0};
            uint8_t *six = at + sizeof d + sizeof dmin, *qs = six + 2 * 8 * GROUP_ROWS;
            memset(six, 0, (2 * 8 + 128) * GROUP_ROWS);
            for (int r = 0; r < GROUP_ROWS && g * GROUP_ROWS + r < q->count; r++) {
                const uint8_t *block = q->rows + (g * GROUP_ROWS + r) * row_bytes + b * 144;
                const uint8_t *packed = block + 4;
                memcpy(d + r, block, 2), memcpy(dmin + r, block + 2, 2);
                for (int j = 0; j < 4; j++) { /* q4_k_scales's unpacking, kept as integers */
                    six[GROUP_ROWS * j + r] = packed[j] & 63;
                    six[GROUP_ROWS * (8 + j) + r] = packed[j + 4] & 63;
                    six[GROUP_ROWS * (j + 4) + r] = (packed[j + 8] & 0x0F) | ((packed[j] >> 6) << 4);
                    six[GROUP_ROWS * (12 + j) + r] = (packed[j + 8] >> 4) | ((packed[j + 4] >> 6) << 4);
                }
                for (int s = 0; s < 32; s++) /* s = 8 c + t: bytes 32 c + 4 t of the block's qs */
                    memcpy(qs + 64 * s + 4 * r, block + 16 + 4 * s, 4);
            }
            memcpy(at, d, sizeof d);
            memcpy(at + sizeof d, dmin, sizeof dmin);
        }
}

static PyObject *q4_k_groups(PyObject *self, PyObject *args)
{
    Py_buffer rows, out, progress;
    Py_ssize_t width;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*nw*w*", &rows, &width, &out, &progress))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t blocks = width / 256, count = blocks > 0 ? rows.len / (blocks * 144) : 0;
    if (width <= 0 || width % 256 != 0 || rows.len != count * blocks * 144 ||
        out.len != (count + GROUP_ROWS - 1) / GROUP_ROWS * blocks * GROUP_BLOCK_BYTES) {
        PyErr_SetString(PyExc_ValueError, "out must hold the groups of every 16 Q4_K rows of width numbers");
    } else if (check_progress(&progress)) {
        struct group_job job = {rows.buf, count, blocks, out.buf};
        result = share_chunks_released(group_chunk, &job, count, &progress);
    }
    PyBuffer_Release(&rows);
    PyBuffer_Release(&out);
    PyBuffer_Release(&progress);
    return result;
}

/* Whether quant_scores scans Q4_K rows by their groups with this build (use_build changes it). */
static PyObject *grouped_scan(PyObject *self, PyObject *unused)
{
    (void)self, (void)unused;
    return PyBool_FromLong(integer_scan && vnni_scan);
}

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
/* Four bytes of the query, the same in every lane (vpdpbusd's broadcast operand). */
VNNI_TARGET static ALWAYS_INLINE __m512i four_bytes(const int8_t *at)
{
    int32_t word;
    memcpy(&word, at, sizeof word);
    return _mm512_set1_epi32(word);
}

/* Sixteen 6-bit numbers as float32. */
VNNI_TARGET static ALWAYS_INLINE __m512 six_bit(const uint8_t *at)
{
    return _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)at)));
}

/* Rows start .. stop - 1 (start a multiple of 16) of groups against xq = 256 high + low, each
 * score times the row's scale (0 where the scale is 0).  step: the runs' steps, then their
 * step sum xq (quantise_query). */
VNNI_TARGET static void groups_vnni(const uint8_t *groups, Py_ssize_t blocks, const int8_t *high, const int8_t *low,
                                    const float *step, const float *scale, float *out, Py_ssize_t start,
                                    Py_ssize_t stop, Py_ssize_t width)
{
    const __m512i low_bits = _mm512_set1_epi8(0x0F), high_bits = _mm512_set1_epi8((char)0xF0);
    const float *sums = step + width / 32;
    for (Py_ssize_t g = start / GROUP_ROWS; g * GROUP_ROWS < stop; g++) {
        const uint8_t *group = groups + g * blocks * GROUP_BLOCK_BYTES;
        __m512 acc = _mm512_setzero_ps(), offsets = _mm512_setzero_ps();
        for (Py_ssize_t b = 0; b < blocks; b++) {
            const uint8_t *at = group + b * GROUP_BLOCK_BYTES;
            /* F16C widens float16 exactly, subnormals, infinities and NaN too, as widen_half does. */
            const __m512 d = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)at));
            const __m512 dmin = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(at + 2 * GROUP_ROWS)));
            const uint8_t *six = at + 4 * GROUP_ROWS, *qs = six + 2 * 8 * GROUP_ROWS;
            __m512 mins = _mm512_setzero_ps(); /* sum m step sum xq over the block's sub-blocks */
            for (int c = 0; c < 4; c++) {
                /* Sub-block 2c (low nibbles) and 2c + 1 (high nibbles, as 16 q): q . high, q . low. */
                __m512i lh = _mm512_setzero_si512(), ll = lh, hh = lh, hl = lh;
                for (int t = 0; t < 8; t++) {
                    __m512i bytes = _mm512_loadu_si512((const void *)(qs + 64 * (8 * c + t)));
                    __m512i ql = _mm512_and_si512(bytes, low_bits), qh = _mm512_and_si512(bytes, high_bits);
                    Py_ssize_t j = 256 * b + 64 * c + 4 * t;
                    lh = _mm512_dpbusd_epi32(lh, ql, four_bytes(high + j));
                    ll = _mm512_dpbusd_epi32(ll, ql, four_bytes(low + j));
                    hh = _mm512_dpbusd_epi32(hh, qh, four_bytes(high + j + 32));
                    hl = _mm512_dpbusd_epi32(hl, qh, four_bytes(low + j + 32));
                }
                __m512i sums_of[2] = {_mm512_add_epi32(_mm512_slli_epi32(lh, 8), ll),
                                      _mm512_add_epi32(_mm512_slli_epi32(hh, 4), _mm512_srai_epi32(hl, 4))};
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
