/* edgeplan-speech: the speech pipelines on a board with no Python (runtime_c/speech/ep_speech.h).
 *
 *   edgeplan-speech vad PLAN in.wav [--threshold P] [--min-silence-ms MS] [--min-speech-ms MS] [--speech-pad-ms MS]
 *       a Silero VAD plan (compiled with its state in the arena and sr fixed: input [1, window + context]);
 *       prints one "start end" (seconds) a line.
 *   edgeplan-speech tts PLAN --ids 1,0,20,... -o out.wav [--scales NOISE,LENGTH,NOISE_W] [--rate HZ]
 *       a Piper voice's plan (inputs input [1, N], input_lengths [1], scales [3]; output 'output').
 *   edgeplan-speech asr DIR in.wav
 *       a Whisper folder of plans: encoder.eplan and decoder_with_past.eplan (the cache; the prompt goes
 *       in token by token from an empty one) or decoder.eplan (the whole sequence each step), whisper.txt
 *       (the special ids, as tools/whisper_ct2.py writes them) and vocabulary.txt; greedy decoding, 30 s
 *       windows; prints the text.
 *
 * Each prints its latency on stderr, and its memory: the plans' mapped bytes, the arenas, the peak RSS. Plans are mmapped, arenas allocated once. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "edgeplan/edgeplan.h"
#include "ep_speech.h"
#include "tool_util.h"

#define MAX_SPANS 4096
#define MAX_LIST 512

static int die(const char *fmt, const char *a, const char *b) {
    fprintf(stderr, "edgeplan-speech: ");
    fprintf(stderr, fmt, a, b);
    fprintf(stderr, "\n");
    return 1;
}

/* ---- files ---- */
static void *map_file(const char *path, size_t *len) {
    int fd = open(path, O_RDONLY);
    struct stat st;
    if (fd < 0) return NULL;
    if (fstat(fd, &st) != 0 || st.st_size == 0) {
        close(fd);
        return NULL;
    }
    void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (p == MAP_FAILED) return NULL;
    *len = (size_t)st.st_size;
    return p;
}

static uint64_t g_plan_bytes, g_arena_bytes;   /* every plan opened: mapped bytes, arena bytes */

/* the memory line every mode ends with: what the plans hold against the peak resident set */
static void memory_line(void) {
    const double plans = g_plan_bytes / 1048576.0, arenas = g_arena_bytes / 1048576.0, peak = peak_rss_kib() / 1024.0;
    fprintf(stderr, "memory: plans %.1f MiB (weights in place), arenas %.1f MiB, peak RSS %.1f MiB (%+.1f MiB beyond them)\n",
            plans, arenas, peak, peak - plans - arenas);
}

typedef struct plan {
    ep_session *s;
    void *arena;
    const char *path;
} plan;

static int open_plan(plan *p, const char *path) {
    size_t len = 0;
    void *bytes = map_file(path, &len);
    if (!bytes) return die("cannot read %s%s", path, "");
    ep_plan_info info;
    int rc = ep_plan_query(bytes, len, &info);
    if (rc) return die("%s: %s", path, ep_status_str(rc));
    const size_t n = info.arena_bytes ? (size_t)info.arena_bytes : 64;
    if (posix_memalign(&p->arena, 64, n)) return die("cannot allocate the arena of %s%s", path, "");
    g_plan_bytes += len, g_arena_bytes += n;
    memset(p->arena, 0, n);
    char err[256] = "";
    ep_options opt;
    memset(&opt, 0, sizeof(opt));
    opt.struct_size = sizeof(opt);
    opt.error_buf = err;
    opt.error_buf_len = sizeof(err);
    opt.n_threads = 1;
    rc = ep_session_open(&p->s, bytes, len, p->arena, (size_t)info.arena_bytes, &opt);
    if (rc) {
        fprintf(stderr, "edgeplan-speech: cannot open %s: %s: %s\n", path, ep_status_str(rc), err);
        return 1;
    }
    p->path = path;
    return 0;
}

/* input or output `name` of p: its index and desc; 1 with a message when the plan has none */
static int io(const plan *p, uint32_t kind, const char *name, uint32_t *i, ep_io_desc *d) {
    if (ep_session_find(p->s, kind, name, i) || ep_session_io_desc(p->s, kind, *i, d)) {
        fprintf(stderr, "edgeplan-speech: %s has no %s '%s'\n", p->path, kind == EP_IO_INPUT ? "input" : "output", name);
        return 1;
    }
    return 0;
}

