/* C unit tests of the portable logic, built by `make host-test` with the host's gcc.
 * The byte-for-byte comparisons with the Python codec are in tests/test_firmware.py. */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include "../board.h"
#include "../cobs.h"
#include "../crc.h"
#include "../frame.h"

void fw_reset(int keep_eeprom);
void fw_rx(const uint8_t *data, uint32_t n, uint32_t now);
void fw_scan_fields(const int16_t *fields, const int16_t *bias, uint32_t now);
uint32_t fw_tx_take(uint8_t *out, uint32_t max);
void fw_poll(uint32_t now);

static int failures, checks;
#define CHECK(cond)                                                                    \
    do {                                                                               \
        checks++;                                                                      \
        if (!(cond)) {                                                                 \
            failures++;                                                                \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);  \
        }                                                                              \
    } while (0)

static void test_check_values(void)
{
    const uint8_t digits[] = "123456789";
    CHECK(crc16_ccitt_false(digits, 9) == 0x29B1);
    CHECK(crc32_ieee(digits, 9) == 0xCBF43926UL);
}

static void test_cobs_round_trip(void)
{
    uint8_t data[600], enc[620], dec[620];
    for (int n = 0; n <= 600; n += 7) {
        for (int i = 0; i < n; i++)
            data[i] = (uint8_t)((i * 37 + n) % 5 ? i * 13 + 1 : 0);
        size_t e = cobs_encode(data, (size_t)n, enc);
        CHECK(memchr(enc, 0, e) == NULL);
        CHECK(e <= (size_t)n + (size_t)n / 254 + 1);
        CHECK(cobs_decode(enc, e, dec) == n);
        CHECK(memcmp(data, dec, (size_t)n) == 0);
    }
    uint8_t bad[] = {0x05, 0x11, 0x22};
    CHECK(cobs_decode(bad, sizeof bad, dec) == -1);
    CHECK(cobs_decode(bad, 0, dec) == -1);
}

static void test_deframer_resynchronises_after_overlong_run(void)
{
    deframer_t d;
    int ended = 0;
    deframer_init(&d);
    for (int i = 0; i < 2000; i++)
        ended += deframer_push(&d, 0x55);
    CHECK(ended == 0);
    CHECK(deframer_push(&d, 0) == 1 && d.overlong);
    CHECK(deframer_push(&d, 0x01) == 0);
    CHECK(deframer_push(&d, 0) == 1 && !d.overlong && d.frame_len == 1);
    CHECK(deframer_push(&d, 0) == 0); /* empty frame: ignored */
}

static void test_debounce_needs_three_equal_scans(void)
{
    int16_t fields[SLOT_COUNT] = {0};
    uint8_t out[4096];
    static const uint8_t hello[] = {0x00, 0x02, 0x01, 0x02, 0x01, 0x03, 0x01, 0x01, 0x03, 0xFF, 0xE7, 0x00}; /* seq 1 */
    fw_reset(0);
    fw_scan_fields(fields, NULL, 0);
    fw_rx(hello, sizeof hello, 1);
    uint32_t n = fw_tx_take(out, sizeof out);
    CHECK(n > 400); /* HELLO_REPLY and the first SNAPSHOT */
    fields[7] = 1200;
    fw_scan_fields(fields, NULL, 10);
    fw_scan_fields(fields, NULL, 20);
    CHECK(fw_tx_take(out, sizeof out) == 0);
    fw_scan_fields(fields, NULL, 30);
    fw_poll(30);
    n = fw_tx_take(out, sizeof out);
    CHECK(n > 400); /* PUT and a SNAPSHOT */
}

/* Any byte stream: no crash, no overrun (built with AddressSanitizer), and a valid HELLO still works. */
static void test_garbage_never_breaks_the_receiver(void)
{
    static const uint8_t hello[] = {0x00, 0x02, 0x01, 0x02, 0x01, 0x03, 0x01, 0x01, 0x03, 0xFF, 0xE7, 0x00};
    static uint8_t out[1 << 16];
    uint32_t seed = 1;
    fw_reset(0);
    for (int round = 0; round < 200; round++) {
        int n = (int)(seed % 3000);
        for (int i = 0; i < n; i++) {
            seed = seed * 1103515245u + 12345u;
            uint8_t byte = (uint8_t)(seed >> 16);
            if (round % 3 == 0 && byte < 40)
                byte = 0; /* many short frames */
            fw_rx(&byte, 1, (uint32_t)round);
        }
        fw_rx(hello, sizeof hello, (uint32_t)round);
        uint32_t got = fw_tx_take(out, sizeof out);
        CHECK(got > 0);
    }
}

/* Every ERROR text at its longest fits its buffer (AddressSanitizer watches the stack). */
static void test_error_texts_fit(void)
{
    static const uint8_t hello[] = {0x00, 0x02, 0x01, 0x02, 0x01, 0x03, 0x01, 0x01, 0x03, 0xFF, 0xE7, 0x00};
    static const uint8_t calibrate[] = {0x00, 0x02, 0x01, 0x02, 0x02, 0x02, 0x22, 0x03, 0x5C, 0xC6, 0x00}; /* seq 2, ZERO_EMPTY */
    static uint8_t out[1 << 16];
    int16_t fields[SLOT_COUNT] = {0};
    fw_reset(0);
    fields[137] = -2200;
    fw_scan_fields(fields, NULL, 0);
    fw_rx(hello, sizeof hello, 1);
    fw_rx(calibrate, sizeof calibrate, 2);
    for (uint32_t t = 3; t < 3 + CAL_SCANS; t++)
        fw_scan_fields(fields, NULL, t);
    uint32_t n = fw_tx_take(out, sizeof out);
    CHECK(n > 0 && memmem(out, n, "slot 137 reads", 14) != NULL);
}

int main(void)
{
    test_check_values();
    test_cobs_round_trip();
    test_deframer_resynchronises_after_overlong_run();
    test_debounce_needs_three_equal_scans();
    test_garbage_never_breaks_the_receiver();
    test_error_texts_fit();
    printf("%d checks, %d failed\n", checks, failures);
    return failures != 0;
}
