/* The compiled twin of engine/heuristic.py's value_parts: the same terms, in the same order of
 * floating-point operations, so the same doubles (tests/test_heuristic_compiled.py holds it to the
 * Python). The learned nets read these terms as inputs, and the teacher's beam search and the nets'
 * training spend most of their time on them. Optional: where it does not build, heuristic.py runs
 * in Python.
 *
 * A board is its key (engine's Board.key(): the owner's `me` then `opp`, 26 counts each, then its
 * 26 pins where the game pins), seen by its owner; `mine` and `theirs` are the two sides' views of
 * one board. beam_blocking walks a beam ranked by these values (engine/beam.py's, for an escalated
 * gul-bara double), its moves made by board_rules._fastgen's step.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "../board_rules/_step_api.h"

#define PARTS 5 /* heuristic.SIDE_PARTS */
#define TERMS (3 + 2 * PARTS)
#define NROLLS 21

typedef struct {
    const uint8_t *me, *opp, *pins; /* pins NULL where the game does not pin */
} View;

typedef struct {
    int hits, pins, blocks, same;
} Rules;

static double MADE[25];
static int ROLL_D1[NROLLS], ROLL_D2[NROLLS];

/* heuristic._hitting_rolls, per distance 0..24 */
typedef struct {
    int ndirect, direct[NROLLS];
    int nboth, both[NROLLS][3]; /* roll, d1, d2 */
    int nsteps, steps[NROLLS][5]; /* roll, stop count, stops */
} Hitting;
static Hitting BY_DISTANCE[25];

static void tables(void) {
    for (int x = 1; x <= 24; x++) MADE[x] = 2.0 + (x <= 6 ? 1.5 : 0.0) + (x == 7 ? 1.0 : 0.0);
    int i = 0;
    for (int d1 = 1; d1 <= 6; d1++)
        for (int d2 = d1; d2 <= 6; d2++) {
            ROLL_D1[i] = d1;
            ROLL_D2[i] = d2;
            i++;
        }
    for (int dist = 0; dist <= 24; dist++) {
        Hitting *h = &BY_DISTANCE[dist];
        memset(h, 0, sizeof(*h));
        for (int r = 0; r < NROLLS; r++) {
            int d1 = ROLL_D1[r], d2 = ROLL_D2[r];
            if (d1 == dist || d2 == dist) {
                h->direct[h->ndirect++] = r;
            } else if (d1 != d2) {
                if (d1 + d2 == dist) {
                    h->both[h->nboth][0] = r;
                    h->both[h->nboth][1] = d1;
                    h->both[h->nboth][2] = d2;
                    h->nboth++;
                }
            } else if (dist % d1 == 0 && dist / d1 <= 4) {
                int *s = h->steps[h->nsteps++];
                s[0] = r;
                s[1] = 0;
                for (int k = d1; k < dist; k += d1) s[2 + s[1]++] = k;
            }
        }
    }
}

/* heuristic._closed: per point 1..24 (0 unused, false), whether it is closed to the owner's checkers */
static void closed_to(const View *v, const Rules *r, int *closed) {
    closed[0] = 0;
    int least = r->blocks ? 1 : 2;
    for (int x = 1; x <= 24; x++) closed[x] = v->pins ? (v->opp[x] >= 2 || v->pins[x] == 1) : v->opp[x] >= least;
}

static long pips(const View *v) {
    long total = 25L * v->me[25];
    for (int i = 1; i <= 24; i++) total += (long)i * v->me[i];
    if (v->pins)
        for (int i = 1; i <= 24; i++)
            if (v->pins[i] == 1) total += i;
    return total;
}

static int prime(const View *v, const Rules *r) {
    int least = r->blocks ? 1 : 2, best = 0, run = 0;
    for (int x = 1; x <= 24; x++) {
        if (v->me[x] >= least) {
            if (++run > best) best = run;
        } else {
            run = 0;
        }
    }
    return best;
}

