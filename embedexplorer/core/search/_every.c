/* Every token's nearest rows: the C half of ``core/compare/every_neighbour.py``.
 *
 * BLAS multiplies a tile of unit query rows with a tile of table rows (float32); this
 * module reads the tile once and keeps, for each query, what the exact answer needs:
 *
 *   - a min-heap of its k best screened scores so far (the k-th best is its bar),
 *   - every column scoring at or above the bar minus the window (the candidates),
 *   - with a target column: how many columns score above the target exactly: those whose
 *     screened score is surely above, and those too close to tell (the band) scored in
 *     float64 as they are read (one compare of two unrelated tables puts a hundred columns
 *     or more in the band of most queries: a list of them would fill up).
 *
 * ``pair_scores`` then gives the exact (float64) cosine of any (query, column) pairs.
 * Python proves why this misses no true neighbour (every_neighbour.py, "Why nothing is
 * missed").  Both loops touch no Python object and run without the GIL.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#if defined(__GNUC__) && defined(__x86_64__)
#define EVERY_X86 1
#include <immintrin.h>
#endif

/* What the tiles update for each query (all arrays are per query, row-major). */
struct state {
    float *heap;         /* (queries, k): the k best screened scores seen, a min-heap */
    int32_t *filled;     /* how many of the heap's slots hold a score */
    float *bar;          /* the heap's least score minus the window once full, else -inf */
    int32_t *cand_ids;   /* (queries, cap) candidate columns */
    float *cand_scores;  /* (queries, cap) their screened scores */
    int32_t *cand_count;
    const int64_t *self_ids; /* the query's own column, never its own neighbour */
    const float *t_low;  /* below the target's exact score by the screen's error, or NULL without targets */
    const float *t_high; /* above it by the screen's error */
    const double *t_exact; /* the target's exact score */
    int32_t *above;      /* columns whose exact score is above the target's */
    uint8_t *overflow;   /* 1: the query's lists filled up; Python answers it on its own */
    const float *rows;   /* the float32 table, for exact scores of band columns */
    const double *inverse; /* 1 / each row's length */
    Py_ssize_t width;
    int k, cap;
    float window;
};

static double exact_score(const struct state *st, int64_t first, int64_t second);

static int32_t prune(struct state *st, Py_ssize_t q)
{
    int32_t *ids = st->cand_ids + q * st->cap;
    float *scores = st->cand_scores + q * st->cap;
    float bar = st->bar[q];
    int32_t kept = 0;
    for (int32_t c = 0; c < st->cand_count[q]; c++) {
        if (scores[c] >= bar) {
            ids[kept] = ids[c];
            scores[kept] = scores[c];
            kept++;
        }
    }
    st->cand_count[q] = kept;
    return kept;
}

static void push_heap(struct state *st, Py_ssize_t q, float s)
{
    float *heap = st->heap + q * st->k;
    int32_t n = st->filled[q];
    int k = st->k;
    if (n < k) { /* sift up */
        int32_t i = n;
        while (i > 0 && heap[(i - 1) / 2] > s) {
            heap[i] = heap[(i - 1) / 2];
            i = (i - 1) / 2;
        }
        heap[i] = s;
        st->filled[q] = ++n;
        if (n == k)
            st->bar[q] = heap[0] - st->window;
        return;
    }
    if (!(s > heap[0]))
        return;
    int32_t i = 0; /* sift down from the root */
    for (;;) {
        int32_t child = 2 * i + 1;
        if (child >= k)
            break;
        if (child + 1 < k && heap[child + 1] < heap[child])
            child++;
        if (heap[child] >= s)
            break;
        heap[i] = heap[child];
        i = child;
    }
    heap[i] = s;
    st->bar[q] = heap[0] - st->window;
}

/* Column ``col`` scored ``s`` for query ``q``, at or above its bar or inside its target's band. */
static void consider(struct state *st, Py_ssize_t q, int64_t col, float s)
{
    if (st->overflow[q])
        return;
    if (s >= st->bar[q]) {
        int32_t n = st->cand_count[q];
        if (n == st->cap)
            n = prune(st, q);
        if (n == st->cap) {
            st->overflow[q] = 1;
            return;
        }
        st->cand_ids[q * st->cap + n] = (int32_t)col;
        st->cand_scores[q * st->cap + n] = s;
        st->cand_count[q] = n + 1;
        push_heap(st, q, s);
    }
    /* Too close to the target's score for the screen to tell: the exact scores decide. */
    if (st->t_low != NULL && s >= st->t_low[q] && s <= st->t_high[q] &&
        exact_score(st, st->self_ids[q], col) > st->t_exact[q])
        st->above[q]++;
}

