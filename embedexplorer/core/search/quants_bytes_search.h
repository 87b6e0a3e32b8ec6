/* The whole search in one call of a table whose copy is scanned against the query in signed bytes (the IQ1 and
 * IQ2 grid kinds, TQ1_0, TQ2_0, the IQ3s, IQ4_XS, Q2_K and Q3_K; Q4_K and Q6_K as stored; included by _quants.c once,
 * after quants_top.h): that scan (the coarse copy of the query of iq_query_prepare, fp4t_query_prepare,
 * lookup_query_prepare, low_bit_query_prepare or quant_query_prepare), the margin that query's own rounding
 * allows, then quants_top.h's pick, exact pass and order.
 *
 * Why one call: after a scan has streamed the table through the caches, each step of Python between the scan
 * and the answer (the margin, the exclusions, two arrays for the answer, the cosines' division) costs several
 * microseconds, a tenth of a 0.15 ms query all told.  The answer is the one StoredScreen.bounded_scores and
 * neighbours.search_bounded give: the same scores, the same margin (the same float64 arithmetic as
 * StoredScreen._bound), the same candidates, exact values and order, and cosines divided and rounded to float32
 * as numpy does. */
#ifndef EMBEDEXPLORER_QUANTS_BYTES_SEARCH_H
#define EMBEDEXPLORER_QUANTS_BYTES_SEARCH_H

/* What bytes_search checks of a Q2_K, Q3_K, TQ1_0, TQ2_0, IQ3 or IQ4_XS table's buffers (or a Q4_K or Q6_K
 * table's, read as stored: groups empty); 0 with a ValueError set when they do not fit. */
static int blocks256_buffers_fit(int kind, Py_ssize_t query_len, Py_ssize_t rows_len, Py_ssize_t groups_len,
                                 Py_ssize_t count)
{
    Py_ssize_t width = query_len / (Py_ssize_t)sizeof(float);
    Py_ssize_t copy = 0; /* Q4_K and Q6_K: read as stored, no copy */
    if (kind == KIND_Q2_K || kind == KIND_Q3_K)
        copy = (count + GROUP_ROWS - 1) / GROUP_ROWS * (width / 256) * low_bit_group_size(kind);
    else if (lookup_bytes_kind(kind))
        copy = lookup_groups_bytes(kind, count, width);
    else if (fp4t_bytes_kind(kind))
        copy = fp4t_groups_bytes(kind, count, width);
    if (width == 0 || width % 256 != 0 || query_len % (Py_ssize_t)sizeof(float) != 0) {
        PyErr_SetString(PyExc_ValueError, "the query must hold whole blocks of float32");
    } else if (rows_len != count * (width / 256) * BLOCK_BYTES[kind] || groups_len != copy) {
        PyErr_SetString(PyExc_ValueError, "rows and groups must hold one row per number of scale, len(query) wide");
    } else {
        return 1;
    }
    return 0;
}

