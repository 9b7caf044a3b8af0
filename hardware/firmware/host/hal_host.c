/* hal.h for the host build, and the entry points tests/test_firmware.py calls through
 * ctypes: the same board.c / frame.c / cobs.c / crc.c as the firmware, with the
 * transmit queue, the LED line and the EEPROM captured in memory. */
#include <string.h>
#include "../board.h"
#include "../cobs.h"
#include "../crc.h"
#include "../frame.h"
#include "../hal.h"

#define TX_CAP 65536
static uint8_t tx[TX_CAP];
static uint32_t tx_len;
static uint32_t tx_limit = 1023; /* the AVR's queue: 1024 bytes, one always free */
static uint8_t led[3 * LED_COUNT];
static uint16_t led_len;
static uint32_t led_shows;
static int16_t ee_zero[SLOT_COUNT];
static uint8_t ee_valid;
static uint16_t rx_lost;
static board_t board;

uint16_t hal_tx_free(void)
{
    uint32_t room = tx_len < tx_limit ? tx_limit - tx_len : 0;
    return (uint16_t)(room > 0xFFFF ? 0xFFFF : room);
}

void hal_tx_put(uint8_t byte)
{
    if (tx_len < TX_CAP)
        tx[tx_len++] = byte;
}

void hal_tx_kick(void) {}

void hal_led_show(const uint8_t *grb, uint16_t n)
{
    memcpy(led, grb, n);
    led_len = n;
    led_shows++;
}

uint8_t hal_zero_load(int16_t *zero, uint16_t n)
{
    if (ee_valid)
        memcpy(zero, ee_zero, n * sizeof *zero);
    return ee_valid;
}

void hal_zero_store(const int16_t *zero, uint16_t n)
{
    memcpy(ee_zero, zero, n * sizeof *zero);
    ee_valid = 1;
}

void hal_zero_erase(void)
{
    ee_valid = 0;
}

uint16_t hal_rx_overflows(void)
{
    return rx_lost;
}

/* ---------------------------------------------------------------- ctypes entry points */

/* A fresh board (as after a reset); keep_eeprom keeps a stored calibration. */
void fw_reset(int keep_eeprom)
{
    if (!keep_eeprom)
        ee_valid = 0;
    tx_len = 0;
    led_len = 0;
    led_shows = 0;
    rx_lost = 0;
    board_init(&board);
}

void fw_set_tx_limit(uint32_t limit) { tx_limit = limit; }
void fw_set_rx_lost(uint16_t n) { rx_lost = n; }

void fw_rx(const uint8_t *data, uint32_t n, uint32_t now)
{
    for (uint32_t i = 0; i < n; i++)
        board_rx(&board, data[i], now);
}

void fw_scan_raw(const uint16_t *sums, uint32_t now)
{
    board_scan(&board, sums, now);
}

/* The ADC sum a sensor gives for a field (0.01 mT) with nominal offset: the inverse of board_field. */
uint16_t fw_sum_for_field(int32_t field)
{
    int64_t num = (int64_t)field * ADC_SAMPLES * 1024 * SENSOR_UV_PER_UNIT;
    int64_t den = (int64_t)ADC_REF_MV * 1000;
    int64_t d = num >= 0 ? (num + den / 2) / den : -((-num + den / 2) / den);
    return (uint16_t)(SUM_NOMINAL_ZERO + d);
}

/* One scan from signed fields per slot (0.01 mT) plus an offset per slot (quiescent error). */
void fw_scan_fields(const int16_t *fields, const int16_t *bias, uint32_t now)
{
    uint16_t sums[CHANNEL_COUNT];
    for (uint16_t i = 0; i < CHANNEL_COUNT; i++)
        sums[i] = i < SLOT_COUNT ? fw_sum_for_field(fields[i] + (bias ? bias[i] : 0)) : 0;
    board_scan(&board, sums, now);
}

void fw_poll(uint32_t now) { board_poll(&board, now); }

uint32_t fw_tx_take(uint8_t *out, uint32_t max)
{
    uint32_t n = tx_len < max ? tx_len : max;
    memcpy(out, tx, n);
    memmove(tx, tx + n, tx_len - n);
    tx_len -= n;
    return n;
}

/* The bytes of the last LED write and how many writes there were. */
uint32_t fw_led_take(uint8_t *out, uint16_t *len)
{
    memcpy(out, led, led_len);
    *len = led_len;
    return led_shows;
}

uint32_t fw_corrupt(void) { return board.corrupt; }
uint32_t fw_scans(void) { return board.scans; }
int16_t fw_zero(uint16_t slot) { return board.zero[slot]; }
int fw_ee_valid(void) { return ee_valid; }
uint32_t fw_board_size(void) { return (uint32_t)sizeof board; }

/* The codec itself, for byte-for-byte comparison with firmware_bridge/protocol.py. */
uint32_t fw_cobs_encode(const uint8_t *in, uint32_t n, uint8_t *out) { return (uint32_t)cobs_encode(in, n, out); }
int fw_cobs_decode(const uint8_t *in, uint32_t n, uint8_t *out) { return cobs_decode(in, n, out); }
uint16_t fw_crc16(const uint8_t *p, uint32_t n) { return crc16_ccitt_false(p, n); }
uint32_t fw_crc32(const uint8_t *p, uint32_t n) { return crc32_ieee(p, n); }

static uint8_t *emit_to;
static uint32_t emit_len;
static void emit_sink(uint8_t byte) { emit_to[emit_len++] = byte; }

/* Wire bytes of a frame (what the firmware sends), into out (room for 520). */
uint32_t fw_encode_frame(uint16_t seq, uint8_t type, const uint8_t *payload, uint32_t n, uint8_t *out)
{
    uint8_t body[MAX_FRAME];
    if (n > MAX_PAYLOAD)
        return 0;
    memcpy(body + HEADER_SIZE, payload, n);
    size_t len = frame_seal(body, seq, type, n);
    emit_to = out;
    emit_len = 0;
    frame_emit(body, len, emit_sink);
    return emit_len;
}

/* Decode one frame as the firmware does (without its 0x00): status, then header and payload. */
int fw_decode_frame(const uint8_t *wire, uint32_t n, uint8_t *header, uint8_t *payload, uint32_t *len)
{
    uint8_t buf[MAX_ENCODED + 8];
    frame_t f;
    if (n > MAX_ENCODED)
        return FRAME_ERR_TOO_LONG;
    memcpy(buf, wire, n);
    int status = frame_decode(buf, n, &f);
    if (status != FRAME_OK)
        return status;
    header[0] = f.major;
    header[1] = f.minor;
    header[2] = (uint8_t)f.seq;
    header[3] = (uint8_t)(f.seq >> 8);
    header[4] = f.type;
    memcpy(payload, f.payload, f.len);
    *len = f.len;
    return FRAME_OK;
}