/* One score as both passes see it: a column whose scale is 0 points nowhere and scores 0. */
static inline float scaled(float product, float scale)
{
    return scale == 0.0f ? 0.0f : product * scale;
}

/* The tile's row i is query ``q_row``; with ``q_col`` >= 0 its column j is also query q_col + j
 * (the table times itself: the tile's transpose is another tile's scores), whose column is row_id. */
static void tile_row_plain(struct state *st, const float *line, const float *scale, Py_ssize_t cols,
                           Py_ssize_t q_row, int64_t col_id0, Py_ssize_t q_col, int64_t row_id)
{
    int64_t self = st->self_ids[q_row];
    for (Py_ssize_t j = 0; j < cols; j++) {
        float s = scaled(line[j], scale[j]);
        if (col_id0 + j != self) {
            if (st->t_low != NULL && s > st->t_high[q_row])
                st->above[q_row]++;
            if (s >= st->bar[q_row] || (st->t_low != NULL && s >= st->t_low[q_row] && s <= st->t_high[q_row]))
                consider(st, q_row, col_id0 + j, s);
        }
        if (q_col >= 0) {
            Py_ssize_t q = q_col + j;
            if (st->t_low != NULL && s > st->t_high[q])
                st->above[q]++;
            if (s >= st->bar[q] || (st->t_low != NULL && s >= st->t_low[q] && s <= st->t_high[q]))
                consider(st, q, row_id, s);
        }
    }
}

#ifdef EVERY_X86
__attribute__((target("avx512f,popcnt"))) static void tile_row_avx512(struct state *st, const float *line,
                                                                       const float *scale, Py_ssize_t cols,
                                                                       Py_ssize_t q_row, int64_t col_id0,
                                                                       Py_ssize_t q_col, int64_t row_id)
{
    int64_t self = st->self_ids[q_row] - col_id0;
    int targets = st->t_low != NULL;
    __m512 zero = _mm512_setzero_ps();
    for (Py_ssize_t j = 0; j < cols; j += 16) {
        __mmask16 lanes = cols - j >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (cols - j)) - 1u);
        __m512 sc = _mm512_maskz_loadu_ps(lanes, scale + j);
        __m512 s = _mm512_mul_ps(_mm512_maskz_loadu_ps(lanes, line + j), sc);
        s = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(sc, zero, _CMP_EQ_OQ), s, zero);
        __mmask16 mine = lanes;
        if (self >= j && self < j + 16)
            mine &= (__mmask16)~(1u << (self - j));
        /* This row's query: one bar, one target. */
        __mmask16 hits = _mm512_mask_cmp_ps_mask(mine, s, _mm512_set1_ps(st->bar[q_row]), _CMP_GE_OQ);
        if (targets) {
            __mmask16 high = _mm512_mask_cmp_ps_mask(mine, s, _mm512_set1_ps(st->t_high[q_row]), _CMP_GT_OQ);
            st->above[q_row] += __builtin_popcount(high);
            hits |= _mm512_mask_cmp_ps_mask(mine & ~high, s, _mm512_set1_ps(st->t_low[q_row]), _CMP_GE_OQ);
        }
        if (hits) {
            float values[16];
            _mm512_storeu_ps(values, s);
            for (unsigned bits = hits; bits; bits &= bits - 1) {
                int lane = __builtin_ctz(bits);
                consider(st, q_row, col_id0 + j + lane, values[lane]);
            }
        }
        if (q_col < 0)
            continue;
        /* The transposed tile: lane j is query q_col + j, with its own bar and target. */
        Py_ssize_t q = q_col + j;
        __mmask16 theirs = _mm512_mask_cmp_ps_mask(lanes, s, _mm512_maskz_loadu_ps(lanes, st->bar + q), _CMP_GE_OQ);
        if (targets) {
            __m512 t_high = _mm512_maskz_loadu_ps(lanes, st->t_high + q);
            __mmask16 high = _mm512_mask_cmp_ps_mask(lanes, s, t_high, _CMP_GT_OQ);
            __m512i counts = _mm512_maskz_loadu_epi32(lanes, st->above + q);
            counts = _mm512_mask_add_epi32(counts, high, counts, _mm512_set1_epi32(1));
            _mm512_mask_storeu_epi32(st->above + q, lanes, counts);
            __m512 t_low = _mm512_maskz_loadu_ps(lanes, st->t_low + q);
            theirs |= _mm512_mask_cmp_ps_mask(lanes & ~high, s, t_low, _CMP_GE_OQ);
        }
        if (theirs) {
            float values[16];
            _mm512_storeu_ps(values, s);
            for (unsigned bits = theirs; bits; bits &= bits - 1) {
                int lane = __builtin_ctz(bits);
                consider(st, q + lane, row_id, values[lane]);
            }
        }
    }
}
#endif

