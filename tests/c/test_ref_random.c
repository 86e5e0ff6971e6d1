/* The RANDOM op (plan_format.h ep_random_params): the generator against the published Philox4x32-10 known
 * answers (Random123's kat_vectors), the float transforms against libm, the kernel's elements against the
 * generator called here (key, counter layout, session seed and run, a partial last block inside guard
 * bytes), and hostile params and operands refused by the shape function with EP_ERR_PLAN_*.
 * Prints "N passed, N failed"; exit 0 on success. */
#include "ep_check.h"
#include "ref/random_philox.h"

static void test_known_answers(void) {
    static const struct { uint32_t ctr[4], key[2], want[4]; } kat[] = {
        {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}},
        {{0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}, {0xffffffffu, 0xffffffffu},
         {0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}},
        {{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}, {0xa4093822u, 0x299f31d0u},
         {0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}},
    };
    for (int i = 0; i < CHK_COUNT(kat); i++) {
        uint32_t got[4];
        ep_philox4x32_10(kat[i].ctr, kat[i].key, got);
        CHECK(memcmp(got, kat[i].want, sizeof got) == 0, "philox KAT %d: %08x %08x %08x %08x", i, got[0], got[1],
              got[2], got[3]);
    }
}

/* ln on every input Box-Muller can give ((k + 1) 2^-24, sampled with a stride plus the ends) within 4e-7
 * absolute + 2 ulp of logf; cos / sin within 2e-7 of cosf / sinf over a stride of the 2^24 angles (the
 * polynomials truncate below 3e-9; the rest is a few float roundings of values at most 1 in magnitude). */
static void test_transforms(void) {
    double worst_ln = 0, worst_cs = 0;
    int bad = 0;
    for (uint32_t k = 1; k <= (1u << 24); k += (k < 4096 ? 1 : 997)) {
        const float x = (float)k * 0x1p-24f, got = ep_rand_ln(x), want = logf(x);
        const double err = fabs((double)got - want);
        if (err > 4e-7 + 2 * FLT_EPSILON * fabsf(want)) bad++;
        if (err > worst_ln) worst_ln = err;
    }
    CHECK(ep_rand_ln(1.0f) == 0.0f && bad == 0, "ln: %d inputs off, worst %.3g", bad, worst_ln);
    bad = 0;
    for (uint32_t j = 0; j < (1u << 24); j += (j < 4096 ? 1 : 1009)) {
        float c, s;
        ep_rand_cos_sin(j, &c, &s);
        const double t = 2.0 * 3.14159265358979323846 * j / 16777216.0;
        const double err = fmax(fabs(c - cos(t)), fabs(s - sin(t)));
        if (err > 2e-7) bad++;
        if (err > worst_cs) worst_cs = err;
    }
    CHECK(bad == 0, "cos/sin: %d angles off, worst %.3g", bad, worst_cs);
    float z0, z1;
    ep_rand_normal_pair(0xFFFFFFFFu, 0, &z0, &z1);   /* u1 = 1: r = 0 */
    CHECK(z0 == 0.0f && z1 == 0.0f, "normal pair at u1 = 1: %g %g", z0, z1);
    ep_rand_normal_pair(0, 0, &z0, &z1);             /* u1 = 2^-24, angle 0: r = sqrt(48 ln 2) */
    CHECK(fabsf(z0 - 5.7680f) < 1e-3f && z1 == 0.0f, "normal pair at the smallest u1: %g %g", z0, z1);
}

