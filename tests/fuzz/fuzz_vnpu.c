/* Fuzz target: the virtual NPU delegate (runtime_c/delegates/vnpu) on untrusted blobs. The last input byte is
 * control; the rest is an EPN-1 blob, its CRC re-sealed (three inputs in four) so that a mutation reaches the
 * stream checks behind it. The partition's tensors are the ones the blob's I/O table declares (control bit 7
 * grows one dim by 1, which init must refuse), each in a buffer of exactly its size; the working memory is the
 * header's work + SRAM (control bits 0-1: exact, 64 more, 1 less, none). The device is the preset with the blob's
 * MAC count, or (bit 4) preset (ctl >> 5).
 *
 * init must refuse with EP_ERR_DELEGATE_BLOB and a reason, or accept; an accepted blob is estimated (which must
 * accept it too), executed twice (when its MACs are few enough to run fast) with the cycle counts equal to the
 * estimate's, its inputs left unchanged, and destroyed. A crash, a sanitizer report or a hang is a finding.
 * FUZZ_VNPU_VERBOSE=1 prints each init's status and reason. Built by meson -Dfuzz=true (tests/fuzz). */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "edgeplan/edgeplan.h"
#include "edgeplan/vnpu.h"

#define TENSOR_CAP (1u << 20)
#define WORK_CAP (4u << 20)
#define EXEC_MACS_CAP (1u << 24)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static ep_vnpu_device devs[8];
static uint32_t n_devs;