/* heuristic._side_terms; parts gets SIDE_PARTS's five terms */
static double side_terms(const View *view, const View *other, const int *closed_other, const Rules *r,
                         double *parts) {
    const uint8_t *me = view->me;
    double s = 0.0;
    s += 3.0 * me[0];
    double made, pr, shape;
    if (r->hits || r->pins) {
        made = 0.0;
        for (int x = 1; x <= 24; x++)
            if (me[x] >= 2) made += MADE[x];
        pr = 1.5 * pow((double)prime(view, r), 1.5);
        int anchors = 0;
        for (int x = 19; x <= 24; x++)
            if (me[x] >= 2) anchors++;
        shape = 2.0 * anchors; /* sum(2.0 for ...): exact in doubles */
    } else {
        int held = 0;
        for (int x = 1; x <= 24; x++)
            if (me[x] >= 1) held++;
        made = 1.2 * held;
        pr = 1.0 * pow((double)prime(view, r), 1.5);
        shape = 0.0;
        for (int x = 1; x <= 23; x++)
            if (me[x] > 3) shape -= 0.6 * (me[x] - 3);
    }
    s += made;
    s += pr;
    s += shape;
    double pinned = 0.0;
    if (view->pins) {
        for (int x = 1; x <= 24; x++) {
            if (view->pins[x] == 2) pinned += 10.0 + (x == 1 ? 40.0 : 0.0) + (x <= 6 ? 4.0 : 0.0);
            if (view->pins[x] == 1) pinned -= 10.0;
        }
        s += pinned;
    }
    int before[26];
    before[0] = 0;
    for (int q = 1; q <= 25; q++) before[q] = before[q - 1] + closed_other[q - 1];
    long block = 0;
    for (int q = 1; q <= 25; q++) {
        int n = other->me[q];
        if (n) block += (long)n * (before[q] - before[q > 7 ? q - 6 : 1]);
    }
    s += 0.35 * block;
    parts[0] = made;
    parts[1] = pr;
    parts[2] = shape;
    parts[3] = pinned;
    parts[4] = 0.35 * block;
    return s;
}

static int back(const View *v) {
    if (v->me[25]) return 25;
    for (int x = 24; x >= 1; x--)
        if (v->me[x] || (v->pins && v->pins[x] == 1)) return x;
    return 0;
}

static int contact(const View *mine, const View *theirs, const Rules *r) {
    if (r->same) {
        for (int x = 7; x <= 24; x++)
            if (mine->me[x] || theirs->me[x]) return 1;
        return 0;
    }
    int tb = back(theirs);
    return back(mine) > (tb == 0 ? 25 : tb == 25 ? 0 : 25 - tb);
}

/* heuristic._shots */
static double shots(const View *mine, const View *theirs, const int *closed_theirs, const Rules *r) {
    int blots[24], nblots = 0;
    for (int p = 1; p <= 24; p++)
        if (mine->me[p] == 1 && !(mine->pins && mine->pins[p] == 2)) blots[nblots++] = p;
    if (!nblots) return 0.0;
    int open_[25];
    for (int x = 0; x <= 24; x++) open_[x] = !closed_theirs[x];
    int sources[25], nsources = 0;
    for (int q = 1; q <= 25; q++)
        if (theirs->me[q] > 0 && (q < 25 || r->hits)) sources[nsources++] = q;
    double worst[NROLLS];
    for (int i = 0; i < NROLLS; i++) worst[i] = 0.0;
    for (int b = 0; b < nblots; b++) {
        int p = blots[b];
        int t = r->same ? ((p + 11) % 24) + 1 : 25 - p;
        double loss = r->hits ? (double)(25 - p) : 10.0 + (25 - p) / 2.0;
        if (mine->pins && p == 24) loss += 60.0;
        for (int j = 0; j < nsources; j++) {
            int q = sources[j], dist = q - t;
            if (!(0 < dist && dist <= 24)) continue;
            const Hitting *h = &BY_DISTANCE[dist];
            for (int k = 0; k < h->ndirect; k++) {
                int i = h->direct[k];
                if (worst[i] < loss) worst[i] = loss;
            }
            for (int k = 0; k < h->nboth; k++) {
                int i = h->both[k][0];
                if (worst[i] < loss && (open_[q - h->both[k][1]] || open_[q - h->both[k][2]])) worst[i] = loss;
            }
            for (int k = 0; k < h->nsteps; k++) {
                const int *s = h->steps[k];
                int i = s[0];
                if (worst[i] < loss) {
                    int clear = 1;
                    for (int m = 0; m < s[1]; m++)
                        if (!open_[q - s[2 + m]]) {
                            clear = 0;
                            break;
                        }
                    if (clear) worst[i] = loss;
                }
            }
        }
    }
    double total = 0.0;
    for (int i = 0; i < NROLLS; i++) total += worst[i] * (ROLL_D1[i] == ROLL_D2[i] ? 1 : 2);
    return total / 36.0;
}

