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

static int fail(char *err, size_t n, const char *msg) {
    snprintf(err, n, "%s", msg);
    return -1;
}

int64_t npy_header_bytes(const unsigned char *b, size_t n) {
    static const unsigned char MAGIC[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
    if (memcmp(b, MAGIC, n < 6 ? n : 6) != 0) return -1;
    if (n < 7) return 0;
    if (b[6] < 1 || b[6] > 3) return -1;
    if (b[6] == 1) return n < 10 ? 0 : 10 + (int64_t)(b[8] | (unsigned)b[9] << 8);
    if (n < 12) return 0;
    return 12 + (int64_t)(b[8] | (uint32_t)b[9] << 8 | (uint32_t)b[10] << 16 | (uint32_t)b[11] << 24);
}

/* A bounded view of the header text: [p, end). */
typedef struct npy_text { const char *p, *end; } npy_text;

static void skip_space(npy_text *t) {
    while (t->p < t->end && (*t->p == ' ' || *t->p == '\t' || *t->p == '\n' || *t->p == '\r')) t->p++;
}
static int eat(npy_text *t, char c) {
    skip_space(t);
    if (t->p < t->end && *t->p == c) { t->p++; return 1; }
    return 0;
}
static int eat_word(npy_text *t, const char *w) {
    const size_t n = strlen(w);
    skip_space(t);
    if ((size_t)(t->end - t->p) < n || memcmp(t->p, w, n) != 0) return 0;
    t->p += n;
    return 1;
}
/* A quoted string ('x' or "x"): its bytes in [*s, *s + *len). */
static int eat_string(npy_text *t, const char **s, size_t *len) {
    skip_space(t);
    if (t->p >= t->end || (*t->p != '\'' && *t->p != '"')) return 0;
    const char q = *t->p++;
    const char *from = t->p;
    while (t->p < t->end && *t->p != q) t->p++;
    if (t->p >= t->end) return 0;
    *s = from, *len = (size_t)(t->p - from);
    t->p++;
    return 1;
}
/* A non-negative decimal integer below 2^62 (a Python 2 "L" suffix allowed). */
static int eat_dim(npy_text *t, int64_t *v) {
    skip_space(t);
    if (t->p >= t->end || *t->p < '0' || *t->p > '9') return 0;
    int64_t x = 0;
    while (t->p < t->end && *t->p >= '0' && *t->p <= '9') {
        if (x > ((int64_t)1 << 62) / 10) return 0;
        x = x * 10 + (*t->p++ - '0');
    }
    if (t->p < t->end && *t->p == 'L') t->p++;
    *v = x;
    return 1;
}

int npy_parse_header(const unsigned char *b, size_t n, npy_array *a, size_t *data_off, char *err, size_t errlen) {
    memset(a, 0, sizeof(*a));
    const int64_t hb = npy_header_bytes(b, n);
    if (hb < 0) return fail(err, errlen, "not a .npy file");
    if (hb == 0 || (uint64_t)hb > n) return fail(err, errlen, "truncated header");
    const size_t pre = b[6] == 1 ? 10 : 12;
    if ((uint64_t)hb - pre > NPY_MAX_HEADER) return fail(err, errlen, "header too large");
    npy_text t = {(const char *)b + pre, (const char *)b + hb};
    int have_descr = 0, have_order = 0, have_shape = 0, fortran = 0;
    size_t esz = 0;
    int64_t count = 1;
    if (!eat(&t, '{')) return fail(err, errlen, "unrecognised header (no dictionary)");
    while (!eat(&t, '}')) {
        const char *key;
        size_t klen;
        if (!eat_string(&t, &key, &klen) || !eat(&t, ':')) return fail(err, errlen, "unrecognised header");
        if (klen == 5 && !memcmp(key, "descr", 5) && !have_descr) {
            const char *d;
            size_t dlen;
            if (!eat_string(&t, &d, &dlen)) return fail(err, errlen, "unrecognised header (descr)");
            for (size_t i = 0; i < sizeof(DT) / sizeof(DT[0]) && !esz; i++)
                if (strlen(DT[i].descr) == dlen && !memcmp(DT[i].descr, d, dlen)) a->dtype = DT[i].dtype, esz = DT[i].size;
            if (!esz) return fail(err, errlen, "unsupported dtype (need little-endian f8/f4/f2/i8/i4/i2/i1/u8/u4/u2/u1/b1)");
            have_descr = 1;
        } else if (klen == 13 && !memcmp(key, "fortran_order", 13) && !have_order) {
            if (eat_word(&t, "True")) fortran = 1;
            else if (!eat_word(&t, "False")) return fail(err, errlen, "unrecognised header (fortran_order)");
            have_order = 1;
        } else if (klen == 5 && !memcmp(key, "shape", 5) && !have_shape) {
            if (!eat(&t, '(')) return fail(err, errlen, "bad shape");
            while (!eat(&t, ')')) {
                int64_t v;
                if (a->rank >= 8) return fail(err, errlen, "bad shape (more than 8 dims)");
                if (!eat_dim(&t, &v)) return fail(err, errlen, "bad shape");
                if (v && count > INT64_MAX / 8 / v) return fail(err, errlen, "bad shape (too many elements)");
                a->dims[a->rank++] = v;
                count *= v;
                if (!eat(&t, ',')) {
                    if (!eat(&t, ')')) return fail(err, errlen, "bad shape");
                    break;
                }
            }
            have_shape = 1;
        } else {
            return fail(err, errlen, "unrecognised header (a key other than descr, fortran_order, shape)");
        }
        if (!eat(&t, ',')) {
            if (!eat(&t, '}')) return fail(err, errlen, "unrecognised header");
            break;
        }
    }
    if (!have_descr || !have_order || !have_shape) return fail(err, errlen, "unrecognised header (needs descr, fortran_order and shape)");
    if (fortran) return fail(err, errlen, "Fortran-order arrays are not supported");
    if ((uint64_t)count > SIZE_MAX / esz) return fail(err, errlen, "bad shape (too many elements)");
    a->nbytes = (size_t)count * esz;
    *data_off = (size_t)hb;
    return 0;
}

int npy_load(const unsigned char *b, size_t n, npy_array *a, char *err, size_t errlen) {
    size_t off;
    if (npy_parse_header(b, n, a, &off, err, errlen)) return -1;
    if (n - off < a->nbytes) return fail(err, errlen, "truncated data");
    a->data = malloc(a->nbytes ? a->nbytes : 1);
    if (!a->data) return fail(err, errlen, "out of memory for the data");
    if (a->nbytes) memcpy(a->data, b + off, a->nbytes);
    return 0;
}

static int read_fail(char *err, size_t n, const char *path, const char *why) {
    snprintf(err, n, "%s: %s", path, why);
    return -1;
}

int npy_read(const char *path, npy_array *a, char *err, size_t errlen) {
    memset(a, 0, sizeof(*a));
    FILE *f = fopen(path, "rb");
    if (!f) return read_fail(err, errlen, path, "cannot open");
    unsigned char pre[12];
    const size_t got = fread(pre, 1, sizeof(pre), f);
    int64_t hb = npy_header_bytes(pre, got);
    if (hb < 0) { fclose(f); return read_fail(err, errlen, path, "not a .npy file"); }
    if (hb == 0) { fclose(f); return read_fail(err, errlen, path, "truncated header"); }
    if (hb > NPY_MAX_HEADER + 12) { fclose(f); return read_fail(err, errlen, path, "header too large"); }
    const size_t need = (size_t)hb > got ? (size_t)hb : got;
    unsigned char *h = malloc(need);
    char why[160];
    size_t off = 0;
    if (!h) { fclose(f); return read_fail(err, errlen, path, "out of memory for the header"); }
    memcpy(h, pre, got);
    int bad = fread(h + got, 1, need - got, f) != need - got ? fail(why, sizeof(why), "truncated header")
                                                              : npy_parse_header(h, need, a, &off, why, sizeof(why));
    free(h);
    if (!bad && off != need && fseek(f, (long)off, SEEK_SET) != 0) bad = fail(why, sizeof(why), "cannot seek");
    if (bad) { fclose(f); return read_fail(err, errlen, path, why); }
    a->data = malloc(a->nbytes ? a->nbytes : 1);
    if (!a->data || fread(a->data, 1, a->nbytes, f) != a->nbytes) {
        free(a->data);
        a->data = NULL;
        fclose(f);
        return read_fail(err, errlen, path, "truncated data");
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