static void open_devices(void) {
    for (uint32_t i = 0; i < ep_vnpu_preset_count() && n_devs < 8; i++) {
        ep_vnpu_config cfg;
        if (ep_vnpu_preset(ep_vnpu_preset_name(i), &cfg) == EP_OK && ep_vnpu_open(&devs[n_devs], &cfg) == EP_OK)
            n_devs++;
    }
    if (!n_devs) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!n_devs) open_devices();
    if (size < 1) return 0;
    const uint8_t ctl = data[size - 1];
    const size_t len = size - 1;
    /* the blob in a 64-aligned buffer of exactly len bytes: a read past its end is a sanitizer report */
    void *mem = NULL;
    if (posix_memalign(&mem, 64, len ? len : 1)) return 0;
    uint8_t *blob = mem;
    memcpy(blob, data, len);
    ep_vnpu_header h;
    memset(&h, 0, sizeof h);
    if (len >= sizeof h) {
        memcpy(&h, blob, sizeof h);
        if ((ctl & 0x0c) != 0x0c && h.blob_bytes >= sizeof h && h.blob_bytes <= len) {
            memset(blob + offsetof(ep_vnpu_header, crc32c), 0, 4);
            const uint32_t crc = ep_crc32c(blob, h.blob_bytes);
            memcpy(blob + offsetof(ep_vnpu_header, crc32c), &crc, 4);
        }
    }
    ep_vnpu_device *dev = &devs[0];
    if (ctl & 0x10) dev = &devs[(ctl >> 5) % n_devs];
    else
        for (uint32_t i = 0; i < n_devs; i++)
            if (devs[i].cfg.macs_per_cycle == h.macs_per_cycle) { dev = &devs[i]; break; }

    /* the partition's tensors, as the blob's I/O table declares them (clamped to what can be allocated) */
    ep_delegate_tensor io[2 * EP_DELEGATE_MAX_IO];
    uint8_t *copies[EP_DELEGATE_MAX_IO];
    memset(io, 0, sizeof io);
    memset(copies, 0, sizeof copies);
    uint32_t n_in = h.n_inputs <= EP_DELEGATE_MAX_IO ? h.n_inputs : EP_DELEGATE_MAX_IO;
    uint32_t n_out = h.n_outputs <= EP_DELEGATE_MAX_IO ? h.n_outputs : EP_DELEGATE_MAX_IO;
    for (uint32_t k = 0; k < n_in + n_out; k++) {
        ep_delegate_tensor *t = &io[k];
        const uint64_t at = (uint64_t)h.io_offset + (uint64_t)k * EP_VNPU_IO_BYTES;
        ep_vnpu_io r;
        memset(&r, 0, sizeof r);
        if (at + sizeof r <= len) memcpy(&r, blob + at, sizeof r);
        t->dtype = r.dtype;
        t->rank = r.rank >= 0 && r.rank <= 8 ? r.rank : 0;
        for (int d = 0; d < t->rank; d++) t->dims[d] = r.dims[d];
        t->nbytes = r.nbytes <= TENSOR_CAP ? r.nbytes : 0;
        t->data = malloc(t->nbytes ? (size_t)t->nbytes : 1);
        for (uint64_t i = 0; t->data && i < t->nbytes; i++) ((uint8_t *)t->data)[i] = (uint8_t)(i * 37u + ctl);
    }
    int perturbed = 0;
    if ((ctl & 0x80) && n_in + n_out) {   /* a tensor that does not match its record: init must refuse */
        ep_delegate_tensor *t = &io[ctl % (n_in + n_out)];
        if (t->rank) t->dims[t->rank - 1]++, perturbed = 1;
        else if (t->nbytes) t->nbytes--, perturbed = 1;
    }
    for (uint32_t k = 0; k < n_in; k++) {
        copies[k] = malloc(io[k].nbytes ? (size_t)io[k].nbytes : 1);
        if (copies[k] && io[k].data) memcpy(copies[k], io[k].data, (size_t)io[k].nbytes);
    }
    uint64_t work_size = ((uint64_t)h.work_bytes + 63u) / 64u * 64u + h.sram_used;
    switch (ctl & 3) {
    case 1: work_size += 64; break;
    case 2: work_size = work_size ? work_size - 1 : 0; break;
    case 3: work_size = 0; break;
    default: break;
    }
    if (work_size > WORK_CAP) work_size = 0;
    void *work = NULL;
    if (posix_memalign(&work, 64, work_size ? (size_t)work_size : 1)) work = NULL;

    _Alignas(16) uint8_t ctx[EP_DELEGATE_CTX_BYTES];
    ep_delegate_partition p;
    memset(&p, 0, sizeof p);
    p.struct_size = sizeof p, p.kind = EP_DELEGATE_KIND_VNPU;
    p.blob = blob, p.blob_size = len, p.work = work, p.work_size = work_size, p.ctx = ctx;
    p.inputs = io, p.outputs = io + n_in, p.n_inputs = n_in, p.n_outputs = n_out;
    char why[256];
    why[0] = '\0';
    const ep_delegate *d = &dev->delegate;
    const int32_t rc = work ? d->init(d->user, &p, why, (uint32_t)sizeof why) : EP_ERR_DELEGATE_BLOB;
    if (getenv("FUZZ_VNPU_VERBOSE")) fprintf(stderr, "init %d %s (%s)\n", (int)rc, why, dev->name);
    if (rc != EP_OK) {
        if (work && (rc != EP_ERR_DELEGATE_BLOB || !why[0] || !memchr(why, '\0', sizeof why))) abort();
    } else {
        if (perturbed) abort();   /* init accepted a tensor that is not the one the blob was compiled for */
        uint32_t n_ops = 0;
        ep_vnpu_counters est;
        char ewhy[256];
        if (ep_vnpu_estimate(blob, len, &dev->cfg, NULL, 0, &n_ops, &est, ewhy, sizeof ewhy) != EP_OK)
            abort();   /* init accepted what the estimator refuses */
        if (est.mac_ops <= EXEC_MACS_CAP) {
            for (int pass = 0; pass < 2; pass++) {
                if (d->execute(d->user, &p) == EP_OK && dev->last.active_cycles != est.active_cycles)
                    abort();   /* execute's cycles differ from the estimate's */
            }
            for (uint32_t k = 0; k < n_in; k++)
                if (copies[k] && io[k].data && memcmp(copies[k], io[k].data, (size_t)io[k].nbytes)) abort();
        }
        d->destroy(d->user, &p);
    }
    for (uint32_t k = 0; k < n_in + n_out; k++) free(io[k].data);
    for (uint32_t k = 0; k < n_in; k++) free(copies[k]);
    free(work);
    free(blob);
    return 0;
}
