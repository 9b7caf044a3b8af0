/* The board's logic (see board.h): protocol, debounced slot states, events, calibration,
 * LED frame. Portable C99; everything chip-specific goes through hal.h. */
#include <string.h>
#include "board.h"
#include "crc.h"
#include "hal.h"

static const uint16_t levels[LEVEL_COUNT] = {1200, 1700, 2000, 2200};

static void put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *p, uint32_t v)
{
    put16(p, (uint16_t)v);
    put16(p + 2, (uint16_t)(v >> 16));
}

static uint16_t get16(const uint8_t *p)
{
    return (uint16_t)(p[0] | (p[1] << 8));
}

/* "<prefix><v><suffix>" into out, at most cap characters; returns the length. */
static uint8_t format_u32(char *out, uint8_t cap, const char *prefix, uint32_t v, const char *suffix)
{
    char digits[10];
    uint8_t n = 0, k = 0;
    while (*prefix && n < cap)
        out[n++] = *prefix++;
    do {
        digits[k++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (k && n < cap)
        out[n++] = digits[--k];
    while (*suffix && n < cap)
        out[n++] = *suffix++;
    return n;
}

/* ---------------------------------------------------------------- sending */

static uint8_t *payload(board_t *b)
{
    return b->body + HEADER_SIZE;
}

/* Seal and queue the frame in b->body; 0 (and nothing sent) if the transmit queue has no room. */
static int send(board_t *b, uint8_t type, uint16_t len)
{
    size_t n = frame_seal(b->body, b->seq, type, len);
    if (hal_tx_free() < frame_wire_size(n))
        return 0; /* never wait for the port: a snapshot heals what is lost */
    b->seq++;
    frame_emit(b->body, n, hal_tx_put);
    hal_tx_kick();
    return 1;
}

static void ack(board_t *b, uint16_t seq, uint8_t type)
{
    uint8_t *p = payload(b);
    put16(p, seq);
    p[2] = type;
    send(b, T_ACK, 3);
}

static void nack(board_t *b, uint16_t seq, uint8_t type, uint8_t reason)
{
    uint8_t *p = payload(b);
    put16(p, seq);
    p[2] = type;
    p[3] = reason;
    send(b, T_NACK, 4);
}

static int error(board_t *b, uint8_t code, const char *detail, uint8_t len)
{
    uint8_t *p = payload(b);
    p[0] = code;
    p[1] = len;
    memcpy(p + 2, detail, len);
    return send(b, T_ERROR, (uint16_t)(2 + len));
}

static void hello_reply(board_t *b, uint16_t seq)
{
    static const char serial[] = BOARD_SERIAL;
    uint8_t *p = payload(b);
    put16(p, seq);
    p[2] = PROTO_MAJOR;
    p[3] = PROTO_MINOR;
    p[4] = FW_VERSION_MAJOR;
    p[5] = FW_VERSION_MINOR;
    p[6] = FW_VERSION_PATCH;
    p[7] = SLOTS_PER_POINT;
    p[8] = BAR_SLOTS;
    p[9] = TRAY_SLOTS;
    put16(p + 10, LED_COUNT);
    p[12] = (uint8_t)(sizeof serial - 1);
    memcpy(p + 13, serial, sizeof serial - 1);
    send(b, T_HELLO_REPLY, (uint16_t)(13 + sizeof serial - 1));
}

static int send_snapshot(board_t *b, uint32_t now)
{
    uint8_t *p = payload(b);
    uint32_t crc = 0xFFFFFFFFUL;
    put32(p, now);
    p[8] = SLOTS_PER_POINT;
    p[9] = BAR_SLOTS;
    p[10] = TRAY_SLOTS;
    for (uint16_t i = 0; i < SLOT_COUNT; i++) {
        uint8_t *q = p + 11 + 3 * i;
        q[0] = b->stable[i] & 3;
        put16(q + 1, b->strength[i]);
        crc = crc32_update(crc, q, 1);
    }
    put32(p + 4, crc ^ 0xFFFFFFFFUL);
    if (!send(b, T_SNAPSHOT, 11 + 3 * SLOT_COUNT))
        return 0;
    b->snapshot_due = 0;
    b->last_snapshot_ms = now;
    return 1;
}

static void slot_event(board_t *b, uint8_t type, uint16_t slot, uint8_t state, uint32_t now)
{
    if (!b->ready || b->cfg.report_mode != 1)
        return;
    uint8_t *p = payload(b);
    if (slot < POINTS * SLOTS_PER_POINT) {
        p[0] = AREA_POINT;
        p[1] = (uint8_t)(slot / SLOTS_PER_POINT + 1);
        p[2] = (uint8_t)(slot % SLOTS_PER_POINT);
    } else if (slot < POINTS * SLOTS_PER_POINT + BAR_SLOTS) {
        p[0] = AREA_BAR;
        p[1] = 0;
        p[2] = (uint8_t)(slot - POINTS * SLOTS_PER_POINT);
    } else {
        uint16_t t = (uint16_t)(slot - POINTS * SLOTS_PER_POINT - BAR_SLOTS);
        p[0] = t < TRAY_SLOTS ? AREA_OFF_WHITE : AREA_OFF_BLACK;
        p[1] = 0;
        p[2] = (uint8_t)(t % TRAY_SLOTS);
    }
    p[3] = state;
    put32(p + 4, now);
    send(b, type, 8); /* a hint: dropped if the queue is full, the snapshot follows */
}

/* ---------------------------------------------------------------- sensing */

int16_t board_field(const board_t *b, uint16_t slot, uint16_t sum)
{
    int32_t d = (int32_t)sum - b->zero[slot];
    int32_t f = (d * FIELD_NUM + (1L << 14)) >> 15;
    if (f > 32767)
        f = 32767;
    if (f < -32767)
        f = -32767;
    return (int16_t)f;
}

uint8_t board_classify(const board_t *b, int16_t field, uint8_t stable_state, uint16_t *strength)
{
    uint16_t s = (uint16_t)(field < 0 ? -field : field);
    uint16_t thr = b->cfg.empty_threshold, h = b->cfg.hysteresis;
    uint16_t on = stable_state == ST_EMPTY ? (uint16_t)(thr + h) : (uint16_t)(thr > h ? thr - h : 0);
    *strength = s;
    if (s < on)
        return ST_EMPTY;
    if (s < CHECKER_MIN || s < b->cfg.polarity_margin)
        return ST_UNCERTAIN;
    uint8_t height = 1;
    for (uint8_t k = 1; k < LEVEL_COUNT; k++) {
        uint16_t here = levels[height - 1];
        uint16_t dist_here = s > here ? s - here : here - s;
        uint16_t dist_k = s > levels[k] ? s - levels[k] : levels[k] - s;
        if (dist_k < dist_here)
            height = (uint8_t)(k + 1);
    }
    return (uint8_t)((field > 0 ? ST_WHITE : ST_BLACK) | (height << 2));
}

/* LIFT / PUT for a debounced change of one slot's class (SENSING.md "Events"). */
static void change_events(board_t *b, uint16_t slot, uint8_t old, uint8_t now_cls, uint32_t now)
{
    uint8_t a = old & 3, c = now_cls & 3;
    if (a == c) { /* same colour, another stack height */
        slot_event(b, (now_cls >> 2) > (old >> 2) ? T_PUT : T_LIFT, slot, c, now);
    } else if (a == ST_EMPTY) {
        slot_event(b, T_PUT, slot, c, now);
    } else if (c == ST_EMPTY) {
        slot_event(b, T_LIFT, slot, a, now);
    } else if (c == ST_UNCERTAIN) { /* a checker of unknown colour arrived on top: a pin */
        slot_event(b, T_PUT, slot, ST_UNCERTAIN, now);
    } else if (a == ST_UNCERTAIN) { /* the pinning checker left */
        slot_event(b, T_LIFT, slot, ST_UNCERTAIN, now);
    } else { /* white became black within one debounce window */
        slot_event(b, T_LIFT, slot, a, now);
        slot_event(b, T_PUT, slot, c, now);
    }
}

static void finish_calibration(board_t *b, uint32_t now)
{
    int16_t zero[SLOT_COUNT];
    (void)now;
    b->calibrating = 0;
    for (uint16_t i = 0; i < SLOT_COUNT; i++) {
        uint16_t avg = (uint16_t)((b->cal_acc[i] + CAL_SCANS / 2) / CAL_SCANS);
        int32_t f = (((int32_t)avg - SUM_NOMINAL_ZERO) * FIELD_NUM) >> 15;
        if (f > CAL_MAX_OFFSET || f < -CAL_MAX_OFFSET || avg < SUM_SENSOR_MIN || avg > SUM_SENSOR_MAX) {
            char text[96];
            uint8_t n = format_u32(text, sizeof text, "slot ", i, "");
            n = (uint8_t)(n + format_u32(text + n, (uint8_t)(sizeof text - n), " reads ", (uint32_t)(f < 0 ? -f : f),
                                         " (0.01 mT) from VCC/2: is a checker on the board?"));
            error(b, ERR_CALIBRATION_FAILED, text, n);
            nack(b, b->cal_seq, T_CALIBRATE, NACK_FAILED);
            return;
        }
        zero[i] = (int16_t)avg;
    }
    memcpy(b->zero, zero, sizeof zero);
    hal_zero_store(b->zero, SLOT_COUNT);
    ack(b, b->cal_seq, T_CALIBRATE);
}

void board_scan(board_t *b, const uint16_t *sums, uint32_t now)
{
    uint8_t changed = 0;
    b->scans++;
    b->fault = 0;
    for (uint16_t i = 0; i < CHANNEL_COUNT; i++) {
        uint16_t s = sums[i];
        uint8_t bad = i < SLOT_COUNT ? (s < SUM_SENSOR_MIN || s > SUM_SENSOR_MAX) : s > SUM_SPARE_MAX;
        if (bad && !b->fault) {
            b->fault = 1;
            b->fault_slot = (int16_t)i;
            b->fault_mv = (uint16_t)(((uint32_t)s * ADC_REF_MV) / (ADC_SAMPLES * 1024UL));
        }
    }
    if (b->calibrating) {
        for (uint16_t i = 0; i < SLOT_COUNT; i++)
            b->cal_acc[i] = (uint16_t)(b->cal_acc[i] + sums[i]);
        if (--b->cal_left == 0)
            finish_calibration(b, now);
    }
    for (uint16_t i = 0; i < SLOT_COUNT; i++) {
        uint16_t strength;
        uint8_t cls = board_classify(b, board_field(b, i, sums[i]), b->stable[i] & 3, &strength);
        if (!b->have_state || cls == b->stable[i]) {
            b->stable[i] = b->cand[i] = cls;
            b->count[i] = 0;
            b->strength[i] = strength;
            continue;
        }
        if (cls != b->cand[i]) {
            b->cand[i] = cls;
            b->count[i] = 0;
        }
        if (++b->count[i] >= b->cfg.debounce_scans) {
            change_events(b, i, b->stable[i], cls, now);
            b->stable[i] = cls;
            b->strength[i] = strength;
            b->count[i] = 0;
            changed = 1;
        }
    }
    b->have_state = 1;
    if (changed)
        b->snapshot_due = 1;
}

/* ---------------------------------------------------------------- LEDs */

void board_render_leds(board_t *b, uint32_t now)
{
    uint8_t phase = (uint8_t)((now / BLINK_PHASE_MS) & 7);
    uint32_t total = 0;
    b->led_blinking = 0;
    for (uint8_t i = 0; i < LED_COUNT; i++) {
        uint8_t blink = b->leds[i][3];
        uint8_t on = (uint8_t)((blink >> phase) & 1);
        if (blink != 0 && blink != 0xFF)
            b->led_blinking = 1;
        b->grb[3 * i] = on ? b->leds[i][1] : 0;
        b->grb[3 * i + 1] = on ? b->leds[i][0] : 0;
        b->grb[3 * i + 2] = on ? b->leds[i][2] : 0;
        total += (uint32_t)b->grb[3 * i] + b->grb[3 * i + 1] + b->grb[3 * i + 2];
    }
    if (total > LED_SUM_MAX) /* power cap (WIRING.md): scale every channel down alike */
        for (uint8_t i = 0; i < 3 * LED_COUNT; i++)
            b->grb[i] = (uint8_t)((uint32_t)b->grb[i] * LED_SUM_MAX / total);
    b->led_phase = phase;
}

static void show_leds(board_t *b, uint32_t now)
{
    board_render_leds(b, now);
    hal_led_show(b->grb, 3 * LED_COUNT);
    b->led_writes++;
    b->led_dirty = 0;
}

/* ---------------------------------------------------------------- receiving */

static void handle(board_t *b, const frame_t *f, uint32_t now)
{
    const uint8_t *p = f->payload;
    uint16_t want;
    if (f->major != PROTO_MAJOR) { /* only HELLO's layout is frozen across majors */
        if (f->type == T_HELLO) {
            nack(b, f->seq, T_HELLO, NACK_VERSION_MISMATCH);
            hello_reply(b, f->seq);
            b->ready = 0;
            b->snapshot_due = 0;
        } else {
            b->corrupt++;
        }
        return;
    }
    switch (f->type) {
    case T_HELLO: want = 2; break;
    case T_LED_FRAME: want = (uint16_t)(f->len ? 1 + 4 * p[0] : 1); break;
    case T_CONFIG: want = 10; break;
    case T_CALIBRATE: want = 1; break;
    default:
        nack(b, f->seq, f->type, NACK_UNKNOWN_TYPE);
        return;
    }
    uint8_t len_ok = f->minor > PROTO_MINOR ? f->len >= want : f->len == want;
    if (f->type == T_HELLO) {
        if (!len_ok) {
            nack(b, f->seq, T_HELLO, NACK_BAD_LENGTH);
            return;
        }
        if (p[0] != PROTO_MAJOR) {
            nack(b, f->seq, T_HELLO, NACK_VERSION_MISMATCH);
            hello_reply(b, f->seq);
            b->ready = 0;
            b->snapshot_due = 0;
            return;
        }
        hello_reply(b, f->seq);
        b->ready = 1;
        b->snapshot_due = 1; /* sent at once, or after the first scan */
        board_poll(b, now);
        return;
    }
    if (!b->ready) {
        nack(b, f->seq, f->type, NACK_NOT_READY);
        return;
    }
    if (!len_ok) {
        nack(b, f->seq, f->type, NACK_BAD_LENGTH);
        return;
    }
    if (b->calibrating) {
        nack(b, f->seq, f->type, NACK_BUSY);
        return;
    }
    if (f->type == T_LED_FRAME) {
        if (p[0] != LED_COUNT) {
            nack(b, f->seq, T_LED_FRAME, NACK_BAD_VALUE);
            return;
        }
        memcpy(b->leds, p + 1, sizeof b->leds);
        show_leds(b, now);
        ack(b, f->seq, T_LED_FRAME);
    } else if (f->type == T_CONFIG) {
        board_config_t c;
        c.debounce_scans = p[0];
        c.report_mode = p[1];
        c.heartbeat_ms = get16(p + 2);
        c.empty_threshold = get16(p + 4);
        c.hysteresis = get16(p + 6);
        c.polarity_margin = get16(p + 8);
        if (c.debounce_scans < 1 || c.report_mode > 1 || c.heartbeat_ms < 100 || c.heartbeat_ms > 1000 ||
            c.polarity_margin > c.empty_threshold || c.empty_threshold >= PAIR_STRENGTH ||
            c.hysteresis > c.empty_threshold || c.empty_threshold + c.hysteresis >= CHECKER_MIN) {
            nack(b, f->seq, T_CONFIG, NACK_BAD_VALUE);
            return;
        }
        b->cfg = c;
        ack(b, f->seq, T_CONFIG);
        b->snapshot_due = 1;
        board_poll(b, now);
    } else { /* T_CALIBRATE */
        if (p[0] == 0) {
            b->calibrating = 1;
            b->cal_left = CAL_SCANS;
            b->cal_seq = f->seq;
            memset(b->cal_acc, 0, sizeof b->cal_acc);
        } else if (p[0] == 1) {
            for (uint16_t i = 0; i < SLOT_COUNT; i++)
                b->zero[i] = SUM_NOMINAL_ZERO;
            hal_zero_erase();
            ack(b, f->seq, T_CALIBRATE);
        } else {
            nack(b, f->seq, T_CALIBRATE, NACK_BAD_VALUE);
        }
    }
}

void board_rx(board_t *b, uint8_t byte, uint32_t now)
{
    frame_t f;
    if (!deframer_push(&b->rx, byte))
        return;
    if (b->rx.overlong || frame_decode(b->rx.buf, b->rx.frame_len, &f) != FRAME_OK) {
        b->corrupt++;
        return;
    }
    handle(b, &f, now);
}

/* ---------------------------------------------------------------- time */

void board_poll(board_t *b, uint32_t now)
{
    char text[48];
    uint8_t n;
    if (b->ready && b->have_state) {
        if (now - b->last_snapshot_ms >= b->cfg.heartbeat_ms)
            b->snapshot_due = 1;
        if (b->snapshot_due)
            send_snapshot(b, now);
    }
    if (b->ready) {
        if (b->corrupt != b->corrupt_reported && now - b->corrupt_report_ms >= ERROR_REPORT_MS) {
            n = format_u32(text, sizeof text, "", b->corrupt, " corrupt frames received");
            if (error(b, ERR_CORRUPT_FRAMES, text, n)) {
                b->corrupt_reported = b->corrupt;
                b->corrupt_report_ms = now;
            }
        }
        uint16_t lost = hal_rx_overflows();
        if (lost != b->overflow_reported && now - b->overflow_report_ms >= ERROR_REPORT_MS) {
            n = format_u32(text, sizeof text, "", lost, " received bytes lost");
            if (error(b, ERR_RX_OVERFLOW, text, n)) {
                b->overflow_reported = lost;
                b->overflow_report_ms = now;
            }
        }
        if (b->fault && now - b->fault_report_ms >= ERROR_REPORT_MS) {
            uint16_t i = (uint16_t)b->fault_slot;
            n = format_u32(text, sizeof text, i < SLOT_COUNT ? "slot " : "spare channel ", i, "");
            n = (uint8_t)(n + format_u32(text + n, (uint8_t)(sizeof text - n), " reads ", b->fault_mv, " mV"));
            if (error(b, ERR_SENSOR_FAULT, text, n))
                b->fault_report_ms = now;
        }
    }
    uint8_t phase = (uint8_t)((now / BLINK_PHASE_MS) & 7);
    if (b->led_dirty || (b->led_blinking && phase != b->led_phase))
        show_leds(b, now);
}

void board_init(board_t *b)
{
    memset(b, 0, sizeof *b);
    deframer_init(&b->rx);
    b->cfg.debounce_scans = DEFAULT_DEBOUNCE;
    b->cfg.report_mode = DEFAULT_REPORT_MODE;
    b->cfg.heartbeat_ms = DEFAULT_HEARTBEAT_MS;
    b->cfg.empty_threshold = DEFAULT_EMPTY_THRESHOLD;
    b->cfg.hysteresis = DEFAULT_HYSTERESIS;
    b->cfg.polarity_margin = DEFAULT_POLARITY_MARGIN;
    if (!hal_zero_load(b->zero, SLOT_COUNT))
        for (uint16_t i = 0; i < SLOT_COUNT; i++)
            b->zero[i] = SUM_NOMINAL_ZERO;
    b->corrupt_report_ms = b->overflow_report_ms = b->fault_report_ms = (uint32_t)0 - ERROR_REPORT_MS;
}