typedef void (*tile_row_function)(struct state *, const float *, const float *, Py_ssize_t, Py_ssize_t, int64_t,
                                  Py_ssize_t, int64_t);
static tile_row_function chosen_tile_row = tile_row_plain;

/* Exact cosines: float32 products are exact in float64; the sum runs in eight float64
 * lanes in one fixed order, so equal rows give equal scores wherever they sit. */
#define PAIR_LANES 8
#define DEFINE_PAIRS(NAME, ATTRIBUTE)                                                                   \
    ATTRIBUTE static void NAME(const float *rows, const double *inverse, Py_ssize_t width,                \
                               const int64_t *first, const int64_t *second, double *out, Py_ssize_t count) \
    {                                                                                                   \
        for (Py_ssize_t p = 0; p < count; p++) {                                                        \
            double scale_a = inverse[first[p]], scale_b = inverse[second[p]];                           \
            if (scale_a == 0.0 || scale_b == 0.0) {                                                     \
                out[p] = 0.0;                                                                           \
                continue;                                                                               \
            }                                                                                           \
            const float *a = rows + first[p] * width, *b = rows + second[p] * width;                    \
            double lanes[PAIR_LANES] = {0};                                                             \
            Py_ssize_t j = 0;                                                                           \
            for (; j + PAIR_LANES <= width; j += PAIR_LANES)                                            \
                for (int lane = 0; lane < PAIR_LANES; lane++)                                           \
                    lanes[lane] += (double)a[j + lane] * (double)b[j + lane];                           \
            double total = 0.0;                                                                         \
            for (; j < width; j++)                                                                      \
                total += (double)a[j] * (double)b[j];                                                   \
            for (int lane = 0; lane < PAIR_LANES; lane++)                                               \
                total += lanes[lane];                                                                   \
            out[p] = total * scale_a * scale_b;                                                         \
        }                                                                                               \
    }

/* -ffp-contract=off: a fused multiply-add would round differently in the two builds. */
DEFINE_PAIRS(pairs_plain, )
#ifdef EVERY_X86
DEFINE_PAIRS(pairs_avx512, __attribute__((target("avx512f"), optimize("fp-contract=off"))))
#endif
/* Each float32 row's sum of squares in float64 (squares of float32 numbers are exact in float64). */
#define DEFINE_SQUARES(NAME, ATTRIBUTE)                                                                 \
    ATTRIBUTE static void NAME(const float *rows, Py_ssize_t width, double *out, Py_ssize_t count)        \
    {                                                                                                   \
        for (Py_ssize_t i = 0; i < count; i++) {                                                        \
            const float *a = rows + i * width;                                                          \
            double lanes[PAIR_LANES] = {0};                                                             \
            Py_ssize_t j = 0;                                                                           \
            for (; j + PAIR_LANES <= width; j += PAIR_LANES)                                            \
                for (int lane = 0; lane < PAIR_LANES; lane++)                                           \
                    lanes[lane] += (double)a[j + lane] * (double)a[j + lane];                           \
            double total = 0.0;                                                                         \
            for (; j < width; j++)                                                                      \
                total += (double)a[j] * (double)a[j];                                                   \
            for (int lane = 0; lane < PAIR_LANES; lane++)                                               \
                total += lanes[lane];                                                                   \
            out[i] = total;                                                                             \
        }                                                                                               \
    }

DEFINE_SQUARES(squares_plain, )
#ifdef EVERY_X86
DEFINE_SQUARES(squares_avx512, __attribute__((target("avx512f"), optimize("fp-contract=off"))))
#endif
typedef void (*squares_function)(const float *, Py_ssize_t, double *, Py_ssize_t);
static squares_function chosen_squares = squares_plain;

