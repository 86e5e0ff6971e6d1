/* Fuzz target: the speech layer's wav reader (runtime_c/speech: ep_wav_parse, ep_wav_mono) on untrusted bytes.
 * Every input must be refused with a reason or read within its bounds. Built by meson -Dfuzz=true. */
#include <stdint.h>
#include <stddef.h>

#include "ep_speech.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static float out[4096];
    char why[128];
    ep_wav w;
    if (ep_wav_parse(data, size, &w, why, sizeof why) != 0) return 0;
    const uint64_t n = w.frames < 4096 ? w.frames : 4096;
    ep_wav_mono(&w, 0, n, out);
    if (w.frames > n) ep_wav_mono(&w, w.frames - n, n, out);   /* the last samples too */
    return 0;
}
