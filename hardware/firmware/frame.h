/* Frames on the wire (PROTOCOL.md): header, payload, CRC-16, COBS, 0x00 delimiter. Portable.
 *
 * The receive side is a byte-at-a-time deframer that never holds more than
 * MAX_ENCODED bytes and resynchronises at the next 0x00; the send side streams a
 * body through COBS into a byte sink, so no second 516-byte buffer is needed.
 */
#ifndef TAVLI_FRAME_H
#define TAVLI_FRAME_H
#include <stddef.h>
#include <stdint.h>
#include "config.h"

enum frame_status {
    FRAME_OK = 0,
    FRAME_ERR_COBS = -1,
    FRAME_ERR_TOO_LONG = -2,
    FRAME_ERR_LENGTH = -3, /* shorter than header + CRC */
    FRAME_ERR_CRC = -4,
};

typedef struct {
    uint8_t major, minor, type;
    uint16_t seq;
    const uint8_t *payload;
    uint16_t len;
} frame_t;

typedef struct {
    uint8_t buf[MAX_ENCODED];
    uint16_t len;       /* bytes of the frame being received */
    uint16_t frame_len; /* bytes of the frame just ended (valid when push returned 1) */
    uint8_t discarding;
    uint8_t overlong; /* set when a run of more than MAX_ENCODED bytes was cut off */
} deframer_t;

void deframer_init(deframer_t *d);
/* Push one byte; returns 1 when a delimiter ended a non-empty run: d->buf[0..frame_len) holds
 * it, or d->overlong says it ran past MAX_ENCODED and was dropped. Handle it before the next push. */
int deframer_push(deframer_t *d, uint8_t byte);

/* Decode an encoded frame in place (buf is overwritten) into f. */
int frame_decode(uint8_t *buf, size_t enc_len, frame_t *f);

/* Fill header and CRC around the payload at body[HEADER_SIZE..]: returns the body length. */
size_t frame_seal(uint8_t *body, uint16_t seq, uint8_t type, size_t payload_len);

/* Bytes on the wire for a body of n bytes: COBS plus the delimiter. */
size_t frame_wire_size(size_t body_len);

/* COBS-encode body and the delimiter into sink, byte by byte. */
void frame_emit(const uint8_t *body, size_t n, void (*sink)(uint8_t byte));

#endif
