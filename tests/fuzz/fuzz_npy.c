/* Fuzz target: edgeplan-run's .npy reader (runtime_c/tools/npy.c) on untrusted bytes. npy_load must refuse the
 * input with a reason or return an array whose byte count is its shape's
 * times a power-of-two element size; the header parser must agree with the
 * loader, and a parsed header must survive having its data cut off. Built by meson -Dfuzz=true (tests/fuzz). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "npy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    /* an exact-size copy: a read past the end is a sanitizer report */
    unsigned char *b = malloc(size ? size : 1);
    if (!b) return 0;
    if (size) memcpy(b, data, size);
    npy_array a, h;
    char err[256], herr[256];
    size_t off = 0;
    const int hrc = npy_parse_header(b, size, &h, &off, herr, sizeof(herr));
    const int rc = npy_load(b, size, &a, err, sizeof(err));
    if (rc == 0) {
        uint64_t n = 1;
        for (int k = 0; k < a.rank; k++) n *= (uint64_t)a.dims[k];
        if (hrc != 0 || a.rank < 0 || a.rank > 8 || !a.data || !npy_dtype_descr(a.dtype) || off > size ||
            a.nbytes > size - off || (n ? a.nbytes % n != 0 || (a.nbytes / n & (a.nbytes / n - 1)) || a.nbytes / n > 8 : a.nbytes != 0) || memcmp(a.data, b + off, a.nbytes) != 0)
            abort();   /* a loaded array that disagrees with its header or its bytes */
        free(a.data);
        if (npy_parse_header(b, off, &h, &off, herr, sizeof(herr)) != 0) abort();   /* the header alone parses */
    } else if (!err[0] || memchr(err, '\0', sizeof(err)) == NULL) {
        abort();   /* a refusal without a reason */
    }
    free(b);
    return 0;
}
