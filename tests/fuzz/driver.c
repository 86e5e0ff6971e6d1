/* A stand-in for libFuzzer where the compiler has none (gcc): runs each corpus file through the target once,
 * then N mutations of them (bit flips, byte overwrites with extreme values, 8-byte field writes at
 * 8-aligned offsets, truncation, duplication of a range), seeded, under the build's sanitizers.
 *
 *   fuzz_TARGET [-runs=N] [-seed=S] CORPUS_DIR_OR_FILE...
 *
 * Prints the executions; a crash or sanitizer report ends the process (the input is in crash-<n> in the current
 * directory, as libFuzzer names them). No coverage guidance: a clang build gets that.
 *
 * A target that defines LLVMFuzzerCustomMutator (libFuzzer's hook; a weak symbol here) has three mutations in
 * four made by it; LLVMFuzzerMutate, which a custom mutator calls for byte-level changes, is the driver's own. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
#if defined(__GNUC__)
    __attribute__((weak))
#endif
    ;

#define MAX_INPUTS 256
static uint8_t *inputs[MAX_INPUTS];
static size_t sizes[MAX_INPUTS];
static int n_inputs;

static uint64_t state;
static uint64_t rnd(void) {   /* splitmix64 */
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static void add_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f || n_inputs == MAX_INPUTS) { if (f) fclose(f); return; }
    fseek(f, 0, SEEK_END);
    const long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = n > 0 ? malloc((size_t)n) : NULL;
    if (b && fread(b, 1, (size_t)n, f) == (size_t)n) inputs[n_inputs] = b, sizes[n_inputs++] = (size_t)n;
    else free(b);
    fclose(f);
}

static void add_path(const char *path) {
    struct stat st;
    if (stat(path, &st) != 0) return;
    if (!S_ISDIR(st.st_mode)) { add_file(path); return; }
    DIR *d = opendir(path);
    struct dirent *e;
    char p[4096];
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        snprintf(p, sizeof p, "%s/%s", path, e->d_name);
        add_file(p);
    }
    if (d) closedir(d);
}

static void save(const uint8_t *b, size_t n, long k) {   /* written before the run: a crash leaves it behind */
    char name[64];
    snprintf(name, sizeof name, "crash-%ld", k);
    FILE *f = fopen(name, "wb");
    if (f) { fwrite(b, 1, n, f); fclose(f); }
}

/* 1-4 byte-level edits: bit flips, extreme values, 8-byte field writes, truncation, a range repeated. */
size_t LLVMFuzzerMutate(uint8_t *b, size_t n, size_t max_size) {
    static const uint64_t EXTREME[] = {0, 1, 0x7f, 0x80, 0xff, 0xffff, 0x7fffffff, 0x80000000u, 0xffffffffu,
                                       0x7fffffffffffffffull, ~0ull};
    (void)max_size;   /* never grows */
    const int edits = 1 + (int)(rnd() % 4);
    for (int e = 0; e < edits && n; e++) {
        const size_t at = (size_t)(rnd() % n);
        switch (rnd() % 5) {
        case 0: b[at] ^= (uint8_t)(1u << (rnd() % 8)); break;
        case 1: b[at] = (uint8_t)EXTREME[rnd() % 11]; break;
        case 2: {
            const size_t o = at & ~(size_t)7;
            const uint64_t v = EXTREME[rnd() % 11];
            if (o + 8 <= n) memcpy(b + o, &v, 8);
            break;
        }
        case 3: n = at + 1; break;                                   /* truncate */
        default: {                                                   /* repeat a range over another */
            const size_t from = (size_t)(rnd() % n), len = (size_t)(rnd() % 64);
            if (from + len <= n && at + len <= n) memmove(b + at, b + from, len);
        }
        }
    }
    return n;
}

int main(int argc, char **argv) {
    long runs = 10000;
    for (int i = 1; i < argc; i++) {
        if (!strncmp(argv[i], "-runs=", 6)) runs = atol(argv[i] + 6);
        else if (!strncmp(argv[i], "-seed=", 6)) state = strtoull(argv[i] + 6, NULL, 10);
        else if (argv[i][0] != '-') add_path(argv[i]);
    }
    if (!n_inputs) { fprintf(stderr, "no corpus inputs\n"); return 2; }
    for (int i = 0; i < n_inputs; i++) LLVMFuzzerTestOneInput(inputs[i], sizes[i]);
    for (long k = 0; k < runs; k++) {
        const int src = (int)(rnd() % (uint64_t)n_inputs);
        size_t n = sizes[src];
        uint8_t *b = malloc(n + 64);
        memcpy(b, inputs[src], n);
        if (LLVMFuzzerCustomMutator && rnd() % 4) n = LLVMFuzzerCustomMutator(b, n, n + 64, (unsigned)rnd());
        else n = LLVMFuzzerMutate(b, n, n + 64);
        save(b, n, k % 2);   /* the last two inputs stay on disk until the run ends */
        LLVMFuzzerTestOneInput(b, n);
        free(b);
    }
    remove("crash-0");
    remove("crash-1");
    printf("Done %ld runs (mutation driver, no coverage guidance)\n", runs + n_inputs);
    return 0;
}