static int run(const plan *p) {
    int rc = ep_run(p->s);
    if (rc) {
        ep_session_info si = {.struct_size = sizeof(si)};
        const char *why = ep_session_query(p->s, &si) == EP_OK && si.last_error ? si.last_error : "";
        fprintf(stderr, "edgeplan-speech: %s: %s %s\n", p->path, ep_status_str(rc), why);
    }
    return rc;
}

static int read_wav(const char *path, ep_wav *w, size_t *len) {
    void *buf = map_file(path, len);
    char why[128];
    if (!buf) return die("cannot read %s%s", path, "");
    if (ep_wav_parse(buf, *len, w, why, sizeof why)) return die("%s: %s", path, why);
    return 0;
}

/* A whole argument as a finite float in [lo, hi]: 0, or -1 (empty, trailing characters, out of range). */
static int parse_float(const char *s, float lo, float hi, float *out) {
    char *end;
    errno = 0;
    const float v = strtof(s, &end);
    if (end == s || *end || errno || !(v >= lo && v <= hi)) return -1;
    *out = v;
    return 0;
}

/* "1,2,3" -> out; the count, or -1 */
static int parse_list(const char *s, long *out, int max) {
    int n = 0;
    while (*s) {
        char *end;
        long v = strtol(s, &end, 10);
        if (end == s || n >= max) return -1;
        out[n++] = v;
        s = *end == ',' ? end + 1 : end;
        if (*end && *end != ',') return -1;
    }
    return n;
}

/* ---- vad ---- */
static int cmd_vad(int argc, char **argv) {
    if (argc < 2) return die("vad needs PLAN WAV%s%s", "", "");
    ep_vad_params vp = {0.5f, -1.0f, 250.0f, 100.0f, 30.0f};
    for (int i = 2; i < argc; i += 2) {
        const int thr = !strcmp(argv[i], "--threshold");
        float *f = thr ? &vp.threshold : !strcmp(argv[i], "--min-silence-ms") ? &vp.min_silence_ms
                 : !strcmp(argv[i], "--min-speech-ms") ? &vp.min_speech_ms : !strcmp(argv[i], "--speech-pad-ms") ? &vp.speech_pad_ms : NULL;
        if (!f) return die("vad: unknown option %s%s", argv[i], "");
        if (i + 1 >= argc) return die("vad: %s needs a value%s", argv[i], "");
        if (parse_float(argv[i + 1], 0.0f, thr ? 1.0f : 3.6e6f, f))
            return die(thr ? "vad: %s %s: expected a probability in 0..1" : "vad: %s %s: expected milliseconds in 0..3600000",
                       argv[i], argv[i + 1]);
    }
    ep_wav w;
    size_t len;
    if (read_wav(argv[1], &w, &len)) return 1;
    if (w.rate != 16000 && w.rate != 8000) return die("%s: Silero VAD takes 8000 or 16000 Hz%s", argv[1], "");
    if (w.frames == 0) return die("%s: no samples%s", argv[1], "");
    plan p;
    if (open_plan(&p, argv[0])) return 1;
    uint32_t xi;
    ep_io_desc xd, yd;
    uint32_t yi;
    if (io(&p, EP_IO_INPUT, "input", &xi, &xd) || io(&p, EP_IO_OUTPUT, "output", &yi, &yd)) return 1;
    const uint32_t window = w.rate == 16000 ? 512 : 256, context = w.rate == 16000 ? 64 : 32;
    if (xd.rank != 2 || (uint32_t)xd.dims[1] != window + context) return die("%s: not a Silero VAD plan for this rate%s", argv[0], "");
    const size_t n = (size_t)((w.frames + window - 1) / window);
    float *probs = malloc(sizeof(float) * (n ? n : 1));
    float *x = (float *)ep_session_io_buffer(p.s, EP_IO_INPUT, xi);
    const float *y = (const float *)ep_session_io_buffer(p.s, EP_IO_OUTPUT, yi);
    if (!probs || !x || !y) return die("out of memory%s%s", "", "");
    if (ep_reset(p.s)) return 1;
    double t0 = now_ms();
    memset(x, 0, sizeof(float) * (window + context));
    for (size_t k = 0; k < n; k++) {
        if (k) memmove(x, x + window, sizeof(float) * context);   /* the last samples of the window before */
        ep_wav_mono(&w, (uint64_t)k * window, window, x + context);
        if (run(&p)) return 1;
        probs[k] = y[0];
    }
    const double ms = now_ms() - t0;
    static uint64_t spans[MAX_SPANS][2];
    const size_t m = ep_vad_segments(probs, n, window, w.rate, w.frames, &vp, spans, MAX_SPANS);
    for (size_t k = 0; k < m && k < MAX_SPANS; k++)
        printf("%.3f %.3f\n", (double)spans[k][0] / w.rate, (double)spans[k][1] / w.rate);
    fprintf(stderr, "# %zu segment(s); %zu windows of %u samples, %.3f ms a window\n", m, n, window,
            ms / (double)(n ? n : 1));
    memory_line();
    return 0;
}