static int view_of(const Py_buffer *key, const char *name, View *v) {
    if (key->len != 52 && key->len != 78) {
        PyErr_Format(PyExc_ValueError, "%s: expected a board key of 52 or 78 bytes, got %zd", name, key->len);
        return -1;
    }
    const uint8_t *b = key->buf;
    for (Py_ssize_t i = 0; i < 52; i++)
        if (b[i] > 15) {
            PyErr_Format(PyExc_ValueError, "%s: count %d at index %zd is over 15", name, b[i], i);
            return -1;
        }
    v->me = b;
    v->opp = b + 26;
    v->pins = key->len == 78 ? b + 52 : NULL;
    return 0;
}

PyDoc_STRVAR(value_parts_doc,
             "value_parts(mine, theirs, hits, pins, blocks, same) -> (value, (13 terms))\n\n"
             "engine.heuristic.value_parts(..., parts=True) for two views' board keys (78 bytes with pins, else\n"
             "52) and the variant's hits, pins, blocks and same-direction geometry.");

/* heuristic.value_parts for one board's two views: the value, and its TERMS terms into terms. */
static double value_terms(const View *mine, const View *theirs, const Rules *r, double *terms) {
    for (int i = 0; i < TERMS; i++) terms[i] = 0.0;
    if (mine->me[0] == 15) return 1000.0;
    double race = (double)(pips(theirs) - pips(mine));
    int closed_mine[25], closed_theirs[25];
    closed_to(mine, r, closed_mine);
    closed_to(theirs, r, closed_theirs);
    double s = race + side_terms(mine, theirs, closed_theirs, r, terms + 3) -
               side_terms(theirs, mine, closed_mine, r, terms + 3 + PARTS);
    double bar = 0.0, shot = 0.0;
    if (r->hits) {
        bar = 8.0 * theirs->me[25] - 8.0 * mine->me[25];
        s += bar;
    }
    int touching = contact(mine, theirs, r);
    if (touching && (r->hits || r->pins)) {
        shot = shots(mine, theirs, closed_theirs, r);
        s -= 1.5 * shot;
    }
    terms[0] = race;
    terms[1] = bar;
    terms[2] = shot;
    if (!touching) {
        s = 2.0 * race + 4.0 * (mine->me[0] - theirs->me[0]);
        int outside = 0;
        for (int x = 7; x <= 24; x++) outside += mine->me[x];
        s -= 0.5 * outside;
    }
    return s;
}

static PyObject *value_parts(PyObject *self, PyObject *args) {
    Py_buffer a, b;
    Rules r;
    if (!PyArg_ParseTuple(args, "y*y*pppp:value_parts", &a, &b, &r.hits, &r.pins, &r.blocks, &r.same)) return NULL;
    PyObject *out = NULL;
    View mine, theirs;
    if (view_of(&a, "mine", &mine) < 0 || view_of(&b, "theirs", &theirs) < 0) goto done;
    double terms[TERMS];
    double s = value_terms(&mine, &theirs, &r, terms);
    PyObject *t = PyTuple_New(TERMS);
    if (!t) goto done;
    for (int i = 0; i < TERMS; i++) {
        PyObject *f = PyFloat_FromDouble(terms[i]);
        if (!f) {
            Py_DECREF(t);
            goto done;
        }
        PyTuple_SET_ITEM(t, i, f);
    }
    out = Py_BuildValue("(dN)", s, t);
done:
    PyBuffer_Release(&a);
    PyBuffer_Release(&b);
    return out;
}

/* Board.flipped: the same board seen by its other side (key: 52 bytes, or 78 with pins). */
static void flip_key(const uint8_t *k, int opp_off, int with_pins, int same, uint8_t *out) {
    memset(out, 0, with_pins ? 78 : 52);
    for (int i = 1; i <= 24; i++) {
        int f = same ? ((i + 11) % 24) + 1 : 25 - i;
        out[f] = k[26 + i];
        out[26 + f] = k[i];
        if (with_pins && k[52 + i]) out[52 + f] = (uint8_t)(3 - k[52 + i]);
    }
    out[0] = (uint8_t)opp_off;
    out[25] = k[26];
    out[26] = k[25];
}

PyDoc_STRVAR(board_terms_doc,
             "board_terms(keys, opp_offs, key_len, hits, pins, blocks, same) -> bytes\n\n"
             "For each of n boards (keys: n board keys of key_len bytes, 52 or 78, one after another; opp_offs:\n"
             "n bytes, the opponents' checkers off) seen by its owner: value_parts(board, board flipped) as\n"
             "2 + 13 doubles: the value, learned's contact (1.0 or 0.0), then the 13 terms; n * 15 doubles.");

