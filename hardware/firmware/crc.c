/* CRC-16/CCITT-FALSE and CRC-32 (IEEE, as zlib) with 16-entry nibble tables: 96 bytes of
 * tables instead of 1.5 KB, fast enough for 512-byte frames on a 16 MHz AVR. Portable. */
#include "crc.h"

static const uint16_t crc16_nibble[16] = {
    0x0000, 0x1021, 0x2042, 0x3063, 0x4084, 0x50A5, 0x60C6, 0x70E7,
    0x8108, 0x9129, 0xA14A, 0xB16B, 0xC18C, 0xD1AD, 0xE1CE, 0xF1EF,
};

static const uint32_t crc32_nibble[16] = {
    0x00000000UL, 0x1DB71064UL, 0x3B6E20C8UL, 0x26D930ACUL, 0x76DC4190UL, 0x6B6B51F4UL, 0x4DB26158UL, 0x5005713CUL,
    0xEDB88320UL, 0xF00F9344UL, 0xD6D6A3E8UL, 0xCB61B38CUL, 0x9B64C2B0UL, 0x86D3D2D4UL, 0xA00AE278UL, 0xBDBDF21CUL,
};

uint16_t crc16_update(uint16_t crc, const uint8_t *data, size_t n)
{
    while (n--) {
        uint8_t b = *data++;
        crc = (uint16_t)((crc << 4) ^ crc16_nibble[(crc >> 12) ^ (b >> 4)]);
        crc = (uint16_t)((crc << 4) ^ crc16_nibble[(crc >> 12) ^ (b & 0x0F)]);
    }
    return crc;
}

uint16_t crc16_ccitt_false(const uint8_t *data, size_t n)
{
    return crc16_update(0xFFFF, data, n);
}

uint32_t crc32_update(uint32_t crc, const uint8_t *data, size_t n)
{
    while (n--) {
        crc ^= *data++;
        crc = (crc >> 4) ^ crc32_nibble[crc & 0x0F];
        crc = (crc >> 4) ^ crc32_nibble[crc & 0x0F];
    }
    return crc;
}

uint32_t crc32_ieee(const uint8_t *data, size_t n)
{
    return crc32_update(0xFFFFFFFFUL, data, n) ^ 0xFFFFFFFFUL;
}
