/* A byte looked up for each of 64 grid indices from a table of 256 or 512 bytes, held as 64-byte registers (included
 * by _quants.c once, before the IQ3 copies of quants_fp4_ternary.h and the IQ2 copies of quants_iq.h, which both
 * read grid indices as stored).  VBMI's vpermi2b looks up 128 entries from a pair of registers by an index's low
 * seven bits: its eighth bit (top) picks the pair for entries 0-255, and a ninth bit kept beside the index bytes
 * (IQ3_S's, IQ2_XS's) the pairs for 256-511. */
#ifndef EMBEDEXPLORER_QUANTS_GRID_LOOKUP_H
#define EMBEDEXPLORER_QUANTS_GRID_LOOKUP_H

/* The query's bytes in the order a scan of grid indices reads them, each lane's four bytes being one row's four
 * indices: per run of four indices of ``per_index`` numbers each (IQ3 4, IQ2 8), bytes 4 t .. 4 t + 3 are number t
 * of each index (numbers t, per_index + t, 2 per_index + t, 3 per_index + t). */
static void grid_query_order(int8_t *bytes, Py_ssize_t width, int per_index)
{
    int8_t run[32];
    for (Py_ssize_t at = 0; at < width; at += 4 * per_index) {
        memcpy(run, bytes + at, (size_t)(4 * per_index));
        for (int t = 0; t < per_index; t++)
            for (int l = 0; l < 4; l++)
                bytes[at + 4 * t + l] = run[per_index * l + t];
    }
}

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define GRID_LOOKUP_TARGET __attribute__((target("avx512f,avx512bw,avx512vbmi")))

/* table[0..3]: entries 0-255; with ``large``, table[4..7] entries 256-511 (taken where ninth's bit is set). */
GRID_LOOKUP_TARGET static ALWAYS_INLINE __m512i grid_byte_lookup(const __m512i table[8], __m512i index,
                                                                  __mmask64 top, __mmask64 ninth, int large)
{
    __m512i low = _mm512_mask_blend_epi8(top, _mm512_permutex2var_epi8(table[0], index, table[1]),
                                         _mm512_permutex2var_epi8(table[2], index, table[3]));
    if (!large)
        return low;
    __m512i high = _mm512_mask_blend_epi8(top, _mm512_permutex2var_epi8(table[4], index, table[5]),
                                          _mm512_permutex2var_epi8(table[6], index, table[7]));
    return _mm512_mask_blend_epi8(ninth, low, high);
}
#endif

#endif
