/* Dot products of bfloat16 rows with a float32 query: the screening pass of a neighbour query.
 *
 * A neighbour query reads the whole table once, so it runs at the speed of memory.
 * Rows rounded to bfloat16 are half the bytes of float32 ones, and widening a
 * bfloat16 to float32 is a 16-bit shift, so this pass reads half as much and keeps
 * up with memory.  Python picks the few rows that could be among the best from these
 * scores and computes their exact cosines from the float32 rows (bf16_rows.py).
 *
 * numpy has no such loop (its float16 and casting loops are 20-40 times slower), and
 * the BLAS it ships reads float32 only.  The loop is compiled three times on x86
 * (AVX-512, AVX2, plain) and the best one the CPU runs is picked once at import.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

/* Independent sums per row: enough for the compiler to fill a 512-bit register
 * without reordering any single sum. */
#define LANES 16

#if defined(__GNUC__)
#define ALWAYS_INLINE __attribute__((always_inline)) inline
#else
#define ALWAYS_INLINE __forceinline
#endif

static ALWAYS_INLINE float widen(uint16_t bits)
{
    uint32_t wide = (uint32_t)bits << 16;
    float value;
    memcpy(&value, &wide, sizeof value);
    return value;
}

static ALWAYS_INLINE void scan_rows(const uint16_t *rows, const float *query, float *out,
                                    Py_ssize_t start, Py_ssize_t stop, Py_ssize_t width)
{
    for (Py_ssize_t i = start; i < stop; i++) {
        const uint16_t *row = rows + i * width;
        float lanes[LANES] = {0};
        Py_ssize_t j = 0;
        for (; j + LANES <= width; j += LANES)
            for (int lane = 0; lane < LANES; lane++)
                lanes[lane] += widen(row[j + lane]) * query[j + lane];
        float total = 0.0f;
        for (; j < width; j++)
            total += widen(row[j]) * query[j];
        for (int lane = 0; lane < LANES; lane++)
            total += lanes[lane];
        out[i] = total;
    }
}

typedef void (*scan_function)(const uint16_t *, const float *, float *, Py_ssize_t, Py_ssize_t, Py_ssize_t);

static void scan_plain(const uint16_t *rows, const float *query, float *out,
                       Py_ssize_t start, Py_ssize_t stop, Py_ssize_t width)
{
    scan_rows(rows, query, out, start, stop, width);
}

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define SCAN_X86 1
__attribute__((target("avx512f"))) static void scan_avx512(const uint16_t *rows, const float *query, float *out,
                                                           Py_ssize_t start, Py_ssize_t stop, Py_ssize_t width)
{
    scan_rows(rows, query, out, start, stop, width);
}

__attribute__((target("avx2,fma"))) static void scan_avx2(const uint16_t *rows, const float *query, float *out,
                                                          Py_ssize_t start, Py_ssize_t stop, Py_ssize_t width)
{
    scan_rows(rows, query, out, start, stop, width);
}
#endif

static scan_function chosen_scan = scan_plain;
static const char *chosen_name = "plain";

static void choose_scan(void)
{
#ifdef SCAN_X86
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) {
        chosen_scan = scan_avx512;
        chosen_name = "avx512f";
    } else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
        chosen_scan = scan_avx2;
        chosen_name = "avx2";
    }
#endif
}

/* Rows per piece of work: ~0.8 MB at GPT-2's width, about a hundred pieces per table. */
#define CHUNK_ROWS 512
#define SPINS_BEFORE_YIELD 2000

#if defined(_MSC_VER)
#define WIN32_LEAN_AND_MEAN
#include <windows.h>
#include <intrin.h>
#define YIELD_CPU() SwitchToThread()
#define CLAIM(counter) (_InterlockedExchangeAdd64((volatile long long *)(counter), 1))
#define FINISHED(counter) (_InterlockedCompareExchange64((volatile long long *)(counter), 0, 0))
#if defined(_M_X64) || defined(_M_IX86)
#define PAUSE() _mm_pause()
#else
#define PAUSE() ((void)0)
#endif
#else
#define CLAIM(counter) (__atomic_fetch_add((counter), 1, __ATOMIC_ACQ_REL))
#define FINISHED(counter) (__atomic_load_n((counter), __ATOMIC_ACQUIRE))
#include <sched.h>
#define YIELD_CPU() sched_yield()
#if defined(__x86_64__) || defined(__i386__)
#define PAUSE() __builtin_ia32_pause()
#else
#define PAUSE() ((void)0)
#endif
#endif

/* Every thread that calls this takes the next unclaimed chunk until none is left,
 * then waits for chunks still being scanned elsewhere.  A helper thread that wakes
 * up late (an idle core of a virtual machine can take milliseconds) finds the work
 * done and returns, instead of the caller waiting for it. */
