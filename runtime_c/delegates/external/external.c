/* The forwarding delegate of include/edgeplan/external.h: dlopen a driver library, forward init / execute /
 * destroy to its load / run / unload. The driver's handle lives in the partition's ctx. */
#define _GNU_SOURCE 1   /* dlopen's declarations under -std=c11 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include "edgeplan/edgeplan.h"
#include "edgeplan/external.h"

typedef const ep_driver_v1 *(*ep_driver_entry)(const char *options);

static void say(char *why, uint32_t len, const char *fmt, const char *arg) {
    if (why && len) snprintf(why, len, fmt, arg ? arg : "");
}

static int32_t x_init(void *user, const ep_delegate_partition *p, char *why, uint32_t why_len) {
    ep_external *x = (ep_external *)user;
    void *handle = NULL;
    const int32_t rc = x->driver->load(p->blob, p->blob_size, p->inputs, p->n_inputs, p->outputs, p->n_outputs,
                                       p->work, p->work_size, &handle, why, why_len);
    if (rc != 0) return rc < 0 ? rc : EP_ERR_DELEGATE;
    memcpy(p->ctx, &handle, sizeof handle);
    x->loads++;
    return EP_OK;
}

static int32_t x_execute(void *user, const ep_delegate_partition *p) {
    ep_external *x = (ep_external *)user;
    void *handle;
    memcpy(&handle, p->ctx, sizeof handle);
    const int32_t rc = x->driver->run(handle);
    x->runs++;
    if (rc != 0) x->failures++;
    return rc == 0 ? EP_OK : rc < 0 ? rc : EP_ERR_DELEGATE;
}

static void x_destroy(void *user, const ep_delegate_partition *p) {
    ep_external *x = (ep_external *)user;
    void *handle;
    memcpy(&handle, p->ctx, sizeof handle);
    x->driver->unload(handle);
}

int32_t ep_external_open(ep_external *x, const char *path, const char *options, char *why, uint32_t why_len) {
    if (!x || !path) return EP_ERR_INVALID_ARG;
    memset(x, 0, sizeof *x);
    x->lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!x->lib) {
        say(why, why_len, "%s", dlerror());
        return EP_ERR_NOT_FOUND;
    }
    ep_driver_entry entry;
    void *sym = dlsym(x->lib, "edgeplan_driver_v1");
    memcpy(&entry, &sym, sizeof entry);   /* object to function pointer, as POSIX allows */
    const ep_driver_v1 *d = entry ? entry(options ? options : "") : NULL;
    if (!d || d->struct_size < sizeof(ep_driver_v1) || d->version != EP_DRIVER_VERSION || !d->load || !d->run ||
        !d->unload) {
        say(why, why_len, "%s: no edgeplan_driver_v1 of version 1", path);
        dlclose(x->lib);
        x->lib = NULL;
        return EP_ERR_DELEGATE_ABI;
    }
    x->driver = d;
    x->delegate.struct_size = sizeof x->delegate;
    x->delegate.abi_version = EP_DELEGATE_ABI_VERSION;
    x->delegate.kind = EP_DELEGATE_KIND_EXTERNAL;
    x->delegate.name = d->name ? d->name : "external";
    x->delegate.user = x;
    x->delegate.init = x_init;
    x->delegate.execute = x_execute;
    x->delegate.destroy = x_destroy;
    return EP_OK;
}

void ep_external_close(ep_external *x) {
    if (x && x->lib) dlclose(x->lib);
    if (x) memset(x, 0, sizeof *x);
}
