/* The ATmega2560 layer: sensor scan (ADC interrupt through the multiplexers), USART0 with
 * interrupt-driven ring buffers, the 1 ms board clock, WS2812B bit timing, and a
 * background EEPROM writer for the calibration. Everything else is portable (board.c). */
#include <avr/eeprom.h>
#include <avr/interrupt.h>
#include <avr/io.h>
#include <util/atomic.h>
#include <util/delay.h>
#include "config.h"
#include "crc.h"
#include "hal.h"
#include "hal_avr.h"
#include "pins.h"

_Static_assert(PIN_BIT(PIN_MUX_S0) == 0 && PIN_BIT(PIN_MUX_S1) == 1 && PIN_BIT(PIN_MUX_S2) == 2 &&
                   PIN_BIT(PIN_MUX_S3) == 3 && PIN_BIT(PIN_MUX7_EN) == 4 && PIN_BIT(PIN_MUX8_EN) == 5,
               "MUX_S0..S3, MUX7_EN, MUX8_EN must be bits 0..5 of one port");
#define EN7_ON 0x20 /* MUX7_EN low (enabled), MUX8_EN high */
#define EN8_ON 0x10 /* MUX8_EN low, MUX7_EN high */
/* LED_DATA in the low I/O space: enforced by the "I" operand of `out` in ws2812_led. */

#define SEL_PORT PIN_PORT(PIN_MUX_S0)
#define SEL_DDR PIN_DDR(PIN_MUX_S0)
#define LED_PORT PIN_PORT(PIN_LED_DATA)
#define LED_DDR PIN_DDR(PIN_LED_DATA)
#define LED_MASK (1 << PIN_BIT(PIN_LED_DATA))

/* ---------------------------------------------------------------- clock */

static volatile uint32_t millis;

ISR(TIMER0_COMPA_vect)
{
    millis++;
}

uint32_t hal_millis(void)
{
    uint32_t t;
    ATOMIC_BLOCK(ATOMIC_RESTORESTATE) { t = millis; }
    return t;
}

/* ---------------------------------------------------------------- USART0 */

#define RX_SIZE 256 /* indices are uint8_t: wrap for free */
#define TX_SIZE 1024
static volatile uint8_t rx_buf[RX_SIZE];
static volatile uint8_t rx_head, rx_tail;
static volatile uint16_t rx_lost;
static volatile uint8_t tx_buf[TX_SIZE];
static volatile uint16_t tx_head, tx_tail; /* tx_head published by hal_tx_kick */
static uint16_t tx_fill;                   /* main loop's own head, ahead of tx_head */

ISR(USART0_RX_vect)
{
    uint8_t status = UCSR0A;
    uint8_t c = UDR0;
    uint8_t next = (uint8_t)(rx_head + 1);
    if (status & _BV(DOR0))
        rx_lost++;
    if (next == rx_tail) {
        rx_lost++; /* full: drop the byte, never overwrite; the framer resynchronises */
        return;
    }
    rx_buf[rx_head] = c;
    rx_head = next;
}

ISR(USART0_UDRE_vect)
{
    if (tx_tail == tx_head) {
        UCSR0B &= (uint8_t)~_BV(UDRIE0);
        return;
    }
    UDR0 = tx_buf[tx_tail];
    tx_tail = (tx_tail + 1) & (TX_SIZE - 1);
}

int hal_rx_pop(uint8_t *byte)
{
    if (rx_tail == rx_head)
        return 0;
    *byte = rx_buf[rx_tail];
    rx_tail = (uint8_t)(rx_tail + 1);
    return 1;
}

uint16_t hal_rx_overflows(void)
{
    uint16_t n;
    ATOMIC_BLOCK(ATOMIC_RESTORESTATE) { n = rx_lost; }
    return n;
}

uint16_t hal_tx_free(void)
{
    uint16_t tail;
    ATOMIC_BLOCK(ATOMIC_RESTORESTATE) { tail = tx_tail; }
    return (uint16_t)(TX_SIZE - 1 - ((tx_fill - tail) & (TX_SIZE - 1)));
}

void hal_tx_put(uint8_t byte)
{
    tx_buf[tx_fill] = byte;
    tx_fill = (tx_fill + 1) & (TX_SIZE - 1);
}

void hal_tx_kick(void)
{
    ATOMIC_BLOCK(ATOMIC_RESTORESTATE) { tx_head = tx_fill; }
    UCSR0B |= _BV(UDRIE0);
}

/* ---------------------------------------------------------------- sensor scan */

