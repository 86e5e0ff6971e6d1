/* Winograd F(4x4, 3x3) (CONV2D variant WINOGRAD, Lavin & Gray 2016, points 0, +-1, +-2, inf): the 1-D
 * transforms, shared by the reference kernel (kernels/ref/packed_f32.c) and the ISA driver
 * (kernels/winograd_tmpl.h) so that both compute V = B^T d B and Y = A^T M A with the same float operations:
 * rows first (along the patch's columns), then columns. U = G g G^T is computed by the compiler
 * (passes/select.py) and stored as [36][ceil(M/MR)][C][MR]. */
#ifndef EP_WINOGRAD_COMMON_H
#define EP_WINOGRAD_COMMON_H

/* 1-D input transform B^T d of 6 values (stride s between them), into 6 values (stride o). */
#define WG_BT(d, s, t, o)                                                                  \
    do {                                                                                   \
        const float d0 = (d)[0], d1 = (d)[(s)], d2 = (d)[2 * (s)], d3 = (d)[3 * (s)];      \
        const float d4 = (d)[4 * (s)], d5 = (d)[5 * (s)];                                  \
        (t)[0] = 4.0f * d0 - 5.0f * d2 + d4;                                               \
        (t)[(o)] = -4.0f * (d1 + d2) + d3 + d4;                                            \
        (t)[2 * (o)] = 4.0f * (d1 - d2) - d3 + d4;                                         \
        (t)[3 * (o)] = 2.0f * (d3 - d1) - d2 + d4;                                         \
        (t)[4 * (o)] = 2.0f * (d1 - d3) - d2 + d4;                                         \
        (t)[5 * (o)] = 4.0f * d1 - 5.0f * d3 + d5;                                         \
    } while (0)

/* 1-D output transform A^T m of 6 values (stride s), into 4 values (stride o). */
#define WG_AT(m, s, t, o)                                                                  \
    do {                                                                                   \
        const float m0 = (m)[0], m1 = (m)[(s)], m2 = (m)[2 * (s)], m3 = (m)[3 * (s)];      \
        const float m4 = (m)[4 * (s)], m5 = (m)[5 * (s)];                                  \
        const float a = m1 + m2, b = m1 - m2, c = m3 + m4, d = m3 - m4;                    \
        (t)[0] = m0 + a + c;                                                               \
        (t)[(o)] = b + 2.0f * d;                                                           \
        (t)[2 * (o)] = a + 4.0f * c;                                                       \
        (t)[3 * (o)] = b + 8.0f * d + m5;                                                  \
    } while (0)

/* Winograd F(m, r) along W (CONV2D variant WINOGRAD_1D, 3 <= r <= 7, m = 9 - r outputs per tile; Toom-Cook
 * on the 8 points 0, +-1, +-2, +-1/2, inf), shared by kernels/ref/packed_f32.c and kernels/winograd1d_tmpl.h.
 * One B^T serves every r; A^T's row i holds the points' i-th powers (and the point at infinity in row m - 1).
 * Input transform B^T d of 8 values (stride s), into 8 values (stride o). */
#define W1_BT(d, s, t, o)                                                                          \
    do {                                                                                           \
        const float d0 = (d)[0], d1 = (d)[(s)], d2 = (d)[2 * (s)], d3 = (d)[3 * (s)];              \
        const float d4 = (d)[4 * (s)], d5 = (d)[5 * (s)], d6 = (d)[6 * (s)], d7 = (d)[7 * (s)];    \
        const float e1 = d2 - 4.25f * d4 + d6, o1 = d1 - 4.25f * d3 + d5;                          \
        const float e2 = 0.25f * d2 - 1.25f * d4 + d6, o2 = 0.5f * d1 - 2.5f * d3 + 2.0f * d5;     \
        const float e3 = 4.0f * d2 - 5.0f * d4 + d6, o3 = 2.0f * d1 - 2.5f * d3 + 0.5f * d5;       \
        (t)[0] = (d6 - d0) + 5.25f * (d2 - d4);                                                    \
        (t)[(o)] = e1 + o1;                                                                        \
        (t)[2 * (o)] = e1 - o1;                                                                    \
        (t)[3 * (o)] = e2 + o2;                                                                    \
        (t)[4 * (o)] = e2 - o2;                                                                    \
        (t)[5 * (o)] = e3 + o3;                                                                    \
        (t)[6 * (o)] = e3 - o3;                                                                    \
        (t)[7 * (o)] = (d7 - d1) + 5.25f * (d3 - d5);                                              \
    } while (0)

/* Output i (0 <= i < m) of A^T v for 8 values v (stride s): v0 (i = 0) + (v1 +- v2) + 2^i (v3 +- v4)
 * + 2^-i (v5 +- v6) (+ for even i, - for odd) + v7 (i = m - 1), added in that order. */
static inline float w1_at(const float *v, int64_t s, int i, int m) {
    static const float p2[6] = {1.0f, 2.0f, 4.0f, 8.0f, 16.0f, 32.0f}, h2[6] = {1.0f, 0.5f, 0.25f, 0.125f, 0.0625f, 0.03125f};
    const float a = i & 1 ? v[s] - v[2 * s] : v[s] + v[2 * s];
    const float b = i & 1 ? v[3 * s] - v[4 * s] : v[3 * s] + v[4 * s];
    const float c = i & 1 ? v[5 * s] - v[6 * s] : v[5 * s] + v[6 * s];
    float r = (i == 0 ? v[0] + a : a) + p2[i] * b + h2[i] * c;
    if (i == m - 1) r += v[7 * s];
    return r;
}

#endif
