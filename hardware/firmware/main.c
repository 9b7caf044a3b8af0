/* The board's main loop on the ATmega2560: feed received bytes and completed scans to the
 * portable logic (board.c) and let it keep time. The scan and the serial port run on
 * interrupts (hal_avr.c), so nothing here waits for either. */
#include <avr/interrupt.h>
#include "board.h"
#include "hal_avr.h"

static board_t board;
static uint16_t sums[CHANNEL_COUNT];

int main(void)
{
    hal_init();
    board_init(&board);
    sei();
    for (;;) {
        uint32_t now = hal_millis();
        uint8_t byte;
        for (uint8_t k = 0; k < 64 && hal_rx_pop(&byte); k++)
            board_rx(&board, byte, now);
        if (hal_scan_take(sums))
            board_scan(&board, sums, now);
        board_poll(&board, now);
        hal_poll();
    }
}
