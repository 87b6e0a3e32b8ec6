/* One GGUF block's numbers as gguf's dequantize gives them, the rows' float32 numbers from their
 * blocks (dequantise), and Q4_K's spreads (q4_k_spreads): included by _quants.c once, after its
 * kinds and their block sizes.  Why these numbers are exactly gguf's: _quants.c's top. */
#ifndef EMBEDEXPLORER_QUANTS_BLOCKS_H
#define EMBEDEXPLORER_QUANTS_BLOCKS_H

static ALWAYS_INLINE float half_at(const uint8_t *at)
{
    uint16_t bits;
    return memcpy(&bits, at, sizeof bits), widen_half(bits);
}

#include "quants_groups32.h"
#include "iq_grids.h"

/* Q4_K's eight 6-bit scales and mins, packed in 12 bytes (llama.cpp's get_scale_min_k4). */
static ALWAYS_INLINE void q4_k_scales(const uint8_t *packed, float d, float dmin, float *scale, float *min)
{
    for (int j = 0; j < 4; j++) {
        scale[j] = d * (float)(packed[j] & 63);
        min[j] = dmin * (float)(packed[j + 4] & 63);
        scale[j + 4] = d * (float)((packed[j + 8] & 0x0F) | ((packed[j] >> 6) << 4));
        min[j + 4] = dmin * (float)((packed[j + 8] >> 4) | ((packed[j + 4] >> 6) << 4));
    }
}

#include "quants_q2q3.h"
#include "quants_lookup_blocks.h"
#include "quants_fp4_ternary_blocks.h"

/* One block's numbers, dequantised exactly as gguf does (see the top of the file). */
static ALWAYS_INLINE void dequantise_block(int kind, const uint8_t *block, float *v)
{
    switch (kind) {
    case KIND_Q8_0: {
        float d = half_at(block);
        for (int j = 0; j < 32; j++)
            v[j] = d * (float)(int8_t)block[2 + j];
        break;
    }
    case KIND_Q4_0: {
        float d = half_at(block);
        for (int j = 0; j < 16; j++) {
            v[j] = d * (float)((block[2 + j] & 0x0F) - 8);
            v[j + 16] = d * (float)((block[2 + j] >> 4) - 8);
        }
        break;
    }
    case KIND_Q4_1:
    case KIND_Q5_0:
    case KIND_Q5_1:
    case KIND_IQ4_NL:
        dequantise_block32(kind, block, v);
        break;
    case KIND_Q4_K: {
        float scale[8], min[8];
        q4_k_scales(block + 4, half_at(block), half_at(block + 2), scale, min);
        const uint8_t *qs = block + 16;
        for (int c = 0; c < 4; c++)
            for (int j = 0; j < 32; j++) {
                uint8_t byte = qs[32 * c + j];
                /* The product is exact, so the one rounding is the subtraction's, fused or not. */
                v[64 * c + j] = scale[2 * c] * (float)(byte & 0x0F) - min[2 * c];
                v[64 * c + 32 + j] = scale[2 * c + 1] * (float)(byte >> 4) - min[2 * c + 1];
            }
        break;
    }
    case KIND_Q5_K: { /* d, dmin, scales[12] as Q4_K's, qh[32] (the fifth bits), qs[128] */
        float scale[8], min[8];
        q4_k_scales(block + 4, half_at(block), half_at(block + 2), scale, min);
        const uint8_t *qh = block + 16, *qs = block + 48;
        for (int c = 0; c < 4; c++)
            for (int j = 0; j < 32; j++) {
                uint8_t byte = qs[32 * c + j];
                int low = (byte & 0x0F) | (((qh[j] >> (2 * c)) & 1) << 4);
                int high = (byte >> 4) | (((qh[j] >> (2 * c + 1)) & 1) << 4);
                v[64 * c + j] = scale[2 * c] * (float)low - min[2 * c];
                v[64 * c + 32 + j] = scale[2 * c + 1] * (float)high - min[2 * c + 1];
            }
        break;
    }
    case KIND_Q2_K:
        q2_k_block(block, v);
        break;
    case KIND_Q3_K:
        q3_k_block(block, v);
        break;
    case KIND_IQ4_XS:
        iq4_xs_block(block, half_at(block), v);
        break;
    case KIND_TQ2_0:
        tq2_0_block(block, half_at(block + 64), v);
        break;
    case KIND_MXFP4:
        mxfp4_block(block, v);
        break;
    case KIND_NVFP4:
        nvfp4_block(block, v);
        break;
    case KIND_TQ1_0:
        tq1_0_block(block, half_at(block + 52), v);
        break;
    case KIND_IQ3_S:
        iq3_s_block(block, half_at(block), v);
        break;
    case KIND_IQ3_XXS:
        iq3_xxs_block(block, half_at(block), v);
        break;
    case KIND_IQ2_XXS:
    case KIND_IQ2_XS:
    case KIND_IQ2_S:
    case KIND_IQ1_S:
    case KIND_IQ1_M:
        iq_dequantise_block(kind, block, v);
        break;
    default: { /* KIND_Q6_K: ql[128], qh[64], int8 scales[16], d */
        const uint8_t *ql = block, *qh = block + 128;
        const int8_t *scales = (const int8_t *)(block + 192);
        float d = half_at(block + 208);
        for (int k = 0; k < 16; k++) { /* a sub-block of 16 at a time: its scale, and where its bits lie */
            float weight = d * (float)scales[k];
            int m = k % 8, low_shift = 4 * (m / 4), high_shift = 2 * (m / 2);
            const uint8_t *low_at = ql + 64 * (k / 8) + 16 * (m % 4), *high_at = qh + 32 * (k / 8) + 16 * (m % 2);
            for (int j = 0; j < 16; j++) {
                int low = (low_at[j] >> low_shift) & 0x0F, high = (high_at[j] >> high_shift) & 3;
                v[16 * k + j] = weight * (float)((low | (high << 4)) - 32);
            }
        }
        break;
    }
    }
}

