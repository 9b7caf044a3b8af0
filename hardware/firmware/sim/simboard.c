/* simboard: the built firmware (.elf) on simavr, wired to a pseudo-terminal and to a
 * scripted table.
 *
 *   simboard FIRMWARE.elf
 *
 * Prints "PTY <path>" once: open that path as the board's serial port (BoardLink does).
 * Reads commands on stdin, one a line, and answers each with "OK t_ms=<sim ms> <command>"
 * (or "ERR ..."):
 *   place point N slot S white|black     a checker on top of that slot's stack
 *   place bar|off_white|off_black slot S white|black
 *   lift point N slot S                  the top checker of that stack
 *   lift bar|off_white|off_black slot S
 *   field I V      slot I (0..137) reads V (0.01 mT), whatever its stack
 *   bias I V       slot I's sensor has a quiescent offset of V (0.01 mT)
 *   spare K MV     grounded spare channel K (0..5) reads MV millivolts (a fault)
 *   noise N        add uniform noise of +-N (0.01 mT) to every conversion
 *   stats          print "STATS ..." (simulated time, scans, scan rate)
 *   quit
 * Prints "LEDS t_ms=.. n=.. max_gap_ns=.. bad_bits=.. RRGGBB ..." for every frame the
 * firmware clocks out of its LED data pin, decoded from the pin's edges in CPU cycles.
 *
 * The sensors: mux m (0..7) is on ADC input m, mux 8 shares ADC7 with mux 7 (whichever
 * has its enable line low drives it); the channel is the value on the select lines
 * MUX_S0..S3 (pins.h); slot i = 16 m + c. A slot's stack gives the field by
 * SENSING.md's model; the DRV5055A1 at 3.3 V outputs 1650 mV + 0.6 mV per 0.01 mT,
 * clipped at +-22 mT; AREF is 3300 mV.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "avr_adc.h"
#include "avr_ioport.h"
#include "avr_uart.h"
#include "sim_avr.h"
#include "sim_elf.h"

#include "config.h"
#include "pins.h"

#define F_CPU_HZ 16000000UL
#define LATCH_CYCLES 800 /* 50 us low ends an LED frame */
#define MAX_STACK 15

static avr_t *avr;
static const int contributions[] = {1200, 500, 300, 200, 150, 100, 80, 60};

/* ---------------------------------------------------------------- the table */

static int8_t stack[SLOT_COUNT][MAX_STACK];
static int height[SLOT_COUNT];
static int override_on[SLOT_COUNT], override_value[SLOT_COUNT], bias[SLOT_COUNT];
static int spare_mv[CHANNEL_COUNT - SLOT_COUNT];
static int noise;
static uint32_t rng = 12345;

static int slot_field(int i)
{
    int f = 0;
    if (override_on[i]) {
        f = override_value[i];
    } else {
        for (int k = 0; k < height[i]; k++)
            f += stack[i][k] * (k < 8 ? contributions[k] : 0);
    }
    if (f > 2200)
        f = 2200;
    if (f < -2200)
        f = -2200;
    return f;
}

static uint32_t channel_mv(int ch)
{
    if (ch >= SLOT_COUNT)
        return (uint32_t)spare_mv[ch - SLOT_COUNT];
    int f = slot_field(ch) + bias[ch];
    if (noise) {
        rng = rng * 1103515245u + 12345u;
        f += (int)((rng >> 8) % (uint32_t)(2 * noise + 1)) - noise;
    }
    int mv = 1650 + f * 6 / 10;
    return (uint32_t)(mv < 0 ? 0 : mv > 3300 ? 3300 : mv);
}

/* ---------------------------------------------------------------- sensors on the ADC */

static uint8_t select_bits, enable_bits;
static uint64_t scans, first_scan_cycle, last_scan_cycle;
static avr_irq_t *adc_in[8];
static uint64_t enable_faults;

static void select_changed(avr_irq_t *irq, uint32_t value, void *param)
{
    (void)irq;
    (void)param;
    uint8_t before = select_bits;
    select_bits = (uint8_t)(value & 0x0F); /* the whole port: S0..S3 are its bits 0..3 */
    enable_bits = (uint8_t)((value >> PIN_BIT(PIN_MUX7_EN)) & 3); /* bit 0 MUX7_EN, bit 1 MUX8_EN */
    if (before == 15 && select_bits == 0) { /* the multiplexers went back to channel 0: a full scan */
        if (!scans)
            first_scan_cycle = avr->cycle;
        scans++;
        last_scan_cycle = avr->cycle;
    }
}

