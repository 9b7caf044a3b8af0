/* The board's logic, free of the chip: the protocol conversation (PROTOCOL.md), the
 * slot states with debounce and events (SENSING.md), calibration and the LED frame.
 *
 * Portable C99: the AVR main loop and the host tests drive it the same way:
 * board_rx() with received bytes, board_scan() with each completed sensor scan,
 * board_poll() often, each with the board clock in ms. It talks back through hal.h.
 */
#ifndef TAVLI_BOARD_H
#define TAVLI_BOARD_H
#include <stdint.h>
#include "config.h"
#include "frame.h"

enum { ST_EMPTY = 0, ST_WHITE = 1, ST_BLACK = 2, ST_UNCERTAIN = 3 };
enum {
    T_HELLO = 0x01, T_HELLO_REPLY = 0x02, T_SNAPSHOT = 0x10, T_LIFT = 0x11, T_PUT = 0x12,
    T_BUTTON = 0x13, T_LED_FRAME = 0x20, T_CONFIG = 0x21, T_CALIBRATE = 0x22, T_ACK = 0x30,
    T_NACK = 0x31, T_ERROR = 0x40,
};
enum { NACK_BAD_LENGTH = 1, NACK_UNKNOWN_TYPE, NACK_BAD_VALUE, NACK_NOT_READY, NACK_BUSY,
       NACK_VERSION_MISMATCH, NACK_FAILED };
enum { ERR_SENSOR_FAULT = 1, ERR_LED_FAULT, ERR_RX_OVERFLOW, ERR_CORRUPT_FRAMES,
       ERR_CALIBRATION_FAILED, ERR_INTERNAL };
enum { AREA_POINT = 0, AREA_BAR = 1, AREA_OFF_WHITE = 2, AREA_OFF_BLACK = 3 };

typedef struct {
    uint8_t debounce_scans, report_mode;
    uint16_t heartbeat_ms, empty_threshold, hysteresis, polarity_margin;
} board_config_t;

typedef struct {
    /* link */
    deframer_t rx;
    uint8_t body[MAX_FRAME]; /* frame being sent: header, payload, CRC */
    uint16_t seq;
    uint8_t ready;           /* a HELLO of our major since boot */
    uint8_t snapshot_due;
    uint32_t last_snapshot_ms;
    uint32_t corrupt, corrupt_reported, corrupt_report_ms;
    uint16_t overflow_reported;
    uint32_t overflow_report_ms;
    /* sensing */
    board_config_t cfg;
    int16_t zero[SLOT_COUNT];     /* ADC sum with no field, per slot */
    uint8_t stable[SLOT_COUNT];   /* debounced class: state | height << 2 */
    uint8_t cand[SLOT_COUNT];
    uint8_t count[SLOT_COUNT];
    uint16_t strength[SLOT_COUNT];
    uint8_t have_state;
    uint32_t scans;
    uint8_t fault, fault_reported;
    uint32_t fault_report_ms;
    int16_t fault_slot;
    uint16_t fault_mv;
    /* calibration */
    uint8_t calibrating, cal_left;
    uint16_t cal_seq;
    uint16_t cal_acc[SLOT_COUNT];
    /* LEDs */
    uint8_t leds[LED_COUNT][4]; /* r, g, b, blink */
    uint8_t grb[LED_COUNT * 3];
    uint8_t led_phase, led_blinking, led_dirty;
    uint32_t led_writes;
} board_t;

void board_init(board_t *b);
void board_rx(board_t *b, uint8_t byte, uint32_t now_ms);
void board_scan(board_t *b, const uint16_t *sums, uint32_t now_ms); /* CHANNEL_COUNT ADC sums, slot order */
void board_poll(board_t *b, uint32_t now_ms);

/* Exposed for the host tests. */
int16_t board_field(const board_t *b, uint16_t slot, uint16_t sum);
uint8_t board_classify(const board_t *b, int16_t field, uint8_t stable_state, uint16_t *strength);
void board_render_leds(board_t *b, uint32_t now_ms);

#endif
