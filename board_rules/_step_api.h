/* The beam search's step of the blocking games, lent by board_rules._fastgen to engine._heuristic
 * through the capsule board_rules._fastgen._step_blocking (see step_blocking's docstring). */
#ifndef TAVLI_STEP_API_H
#define TAVLI_STEP_API_H

#include <Python.h>
#include <stdint.h>

typedef struct {
    int version; /* 1 */
    /* (boards, n, die, head_start, head_limit, start_rule_limit, start_quarter, trapping, mirror,
     * opp_off, keys, moves, table, cap) -> boards reached (keys: 52 bytes each, moves: 3 each) */
    Py_ssize_t (*step)(const uint8_t *, Py_ssize_t, int, int, int, int, int, int, const uint8_t *, int, uint8_t *,
                       uint8_t *, int *, size_t);
    size_t (*table)(Py_ssize_t); /* the scratch ints step needs for n boards */
} StepApi;

/* 0 where mirror (mirror_len bytes) maps each point 1..24 to a point 1..24, else -1 with a ValueError. */
static inline int check_mirror(const uint8_t *mirror, Py_ssize_t mirror_len) {
    if (mirror_len != 25) {
        PyErr_SetString(PyExc_ValueError, "mirror: expected 25 bytes");
        return -1;
    }
    for (int i = 1; i <= 24; i++)
        if (mirror[i] < 1 || mirror[i] > 24) {
            PyErr_Format(PyExc_ValueError, "mirror: point %d maps to %d, not 1 to 24", i, mirror[i]);
            return -1;
        }
    return 0;
}

/* The checks both callers of the step make of its arguments: 0, or -1 with a ValueError naming the one
 * at fault. */
static inline int step_check(int die, const uint8_t *mirror, Py_ssize_t mirror_len, int start_rule_limit,
                             int opp_off) {
    if (die < 1 || die > 6) {
        PyErr_Format(PyExc_ValueError, "die: %d is not 1 to 6", die);
        return -1;
    }
    if (check_mirror(mirror, mirror_len) < 0) return -1;
    if (start_rule_limit < 0 || start_rule_limit > 24) {
        PyErr_Format(PyExc_ValueError, "start_rule_limit: %d is not 0 to 24", start_rule_limit);
        return -1;
    }
    if (opp_off < 0 || opp_off > 15) {
        PyErr_Format(PyExc_ValueError, "opp_off: %d is not 0 to 15", opp_off);
        return -1;
    }
    return 0;
}

#endif
