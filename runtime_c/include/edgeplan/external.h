/* An example delegate that forwards a partition to a driver library loaded at run time (dlopen): the seam
 * a vendor NPU stack plugs into (docs/npu.md "A real driver"). The library exports
 *     const ep_driver_v1 *edgeplan_driver_v1(const char *options);
 * and runs the blobs of kind EP_DELEGATE_KIND_EXTERNAL that the compiler wrote for it. The driver's
 * calls map onto a vendor API as RKNN's do (rknn_init on the blob, rknn_set_io_mem on the arena's tensors
 * for zero-copy I/O, rknn_run, rknn_destroy): load binds the partition's tensors once, run computes.
 *
 * The declarations between the EP_CDEF markers are read by the Python wrapper (cffi). */
#ifndef EDGEPLAN_EXTERNAL_H
#define EDGEPLAN_EXTERNAL_H

#include "edgeplan.h"   /* EP_API, ep_status, and delegate.h */

#ifdef __cplusplus
extern "C" {
#endif

/* EP_CDEF_BEGIN */
#define EP_DRIVER_VERSION 1

/* What a driver library exports (edgeplan_driver_v1). */
typedef struct ep_driver_v1 {
    uint32_t struct_size;       /* sizeof(ep_driver_v1) */
    uint32_t version;           /* EP_DRIVER_VERSION */
    const char *name;
    /* Checks the blob against the tensors and prepares to run it; *handle is the driver's own. Returns 0 or
     * a negative status with a one-line reason in why. */
    int32_t (*load)(const void *blob, uint64_t blob_size, const ep_delegate_tensor *inputs, uint32_t n_inputs,
                    const ep_delegate_tensor *outputs, uint32_t n_outputs, void *work, uint64_t work_size,
                    void **handle, char *why, uint32_t why_len);
    int32_t (*run)(void *handle);
    void (*unload)(void *handle);
} ep_driver_v1;

/* The forwarding delegate: open it on a driver library, register &x->delegate at ep_session_open, close it
 * after the sessions that use it. */
typedef struct ep_external {
    ep_delegate delegate;       /* kind EP_DELEGATE_KIND_EXTERNAL */
    const ep_driver_v1 *driver;
    void *lib;                  /* the dlopen handle */
    uint64_t loads, runs, failures;   /* counters over the sessions it served */
} ep_external;

EP_API int32_t ep_external_open(ep_external *x, const char *path, const char *options, char *why, uint32_t why_len);
EP_API void ep_external_close(ep_external *x);
/* EP_CDEF_END */

#ifdef __cplusplus
}
#endif
#endif
