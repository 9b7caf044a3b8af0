/* COBS encoder and decoder, byte-compatible with firmware_bridge/protocol.py. Portable. */
#include "cobs.h"

size_t cobs_encode(const uint8_t *in, size_t n, uint8_t *out)
{
    size_t code_at = 0, o = 1;
    uint8_t code = 1;
    for (size_t i = 0; i < n; i++) {
        if (in[i] == 0) {
            out[code_at] = code;
            code_at = o++;
            code = 1;
        } else {
            out[o++] = in[i];
            if (++code == 0xFF) {
                out[code_at] = code;
                code_at = o++;
                code = 1;
            }
        }
    }
    out[code_at] = code; /* the last block's code; after an FF block that is an empty 01 block,
                            as firmware_bridge/protocol.py encodes it */
    return o;
}

int cobs_decode(const uint8_t *in, size_t n, uint8_t *out)
{
    size_t i = 0, o = 0;
    if (n == 0)
        return -1;
    while (i < n) {
        uint8_t code = in[i];
        if (code == 0)
            return -1;
        size_t end = i + code;
        if (end > n)
            return -1;
        for (size_t j = i + 1; j < end; j++) {
            if (in[j] == 0)
                return -1;
            out[o++] = in[j];
        }
        i = end;
        if (code != 0xFF && i < n)
            out[o++] = 0;
    }
    return (int)o;
}