typedef void (*pairs_function)(const float *, const double *, Py_ssize_t, const int64_t *, const int64_t *,
                               double *, Py_ssize_t);
static pairs_function chosen_pairs = pairs_plain;
static const char *chosen_name = "plain";

static double exact_score(const struct state *st, int64_t first, int64_t second)
{
    double out;
    chosen_pairs(st->rows, st->inverse, st->width, &first, &second, &out, 1);
    return out;
}

static int sized(Py_buffer *buffer, Py_ssize_t items, Py_ssize_t item, const char *name)
{
    if (buffer->len != items * item) {
        PyErr_Format(PyExc_ValueError, "%s holds %zd bytes, not %zd", name, buffer->len, items * item);
        return 0;
    }
    return 1;
}

static PyObject *screen_tile(PyObject *self, PyObject *args)
{
    (void)self;
    Py_buffer b[16];
    Py_ssize_t rows, cols, q_row0, q_col0, queries, width, count;
    long long col_id0, row_id0;
    int k, cap, targets;
    float window;
    memset(b, 0, sizeof b);
    /* tile, scale, heap, filled, bar, cand_ids, cand_scores, cand_count, self_ids,
     * t_low, t_high, t_exact, above, overflow, table, inverse */
    if (!PyArg_ParseTuple(args, "y*nny*nLnLiifpw*w*w*w*w*w*y*y*y*y*w*w*y*ny*", &b[0], &rows, &cols, &b[1], &q_row0,
                          &col_id0, &q_col0, &row_id0, &k, &cap, &window, &targets, &b[2], &b[3], &b[4], &b[5],
                          &b[6], &b[7], &b[8], &b[9], &b[10], &b[11], &b[12], &b[13], &b[14], &width, &b[15]))
        return NULL;
    PyObject *result = NULL;
    queries = b[3].len / (Py_ssize_t)sizeof(int32_t);
    count = b[15].len / (Py_ssize_t)sizeof(double);
    if (k < 1 || cap < k || width < 1 || rows < 0 || cols < 0 || q_row0 < 0 || q_row0 + rows > queries ||
        (q_col0 >= 0 && q_col0 + cols > queries) || col_id0 < 0 || col_id0 + cols > count ||
        (q_col0 >= 0 && (row_id0 < 0 || row_id0 + rows > count))) {
        PyErr_SetString(PyExc_ValueError, "the tile does not fit the queries' state or the table");
    } else if (sized(&b[0], rows * cols, 4, "tile") && sized(&b[1], cols, 4, "scale") &&
               sized(&b[2], queries * k, 4, "heap") && sized(&b[4], queries, 4, "bar") &&
               sized(&b[5], queries * cap, 4, "cand_ids") && sized(&b[6], queries * cap, 4, "cand_scores") &&
               sized(&b[7], queries, 4, "cand_count") && sized(&b[8], queries, 8, "self_ids") &&
               sized(&b[9], queries, 4, "t_low") && sized(&b[10], queries, 4, "t_high") &&
               sized(&b[11], queries, 8, "t_exact") && sized(&b[12], queries, 4, "above") &&
               sized(&b[13], queries, 1, "overflow") && sized(&b[14], count * width, 4, "table")) {
        const int64_t *self_ids = b[8].buf;
        int inside = 1;
        for (Py_ssize_t q = 0; q < queries && inside; q++)
            inside = self_ids[q] >= 0 && self_ids[q] < count;
        if (!inside) {
            PyErr_SetString(PyExc_IndexError, "a query names a row outside the table");
        } else {
            struct state st = {b[2].buf, b[3].buf, b[4].buf, b[5].buf, b[6].buf, b[7].buf, b[8].buf,
                               targets ? b[9].buf : NULL, b[10].buf, b[11].buf, b[12].buf, b[13].buf, b[14].buf,
                               b[15].buf, width, k, cap, window};
            const float *tile = b[0].buf, *scale = b[1].buf;
            Py_BEGIN_ALLOW_THREADS
            for (Py_ssize_t i = 0; i < rows; i++)
                chosen_tile_row(&st, tile + i * cols, scale, cols, q_row0 + i, (int64_t)col_id0, q_col0,
                                (int64_t)row_id0 + i);
            Py_END_ALLOW_THREADS
            result = Py_NewRef(Py_None);
        }
    }
    for (int i = 0; i < 16; i++)
        PyBuffer_Release(&b[i]);
    return result;
}

