/* The end of every grouped scan (quants_groups*.h, quants_lookup.h, quants_fp4_ternary.h,
 * quants_iq.h): a group's 16 sums, each times its row's scale, stored for the rows that are in
 * the table.  Included where immintrin.h is, on x86 builds only. */
#ifndef EMBEDEXPLORER_QUANTS_GROUP_STORE_H
#define EMBEDEXPLORER_QUANTS_GROUP_STORE_H

/* Rows first_row .. first_row + 15 (those below stop): out = sums times scale, and 0 where the
 * scale is 0, whatever the sum (a row pointing nowhere scores 0 even if its blocks hold infinity
 * or NaN). */
__attribute__((target("avx512f"))) static ALWAYS_INLINE void store_group_scores(__m512 sums, const float *scale,
                                                                               float *out, Py_ssize_t first_row,
                                                                               Py_ssize_t stop)
{
    Py_ssize_t rows_here = stop - first_row;
    __mmask16 here = rows_here >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << rows_here) - 1);
    __m512 scales = _mm512_maskz_loadu_ps(here, scale + first_row);
    __mmask16 live = _mm512_cmp_ps_mask(scales, _mm512_setzero_ps(), _CMP_NEQ_UQ);
    _mm512_mask_storeu_ps(out + first_row, here, _mm512_maskz_mul_ps(live, sums, scales));
}

#endif
