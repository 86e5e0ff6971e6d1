/* The row-major (unpacked) NEON GEMM driver shared by GEMM/MATMUL variant 0 and 1x1 CONV2D variant 0. */
#ifndef EP_NEON_GEMM_H
#define EP_NEON_GEMM_H
#include "pack_common.h"

/* C[M,N] (row stride ldc) = epilogue(A[M,K] B[K,N]), A and B row-major with row strides lda, ldb.
 * e: NULL (plain product) or the epilogue, its pointers for element (0,0) (see pack_common.h). */
void ep_neon_gemm_rm(int64_t M, int64_t N, int64_t K, const float *a, int64_t lda, const float *b, int64_t ldb,
                     float *c, int64_t ldc, const pk_epi *e);
#endif
