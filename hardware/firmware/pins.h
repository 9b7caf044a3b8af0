/* The sensor/LED board's pin map on an Arduino Mega 2560 (ATmega2560).
 *
 * THE one pin table: each PIN_ line is `port letter, bit, Arduino Mega pin`.
 * hardware/WIRING.md's "Mega 2560 pin map" table lists the same rows and
 * tests/test_firmware.py checks that the two agree; hal_avr.c and the simulator
 * harness (sim/simboard.c) take every pin from here.
 *
 * Constraints the code relies on (checked at compile time in hal_avr.c):
 *   MUX_S0..MUX_S3 are bits 0..3 of one port, MUX7_EN and MUX8_EN bits 4 and 5 of the same
 *   port (one write selects a channel and the mux that drives ADC7);
 *   MUXm_SIG is ADC input m for m = 0..7; muxes 7 and 8 share ADC7 and take turns by their
 *   active-low enables (muxes 0..6 have E tied to GND). ADC8..ADC15 stay free: simavr 1.6,
 *   which runs this firmware in the tests, models only ADC0..ADC7.
 *   LED_DATA is on a port in the low I/O space (ports A..G) so `out` reaches it in 1 cycle.
 */
#ifndef TAVLI_PINS_H
#define TAVLI_PINS_H

#define PIN_MUX_S0 A, 0, D22
#define PIN_MUX_S1 A, 1, D23
#define PIN_MUX_S2 A, 2, D24
#define PIN_MUX_S3 A, 3, D25
#define PIN_MUX7_EN A, 4, D26
#define PIN_MUX8_EN A, 5, D27
#define PIN_LED_DATA B, 4, D10
#define PIN_UART_RX E, 0, D0
#define PIN_UART_TX E, 1, D1
#define PIN_MUX0_SIG F, 0, A0
#define PIN_MUX1_SIG F, 1, A1
#define PIN_MUX2_SIG F, 2, A2
#define PIN_MUX3_SIG F, 3, A3
#define PIN_MUX4_SIG F, 4, A4
#define PIN_MUX5_SIG F, 5, A5
#define PIN_MUX6_SIG F, 6, A6
#define PIN_MUX7_SIG F, 7, A7
#define PIN_MUX8_SIG F, 7, A7

#define PIN_PORT_(port, bit, label) PORT##port
#define PIN_DDR_(port, bit, label) DDR##port
#define PIN_LETTER_(port, bit, label) (#port[0])
#define PIN_BIT_(port, bit, label) (bit)
#define PIN_PORT(pin) PIN_PORT_(pin)     /* PORTx register */
#define PIN_DDR(pin) PIN_DDR_(pin)       /* DDRx register */
#define PIN_LETTER(pin) PIN_LETTER_(pin) /* 'A'.. for the simulator's ioport IRQs */
#define PIN_BIT(pin) PIN_BIT_(pin)

#endif
