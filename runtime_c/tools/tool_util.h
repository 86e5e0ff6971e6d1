/* What the board tools share: a monotonic clock and the process's peak resident set. */
#ifndef EP_TOOL_UTIL_H
#define EP_TOOL_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static inline double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Peak resident set of this process in KiB: VmHWM where /proc exists (ru_maxrss also carries the
 * parent's peak across exec on Linux), else ru_maxrss. */
static inline long peak_rss_kib(void) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    while (f && fgets(line, sizeof(line), f))
        if (strncmp(line, "VmHWM:", 6) == 0) kib = strtol(line + 6, NULL, 10);
    if (f) fclose(f);
    if (kib < 0) {
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        kib = ru.ru_maxrss;
    }
    return kib;
}

#endif
