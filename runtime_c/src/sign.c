/* Plan signatures: ep_plan_verify checks a plan's SIGNATURE section (plan_format.h ep_signature_rec) against a
 * public key, before anything else in the plan is trusted. Reads only the header and the section table, with
 * every offset bounds-checked; hashes the signed bytes in place (no copy, no heap). */
#include <stddef.h>
#include <string.h>

#include "edgeplan/edgeplan.h"
#include "sign_impl.h"

static int in_file(uint64_t off, uint64_t len, uint64_t size) { return off <= size && len <= size - off; }

ep_status ep_plan_verify(const void *plan, size_t plan_len, const uint8_t *key) {
    if (!plan || !key) return EP_ERR_INVALID_ARG;
    const uint8_t *base = plan;
    if (plan_len < sizeof(ep_plan_header)) return EP_ERR_PLAN_TRUNCATED;
    ep_plan_header h;
    memcpy(&h, base, sizeof h);
    if (h.magic != EP_PLAN_MAGIC) return EP_ERR_PLAN_MAGIC;
    const uint64_t size = h.file_size;
    if (size > plan_len || size < sizeof(ep_plan_header)) return EP_ERR_PLAN_TRUNCATED;
    if (!in_file(h.section_table_offset, (uint64_t)h.section_count * sizeof(ep_section), size))
        return EP_ERR_PLAN_SECTION;
    uint64_t rec_off = 0;
    int found = 0;
    for (uint32_t i = 0; i < h.section_count; i++) {
        ep_section s;
        memcpy(&s, base + h.section_table_offset + (uint64_t)i * sizeof(ep_section), sizeof s);
        if (s.kind != EP_SECTION_SIGNATURE) continue;
        if (found++ || s.size < sizeof(ep_signature_rec) || s.offset < sizeof(ep_plan_header) ||
            !in_file(s.offset, sizeof(ep_signature_rec), size))
            return EP_ERR_PLAN_SIGNATURE;
        rec_off = s.offset;
    }
    if (!found) return EP_ERR_PLAN_UNSIGNED;
    ep_signature_rec rec;
    memcpy(&rec, base + rec_off, sizeof rec);
    if (rec.algorithm != EP_SIGNATURE_ED25519 || rec.reserved) return EP_ERR_PLAN_SIGNATURE;
    ep_sha512 c;
    uint8_t id[64];
    ep_sha512_init(&c);
    ep_sha512_update(&c, key, 32);
    ep_sha512_final(&c, id);
    if (memcmp(id, rec.key_id, sizeof rec.key_id)) return EP_ERR_PLAN_SIGNATURE;   /* signed by another key */

    /* the signed bytes: the file with the CRC field and the signature read as zeros */
    static const uint8_t zeros[64];
    const uint64_t crc_off = offsetof(ep_plan_header, crc32c);
    const uint64_t sig_off = rec_off + offsetof(ep_signature_rec, signature);
    ep_ed25519_begin(&c, rec.signature, key);
    ep_sha512_update(&c, base, (size_t)crc_off);
    ep_sha512_update(&c, zeros, sizeof h.crc32c);
    ep_sha512_update(&c, base + crc_off + sizeof h.crc32c, (size_t)(sig_off - crc_off - sizeof h.crc32c));
    ep_sha512_update(&c, zeros, sizeof rec.signature);
    ep_sha512_update(&c, base + sig_off + sizeof rec.signature, (size_t)(size - sig_off - sizeof rec.signature));
    return ep_ed25519_end(&c, rec.signature, key) ? EP_OK : EP_ERR_PLAN_SIGNATURE;
}
