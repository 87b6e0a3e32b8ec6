/* One entry for every copy of a table's rows sixteen at a time that is made per kind (included by
 * _quants.c once, after the headers of the five families it names): the 32-number kinds
 * (quants_groups32.h), IQ4_XS, TQ2_0 and MXFP4 (quants_lookup.h), NVFP4, TQ1_0 and the IQ3s
 * (quants_fp4_ternary.h), the IQ1/IQ2 grid kinds (quants_iq.h), Q2_K and Q3_K (quants_groups_q2q3.h).
 * Each family lays its copy out its own way; what they share is checked here, once: the kind, whole
 * blocks of rows, and an output of exactly the copy's size.  (Q4_K's, Q5_K's and Q6_K's copies, one
 * kind each, keep their own entries.) */
#ifndef EMBEDEXPLORER_QUANTS_GROUP_COPY_H
#define EMBEDEXPLORER_QUANTS_GROUP_COPY_H

static int low_bit_kind(int kind)
{
    return kind == KIND_Q2_K || kind == KIND_Q3_K;
}

static Py_ssize_t block32_groups_bytes(int kind, Py_ssize_t count, Py_ssize_t width)
{
    return (count + GROUP32_ROWS - 1) / GROUP32_ROWS * (width / 32) * GROUP32_BYTES(kind);
}

static Py_ssize_t iq_groups_bytes(int kind, Py_ssize_t count, Py_ssize_t width)
{
    return (count + GROUP_ROWS - 1) / GROUP_ROWS * (width / 256) * iq_group_block_bytes(kind);
}

static Py_ssize_t low_bit_groups_bytes(int kind, Py_ssize_t count, Py_ssize_t width)
{
    return (count + GROUP_ROWS - 1) / GROUP_ROWS * (width / 256) * low_bit_group_size(kind);
}

struct copy_family {
    int (*holds)(int kind);
    Py_ssize_t (*bytes)(int kind, Py_ssize_t count, Py_ssize_t width); /* the copy of count rows */
    chunk_function copy_chunk;                                          /* rows of a kind_group_job */
};

static const struct copy_family COPY_FAMILIES[] = {
    {is_grouped32, block32_groups_bytes, group32_chunk},
    {lookup_kind, lookup_groups_bytes, lookup_group_chunk},
    {fp4t_kind, fp4t_groups_bytes, fp4t_group_chunk},
    {iq_kind, iq_groups_bytes, iq_group_chunk},
    {low_bit_kind, low_bit_groups_bytes, low_bit_group_chunk},
};

/* The family that copies kind's rows, or NULL. */
static const struct copy_family *copy_family_of(int kind)
{
    if (kind < 0 || kind >= KINDS || BLOCK_NUMBERS[kind] == 0)
        return NULL;
    for (size_t f = 0; f < sizeof COPY_FAMILIES / sizeof COPY_FAMILIES[0]; f++)
        if (COPY_FAMILIES[f].holds(kind))
            return &COPY_FAMILIES[f];
    return NULL;
}

static const char NO_COPY[] = "kind must be 0-1 or 5-8 (32-number blocks), 9-10 (Q2_K, Q3_K), 11-13 (IQ4_XS, TQ2_0, "
                              "MXFP4), 14-17 (NVFP4, TQ1_0, IQ3_XXS, IQ3_S) or 18-22 (IQ1/IQ2)";

static PyObject *copy_groups(PyObject *self, PyObject *args)
{
    Py_buffer rows, out, progress;
    int kind;
    Py_ssize_t width;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*inw*w*", &rows, &kind, &width, &out, &progress))
        return NULL;
    PyObject *result = NULL;
    const struct copy_family *family = copy_family_of(kind);
    if (family == NULL) {
        PyErr_SetString(PyExc_ValueError, NO_COPY);
    } else {
        Py_ssize_t blocks = width / BLOCK_NUMBERS[kind];
        Py_ssize_t count = blocks > 0 ? rows.len / (blocks * BLOCK_BYTES[kind]) : 0;
        if (width <= 0 || width % BLOCK_NUMBERS[kind] != 0 || rows.len != count * blocks * BLOCK_BYTES[kind] ||
            out.len != family->bytes(kind, count, width)) {
            PyErr_SetString(PyExc_ValueError, "out must hold the groups of every 16 rows of width numbers");
        } else if (check_progress(&progress)) {
            struct kind_group_job job = {kind, rows.buf, count, blocks, out.buf};
            result = share_chunks_released(family->copy_chunk, &job, count, &progress);
        }
    }
    PyBuffer_Release(&rows);
    PyBuffer_Release(&out);
    PyBuffer_Release(&progress);
    return result;
}

static PyObject *groups_size(PyObject *self, PyObject *args)
{
    int kind;
    Py_ssize_t count, width;
    (void)self;
    if (!PyArg_ParseTuple(args, "inn", &kind, &count, &width))
        return NULL;
    const struct copy_family *family = copy_family_of(kind);
    if (family == NULL) {
        PyErr_SetString(PyExc_ValueError, NO_COPY);
        return NULL;
    }
    if (width <= 0 || width % BLOCK_NUMBERS[kind] != 0 || count < 0) {
        PyErr_SetString(PyExc_ValueError, "width must be a whole number of the kind's blocks, count at least 0");
        return NULL;
    }
    return PyLong_FromSsize_t(family->bytes(kind, count, width));
}

#endif
