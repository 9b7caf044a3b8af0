/* What the portable board logic needs from the chip: a transmit queue, the LED data
 * line and non-volatile storage for the calibration. hal_avr.c implements it for the
 * ATmega2560, host/hal_host.c for the host build (unit tests through ctypes). */
#ifndef TAVLI_HAL_H
#define TAVLI_HAL_H
#include <stdint.h>

uint16_t hal_tx_free(void);        /* bytes the transmit queue can take now */
void hal_tx_put(uint8_t byte);     /* only after hal_tx_free said there is room */
void hal_tx_kick(void);            /* start sending what was queued */
void hal_led_show(const uint8_t *grb, uint16_t n); /* n bytes G, R, B per LED, then latch */
uint8_t hal_zero_load(int16_t *zero, uint16_t n);  /* 1 and the offsets if a calibration is stored */
void hal_zero_store(const int16_t *zero, uint16_t n);
void hal_zero_erase(void);
uint16_t hal_rx_overflows(void);   /* bytes lost because the receive queue was full, since boot */

#endif
