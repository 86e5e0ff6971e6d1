/* edgeplan speech: what a board needs around the speech plans, in C11 with libc only and no heap (the
 * caller owns every buffer). The models' own computations (a log-mel front end, a VAD's network, a
 * voice's decoder) are in their plans; this layer reads and writes wav files, cuts a VAD's
 * probabilities into speech segments, and turns byte-level BPE tokens back into bytes.
 *
 * Its own size group (sizebudget: speech). Used by tools/edgeplan_speech.c. */
#ifndef EP_SPEECH_H
#define EP_SPEECH_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- wav ---- */
typedef struct ep_wav {
    uint32_t rate;          /* samples per second */
    uint16_t channels;      /* 1 .. 16 */
    uint16_t bits;          /* 8 (unsigned), 16, 24 or 32 (signed) PCM */
    uint64_t frames;        /* samples per channel */
    const uint8_t *pcm;     /* the data chunk, inside the parsed buffer */
} ep_wav;

/* Parses a RIFF/WAVE file held in buf (PCM, or WAVE_FORMAT_EXTENSIBLE with PCM). 0 on success, else
 * -1 with why[] (a sentence) filled: not a wav, truncated, a format other than PCM, a width other than
 * 8/16/24/32 bits, no channels. A data chunk cut short is read to the end of the buffer. */
int ep_wav_parse(const void *buf, size_t len, ep_wav *w, char *why, size_t why_len);

/* Frames [start, start + n) as mono float in [-1, 1): channels averaged, the scale 1 / 2^(bits-1)
 * (8-bit: (x - 128) / 128). Frames past the end read as 0. */
void ep_wav_mono(const ep_wav *w, uint64_t start, uint64_t n, float *out);

/* The 44-byte header of 16-bit PCM mono at rate with n samples (little-endian, as the format says). */
void ep_wav_header16(uint8_t out[44], uint32_t rate, uint32_t n);

/* x as 16-bit little-endian PCM bytes (2 per sample): round(x * 32768) clipped to [-32768, 32767]; a
 * NaN becomes 0. */
void ep_wav_pcm16(const float *x, size_t n, uint8_t *out);

/* ---- VAD segments ---- */
typedef struct ep_vad_params {
    float threshold;        /* speech at or above (silero-vad default 0.5) */
    float neg_threshold;    /* silence below; < 0: threshold - 0.15 (at least 0.01) */
    float min_speech_ms;    /* shorter speech is dropped (250) */
    float min_silence_ms;   /* silence that ends a segment (100) */
    float speech_pad_ms;    /* added each side; half the gap each when two segments come closer (30) */
} ep_vad_params;

/* silero-vad's get_speech_timestamps on probs[i] (one per `window` samples at `rate`, n_samples in all):
 * writes up to max [start, end) sample spans into spans and returns how many there are (more than max:
 * only the first max written). */
size_t ep_vad_segments(const float *probs, size_t n, uint32_t window, uint32_t rate, uint64_t n_samples,
                       const ep_vad_params *p, uint64_t (*spans)[2], size_t max);

/* ---- byte-level BPE ---- */
/* The bytes a GPT-2 byte-level token stands for (its UTF-8 characters each map to one byte); returns
 * the count written (at most cap), or -1 when the token holds a character outside the alphabet. */
int ep_bpe_bytes(const char *token, uint8_t *out, size_t cap);

#ifdef __cplusplus
}
#endif
#endif
