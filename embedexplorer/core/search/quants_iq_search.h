/* An IQ1 or IQ2 grid table's whole search in one call (included by _quants.c once, after quants_top.h): the
 * groups' scan against the query in signed bytes (iq_query_prepare's coarse copy), the margin that query's own
 * rounding allows, then quants_top.h's pick, exact pass and order.
 *
 * Why one call: after a scan has streamed the table through the caches, each step of Python between the scan
 * and the answer (the margin, the exclusions, two arrays for the answer, the cosines' division) costs several
 * microseconds, a tenth of a 0.15 ms query all told.  The answer is the one StoredScreen.bounded_scores and
 * neighbours.search_bounded give: the same scores, the same margin (the same float64 arithmetic as
 * StoredScreen._bound), the same candidates, exact values and order, and cosines divided and rounded to float32
 * as numpy does. */
#ifndef EMBEDEXPLORER_QUANTS_IQ_SEARCH_H
#define EMBEDEXPLORER_QUANTS_IQ_SEARCH_H

static PyObject *iq_search(PyObject *self, PyObject *args)
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
    if (!iq_buffers_fit(kind, query.len, rows.len, groups.len, scale.len, count)) {
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
            struct iq_job job = {.kind = kind, .groups = groups.buf, .rows = rows.buf, .width = width,
                                 .query = query.buf, .scale = scale.buf, .out = scores};
            struct iq_query prep;
            iq_query_prepare(&job, &prep, query.buf, 1);
            /* StoredScreen._bound with |x - x~| / |x| rounded up, as bounded_scores has it */
            double rounding = job.high == NULL ? 0.0 : prep.rounding / length * (1 + 0x1p-40);
            double margin = length * (rounding + (1 + rounding) * relative);
            struct top_rows_job top = {scores, count, k, (float)(2.0 * margin), kind, rows.buf,
                                       exact_row_bytes(kind, query64.len), width, query64.buf, scale.buf, lengths.buf};
            int64_t counters[3] = {0, 0, helpers}; /* chunks claimed, chunks finished, helpers wanted */
            Py_ssize_t kept;
            Py_BEGIN_ALLOW_THREADS
#if !defined(_MSC_VER)
            share_chunks_helped(iq_chunk, &job, count, counters, helpers);
#else
            share_chunks(iq_chunk, &job, count, counters);
#endif
            for (Py_ssize_t i = 0; i < dropped; i++)
                scores[drop[i]] = -INFINITY;
            kept = top_rows(&top, ids_out.buf, values);
            Py_END_ALLOW_THREADS
            iq_query_free(&prep);
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
