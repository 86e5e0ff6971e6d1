/* The speech layer (runtime_c/speech/ep_speech.h): wav parsing and writing, VAD segments, byte-level BPE.
 * Hostile wav bytes (every truncation, every byte of the header flipped) parse or fail with a reason,
 * never read outside the buffer (the sanitizer build checks). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ep_speech.h"

static int failures;
#define CHECK(c, ...) do { if (!(c)) { failures++; printf("FAIL %s:%d: ", __FILE__, __LINE__); printf(__VA_ARGS__); printf("\n"); } } while (0)

static size_t make_wav(uint8_t *buf, uint32_t rate, const float *x, uint32_t n) {
    ep_wav_header16(buf, rate, n);
    ep_wav_pcm16(x, n, buf + 44);
    return 44 + 2 * (size_t)n;
}

static void test_wav_round_trip(void) {
    float x[5] = {0.0f, 0.5f, -0.5f, 1.5f, NAN}, y[6];
    uint8_t buf[64];
    const size_t len = make_wav(buf, 16000, x, 5);
    ep_wav w;
    char why[128];
    CHECK(ep_wav_parse(buf, len, &w, why, sizeof why) == 0, "parse: %s", why);
    CHECK(w.rate == 16000 && w.channels == 1 && w.bits == 16 && w.frames == 5, "header %u %u %u", w.rate, w.channels, w.bits);
    ep_wav_mono(&w, 0, 6, y);
    CHECK(y[0] == 0.0f && y[1] == 0.5f && y[2] == -0.5f, "values %g %g %g", y[0], y[1], y[2]);
    CHECK(y[3] == 32767.0f / 32768.0f && y[4] == 0.0f && y[5] == 0.0f, "clip, NaN, past the end: %g %g %g", y[3], y[4], y[5]);
    /* stereo 24-bit: channels averaged */
    uint8_t st[44 + 12];
    memcpy(st, buf, 44);
    st[22] = 2, st[34] = 24, st[32] = 6;
    const uint8_t d[12] = {0, 0, 0x40, 0, 0, 0xC0, 0, 0, 0x20, 0, 0, 0x20};   /* (0.5, -0.5), (0.25, 0.25) */
    memcpy(st + 44, d, 12);
    st[40] = 12, st[41] = st[42] = st[43] = 0;
    CHECK(ep_wav_parse(st, sizeof st, &w, why, sizeof why) == 0, "stereo: %s", why);
    ep_wav_mono(&w, 0, 2, y);
    CHECK(w.frames == 2 && y[0] == 0.0f && y[1] == 0.25f, "stereo mono %g %g", y[0], y[1]);
}

static void test_wav_hostile(void) {
    float x[64];
    for (int i = 0; i < 64; i++) x[i] = sinf((float)i);
    uint8_t good[44 + 128];
    const size_t len = make_wav(good, 8000, x, 64);
    ep_wav w;
    char why[128];
    float out[80];
    for (size_t n = 0; n < len; n++) {   /* every truncation: a copy exactly that long */
        uint8_t *cut = malloc(n ? n : 1);
        memcpy(cut, good, n);
        if (ep_wav_parse(cut, n, &w, why, sizeof why) == 0) {
            CHECK(w.pcm + w.frames * 2 <= cut + n, "truncated to %zu: data past the buffer", n);
            ep_wav_mono(&w, 0, 80, out);
        } else {
            CHECK(why[0] != '\0', "truncated to %zu: no reason", n);
        }
        free(cut);
    }
    for (size_t i = 0; i < 44; i++)
        for (int v = 0; v < 256; v += 51) {
            uint8_t *bad = malloc(len);
            memcpy(bad, good, len);
            bad[i] = (uint8_t)v;
            if (ep_wav_parse(bad, len, &w, why, sizeof why) == 0) {
                CHECK(w.pcm + w.frames * (size_t)w.channels * (w.bits / 8) <= bad + len, "byte %zu = %d: data past the buffer", i, v);
                ep_wav_mono(&w, 0, 80, out);
            }
            free(bad);
        }
    CHECK(ep_wav_parse("RIFX", 4, &w, why, sizeof why) != 0 && strstr(why, "RIFF"), "not a wav: %s", why);
}

static void test_vad(void) {
    float p[95];
    int k = 0;
    for (int i = 0; i < 10; i++) p[k++] = 0.0f;
    for (int i = 0; i < 20; i++) p[k++] = 0.9f;
    for (int i = 0; i < 2; i++) p[k++] = 0.0f;
    for (int i = 0; i < 20; i++) p[k++] = 0.9f;
    for (int i = 0; i < 30; i++) p[k++] = 0.0f;
    for (int i = 0; i < 3; i++) p[k++] = 0.9f;
    for (int i = 0; i < 10; i++) p[k++] = 0.0f;
    uint64_t s[4][2];
    ep_vad_params vp = {0.5f, -1.0f, 250.0f, 100.0f, 30.0f};
    size_t n = ep_vad_segments(p, (size_t)k, 512, 16000, (uint64_t)k * 512, &vp, s, 4);
    CHECK(n == 1 && s[0][0] == 10 * 512 - 480 && s[0][1] == 52 * 512 + 480, "one segment: %zu", n);
    vp.min_silence_ms = 30.0f;
    n = ep_vad_segments(p, (size_t)k, 512, 16000, (uint64_t)k * 512, &vp, s, 4);
    CHECK(n == 2 && s[0][1] == 30 * 512 + 480 && s[1][0] == 32 * 512 - 480, "two segments: %zu", n);
    CHECK(ep_vad_segments(p, (size_t)k, 512, 16000, (uint64_t)k * 512, &vp, s, 1) == 2, "counted past max");
}

static void test_bpe(void) {
    uint8_t b[16];
    CHECK(ep_bpe_bytes("\xc4\xa0hello", b, sizeof b) == 6 && b[0] == ' ' && !memcmp(b + 1, "hello", 5), "space token");
    CHECK(ep_bpe_bytes("\xc4\x8a", b, sizeof b) == 1 && b[0] == '\n', "newline");
    CHECK(ep_bpe_bytes("\xc3\xa9", b, sizeof b) == 1 && b[0] == 0xE9, "a byte standing for itself");
    CHECK(ep_bpe_bytes("\xe2\x82\xac", b, sizeof b) == -1, "outside the alphabet");
    CHECK(ep_bpe_bytes("abc", b, 2) == 2, "capped");
}

int main(void) {
    test_wav_round_trip();
    test_wav_hostile();
    test_vad();
    test_bpe();
    printf("test_speech_io: %s\n", failures ? "FAILED" : "ok");
    return failures != 0;
}
