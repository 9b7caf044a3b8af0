/* The AVR layer's own entry points, used by main.c only. */
#ifndef TAVLI_HAL_AVR_H
#define TAVLI_HAL_AVR_H
#include <stdint.h>

void hal_init(void);
void hal_poll(void);
uint32_t hal_millis(void);
int hal_rx_pop(uint8_t *byte);
int hal_scan_take(uint16_t *sums);

#endif