/* Runs RANDOM on y (n floats, rank 1) with the given run info; EP_OK or the shape / kernel status. */
static int run_random(const ep_random_params *p, const ep_tensor *prob, float *y, int32_t n, const ep_run_info *ri) {
    ep_tensor out = chk_mk(y, EP_DTYPE_F32, 1, CHK_DIMS(n)), in = prob ? *prob : out;
    ep_tensor *ins[1] = {&in}, *outs[1] = {&out};
    ep_op op = chk_op(EP_OP_RANDOM, p, ins, prob ? 1 : 0, outs, 1);
    op.run = ri;
    ep_shape s[1];
    uint64_t scr = 1;
    int rc = ep_shape_random(&op, s, &scr);
    if (rc) return rc;
    if (scr != 0 || s[0].rank != 1 || s[0].dims[0] != n || s[0].dtype != EP_DTYPE_F32) return EP_ERR_INTERNAL;
    return ep_ref_random_f32(&op);
}

static void test_kernel(void) {
    enum { N = 4 * 9 + 3 };   /* a partial last block */
    const ep_run_info ri = {0x0123456789ABCDEFull, 0x500000007ull};
    float *y = (float *)chk_alloc(N * sizeof(float)), *p = (float *)chk_alloc(N * sizeof(float));
    for (int kind = 0; kind <= EP_RANDOM_BERNOULLI; kind++)
        for (int seeded = 0; seeded <= 1; seeded++) {
            const ep_random_params prm = {0xFEDCBA9876543210ull, (uint32_t)kind, EP_DTYPE_F32,
                                          kind == EP_RANDOM_BERNOULLI ? 0.0f : -1.5f,
                                          kind == EP_RANDOM_BERNOULLI ? 0.0f : 2.5f, 77, (uint32_t)seeded};
            for (int i = 0; i < N; i++) p[i] = (float)i / N;
            ep_tensor prob = chk_mk(p, EP_DTYPE_F32, 1, CHK_DIMS(N));
            int rc = run_random(&prm, kind == EP_RANDOM_BERNOULLI ? &prob : NULL, y, N, &ri);
            CHECK(rc == EP_OK && chk_guard(y) == 0, "kind %d seeded %d: rc %d, guard %d", kind, seeded, rc,
                  chk_guard(y));
            const uint64_t key = seeded ? prm.seed : ri.seed;
            int bad = 0;
            for (int e = 0; e < N; e++) {
                const uint32_t ctr[4] = {(uint32_t)(e / 4), 7, 5, 77}, k2[2] = {(uint32_t)key, (uint32_t)(key >> 32)};
                uint32_t w[4];
                float want, z[4];
                ep_philox4x32_10(ctr, k2, w);
                if (kind == EP_RANDOM_UNIFORM) {
                    want = -1.5f + 4.0f * ep_rand_u01(w[e % 4]);
                } else if (kind == EP_RANDOM_BERNOULLI) {
                    want = ep_rand_u01(w[e % 4]) < p[e] ? 1.0f : 0.0f;
                } else {
                    ep_rand_normal_pair(w[0], w[1], &z[0], &z[1]);
                    ep_rand_normal_pair(w[2], w[3], &z[2], &z[3]);
                    want = -1.5f + 2.5f * z[e % 4];
                }
                bad += memcmp(&want, &y[e], sizeof want) != 0;
            }
            CHECK(bad == 0, "kind %d seeded %d: %d elements differ from the generator", kind, seeded, bad);
            /* without a session: seed 0 (or the op's), run 0 */
            const uint32_t ctr0[4] = {0, 0, 0, 77}, k0[2] = {seeded ? (uint32_t)prm.seed : 0u,
                                                                seeded ? (uint32_t)(prm.seed >> 32) : 0u};
            uint32_t w0[4];
            ep_philox4x32_10(ctr0, k0, w0);
            rc = run_random(&prm, kind == EP_RANDOM_BERNOULLI ? &prob : NULL, y, N, NULL);
            const float u1 = -1.5f + 4.0f * ep_rand_u01(w0[1]);
            CHECK(rc == EP_OK && (kind != EP_RANDOM_UNIFORM || y[1] == u1), "kind %d: no run info", kind);
        }
    chk_free(y), chk_free(p);
}

