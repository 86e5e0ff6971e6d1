/* Minimal .npy (format 1.0/2.0/3.0) reading and writing for edgeplan-run: C order, little-endian,
 * the dtypes edgeplan knows. Host/board tool code: it may allocate (the runtime library does not). */
#ifndef EP_NPY_H
#define EP_NPY_H
#include <stddef.h>
#include <stdint.h>

typedef struct npy_array {
    int32_t dtype;        /* EP_DTYPE_* */
    int32_t rank;
    int64_t dims[8];
    void *data;           /* malloc'ed */
    size_t nbytes;
} npy_array;

#define NPY_MAX_HEADER 65536   /* the longest header read (numpy writes ~128 bytes) */

/* The bytes of a .npy file's preamble and header (the data's offset), from its first n bytes: 0 when n is too
 * short to tell (12 bytes always are), -1 when they are not a .npy preamble of version 1, 2 or 3. */
int64_t npy_header_bytes(const unsigned char *b, size_t n);
/* Parses the preamble and header held in b (n bytes, at least npy_header_bytes of them; the data need not
 * follow): fills dtype, rank, dims and nbytes (data NULL) and *data_off. Returns 0 or -1 with a reason in err.
 * Bounded: b need not be NUL-terminated, and nothing past b[n - 1] is read. */
int npy_parse_header(const unsigned char *b, size_t n, npy_array *a, size_t *data_off, char *err, size_t errlen);
/* A whole .npy image in memory: the header parsed, the data copied into a malloc'ed buffer (a->data). Bytes
 * after the data are ignored. Returns 0 or -1 with a reason in err. */
int npy_load(const unsigned char *b, size_t n, npy_array *a, char *err, size_t errlen);
/* A .npy file: the same checks as npy_load (the header through npy_parse_header), reasons prefixed by the path.
 * Returns 0 or -1 with a reason in err. */
int npy_read(const char *path, npy_array *a, char *err, size_t errlen);
int npy_write(const char *path, int32_t dtype, int32_t rank, const int32_t *dims, const void *data, size_t nbytes);
const char *npy_dtype_descr(int32_t dtype);
#endif
