/* Q2_K and Q3_K blocks as gguf stores and dequantises them (included by _quants.c once, before
 * its dequantise_block, which calls these).  Both hold 256 numbers in 16 sub-blocks of 16.
 *
 * Q2_K, 84 bytes: uint8 scales[16] (low nibble the sub-block's scale sc, high nibble its min m),
 * uint8 qs[64] (2-bit q), half d, half dmin.  Number e = 128 h + 32 s + j (h < 2, s < 4, j < 32):
 * q = (qs[32 h + j] >> 2 s) & 3, sub-block e / 16; v = (d sc) q - (dmin m).  d sc (11 + 4 bits) times
 * q (2 bits) is exact in float32, dmin m (15 bits) too: gguf rounds the difference once, and so does
 * a fused multiply-subtract (the product is exact), so v is bit for bit gguf's, infinities and NaN
 * from infinite or NaN scales included (inf times 0 is NaN in both).
 *
 * Q3_K, 110 bytes: uint8 hmask[32], uint8 qs[64] (the low two bits, as Q2_K's), uint8 scales[12]
 * (sixteen 6-bit scales: the low nibble of scale k from byte k % 8, shifted down 4 when k >= 8, its
 * two high bits from byte 8 + k % 4, shifted down 2 (k / 4)), half d.  Number e: low as Q2_K's q,
 * its high bit (hmask[e % 32] >> (e / 32)) & 1, q = low - 4 when that bit is clear, else low (so
 * q + 4 = low | bit << 2 is 0-7); v = (d (s - 32)) q: 11 + 6 + 3 bits, both products exact.
 */
#ifndef EMBEDEXPLORER_QUANTS_Q2Q3_H
#define EMBEDEXPLORER_QUANTS_Q2Q3_H

#define Q2_K_BYTES 84
#define Q3_K_BYTES 110

/* Number e's 2-bit code in a 64-byte qs of either type. */
static ALWAYS_INLINE int two_bit_code(const uint8_t *qs, int e)
{
    return (qs[32 * (e / 128) + e % 32] >> (2 * ((e % 128) / 32))) & 3;
}

/* Q3_K's sixteen 6-bit scales, less 32 (gguf's int8 s - 32). */
static ALWAYS_INLINE void q3_k_scales(const uint8_t *packed, int8_t *scale)
{
    for (int k = 0; k < 16; k++) {
        int low = (packed[k % 8] >> (4 * (k / 8))) & 0x0F;
        int high = (packed[8 + k % 4] >> (2 * (k / 4))) & 3;
        scale[k] = (int8_t)((low | (high << 4)) - 32);
    }
}

static void q2_k_block(const uint8_t *block, float *v)
{
    float d = half_at(block + 80), dmin = half_at(block + 82);
    for (int k = 0; k < 16; k++) { /* a sub-block of 16 at a time: one scale and min, codes two_bit_code reads */
        float scale = d * (float)(block[k] & 0x0F), min = dmin * (float)(block[k] >> 4);
        const uint8_t *qs = block + 16 + 32 * (k / 8) + 16 * (k % 2);
        int shift = 2 * ((k % 8) / 2);
        for (int j = 0; j < 16; j++)
            v[16 * k + j] = scale * (float)((qs[j] >> shift) & 3) - min; /* one rounding, fused or not */
    }
}

static void q3_k_block(const uint8_t *block, float *v)
{
    int8_t scale[16];
    q3_k_scales(block + 96, scale);
    float d = half_at(block + 108);
    for (int k = 0; k < 16; k++) { /* a sub-block at a time; q + 4 = two_bit_code | hmask bit << 2 */
        float weight = d * (float)scale[k];
        const uint8_t *qs = block + 32 + 32 * (k / 8) + 16 * (k % 2), *hmask = block + 16 * (k % 2);
        int shift = 2 * ((k % 8) / 2), high = k / 2;
        for (int j = 0; j < 16; j++)
            v[16 * k + j] = weight * (float)((((qs[j] >> shift) & 3) | (((hmask[j] >> high) & 1) << 2)) - 4);
    }
}

/* Q2_K's spread of each row: the sum over its numbers of (|d sc| q + |dmin m|)^2, in float64 (what
 * q4_k_spreads is for Q4_K: the grouped scan sums products and min offsets apart). */
struct q2_k_spread_job {
    const uint8_t *rows;
    Py_ssize_t row_bytes;
    double *out;
};

static void q2_k_spread_chunk(const void *job, Py_ssize_t start, Py_ssize_t stop)
{
    const struct q2_k_spread_job *spread = job;
    for (Py_ssize_t i = start; i < stop; i++) {
        const uint8_t *row = spread->rows + i * spread->row_bytes;
        double total = 0.0;
        for (Py_ssize_t b = 0; b * Q2_K_BYTES < spread->row_bytes; b++) {
            const uint8_t *block = row + b * Q2_K_BYTES;
            float d = fabsf(half_at(block + 80)), dmin = fabsf(half_at(block + 82));
            for (int sub = 0; sub < 16; sub++) {
                float scale = d * (float)(block[sub] & 0x0F), min = dmin * (float)(block[sub] >> 4), sum = 0.0f;
                for (int e = 16 * sub; e < 16 * sub + 16; e++) {
                    float size = scale * (float)two_bit_code(block + 16, e) + min;
                    sum += size * size;
                }
                total += (double)sum;
            }
        }
        spread->out[i] = total;
    }
}

static PyObject *q2_k_spreads(PyObject *self, PyObject *args)
{
    Py_buffer rows, out, progress;
    Py_ssize_t width;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*nw*w*", &rows, &width, &out, &progress))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t count = out.len / (Py_ssize_t)sizeof(double);
    Py_ssize_t row_bytes = width / 256 * Q2_K_BYTES;
    if (width <= 0 || width % 256 != 0 || out.len % (Py_ssize_t)sizeof(double) != 0 || rows.len != count * row_bytes) {
        PyErr_SetString(PyExc_ValueError, "rows must hold len(out) Q2_K rows of width numbers");
    } else if (check_progress(&progress)) {
        struct q2_k_spread_job job = {rows.buf, row_bytes, out.buf};
        result = share_chunks_released(q2_k_spread_chunk, &job, count, &progress);
    }
    PyBuffer_Release(&rows);
    PyBuffer_Release(&out);
    PyBuffer_Release(&progress);
    return result;
}

#endif
