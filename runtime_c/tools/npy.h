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

/* Returns 0 or -1 with a reason in err. */
int npy_read(const char *path, npy_array *a, char *err, size_t errlen);
int npy_write(const char *path, int32_t dtype, int32_t rank, const int32_t *dims, const void *data, size_t nbytes);
const char *npy_dtype_descr(int32_t dtype);
#endif
