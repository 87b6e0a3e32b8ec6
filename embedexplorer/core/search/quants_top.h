/* What follows a quantised table's first pass, in one call (included by _quants.c once, after quants_exact.h):
 * the rows the pass cannot rule out (pick_core.h), their exact cosines times |query| from their stored blocks
 * (dot_rows's sums, over the rows' lengths), and the k best of those, best first, ties by id.
 *
 * neighbours.search does the same in four numpy and C calls; right after a scan has streamed the table through
 * the caches each costs several microseconds of Python (picking 8-9 us, the exact pass 7-8, sorting 4-5 on a
 * GPT-2-shaped table), a tenth of a query that takes 0.2-0.3 ms.  The answer is the same bit for bit: the
 * same candidates in the same order, the same float64 sums, and numpy's lexsort order (value descending, NaN
 * last, then id ascending). */
#ifndef EMBEDEXPLORER_QUANTS_TOP_H
#define EMBEDEXPLORER_QUANTS_TOP_H

#include "pick_core.h"

/* Ids kept on the way, at the least (4 k where that is more). */
#define PICK_ROOM 4096

struct scored_row {
    double value;
    int64_t id;
};

/* Best first: a larger value, then a smaller id; NaN after every number (as lexsort puts -NaN last). */
static int better_first(const void *left, const void *right)
{
    const struct scored_row *a = left, *b = right;
    int a_nan = a->value != a->value, b_nan = b->value != b->value;
    if (a_nan != b_nan)
        return a_nan - b_nan;
    if (!a_nan && a->value != b->value)
        return a->value > b->value ? -1 : 1;
    return (a->id > b->id) - (a->id < b->id);
}

static PyObject *stored_top_k(PyObject *self, PyObject *args)
{
    Py_buffer scores, rows, query, lengths, scale, ids_out, values_out;
    Py_ssize_t k;
    double window;
    int kind;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*ndy*iy*y*y*w*w*", &scores, &k, &window, &rows, &kind, &query, &lengths, &scale,
                          &ids_out, &values_out))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t width = query.len / (Py_ssize_t)sizeof(double), count = scores.len / (Py_ssize_t)sizeof(float);
    Py_ssize_t row_bytes = exact_row_bytes(kind, query.len);
    if (row_bytes == 0) {
        PyErr_SetString(PyExc_ValueError, "kind must be a dequantised kind and the query whole blocks of float64");
    } else if (scores.len % (Py_ssize_t)sizeof(float) != 0 || rows.len != count * row_bytes ||
               lengths.len != count * (Py_ssize_t)sizeof(double) || scale.len != count * (Py_ssize_t)sizeof(float)) {
        PyErr_SetString(PyExc_ValueError, "scores (float32), rows, lengths (float64) and scale (float32): one per row");
    } else if (k < 1 || k > count || ids_out.len != k * (Py_ssize_t)sizeof(int64_t) ||
               values_out.len != k * (Py_ssize_t)sizeof(double)) {
        PyErr_SetString(PyExc_ValueError, "k must be between 1 and the rows, ids_out k int64 and values_out k float64");
    } else {
        /* Room for the ids kept on the way (pick_core.h drops those below the bar when it fills): a few thousand
         * where a slot per row (400 KB on GPT-2) would be mapped and unmapped by every query. */
        Py_ssize_t room = 4 * k > PICK_ROOM ? 4 * k : PICK_ROOM;
        room = room < count ? room : count;
        float *heap = PyMem_RawMalloc((size_t)k * sizeof(float));
        int64_t *ids = PyMem_RawMalloc((size_t)room * sizeof(int64_t));
        struct scored_row *scored = NULL;
        Py_ssize_t kept = -1;
        if (heap == NULL || ids == NULL) {
            PyErr_NoMemory();
        } else {
            const float *values = scores.buf, *live = scale.buf;
            const double *x = query.buf, *length = lengths.buf;
            const uint8_t *blocks = rows.buf;
            int64_t *best_ids = ids_out.buf;
            double *best_values = values_out.buf;
            float gap = (float)window; /* as numpy has it: a float32 less a Python float is a float32 */
            exact_row_function dot = exact_row();
            int short_of_memory = 0;
            Py_BEGIN_ALLOW_THREADS
            kept = pick_candidates(values, count, k, gap, heap, ids, room); /* -2: more close scores than room */
            if (kept >= 0)
                scored = malloc((size_t)kept * sizeof *scored + 1);
            if (kept >= 0 && scored == NULL)
                short_of_memory = 1;
            if (scored != NULL) {
                for (Py_ssize_t i = 0; i < kept; i++) {
                    int64_t id = ids[i];
                    double dot_product = dot(kind, blocks + id * row_bytes, width, x);
                    scored[i] = (struct scored_row){live[id] == 0.0f ? 0.0 : dot_product / length[id], id};
                }
                qsort(scored, (size_t)kept, sizeof *scored, better_first);
                if (kept > k)
                    kept = k;
                for (Py_ssize_t i = 0; i < kept; i++)
                    best_ids[i] = scored[i].id, best_values[i] = scored[i].value;
            }
            Py_END_ALLOW_THREADS
            free(scored);
            if (short_of_memory)
                PyErr_NoMemory();
            else
                result = PyLong_FromSsize_t(kept < 0 ? -1 : kept);
        }
        PyMem_RawFree(heap);
        PyMem_RawFree(ids);
    }
    PyBuffer_Release(&scores);
    PyBuffer_Release(&rows);
    PyBuffer_Release(&query);
    PyBuffer_Release(&lengths);
    PyBuffer_Release(&scale);
    PyBuffer_Release(&ids_out);
    PyBuffer_Release(&values_out);
    return result;
}

#endif
