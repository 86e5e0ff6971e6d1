/* edgeplan speech layer: wav, VAD segments, byte-level BPE (ep_speech.h). */
#include "ep_speech.h"

#include <math.h>
#include <string.h>

static uint32_t rd16(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }
static uint32_t rd32(const uint8_t *p) { return rd16(p) | rd16(p + 2) << 16; }
static void wr16(uint8_t *p, uint32_t v) { p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8); }
static void wr32(uint8_t *p, uint32_t v) { wr16(p, v), wr16(p + 2, v >> 16); }

static int fail(char *why, size_t len, const char *msg) {
    if (why && len) {
        size_t n = strlen(msg) < len - 1 ? strlen(msg) : len - 1;
        memcpy(why, msg, n);
        why[n] = '\0';
    }
    return -1;
}

int ep_wav_parse(const void *buf, size_t len, ep_wav *w, char *why, size_t why_len) {
    const uint8_t *b = (const uint8_t *)buf;
    if (!b || !w || len < 12 || memcmp(b, "RIFF", 4) || memcmp(b + 8, "WAVE", 4))
        return fail(why, why_len, "not a RIFF/WAVE file");
    memset(w, 0, sizeof(*w));
    int have_fmt = 0;
    size_t o = 12;
    while (o + 8 <= len) {
        const uint32_t size = rd32(b + o + 4);
        const uint8_t *c = b + o + 8;
        const size_t avail = len - (o + 8);
        if (!memcmp(b + o, "fmt ", 4)) {
            if (size < 16 || avail < 16) return fail(why, why_len, "its fmt chunk is truncated");
            uint32_t tag = rd16(c);
            if (tag == 0xFFFE && size >= 40 && avail >= 40) tag = rd16(c + 24);   /* extensible: the sub-format */
            if (tag != 1) return fail(why, why_len, "not PCM (only integer PCM wav is read)");
            w->channels = (uint16_t)rd16(c + 2);
            w->rate = rd32(c + 4);
            w->bits = (uint16_t)rd16(c + 14);
            if (w->channels < 1 || w->channels > 16) return fail(why, why_len, "it has no channels (or over 16)");
            if (w->bits != 8 && w->bits != 16 && w->bits != 24 && w->bits != 32)
                return fail(why, why_len, "its samples are not 8, 16, 24 or 32 bits wide");
            if (w->rate == 0) return fail(why, why_len, "its sample rate is 0");
            have_fmt = 1;
        } else if (!memcmp(b + o, "data", 4)) {
            if (!have_fmt) return fail(why, why_len, "its data chunk comes before the fmt chunk");
            const size_t n = size < avail ? size : avail;   /* a cut-short file: what is there */
            w->pcm = c;
            w->frames = n / ((size_t)w->channels * (w->bits / 8));
            return 0;
        }
        if (size > avail) break;
        o += 8 + (size_t)size + (size & 1);
    }
    return fail(why, why_len, have_fmt ? "it has no data chunk" : "it has no fmt chunk");
}

static float sample(const ep_wav *w, const uint8_t *p) {
    switch (w->bits) {
    case 8: return ((float)p[0] - 128.0f) / 128.0f;
    case 16: return (float)(int16_t)rd16(p) / 32768.0f;
    case 24: {
        int32_t v = (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16);
        if (v & 0x800000) v -= 0x1000000;
        return (float)v / 8388608.0f;
    }
    default: return (float)((double)(int32_t)rd32(p) / 2147483648.0);
    }
}

void ep_wav_mono(const ep_wav *w, uint64_t start, uint64_t n, float *out) {
    const size_t bps = w->bits / 8, frame = bps * w->channels;
    for (uint64_t i = 0; i < n; i++) {
        const uint64_t f = start + i;
        if (f >= w->frames) {
            out[i] = 0.0f;
            continue;
        }
        float s = 0.0f;
        for (uint16_t ch = 0; ch < w->channels; ch++) s += sample(w, w->pcm + f * frame + ch * bps);
        out[i] = s / (float)w->channels;
    }
}

void ep_wav_header16(uint8_t out[44], uint32_t rate, uint32_t n) {
    const uint32_t bytes = n * 2u;
    memcpy(out, "RIFF", 4), wr32(out + 4, 36u + bytes), memcpy(out + 8, "WAVEfmt ", 8);
    wr32(out + 16, 16), wr16(out + 20, 1), wr16(out + 22, 1), wr32(out + 24, rate), wr32(out + 28, rate * 2u);
    wr16(out + 32, 2), wr16(out + 34, 16), memcpy(out + 36, "data", 4), wr32(out + 40, bytes);
}