#define BOARD_TERMS (2 + TERMS)

static PyObject *board_terms(PyObject *self, PyObject *args) {
    Py_buffer keys, offs;
    int key_len;
    Rules r;
    if (!PyArg_ParseTuple(args, "y*y*ipppp:board_terms", &keys, &offs, &key_len, &r.hits, &r.pins, &r.blocks,
                          &r.same))
        return NULL;
    PyObject *out = NULL;
    if (key_len != 52 && key_len != 78) {
        PyErr_Format(PyExc_ValueError, "key_len: %d is not 52 or 78", key_len);
        goto done;
    }
    if (keys.len != offs.len * key_len) {
        PyErr_Format(PyExc_ValueError, "keys: %zd bytes for %zd boards of %d", keys.len, offs.len, key_len);
        goto done;
    }
    const uint8_t *kb = keys.buf, *ob = offs.buf;
    for (Py_ssize_t i = 0; i < keys.len; i++)
        if (kb[i] > 15 || (key_len == 78 && i % 78 >= 52 && kb[i] > 2)) {
            PyErr_Format(PyExc_ValueError, "keys: byte %zd is %d, out of range", i, kb[i]);
            goto done;
        }
    for (Py_ssize_t i = 0; i < offs.len; i++)
        if (ob[i] > 15) {
            PyErr_Format(PyExc_ValueError, "opp_offs: board %zd has %d off", i, ob[i]);
            goto done;
        }
    out = PyBytes_FromStringAndSize(NULL, offs.len * BOARD_TERMS * (Py_ssize_t)sizeof(double));
    if (!out) goto done;
    double *row = (double *)PyBytes_AS_STRING(out);
    int with_pins = key_len == 78;
    uint8_t flipped[78];
    for (Py_ssize_t n = 0; n < offs.len; n++, row += BOARD_TERMS) {
        const uint8_t *k = kb + n * key_len;
        flip_key(k, ob[n], with_pins, r.same, flipped);
        View mine = {k, k + 26, with_pins ? k + 52 : NULL};
        View theirs = {flipped, flipped + 26, with_pins ? flipped + 52 : NULL};
        row[0] = value_terms(&mine, &theirs, &r, row + 2);
        row[1] = contact(&mine, &theirs, &r) ? 1.0 : 0.0;
    }
done:
    PyBuffer_Release(&keys);
    PyBuffer_Release(&offs);
    return out;
}

PyDoc_STRVAR(beam_blocking_doc,
             "beam_blocking(start, dice, width, head_start, head_limit, start_rule_limit, start_quarter, trapping,\n"
             "              mirror, opp_off, same) -> (keys, paths) or None\n\n"
             "engine.beam.beam_plays for one order of the dice (bytes, at most 64) in a blocking game without hits\n"
             "or pins, its boards ranked by their value (heuristic.key_values): from start (a 52-byte key), the\n"
             "boards one move of each die leads to (board_rules._fastgen.step_blocking, lent through its capsule),\n"
             "the width best kept after each die (1 to 255; ties in the order found). keys: the boards kept after\n"
             "the last die, best first, 52 bytes each; paths: two bytes a die for each, the source and the\n"
             "destination of its moves. None where a die has no move. The other arguments as step_blocking's;\n"
             "same: the sides move the same way round.");

static const StepApi *step_api = NULL;

