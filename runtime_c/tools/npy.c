#include "npy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "edgeplan/plan_format.h"

static const struct { int32_t dtype; const char *descr; size_t size; } DT[] = {
    {EP_DTYPE_F32, "<f4", 4}, {EP_DTYPE_F16, "<f2", 2}, {EP_DTYPE_I64, "<i8", 8}, {EP_DTYPE_I32, "<i4", 4},
    {EP_DTYPE_I16, "<i2", 2}, {EP_DTYPE_I8, "|i1", 1}, {EP_DTYPE_U8, "|u1", 1}, {EP_DTYPE_BOOL, "|b1", 1},
    {EP_DTYPE_U16, "<u2", 2}, {EP_DTYPE_U32, "<u4", 4}, {EP_DTYPE_U64, "<u8", 8},
    {EP_DTYPE_F64, "<f8", 8},   /* bfloat16 has no .npy type (numpy lacks it) */
};

const char *npy_dtype_descr(int32_t dtype) {
    for (size_t i = 0; i < sizeof(DT) / sizeof(DT[0]); i++)
        if (DT[i].dtype == dtype) return DT[i].descr;
    return NULL;
}

static int fail(char *err, size_t n, const char *msg, const char *path) {
    snprintf(err, n, "%s: %s", path, msg);
    return -1;
}

int npy_read(const char *path, npy_array *a, char *err, size_t errlen) {
    memset(a, 0, sizeof(*a));
    FILE *f = fopen(path, "rb");
    if (!f) return fail(err, errlen, "cannot open", path);
    unsigned char pre[12];
    if (fread(pre, 1, 10, f) != 10 || memcmp(pre, "\x93NUMPY", 6) != 0) {
        fclose(f);
        return fail(err, errlen, "not a .npy file", path);
    }
    size_t hlen;
    if (pre[6] == 1) {
        hlen = pre[8] | (size_t)pre[9] << 8;
    } else {
        if (fread(pre + 10, 1, 2, f) != 2) { fclose(f); return fail(err, errlen, "truncated header", path); }
        hlen = pre[8] | (size_t)pre[9] << 8 | (size_t)pre[10] << 16 | (size_t)pre[11] << 24;
    }
    if (hlen > 65536) { fclose(f); return fail(err, errlen, "header too large", path); }
    char *h = calloc(1, hlen + 1);
    if (!h || fread(h, 1, hlen, f) != hlen) { free(h); fclose(f); return fail(err, errlen, "truncated header", path); }
    const char *d = strstr(h, "'descr'"), *fo = strstr(h, "'fortran_order'"), *sh = strstr(h, "'shape'");
    if (!d || !fo || !sh) { free(h); fclose(f); return fail(err, errlen, "unrecognised header", path); }
    if (strstr(fo, "True") && strstr(fo, "True") < strchr(fo, ',')) {
        free(h); fclose(f); return fail(err, errlen, "Fortran-order arrays are not supported", path);
    }
    size_t esz = 0;
    for (size_t i = 0; i < sizeof(DT) / sizeof(DT[0]); i++) {
        char q[16];
        snprintf(q, sizeof(q), "'%s'", DT[i].descr);
        const char *m = strstr(d, q);
        if (m && m < strchr(d, ',')) { a->dtype = DT[i].dtype; esz = DT[i].size; break; }
    }
    if (!esz) { free(h); fclose(f); return fail(err, errlen, "unsupported dtype (need little-endian f8/f4/f2/i8/i4/i2/i1/u1/b1)", path); }
    const char *p = strchr(sh, '(');
    size_t n = 1;
    if (!p) { free(h); fclose(f); return fail(err, errlen, "bad shape", path); }
    p++;
    while (*p && *p != ')') {
        while (*p == ' ' || *p == ',') p++;
        if (*p == ')') break;
        char *end;
        long long v = strtoll(p, &end, 10);
        if (end == p || v < 0 || a->rank >= 8) { free(h); fclose(f); return fail(err, errlen, "bad shape", path); }
        a->dims[a->rank++] = v;
        n *= (size_t)v;
        p = end;
    }
    free(h);
    a->nbytes = n * esz;
    a->data = malloc(a->nbytes ? a->nbytes : 1);
    if (!a->data || fread(a->data, 1, a->nbytes, f) != a->nbytes) {
        free(a->data);
        a->data = NULL;
        fclose(f);
        return fail(err, errlen, "truncated data", path);
    }
    fclose(f);
    return 0;
}

int npy_write(const char *path, int32_t dtype, int32_t rank, const int32_t *dims, const void *data, size_t nbytes) {
    const char *descr = npy_dtype_descr(dtype);
    if (!descr) return -1;
    char shape[160] = "";
    size_t k = 0;
    for (int i = 0; i < rank; i++) k += (size_t)snprintf(shape + k, sizeof(shape) - k, "%d,%s", dims[i], rank > 1 && i < rank - 1 ? " " : "");
    if (rank > 1 && k) shape[--k] = '\0';   /* (a, b) rather than (a, b,) */
    char h[256];
    int len = snprintf(h, sizeof(h), "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }", descr, shape);
    int total = 10 + len + 1;
    int pad = (64 - total % 64) % 64;
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    unsigned hl = (unsigned)(len + pad + 1);
    unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(hl & 0xff), (unsigned char)(hl >> 8)};
    fwrite(pre, 1, 10, f);
    fwrite(h, 1, (size_t)len, f);
    for (int i = 0; i < pad; i++) fputc(' ', f);
    fputc('\n', f);
    size_t w = fwrite(data, 1, nbytes, f);
    return fclose(f) == 0 && w == nbytes ? 0 : -1;
}
