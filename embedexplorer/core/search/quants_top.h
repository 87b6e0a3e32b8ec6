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

/* A first pass's scores and what the exact pass reads: stored_top_k's and bytes_search's. */
struct top_rows_job {
    const float *scores; /* one per row */
    Py_ssize_t count, k;
    float gap; /* the window below the k-th best, as numpy has it: a float32 less a Python float is a float32 */
    int kind;
    const uint8_t *blocks;
    Py_ssize_t row_bytes, width;
    const double *query;  /* float64, width numbers */
    const float *live;    /* each row's scale: 0 for a row pointing nowhere */
    const double *length; /* each row's float64 length */
};

/* The k best rows among those the first pass cannot rule out, by their exact scores, best first, ties by id, into
 * best_ids and best_values; how many (k, or fewer rows); -1 when a score is NaN or more scores are that close than
 * the room kept for them (Python decides then), -3 when memory ran out.  Touches no Python object. */
static Py_ssize_t top_rows(const struct top_rows_job *t, int64_t *best_ids, double *best_values)
{
    Py_ssize_t room = 4 * t->k > PICK_ROOM ? 4 * t->k : PICK_ROOM;
    room = room < t->count ? room : t->count;
    /* Room for the ids kept on the way (pick_core.h drops those below the bar when it fills): a few thousand
     * where a slot per row (400 KB on GPT-2) would be mapped and unmapped by every query. */
    float *heap = malloc((size_t)t->k * sizeof(float));
    int64_t *ids = malloc((size_t)room * sizeof(int64_t));
    struct scored_row *scored = NULL;
    Py_ssize_t kept = -3;
    if (heap != NULL && ids != NULL)
        kept = pick_candidates(t->scores, t->count, t->k, t->gap, heap, ids, room); /* -2: more than room */
    if (kept == -2)
        kept = -1;
    if (kept >= 0 && (scored = malloc((size_t)kept * sizeof *scored + 1)) == NULL)
        kept = -3;
    if (kept >= 0) {
        exact_row_function dot = exact_row();
        for (Py_ssize_t i = 0; i < kept; i++) {
            int64_t id = ids[i];
            double dot_product = dot(t->kind, t->blocks + id * t->row_bytes, t->width, t->query);
            scored[i] = (struct scored_row){t->live[id] == 0.0f ? 0.0 : dot_product / t->length[id], id};
        }
        qsort(scored, (size_t)kept, sizeof *scored, better_first);
        if (kept > t->k)
            kept = t->k;
        for (Py_ssize_t i = 0; i < kept; i++)
            best_ids[i] = scored[i].id, best_values[i] = scored[i].value;
    }
    free(scored);
    free(heap);
    free(ids);
    return kept;
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
        struct top_rows_job job = {scores.buf, count, k, (float)window, kind, rows.buf, row_bytes, width,
                                   query.buf, scale.buf, lengths.buf};
        Py_ssize_t kept;
        Py_BEGIN_ALLOW_THREADS
        kept = top_rows(&job, ids_out.buf, values_out.buf);
        Py_END_ALLOW_THREADS
        result = kept == -3 ? PyErr_NoMemory() : PyLong_FromSsize_t(kept);
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