static PyObject *beam_blocking(PyObject *self, PyObject *args) {
    Py_buffer start, dice, mirror;
    int width, head_start, head_limit, start_rule_limit, start_quarter, trapping, opp_off, same;
    if (!PyArg_ParseTuple(args, "y*y*iiiiiiy*ip:beam_blocking", &start, &dice, &width, &head_start, &head_limit,
                          &start_rule_limit, &start_quarter, &trapping, &mirror, &opp_off, &same))
        return NULL;
    PyObject *out = NULL;
    uint8_t *cur = NULL, *kids = NULL, *moves = NULL, *paths = NULL, *next = NULL;
    int *table = NULL, *top = NULL;
    double *score = NULL;
    const uint8_t *sb = start.buf, *dv = dice.buf, *f = mirror.buf;
    Py_ssize_t nd = dice.len;
    if (start.len != 52) {
        PyErr_Format(PyExc_ValueError, "start: expected a board key of 52 bytes, got %zd", start.len);
        goto done;
    }
    for (int i = 0; i < 52; i++)
        if (sb[i] > 15) {
            PyErr_Format(PyExc_ValueError, "start: count %d at index %d is over 15", sb[i], i);
            goto done;
        }
    if (nd < 1 || nd > 64) {
        PyErr_Format(PyExc_ValueError, "dice: expected 1 to 64 dice, got %zd", nd);
        goto done;
    }
    for (Py_ssize_t i = 0; i < nd; i++)
        if (dv[i] < 1 || dv[i] > 6) {
            PyErr_Format(PyExc_ValueError, "dice: %d is not 1 to 6", dv[i]);
            goto done;
        }
    if (width < 1 || width > 255) {
        PyErr_Format(PyExc_ValueError, "width: %d is not 1 to 255", width);
        goto done;
    }
    if (step_check(dv[0], f, mirror.len, start_rule_limit, opp_off) < 0) goto done;
    if (!step_api) {
        step_api = PyCapsule_Import("board_rules._fastgen._step_blocking", 0);
        if (!step_api) goto done;
        if (step_api->version != 1) {
            step_api = NULL;
            PyErr_SetString(PyExc_ImportError, "board_rules._fastgen._step_blocking: not version 1");
            goto done;
        }
    }
    size_t cap = step_api->table(width), most = (size_t)width * 25;
    cur = malloc((size_t)width * 52);
    kids = malloc(most * 52);
    moves = malloc(most * 3);
    table = malloc(cap * sizeof(int));
    score = malloc(most * sizeof(double));
    top = malloc((size_t)width * sizeof(int));
    paths = malloc((size_t)width * nd * 2);
    next = malloc((size_t)width * nd * 2);
    if (!cur || !kids || !moves || !table || !score || !top || !paths || !next) {
        PyErr_NoMemory();
        goto done;
    }
    Rules r = {0, 0, 1, same};
    memcpy(cur, sb, 52);
    Py_ssize_t n = 1;
    uint8_t flipped[52];
    double terms[TERMS];
    for (Py_ssize_t k = 0; k < nd; k++) {
        Py_ssize_t found = step_api->step(cur, n, dv[k], head_start, head_limit, start_rule_limit, start_quarter,
                                          trapping, f, opp_off, kids, moves, table, cap);
        if (!found) {
            Py_INCREF(Py_None);
            out = Py_None;
            goto done;
        }
        /* the best first, a tie after the boards found before it (Python's stable sort, reversed) */
        int kept = 0;
        for (Py_ssize_t j = 0; j < found; j++) {
            const uint8_t *key = kids + j * 52;
            flip_key(key, opp_off, 0, same, flipped);
            View mine = {key, key + 26, NULL}, theirs = {flipped, flipped + 26, NULL};
            score[j] = value_terms(&mine, &theirs, &r, terms);
            if (kept == width && score[j] <= score[top[kept - 1]]) continue;
            int at = kept < width ? kept++ : kept - 1;
            while (at > 0 && score[top[at - 1]] < score[j]) {
                top[at] = top[at - 1];
                at--;
            }
            top[at] = (int)j;
        }
        for (int i = 0; i < kept; i++) {
            const uint8_t *m = moves + (size_t)top[i] * 3;
            memcpy(next + (size_t)i * nd * 2, paths + (size_t)m[0] * nd * 2, (size_t)k * 2);
            next[(size_t)i * nd * 2 + k * 2] = m[1];
            next[(size_t)i * nd * 2 + k * 2 + 1] = m[2];
        }
        uint8_t *swap = paths;
        paths = next;
        next = swap;
        for (int i = 0; i < kept; i++) memcpy(cur + (size_t)i * 52, kids + (size_t)top[i] * 52, 52);
        n = kept;
    }
    out = Py_BuildValue("(y#y#)", (const char *)cur, n * 52, (const char *)paths, n * nd * 2);
done:
    free(cur);
    free(kids);
    free(moves);
    free(table);
    free(score);
    free(top);
    free(paths);
    free(next);
    PyBuffer_Release(&start);
    PyBuffer_Release(&dice);
    PyBuffer_Release(&mirror);
    return out;
}

static PyMethodDef methods[] = {
    {"value_parts", value_parts, METH_VARARGS, value_parts_doc},
    {"board_terms", board_terms, METH_VARARGS, board_terms_doc},
    {"beam_blocking", beam_blocking, METH_VARARGS, beam_blocking_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "engine._heuristic", "Compiled terms of the teacher's heuristic (see heuristic.py).", -1,
    methods,
};

PyMODINIT_FUNC PyInit__heuristic(void) {
    tables();
    return PyModule_Create(&module);
}
