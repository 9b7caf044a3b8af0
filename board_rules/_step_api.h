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

#endif
