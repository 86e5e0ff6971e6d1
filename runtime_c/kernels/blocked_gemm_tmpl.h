/* The runs of tiles of the C8 layout's GEMM-shaped convolutions (kernels/blocked_gemm_common.h), compiled once
 * per ISA: included at the end of each ISA's blocked_gemm.h, after its micro-kernel
 *   bg_tile_n(np, nb, a)   a->nt tiles of np pixels (constant) x nb (constant, 1 or 2) C8 blocks of Y
 * Defines bg_run, which blocked_pw_tmpl.h and blocked_conv_tmpl.h call. */

static __attribute__((noinline)) void bg_tile_62(const bg_tile *a) { bg_tile_n(6, 2, a); }
static __attribute__((noinline)) void bg_tile_61(const bg_tile *a) { bg_tile_n(6, 1, a); }
static __attribute__((noinline)) void bg_tile_42(const bg_tile *a) { bg_tile_n(4, 2, a); }

/* Tiles of np distinct pixels, xps floats apart in X and yps in Y */
static void bg_pixels(bg_tile *a, int np, int64_t xps, int64_t yps) {
    for (int i = 0; i < BG_NP; i++) {
        const int k = i < np ? i : np - 1;
        a->xo[i] = k * xps, a->yo[i] = k * yps;
    }
    a->np = np;
}

/* A run of n pixels x nb (1, 2) blocks: a->x, y and r at its first pixel, the next xps (X) and yps (Y, R)
 * floats further. The tail of n % 6 pixels: one tile repeating its last pixel, of 6 pixels, or of 4 for up to 4
 * pixels of 16 channels (its 8 accumulators keep the FMA units as busy as 12 do: a row of W^T costs the FMA
 * latency either way, so a short tail costs two-thirds of a full tile, not a full one). */
static void bg_run(bg_tile *a, int64_t n, int nb, int64_t xps, int64_t yps) {
    void (*full)(const bg_tile *) = nb == 2 ? bg_tile_62 : bg_tile_61;
    const int64_t done = n / BG_NP * BG_NP;
    const int tail = (int)(n - done);
    a->xt = BG_NP * xps, a->yt = BG_NP * yps;
    if (done) {
        bg_pixels(a, BG_NP, xps, yps);
        a->nt = n / BG_NP;
        full(a);
    }
    if (!tail) return;
    a->x += done * xps, a->y += done * yps, a->r = a->r ? a->r + done * yps : NULL;
    bg_pixels(a, tail, xps, yps);
    a->nt = 1;
    if (tail > 4 || nb == 1) full(a);
    else bg_tile_42(a);
}
