/* What the C passes over a table share: helpers for 16-bit numbers and the sharing of a
 * pass's chunks of rows between threads (included by _scan.c and _quants.c). */
#ifndef EMBEDEXPLORER_SCAN_COMMON_H
#define EMBEDEXPLORER_SCAN_COMMON_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#if defined(__GNUC__)
#define ALWAYS_INLINE __attribute__((always_inline)) inline
#else
#define ALWAYS_INLINE __forceinline
#endif

/* float16 -> float32 without branches (after Maratos' FP16 library): normal numbers are
 * shifted into place and rescaled, subnormals are built by subtracting a magic number. */
static ALWAYS_INLINE float widen_half(uint16_t bits)
{
    uint32_t w = (uint32_t)bits << 16;
    uint32_t sign = w & 0x80000000u;
    uint32_t two_w = w + w;
    uint32_t normal_bits = (two_w >> 4) + (0xE0u << 23);
    float normal, subnormal;
    memcpy(&normal, &normal_bits, sizeof normal);
    normal *= 0x1.0p-112f;
    uint32_t subnormal_bits = (two_w >> 17) | (126u << 23);
    memcpy(&subnormal, &subnormal_bits, sizeof subnormal);
    subnormal -= 0.5f;
    uint32_t normal_out, subnormal_out;
    memcpy(&normal_out, &normal, sizeof normal_out);
    memcpy(&subnormal_out, &subnormal, sizeof subnormal_out);
    /* All ones where the number is subnormal: a select without a branch, so loops vectorise. */
    uint32_t tiny = 0u - (uint32_t)(two_w < (1u << 27));
    uint32_t chosen = (subnormal_out & tiny) | (normal_out & ~tiny);
    chosen |= sign;
    float value;
    memcpy(&value, &chosen, sizeof value);
    return value;
}

/* How far ahead of the row being scanned the AVX-512 scans ask for rows: a page.  The hardware's
 * prefetcher stops at each 4 KB page, and a virtual machine's page walks are slow; asking early
 * hid them.  One core's time, at load 2-8: GPT-2-shaped Q8_0 2.9-3.7 ms without, 2.4-2.6 ms
 * with; bfloat16 5.5-6.2 ms, 3.0-3.7 ms; float16 5.2-5.8 ms, 3.5-3.6 ms; the Qwen2-7B-sized
 * bfloat16 and float16 tables 105-110 ms, 88-93 ms (16 KB ahead was slower, and asking for the
 * lines to skip the second-level cache much slower). */
#define PREFETCH_BYTES 4096

static ALWAYS_INLINE void prefetch_row(const void *row, Py_ssize_t bytes)
{
#if defined(__GNUC__)
    for (Py_ssize_t at = 0; at < bytes; at += 64)
        __builtin_prefetch((const char *)row + at, 0, 3);
#else
    (void)row, (void)bytes;
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

/* One piece of a pass: rows start .. stop - 1 of the job. */
typedef void (*chunk_function)(const void *job, Py_ssize_t start, Py_ssize_t stop);

/* Every thread that calls this takes the next unclaimed chunk until none is left,
 * then waits for chunks still being scanned elsewhere.  A helper thread that wakes
 * up late (an idle core of a virtual machine can take milliseconds) finds the work
 * done and returns, instead of the caller waiting for it. */
static void share_chunks(chunk_function run_chunk, const void *job, Py_ssize_t count, int64_t *progress)
{
    int64_t chunks = (count + CHUNK_ROWS - 1) / CHUNK_ROWS;
    int64_t *next = &progress[0], *done = &progress[1];
    for (int64_t chunk = CLAIM(next); chunk < chunks; chunk = CLAIM(next)) {
        Py_ssize_t start = (Py_ssize_t)chunk * CHUNK_ROWS;
        Py_ssize_t stop = start + CHUNK_ROWS < count ? start + CHUNK_ROWS : count;
        run_chunk(job, start, stop);
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

static int check_progress(Py_buffer *progress)
{
    if (progress->len != 2 * (Py_ssize_t)sizeof(int64_t) || ((uintptr_t)progress->buf % sizeof(int64_t)) != 0) {
        PyErr_SetString(PyExc_ValueError, "progress must be two aligned int64 counters (chunks claimed, finished)");
        return 0;
    }
    return 1;
}

/* share_chunks with the GIL released: the loops touch no Python object, so other threads,
 * the window's among them, run meanwhile.  Returns a new reference to None. */
static PyObject *share_chunks_released(chunk_function run_chunk, const void *job, Py_ssize_t count,
                                       Py_buffer *progress)
{
    int64_t *counters = progress->buf;
    Py_BEGIN_ALLOW_THREADS
    share_chunks(run_chunk, job, count, counters);
    Py_END_ALLOW_THREADS
    return Py_NewRef(Py_None);
}

#endif