static void adc_triggered(avr_irq_t *irq, uint32_t value, void *param)
{
    (void)irq;
    (void)param;
    union {
        avr_adc_mux_t mux;
        uint32_t v;
    } e = {.v = value};
    if (e.mux.kind != ADC_MUX_SINGLE || e.mux.src > 7)
        return;
    int mux = (int)e.mux.src;
    if (mux == 7) {
        if (enable_bits == 3 || enable_bits == 0) { /* both off: nothing drives ADC7; both on: a short */
            enable_faults++;
            avr_raise_irq(adc_in[7], 0);
            return;
        }
        mux = enable_bits == 2 ? 7 : 8;
    }
    avr_raise_irq(adc_in[e.mux.src], channel_mv(mux * MUX_CHANNELS + (select_bits & 0x0F)));
}

/* ---------------------------------------------------------------- LED data line */

static int led_level;
static uint64_t rise_cycle, fall_cycle, max_gap;
static uint8_t led_bytes[3 * 200];
static int led_bits, bad_bits;

static void led_flush(void)
{
    int n = led_bits / 24;
    if (!led_bits)
        return;
    printf("LEDS t_ms=%llu n=%d max_gap_ns=%llu bad_bits=%d", (unsigned long long)(avr->cycle / (F_CPU_HZ / 1000)), n,
           (unsigned long long)(max_gap * 1000000000ULL / F_CPU_HZ), bad_bits + (led_bits % 24 ? 1 : 0));
    for (int i = 0; i < n; i++) /* wire order G, R, B: printed as RRGGBB */
        printf(" %02x%02x%02x", led_bytes[3 * i + 1], led_bytes[3 * i], led_bytes[3 * i + 2]);
    printf("\n");
    fflush(stdout);
    led_bits = bad_bits = 0;
    max_gap = 0;
    memset(led_bytes, 0, sizeof led_bytes);
}

static void led_changed(avr_irq_t *irq, uint32_t value, void *param)
{
    (void)irq;
    (void)param;
    int level = value & 1;
    if (level == led_level)
        return;
    led_level = level;
    uint64_t now = avr->cycle;
    if (level) {
        if (led_bits) {
            uint64_t gap = now - fall_cycle;
            if (gap > LATCH_CYCLES)
                led_flush();
            else if (gap > max_gap)
                max_gap = gap;
        }
        rise_cycle = now;
    } else {
        uint64_t high = now - rise_cycle;
        /* WS2812B: T0H 0.4 us +-150 ns (4..8 cycles), T1H 0.8 us +-150 ns (10..15 cycles) */
        int bit = high >= 9;
        if (!((high >= 4 && high <= 8) || (high >= 10 && high <= 15)))
            bad_bits++;
        if (led_bits < (int)sizeof led_bytes * 8) {
            if (bit)
                led_bytes[led_bits / 8] |= (uint8_t)(0x80 >> (led_bits % 8));
            led_bits++;
        }
        fall_cycle = now;
    }
}

/* ---------------------------------------------------------------- UART on a pty */

static int pty_master = -1;
static uint8_t in_buf[1 << 16];
static size_t in_len, in_pos;
static uint8_t out_buf[1 << 16];
static size_t out_len;
static int uart_xon = 1;
static avr_irq_t *uart_input;

static void uart_output(avr_irq_t *irq, uint32_t value, void *param)
{
    (void)irq;
    (void)param;
    if (out_len < sizeof out_buf)
        out_buf[out_len++] = (uint8_t)value;
}

static void feed_uart(void)
{
    while (uart_xon && in_pos < in_len)
        avr_raise_irq(uart_input, in_buf[in_pos++]);
    if (in_pos == in_len)
        in_pos = in_len = 0;
}

static void uart_xon_irq(avr_irq_t *irq, uint32_t value, void *param)
{
    (void)irq;
    (void)value;
    (void)param;
    uart_xon = 1;
    feed_uart();
}

static void uart_xoff_irq(avr_irq_t *irq, uint32_t value, void *param)
{
    (void)irq;
    (void)value;
    (void)param;
    uart_xon = 0;
}