/* ---- tts ---- */
static int cmd_tts(int argc, char **argv) {
    const char *ids_s = NULL, *out = NULL, *sc_s = "0.667,1,0.8";
    long rate = 22050;
    for (int i = 1; i < argc; i += 2) {
        if (i + 1 >= argc) return die("tts: %s needs a value%s", argv[i], "");
        if (!strcmp(argv[i], "--ids")) ids_s = argv[i + 1];
        else if (!strcmp(argv[i], "-o")) out = argv[i + 1];
        else if (!strcmp(argv[i], "--scales")) sc_s = argv[i + 1];
        else if (!strcmp(argv[i], "--rate")) {
            char *end;
            rate = strtol(argv[i + 1], &end, 10);
            if (end == argv[i + 1] || *end) rate = 0;   /* refused below */
        } else return die("tts: unknown option %s%s", argv[i], "");
    }
    if (argc < 1 || !ids_s || !out) return die("tts needs PLAN --ids 1,0,20,... -o out.wav%s%s", "", "");
    if (rate < 1 || rate > 768000) return die("--rate: a sample rate in 1..768000 Hz%s%s", "", "");
    static long ids[8192];
    const int n = parse_list(ids_s, ids, 8192);
    if (n <= 0) return die("--ids %s: expected comma-separated integer ids%s", ids_s, "");
    float scales[3];
    {
        char buf[128];
        snprintf(buf, sizeof buf, "%s", sc_s);
        char *s = buf;
        for (int k = 0; k < 3; k++) {
            char *end;
            scales[k] = strtof(s, &end);
            if (end == s || !(scales[k] >= 0.0f && scales[k] <= 100.0f) || (k < 2 ? *end != ',' : *end != '\0'))
                return die("--scales %s: expected NOISE,LENGTH,NOISE_W (three numbers in 0..100)%s", sc_s, "");
            s = end + (k < 2);
        }
    }
    plan p;
    if (open_plan(&p, argv[0])) return 1;
    uint32_t ii, li, si, oi;
    ep_io_desc id, ld, sd, od;
    if (io(&p, EP_IO_INPUT, "input", &ii, &id) || io(&p, EP_IO_INPUT, "input_lengths", &li, &ld) ||
        io(&p, EP_IO_INPUT, "scales", &si, &sd) || io(&p, EP_IO_OUTPUT, "output", &oi, &od))
        return 1;
    const int cap = id.dims[id.rank - 1];
    if (n > cap) {
        fprintf(stderr, "edgeplan-speech: %d ids; this voice's plan takes at most %d\n", n, cap);
        return 1;
    }
    int64_t *x = (int64_t *)ep_session_io_buffer(p.s, EP_IO_INPUT, ii);
    for (int k = 0; k < cap; k++) x[k] = k < n ? ids[k] : 0;
    *(int64_t *)ep_session_io_buffer(p.s, EP_IO_INPUT, li) = n;
    memcpy(ep_session_io_buffer(p.s, EP_IO_INPUT, si), scales, sizeof scales);
    double t0 = now_ms();
    if (run(&p)) return 1;
    const double ms = now_ms() - t0;
    if (ep_session_io_desc(p.s, EP_IO_OUTPUT, oi, &od)) return 1;
    const size_t samples = (size_t)(od.nbytes / 4);
    const float *y = (const float *)ep_session_io_buffer(p.s, EP_IO_OUTPUT, oi);
    uint8_t *pcm = malloc(44 + 2 * samples);
    if (!pcm) return die("out of memory%s%s", "", "");
    ep_wav_header16(pcm, (uint32_t)rate, (uint32_t)samples);
    ep_wav_pcm16(y, samples, pcm + 44);
    FILE *f = fopen(out, "wb");
    if (!f || fwrite(pcm, 1, 44 + 2 * samples, f) != 44 + 2 * samples || fclose(f)) return die("cannot write %s%s", out, "");
    const double dur = (double)samples / (double)rate;
    printf("%d ids -> %zu samples (%.3f s at %ld Hz) -> %s\n", n, samples, dur, rate, out);
    fprintf(stderr, "latency: %.1f ms, real-time factor %.4f\n", ms, dur > 0 ? ms / 1e3 / dur : 0.0);
    memory_line();
    return 0;
}

