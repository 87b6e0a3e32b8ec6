/* The rows a first pass cannot rule out: every score at or above the k-th best less a window.
 *
 * ``neighbours._candidates`` in numpy partitions a sample, compares every score with the
 * bar and partitions the few kept: about ten calls, 30 microseconds on GPT-2's 50,257 scores
 * when they sit in the first cache, 70-90 right after a scan has streamed the table through
 * it, which is what a one-shot query pays (a Q4_K table's plain read takes 0.8-1.6 ms).  Here
 * it is one pass in C: the k best in a min-heap, and the id of every score at or above the bar
 * so far (a run of 16 scores is looked at one by one only when one of them reaches it), then
 * the few ids kept on the way that fall below the last bar are dropped (two passes took 8.6-9.1 us
 * on 50,257 scores in the cache, this one 4.6-4.9).  The set is the one numpy's gives: ids in
 * order of id, ties and repeats counted as np.partition does.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>

#if defined(__GNUC__)
#define ALWAYS_INLINE __attribute__((always_inline)) inline
#else
#define ALWAYS_INLINE __forceinline
#endif

#if defined(__SSE2__)
#include <emmintrin.h>
/* 16 comparisons in four instructions (what the compiler would not make of a plain loop). */
static int any_not_below(const float *run, float bar) /* one of 16 at or above bar, or NaN */
{
    __m128 b = _mm_set1_ps(bar);
    __m128 any = _mm_or_ps(_mm_or_ps(_mm_cmpnlt_ps(_mm_loadu_ps(run), b), _mm_cmpnlt_ps(_mm_loadu_ps(run + 4), b)),
                           _mm_or_ps(_mm_cmpnlt_ps(_mm_loadu_ps(run + 8), b), _mm_cmpnlt_ps(_mm_loadu_ps(run + 12), b)));
    return _mm_movemask_ps(any);
}
#else
static int any_not_below(const float *run, float bar)
{
    int any = 0;
    for (int j = 0; j < 16; j++)
        any |= !(run[j] < bar);
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

/* One score into the heap, and its id into ids when it is at or above the bar of the heap so far. */
static ALWAYS_INLINE void offer_and_keep(float *heap, Py_ssize_t *size, Py_ssize_t k, float value, float window,
                                         Py_ssize_t id, int64_t *ids, Py_ssize_t *kept)
{
    heap_offer(heap, size, k, value);
    if (*size < k || value >= heap[0] - window)
        ids[(*kept)++] = id;
}

/* The k-th best of ``scores`` (k <= count), and in ids, in order, every id whose score was at or above the
 * bar (the k-th best so far less window) when it was read: that bar only rises, so every id at or above the
 * last one is among them.  Returns how many were kept, or -1 when a score is NaN (Python decides then). */
static Py_ssize_t kth_best_and_kept(const float *scores, Py_ssize_t count, Py_ssize_t k, float window, float *heap,
                                    float *kth, int64_t *ids)
{
    Py_ssize_t size = 0, kept = 0, i = 0;
    for (; i < count && size < k; i++) {
        if (scores[i] != scores[i])
            return -1;
        offer_and_keep(heap, &size, k, scores[i], window, i, ids, &kept);
    }
    for (; i + 16 <= count; i += 16) {
        /* The whole run is usually below the bar: 16 comparisons and no branch taken. */
        if (!any_not_below(scores + i, heap[0] - window))
            continue;
        for (int j = 0; j < 16; j++) {
            if (scores[i + j] != scores[i + j])
                return -1;
            offer_and_keep(heap, &size, k, scores[i + j], window, i + j, ids, &kept);
        }
    }
    for (; i < count; i++) {
        if (scores[i] != scores[i])
            return -1;
        offer_and_keep(heap, &size, k, scores[i], window, i, ids, &kept);
    }
    *kth = heap[0];
    return kept;
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
            /* As numpy computes it: a float32 less a Python float is a float32 (NEP 50). */
            float kth = 0.0f, gap = (float)window;
            kept = kth_best_and_kept(values, count, k, gap, heap, &kth, ids);
            if (kept >= 0) { /* the ids kept on the way, less those below the last bar */
                float bar = kth - gap;
                Py_ssize_t still = 0;
                for (Py_ssize_t i = 0; i < kept; i++)
                    if (values[ids[i]] >= bar)
                        ids[still++] = ids[i];
                kept = still;
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