static const char *open_pty(void)
{
    pty_master = posix_openpt(O_RDWR | O_NOCTTY);
    if (pty_master < 0 || grantpt(pty_master) || unlockpt(pty_master))
        return NULL;
    const char *name = ptsname(pty_master);
    int slave = open(name, O_RDWR | O_NOCTTY); /* kept open: the master never sees EIO between host opens */
    if (slave < 0)
        return NULL;
    struct termios t;
    tcgetattr(slave, &t);
    cfmakeraw(&t);
    tcsetattr(slave, TCSANOW, &t);
    fcntl(pty_master, F_SETFL, fcntl(pty_master, F_GETFL) | O_NONBLOCK);
    return name;
}

static void pump_pty(void)
{
    if (out_len) {
        ssize_t n = write(pty_master, out_buf, out_len);
        if (n > 0) {
            memmove(out_buf, out_buf + n, out_len - (size_t)n);
            out_len -= (size_t)n;
        }
    }
    if (in_len < sizeof in_buf / 2) {
        ssize_t n = read(pty_master, in_buf + in_len, sizeof in_buf - in_len);
        if (n > 0)
            in_len += (size_t)n;
    }
    feed_uart();
}

/* ---------------------------------------------------------------- commands */

static double wall_start;

static double wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* "point N slot S" / "bar slot S" / "off_white slot S" / "off_black slot S": the slot index, or -1. */
static int parse_slot(const char *s, const char **rest)
{
    char area[16];
    int number = 0, slot = 0, used = 0;
    if (sscanf(s, "%15s%n", area, &used) != 1)
        return -1;
    s += used;
    if (!strcmp(area, "point")) {
        if (sscanf(s, " %d slot %d%n", &number, &slot, &used) != 2 || number < 1 || number > POINTS ||
            slot < 0 || slot >= SLOTS_PER_POINT)
            return -1;
        *rest = s + used;
        return (number - 1) * SLOTS_PER_POINT + slot;
    }
    if (sscanf(s, " slot %d%n", &slot, &used) != 1 || slot < 0)
        return -1;
    *rest = s + used;
    if (!strcmp(area, "bar"))
        return slot < BAR_SLOTS ? POINTS * SLOTS_PER_POINT + slot : -1;
    if (!strcmp(area, "off_white"))
        return slot < TRAY_SLOTS ? POINTS * SLOTS_PER_POINT + BAR_SLOTS + slot : -1;
    if (!strcmp(area, "off_black"))
        return slot < TRAY_SLOTS ? POINTS * SLOTS_PER_POINT + BAR_SLOTS + TRAY_SLOTS + slot : -1;
    return -1;
}

static int command(char *line)
{
    char colour[16];
    const char *rest = "";
    int a, b;
    line[strcspn(line, "\r\n")] = 0;
    if (!*line)
        return 1;
    if (!strncmp(line, "place ", 6)) {
        int i = parse_slot(line + 6, &rest);
        if (i < 0 || sscanf(rest, " %15s", colour) != 1 || height[i] >= MAX_STACK ||
            (strcmp(colour, "white") && strcmp(colour, "black")))
            goto bad;
        stack[i][height[i]++] = (int8_t)(colour[0] == 'w' ? 1 : -1);
        override_on[i] = 0;
    } else if (!strncmp(line, "lift ", 5)) {
        int i = parse_slot(line + 5, &rest);
        if (i < 0 || !height[i])
            goto bad;
        height[i]--;
        override_on[i] = 0;
    } else if (sscanf(line, "field %d %d", &a, &b) == 2 && a >= 0 && a < SLOT_COUNT) {
        override_on[a] = 1;
        override_value[a] = b;
    } else if (sscanf(line, "bias %d %d", &a, &b) == 2 && a >= 0 && a < SLOT_COUNT) {
        bias[a] = b;
    } else if (sscanf(line, "spare %d %d", &a, &b) == 2 && a >= 0 && a < CHANNEL_COUNT - SLOT_COUNT) {
        spare_mv[a] = b;
    } else if (sscanf(line, "noise %d", &a) == 1 && a >= 0) {
        noise = a;
    } else if (!strcmp(line, "stats")) {
        double sim_s = (double)avr->cycle / F_CPU_HZ;
        double span = (double)(last_scan_cycle - first_scan_cycle) / F_CPU_HZ;
        printf("STATS t_ms=%.0f scans=%llu scan_hz=%.1f scan_ms=%.2f enable_faults=%llu sim_per_wall=%.3f\n",
               sim_s * 1000, (unsigned long long)scans, scans > 1 ? (scans - 1) / span : 0.0,
               scans > 1 ? span * 1000 / (scans - 1) : 0.0, (unsigned long long)enable_faults,
               sim_s / (wall_now() - wall_start));
    } else if (!strcmp(line, "quit")) {
        return 0;
    } else {
        goto bad;
    }
    printf("OK t_ms=%llu %s\n", (unsigned long long)(avr->cycle / (F_CPU_HZ / 1000)), line);
    fflush(stdout);
    return 1;
bad:
    printf("ERR %s\n", line);
    fflush(stdout);
    return 1;
}