/* Q4_K's spread of each row: the sum over its numbers of (|d s| q + |m n|)^2, in float64.  Scanned
 * against an integer query, a Q4_K row's products and its min offsets are summed apart and may
 * cancel, so its float32 error is bounded by this sum's root, not by the row's length (_quants.c's
 * top, StoredScreen.spread). */
struct spread_job {
    const uint8_t *rows;
    Py_ssize_t row_bytes;
    double *out;
};

static void spread_chunk(const void *job, Py_ssize_t start, Py_ssize_t stop)
{
    const struct spread_job *spread = job;
    for (Py_ssize_t i = start; i < stop; i++) {
        const uint8_t *row = spread->rows + i * spread->row_bytes;
        double total = 0.0;
        for (Py_ssize_t b = 0; b * 144 < spread->row_bytes; b++) {
            const uint8_t *block = row + b * 144;
            float scale[8], min[8];
            q4_k_scales(block + 4, half_at(block), half_at(block + 2), scale, min);
            for (int c = 0; c < 4; c++) {
                float sums[2] = {0.0f, 0.0f};
                for (int j = 0; j < 32; j++) {
                    uint8_t byte = block[16 + 32 * c + j];
                    float low = fabsf(scale[2 * c]) * (float)(byte & 0x0F) + fabsf(min[2 * c]);
                    float high = fabsf(scale[2 * c + 1]) * (float)(byte >> 4) + fabsf(min[2 * c + 1]);
                    sums[0] += low * low;
                    sums[1] += high * high;
                }
                total += (double)sums[0] + (double)sums[1];
            }
        }
        spread->out[i] = total;
    }
}

static PyObject *q4_k_spreads(PyObject *self, PyObject *args)
{
    Py_buffer rows, out, progress;
    Py_ssize_t width;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*nw*w*", &rows, &width, &out, &progress))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t count = out.len / (Py_ssize_t)sizeof(double);
    Py_ssize_t row_bytes = width / 256 * 144;
    if (width <= 0 || width % 256 != 0 || out.len % (Py_ssize_t)sizeof(double) != 0 || rows.len != count * row_bytes) {
        PyErr_SetString(PyExc_ValueError, "rows must hold len(out) Q4_K rows of width numbers");
    } else if (check_progress(&progress)) {
        struct spread_job job = {rows.buf, row_bytes, out.buf};
        result = share_chunks_released(spread_chunk, &job, count, &progress);
    }
    PyBuffer_Release(&rows);
    PyBuffer_Release(&out);
    PyBuffer_Release(&progress);
    return result;
}

