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
 * lines to skip the second-level cache much slower).  Those rows' scans ask for one line a page
 * (prefetch_pages), which starts each page's walk, not for every line of a row at once: on a Zen 4 EPYC
 * (7 December, one core, the Qwen2-7B-sized float16 scan, medians of 41 in turns) every line took 87.7 ms,
 * a line a page 61.5-63.3 ms, none 60.1 ms: a burst of a row's 112 requests held up the loads that needed
 * them. */
#define PREFETCH_BYTES 4096
/* The same for the copies of quantised rows sixteen at a time (quants_*.h's grouped scans): two pages.  Side
 * by side with one page, three runs each (GPT-2-shaped, two threads, the query over a plain read of the
 * stored bytes): IQ3_XXS 1.09-1.17x against 1.23-1.55x, IQ3_S 0.95-1.09x against 1.16-1.21x, IQ4_XS
 * 0.75-0.85x against 0.94-1.02x, the others alike; one core's Qwen2-7B-sized scan: IQ4_XS 9.1 ms against
 * 10.5, Q4_0 8.8-9.4 against 10.1-10.3, TQ2_0 4.4-4.7 against 5.6-5.9 (two threads: alike, memory-bound).
 * The Q6_K, Q5_K, Q2_K, Q3_K and 1-2-bit grid scans ask for their block ahead a part at a time between their
 * steps (prefetch_part), not all of it before them: on a Zen 4 EPYC (7 December, two runs in turns with the
 * code before, one thread) Qwen2-7B-sized Q5_K 42-53 -> 15-20 ms, IQ1_S 17-18 -> 9.5-9.7, IQ2_S 19-21 -> 12-14,
 * Q3_K 25-26 -> 18-20; GPT-2-shaped Q5_K 2.9-3.1 -> 1.1-1.4 ms, Q6_K 3.2 -> 1.6-2.1. */
#define GROUPS_PREFETCH_BYTES 8192

/* A copy larger than this is streamed from memory, not read from a last-level cache (32 MB on a Zen 4 EPYC's core
 * complex; a virtual machine's own figure is not to be trusted: 320 MB here): where a scan asks for its lines ahead
 * differs (prefetch_row_ahead). */
#define FAR_COPY_BYTES ((Py_ssize_t)64 << 20)

static ALWAYS_INLINE int far_copy(Py_ssize_t bytes)
{
    return bytes > FAR_COPY_BYTES;
}

/* One request every `stride` bytes of the `bytes` at `at` (the ways below differ only in which lines, and where to:
 * the first-level cache, or with `second_level` the second only). */
static ALWAYS_INLINE void prefetch_every(const void *at, Py_ssize_t bytes, Py_ssize_t stride, int second_level)
{
#if defined(__GNUC__)
    for (Py_ssize_t offset = 0; offset < bytes; offset += stride)
        if (second_level) /* a constant where inlined: __builtin_prefetch takes none other */
            __builtin_prefetch((const char *)at + offset, 0, 1);
        else
            __builtin_prefetch((const char *)at + offset, 0, 3);
#else
    (void)at, (void)bytes, (void)stride, (void)second_level;
#endif
}

/* Every line of row. */
static ALWAYS_INLINE void prefetch_row(const void *row, Py_ssize_t bytes)
{
    prefetch_every(row, bytes, 64, 0);
}

/* Every line of row, into the second-level cache only (see prefetch_part). */
static ALWAYS_INLINE void prefetch_row_second(const void *row, Py_ssize_t bytes)
{
    prefetch_every(row, bytes, 64, 1);
}

/* Every line of row, into the second level for a copy streamed from memory (far: far_copy), else into the first,
 * where a copy read from the third-level cache lost with the second (GPT-2-shaped IQ3 1.2x, TQ2_0 1.1x, MXFP4 1.5x).
 * Qwen2-7B-sized, one process a round, in turns with the first level (7 December, a Zen 4 EPYC, load 0.3), a query
 * of IQ3_XXS 8.1 -> 7.5 ms (1.24x -> 1.15x-1.17x of one read of the stored bytes), TQ2_0 4.5-5.4 -> 3.4-4.7 ms,
 * MXFP4 7.9-9.4 -> 6.2-9.0 ms. */
static ALWAYS_INLINE void prefetch_row_ahead(const void *row, Py_ssize_t bytes, int far)
{
    if (far) /* the choice outside the loop of lines: inside it, TQ2_0's scan of a table in the cache took 1.06x */
        prefetch_row_second(row, bytes);
    else
        prefetch_row(row, bytes);
}

/* One line of each 4 KB page of row: prefetch_row's page walks, without a request for every line. */
static ALWAYS_INLINE void prefetch_pages(const void *row, Py_ssize_t bytes)
{
    prefetch_every(row, bytes, 4096, 0);
}