static char cmd_buf[4096];
static size_t cmd_len;

static int pump_stdin(void)
{
    struct pollfd p = {.fd = 0, .events = POLLIN};
    if (poll(&p, 1, 0) <= 0)
        return 1;
    ssize_t n = read(0, cmd_buf + cmd_len, sizeof cmd_buf - 1 - cmd_len);
    if (n <= 0)
        return 0; /* stdin closed: the test is gone */
    cmd_len += (size_t)n;
    char *nl;
    while ((nl = memchr(cmd_buf, '\n', cmd_len))) {
        *nl = 0;
        if (!command(cmd_buf))
            return 0;
        size_t used = (size_t)(nl - cmd_buf) + 1;
        memmove(cmd_buf, cmd_buf + used, cmd_len - used);
        cmd_len -= used;
    }
    if (cmd_len == sizeof cmd_buf - 1)
        cmd_len = 0;
    return 1;
}

/* ---------------------------------------------------------------- main */

int main(int argc, char **argv)
{
    elf_firmware_t fw;
    if (argc != 2) {
        fprintf(stderr, "usage: %s FIRMWARE.elf\n", argv[0]);
        return 2;
    }
    memset(&fw, 0, sizeof fw);
    if (elf_read_firmware(argv[1], &fw)) {
        fprintf(stderr, "simboard: cannot read %s\n", argv[1]);
        return 1;
    }
    strcpy(fw.mmcu, "atmega2560");
    fw.frequency = F_CPU_HZ;
    avr = avr_make_mcu_by_name(fw.mmcu);
    if (!avr) {
        fprintf(stderr, "simboard: simavr has no atmega2560\n");
        return 1;
    }
    avr_init(avr);
    avr_load_firmware(avr, &fw);
    avr->log = LOG_ERROR;
    avr->vcc = avr->avcc = 5000;
    avr->aref = ADC_REF_MV;

    for (int m = 0; m < 8; m++)
        adc_in[m] = avr_io_getirq(avr, AVR_IOCTL_ADC_GETIRQ, ADC_IRQ_ADC0 + m);
    avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_ADC_GETIRQ, ADC_IRQ_OUT_TRIGGER), adc_triggered, NULL);
    char sel_port = PIN_LETTER(PIN_MUX_S0);
    avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_IOPORT_GETIRQ(sel_port), IOPORT_IRQ_PIN_ALL),
                            select_changed, NULL);
    avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_IOPORT_GETIRQ(PIN_LETTER(PIN_LED_DATA)),
                                          PIN_BIT(PIN_LED_DATA)),
                            led_changed, NULL);

    uint32_t flags = 0;
    avr_ioctl(avr, AVR_IOCTL_UART_GET_FLAGS('0'), &flags);
    flags &= ~AVR_UART_FLAG_STDIO;
    avr_ioctl(avr, AVR_IOCTL_UART_SET_FLAGS('0'), &flags);
    uart_input = avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_INPUT);
    avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_OUTPUT), uart_output, NULL);
    avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_OUT_XON), uart_xon_irq, NULL);
    avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_OUT_XOFF), uart_xoff_irq, NULL);

    const char *path = open_pty();
    if (!path) {
        fprintf(stderr, "simboard: no pseudo-terminal: %s\n", strerror(errno));
        return 1;
    }
    printf("PTY %s\n", path);
    fflush(stdout);
    wall_start = wall_now();

    for (;;) {
        for (int i = 0; i < 20000; i++) {
            int state = avr_run(avr);
            if (state == cpu_Done || state == cpu_Crashed) {
                printf("CRASHED state=%d t_ms=%llu\n", state, (unsigned long long)(avr->cycle / (F_CPU_HZ / 1000)));
                fflush(stdout);
                return 1;
            }
        }
        if (led_bits && avr->cycle - fall_cycle > LATCH_CYCLES && !led_level)
            led_flush();
        pump_pty();
        if (!pump_stdin())
            break;
    }
    avr_terminate(avr);
    return 0;
}
