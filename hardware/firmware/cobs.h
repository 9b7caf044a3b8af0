/* COBS (Cheshire & Baker 1999) as PROTOCOL.md frames it. Portable. */
#ifndef TAVLI_COBS_H
#define TAVLI_COBS_H
#include <stddef.h>
#include <stdint.h>

/* Encode n bytes of in into out (room for n + n / 254 + 1 bytes); no delimiter. Returns the length. */
size_t cobs_encode(const uint8_t *in, size_t n, uint8_t *out);

/* Decode n bytes (no delimiter) into out; out may equal in (decoding in place).
 * Returns the decoded length, or -1 for empty input, a zero byte or a block past the end. */
int cobs_decode(const uint8_t *in, size_t n, uint8_t *out);

#endif
