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

#endif