static void test_hostile(void) {
    float y[8], p8[8] = {0};
    const ep_random_params ok = {0, EP_RANDOM_NORMAL, EP_DTYPE_F32, 0.0f, 1.0f, 0, 0};
    ep_random_params p = ok;
    CHECK(run_random(&p, NULL, y, 8, NULL) == EP_OK, "a good op refused");
    p.kind = 3;
    CHECK(run_random(&p, NULL, y, 8, NULL) == EP_ERR_PLAN_PARAMS, "kind 3");
    p = ok, p.kind = 0xFFFFFFFFu;
    CHECK(run_random(&p, NULL, y, 8, NULL) == EP_ERR_PLAN_PARAMS, "kind ~0");
    p = ok, p.dtype = EP_DTYPE_F16;
    CHECK(run_random(&p, NULL, y, 8, NULL) == EP_ERR_PLAN_PARAMS, "dtype f16");
    p = ok, p.has_seed = 2;
    CHECK(run_random(&p, NULL, y, 8, NULL) == EP_ERR_PLAN_PARAMS, "has_seed 2");
    p = ok, p.b = INFINITY;
    CHECK(run_random(&p, NULL, y, 8, NULL) == EP_ERR_PLAN_PARAMS, "scale inf");
    p = ok, p.a = NAN;
    CHECK(run_random(&p, NULL, y, 8, NULL) == EP_ERR_PLAN_PARAMS, "mean nan");
    p = ok, p.kind = EP_RANDOM_UNIFORM, p.a = -3e38f, p.b = 3e38f;
    CHECK(run_random(&p, NULL, y, 8, NULL) == EP_ERR_PLAN_PARAMS, "high - low overflows");
    p = ok, p.kind = EP_RANDOM_BERNOULLI, p.b = 0.0f;
    CHECK(run_random(&p, NULL, y, 8, NULL) == EP_ERR_PLAN_OP, "bernoulli without probabilities");
    ep_tensor prob = chk_mk(p8, EP_DTYPE_I32, 1, CHK_DIMS(8));
    CHECK(run_random(&p, &prob, y, 8, NULL) == EP_ERR_PLAN_TENSOR, "bernoulli on i32");
    prob = chk_mk(p8, EP_DTYPE_F32, 1, CHK_DIMS(8));
    p.a = 0.5f;
    CHECK(run_random(&p, &prob, y, 8, NULL) == EP_ERR_PLAN_PARAMS, "bernoulli with a");
    /* the output follows the input's shape: an input of another shape is refused by the session's check */
    ep_tensor big = chk_mk(NULL, EP_DTYPE_F32, 3, CHK_DIMS(1 << 20, 1 << 12, 8));   /* 2^35 elements */
    ep_tensor out = chk_mk(y, EP_DTYPE_F32, 1, CHK_DIMS(8));
    ep_tensor *ins[2] = {&big, &big}, *outs[1] = {&out};
    ep_op op = chk_op(EP_OP_RANDOM, &ok, ins, 1, outs, 1);
    ep_shape s[1];
    uint64_t scr;
    CHECK(ep_shape_random(&op, s, &scr) == EP_ERR_PLAN_SHAPE, "2^35 elements");
    op = chk_op(EP_OP_RANDOM, &ok, ins, 2, outs, 1);
    CHECK(ep_shape_random(&op, s, &scr) == EP_ERR_PLAN_OP, "two inputs");
    ep_tensor neg = chk_mk(y, EP_DTYPE_F32, 1, CHK_DIMS(8));
    neg.dims[0] = -1;
    ins[0] = &neg;
    op = chk_op(EP_OP_RANDOM, &ok, ins, 1, outs, 1);
    CHECK(ep_shape_random(&op, s, &scr) == EP_ERR_PLAN_SHAPE, "negative dim");
}

int main(void) {
    test_known_answers(), test_transforms(), test_kernel(), test_hostile();
    printf("%d passed, %d failed\n", chk_n_pass, chk_n_fail);
    return chk_n_fail != 0;
}
