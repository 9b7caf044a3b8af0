/* The board's fixed numbers: slot counts, sensing model, protocol defaults.
 *
 * Portable: included by the AVR build and the host build alike. The slot counts
 * and levels are SENSING.md's; the protocol numbers are PROTOCOL.md's.
 */
#ifndef TAVLI_CONFIG_H
#define TAVLI_CONFIG_H

#define FW_VERSION_MAJOR 1
#define FW_VERSION_MINOR 0
#define FW_VERSION_PATCH 0

#ifndef BOARD_SERIAL
#define BOARD_SERIAL "MEGA-0001"
#endif

#define PROTO_MAJOR 1
#define PROTO_MINOR 0

/* Slots (SENSING.md): 24 points x 5, bar 8, two trays of 5. */
#define POINTS 24
#define SLOTS_PER_POINT 5
#define BAR_SLOTS 8
#define TRAY_SLOTS 5
#define SLOT_COUNT (POINTS * SLOTS_PER_POINT + BAR_SLOTS + 2 * TRAY_SLOTS) /* 138 */
#define MUX_COUNT 9
#define MUX_CHANNELS 16
#define CHANNEL_COUNT (MUX_COUNT * MUX_CHANNELS) /* 144: 138 sensors + 6 grounded spares */

/* LEDs: points 1..24, bar, OFF_WHITE, OFF_BLACK. */
#define LED_COUNT 27

/* ADC: 10 bits against AREF = the sensors' 3.3 V rail; SAMPLES conversions summed per slot. */
#define ADC_SAMPLES 4
#define ADC_REF_MV 3300
#define SENSOR_UV_PER_UNIT 600 /* DRV5055A1 at 3.3 V: 60 mV/mT = 0.6 mV per 0.01 mT */
#define SUM_NOMINAL_ZERO (ADC_SAMPLES * 512) /* VCC/2 with no field */
/* field (0.01 mT) = (sum - zero) * FIELD_NUM >> 15; FIELD_NUM = 3300e3 * 32768 / (SAMPLES * 1024 * 600) */
#define FIELD_NUM ((int32_t)(((int64_t)ADC_REF_MV * 1000 * 32768) / ((int64_t)ADC_SAMPLES * 1024 * SENSOR_UV_PER_UNIT)))
#define SUM_SENSOR_MIN (ADC_SAMPLES * 31)   /* below 0.1 V: no sensor drives this input */
#define SUM_SENSOR_MAX (ADC_SAMPLES * 992)  /* above 3.2 V */
#define SUM_SPARE_MAX (ADC_SAMPLES * 46)    /* a grounded spare channel reads under 0.15 V */

/* Sensing model (SENSING.md), 0.01 mT. */
#define CHECKER_MIN 950
#define PAIR_STRENGTH 700
#define LEVEL_COUNT 4
#define CAL_MAX_OFFSET 900 /* ZERO_EMPTY fails if an empty sensor reads more than this from VCC/2 */
#define CAL_SCANS 8

/* CONFIG defaults (PROTOCOL.md). */
#define DEFAULT_DEBOUNCE 3
#define DEFAULT_REPORT_MODE 1
#define DEFAULT_HEARTBEAT_MS 500
#define DEFAULT_EMPTY_THRESHOLD 150
#define DEFAULT_HYSTERESIS 30
#define DEFAULT_POLARITY_MARGIN 50

/* Framing (PROTOCOL.md). */
#define HEADER_SIZE 5
#define CRC_SIZE 2
#define MAX_FRAME 512
#define MAX_PAYLOAD (MAX_FRAME - HEADER_SIZE - CRC_SIZE) /* 505 */
#define MAX_ENCODED (MAX_FRAME + MAX_FRAME / 254 + 1)    /* 515 */

/* LED power cap (WIRING.md): 20 mA per channel at 255, 1.0 A for the whole frame. */
#define LED_SUM_MAX 12750 /* 1000 mA / 20 mA * 255 */
#define BLINK_PHASE_MS 125

#define ERROR_REPORT_MS 1000 /* CORRUPT_FRAMES, RX_OVERFLOW, SENSOR_FAULT at most once a second */

#endif