static void scan_shared(const uint16_t *rows, const float *query, float *out, Py_ssize_t count,
                        Py_ssize_t width, int64_t *progress)
{
    int64_t chunks = (count + CHUNK_ROWS - 1) / CHUNK_ROWS;
    int64_t *next = &progress[0], *done = &progress[1];
    for (int64_t chunk = CLAIM(next); chunk < chunks; chunk = CLAIM(next)) {
        Py_ssize_t start = (Py_ssize_t)chunk * CHUNK_ROWS;
        Py_ssize_t stop = start + CHUNK_ROWS < count ? start + CHUNK_ROWS : count;
        chosen_scan(rows, query, out, start, stop, width);
        CLAIM(done);
    }
    /* A chunk takes tens of microseconds: spin briefly, then let the core go, in case
     * the thread still scanning is waiting for it. */
    for (int spins = 0; FINISHED(done) < chunks; spins++) {
        if (spins < SPINS_BEFORE_YIELD)
            PAUSE();
        else
            YIELD_CPU();
    }
}

static PyObject *bf16_scores(PyObject *self, PyObject *args)
{
    Py_buffer rows, query, out, progress;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*y*w*w*", &rows, &query, &out, &progress))
        return NULL;

    PyObject *result = NULL;
    Py_ssize_t width = query.len / (Py_ssize_t)sizeof(float);
    Py_ssize_t count = out.len / (Py_ssize_t)sizeof(float);
    if (width == 0 || query.len % (Py_ssize_t)sizeof(float) != 0) {
        PyErr_SetString(PyExc_ValueError, "the query must hold at least one float32");
    } else if (rows.len != count * width * (Py_ssize_t)sizeof(uint16_t)) {
        PyErr_SetString(PyExc_ValueError, "rows must hold len(out) x len(query) bfloat16 numbers");
    } else if (progress.len != 2 * (Py_ssize_t)sizeof(int64_t) || ((uintptr_t)progress.buf % sizeof(int64_t)) != 0) {
        PyErr_SetString(PyExc_ValueError, "progress must be two aligned int64 counters (chunks claimed, finished)");
    } else {
        const uint16_t *row_data = rows.buf;
        const float *query_data = query.buf;
        float *out_data = out.buf;
        int64_t *progress_data = progress.buf;
        /* The loop touches no Python object: other threads, the window's among them, run meanwhile. */
        Py_BEGIN_ALLOW_THREADS
        scan_shared(row_data, query_data, out_data, count, width, progress_data);
        Py_END_ALLOW_THREADS
        result = Py_NewRef(Py_None);
    }
    PyBuffer_Release(&rows);
    PyBuffer_Release(&query);
    PyBuffer_Release(&out);
    PyBuffer_Release(&progress);
    return result;
}

static PyObject *bf16_round(PyObject *self, PyObject *args)
{
    Py_buffer values, out;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*w*", &values, &out))
        return NULL;

    PyObject *result = NULL;
    Py_ssize_t count = values.len / (Py_ssize_t)sizeof(float);
    if (values.len % (Py_ssize_t)sizeof(float) != 0 || out.len != count * (Py_ssize_t)sizeof(uint16_t)) {
        PyErr_SetString(PyExc_ValueError, "out must hold one uint16 for each float32 of values");
    } else {
        const float *value_data = values.buf;
        uint16_t *out_data = out.buf;
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t i = 0; i < count; i++) {
            uint32_t bits;
            memcpy(&bits, &value_data[i], sizeof bits);
            /* Adding just under half of the dropped half, plus the last kept bit, rounds to nearest-even. */
            out_data[i] = (uint16_t)((bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16);
        }
        Py_END_ALLOW_THREADS
        result = Py_NewRef(Py_None);
    }
    PyBuffer_Release(&values);
    PyBuffer_Release(&out);
    return result;
}

static PyMethodDef scan_methods[] = {
    {"bf16_round", bf16_round, METH_VARARGS,
     "bf16_round(values, out)\n\n"
     "Write the bfloat16 nearest each float32 of values (ties to even) into out, as uint16 bits."},
    {"bf16_scores", bf16_scores, METH_VARARGS,
     "bf16_scores(rows, query, out, progress)\n\n"
     "Write the dot product of each bfloat16 row (uint16 bits, C order) with the float32 query\n"
     "into out (float32), without holding the GIL.  Threads that call it with the same zeroed\n"
     "progress (two int64) share the rows; each returns once every row is done."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef scan_module = {
    PyModuleDef_HEAD_INIT, "_scan", "A bfloat16 screening pass for neighbour queries.", -1, scan_methods,
};

PyMODINIT_FUNC PyInit__scan(void)
{
    choose_scan();
    PyObject *module = PyModule_Create(&scan_module);
    if (module != NULL && PyModule_AddStringConstant(module, "INSTRUCTIONS", chosen_name) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