/* Part `part` of `parts` of the lines of `bytes` at block: a grouped scan asks for its block ahead a part at a
 * time between its steps, not all of it at once before them (which held up the loads that needed the queue).
 * Into the second-level cache only (prefetcht2): a core has more requests to memory open at once that way.
 * Measured on a Zen 4 EPYC (7 December, 08:10 UTC, one process, the same scan of both builds in turns, nine
 * rounds, load 0.9), the first level against the second, one thread | two: Qwen2-7B-sized Q2_K 15.5 -> 7.8 |
 * 7.9 -> 6.0 ms, IQ1_M 11.0 -> 6.8 | 6.9 -> 5.7, IQ1_S 14.3 -> 11.0 | 7.1 -> 6.6, Q3_K 11.0 -> 9.3 | 8.0 ->
 * 8.2, the IQ2s alike; GPT-2-shaped tables (from the third-level cache) alike.  Row scans (prefetch_pages) keep
 * the first level (no gain measured); IQ3_XXS's, TQ2_0's and MXFP4's copies take the second only when streamed
 * from memory (prefetch_row_ahead). */
static ALWAYS_INLINE void prefetch_part(const void *block, Py_ssize_t bytes, int part, int parts)
{
    Py_ssize_t lines = (bytes + 63) / 64, first = lines * part / parts, end = lines * (part + 1) / parts;
    prefetch_every((const char *)block + 64 * first, 64 * (end - first), 64, 1);
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

/* Takes the next unclaimed chunk until none is left; returns how many this thread did. */
static int64_t take_chunks(chunk_function run_chunk, const void *job, Py_ssize_t count, int64_t *progress)
{
    int64_t chunks = (count + CHUNK_ROWS - 1) / CHUNK_ROWS, taken = 0;
    for (int64_t chunk = CLAIM(&progress[0]); chunk < chunks; chunk = CLAIM(&progress[0]), taken++) {
        Py_ssize_t start = (Py_ssize_t)chunk * CHUNK_ROWS;
        Py_ssize_t stop = start + CHUNK_ROWS < count ? start + CHUNK_ROWS : count;
        run_chunk(job, start, stop);
        CLAIM(&progress[1]);
    }
    return taken;
}

/* Returns once `chunks` chunks are finished (progress[1]).  A chunk takes tens of microseconds: spin
 * briefly, then let the core go, in case the thread still scanning is waiting for it. */
static void wait_for_chunks(int64_t chunks, int64_t *progress)
{
    for (int spins = 0; FINISHED(&progress[1]) < chunks; spins++) {
        if (spins < SPINS_BEFORE_YIELD)
            PAUSE();
        else
            YIELD_CPU();
    }
}

/* Every thread that calls this takes the next unclaimed chunk until none is left,
 * then waits for chunks still being scanned elsewhere.  A helper thread that wakes
 * up late (an idle core of a virtual machine can take milliseconds) finds the work
 * done and returns, instead of the caller waiting for it. */
static void share_chunks(chunk_function run_chunk, const void *job, Py_ssize_t count, int64_t *progress)
{
    take_chunks(run_chunk, job, count, progress);
    wait_for_chunks((count + CHUNK_ROWS - 1) / CHUNK_ROWS, progress);
}

static int check_progress(Py_buffer *progress)
{
    Py_ssize_t counters = progress->len / (Py_ssize_t)sizeof(int64_t);
    if ((counters != 2 && counters != 3) || progress->len % (Py_ssize_t)sizeof(int64_t) != 0 ||
        ((uintptr_t)progress->buf % sizeof(int64_t)) != 0) {
        PyErr_SetString(PyExc_ValueError, "progress must be two or three aligned int64 counters (chunks claimed, "
                                          "finished; helper threads wanted)");
        return 0;
    }
    return 1;
}

#if !defined(_MSC_VER)
/* The helper threads a pass shares its chunks with, in C: a thread pool in Python wakes its thread,
 * hands it the GIL and parses the pass's arguments again before the helper scans a row (20-30 us
 * of a query that takes 0.2-0.6 ms on a table in the cache).  Made at the first pass that wants
 * them, at most HELPERS_MAX; one pass at a time has them (another, from a second thread, runs on
 * its own thread meanwhile).  A helper that has just helped stays awake for HELPER_AWAKE_NS, so
 * the next pass does not wait for the kernel to wake it (OpenMP's threads do the same). */
#include <pthread.h>
#include <time.h>
#define HELPERS_MAX 3
#define HELPER_AWAKE_NS 2000000

/* A helped pass's chunks as one run of neighbouring chunks per thread, each walked from its start: the
 * scans' prefetches (and the hardware's) run on into the thread's own next chunk, where chunks handed
 * out in turn would leave every other one to the other thread and each chunk's first rows to wait for
 * memory.  A thread whose run is done takes the others' chunks from their ends (a helper that wakes late
 * finds its run taken).  Two threads over GPT-2-shaped copies in the cache, right after a plain read of the
 * stored bytes (medians of 61; four processes each, in turns with the chunks handed out in turn, 09:30 UTC,
 * load 1): TQ1_0 138 us in three of four against 159-181, IQ2_XS 242-274 against 259-283, IQ1_S 168-207
 * against 168-244 (one thread alone: 219-228, 394-402, 271-293 us). */
#define RUNS_MAX (HELPERS_MAX + 1)
struct chunk_runs {
    int64_t runs;
    int64_t first[RUNS_MAX + 1];      /* run r is chunks first[r] .. first[r + 1] - 1 */
    int64_t tickets[RUNS_MAX];        /* claims made on run r, from either end (may pass its size) */
    int64_t front[RUNS_MAX], back[RUNS_MAX];
};

/* The next chunk of `run`, from its start or its end; -1 once all of its chunks are claimed.  Each claim
 * that finds a ticket below the run's size moves exactly one of front and back, so front + back never
 * passes the size and the two ends never hand out the same chunk. */
static int64_t claim_in_run(struct chunk_runs *r, int64_t run, int from_start)
{
    int64_t size = r->first[run + 1] - r->first[run];
    if (FINISHED(&r->tickets[run]) >= size || CLAIM(&r->tickets[run]) >= size)
        return -1;
    return from_start ? r->first[run] + CLAIM(&r->front[run]) : r->first[run + 1] - 1 - CLAIM(&r->back[run]);
}

/* Seat `seat`'s part of a helped pass: its own run from the start, then the others' from their ends. */
static int64_t take_runs(chunk_function run_chunk, const void *job, Py_ssize_t count, int64_t *progress,
                         struct chunk_runs *r, int64_t seat)
{
    int64_t taken = 0;
    for (int64_t k = 0; k < r->runs; k++) {
        int64_t run = (seat + k) % r->runs;
        for (int64_t chunk = claim_in_run(r, run, k == 0); chunk >= 0; chunk = claim_in_run(r, run, k == 0)) {
            Py_ssize_t start = (Py_ssize_t)chunk * CHUNK_ROWS;
            run_chunk(job, start, start + CHUNK_ROWS < count ? start + CHUNK_ROWS : count);
            CLAIM(&progress[1]);
            taken++;
        }
    }
    return taken;
}

struct offered_pass {
    chunk_function run_chunk; /* NULL: no pass is offered */
    const void *job;
    Py_ssize_t count;
    int64_t *progress;
    struct chunk_runs *runs;
    int seats; /* helpers offered a seat: the first to sit takes seat 1 */
};

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t pool_owner = PTHREAD_MUTEX_INITIALIZER; /* held by the pass the helpers serve */
static pthread_cond_t pool_wake = PTHREAD_COND_INITIALIZER, pool_left = PTHREAD_COND_INITIALIZER;
static struct offered_pass offered;
static uint64_t offer_number;                 /* read without the lock by helpers awake */
static int offer_seats, helpers_inside, helpers_started;
static int64_t helped_chunks; /* chunks the helpers have done, ever: what helper_pool reports */

static int64_t monotonic_ns(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
}

/* Awake until a new pass is offered or HELPER_AWAKE_NS have gone by (called, and returning, without the lock). */
static void stay_awake(uint64_t seen)
{
    int64_t until = monotonic_ns() + HELPER_AWAKE_NS;
    for (int spins = 1; __atomic_load_n(&offer_number, __ATOMIC_ACQUIRE) == seen; spins++) {
        PAUSE();
        if (spins % 256 == 0) {
            if (monotonic_ns() > until)
                return;
            YIELD_CPU(); /* a thread that has work on this core comes first */
        }
    }
}

static void *helper_main(void *unused)
{
    (void)unused;
    uint64_t seen = 0;
    pthread_mutex_lock(&pool_lock);
    for (;;) {
        if (offer_number != seen && offered.run_chunk != NULL && offer_seats > 0) {
            struct offered_pass pass = offered;
            seen = offer_number;
            int64_t seat = pass.seats - --offer_seats;
            helpers_inside++;
            pthread_mutex_unlock(&pool_lock);
            /* No waiting for the others, as share_chunks does: the pass's caller waits. */
            __atomic_fetch_add(&helped_chunks,
                               take_runs(pass.run_chunk, pass.job, pass.count, pass.progress, pass.runs, seat),
                               __ATOMIC_RELAXED);
            pthread_mutex_lock(&pool_lock);
            if (--helpers_inside == 0)
                pthread_cond_broadcast(&pool_left);
            pthread_mutex_unlock(&pool_lock);
            stay_awake(seen);
            pthread_mutex_lock(&pool_lock);
            continue;
        }
        seen = offer_number; /* nothing to take from that offer (gone, or every seat taken) */
        pthread_cond_wait(&pool_wake, &pool_lock);
    }
    return NULL;
}

/* A child made by fork has none of the parent's threads: its passes start their own. */
static void pool_after_fork(void)
{
    pthread_mutex_init(&pool_lock, NULL);
    pthread_mutex_init(&pool_owner, NULL);
    pthread_cond_init(&pool_wake, NULL);
    pthread_cond_init(&pool_left, NULL);
    offered.run_chunk = NULL;
    offer_seats = helpers_inside = helpers_started = 0;
}

/* share_chunks with up to `helpers` of the pool's threads: every chunk is done when it returns, and no
 * helper is still reading the job (which lives on the caller's stack). */
static void share_chunks_helped(chunk_function run_chunk, const void *job, Py_ssize_t count, int64_t *progress,
                                int64_t helpers)
{
    if (helpers <= 0 || pthread_mutex_trylock(&pool_owner) != 0) {
        share_chunks(run_chunk, job, count, progress);
        return;
    }
    if (helpers > HELPERS_MAX)
        helpers = HELPERS_MAX;
    pthread_mutex_lock(&pool_lock);
    static int fork_handled;
    if (!fork_handled)
        fork_handled = pthread_atfork(NULL, NULL, pool_after_fork) == 0;
    while (helpers_started < helpers) {
        pthread_t thread;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        int failed = pthread_create(&thread, &attr, helper_main, NULL);
        pthread_attr_destroy(&attr);
        if (failed)
            break; /* no more threads to be had: the pass runs with those there are */
        helpers_started++;
    }
    if (helpers > helpers_started)
        helpers = helpers_started;
    int64_t chunks = (count + CHUNK_ROWS - 1) / CHUNK_ROWS;
    static struct chunk_runs runs; /* one helped pass at a time: pool_owner */
    memset(&runs, 0, sizeof runs);
    runs.runs = helpers + 1;
    for (int64_t r = 0; r <= runs.runs; r++)
        runs.first[r] = chunks * r / runs.runs;
    offered = (struct offered_pass){run_chunk, job, count, progress, &runs, (int)helpers};
    offer_seats = (int)helpers;
    __atomic_store_n(&offer_number, offer_number + 1, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&pool_wake);
    pthread_mutex_unlock(&pool_lock);
    take_runs(run_chunk, job, count, progress, &runs, 0);
    wait_for_chunks(chunks, progress);
    pthread_mutex_lock(&pool_lock);
    offered.run_chunk = NULL;
    offer_seats = 0;
    while (helpers_inside > 0)
        pthread_cond_wait(&pool_left, &pool_lock);
    pthread_mutex_unlock(&pool_lock);
    pthread_mutex_unlock(&pool_owner);
}
#endif

/* share_chunks with the GIL released: the loops touch no Python object, so other threads,
 * the window's among them, run meanwhile.  A third counter asks for that many helper threads.
 * Returns a new reference to None. */
static PyObject *share_chunks_released(chunk_function run_chunk, const void *job, Py_ssize_t count,
                                       Py_buffer *progress)
{
    int64_t *counters = progress->buf;
    int64_t helpers = progress->len == 3 * (Py_ssize_t)sizeof(int64_t) ? counters[2] : 0;
    Py_BEGIN_ALLOW_THREADS
#if !defined(_MSC_VER)
    share_chunks_helped(run_chunk, job, count, counters, helpers);
#else
    (void)helpers;
    share_chunks(run_chunk, job, count, counters);
#endif
    Py_END_ALLOW_THREADS
    return Py_NewRef(Py_None);
}

/* (helper threads started, chunks they have done): how a test sees that the helpers took part. */
static PyObject *helper_pool(PyObject *self, PyObject *unused)
{
    (void)self, (void)unused;
#if !defined(_MSC_VER)
    pthread_mutex_lock(&pool_lock);
    int started = helpers_started;
    pthread_mutex_unlock(&pool_lock);
    return Py_BuildValue("(iL)", started, (long long)FINISHED(&helped_chunks));
#else
    return Py_BuildValue("(iL)", 0, 0LL);
#endif
}

#define HELPER_POOL_METHOD                                                                                        \
    {"helper_pool", helper_pool, METH_NOARGS,                                                                    \
     "helper_pool()\n\n(helper threads started, chunks they have done) of this module's passes."}

#endif
