/* Reference kernels of CONV2D variant PACKED and GEMM variant PACKED: the shared drivers of
 * kernels/pack_tmpl.h over a portable scalar micro-kernel. Any CPU runs a packed plan with these;
 * ISA files override them. Each output sums its products in k order from 0.0f, then adds the bias,
 * the residual, and applies the activation (the order of ep_ref_conv2d_f32 / ep_ref_gemm_f32). */
#include "pack_common.h"

static void pk_tile(int mr, int64_t kc, const float *a, int64_t a_sm, int64_t a_sk, const float *b, float *c,
                    int64_t ldc, int load_c, const pk_epi *e) {
    float acc[PK_MR][PK_NR];
    for (int i = 0; i < mr; i++)
        for (int j = 0; j < PK_NR; j++) acc[i][j] = load_c ? c[i * ldc + j] : 0.0f;
    for (int64_t k = 0; k < kc; k++) {
        const float *bk = b + k * PK_NR;
        for (int i = 0; i < mr; i++) {
            const float av = a[i * a_sm + k * a_sk];
            for (int j = 0; j < PK_NR; j++) acc[i][j] += av * bk[j];
        }
    }
    for (int i = 0; i < mr; i++) {
        float *ci = c + i * ldc;
        for (int j = 0; j < PK_NR; j++) ci[j] = acc[i][j];
        if (!e) continue;
        if (e->bias_row)
            for (int j = 0; j < PK_NR; j++) ci[j] += e->bias_row[i];
        if (e->bias_col)
            for (int j = 0; j < PK_NR; j++) ci[j] += e->bias_col[i * e->bias_col_ld + j];
        if (e->res)
            for (int j = 0; j < PK_NR; j++) ci[j] += e->res[i * e->res_ld + j];
        if (e->act != EP_ACT_NONE) ep_act_apply_f32(e->act, ci, PK_NR, e->alpha, e->beta);
    }
}

#define PK_FN(name) ep_ref_##name
#define PK_POOL(op) ((struct ep_pool *)NULL)   /* the reference kernels are the spec: one thread */
#include "pack_tmpl.h"
#include "winograd_tmpl.h"
