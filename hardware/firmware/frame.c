/* Frame encode and decode (PROTOCOL.md "Framing"); byte-compatible with
 * firmware_bridge/protocol.py's encode_frame / decode_frame. Portable. */
#include "frame.h"
#include "cobs.h"
#include "crc.h"

void deframer_init(deframer_t *d)
{
    d->len = 0;
    d->frame_len = 0;
    d->discarding = 0;
    d->overlong = 0;
}

int deframer_push(deframer_t *d, uint8_t byte)
{
    if (byte == 0) {
        d->overlong = d->discarding;
        d->discarding = 0;
        d->frame_len = d->len;
        d->len = 0;
        return d->overlong || d->frame_len != 0;
    }
    if (d->discarding)
        return 0;
    if (d->len >= MAX_ENCODED) {
        d->discarding = 1; /* counted once, when the delimiter comes */
        d->len = 0;
        return 0;
    }
    d->buf[d->len++] = byte;
    return 0;
}

int frame_decode(uint8_t *buf, size_t enc_len, frame_t *f)
{
    if (enc_len > MAX_ENCODED)
        return FRAME_ERR_TOO_LONG;
    int n = cobs_decode(buf, enc_len, buf);
    if (n < 0)
        return FRAME_ERR_COBS;
    if (n > MAX_FRAME)
        return FRAME_ERR_TOO_LONG;
    if (n < HEADER_SIZE + CRC_SIZE)
        return FRAME_ERR_LENGTH;
    uint16_t wire = (uint16_t)(buf[n - 2] | (buf[n - 1] << 8));
    if (crc16_ccitt_false(buf, (size_t)n - CRC_SIZE) != wire)
        return FRAME_ERR_CRC;
    f->major = buf[0];
    f->minor = buf[1];
    f->seq = (uint16_t)(buf[2] | (buf[3] << 8));
    f->type = buf[4];
    f->payload = buf + HEADER_SIZE;
    f->len = (uint16_t)(n - HEADER_SIZE - CRC_SIZE);
    return FRAME_OK;
}

size_t frame_seal(uint8_t *body, uint16_t seq, uint8_t type, size_t payload_len)
{
    body[0] = PROTO_MAJOR;
    body[1] = PROTO_MINOR;
    body[2] = (uint8_t)seq;
    body[3] = (uint8_t)(seq >> 8);
    body[4] = type;
    size_t n = HEADER_SIZE + payload_len;
    uint16_t crc = crc16_ccitt_false(body, n);
    body[n] = (uint8_t)crc;
    body[n + 1] = (uint8_t)(crc >> 8);
    return n + CRC_SIZE;
}

size_t frame_wire_size(size_t body_len)
{
    return body_len + body_len / 254 + 2;
}

void frame_emit(const uint8_t *body, size_t n, void (*sink)(uint8_t byte))
{
    size_t i = 0;
    for (;;) {
        size_t run = 0; /* non-zero bytes in this block, at most 254 */
        while (i + run < n && body[i + run] != 0 && run < 254)
            run++;
        sink((uint8_t)(run + 1));
        for (size_t j = 0; j < run; j++)
            sink(body[i + j]);
        i += run;
        if (run == 254) {
            /* an FF block: no implied zero; a following block starts at once */
            if (i >= n) {
                sink(1); /* as the Python encoder: the empty last block still has its code */
                break;
            }
            continue;
        }
        if (i >= n)
            break;
        i++; /* skip the zero this block's code stands for */
    }
    sink(0);
}