/* The ADC interrupt walks channel c = 0..15 (one write to the select lines), then mux
 * m = 0..8 (ADC input m; mux 8 on ADC7 with mux 7 disabled), ADC_SAMPLES conversions
 * each, summed into sums[m * 16 + c]: the slot order of WIRING.md. After the select or
 * enable lines change, the first conversion is thrown away so the mux, the sensor and
 * the RC filter settle. */
static volatile uint16_t scan_buf[2][CHANNEL_COUNT];
static volatile uint8_t scan_w, scan_ready = 0xFF;
static uint8_t s_chan, s_mux, s_sample, s_discard;

static inline void adc_select(uint8_t mux)
{
    ADMUX = (uint8_t)(mux < 7 ? mux : 7); /* REFS1:0 = 00: external AREF (the sensors' 3.3 V) */
}

ISR(ADC_vect)
{
    uint16_t v = ADC;
    if (s_discard) { /* nothing changes for the next conversion: start it at once */
        s_discard = 0;
        ADCSRA |= _BV(ADSC);
        return;
    }
    volatile uint16_t *slot = &scan_buf[scan_w][s_mux * MUX_CHANNELS + s_chan];
    if (s_sample + 1 < ADC_SAMPLES) { /* same input again: start first, then add */
        ADCSRA |= _BV(ADSC);
        *slot = s_sample ? (uint16_t)(*slot + v) : v;
        s_sample++;
        return;
    }
    *slot = (uint16_t)(*slot + v);
    s_sample = 0;
    if (++s_mux >= MUX_COUNT) {
        s_mux = 0;
        if (++s_chan >= MUX_CHANNELS) {
            s_chan = 0;
            scan_ready = scan_w;
            scan_w ^= 1;
        }
        SEL_PORT = (uint8_t)((SEL_PORT & 0xC0) | EN7_ON | s_chan);
        s_discard = 1;
    } else if (s_mux == 8) {
        SEL_PORT = (uint8_t)((SEL_PORT & 0xC0) | EN8_ON | s_chan);
        s_discard = 1;
    }
    adc_select(s_mux);
    ADCSRA |= _BV(ADSC);
}

int hal_scan_take(uint16_t *sums)
{
    uint8_t ready;
    ATOMIC_BLOCK(ATOMIC_RESTORESTATE)
    {
        ready = scan_ready;
        scan_ready = 0xFF;
    }
    if (ready == 0xFF)
        return 0;
    for (uint16_t i = 0; i < CHANNEL_COUNT; i++)
        sums[i] = scan_buf[ready][i]; /* the ISR fills the other buffer meanwhile */
    return 1;
}

/* ---------------------------------------------------------------- WS2812B */

/* One LED (3 bytes) at 800 kHz with 16 MHz cycles: high 6 cycles (375 ns) for a 0,
 * 13 cycles (812 ns) for a 1, 20 cycles (1.25 us) a bit, 23 across a byte boundary.
 * Interrupts are off only for these 30 us, so the UART (a byte every 87 us) and the
 * ADC interrupt run between LEDs; the low gap they cause is far below the 50 us latch. */
static void ws2812_led(const uint8_t *p, uint8_t hi, uint8_t lo)
{
    uint8_t byte, bits, n1, nbytes = 3;
    asm volatile(
        "ld   %[byte], %a[ptr]+ \n\t"
        "1: ldi %[bits], 8      \n\t"
        "2: out %[port], %[hi]  \n\t" /* t0  rise */
        "mov  %[n1], %[lo]      \n\t" /* t1 */
        "sbrc %[byte], 7        \n\t" /* t2 */
        "mov  %[n1], %[hi]      \n\t" /* t3 */
        "nop                    \n\t" /* t4 */
        "nop                    \n\t" /* t5 */
        "out  %[port], %[n1]    \n\t" /* t6  fall for a 0 */
        "lsl  %[byte]           \n\t" /* t7 */
        "nop \n\t nop \n\t nop \n\t nop \n\t nop \n\t" /* t8..t12 */
        "out  %[port], %[lo]    \n\t" /* t13 fall for a 1 */
        "dec  %[bits]           \n\t" /* t14 */
        "breq 3f                \n\t" /* t15 */
        "nop                    \n\t" /* t16 */
        "nop                    \n\t" /* t17 */
        "rjmp 2b                \n\t" /* t18, t19 */
        "3: ld %[byte], %a[ptr]+\n\t" /* t17, t18 */
        "dec  %[nbytes]         \n\t" /* t19 */
        "brne 1b                \n\t" /* t20, t21; ldi t22; out t23 */
        : [byte] "=&r"(byte), [bits] "=&d"(bits), [n1] "=&r"(n1), [nbytes] "+r"(nbytes), [ptr] "+e"(p)
        : [port] "I"(_SFR_IO_ADDR(LED_PORT)), [hi] "r"(hi), [lo] "r"(lo));
}

