/* CRC-16/CCITT-FALSE (frames) and CRC-32 IEEE (snapshot state hash). Portable. */
#ifndef TAVLI_CRC_H
#define TAVLI_CRC_H
#include <stddef.h>
#include <stdint.h>

uint16_t crc16_update(uint16_t crc, const uint8_t *data, size_t n);
uint16_t crc16_ccitt_false(const uint8_t *data, size_t n);
uint32_t crc32_update(uint32_t crc, const uint8_t *data, size_t n); /* crc is the running register, init 0xFFFFFFFF */
uint32_t crc32_ieee(const uint8_t *data, size_t n);

#endif
