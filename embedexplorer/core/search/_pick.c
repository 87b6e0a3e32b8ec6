/* The rows a first pass cannot rule out: every score at or above the k-th best less a window.
 *
 * ``neighbours._candidates`` in numpy partitions a sample, compares every score with the
 * bar and partitions the few kept: about ten calls, 30 microseconds on GPT-2's 50,257 scores
 * when they sit in the first cache, 70-90 right after a scan has streamed the table through
 * it, which is what a one-shot query pays (a Q4_K table's plain read takes 0.8-1.6 ms).  Here
 * it is two passes in C: the k best in a min-heap (a run of 16 scores is looked at one by one
 * only when one of them beats the heap's least), then every id at or above the bar.  The set
 * is the one numpy's gives: ids in order of id, ties and repeats counted as np.partition does.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>

#if defined(__SSE2__)
#include <emmintrin.h>
/* 16 comparisons in four instructions (what the compiler would not make of a plain loop). */
static int any_not_at_most(const float *run, float bar) /* one of 16 above bar, or NaN */
{
    __m128 b = _mm_set1_ps(bar);
    __m128 any = _mm_or_ps(_mm_or_ps(_mm_cmpnle_ps(_mm_loadu_ps(run), b), _mm_cmpnle_ps(_mm_loadu_ps(run + 4), b)),
                           _mm_or_ps(_mm_cmpnle_ps(_mm_loadu_ps(run + 8), b), _mm_cmpnle_ps(_mm_loadu_ps(run + 12), b)));
    return _mm_movemask_ps(any);
}

static int any_at_least(const float *run, float bar) /* one of 16 at or above bar */
{
    __m128 b = _mm_set1_ps(bar);
    __m128 any = _mm_or_ps(_mm_or_ps(_mm_cmpge_ps(_mm_loadu_ps(run), b), _mm_cmpge_ps(_mm_loadu_ps(run + 4), b)),
                           _mm_or_ps(_mm_cmpge_ps(_mm_loadu_ps(run + 8), b), _mm_cmpge_ps(_mm_loadu_ps(run + 12), b)));
    return _mm_movemask_ps(any);
}
#else
static int any_not_at_most(const float *run, float bar)
{
    int any = 0;
    for (int j = 0; j < 16; j++)
        any |= !(run[j] <= bar);
    return any;
}

static int any_at_least(const float *run, float bar)
{
    int any = 0;
    for (int j = 0; j < 16; j++)
        any |= run[j] >= bar;
    return any;
}
#endif

/* Push ``value`` into the min-heap of ``size`` (< k) scores, or replace its least (size == k). */
static void heap_offer(float *heap, Py_ssize_t *size, Py_ssize_t k, float value)
{
    Py_ssize_t at;
    if (*size < k) {
        at = (*size)++;
        while (at > 0 && heap[(at - 1) / 2] > value) {
            heap[at] = heap[(at - 1) / 2];
            at = (at - 1) / 2;
        }
        heap[at] = value;
        return;
    }
    if (!(value > heap[0]))
        return;
    at = 0;
    for (;;) {
        Py_ssize_t child = 2 * at + 1;
        if (child >= k)
            break;
        if (child + 1 < k && heap[child + 1] < heap[child])
            child++;
        if (!(heap[child] < value))
            break;
        heap[at] = heap[child];
        at = child;
    }
    heap[at] = value;
}

/* The k-th best of ``scores`` (k <= count), or NaN when one of them is NaN (Python decides then). */
static float kth_best(const float *scores, Py_ssize_t count, Py_ssize_t k, float *heap)
{
    Py_ssize_t size = 0, i = 0;
    for (; i < count && size < k; i++) {
        if (scores[i] != scores[i])
            return NAN;
        heap_offer(heap, &size, k, scores[i]);
    }
    for (; i + 16 <= count; i += 16) {
        /* The whole run is usually below the bar: 16 comparisons and no branch taken. */
        if (!any_not_at_most(scores + i, heap[0]))
            continue;
        for (int j = 0; j < 16; j++) {
            if (scores[i + j] != scores[i + j])
                return NAN;
            heap_offer(heap, &size, k, scores[i + j]);
        }
    }
    for (; i < count; i++) {
        if (scores[i] != scores[i])
            return NAN;
        heap_offer(heap, &size, k, scores[i]);
    }
    return heap[0];
}

static PyObject *candidates(PyObject *self, PyObject *args)
{
    Py_buffer scores, out;
    Py_ssize_t k;
    double window;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*ndw*", &scores, &k, &window, &out))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t count = scores.len / (Py_ssize_t)sizeof(float);
    if (scores.len % (Py_ssize_t)sizeof(float) != 0 || out.len != count * (Py_ssize_t)sizeof(int64_t)) {
        PyErr_SetString(PyExc_ValueError, "out must hold one int64 for each float32 score");
    } else if (k < 1 || k > count) {
        PyErr_SetString(PyExc_ValueError, "k must be between 1 and the number of scores");
    } else {
        float *heap = PyMem_RawMalloc((size_t)k * sizeof(float));
        if (heap == NULL) {
            PyErr_NoMemory();
        } else {
            const float *values = scores.buf;
            int64_t *ids = out.buf;
            Py_ssize_t kept = -1;
            Py_BEGIN_ALLOW_THREADS
            float kth = kth_best(values, count, k, heap);
            if (kth == kth) {
                /* As numpy computes it: a float32 less a Python float is a float32 (NEP 50). */
                float bar = kth - (float)window;
                kept = 0;
                Py_ssize_t i = 0;
                for (; i + 16 <= count; i += 16) {
                    if (any_at_least(values + i, bar))
                        for (int j = 0; j < 16; j++)
                            if (values[i + j] >= bar)
                                ids[kept++] = i + j;
                }
                for (; i < count; i++)
                    if (values[i] >= bar)
                        ids[kept++] = i;
            }
            Py_END_ALLOW_THREADS
            PyMem_RawFree(heap);
            result = PyLong_FromSsize_t(kept);
        }
    }
    PyBuffer_Release(&scores);
    PyBuffer_Release(&out);
    return result;
}

static PyMethodDef pick_methods[] = {
    {"candidates", candidates, METH_VARARGS,
     "candidates(scores, k, window, out)\n\n"
     "Write, in order, the ids of every float32 score at or above the k-th best less window into out\n"
     "(int64, one slot per score) and return how many; -1 when a score is NaN (nothing written\n"
     "that counts).  Runs without the GIL."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef pick_module = {
    PyModuleDef_HEAD_INIT, "_pick", "The rows a neighbour query's first pass cannot rule out.", -1, pick_methods,
};

PyMODINIT_FUNC PyInit__pick(void)
{
    return PyModule_Create(&pick_module);
}