static PyObject *pair_scores(PyObject *self, PyObject *args)
{
    (void)self;
    Py_buffer rows, inverse, first, second, out;
    Py_ssize_t width;
    if (!PyArg_ParseTuple(args, "y*ny*y*y*w*", &rows, &width, &inverse, &first, &second, &out))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t count = inverse.len / (Py_ssize_t)sizeof(double);
    Py_ssize_t pairs = out.len / (Py_ssize_t)sizeof(double);
    if (width < 1 || !sized(&rows, count * width, 4, "rows") || !sized(&first, pairs, 8, "first") ||
        !sized(&second, pairs, 8, "second")) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "width must be at least 1");
    } else {
        const int64_t *a = first.buf, *b = second.buf;
        int inside = 1;
        for (Py_ssize_t p = 0; p < pairs && inside; p++)
            inside = a[p] >= 0 && a[p] < count && b[p] >= 0 && b[p] < count;
        if (!inside) {
            PyErr_SetString(PyExc_IndexError, "a pair names a row outside the table");
        } else {
            Py_BEGIN_ALLOW_THREADS
            chosen_pairs(rows.buf, inverse.buf, width, a, b, out.buf, pairs);
            Py_END_ALLOW_THREADS
            result = Py_NewRef(Py_None);
        }
    }
    PyBuffer_Release(&rows);
    PyBuffer_Release(&inverse);
    PyBuffer_Release(&first);
    PyBuffer_Release(&second);
    PyBuffer_Release(&out);
    return result;
}

static PyObject *row_squares(PyObject *self, PyObject *args)
{
    (void)self;
    Py_buffer rows, out;
    Py_ssize_t width;
    if (!PyArg_ParseTuple(args, "y*nw*", &rows, &width, &out))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t count = out.len / (Py_ssize_t)sizeof(double);
    if (width < 1) {
        PyErr_SetString(PyExc_ValueError, "width must be at least 1");
    } else if (sized(&rows, count * width, 4, "rows")) {
        Py_BEGIN_ALLOW_THREADS
        chosen_squares(rows.buf, width, out.buf, count);
        Py_END_ALLOW_THREADS
        result = Py_NewRef(Py_None);
    }
    PyBuffer_Release(&rows);
    PyBuffer_Release(&out);
    return result;
}

static PyMethodDef every_methods[] = {
    {"row_squares", row_squares, METH_VARARGS,
     "row_squares(rows, width, out)\n\n"
     "out[i] = the sum of squares of float32 row i, in float64 (eight lanes, one fixed order); without the GIL."},
    {"screen_tile", screen_tile, METH_VARARGS,
     "screen_tile(tile, rows, cols, scale, q_row0, col_id0, q_col0, row_id0, k, cap, window, targets,\n"
     "            heap, filled, bar, cand_ids, cand_scores, cand_count, self_ids, t_low, t_high, t_exact,\n"
     "            above, overflow, table, width, inverse)\n\n"
     "Read a (rows, cols) float32 tile of products, each column times scale (0: the score is 0):\n"
     "row i is query q_row0 + i against column col_id0 + j; with q_col0 >= 0, column j is also\n"
     "query q_col0 + j against column row_id0 + i.  Updates each query's heap, bar, candidates,\n"
     "and with targets its count of columns above the target (the band scored exactly from table).\n"
     "Runs without the GIL."},
    {"pair_scores", pair_scores, METH_VARARGS,
     "pair_scores(rows, width, inverse, first, second, out)\n\n"
     "out[p] = (rows[first[p]] . rows[second[p]]) * inverse[first[p]] * inverse[second[p]] in float64\n"
     "(0 where either inverse is 0), from float32 rows; without the GIL."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef every_module = {
    PyModuleDef_HEAD_INIT, "_every", "Screened tiles and exact pair scores for every token's neighbours.", -1,
    every_methods,
};

PyMODINIT_FUNC PyInit__every(void)
{
#ifdef EVERY_X86
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) {
        chosen_tile_row = tile_row_avx512;
        chosen_pairs = pairs_avx512;
        chosen_squares = squares_avx512;
        chosen_name = "avx512f";
    }
#endif
    PyObject *module = PyModule_Create(&every_module);
    if (module != NULL && PyModule_AddStringConstant(module, "INSTRUCTIONS", chosen_name) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