/* Rows as float32, block by block: the numbers gguf's dequantize gives (see the top of the file),
 * a hundred times faster than its numpy code; the exact pass and the lengths read these. */
static PyObject *dequantise(PyObject *self, PyObject *args)
{
    Py_buffer rows, out;
    int kind;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*iw*", &rows, &kind, &out))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t numbers = out.len / (Py_ssize_t)sizeof(float);
    if (kind < 0 || kind >= KINDS || BLOCK_NUMBERS[kind] == 0) {
        PyErr_SetString(PyExc_ValueError,
                        "kind must be 0-3 (Q8_0, Q4_0, Q4_K, Q6_K), 4 (Q5_K), 5-8, 9 (Q2_K), 10 (Q3_K), 11-13, 14-17 or "
                        "18-22");
    } else if (out.len % (Py_ssize_t)sizeof(float) != 0 || numbers % BLOCK_NUMBERS[kind] != 0 ||
               rows.len != numbers / BLOCK_NUMBERS[kind] * BLOCK_BYTES[kind]) {
        PyErr_SetString(PyExc_ValueError, "out must hold the float32 numbers of every block of rows");
    } else {
        const uint8_t *blocks = rows.buf;
        float *values = out.buf;
        Py_ssize_t count = numbers / BLOCK_NUMBERS[kind];
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t b = 0; b < count; b++)
            dequantise_block(kind, blocks + b * BLOCK_BYTES[kind], values + b * BLOCK_NUMBERS[kind]);
        Py_END_ALLOW_THREADS
        result = Py_NewRef(Py_None);
    }
    PyBuffer_Release(&rows);
    PyBuffer_Release(&out);
    return result;
}

/* One row's dot product with the query in float64, from dequantise's numbers: each product of a float32
 * number and a query number is exact in float64 (or rounded once, for a float64 query), the sum off by at most
 * width 2^-53 of the sum of their sizes.  Eight running sums (number j into sum j % 8, every block holds a
 * multiple of 8 numbers), added at the end: one sum would wait on each add in turn, four times as long; the
 * order is the same for every row, so equal rows still score exactly alike. */
#define DOT64_SUMS 8
static double row_dot64(int kind, const uint8_t *row, Py_ssize_t width, const float *query32, const double *query64)
{
    Py_ssize_t per_block = BLOCK_NUMBERS[kind];
    float v[256];
    double sums[DOT64_SUMS] = {0.0};
    for (Py_ssize_t b = 0; b * per_block < width; b++) {
        dequantise_block(kind, row + b * BLOCK_BYTES[kind], v);
        const Py_ssize_t at = b * per_block;
        for (Py_ssize_t j = 0; j < per_block; j += DOT64_SUMS)
            for (int s = 0; s < DOT64_SUMS; s++)
                sums[s] += (double)v[j + s] * (query64 != NULL ? query64[at + j + s] : (double)query32[at + j + s]);
    }
    double total = 0.0;
    for (int s = 0; s < DOT64_SUMS; s++)
        total += sums[s];
    return total;
}

/* Rows start .. stop - 1 of a table scored in float64 (row_dot64), each times its row's scale, rounded once
 * to float32; 0 where the scale is 0 (the row points nowhere, whatever its blocks hold). */
static void rows_float64(int kind, const uint8_t *rows, Py_ssize_t width, const float *query, const float *scale,
                         float *out, Py_ssize_t start, Py_ssize_t stop)
{
    Py_ssize_t row_bytes = width / BLOCK_NUMBERS[kind] * BLOCK_BYTES[kind];
    for (Py_ssize_t i = start; i < stop; i++) {
        out[i] = 0.0f;
        if (scale[i] != 0.0f)
            out[i] = (float)(row_dot64(kind, rows + i * row_bytes, width, query, NULL) * (double)scale[i]);
    }
}

#endif