static PyObject *bytes_search(PyObject *self, PyObject *args)
{
    Py_buffer groups, rows, query, query64, scale, lengths, ids_out, cosines_out;
    int kind;
    long long helpers;
    double relative, length;
    PyObject *exclude;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*y*iy*y*y*y*ddOw*w*L", &groups, &rows, &kind, &query, &query64, &scale, &lengths,
                          &relative, &length, &exclude, &ids_out, &cosines_out, &helpers))
        return NULL;
    PyObject *result = NULL, *excluded = NULL;
    Py_ssize_t width = query.len / (Py_ssize_t)sizeof(float), count = scale.len / (Py_ssize_t)sizeof(float);
    Py_ssize_t k = ids_out.len / (Py_ssize_t)sizeof(int64_t);
    /* else a grid kind */
    int ternary_kind = fp4t_bytes_kind(kind), lookup = lookup_bytes_kind(kind);
    int low_bit = kind == KIND_Q2_K || kind == KIND_Q3_K;
    int as_stored = kind == KIND_Q4_K || kind == KIND_Q6_K;
    if (ternary_kind || lookup || low_bit || as_stored
            ? !blocks256_buffers_fit(kind, query.len, rows.len, groups.len, count)
            : !iq_buffers_fit(kind, query.len, rows.len, groups.len, scale.len, count)) {
        /* the error is set */
    } else if (query64.len != width * (Py_ssize_t)sizeof(double) ||
               lengths.len != count * (Py_ssize_t)sizeof(double)) {
        PyErr_SetString(PyExc_ValueError, "query64 must hold the query in float64 and lengths one float64 per row");
    } else if (k < 1 || k > count || ids_out.len % (Py_ssize_t)sizeof(int64_t) != 0 ||
               cosines_out.len != k * (Py_ssize_t)sizeof(float)) {
        PyErr_SetString(PyExc_ValueError, "ids_out must hold k int64 (1 to the rows) and cosines_out k float32");
    } else if (!(length > 0.0) || !(relative >= 0.0)) {
        PyErr_SetString(PyExc_ValueError, "the query's length must be above 0 and relative not below 0");
    } else if ((excluded = PySequence_Fast(exclude, "exclude must be a sequence of row ids")) != NULL) {
        Py_ssize_t dropped = PySequence_Fast_GET_SIZE(excluded);
        int64_t *drop = PyMem_Malloc((size_t)dropped * sizeof(int64_t) + 1);
        float *scores = PyMem_RawMalloc((size_t)count * sizeof(float));
        double *values = PyMem_Malloc((size_t)k * sizeof(double));
        int ids_fit = drop != NULL && scores != NULL && values != NULL;
        for (Py_ssize_t i = 0; ids_fit && i < dropped; i++) {
            long long id = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(excluded, i));
            if (id < 0 || id >= count) {
                if (!PyErr_Occurred())
                    PyErr_SetString(PyExc_ValueError, "an excluded id is outside the table");
                ids_fit = 0;
            }
            if (ids_fit)
                drop[i] = id;
        }
        if (ids_fit) {
            struct iq_job grid = {.kind = kind, .groups = groups.buf, .rows = rows.buf, .width = width,
                                  .query = query.buf, .scale = scale.buf, .out = scores};
            struct fp4t_job ternary = {.kind = kind, .rows = rows.buf, .groups = groups.buf, .width = width,
                                       .query = query.buf, .scale = scale.buf, .out = scores,
                                       .far = far_copy(groups.len)};
            struct lookup_job codes = {.kind = kind, .rows = rows.buf, .groups = groups.buf, .width = width,
                                       .query = query.buf, .scale = scale.buf, .out = scores,
                                       .far = far_copy(groups.len)};
            struct iq_query grid_query = {0};
            struct fp4t_query ternary_query = {0};
            struct lookup_query codes_query = {0};
            struct low_bit_job two_bits = {.kind = kind, .rows = rows.buf, .width = width, .query = query.buf,
                                           .scale = scale.buf, .out = scores};
            struct low_bit_query two_bits_query = {0};
            struct quant_job blocks = {.kind = kind, .rows = rows.buf, .row_bytes = (width / 256) * BLOCK_BYTES[kind],
                                       .width = width, .query = query.buf, .scale = scale.buf, .out = scores};
            struct quant_query blocks_query = {0};
            chunk_function chunk;
            const void *job;
            int in_bytes;
            double measured;
            if (ternary_kind) {
                fp4t_query_prepare(&ternary, &ternary_query, 1, 1);
                chunk = fp4t_chunk, job = &ternary, in_bytes = ternary.high != NULL;
                measured = ternary_query.rounding;
            } else if (as_stored) {
                quant_query_prepare(&blocks, &blocks_query, NULL, 1, 1);
                chunk = quant_chunk, job = &blocks, in_bytes = blocks.high != NULL, measured = blocks_query.rounding;
            } else if (low_bit) {
                low_bit_query_prepare(&two_bits, &two_bits_query, groups.buf, 1, 1);
                chunk = low_bit_chunk, job = &two_bits, in_bytes = two_bits.groups != NULL;
                measured = two_bits_query.rounding;
            } else if (lookup) {
                lookup_query_prepare(&codes, &codes_query, 1, 1);
                chunk = lookup_chunk, job = &codes, in_bytes = codes.high != NULL, measured = codes_query.rounding;
            } else {
                iq_query_prepare(&grid, &grid_query, query.buf, 1);
                chunk = iq_chunk, job = &grid, in_bytes = grid.high != NULL, measured = grid_query.rounding;
            }
            /* StoredScreen._bound with |x - x~| / |x| rounded up, as bounded_scores has it */
            double rounding = in_bytes ? measured / length * (1 + 0x1p-40) : 0.0;
            double margin = length * (rounding + (1 + rounding) * relative);
            struct top_rows_job top = {scores, count, k, (float)(2.0 * margin), kind, rows.buf,
                                       exact_row_bytes(kind, query64.len), width, query64.buf, scale.buf, lengths.buf};
            int64_t counters[3] = {0, 0, helpers}; /* chunks claimed, chunks finished, helpers wanted */
            Py_ssize_t kept;
            Py_BEGIN_ALLOW_THREADS
#if !defined(_MSC_VER)
            share_chunks_helped(chunk, job, count, counters, helpers);
#else
            share_chunks(chunk, job, count, counters);
#endif
            for (Py_ssize_t i = 0; i < dropped; i++)
                scores[drop[i]] = -INFINITY;
            kept = top_rows(&top, ids_out.buf, values);
            Py_END_ALLOW_THREADS
            if (ternary_kind)
                fp4t_query_free(&ternary_query);
            else if (lookup)
                lookup_query_free(&codes_query);
            else if (low_bit)
                low_bit_query_free(&two_bits_query);
            else if (as_stored)
                quant_query_free(&blocks_query);
            else
                iq_query_free(&grid_query);
            float *cosines = cosines_out.buf;
            for (Py_ssize_t i = 0; i < kept; i++)
                cosines[i] = (float)(values[i] / length);
            result = kept == -3 ? PyErr_NoMemory() : PyLong_FromSsize_t(kept);
        } else if (!PyErr_Occurred()) {
            PyErr_NoMemory();
        }
        PyMem_Free(drop);
        PyMem_RawFree(scores);
        PyMem_Free(values);
        Py_DECREF(excluded);
    }
    PyBuffer_Release(&groups);
    PyBuffer_Release(&rows);
    PyBuffer_Release(&query);
    PyBuffer_Release(&query64);
    PyBuffer_Release(&scale);
    PyBuffer_Release(&lengths);
    PyBuffer_Release(&ids_out);
    PyBuffer_Release(&cosines_out);
    return result;
}

#endif