/* ---- asr ---- */
typedef struct whisper_cfg {
    long eot, no_timestamps, timestamp_begin, vocab, max_tokens, window;
    long prompt[8], suppress[MAX_LIST], suppress_begin[16];
    int n_prompt, n_suppress, n_suppress_begin;
} whisper_cfg;

/* whisper.txt: "key value" lines, lists comma-separated */
static int read_cfg(const char *path, whisper_cfg *c) {
    FILE *f = fopen(path, "r");
    if (!f) return die("cannot read %s (tools/whisper_ct2.py writes it)%s", path, "");
    memset(c, 0, sizeof(*c));
    static char line[16384];
    while (fgets(line, sizeof line, f)) {
        char key[64], val[16000];
        if (sscanf(line, "%63s %15999s", key, val) != 2) continue;
        if (!strcmp(key, "eot")) c->eot = atol(val);
        else if (!strcmp(key, "no_timestamps")) c->no_timestamps = atol(val);
        else if (!strcmp(key, "timestamp_begin")) c->timestamp_begin = atol(val);
        else if (!strcmp(key, "vocab")) c->vocab = atol(val);
        else if (!strcmp(key, "max_tokens")) c->max_tokens = atol(val);
        else if (!strcmp(key, "window")) c->window = atol(val);
        else if (!strcmp(key, "prompt")) c->n_prompt = parse_list(val, c->prompt, 8);
        else if (!strcmp(key, "suppress")) c->n_suppress = parse_list(val, c->suppress, MAX_LIST);
        else if (!strcmp(key, "suppress_begin")) c->n_suppress_begin = parse_list(val, c->suppress_begin, 16);
    }
    fclose(f);
    if (c->vocab <= 0 || c->max_tokens <= 0 || c->window <= 0 || c->n_prompt <= 0 || c->n_suppress < 0 ||
        c->n_suppress_begin < 0)
        return die("%s: incomplete (vocab, max_tokens, window, prompt needed)%s", path, "");
    return 0;
}

static int argmax_suppressed(const float *lg, const whisper_cfg *c, int first) {
    int best = -1;
    float bv = -INFINITY;
    for (long v = 0; v < c->vocab && v < c->timestamp_begin; v++) {
        if (lg[v] > bv || best < 0) {
            int skip = 0;
            for (int k = 0; !skip && k < c->n_suppress; k++) skip = c->suppress[k] == v;
            for (int k = 0; first && !skip && k < c->n_suppress_begin; k++) skip = c->suppress_begin[k] == v;
            if (!skip && (lg[v] > bv || best < 0)) best = (int)v, bv = lg[v];
        }
    }
    return best;
}

