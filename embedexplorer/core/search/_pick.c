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
#include <stdint.h>

#include "pick_core.h"

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
            /* As numpy computes it: a float32 less a Python float is a float32 (NEP 50). */
            float gap = (float)window;
            Py_BEGIN_ALLOW_THREADS
            kept = pick_candidates(values, count, k, gap, heap, ids, count);
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
