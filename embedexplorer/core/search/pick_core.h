/* The rows a first pass cannot rule out, in C (``_pick.c`` says how and why): shared by ``_pick.c`` and
 * ``_quants.c``, whose ``stored_top_k`` picks them, scores them exactly and orders them in one call. */
#ifndef EMBEDEXPLORER_PICK_CORE_H
#define EMBEDEXPLORER_PICK_CORE_H

#include <Python.h>
#include <stdint.h>

#if defined(__GNUC__)
#define PICK_INLINE __attribute__((always_inline)) inline
#else
#define PICK_INLINE __forceinline
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

/* Where the CPU has AVX-512, runs of 64: a run is mostly all below the bar too (after the first few hundred
 * scores, 59 of GPT-2's 785 runs hold one at or above it), whole runs in a row are skipped in one call, and in a
 * run that holds some only those are looked at (the bar only rises, so a score below it when the run was
 * compared stays below).  Picking the candidates of GPT-2's 50,257 scores (an IQ1_S table's, k 10; medians of
 * 301, 6 December 2026): right after a two-thread scan 7.2 us with runs of 16 alone, 2.8 us with these; in the
 * cache 6.0 and 2.0 us. */
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#include <immintrin.h>
/* From ``*at`` (a multiple of 64) on, the first run of 64 scores holding one at or above ``bar`` or a NaN: its
 * start into ``*at`` and which of its scores those are (bit j: score *at + j); 0 and the end of the last whole
 * run when no run does. */
__attribute__((target("avx512f"))) static uint64_t next_run_reaching(const float *scores, Py_ssize_t *at,
                                                                     Py_ssize_t count, float bar)
{
    __m512 b = _mm512_set1_ps(bar);
    Py_ssize_t start = *at;
    for (; start + 64 <= count; start += 64) {
        /* Not less than, unordered: a NaN counts, as in any_not_below. */
        const float *run = scores + start;
        uint64_t lanes = (uint64_t)_mm512_cmp_ps_mask(_mm512_loadu_ps(run), b, _CMP_NLT_UQ) |
                         (uint64_t)_mm512_cmp_ps_mask(_mm512_loadu_ps(run + 16), b, _CMP_NLT_UQ) << 16 |
                         (uint64_t)_mm512_cmp_ps_mask(_mm512_loadu_ps(run + 32), b, _CMP_NLT_UQ) << 32 |
                         (uint64_t)_mm512_cmp_ps_mask(_mm512_loadu_ps(run + 48), b, _CMP_NLT_UQ) << 48;
        if (lanes) {
            *at = start;
            return lanes;
        }
    }
    *at = start;
    return 0;
}

static int pick_wide(void)
{
    static int known = -1;
    if (known < 0) {
        __builtin_cpu_init();
        known = __builtin_cpu_supports("avx512f") ? 1 : 0;
    }
    return known;
}
#define LOWEST_LANE(lanes) __builtin_ctzll(lanes)
#else
static uint64_t next_run_reaching(const float *scores, Py_ssize_t *at, Py_ssize_t count, float bar)
{
    (void)scores, (void)at, (void)count, (void)bar;
    return 0;
}
static int pick_wide(void) { return 0; }
#define LOWEST_LANE(lanes) 0
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
static PICK_INLINE void offer_and_keep(float *heap, Py_ssize_t *size, Py_ssize_t k, float value, float window,
                                         Py_ssize_t id, int64_t *ids, Py_ssize_t *kept)
{
    heap_offer(heap, size, k, value);
    if (*size < k || value >= heap[0] - window)
        ids[(*kept)++] = id;
}

/* The ids in ids[0 .. kept - 1] whose scores are still at or above ``bar``, in order; how many. */
static Py_ssize_t still_above(const float *values, int64_t *ids, Py_ssize_t kept, float bar)
{
    Py_ssize_t still = 0;
    for (Py_ssize_t i = 0; i < kept; i++)
        if (values[ids[i]] >= bar)
            ids[still++] = ids[i];
    return still;
}

/* Score i, which may reach the bar: into the heap, its id kept when it does; -1 for a NaN, -2 when ``room``
 * ids are still at or above the bar, else 0. */
static PICK_INLINE int offer_score(const float *scores, Py_ssize_t i, Py_ssize_t k, float window, float *heap,
                                   Py_ssize_t *size, int64_t *ids, Py_ssize_t *kept, Py_ssize_t room)
{
    if (scores[i] != scores[i])
        return -1;
    if (*kept == room) {
        *kept = still_above(scores, ids, *kept, heap[0] - window);
        if (*kept == room)
            return -2;
    }
    offer_and_keep(heap, size, k, scores[i], window, i, ids, kept);
    return 0;
}

/* The k-th best of ``scores`` (k <= count), and in ids, in order, every id whose score was at or above the
 * bar (the k-th best so far less window) when it was read: that bar only rises, so every id at or above the
 * last one is among them.  ids holds ``room`` (at least 2 k): when it fills, the ids below the bar by then are
 * dropped.  Returns how many were kept; -1 when a score is NaN (Python decides then), -2 when ``room`` ids are
 * still at or above the bar (scores as many and as close as that: ids with a slot per score can hold them). */
static Py_ssize_t kth_best_and_kept(const float *scores, Py_ssize_t count, Py_ssize_t k, float window, float *heap,
                                    float *kth, int64_t *ids, Py_ssize_t room)
{
    Py_ssize_t size = 0, kept = 0, i = 0;
    for (; i < count && size < k; i++) {
        if (scores[i] != scores[i])
            return -1;
        offer_and_keep(heap, &size, k, scores[i], window, i, ids, &kept);
    }
    int wide = pick_wide();
    for (; i < count; i++) {
        if (wide && i % 64 == 0 && i + 64 <= count) {
            Py_ssize_t start = i;
            uint64_t lanes = next_run_reaching(scores, &start, count, heap[0] - window);
            for (; lanes; lanes &= lanes - 1) {
                int status = offer_score(scores, start + LOWEST_LANE(lanes), k, window, heap, &size, ids, &kept, room);
                if (status < 0)
                    return status;
            }
            /* Past the run just looked at; or, no whole run left, on from the last one's end 16 at a time. */
            i = start + (start + 64 <= count ? 63 : -1);
            continue;
        }
        /* A run of 16 is usually all below the bar: 16 comparisons and no branch taken. */
        if (i + 16 <= count && i % 16 == 0 && !any_not_below(scores + i, heap[0] - window)) {
            i += 15;
            continue;
        }
        int status = offer_score(scores, i, k, window, heap, &size, ids, &kept, room);
        if (status < 0)
            return status;
    }
    *kth = heap[0];
    return kept;
}

/* Every id whose score is at or above the k-th best less window, in order of id, into ids (``room`` slots, at
 * least 2 k; heap: k floats); how many, or kth_best_and_kept's -1 or -2.  As numpy has the bar: a float32 less a
 * float32. */
static Py_ssize_t pick_candidates(const float *values, Py_ssize_t count, Py_ssize_t k, float window, float *heap,
                                  int64_t *ids, Py_ssize_t room)
{
    float kth = 0.0f;
    Py_ssize_t kept = kth_best_and_kept(values, count, k, window, heap, &kth, ids, room);
    return kept < 0 ? kept : still_above(values, ids, kept, kth - window);
}

#endif