void hal_led_show(const uint8_t *grb, uint16_t n)
{
    for (uint16_t i = 0; i + 3 <= n; i += 3) {
        uint8_t sreg = SREG;
        cli();
        uint8_t hi = (uint8_t)(LED_PORT | LED_MASK), lo = (uint8_t)(LED_PORT & ~LED_MASK);
        ws2812_led(grb + i, hi, lo);
        SREG = sreg;
    }
    _delay_us(300); /* latch: WS2812B needs 280 us low (older WS2812: 50 us) */
}

/* ---------------------------------------------------------------- calibration in EEPROM */

#define EE_MAGIC 0x5A17
#define EE_SIZE (2 + 2 * SLOT_COUNT + 2) /* magic, offsets, CRC-16 of the offsets */
static uint8_t ee_image[EE_SIZE];
static uint16_t ee_next = EE_SIZE; /* next step of the background write; EE_SIZE: idle */

uint8_t hal_zero_load(int16_t *zero, uint16_t n)
{
    eeprom_read_block(ee_image, (const void *)0, EE_SIZE);
    uint16_t magic = (uint16_t)(ee_image[0] | (ee_image[1] << 8));
    uint16_t crc = (uint16_t)(ee_image[EE_SIZE - 2] | (ee_image[EE_SIZE - 1] << 8));
    if (n != SLOT_COUNT || magic != EE_MAGIC || crc16_ccitt_false(ee_image + 2, 2 * SLOT_COUNT) != crc)
        return 0;
    for (uint16_t i = 0; i < n; i++)
        zero[i] = (int16_t)(ee_image[2 + 2 * i] | (ee_image[3 + 2 * i] << 8));
    return 1;
}

void hal_zero_store(const int16_t *zero, uint16_t n)
{
    for (uint16_t i = 0; i < n && i < SLOT_COUNT; i++) {
        ee_image[2 + 2 * i] = (uint8_t)zero[i];
        ee_image[3 + 2 * i] = (uint8_t)((uint16_t)zero[i] >> 8);
    }
    uint16_t crc = crc16_ccitt_false(ee_image + 2, 2 * SLOT_COUNT);
    ee_image[0] = (uint8_t)EE_MAGIC;
    ee_image[1] = (uint8_t)(EE_MAGIC >> 8);
    ee_image[EE_SIZE - 2] = (uint8_t)crc;
    ee_image[EE_SIZE - 1] = (uint8_t)(crc >> 8);
    ee_next = 0;
}

void hal_zero_erase(void)
{
    ee_image[0] = ee_image[1] = 0xFF;
    ee_next = EE_SIZE - 2; /* only the magic */
}

/* One EEPROM byte per call when the EEPROM is idle (3.3 ms a byte): the magic last, so a
 * reset in the middle leaves no valid record. Never waits. */
void hal_poll(void)
{
    if (ee_next >= EE_SIZE || !eeprom_is_ready())
        return;
    uint16_t addr = (uint16_t)((ee_next + 2) % EE_SIZE);
    if (eeprom_read_byte((const uint8_t *)addr) != ee_image[addr])
        eeprom_write_byte((uint8_t *)addr, ee_image[addr]);
    ee_next++;
}

/* ---------------------------------------------------------------- start */

void hal_init(void)
{
    /* 1 ms clock: Timer0 CTC, 16 MHz / 64 / 250 */
    TCCR0A = _BV(WGM01);
    TCCR0B = _BV(CS01) | _BV(CS00);
    OCR0A = 249;
    TIMSK0 = _BV(OCIE0A);

    /* USART0 115200 8N1, double speed: UBRR = 16 (117647 baud, +2.1 %, as the 16U2 bridge) */
    UCSR0A = _BV(U2X0);
    UBRR0 = 16;
    UCSR0C = _BV(UCSZ01) | _BV(UCSZ00);
    UCSR0B = _BV(RXEN0) | _BV(TXEN0) | _BV(RXCIE0);

    /* LED data low, select lines channel 0 */
    LED_PORT &= (uint8_t)~LED_MASK;
    LED_DDR |= LED_MASK;
    SEL_PORT = (uint8_t)((SEL_PORT & 0xC0) | EN7_ON);
    SEL_DDR |= 0x3F;

    /* ADC: external AREF selected before the first conversion; clock 16 MHz / 32 = 500 kHz */
    DIDR0 = 0xFF;
    s_chan = s_mux = s_sample = 0;
    s_discard = 1;
    adc_select(0);
    ADCSRA = _BV(ADEN) | _BV(ADIE) | _BV(ADPS2) | _BV(ADPS0);
    ADCSRA |= _BV(ADSC);
}