static int cmd_asr(int argc, char **argv) {
    if (argc < 2) return die("asr needs DIR WAV%s%s", "", "");
    char path[4096];
    whisper_cfg c;
    snprintf(path, sizeof path, "%s/whisper.txt", argv[0]);
    if (read_cfg(path, &c)) return 1;
    ep_wav w;
    size_t wlen;
    if (read_wav(argv[1], &w, &wlen)) return 1;
    if (w.rate != 16000) return die("%s: the model takes 16000 Hz%s", argv[1], "");
    if (w.frames == 0) return die("%s: no samples%s", argv[1], "");
    /* the vocabulary: one token a line */
    snprintf(path, sizeof path, "%s/vocabulary.txt", argv[0]);
    size_t vlen = 0;
    char *vtext = map_file(path, &vlen);
    if (!vtext) return die("cannot read %s%s", path, "");
    const char **tok = calloc((size_t)c.vocab, sizeof(char *));
    size_t *tlen = calloc((size_t)c.vocab, sizeof(size_t));
    if (!tok || !tlen) return die("out of memory%s%s", "", "");
    for (size_t o = 0, k = 0; o < vlen && k < (size_t)c.vocab; k++) {
        const char *nl = memchr(vtext + o, '\n', vlen - o);
        const size_t e = nl ? (size_t)(nl - vtext) : vlen;
        tok[k] = vtext + o, tlen[k] = e - o, o = e + 1;
    }
    static plan enc, dec, past;
    int have_past = 0;
    snprintf(path, sizeof path, "%s/encoder.eplan", argv[0]);
    char p1[4096], p2[4096];
    snprintf(p1, sizeof p1, "%s/decoder.eplan", argv[0]);
    snprintf(p2, sizeof p2, "%s/decoder_with_past.eplan", argv[0]);
    /* with decoder_with_past the prompt too goes in token by token, from an empty cache: the plain decoder
     * is not opened */
    if (open_plan(&enc, path)) return 1;
    if (access(p2, R_OK) == 0) {
        if (open_plan(&past, p2)) return 1;
        have_past = 1;
    } else if (open_plan(&dec, p1)) {
        return 1;
    }
    uint32_t ai, di[8];
    ep_io_desc ad, dd;
    if (io(&enc, EP_IO_INPUT, "audio", &ai, &ad)) return 1;
    /* the encoder's cross_* outputs (each layer's cross-attention keys and values) go into the decoder's
     * inputs of the same names, once a window */
    enum { MAX_CROSS = 64 };
    struct { const void *src; void *dec; size_t n; } cross[MAX_CROSS];
    int n_cross = 0;
    ep_session_info ei = {.struct_size = sizeof(ei)};
    if (ep_session_query(enc.s, &ei)) return 1;
    for (uint32_t o = 0; o < ei.n_outputs; o++) {
        ep_io_desc od;
        uint32_t j;
        if (ep_session_io_desc(enc.s, EP_IO_OUTPUT, o, &od) || strncmp(od.name, "cross_", 6)) continue;
        if (n_cross == MAX_CROSS || io(have_past ? &past : &dec, EP_IO_INPUT, od.name, &j, &dd)) return 1;
        cross[n_cross].src = ep_session_io_buffer(enc.s, EP_IO_OUTPUT, o);
        cross[n_cross].dec = ep_session_io_buffer(have_past ? past.s : dec.s, EP_IO_INPUT, j);
        cross[n_cross].n = (size_t)od.nbytes;
        n_cross++;
    }
    if (!n_cross) return die("%s: the encoder has no cross_* outputs (tools/whisper_ct2.py writes them)%s", path, "");
    const char *dn[] = {"tokens", "logits", "present_k", "present_v"};
    for (int k = 0; !have_past && k < 4; k++)
        if (io(&dec, k < 1 ? EP_IO_INPUT : EP_IO_OUTPUT, dn[k], &di[k], &dd)) return 1;
    const char *pn[] = {"tokens", "offset", "past_k", "past_v", "logits", "present_k", "present_v"};
    uint32_t pi[7];
    for (int k = 0; have_past && k < 7; k++)
        if (io(&past, k < 4 ? EP_IO_INPUT : EP_IO_OUTPUT, pn[k], &pi[k], &dd)) return 1;
    long *toks = malloc(sizeof(long) * (size_t)c.max_tokens);
    float *audio = (float *)ep_session_io_buffer(enc.s, EP_IO_INPUT, ai);
    if (!toks || !audio) return die("out of memory%s%s", "", "");
    double t_enc = 0, t_dec = 0;
    int steps = 0, cut = 0;
    static uint8_t text[1 << 16];
    size_t tn = 0;
    for (uint64_t s0 = 0; s0 < w.frames; s0 += (uint64_t)c.window) {
        double t = now_ms();
        ep_wav_mono(&w, s0, (uint64_t)c.window, audio);
        if (run(&enc)) return 1;
        t_enc += now_ms() - t;
        t = now_ms();
        for (int k = 0; k < n_cross; k++) memcpy(cross[k].dec, cross[k].src, cross[k].n);   /* once a window */
        int n = 0;
        for (int k = 0; k < c.n_prompt; k++) toks[n++] = c.prompt[k];
        int fed = 0;   /* tokens in the cache */
        for (;;) {
            const plan *q;
            if (!have_past) {   /* the whole sequence each step */
                int32_t dims[2] = {1, n};
                if (ep_session_set_input_shape(dec.s, di[0], dims, 2)) return die("the decoder takes at most its maximum tokens%s%s", "", "");
                int64_t *x = (int64_t *)ep_session_io_buffer(dec.s, EP_IO_INPUT, di[0]);
                for (int k = 0; k < n; k++) x[k] = toks[k];
                if (run(&dec)) return 1;
                q = &dec;
            } else {   /* the tokens not in the cache yet, one at a time: present -> past (the prompt from empty) */
                while (fed < n) {
                    ep_io_desc pk;
                    if (ep_session_io_desc(past.s, fed ? EP_IO_OUTPUT : EP_IO_INPUT, fed ? pi[5] : pi[2], &pk)) return 1;
                    int32_t dims[5];
                    for (int k = 0; k < 5; k++) dims[k] = pk.dims[k];
                    if (!fed) dims[3] = 0;
                    if (ep_session_set_input_shape(past.s, pi[2], dims, 5) || ep_session_set_input_shape(past.s, pi[3], dims, 5))
                        return die("the cache is past its bound%s%s", "", "");
                    for (int k = 0; fed && k < 2; k++)
                        memcpy(ep_session_io_buffer(past.s, EP_IO_INPUT, pi[2 + k]),
                               ep_session_io_buffer(past.s, EP_IO_OUTPUT, pi[5 + k]), pk.nbytes);
                    *(int64_t *)ep_session_io_buffer(past.s, EP_IO_INPUT, pi[0]) = toks[fed];
                    *(int64_t *)ep_session_io_buffer(past.s, EP_IO_INPUT, pi[1]) = fed;
                    if (run(&past)) return 1;
                    fed++;
                }
                q = &past;
            }
            steps++;
            const float *lg = (const float *)ep_session_io_buffer(q->s, EP_IO_OUTPUT, q == &dec ? di[1] : pi[4]);
            const int next = argmax_suppressed(lg, &c, n == c.n_prompt);
            if (next < 0 || next == c.eot) break;
            toks[n++] = next;
            if (n >= c.max_tokens) {
                cut = 1;
                break;
            }
        }
        t_dec += now_ms() - t;
        for (int k = c.n_prompt; k < n; k++) {
            if (toks[k] >= c.eot || toks[k] >= c.vocab) continue;
            char buf[256];
            const size_t l = tlen[toks[k]] < sizeof buf - 1 ? tlen[toks[k]] : sizeof buf - 1;
            memcpy(buf, tok[toks[k]], l), buf[l] = '\0';
            const int b = ep_bpe_bytes(buf, text + tn, sizeof text - 1 - tn);
            if (b > 0) tn += (size_t)b;
        }
        if (tn < sizeof text - 1) text[tn++] = ' ';
    }
    while (tn && text[tn - 1] == ' ') tn--;
    size_t lead = 0;
    while (lead < tn && text[lead] == ' ') lead++;
    text[tn] = '\0';
    printf("text: %s\n", (const char *)text + lead);
    if (cut) fprintf(stderr, "note: stopped at the model's maximum of %ld tokens without an end of text\n", c.max_tokens);
    const double dur = (double)w.frames / w.rate;
    fprintf(stderr, "latency: encoder %.1f ms, decoder %.1f ms (%d steps), real-time factor %.4f\n",
            t_enc, t_dec, steps, (t_enc + t_dec) / 1e3 / dur);
    memory_line();
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        fprintf(stderr, "usage: edgeplan-speech vad PLAN WAV [--threshold P] [--min-silence-ms MS] [--min-speech-ms MS] [--speech-pad-ms MS]\n"
                        "       edgeplan-speech tts PLAN --ids 1,0,20,... -o OUT.wav [--scales N,L,W] [--rate HZ]\n"
                        "       edgeplan-speech asr DIR WAV\n");
        return argc < 2 ? 2 : 0;
    }
    if (!strcmp(argv[1], "vad")) return cmd_vad(argc - 2, argv + 2);
    if (!strcmp(argv[1], "tts")) return cmd_tts(argc - 2, argv + 2);
    if (!strcmp(argv[1], "asr")) return cmd_asr(argc - 2, argv + 2);
    return die("unknown mode '%s' (vad, tts or asr)%s", argv[1], "");
}