void ep_wav_pcm16(const float *x, size_t n, uint8_t *out) {
    for (size_t i = 0; i < n; i++) {
        const double v = (double)x[i] * 32768.0;
        const double r = v != v ? 0.0 : v >= 32767.0 ? 32767.0 : v <= -32768.0 ? -32768.0 : nearbyint(v);
        wr16(out + 2 * i, (uint32_t)(int32_t)r);
    }
}

size_t ep_vad_segments(const float *probs, size_t n, uint32_t window, uint32_t rate, uint64_t n_samples,
                       const ep_vad_params *p, uint64_t (*spans)[2], size_t max) {
    const float thr = p->threshold;
    const float neg = p->neg_threshold >= 0 ? p->neg_threshold : (thr - 0.15f > 0.01f ? thr - 0.15f : 0.01f);
    const double min_speech = rate * (double)p->min_speech_ms / 1000.0;
    const double min_silence = rate * (double)p->min_silence_ms / 1000.0;
    const uint64_t pad = (uint64_t)(rate * (double)p->speech_pad_ms / 1000.0);
    size_t count = 0;
    uint64_t start = 0, temp_end = 0;
    int on = 0;
    /* pass 1: raw segments; each one found is written when there is room, counted always */
    for (size_t i = 0; i < n; i++) {
        const uint64_t at = (uint64_t)window * i;
        if (probs[i] >= thr && temp_end) temp_end = 0;
        if (probs[i] >= thr && !on) {
            on = 1, start = at;
            continue;
        }
        if (probs[i] < neg && on) {
            if (!temp_end) temp_end = at;
            if ((double)(at - temp_end) < min_silence) continue;
            if ((double)(temp_end - start) > min_speech) {
                if (count < max) spans[count][0] = start, spans[count][1] = temp_end;
                count++;
            }
            on = 0, temp_end = 0;
        }
    }
    if (on && (double)(n_samples - start) > min_speech) {
        if (count < max) spans[count][0] = start, spans[count][1] = n_samples;
        count++;
    }
    /* pass 2: padding, as get_speech_timestamps pads (over what was written) */
    const size_t m = count < max ? count : max;
    for (size_t k = 0; k < m; k++) {
        if (k == 0) spans[k][0] = spans[k][0] > pad ? spans[k][0] - pad : 0;
        if (k + 1 < m) {
            const uint64_t gap = spans[k + 1][0] - spans[k][1];
            if (gap < 2 * pad) {
                spans[k][1] += gap / 2;
                spans[k + 1][0] = spans[k + 1][0] > gap / 2 ? spans[k + 1][0] - gap / 2 : 0;
            } else {
                spans[k][1] = spans[k][1] + pad < n_samples ? spans[k][1] + pad : n_samples;
                spans[k + 1][0] = spans[k + 1][0] > pad ? spans[k + 1][0] - pad : 0;
            }
        } else {
            spans[k][1] = spans[k][1] + pad < n_samples ? spans[k][1] + pad : n_samples;
        }
    }
    return count;
}

/* GPT-2's alphabet: bytes 33..126, 161..172 and 174..255 stand for themselves; the other 68 bytes, in
 * order, are the code points 256, 257, ... */
static int bpe_byte(uint32_t cp) {
    if ((cp >= 33 && cp <= 126) || (cp >= 161 && cp <= 172) || (cp >= 174 && cp <= 255)) return (int)cp;
    if (cp < 256 || cp >= 256 + 68) return -1;
    uint32_t k = cp - 256;
    for (int b = 0; b < 256; b++) {
        const int kept = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
        if (!kept && k-- == 0) return b;
    }
    return -1;
}

int ep_bpe_bytes(const char *token, uint8_t *out, size_t cap) {
    const uint8_t *s = (const uint8_t *)token;
    size_t n = 0;
    while (*s) {
        uint32_t cp;
        int len;
        if (s[0] < 0x80) cp = s[0], len = 1;
        else if ((s[0] & 0xE0) == 0xC0 && (s[1] & 0xC0) == 0x80) cp = (uint32_t)(s[0] & 0x1F) << 6 | (s[1] & 0x3F), len = 2;
        else return -1;
        const int b = bpe_byte(cp);
        if (b < 0) return -1;
        if (n < cap) out[n] = (uint8_t)b;
        n++;
        s += len;
    }
    return (int)(n < cap ? n : cap);
}
