/* The compiled twin of board_rules/fastgen.py: legal plays of the hitting games, the walks
 * of the blocking games (board_rules/reach.py's Walker), and checkerwise.py's proof that no
 * play of a blocking game reaches a board.
 *
 * Same board (52 counts: the mover's `me` then `opp`, docs/rules-notes.md), same search
 * in the same order, so the same first path per distinct final board and the same
 * order of results; tests/test_fastgen.py holds it to the Python module. Optional:
 * where it does not build, fastgen.py, reach.py and checkerwise.py run in Python.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "_step_api.h"

#if defined(__unix__) || defined(__APPLE__)
#include <sys/mman.h>
#endif
#define HUGE_PAGE ((size_t)2 << 20)

#if defined(__GNUC__) || defined(__clang__)
#define PREFETCH(p) __builtin_prefetch(p)
#else
#define PREFETCH(p) ((void)0)
#endif

#if defined(__GNUC__) || defined(__clang__)
#define CLZ64(x) __builtin_clzll(x)
#else
static int CLZ64(uint64_t x) {
    int n = 0;
    while (!(x & (1ULL << 63))) {
        x <<= 1;
        n++;
    }
    return n;
}
#endif

#define NB 52     /* board bytes: me[0..25], opp[0..25] */
#define OPP 26    /* opp[i] is b[OPP + i]; opp[0] is the opponent's bar */
#define BAR 25
#define ALL_OFF 15

typedef struct {
    uint8_t key[NB];
    uint8_t n;      /* checker moves */
    uint8_t first;  /* the first die played (0: none) */
    uint8_t mv[4][3];
} Result;

typedef struct {
    uint8_t b[NB];
    Result *res;
    Py_ssize_t n, cap;
    int32_t *slots; /* open addressing over res: index + 1, 0 empty */
    size_t mask;
    int best;
    int nomem;
    int d; /* the die of a double */
    uint8_t path[4][3];
} Gen;

static PyObject *MOVES[26][26][2]; /* the (src, dst, hit) tuples, made once */

/* A board key's hash, eight bytes at a time (a multiply and a shift a word, not one a byte). */
_Static_assert(NB == 48 + 4, "hash_key reads six words and four bytes");
static uint64_t hash_key(const uint8_t *k) {
    uint64_t h = 0, w;
    for (int i = 0; i < 48; i += 8) {
        memcpy(&w, k + i, 8);
        h = (h ^ w) * 0x9E3779B97F4A7C15ULL;
        h ^= h >> 32;
    }
    uint32_t t;
    memcpy(&t, k + 48, 4);
    h = (h ^ t) * 0xC2B2AE3D27D4EB4FULL;
    return h ^ (h >> 29);
}

/* A growable array with room for one more item past its `n` of `size` bytes: `items` as it is, or
 * moved to twice its *cap (`first` items at first), *cap updated. NULL out of memory, `items` kept. */
static void *room(void *items, Py_ssize_t n, Py_ssize_t *cap, size_t size, Py_ssize_t first) {
    if (n < *cap) return items;
    Py_ssize_t more = *cap ? 2 * *cap : first;
    void *grown = realloc(items, (size_t)more * size);
    if (grown) *cap = more;
    return grown;
}

static void clear(Gen *g) {
    g->n = 0;
    memset(g->slots, 0, (g->mask + 1) * sizeof(int32_t));
}

static int grow(Gen *g) {
    Py_ssize_t cap = g->cap * 2;
    Result *res = realloc(g->res, (size_t)cap * sizeof(Result));
    if (!res) return -1;
    g->res = res;
    g->cap = cap;
    size_t mask = g->mask * 2 + 1;
    int32_t *slots = calloc(mask + 1, sizeof(int32_t));
    if (!slots) return -1;
    for (Py_ssize_t i = 0; i < g->n; i++) {
        size_t j = hash_key(g->res[i].key) & mask;
        while (slots[j]) j = (j + 1) & mask;
        slots[j] = (int32_t)(i + 1);
    }
    free(g->slots);
    g->slots = slots;
    g->mask = mask;
    return 0;
}

/* Record the board as it is now, reached by `n` moves of `mv`, unless already found. */
static void add(Gen *g, int n, const uint8_t (*mv)[3], int first) {
    if (g->nomem) return;
    size_t j = hash_key(g->b) & g->mask;
    int32_t at;
    while ((at = g->slots[j]) != 0) {
        if (memcmp(g->res[at - 1].key, g->b, NB) == 0) return;
        j = (j + 1) & g->mask;
    }
    Result *r = &g->res[g->n];
    memcpy(r->key, g->b, NB);
    r->n = (uint8_t)n;
    r->first = (uint8_t)first;
    if (n) memcpy(r->mv, mv, (size_t)n * 3);
    g->slots[j] = (int32_t)(++g->n);
    if (g->n * 2 > (Py_ssize_t)g->mask || g->n == g->cap) {
        if (grow(g)) g->nomem = 1;
    }
}

static inline int any_below_six_above(const uint8_t *b, int s) {
    for (int p = s + 1; p <= 6; p++)
        if (b[p]) return 1;
    return 0;
}

/* Where a checker on `src` goes with `die`: its target (0: off), *hit set; -1 when it cannot. */
static inline int target(const uint8_t *b, int src, int die, int out, int *hit) {
    int dst = src - die;
    *hit = 0;
    if (dst <= 0) {
        if (out) return -2; /* every lower source bears off too */
        if (dst < 0 && any_below_six_above(b, src)) return -1;
        return 0;
    }
    int o = b[OPP + dst];
    if (o > 1) return -1;
    *hit = o == 1;
    return dst;
}

static inline void make(uint8_t *b, int src, int dst, int hit) {
    b[src]--;
    b[dst]++;
    if (hit) {
        b[OPP + dst] = 0;
        b[OPP]++;
    }
}

static inline void unmake(uint8_t *b, int src, int dst, int hit) {
    b[src]++;
    b[dst]--;
    if (hit) {
        b[OPP + dst] = 1;
        b[OPP]--;
    }
}

static inline void set_move(uint8_t *m, int src, int dst, int hit) {
    m[0] = (uint8_t)src;
    m[1] = (uint8_t)dst;
    m[2] = (uint8_t)hit;
}

static void two_dice(Gen *g, int d1, int d2) {
    uint8_t *b = g->b;
    int bar = b[BAR];
    int out = bar;
    for (int p = 7; p <= 24; p++) out += b[p];
    int hi = bar ? BAR : 24, lo = bar ? BAR : 1;
    const int order[2][2] = {{d1, d2}, {d2, d1}};
    uint8_t mv[2][3];
    for (int o = 0; o < 2; o++) {
        int da = order[o][0], db = order[o][1];
        /* once both dice were played in one order, two different checkers give boards found already */
        int skip = g->best == 2 && !bar;
        int moved = 0;
        for (int s1 = hi; s1 >= lo; s1--) {
            if (!b[s1]) continue;
            int h1, t1 = target(b, s1, da, out, &h1);
            if (t1 == -2) break;
            if (t1 < 0) continue;
            moved = 1;
            make(b, s1, t1, h1);
            int out1 = (s1 > 6 && t1 < 7) ? out - 1 : out;
            set_move(mv[0], s1, t1, h1);
            if (!t1 && b[0] == ALL_OFF) { /* the last checker is off: the play is complete */
                if (g->best < 2) {
                    g->best = 2;
                    clear(g);
                }
                add(g, 1, mv, da);
                unmake(b, s1, t1, 0);
                continue;
            }
            int hi2, lo2;
            if (skip && t1 && out1)
                hi2 = lo2 = t1; /* only the same checker onwards can give a new board */
            else if (b[BAR])
                hi2 = lo2 = BAR;
            else {
                hi2 = 24;
                lo2 = 1;
            }
            int moved2 = 0;
            for (int s2 = hi2; s2 >= lo2; s2--) {
                if (!b[s2]) continue;
                int h2, t2 = s2 - db;
                if (t2 > 0 && skip && t1 && s2 != t1) continue; /* two checkers, found in the first order */
                t2 = target(b, s2, db, out1, &h2);
                if (t2 == -2) break;
                if (t2 < 0) continue;
                moved2 = 1;
                make(b, s2, t2, h2);
                if (g->best < 2) {
                    g->best = 2;
                    clear(g);
                }
                set_move(mv[1], s2, t2, h2);
                add(g, 2, mv, da);
                unmake(b, s2, t2, h2);
            }
            if (!moved2 && g->best <= 1) {
                if (g->best < 1) {
                    g->best = 1;
                    clear(g);
                }
                add(g, 1, mv, da);
            }
            unmake(b, s1, t1, h1);
        }
        if (!moved && g->best <= 0) {
            g->best = 0;
            add(g, 0, mv, 0);
        }
    }
    /* dice that can be played only one at a time: the larger must be played if it can */
    if (g->best == 1) {
        int high = d1 > d2 ? d1 : d2, any = 0;
        for (Py_ssize_t i = 0; i < g->n; i++) any |= g->res[i].first == high;
        if (any) {
            Py_ssize_t k = 0;
            for (Py_ssize_t i = 0; i < g->n; i++)
                if (g->res[i].first == high) g->res[k++] = g->res[i];
            g->n = k; /* the hash slots are stale from here; nothing is added after */
        }
    }
}

static void record(Gen *g, int depth, int rank) {
    if (rank > g->best) {
        g->best = rank;
        clear(g);
    }
    add(g, depth, (const uint8_t (*)[3])g->path, depth ? g->d : 0);
}

/* Checker move `depth` (0..3) of a double, sources in non-increasing order: every play has
 * such an order, the one in which bearing off is least restricted, so one path per result. */
static void rec(Gen *g, int depth, int limit, int out) {
    uint8_t *b = g->b;
    int moved = 0;
    int hi = b[BAR] ? BAR : (limit > 24 ? 24 : limit), lo = b[BAR] ? BAR : 1;
    for (int src = hi; src >= lo; src--) {
        if (!b[src]) continue;
        int hit, dst = target(b, src, g->d, out, &hit);
        if (dst == -2) break;
        if (dst < 0) continue;
        moved = 1;
        make(b, src, dst, hit);
        set_move(g->path[depth], src, dst, hit);
        int out2 = (src > 6 && dst < 7) ? out - 1 : out;
        if (depth == 3 || (!dst && b[0] == ALL_OFF))
            record(g, depth + 1, 4); /* the fourth, or the last checker off: the play is complete */
        else
            rec(g, depth + 1, src, out2);
        unmake(b, src, dst, hit);
    }
    if (!moved && depth >= g->best) record(g, depth, depth);
}

/* Whether a board's `len` bytes are its NB counts, each 0 to ALL_OFF: 0, or -1 with a ValueError
 * naming the argument `name`. */
static int check_board(const uint8_t *b, Py_ssize_t len, const char *name) {
    if (len != NB) {
        PyErr_Format(PyExc_ValueError, "%s: expected %d counts, got %zd", name, NB, len);
        return -1;
    }
    for (int i = 0; i < NB; i++) {
        if (b[i] > ALL_OFF) {
            PyErr_Format(PyExc_ValueError, "%s: count %d at index %d is over %d", name, b[i], i, ALL_OFF);
            return -1;
        }
    }
    return 0;
}

/* A target of the sharing searches: the mover's 26 counts, none over ALL_OFF. 0, or -1 with the error set. */
static int check_target(const Py_buffer *target) {
    const uint8_t *t = target->buf;
    if (target->len != 26) {
        PyErr_Format(PyExc_ValueError, "target: expected 26 counts, got %zd", target->len);
        return -1;
    }
    for (int i = 0; i < 26; i++)
        if (t[i] > ALL_OFF) {
            PyErr_Format(PyExc_ValueError, "target: count %d at index %d is over %d", t[i], i, ALL_OFF);
            return -1;
        }
    return 0;
}

/* Dice of 1 to 6, at most `most` of them: 0, or -1 with ValueError naming the field. */
static int check_dice(const Py_buffer *dice, Py_ssize_t most) {
    const uint8_t *dv = dice->buf;
    for (Py_ssize_t i = 0; i < dice->len; i++)
        if (dv[i] < 1 || dv[i] > 6) {
            PyErr_Format(PyExc_ValueError, "dice: %d is not 1 to 6", dv[i]);
            return -1;
        }
    if (dice->len > most) {
        PyErr_Format(PyExc_ValueError, "dice: %zd of them, more than %zd", dice->len, most);
        return -1;
    }
    return 0;
}

/* Run the search into g from the board already in g->b (its counts checked by the caller); 0 on
 * success, -1 with an exception set. */
static int run_counts(Gen *g, int d1, int d2) {
    if (d1 < 1 || d1 > 6 || d2 < 1 || d2 > 6) {
        PyErr_Format(PyExc_ValueError, "dice: %d and %d are not both 1 to 6", d1, d2);
        return -1;
    }
    g->cap = 64;
    g->mask = 127;
    g->n = 0;
    g->best = -1;
    g->nomem = 0;
    g->d = d1;
    g->res = malloc((size_t)g->cap * sizeof(Result));
    g->slots = calloc(g->mask + 1, sizeof(int32_t));
    if (!g->res || !g->slots) {
        free(g->res);
        free(g->slots);
        PyErr_NoMemory();
        return -1;
    }
    if (d1 == d2) {
        int out = g->b[BAR];
        for (int p = 7; p <= 24; p++) out += g->b[p];
        rec(g, 0, BAR, out);
    } else {
        two_dice(g, d1, d2);
    }
    if (g->nomem) {
        free(g->res);
        free(g->slots);
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

/* Parse (board, d1, d2) and run the search into g; 0 on success, -1 with an exception set. */
static int run(Gen *g, PyObject *board, int d1, int d2) {
    Py_buffer view;
    if (PyObject_GetBuffer(board, &view, PyBUF_SIMPLE) < 0) return -1;
    if (check_board(view.buf, view.len, "board") < 0) {
        PyBuffer_Release(&view);
        return -1;
    }
    memcpy(g->b, view.buf, NB);
    PyBuffer_Release(&view);
    return run_counts(g, d1, d2);
}

/* The mover's counts in g->b from a position's 24 points (white's numbering, white positive):
 * own point i is white's point conv[i] (conv: 25 bytes, conv[0] unused), signed by `sign`. */
static int counts_of(Gen *g, PyObject *points, PyObject *conv, int sign, int me_bar, int me_off, int opp_bar) {
    if (!PyTuple_Check(points) || PyTuple_GET_SIZE(points) != 24) {
        PyErr_SetString(PyExc_ValueError, "points: expected a tuple of 24 counts");
        return -1;
    }
    if (!PyBytes_Check(conv) || PyBytes_GET_SIZE(conv) != 25) {
        PyErr_SetString(PyExc_ValueError, "conv: expected 25 bytes");
        return -1;
    }
    const uint8_t *to_white = (const uint8_t *)PyBytes_AS_STRING(conv);
    memset(g->b, 0, NB);
    for (int own = 1; own <= 24; own++) {
        int w = to_white[own];
        if (w < 1 || w > 24) {
            PyErr_Format(PyExc_ValueError, "conv: point %d maps to %d, not 1 to 24", own, w);
            return -1;
        }
        long c = PyLong_AsLong(PyTuple_GET_ITEM(points, w - 1));
        if (c == -1 && PyErr_Occurred()) return -1;
        c *= sign;
        if (c > ALL_OFF || c < -ALL_OFF) {
            PyErr_Format(PyExc_ValueError, "points: count %ld at white's point %d is over %d", c, w, ALL_OFF);
            return -1;
        }
        if (c > 0)
            g->b[own] = (uint8_t)c;
        else
            g->b[OPP + own] = (uint8_t)-c;
    }
    int extra[3] = {me_bar, me_off, opp_bar};
    for (int k = 0; k < 3; k++) {
        if (extra[k] < 0 || extra[k] > ALL_OFF) {
            PyErr_Format(PyExc_ValueError, "bar and off: count %d is not 0 to %d", extra[k], ALL_OFF);
            return -1;
        }
    }
    g->b[BAR] = (uint8_t)me_bar;
    g->b[0] = (uint8_t)me_off;
    g->b[OPP] = (uint8_t)opp_bar;
    return 0;
}

static void done(Gen *g) {
    free(g->res);
    free(g->slots);
}

static PyObject *moves_tuple(const Result *r) {
    PyObject *t = PyTuple_New(r->n);
    if (!t) return NULL;
    for (int k = 0; k < r->n; k++) {
        PyObject *m = MOVES[r->mv[k][0]][r->mv[k][1]][r->mv[k][2]];
        Py_INCREF(m);
        PyTuple_SET_ITEM(t, k, m);
    }
    return t;
}

PyDoc_STRVAR(search_doc,
             "search(board, d1, d2) -> ({final board key: (checker moves, first die)}, most dice played)\n\n"
             "As fastgen.search: board is the 52 counts (me, then opp); d1 == d2 is a double.");

static PyObject *search(PyObject *self, PyObject *args) {
    PyObject *board;
    int d1, d2;
    if (!PyArg_ParseTuple(args, "Oii:search", &board, &d1, &d2)) return NULL;
    Gen g;
    if (run(&g, board, d1, d2) < 0) return NULL;
    PyObject *found = PyDict_New();
    if (!found) goto fail;
    for (Py_ssize_t i = 0; i < g.n; i++) {
        const Result *r = &g.res[i];
        PyObject *key = PyBytes_FromStringAndSize((const char *)r->key, NB);
        if (!key) goto fail_found;
        PyObject *mv = moves_tuple(r);
        PyObject *val = mv ? Py_BuildValue("(Ni)", mv, r->first) : NULL; /* N: mv is the tuple's now */
        if (!val) {
            Py_DECREF(key);
            goto fail_found;
        }
        int err = PyDict_SetItem(found, key, val);
        Py_DECREF(key);
        Py_DECREF(val);
        if (err < 0) goto fail_found;
    }
    done(&g);
    return Py_BuildValue("(Ni)", found, g.best);
fail_found:
    Py_DECREF(found);
fail:
    done(&g);
    return NULL;
}

/* The ints 0..ALL_OFF, a point's counts (check_board holds them to that): taken from here, not
 * made (or looked up) per count. */
static PyObject *COUNTS[ALL_OFF + 1];

static PyObject *count_list(const uint8_t *c) {
    PyObject *l = PyList_New(26);
    if (!l) return NULL;
    for (int i = 0; i < 26; i++) {
        Py_INCREF(COUNTS[c[i]]);
        PyList_SET_ITEM(l, i, COUNTS[c[i]]);
    }
    PyObject_GC_UnTrack(l); /* ints only: it can be in no cycle, so the collector need not walk it */
    return l;
}

/* Where a slots class keeps the field `name`: its member's offset, or -1 when it has none. */
static Py_ssize_t slot_offset(PyObject *type, const char *name) {
    PyObject *d = PyObject_GetAttrString(type, name);
    if (!d) {
        PyErr_Clear();
        return -1;
    }
    Py_ssize_t off = -1;
    if (Py_IS_TYPE(d, &PyMemberDescr_Type)) {
        PyMemberDef *m = ((PyMemberDescrObject *)d)->d_member;
        if (m->type == T_OBJECT_EX) off = m->offset;
    }
    Py_DECREF(d);
    return off;
}

/* Board(me, opp, None, opp_off) made without running its __init__ (the dataclass's, which only
 * stores the four fields): the slots are filled directly. Learnt once per class; a class with
 * other fields, or a __post_init__, is called instead. */
static PyTypeObject *slots_type;
static Py_ssize_t slots_at[4];

static int learn_slots(PyObject *type) {
    static const char *names[4] = {"me", "opp", "pins", "opp_off"};
    if (!PyType_Check(type) || PyObject_HasAttrString(type, "__post_init__")) return 0;
    if (((PyTypeObject *)type)->tp_basicsize != (Py_ssize_t)sizeof(PyObject) + 4 * (Py_ssize_t)sizeof(PyObject *))
        return 0;
    for (int i = 0; i < 4; i++)
        if ((slots_at[i] = slot_offset(type, names[i])) < 0) return 0;
    Py_INCREF(type);
    Py_XDECREF(slots_type);
    slots_type = (PyTypeObject *)type;
    return 1;
}

static PyObject *make_board(PyObject *type, PyObject *me, PyObject *opp, PyObject *opp_off) {
    if ((PyObject *)slots_type != type && !learn_slots(type)) {
        PyObject *argv[4] = {me, opp, Py_None, opp_off};
        return PyObject_Vectorcall(type, argv, 4, NULL);
    }
    PyObject *obj = slots_type->tp_alloc(slots_type, 0);
    if (!obj) return NULL;
    PyObject *field[4] = {me, opp, Py_None, opp_off};
    for (int i = 0; i < 4; i++) {
        Py_INCREF(field[i]);
        *(PyObject **)((char *)obj + slots_at[i]) = field[i];
    }
    return obj;
}

PyDoc_STRVAR(results_doc,
             "results(board, d1, d2, board_type, opp_off, side) -> [((checker moves,), final board, side)]\n\n"
             "What movegen.legal_results returns for a hitting game: each final board made as\n"
             "board_type(me, opp, None, opp_off), in the order search() finds them.");

/* The results of a search run into g, as results() returns them; frees g. */
static PyObject *build_results(Gen *g, PyObject *board_type, PyObject *opp_off, PyObject *side) {
    PyObject *out = PyList_New(g->n);
    if (!out) goto fail;
    for (Py_ssize_t i = 0; i < g->n; i++) {
        const Result *r = &g->res[i];
        PyObject *mv = moves_tuple(r);
        PyObject *me = count_list(r->key), *opp = count_list(r->key + OPP);
        PyObject *final = NULL, *legs = NULL, *item = NULL;
        if (mv && me && opp) final = make_board(board_type, me, opp, opp_off);
        Py_XDECREF(me);
        Py_XDECREF(opp);
        if (final && (legs = PyTuple_New(1)) && (item = PyTuple_New(3))) {
            PyTuple_SET_ITEM(legs, 0, mv); /* each takes the reference made for it */
            PyTuple_SET_ITEM(item, 0, legs);
            PyTuple_SET_ITEM(item, 1, final);
            Py_INCREF(side);
            PyTuple_SET_ITEM(item, 2, side);
            /* None of these tuples can be in a cycle (nothing they hold refers back to them): the
             * collector need not walk them, and a list of thousands of results need not slow it. */
            PyObject_GC_UnTrack(mv);
            PyObject_GC_UnTrack(legs);
            PyObject_GC_UnTrack(item);
        } else {
            Py_XDECREF(legs);
            Py_XDECREF(final);
            Py_XDECREF(mv);
            goto fail_out;
        }
        PyList_SET_ITEM(out, i, item);
    }
    done(g);
    return out;
fail_out:
    Py_DECREF(out);
fail:
    done(g);
    return NULL;
}

static PyObject *results(PyObject *self, PyObject *args) {
    PyObject *board, *board_type, *opp_off, *side;
    int d1, d2;
    if (!PyArg_ParseTuple(args, "OiiOOO:results", &board, &d1, &d2, &board_type, &opp_off, &side)) return NULL;
    Gen g;
    if (run(&g, board, d1, d2) < 0) return NULL;
    return build_results(&g, board_type, opp_off, side);
}

PyDoc_STRVAR(position_results_doc,
             "position_results(points, conv, sign, me_bar, me_off, opp_bar, d1, d2, board_type, opp_off, side)\n\n"
             "results() of the mover's board made from a position's 24 points (white's numbering, white\n"
             "positive) without a Board: own point i is white's point conv[i], counts times sign.");

/* An int argument of position_results, or -1 with an exception set naming it. */
static int int_arg(PyObject *arg, const char *name, int *out) {
    long v = PyLong_AsLong(arg);
    if (v == -1 && PyErr_Occurred()) {
        PyErr_Format(PyExc_TypeError, "%s: expected an int", name);
        return -1;
    }
    if (v < -1000 || v > 1000) {
        PyErr_Format(PyExc_ValueError, "%s: %ld is out of range", name, v);
        return -1;
    }
    *out = (int)v;
    return 0;
}

static PyObject *position_results(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    /* called once a position by legal_results: its arguments read directly, not through a format */
    static const char *names[6] = {"sign", "me_bar", "me_off", "opp_bar", "d1", "d2"};
    if (nargs != 11) {
        PyErr_Format(PyExc_TypeError, "position_results: expected 11 arguments, got %zd", nargs);
        return NULL;
    }
    int v[6];
    for (int k = 0; k < 6; k++)
        if (int_arg(args[2 + k], names[k], &v[k]) < 0) return NULL;
    if (v[0] != 1 && v[0] != -1) {
        PyErr_Format(PyExc_ValueError, "sign: %d is not 1 or -1", v[0]);
        return NULL;
    }
    Gen g;
    if (counts_of(&g, args[0], args[1], v[0], v[1], v[2], v[3]) < 0) return NULL;
    if (run_counts(&g, v[4], v[5]) < 0) return NULL;
    return build_results(&g, args[8], args[9], args[10]);
}

/* ------------------------------------------------------------------ most dice, blocking games */

/* Walker.max_depth for a game where a single opposing checker holds a point and nothing is hit
 * or pinned (fevga, gul-bara, long nardy): the opponent's checkers stand still all turn, so a
 * state is the depth and the mover's 26 counts. */
typedef struct {
    uint8_t me[26];
    const uint8_t *opp; /* 26 counts */
    const uint8_t *dice;
    int n, goal, best;
    int head_start, head_limit, start_rule_limit, start_quarter, trapping;
    const uint8_t *f; /* mover point <-> opponent point, 25 bytes */
    int opp_off;
    long long calls, budget; /* budget < 0: none; past it the walk stops, calls = budget + 1 */
    size_t used; /* entries of the seen table this walk */
    int nomem;
    uint64_t open[7][2]; /* [d]: bit 4i of word i / 16 for a source i whose checker d may land (or bear off) */
    const uint8_t (*lows)[25]; /* max_depth: per depth, reach.Walker._lows; NULL where it has none */
} Depth;

/* A state's key: two words, the mover's 26 counts (each 0 to 15) four bits apiece, then the depth
 * (byte 13) and the walk's tag (byte 15). The table outlives a walk (the GIL is held throughout):
 * an entry is in use when it carries this walk's tag, so a new walk clears nothing and faults in
 * no fresh pages. */
typedef struct DKey_ {
    uint64_t w[2];
} DKey;

static DKey *seen_keys;     /* open addressing over (depth, me) */
static size_t seen_mask;    /* capacity - 1 */
static uint8_t seen_tag;    /* this walk's tag, 1 to 255 */
#define SEEN_FIRST 16384    /* entries at first (256 kB) */
#define SEEN_KEPT (1 << 20) /* a table larger than this is freed after its walk */

static inline uint64_t hash2(uint64_t w0, uint64_t w1) {
    uint64_t h = w0 * 0x9E3779B97F4A7C15ULL;
    h ^= ((w1 & 0x0000FFFFFFFFFFFFULL) + (h >> 29)) * 0xC2B2AE3D27D4EB4FULL;
    return h ^ (h >> 32);
}

static uint64_t dhash(const DKey *k) { return hash2(k->w[0], k->w[1]); }

#define TAG(k) ((uint8_t)((k)->w[1] >> 56))

/* A table of n zeroed keys. Where the system lends them, in pages of 2 MB: a walk's lookups land
 * anywhere in the table, and with small pages most of them would also miss the address cache. */
static DKey *keys_alloc(size_t n) {
#if defined(MADV_HUGEPAGE) && defined(MAP_ANONYMOUS)
    size_t bytes = n * sizeof(DKey);
    if (bytes >= HUGE_PAGE) {
        void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) return NULL;
        madvise(p, bytes, MADV_HUGEPAGE); /* advice only: without it the table still works */
        return p;
    }
#endif
    return calloc(n, sizeof(DKey));
}

static void keys_free(DKey *keys, size_t n) {
#if defined(MADV_HUGEPAGE) && defined(MAP_ANONYMOUS)
    if (n * sizeof(DKey) >= HUGE_PAGE) {
        munmap(keys, n * sizeof(DKey));
        return;
    }
#endif
    free(keys);
}

/* A new walk's table: 0, or -1 out of memory. */
static int seen_start(void) {
    if (!seen_keys) {
        if (!(seen_keys = keys_alloc(SEEN_FIRST))) return -1;
        seen_mask = SEEN_FIRST - 1;
        seen_tag = 0;
    }
    if (++seen_tag == 0) { /* every tag used: clear once and start again */
        memset(seen_keys, 0, (seen_mask + 1) * sizeof(DKey));
        seen_tag = 1;
    }
    return 0;
}

static void seen_end(void) {
    if (seen_mask + 1 > SEEN_KEPT) {
        keys_free(seen_keys, seen_mask + 1);
        seen_keys = NULL;
    }
}

/* Bits 48..55 of a key's second word: a value kept with the state (the walk back's lowest point),
 * neither hashed nor compared. */
#define VAL_SHIFT 48
#define VAL_MASK (0xFFULL << VAL_SHIFT)

/* The 26 counts me, four bits apiece: a key without its depth and tag. */
static DKey pack(const uint8_t *me) {
    DKey k = {{0, 0}};
    for (int i = 0; i < 16; i++) k.w[0] |= (uint64_t)me[i] << (4 * i);
    for (int i = 16; i < 26; i++) k.w[1] |= (uint64_t)me[i] << (4 * (i - 16));
    return k;
}

/* The packed counts k with `depth` and this walk's tag: the key of a state. */
static inline DKey at_depth(DKey k, int depth) {
    k.w[1] |= ((uint64_t)depth << 40) | ((uint64_t)seen_tag << 56);
    return k;
}

/* The entry of the state k (at_depth's) in the seen table, made if new: 1 if made now, 0 if it was
 * there, -1 out of memory; *at is the entry. `used` counts the walk's entries. */
static int seen_insert(uint64_t w0, uint64_t w1, size_t *used, DKey **at) {
    if ((*used + 1) * 2 > seen_mask + 1) { /* grow at half full */
        size_t cap = (seen_mask + 1) * 2;
        DKey *keys = keys_alloc(cap);
        if (!keys) return -1;
        for (size_t i = 0; i <= seen_mask; i++) {
            const DKey *e = &seen_keys[i];
            if (TAG(e) != seen_tag) continue;
            size_t j = dhash(e) & (cap - 1);
            while (TAG(&keys[j]) == seen_tag) j = (j + 1) & (cap - 1);
            keys[j] = *e;
        }
        keys_free(seen_keys, seen_mask + 1);
        seen_keys = keys;
        seen_mask = cap - 1;
    }
    size_t j = hash2(w0, w1) & seen_mask;
    for (;;) {
        DKey *e = &seen_keys[j];
        if (TAG(e) != seen_tag) {
            e->w[0] = w0;
            e->w[1] = w1;
            ++*used;
            *at = e;
            return 1;
        }
        if (e->w[0] == w0 && ((e->w[1] ^ w1) & ~VAL_MASK) == 0) {
            *at = e;
            return 0;
        }
        j = (j + 1) & seen_mask;
    }
}

/* seen_insert for (depth, the 26 counts me). */
static int seen_entry(const uint8_t *me, int depth, size_t *used, DKey **at) {
    DKey k = at_depth(pack(me), depth);
    return seen_insert(k.w[0], k.w[1], used, at);
}

/* Adds (depth, me) to the seen set; 1 if it was new, 0 if seen, -1 out of memory. */
static int dseen_add(Depth *w, int depth) {
    DKey *e;
    return seen_entry(w->me, depth, &w->used, &e);
}

static int d_passed(const Depth *w) {
    if (w->me[0]) return 1;
    for (int i = 1; i <= w->start_rule_limit; i++)
        if (w->me[i]) return 1;
    return 0;
}

/* CheckerMoves._forbidden_prime: whether landing on dst made a prime the variant forbids. */
static int d_forbidden_prime(const Depth *w, int dst) {
    const uint8_t *me = w->me, *f = w->f;
    if (w->start_quarter && dst >= 19 && me[19] && me[20] && me[21] && me[22] && me[23] && me[24]) return 1;
    if (w->trapping) {
        int o = f[dst], lo = o, hi = o;
        while (lo > 1 && me[f[lo - 1]]) lo--;
        while (hi < 24 && me[f[hi + 1]]) hi++;
        if (hi - lo + 1 >= 6) {
            if (w->opp_off) return 0;
            for (int x = 1; x < lo; x++)
                if (w->opp[f[x]]) return 0;
            return 1;
        }
    }
    return 0;
}

/* CheckerMoves.try_move without hits or pins: the destination (0: borne off), or -1. Made in place.
 * `out`: the mover's checkers outside its home (bar included), or -1 to count them here. */
static inline int d_try_out(Depth *w, int src, int d, int out) {
    uint8_t *me = w->me;
    int dst = src - d;
    if (dst <= 0) {
        if (out < 0) {
            out = me[BAR];
            for (int i = 7; i <= 24; i++) out += me[i];
        }
        if (out) return -1;
        if (dst < 0)
            for (int i = src + 1; i <= 6; i++)
                if (me[i]) return -1;
        dst = 0;
    }
    if (dst && w->opp[dst]) return -1;
    if (src == 24 && dst) {
        if (w->start_rule_limit && me[24] < ALL_OFF && !d_passed(w)) return -1;
        if (w->head_limit >= 0 && w->head_start - me[24] >= w->head_limit) return -1;
    }
    me[src]--;
    me[dst]++;
    if (dst && (w->start_quarter || w->trapping) && d_forbidden_prime(w, dst)) {
        me[dst]--;
        me[src]++;
        return -1;
    }
    return dst;
}

static int d_try(Depth *w, int src, int d) { return d_try_out(w, src, d, -1); }

/* The mover's checkers outside its home (bar included) from its packed counts (me only): counts 7..25,
 * summed a byte of two counts at a time. */
static inline int outside(uint64_t w0, uint64_t w1) {
    uint64_t hi = w0 >> 32; /* counts 8..15 */
    uint64_t x = (hi & 0x0F0F0F0FULL) + ((hi >> 4) & 0x0F0F0F0FULL);
    uint64_t y = (w1 & 0x0F0F0F0F0FULL) + ((w1 >> 4) & 0x0F0F0F0F0FULL); /* counts 16..25 */
    return (int)(((w0 >> 28) & 0xF) + (((x * 0x01010101ULL) >> 24) & 0xFF) + (((y * 0x0101010101ULL) >> 32) & 0xFF));
}

/* reach._most_in_room: how many dice from `depth` on the mover's checkers have room for (all of them
 * unless one is shut in outside home, when none is borne off and each die moves a checker its number). */
static int d_most_in_room(const Depth *w, int depth) {
    const uint8_t *low = w->lows[depth];
    int room = 0, shut_in = 0;
    for (int p = 1; p <= 24; p++)
        if (w->me[p]) {
            if (low[p] > 6) shut_in = 1;
            room += w->me[p] * (p - low[p]);
        }
    if (!shut_in) return w->n - depth;
    int k = depth;
    while (k < w->n && w->dice[k] <= room) room -= w->dice[k++];
    return k - depth;
}

/* reach.Walker._lows into lows: per depth, the lowest point each point's checker reaches by the
 * numbers left over points the opponent does not hold. */
static void d_lows(const Depth *w, uint8_t (*lows)[25]) {
    int steps[7] = {0};
    for (int k = w->n - 1; k >= 0; k--) {
        int d = w->dice[k];
        if (k < w->n - 1 && steps[d]) {
            memcpy(lows[k], lows[k + 1], 25);
            continue;
        }
        steps[d] = 1;
        lows[k][0] = 0;
        for (int p = 1; p <= 24; p++) { /* a lower point's lowest is known first: moves only go down */
            int low = p;
            for (int e = 1; e <= 6; e++)
                if (steps[e] && p - e >= 1 && !w->opp[p - e] && lows[k][p - e] < low) low = lows[k][p - e];
            lows[k][p] = (uint8_t)low;
        }
    }
}

/* The walk from the board in w->me, whose packed counts are `here`, at `depth`. The checker moves
 * allowed are listed first and each one's entry in the seen table fetched ahead (the table is larger
 * than the caches: most of the walk's time is waiting for it), then walked in the same order. */
static int d_rec(Depth *w, uint64_t here0, uint64_t here1, int depth) {
    if (w->budget >= 0 && ++w->calls > w->budget) return 1;
    if (depth > w->best) w->best = depth;
    if (w->best >= w->goal) return 1;
    if (w->lows && depth + d_most_in_room(w, depth) <= w->best) return 0; /* shut in: no deeper from here */
    int d = w->dice[depth], m = 0;
    uint8_t *me = w->me;
    uint8_t from[25], to[25];
    uint64_t next0[25], next1[25];
    const uint64_t level = ((uint64_t)depth << 40) | ((uint64_t)seen_tag << 56);
    /* the occupied places, from the packed counts: bit 4i of a word for its count i not 0 */
    uint64_t occupied[2] = {here0, here1};
    for (int h = 0; h < 2; h++) {
        uint64_t x = occupied[h];
        occupied[h] = (x | x >> 1 | x >> 2 | x >> 3) & 0x1111111111111111ULL;
    }
    occupied[1] &= (1ULL << 40) - 1; /* counts 16..25 */
    occupied[0] &= ~1ULL;            /* not the checkers off */
    if (me[BAR]) {                   /* only the bar while it holds a checker */
        occupied[1] = 1ULL << 36;
        occupied[0] = 0;
    }
    int out = outside(here0, here1);
    for (int h = 1; h >= 0; h--) {
        for (uint64_t bits = occupied[h] & w->open[d][h]; bits;) {
            int top = 63 - CLZ64(bits);
            bits &= ~(1ULL << top);
            int src = 16 * h + top / 4;
            int dst = d_try_out(w, src, d, out);
            if (dst < 0) continue;
            me[dst]--;
            me[src]++;
            uint64_t k[2] = {here0, here1};
            k[src >> 4] -= 1ULL << (4 * (src & 15));
            k[dst >> 4] += 1ULL << (4 * (dst & 15));
            PREFETCH(&seen_keys[hash2(k[0], k[1] | level) & seen_mask]);
            from[m] = (uint8_t)src;
            to[m] = (uint8_t)dst;
            next0[m] = k[0];
            next1[m++] = k[1];
        }
    }
    for (int i = 0; i < m; i++) {
        int src = from[i], dst = to[i];
        me[src]--;
        me[dst]++;
        if (dst == 0 && me[0] == ALL_OFF) { /* the last checker off: the play is complete */
            me[0]--;
            me[src]++;
            w->best = w->n;
            return 1;
        }
        DKey *e;
        int done = 0, added = seen_insert(next0[i], next1[i] | level, &w->used, &e);
        if (added < 0) {
            w->nomem = 1;
            done = 1;
        } else if (added) {
            done = d_rec(w, next0[i], next1[i], depth + 1);
        }
        me[dst]--;
        me[src]++;
        if (done) return 1;
    }
    return 0;
}

PyDoc_STRVAR(max_depth_doc,
             "max_depth(board, dice, goal, head_start, head_limit, start_rule_limit, start_quarter, trapping,\n"
             "          mirror, opp_off, budget) -> (most dice played, boards visited)\n\n"
             "reach.Walker.max_depth for a blocking game without hits or pins: board is the 52 counts,\n"
             "dice the sequence (bytes), head_limit -1 for no head rule, mirror the 25-byte point map,\n"
             "budget -1 for none; past the budget the count is budget + 1 and the depth not to be used.");

/* Checks a walk's arguments and fills w from them: 0, or -1 with a ValueError naming the argument.
 * `most` is the most dice the walk takes. */
static int walk_setup(Depth *w, const Py_buffer *board, const Py_buffer *dice, const Py_buffer *mirror, int head_start,
                      int head_limit, int start_rule_limit, int start_quarter, int trapping, int opp_off,
                      long long budget, Py_ssize_t most) {
    const uint8_t *b = board->buf, *f = mirror->buf, *dv = dice->buf;
    memset(w, 0, sizeof *w);
    if (check_board(b, board->len, "board") < 0) return -1;
    if (check_mirror(f, mirror->len) < 0) return -1;
    if (check_dice(dice, most) < 0) return -1;
    if (start_rule_limit < 0 || start_rule_limit > 24) {
        PyErr_Format(PyExc_ValueError, "start_rule_limit: %d is not 0 to 24", start_rule_limit);
        return -1;
    }
    memcpy(w->me, b, 26);
    w->opp = b + OPP;
    w->dice = dv;
    w->n = (int)dice->len;
    w->goal = w->n;
    w->head_start = head_start;
    w->head_limit = head_limit;
    w->start_rule_limit = start_rule_limit;
    w->start_quarter = start_quarter;
    w->trapping = trapping;
    w->f = f;
    w->opp_off = opp_off;
    w->budget = budget;
    for (int d = 1; d <= 6; d++) /* a point the opponent holds is closed to every checker */
        for (int src = 1; src <= 25; src++)
            if (src - d <= 0 || !w->opp[src - d]) w->open[d][src >> 4] |= 1ULL << (4 * (src & 15));
    return 0;
}

static PyObject *max_depth(PyObject *self, PyObject *args) {
    Py_buffer board, dice, mirror;
    int goal, head_start, head_limit, start_rule_limit, start_quarter, trapping, opp_off;
    long long budget;
    if (!PyArg_ParseTuple(args, "y*y*iiiiiiy*iL:max_depth", &board, &dice, &goal, &head_start, &head_limit,
                          &start_rule_limit, &start_quarter, &trapping, &mirror, &opp_off, &budget))
        return NULL;
    PyObject *out = NULL;
    Depth w;
    if (walk_setup(&w, &board, &dice, &mirror, head_start, head_limit, start_rule_limit, start_quarter, trapping,
                   opp_off, budget, 255) < 0)
        goto done;
    w.goal = goal < w.n ? goal : w.n;
    uint8_t lows[255][25];
    if (w.n > 4 && !w.me[BAR]) {
        d_lows(&w, lows);
        w.lows = (const uint8_t(*)[25])lows;
    }
    if (seen_start() < 0) {
        PyErr_NoMemory();
        goto done;
    }
    DKey start = pack(w.me);
    d_rec(&w, start.w[0], start.w[1], 0);
    seen_end();
    if (w.nomem) {
        PyErr_NoMemory();
        goto done;
    }
    out = Py_BuildValue("(iL)", w.best, w.calls);
done:
    PyBuffer_Release(&board);
    PyBuffer_Release(&dice);
    PyBuffer_Release(&mirror);
    return out;
}

/* ------------------------------------------------------------------ a path to a board, blocking games */

/* reach.Walker's walks over checker moves for the same games as max_depth (the opponent's checkers
 * stand still): forwards (Walker._paths, in every order: the path to a target, the ends behind one,
 * or the first ends met) and back from a target (backward.backward_path). The same moves in the same
 * order, the same pruning, the same boards counted against the budget. */
#define MAX_WALK 64 /* dice of a path walk (an escalated gul-bara double has 24) */
#define END_DEPTH 255 /* the seen table's depth for the ends found (no walk has that many dice) */

typedef struct {
    uint8_t me[26];
    uint8_t len;
    uint8_t mv[MAX_WALK][2];
} End;

typedef struct {
    Depth w;               /* the mover's counts as walked, the dice, the rules, the budget */
    const uint8_t *target; /* the 52 counts to reach, or NULL */
    int exact;             /* the path ends on the target (else anywhere behind it) */
    int opp_same;          /* whether the target's opponent counts are the board's */
    long long limit, enough, visited; /* enough < 0: none */
    int tcum[27], toff;
    int crossing[27], down[27]; /* filled by f_hopeless for the node that called it */
    int total[MAX_WALK + 1], bigger[MAX_WALK + 1];
    int waste[MAX_WALK + 1][MAX_WALK + 2]; /* [depth][k]: most pips k checkers borne off waste with dice[depth:] */
    int wastes; /* 0 where the play may stop before its last dice: no lower bound on the pips */
    int stopped; /* past the budget */
    uint8_t path[MAX_WALK][2];
    End *ends; /* the ends found, in the order found */
    Py_ssize_t n_ends, cap_ends;
} Path;

/* A new path walk set up as walk_setup sets it (NULL with the Python error set). */
static Path *path_open(const Py_buffer *board, const Py_buffer *dice, const Py_buffer *mirror, int head_start,
                       int head_limit, int start_rule_limit, int start_quarter, int trapping, int opp_off,
                       long long budget) {
    Path *p = calloc(1, sizeof(Path));
    if (!p) {
        PyErr_NoMemory();
        return NULL;
    }
    if (walk_setup(&p->w, board, dice, mirror, head_start, head_limit, start_rule_limit, start_quarter, trapping,
                   opp_off, budget, MAX_WALK) < 0) {
        free(p);
        return NULL;
    }
    return p;
}

static int highest(const uint8_t *me) {
    for (int x = 25; x > 1; x--)
        if (me[x]) return x;
    return 1;
}

/* Walker._paths's hopeless (no hits or pins): whether the target cannot be reached from here. */
static int f_hopeless(Path *p, int depth) {
    const uint8_t *me = p->w.me;
    int n = p->w.n;
    if (me[0] > p->toff) return 1;
    int cum = 0, need = 0, most = 0, run = 0, longest = 0;
    for (int x = 25; x >= 1; x--) {
        cum += me[x];
        int c = cum - p->tcum[x];
        if (c < 0) return 1;
        p->crossing[x] = c;
        if (c) {
            need += c;
            if (c > most) most = c;
            if (++run > longest) longest = run;
        } else {
            run = 0;
        }
    }
    int below = 0;
    for (int x = 1; x <= 25; x++) {
        below = p->crossing[x] ? below + 1 : 0;
        p->down[x] = below;
    }
    if (!p->exact) return 0;
    if (most > n - depth) return 1; /* each checker move crosses a point at most once */
    int total = p->total[depth];
    if (need > total) return 1;
    if (me[0] == p->toff) { /* the pips are a sum of the next dice */
        int acc = 0, sum = need == 0;
        for (int k = depth; k < n && !sum && acc < need; k++) sum = (acc += p->w.dice[k]) == need;
        if (!sum) return 1;
    }
    if (p->wastes) {
        int off = p->toff - me[0];
        if (off > n - depth || need < total - p->waste[depth][off]) return 1;
    }
    int big = p->bigger[depth];
    if (big && longest < big && !(run && me[0] < p->toff)) return 1;
    return 0;
}

/* The board now ends a path of `len` checker moves: kept if it is one the walk wants and new. 1 when
 * the walk is over (enough ends, or out of memory). */
/* Keeps the board now, reached by the path's first `len` checker moves, as the walk's next end, unless
 * it is one already (as an end of kind `kind`: a seen table depth no walk reaches). 0, or -1 out of memory. */
static int end_add(Path *p, int len, int kind) {
    Depth *w = &p->w;
    DKey *e;
    int made = seen_entry(w->me, kind, &w->used, &e);
    if (made < 0) return -1;
    if (made) {
        End *ends = room(p->ends, p->n_ends, &p->cap_ends, sizeof(End), 16);
        if (!ends) return -1;
        p->ends = ends;
        End *r = &p->ends[p->n_ends++];
        memcpy(r->me, w->me, 26);
        r->len = (uint8_t)len;
        memcpy(r->mv, p->path, (size_t)len * 2);
    }
    return 0;
}

static int f_end(Path *p, int len) {
    if (p->target && p->exact && !(p->opp_same && memcmp(p->w.me, p->target, 26) == 0)) return 0;
    if (end_add(p, len, END_DEPTH) < 0) {
        p->w.nomem = 1;
        return 1;
    }
    return p->n_ends >= p->limit;
}

static int f_rec(Path *p, int depth) {
    Depth *w = &p->w;
    uint8_t *me = w->me;
    if (w->budget >= 0 && ++w->calls > w->budget) {
        p->stopped = 1;
        return 1;
    }
    if (p->enough >= 0 && ++p->visited > p->enough && p->n_ends) return 1; /* enough boards after the first end */
    if (p->target && f_hopeless(p, depth)) return 0;
    if (depth == w->n) return f_end(p, depth);
    int d = w->dice[depth];
    /* with a target, the sources that cross only points still to be crossed, first those landing
     * where a checker must stop */
    int order[25], first = 0, late = 0, hi = me[BAR] ? BAR : 24, lo = me[BAR] ? BAR : 1;
    int rest[25];
    for (int src = hi; src >= lo; src--) {
        if (!me[src]) continue;
        if (!p->target) {
            order[first++] = src;
            continue;
        }
        if (p->down[src] < (d < src ? d : src)) continue;
        if (src - d > 0 && p->crossing[src - d] < p->crossing[src - d + 1])
            order[first++] = src;
        else
            rest[late++] = src;
    }
    memcpy(order + first, rest, (size_t)late * sizeof(int));
    for (int k = 0; k < first + late; k++) {
        int src = order[k], dst = d_try(w, src, d);
        if (dst < 0) continue;
        p->path[depth][0] = (uint8_t)src;
        p->path[depth][1] = (uint8_t)dst;
        int done;
        if (dst == 0 && me[0] == ALL_OFF) { /* the game ends: the play is complete */
            done = f_end(p, depth + 1);
        } else {
            int added = dseen_add(w, depth);
            if (added < 0) {
                w->nomem = 1;
                done = 1;
            } else {
                done = added ? f_rec(p, depth + 1) : 0;
            }
        }
        me[dst]--;
        me[src]++;
        if (done) return 1;
    }
    return 0;
}

/* A path's checker moves as the walks' Python twins give them: ((src, dst, False), ...). */
static PyObject *path_tuple(const uint8_t (*path)[2], int len) {
    PyObject *t = PyTuple_New(len);
    if (!t) return NULL;
    for (int k = 0; k < len; k++) {
        PyObject *m = MOVES[path[k][0]][path[k][1]][0];
        Py_INCREF(m);
        PyTuple_SET_ITEM(t, k, m);
    }
    return t;
}

/* The ends found, as [(checker moves, end board key)], the key the ends' counts then the opponent's;
 * with first >= 0, as [(end board key, (checker moves, first))]: the first die played, 0 if none. */
static PyObject *ends_list(const Path *p, const uint8_t *opp, int first) {
    PyObject *out = PyList_New(p->n_ends);
    if (!out) return NULL;
    uint8_t key[NB];
    memcpy(key + OPP, opp, 26);
    for (Py_ssize_t i = 0; i < p->n_ends; i++) {
        const End *r = &p->ends[i];
        memcpy(key, r->me, 26);
        PyObject *moves = path_tuple((const uint8_t (*)[2])r->mv, r->len), *item;
        if (first < 0)
            item = Py_BuildValue("(Ny#)", moves, (const char *)key, (Py_ssize_t)NB);
        else
            item = Py_BuildValue("(y#(Ni))", (const char *)key, (Py_ssize_t)NB, moves, r->len ? first : 0);
        if (!item) {
            Py_DECREF(out);
            return NULL;
        }
        PyList_SET_ITEM(out, i, item);
    }
    return out;
}

PyDoc_STRVAR(forward_paths_doc,
             "forward_paths(board, target, dice, exact, limit, enough, head_start, head_limit, start_rule_limit,\n"
             "              start_quarter, trapping, mirror, opp_off, budget) -> (paths or None, boards visited)\n\n"
             "reach.Walker._paths in every order (monotone false, no spare pins, not ending) in a blocking game\n"
             "without hits or pins: up to limit [(checker moves, end board key)] playing every die of dice (at\n"
             "most 64). target (52 counts) or None; exact: the paths end on it, else anywhere behind it; enough\n"
             "-1 for none, else the boards walked after the first end before the walk stops. The other\n"
             "arguments as max_depth's. Past the budget the count is budget + 1 and no paths are given.");

static PyObject *forward_paths(PyObject *self, PyObject *args) {
    Py_buffer board, dice, mirror, target = {0};
    PyObject *target_arg;
    int exact, head_start, head_limit, start_rule_limit, start_quarter, trapping, opp_off;
    long long limit, enough, budget;
    if (!PyArg_ParseTuple(args, "y*Oy*pLLiiiiiy*iL:forward_paths", &board, &target_arg, &dice, &exact, &limit,
                          &enough, &head_start, &head_limit, &start_rule_limit, &start_quarter, &trapping, &mirror,
                          &opp_off, &budget))
        return NULL;
    PyObject *out = NULL;
    Path *p = path_open(&board, &dice, &mirror, head_start, head_limit, start_rule_limit, start_quarter, trapping,
                        opp_off, budget);
    if (!p) goto done;
    if (target_arg != Py_None) {
        if (PyObject_GetBuffer(target_arg, &target, PyBUF_SIMPLE) < 0) {
            PyErr_Format(PyExc_TypeError, "target: expected bytes or None");
            goto done;
        }
        if (check_board(target.buf, target.len, "target") < 0) goto done;
    }
    if (limit < 1) {
        PyErr_Format(PyExc_ValueError, "limit: %lld is not 1 or more", limit);
        goto done;
    }
    const uint8_t *b = board.buf, *t = target.buf, *dv = p->w.dice;
    int n = p->w.n;
    p->exact = exact;
    p->limit = limit;
    p->enough = enough;
    if (t) {
        if (exact && memcmp(b + OPP + 1, t + OPP + 1, 24) != 0) { /* the opponent's checkers never move */
            out = Py_BuildValue("([]L)", 0LL);
            goto done;
        }
        p->target = t;
        p->opp_same = memcmp(b + OPP, t + OPP, 26) == 0;
        p->toff = t[0];
        for (int x = 25; x >= 1; x--) p->tcum[x] = p->tcum[x + 1] + t[x];
        /* when the target is a game that ended (the last checker off) the play may stop before every
         * die is played, and only the next die is sure to be played */
        int ends = t[0] == ALL_OFF && b[0] < ALL_OFF;
        p->wastes = !ends;
        int high = highest(t);
        for (int depth = 0; depth <= n; depth++) {
            int total = 0, big = 0, m = 0;
            uint8_t sorted[MAX_WALK];
            for (int k = depth; k < n; k++) {
                int d = dv[k], j = m++;
                total += d;
                if (d > big) big = d;
                while (j > 0 && sorted[j - 1] < d) { /* largest first */
                    sorted[j] = sorted[j - 1];
                    j--;
                }
                sorted[j] = (uint8_t)d;
            }
            p->total[depth] = total;
            p->bigger[depth] = ends ? (depth < n ? dv[depth] : 0) : big;
            p->waste[depth][0] = 0;
            for (int k = 0; k < m; k++)
                p->waste[depth][k + 1] = p->waste[depth][k] + (sorted[k] > high ? sorted[k] - high : 0);
        }
    }
    if (seen_start() < 0) {
        PyErr_NoMemory();
        goto done;
    }
    f_rec(p, 0);
    seen_end();
    if (p->w.nomem) {
        PyErr_NoMemory();
        goto done;
    }
    if (p->stopped) {
        out = Py_BuildValue("(OL)", Py_None, p->w.calls);
    } else {
        PyObject *found = ends_list(p, b + OPP, -1);
        if (found) out = Py_BuildValue("(NL)", found, p->w.calls);
    }
done:
    if (p) free(p->ends);
    free(p);
    if (target.obj) PyBuffer_Release(&target);
    PyBuffer_Release(&board);
    PyBuffer_Release(&dice);
    PyBuffer_Release(&mirror);
    return out;
}

/* movegen._Search for the same games (in every order, boards memoised per depth): per distinct final
 * board the first path found, keeping only the boards reached with the most dice played; a play that
 * bears off the last checker is complete. The ends of each rank are kept as seen table depth
 * RESULTS + rank, so that a better rank starts afresh. */
#define RESULTS 128

static void s_record(Path *p, int len, int rank) {
    Depth *w = &p->w;
    if (rank > w->best) {
        w->best = rank;
        p->n_ends = 0;
    }
    if (rank == w->best && end_add(p, len, RESULTS + rank) < 0) w->nomem = 1;
}

static int s_rec(Path *p, int depth) {
    Depth *w = &p->w;
    uint8_t *me = w->me;
    if (depth == w->n) {
        s_record(p, depth, depth);
        return w->nomem;
    }
    if (w->budget >= 0 && ++w->calls > w->budget) {
        p->stopped = 1;
        return 1;
    }
    int d = w->dice[depth], moved = 0;
    int hi = me[BAR] ? BAR : 24, lo = me[BAR] ? BAR : 1;
    for (int src = hi; src >= lo; src--) {
        if (!me[src]) continue;
        int dst = d_try(w, src, d);
        if (dst < 0) continue;
        moved = 1;
        p->path[depth][0] = (uint8_t)src;
        p->path[depth][1] = (uint8_t)dst;
        int over = 0;
        if (dst == 0 && me[0] == ALL_OFF) { /* the game ends at once: the play is complete */
            s_record(p, depth + 1, w->n);
            over = w->nomem;
        } else {
            int added = dseen_add(w, depth);
            if (added < 0) {
                w->nomem = 1;
                over = 1;
            } else if (added) {
                over = s_rec(p, depth + 1);
            }
        }
        me[dst]--;
        me[src]++;
        if (over) return 1;
    }
    if (!moved) s_record(p, depth, depth);
    return w->nomem;
}

PyDoc_STRVAR(search_blocking_doc,
             "search_blocking(board, dice, head_start, head_limit, start_rule_limit, start_quarter, trapping,\n"
             "                mirror, opp_off, budget) -> (results or None, most dice played, boards visited)\n\n"
             "movegen._Search.run for one dice sequence (at most 64) in a blocking game without hits or pins:\n"
             "[(final board key, (checker moves, first die))] in the order found. The other arguments as\n"
             "max_depth's; past the budget the count is budget + 1 and no results are given.");

static PyObject *search_blocking(PyObject *self, PyObject *args) {
    Py_buffer board, dice, mirror;
    int head_start, head_limit, start_rule_limit, start_quarter, trapping, opp_off;
    long long budget;
    if (!PyArg_ParseTuple(args, "y*y*iiiiiy*iL:search_blocking", &board, &dice, &head_start, &head_limit,
                          &start_rule_limit, &start_quarter, &trapping, &mirror, &opp_off, &budget))
        return NULL;
    PyObject *out = NULL;
    Path *p = path_open(&board, &dice, &mirror, head_start, head_limit, start_rule_limit, start_quarter, trapping,
                        opp_off, budget);
    if (!p) goto done;
    p->w.best = -1;
    if (seen_start() < 0) {
        PyErr_NoMemory();
        goto done;
    }
    s_rec(p, 0);
    seen_end();
    if (p->w.nomem) {
        PyErr_NoMemory();
        goto done;
    }
    if (p->stopped) {
        out = Py_BuildValue("(OiL)", Py_None, p->w.best, p->w.calls);
    } else {
        PyObject *found = ends_list(p, (const uint8_t *)board.buf + OPP, p->w.n ? p->w.dice[0] : 0);
        if (found) out = Py_BuildValue("(NiL)", found, p->w.best, p->w.calls);
    }
done:
    if (p) free(p->ends);
    free(p);
    PyBuffer_Release(&board);
    PyBuffer_Release(&dice);
    PyBuffer_Release(&mirror);
    return out;
}

/* The core of step_blocking (also lent to engine._heuristic's beam through the capsule
 * board_rules._fastgen._step_blocking): the distinct boards one move of die leads to from the n boards
 * (52 counts each, checked by the caller), written to keys (52 bytes each) and moves (board, source,
 * destination), each array room for n * 25; table: cap ints (a power of two over n * 50), scratch. */
static Py_ssize_t step_core(const uint8_t *boards, Py_ssize_t n, int die, int head_start, int head_limit,
                            int start_rule_limit, int start_quarter, int trapping, const uint8_t *mirror, int opp_off,
                            uint8_t *keys, uint8_t *moves, int *table, size_t cap) {
    Py_ssize_t found = 0;
    memset(table, 0xFF, cap * sizeof(int));
    Depth w;
    memset(&w, 0, sizeof w);
    w.head_start = head_start;
    w.head_limit = head_limit;
    w.start_rule_limit = start_rule_limit;
    w.start_quarter = start_quarter;
    w.trapping = trapping;
    w.f = mirror;
    w.opp_off = opp_off;
    for (Py_ssize_t b = 0; b < n; b++) {
        const uint8_t *board = boards + b * NB;
        memcpy(w.me, board, 26);
        w.opp = board + OPP;
        int hi = w.me[BAR] ? BAR : 24, lo = w.me[BAR] ? BAR : 1;
        for (int src = hi; src >= lo; src--) {
            if (!w.me[src]) continue;
            int dst = d_try(&w, src, die);
            if (dst < 0) continue;
            uint8_t *key = keys + found * NB;
            memcpy(key, w.me, 26);
            memcpy(key + OPP, board + OPP, 26);
            w.me[dst]--;
            w.me[src]++;
            DKey k = pack(key);
            size_t j = hash2(k.w[0], k.w[1]) & (cap - 1);
            while (table[j] >= 0 && memcmp(keys + (size_t)table[j] * NB, key, NB)) j = (j + 1) & (cap - 1);
            if (table[j] >= 0) continue; /* reached before */
            table[j] = (int)found;
            moves[found * 3] = (uint8_t)b;
            moves[found * 3 + 1] = (uint8_t)src;
            moves[found * 3 + 2] = (uint8_t)dst;
            found++;
        }
    }
    return found;
}

/* The table step_core needs for n boards. */
static size_t step_table(Py_ssize_t n) {
    size_t cap = 64;
    while (cap < (size_t)n * 50) cap <<= 1; /* at most 25 moves a board: the table stays half empty */
    return cap;
}

PyDoc_STRVAR(step_blocking_doc,
             "step_blocking(boards, die, head_start, head_limit, start_rule_limit, start_quarter, trapping, mirror,\n"
             "              opp_off) -> (keys, moves)\n\n"
             "The distinct boards one checker move of die leads to from boards (52 counts each, one after another,\n"
             "at most 255 boards) in a blocking game without hits or pins, each move made as\n"
             "CheckerMoves.try_move makes it (a beam search's step): each board's checkers from the bar, else from\n"
             "its highest point down, a board reached again left out. keys: the boards reached, 52 bytes each, in\n"
             "that order; moves: three bytes for each, the index of the board moved from, the source and the\n"
             "destination (0: borne off). The other arguments as max_depth's.");

static PyObject *step_blocking(PyObject *self, PyObject *args) {
    Py_buffer boards, mirror;
    int die, head_start, head_limit, start_rule_limit, start_quarter, trapping, opp_off;
    if (!PyArg_ParseTuple(args, "y*iiiiiiy*i:step_blocking", &boards, &die, &head_start, &head_limit,
                          &start_rule_limit, &start_quarter, &trapping, &mirror, &opp_off))
        return NULL;
    PyObject *out = NULL;
    uint8_t *keys = NULL, *moves = NULL;
    int *table = NULL;
    Py_ssize_t n = boards.len / NB;
    const uint8_t *f = mirror.buf;
    if (boards.len % NB || n > 255) {
        PyErr_Format(PyExc_ValueError, "boards: expected up to 255 boards of %d counts, got %zd bytes", NB,
                     boards.len);
        goto done;
    }
    if (step_check(die, f, mirror.len, start_rule_limit, opp_off) < 0) goto done;
    for (Py_ssize_t b = 0; b < n; b++)
        if (check_board((const uint8_t *)boards.buf + b * NB, NB, "boards") < 0) goto done;
    size_t cap = step_table(n);
    keys = malloc(n * 25 * NB + 1);
    moves = malloc(n * 25 * 3 + 1);
    table = malloc(cap * sizeof(int));
    if (!keys || !moves || !table) {
        PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t found = step_core(boards.buf, n, die, head_start, head_limit, start_rule_limit, start_quarter, trapping,
                                 f, opp_off, keys, moves, table, cap);
    out = Py_BuildValue("(y#y#)", (const char *)keys, found * NB, (const char *)moves, found * 3);
done:
    free(keys);
    free(moves);
    free(table);
    PyBuffer_Release(&boards);
    PyBuffer_Release(&mirror);
    return out;
}

/* The walk back from the target (backward.backward_path): the board walked back is w.me, the start's
 * opponent counts w.opp. With `rules` each move back is also made forwards under the variant's own
 * limits (d_try); without them each run of equal dice is walked back in one order, lowest point first. */
typedef struct {
    Depth w;
    const uint8_t *start; /* the start's 26 counts */
    int rules, off0, need;
    int crossing[26]; /* checkers that the first dice must carry from x or behind to below x */
    int left[MAX_WALK + 1]; /* pips of the first i dice */
    uint8_t sorted[MAX_WALK + 1][MAX_WALK]; /* the first i dice, largest first */
    int stopped, found;
    uint8_t path[MAX_WALK][2];
} Back;

/* Whether the first i dice can still carry the checkers as the board now needs (backward's feasible). */
static int b_feasible(const Back *k, int i) {
    const uint8_t *me = k->w.me;
    int off = me[0] - k->off0;
    if (off > i) return 0;
    for (int x = 1; x <= 25; x++)
        if (k->crossing[x] < 0 || k->crossing[x] > i) return 0;
    if (!off) return k->need == k->left[i];
    int h = highest(me), waste = 0;
    if (h > 6) h = 6;
    for (int j = 0; j < off; j++) waste += k->sorted[i][j] > h ? k->sorted[i][j] - h : 0;
    return k->left[i] - waste <= k->need && k->need <= k->left[i];
}

static void b_shift(Back *k, int lo, int hi, int by) {
    for (int x = lo; x <= hi; x++) k->crossing[x] += by;
    k->need += by * (hi - lo + 1);
}

static int b_rec(Back *k, int i, int low);

/* The move back of die i - 1 just made (forwards: src to dst); 1 when the walk is over (found or
 * stopped), 0 to go on. */
static int b_step(Back *k, int i, int src, int dst, int low) {
    Depth *w = &k->w;
    if (w->budget >= 0 && ++w->calls > w->budget) { /* each move back tried counts a board */
        k->stopped = 1;
        return 1;
    }
    if (k->rules) {
        int u = d_try(w, src, w->dice[i - 1]);
        if (u < 0) return 0;
        w->me[u]--;
        w->me[src]++;
        if (u != dst) return 0;
    }
    DKey *e;
    int made = seen_entry(w->me, i, &w->used, &e);
    if (made < 0) {
        w->nomem = 1;
        return 1;
    }
    /* the lowest point a move back of the same run could still start from when the walk left this
     * board without a path: a visit with that bound or a higher one is as hopeless */
    int was = made ? -1 : (int)((e->w[1] >> VAL_SHIFT) & 0xFF);
    if ((was >= 0 && was <= low) || !b_feasible(k, i - 1)) {
        e->w[1] &= ~VAL_MASK;
        return 0;
    }
    k->path[i - 1][0] = (uint8_t)src;
    k->path[i - 1][1] = (uint8_t)dst;
    if (b_rec(k, i - 1, low)) return 1;
    if (seen_entry(w->me, i, &w->used, &e) < 0) { /* found again: the table may have grown meanwhile */
        w->nomem = 1;
        return 1;
    }
    int keep = was < 0 || low < was ? low : was;
    e->w[1] = (e->w[1] & ~VAL_MASK) | ((uint64_t)keep << VAL_SHIFT);
    return 0;
}

static int b_rec(Back *k, int i, int low) {
    Depth *w = &k->w;
    uint8_t *me = w->me;
    if (i == 0) {
        if (memcmp(me, k->start, 26) == 0) {
            k->found = 1;
            return 1;
        }
        return 0;
    }
    int d = w->dice[i - 1];
    int same = !k->rules && i >= 2 && w->dice[i - 2] == d; /* the next die goes on with this run */
    for (int q = low > 1 ? low : 1; q < 25 - d; q++) {
        if (me[q] && !w->opp[q + d] && k->crossing[q + 1] > 0) {
            me[q]--;
            me[q + d]++;
            b_shift(k, q + 1, q + d, -1);
            int over = b_step(k, i, q + d, q, same ? q : 0);
            b_shift(k, q + 1, q + d, 1);
            me[q]++;
            me[q + d]--;
            if (over) return 1;
        }
    }
    if (low == 0 && me[0] > k->off0) {
        for (int x = 7; x <= 25; x++)
            if (me[x]) return 0;
        /* a checker borne off with d: exactly from d, or from the highest point below d */
        for (int p = d < 6 ? d : 6; p >= 1; p--) {
            if (p < d)
                for (int x = p + 1; x <= 6; x++)
                    if (me[x]) return 0;
            me[0]--;
            me[p]++;
            b_shift(k, 1, p, -1);
            int over = b_step(k, i, p, 0, 0);
            b_shift(k, 1, p, 1);
            me[0]++;
            me[p]--;
            if (over) return 1;
        }
    }
    return 0;
}

PyDoc_STRVAR(backward_path_doc,
             "backward_path(board, target, dice, rules, head_start, head_limit, start_rule_limit, start_quarter,\n"
             "              trapping, mirror, opp_off, budget) -> (checker moves or None, boards visited)\n\n"
             "backward.backward_path from board to target (52 counts each) for dice (at most 64), in a blocking\n"
             "game without hits or pins: rules true checks each move back forwards under the variant's limits\n"
             "(the other arguments as max_depth's). Past the budget the count is budget + 1 and no path is given.");

static PyObject *backward_path(PyObject *self, PyObject *args) {
    Py_buffer board, target, dice, mirror;
    int rules, head_start, head_limit, start_rule_limit, start_quarter, trapping, opp_off;
    long long budget;
    if (!PyArg_ParseTuple(args, "y*y*y*piiiiiy*iL:backward_path", &board, &target, &dice, &rules, &head_start,
                          &head_limit, &start_rule_limit, &start_quarter, &trapping, &mirror, &opp_off, &budget))
        return NULL;
    PyObject *out = NULL;
    Back *k = calloc(1, sizeof(Back));
    if (!k) {
        PyErr_NoMemory();
        goto done;
    }
    if (walk_setup(&k->w, &board, &dice, &mirror, head_start, head_limit, start_rule_limit, start_quarter, trapping,
                   opp_off, budget, MAX_WALK) < 0 ||
        check_board(target.buf, target.len, "target") < 0)
        goto done;
    const uint8_t *b = board.buf, *t = target.buf, *dv = k->w.dice;
    int n = k->w.n;
    if (memcmp(b + OPP + 1, t + OPP + 1, 24) != 0 || t[0] < b[0]) {
        out = Py_BuildValue("(OL)", Py_None, 0LL);
        goto done;
    }
    memcpy(k->w.me, t, 26); /* walked back from the target */
    k->start = b;
    k->rules = rules;
    k->off0 = b[0];
    for (int i = 0; i < n; i++) {
        k->left[i + 1] = k->left[i] + dv[i];
        int j = i;
        memcpy(k->sorted[i + 1], k->sorted[i], (size_t)i);
        while (j > 0 && k->sorted[i + 1][j - 1] < dv[i]) {
            k->sorted[i + 1][j] = k->sorted[i + 1][j - 1];
            j--;
        }
        k->sorted[i + 1][j] = dv[i];
    }
    int scum = 0, cum = 0;
    for (int x = 25; x >= 1; x--) {
        scum += b[x];
        cum += t[x];
        k->crossing[x] = scum - cum;
        k->need += scum - cum;
    }
    if (b_feasible(k, n)) {
        if (seen_start() < 0) {
            PyErr_NoMemory();
            goto done;
        }
        b_rec(k, n, 0);
        seen_end();
    }
    if (k->w.nomem) {
        PyErr_NoMemory();
        goto done;
    }
    if (k->found) {
        PyObject *moves = path_tuple((const uint8_t (*)[2])k->path, n);
        if (moves) out = Py_BuildValue("(NL)", moves, k->w.calls);
    } else {
        out = Py_BuildValue("(OL)", Py_None, k->w.calls);
    }
done:
    free(k);
    PyBuffer_Release(&board);
    PyBuffer_Release(&target);
    PyBuffer_Release(&dice);
    PyBuffer_Release(&mirror);
    return out;
}

/* ------------------------------------------------------------ each checker on its own (checkerwise.py) */

#define CW_RUNS 8     /* checkerwise.MOST_RUNS */
#define CW_HOME 6
#define CW_MOST_WASTE 255

typedef struct {
    uint8_t place;
    uint8_t waste;
    uint8_t taken[CW_RUNS];
    uint32_t packed; /* taken, 4 bits a run, as a state holds it */
} CwOption;

typedef struct {
    CwOption *o;
    Py_ssize_t n, cap;
    int nomem;
} CwOptions;

typedef struct {
    uint64_t *keys; /* the states in the order they were first met, room for half the table */
    size_t n;
    uint64_t *table; /* open addressing over keys: key + 1, 0 empty */
    size_t mask;
} CwSet;

typedef struct {
    int nruns, value[CW_RUNS], len[CW_RUNS];
    int first_off, most_waste;
    const uint8_t *opp;
    const int *slot; /* per place, its digit among the targets left; -1 where the target holds none */
    CwOptions *out;
    uint8_t taken[CW_RUNS];
} CwWalk;

static void cw_add(CwWalk *c, int place, int waste) {
    CwOptions *o = c->out;
    CwOption *grown = room(o->o, o->n, &o->cap, sizeof(CwOption), 64);
    if (!grown) {
        o->nomem = 1;
        return;
    }
    o->o = grown;
    CwOption *e = &o->o[o->n++];
    memset(e, 0, sizeof(*e));
    e->place = (uint8_t)place;
    e->waste = (uint8_t)waste;
    memcpy(e->taken, c->taken, (size_t)c->nruns);
    for (int r = 0; r < c->nruns; r++) e->packed |= (uint32_t)c->taken[r] << (4 * r);
}

/* checkerwise._options: where one checker at x may stop, from run r on */
static void cw_options(CwWalk *c, int r, int x, int waste) {
    if (r == c->nruns) {
        if (c->slot[x] >= 0) cw_add(c, x, waste);
        return;
    }
    int v = c->value[r], n = c->len[r];
    for (int k = 0; k <= n; k++) {
        if (k) {
            if (x == 0) break;
            int y = x - v;
            if (y <= 0) {
                if (r < c->first_off || waste - y > c->most_waste) break;
                waste -= y;
                y = 0;
            } else if (c->opp[y]) {
                break;
            }
            x = y;
        }
        if (r == c->first_off && x > CW_HOME) continue;
        c->taken[r] = (uint8_t)k;
        cw_options(c, r + 1, x, waste);
    }
}

static uint64_t cw_hash(uint64_t k) {
    k ^= k >> 29;
    k *= 0xbf58476d1ce4e5b9ULL;
    return k ^ (k >> 32);
}

static void cw_clear(CwSet *s) {
    s->n = 0;
    memset(s->table, 0, (s->mask + 1) * sizeof(uint64_t));
}

/* 1 if added, 0 if there already, -1 out of memory */
static int cw_insert(CwSet *s, uint64_t key) {
    if (2 * (s->n + 1) > s->mask + 1) {
        size_t size = 2 * (s->mask + 1);
        uint64_t *table = calloc(size, sizeof(uint64_t));
        uint64_t *keys = realloc(s->keys, size / 2 * sizeof(uint64_t));
        if (!table || !keys) {
            free(table);
            if (keys) s->keys = keys;
            return -1;
        }
        s->keys = keys;
        free(s->table);
        s->table = table;
        s->mask = size - 1;
        for (size_t i = 0; i < s->n; i++) {
            size_t h = cw_hash(s->keys[i]) & s->mask;
            while (s->table[h]) h = (h + 1) & s->mask;
            s->table[h] = s->keys[i] + 1;
        }
    }
    size_t h = cw_hash(key) & s->mask;
    while (s->table[h]) {
        if (s->table[h] == key + 1) return 0;
        h = (h + 1) & s->mask;
    }
    s->table[h] = key + 1;
    s->keys[s->n++] = key;
    return 1;
}

static int cw_has(const CwSet *s, uint64_t key) {
    size_t h = cw_hash(key) & s->mask;
    while (s->table[h]) {
        if (s->table[h] == key + 1) return 1;
        h = (h + 1) & s->mask;
    }
    return 0;
}

static int cw_set_open(CwSet *s) {
    s->mask = 255;
    s->n = 0;
    s->table = calloc(s->mask + 1, sizeof(uint64_t));
    s->keys = malloc((s->mask + 1) / 2 * sizeof(uint64_t));
    return s->table && s->keys ? 0 : -1;
}

/* A state: the dice taken from each run (4 bits each), the targets left (mixed radix, 16 bits from
 * bit 32) and the pips wasted (8 bits from bit 48). 1: no sharing of the dice reaches the target
 * (a proof); 0: one does, or past cap steps; -1: out of memory. */
/* Each layer's states (a checker's share added) with the first that led to each: where that state
 * stands in the layer before, and which of the checker's ways it took. */
typedef struct {
    uint64_t *keys;
    uint32_t *from, *way;
    Py_ssize_t n, cap;
} CwLayer;

typedef struct {
    CwLayer layer[16]; /* layer 0: the start; layer i: after the i-th checker */
    int point[15];     /* the checkers, in the order the layers add them */
    const CwOptions *ways[15];
    int nruns, found, nlayers; /* found: a sharing, one share a layer */
    uint8_t taken[15][CW_RUNS]; /* each checker's share, read back once found */
} CwShares;

static int cw_layer_add(CwLayer *l, uint64_t key, uint32_t from, uint32_t way) {
    Py_ssize_t cap = l->cap;
    uint64_t *keys = room(l->keys, l->n, &cap, sizeof(uint64_t), 256);
    if (!keys) return -1;
    l->keys = keys;
    if (cap != l->cap) {
        uint32_t *f = realloc(l->from, (size_t)cap * sizeof(uint32_t));
        if (f) l->from = f;
        uint32_t *w = realloc(l->way, (size_t)cap * sizeof(uint32_t));
        if (w) l->way = w;
        if (!f || !w) return -1;
        l->cap = cap;
    }
    l->keys[l->n] = key;
    l->from[l->n] = from;
    l->way[l->n++] = way;
    return 0;
}

static void cw_shares_free(CwShares *w) {
    for (int i = 0; i < 16; i++) {
        free(w->layer[i].keys);
        free(w->layer[i].from);
        free(w->layer[i].way);
    }
}

/* The dice as runs of equal dice: how many runs (value[], len[]), or -1 where the searches do not
 * take them (more than CW_RUNS runs, or a run of more than 15). */
static int cw_runs(const uint8_t *dv, Py_ssize_t nd, int *value, int *len) {
    int nruns = 0;
    for (Py_ssize_t i = 0; i < nd; i++) {
        if (nruns && value[nruns - 1] == dv[i]) {
            if (++len[nruns - 1] > 15) return -1;
        } else if (nruns == CW_RUNS) {
            return -1;
        } else {
            value[nruns] = dv[i];
            len[nruns++] = 1;
        }
    }
    return nruns;
}

/* The points the mover's checkers stand on, those with the fewest ways (ways[p]) first, farthest
 * first among equals (a stable sort of points 24 down): how many. */
static int cw_fewest_first(const uint8_t *me, const Py_ssize_t *ways, int *order) {
    int np = 0;
    for (int p = 24; p >= 1; p--) {
        if (!me[p]) continue;
        int at = np++;
        while (at > 0 && ways[order[at - 1]] > ways[p]) {
            order[at] = order[at - 1];
            at--;
        }
        order[at] = p;
    }
    return np;
}

/* The targets left, a digit per place the target holds (off first): per place its digit (slot; -1 where
 * the target holds none), each digit's radix and multiplier, and every checker still wanted (left0). */
typedef struct {
    int slot[25], radix[25], borne;
    uint32_t mult[25], left0;
} CwTargets;

/* checkerwise._to_target: what the searches to a target share before they search, the dice's runs and the
 * pips they may waste into c, the targets left into t. -1 where the searches do not take the board (a
 * checker on the bar, other checkers than the target's, dice they do not take, more waste than a byte
 * holds); 1 where no play reaches the target (more pips than the dice have, checkers back from off); 0. */
static int cw_to_target(const uint8_t *me, const uint8_t *target, const uint8_t *dv, Py_ssize_t nd, CwWalk *c,
                        CwTargets *t) {
    int sum_me = 0, sum_t = 0, moved = 0, total = 0;
    for (int i = 0; i < 26; i++) {
        sum_me += me[i];
        sum_t += target[i];
    }
    if (me[25] || target[25] || sum_me != sum_t) return -1;
    for (Py_ssize_t i = 0; i < nd; i++) total += dv[i];
    if ((c->nruns = cw_runs(dv, nd, c->value, c->len)) < 0) return -1;
    for (int i = 1; i <= 24; i++) moved += i * (me[i] - target[i]);
    t->borne = target[0] - me[0];
    c->most_waste = total - moved;
    if (c->most_waste < 0 || t->borne < 0) return 1;
    if (c->most_waste > CW_MOST_WASTE) return -1;
    int nslots = 0;
    uint32_t m = 1;
    t->left0 = 0;
    for (int place = 0; place <= 24; place++) {
        int n = place ? target[place] : t->borne;
        t->slot[place] = -1;
        if (place && !n) continue;
        t->slot[place] = nslots;
        t->radix[nslots] = n + 1;
        t->mult[nslots] = m;
        t->left0 += (uint32_t)n * m;
        m *= (uint32_t)(n + 1);
        nslots++;
    }
    c->slot = t->slot;
    return 0;
}

static int cw_search(const uint8_t *me, const uint8_t *opp, const uint8_t *target, const uint8_t *dv, Py_ssize_t nd,
                     long long cap, CwShares *want) {
    CwWalk c;
    memset(&c, 0, sizeof(c));
    CwTargets tg;
    int ready = cw_to_target(me, target, dv, nd, &c, &tg);
    if (ready != 0) return ready > 0;
    c.opp = opp;
    const int *slot = tg.slot, *radix = tg.radix, borne = tg.borne;
    const uint32_t *mult = tg.mult, left0 = tg.left0;
    uint64_t full = 0;
    for (int r = 0; r < c.nruns; r++) full |= (uint64_t)c.len[r] << (4 * r);
    CwOptions opts[25];
    memset(opts, 0, sizeof(opts));
    CwSet a, b;
    memset(&a, 0, sizeof(a));
    memset(&b, 0, sizeof(b));
    int result = 1;
    long long work = 0;
    if (cw_set_open(&a) < 0 || cw_set_open(&b) < 0) {
        result = -1;
        goto done;
    }
    for (int first_off = borne ? 0 : c.nruns; first_off <= c.nruns && result == 1; first_off++) {
        if (borne && first_off == c.nruns) break;
        c.first_off = first_off;
        for (int p = 1; p <= 24; p++) {
            opts[p].n = 0;
            if (!me[p]) continue;
            c.out = &opts[p];
            cw_options(&c, 0, p, 0);
            if (opts[p].nomem) {
                result = -1;
                goto done;
            }
        }
        cw_clear(&a);
        if (cw_insert(&a, (uint64_t)left0 << 32) < 0) {
            result = -1;
            goto done;
        }
        int layer = 0;
        if (want) {
            want->layer[0].n = 0;
            if (cw_layer_add(&want->layer[0], (uint64_t)left0 << 32, 0, 0) < 0) {
                result = -1;
                goto done;
            }
        }
        /* the checkers with the fewest ways first (farthest first among equals): the sets of sharings
         * stay far smaller than taking the farthest first */
        Py_ssize_t counts[25];
        for (int p = 1; p <= 24; p++) counts[p] = opts[p].n;
        int order[24], np = cw_fewest_first(me, counts, order);
        for (int q = 0; q < np && a.n; q++) {
            int p = order[q];
            for (int k = 0; k < me[p] && a.n; k++) {
                cw_clear(&b);
                const CwOptions *o = &opts[p];
                layer++;
                if (want) {
                    want->point[layer - 1] = p;
                    want->ways[layer - 1] = o;
                    want->layer[layer].n = 0;
                }
                for (size_t i = 0; i < a.n; i++) {
                    uint64_t key = a.keys[i];
                    uint32_t used = (uint32_t)key, left = (uint32_t)(key >> 32) & 0xffff;
                    int waste = (int)(key >> 48);
                    int have[CW_RUNS];
                    for (int r = 0; r < c.nruns; r++) have[r] = (used >> (4 * r)) & 15;
                    for (Py_ssize_t j = 0; j < o->n; j++) {
                        const CwOption *e = &o->o[j];
                        int s = slot[e->place]; /* a place the target holds: the options are only those */
                        if ((left / mult[s]) % (uint32_t)radix[s] == 0 || waste + e->waste > c.most_waste) continue;
                        int fits = 1;
                        for (int r = 0; r < c.nruns; r++)
                            if (have[r] + e->taken[r] > c.len[r]) {
                                fits = 0;
                                break;
                            }
                        if (!fits) continue;
                        uint64_t next = ((uint64_t)(waste + e->waste) << 48) | ((uint64_t)(left - mult[s]) << 32) |
                                        (uint64_t)(used + e->packed);
                        if (++work > cap) {
                            result = 0;
                            goto done;
                        }
                        int added = cw_insert(&b, next);
                        if (added < 0 || (added && want && cw_layer_add(&want->layer[layer], next, (uint32_t)i, (uint32_t)j) < 0)) {
                            result = -1;
                            goto done;
                        }
                    }
                }
                CwSet t = a;
                a = b;
                b = t;
            }
        }
        for (size_t i = 0; i < a.n; i++)
            if ((a.keys[i] & 0xffffffffULL) == full) {
                result = 0;
                if (want) { /* back through the layers: each checker's share, last first */
                    want->found = 1;
                    want->nlayers = layer;
                    want->nruns = c.nruns;
                    size_t at = i;
                    for (int l = layer; l >= 1; l--) {
                        const CwOption *e = &want->ways[l - 1]->o[want->layer[l].way[at]];
                        memcpy(want->taken[l - 1], e->taken, CW_RUNS);
                        at = want->layer[l].from[at];
                    }
                }
                break;
            }
    }
done:
    for (int p = 0; p < 25; p++) free(opts[p].o);
    free(a.keys);
    free(a.table);
    free(b.keys);
    free(b.table);
    return result;
}

/* A sharing as the searches return it: [(point, (dice taken from each run, ...)), ...], one per checker;
 * NULL with the error set. */
static PyObject *share_list(int n, int nruns, const int *point, const uint8_t *const *taken) {
    PyObject *list = PyList_New(n);
    for (int i = 0; list && i < n; i++) {
        PyObject *runs = PyTuple_New(nruns);
        if (!runs) {
            Py_CLEAR(list);
            break;
        }
        for (int r = 0; r < nruns; r++) PyTuple_SET_ITEM(runs, r, PyLong_FromLong(taken[i][r]));
        PyObject *item = Py_BuildValue("(iN)", point[i], runs);
        if (!item) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, i, item);
    }
    return list;
}

PyDoc_STRVAR(checkerwise_doc,
             "checkerwise(board, target, dice, cap, want=False) -> bool, or (bool, sharing or None) if want\n\n"
             "checkerwise.unreachable_python: board is the mover's and the opponent's 52 counts, target the\n"
             "mover's 26, dice at most 64 of 1 to 6; True where no sharing of the dice among the mover's checkers\n"
             "takes them to the target, False where one does or past cap steps (a checker's way added to a sharing).");

static PyObject *checkerwise(PyObject *self, PyObject *args) {
    Py_buffer board, target, dice;
    long long cap;
    int want = 0;
    if (!PyArg_ParseTuple(args, "y*y*y*L|p:checkerwise", &board, &target, &dice, &cap, &want)) return NULL;
    PyObject *out = NULL;
    CwShares shares;
    memset(&shares, 0, sizeof(shares));
    const uint8_t *dv = dice.buf, *t = target.buf;
    if (check_board(board.buf, board.len, "board") < 0) goto done;
    if (check_target(&target) < 0) goto done;
    if (check_dice(&dice, MAX_WALK) < 0) goto done;
    const uint8_t *b = board.buf;
    int got = cw_search(b, b + OPP, t, dv, dice.len, cap, want ? &shares : NULL);
    if (got < 0) {
        PyErr_NoMemory();
    } else if (!want) {
        out = PyBool_FromLong(got);
    } else if (!shares.found) {
        out = Py_BuildValue("(OO)", got ? Py_True : Py_False, Py_None);
    } else {
        const uint8_t *taken[15];
        for (int i = 0; i < shares.nlayers; i++) taken[i] = shares.taken[i];
        PyObject *list = share_list(shares.nlayers, shares.nruns, shares.point, taken);
        if (list) out = Py_BuildValue("(ON)", Py_False, list);
    }
done:
    cw_shares_free(&shares);
    PyBuffer_Release(&board);
    PyBuffer_Release(&target);
    PyBuffer_Release(&dice);
    return out;
}

/* ------------------------------------------------------------ a sharing to a target, depth first (checkerwise.find_sharing) */

typedef struct {
    int nruns, len[CW_RUNS], n; /* runs; checkers */
    int point[15];
    const CwOptions *ways[15];
    int most[16][CW_RUNS]; /* the most of each run checkers i.. take */
    int wastes[16];        /* the most pips checkers i.. waste */
    uint32_t full;
    int most_waste;
    const CwTargets *t;
    CwSet failed; /* (checker, waste, targets left, dice taken) at the first checker of a point: nothing found */
    int chosen[15];
    long long steps, cap;
    int nomem;
} FtSearch;

/* checkerwise._find_python's rec: 1 found, 0 not, -1 past the cap or out of memory. Checkers on one
 * point take their ways in order (j from the last one's on), so the memo is kept at each point's first. */
static int ft_rec(FtSearch *s, int i, uint32_t used, uint32_t left, int waste, int lo) {
    if (i == s->n) return used == s->full;
    for (int r = 0; r < s->nruns; r++)
        if ((int)((used >> (4 * r)) & 15) + s->most[i][r] < s->len[r]) return 0;
    if (waste + s->wastes[i] < s->most_waste) return 0; /* every die played wastes exactly most_waste */
    int same = i > 0 && s->point[i - 1] == s->point[i];
    uint64_t key = ((uint64_t)i << 56) | ((uint64_t)waste << 48) | ((uint64_t)left << 32) | used;
    if (!same && cw_has(&s->failed, key)) return 0;
    const CwOptions *o = s->ways[i];
    for (Py_ssize_t j = same ? lo : 0; j < o->n; j++) {
        const CwOption *e = &o->o[j];
        int at = s->t->slot[e->place];
        if ((left / s->t->mult[at]) % (uint32_t)s->t->radix[at] == 0 || waste + e->waste > s->most_waste) continue;
        int fits = 1;
        for (int r = 0; r < s->nruns; r++)
            if ((int)((used >> (4 * r)) & 15) + e->taken[r] > s->len[r]) {
                fits = 0;
                break;
            }
        if (!fits) continue;
        if (++s->steps > s->cap) return -1;
        s->chosen[i] = (int)j;
        int got = ft_rec(s, i + 1, used + e->packed, left - s->t->mult[at], waste + e->waste, (int)j);
        if (got) return got;
    }
    if (!same && cw_insert(&s->failed, key) < 0) {
        s->nomem = 1;
        return -1;
    }
    return 0;
}

/* A checker's ways in the order find_sharing(order=1) takes them: the most dice of the last run first, then
 * of the run before, and so on; order=2: of the first run first, then the next. No two ways take the same dice. */
static int ft_late_first(const void *a, const void *b) {
    const CwOption *x = a, *y = b;
    for (int r = CW_RUNS - 1; r >= 0; r--)
        if (x->taken[r] != y->taken[r]) return y->taken[r] - x->taken[r];
    return 0;
}

static int ft_early_first(const void *a, const void *b) {
    const CwOption *x = a, *y = b;
    for (int r = 0; r < CW_RUNS; r++)
        if (x->taken[r] != y->taken[r]) return y->taken[r] - x->taken[r];
    return 0;
}

PyDoc_STRVAR(find_sharing_doc,
             "find_sharing(board, target, dice, cap, order=0) -> (list or None, proof, steps)\n\n"
             "checkerwise._find_python: board is the mover's and the opponent's 52 counts, target the mover's 26,\n"
             "dice at most 64 of 1 to 6; the first sharing found depth first that takes every checker to a place\n"
             "of the target, [(point, taken per run), ...], or None, and proof True where the search ran to its\n"
             "end without one; steps past cap: given up. order: each checker's ways as listed (0), the most dice\n"
             "of the last run first (1), of the first run first (2).");

static PyObject *find_sharing(PyObject *self, PyObject *args) {
    Py_buffer board, target, dice;
    long long cap;
    int order_by = 0;
    if (!PyArg_ParseTuple(args, "y*y*y*L|i:find_sharing", &board, &target, &dice, &cap, &order_by)) return NULL;
    PyObject *out = NULL;
    CwOptions opts[25];
    memset(opts, 0, sizeof(opts));
    FtSearch s;
    memset(&s, 0, sizeof(s));
    const uint8_t *dv = dice.buf, *me = board.buf, *t = target.buf;
    if (check_board(board.buf, board.len, "board") < 0) goto done;
    if (check_target(&target) < 0) goto done;
    if (check_dice(&dice, MAX_WALK) < 0) goto done;
    if (order_by < 0 || order_by > 2) {
        PyErr_Format(PyExc_ValueError, "order: expected 0, 1 or 2, got %d", order_by);
        goto done;
    }
    CwWalk c;
    memset(&c, 0, sizeof(c));
    CwTargets tg;
    int got = 0, ready = cw_to_target(me, t, dv, dice.len, &c, &tg);
    if (ready < 0) goto none;
    if (ready > 0) {
        out = Py_BuildValue("(OOL)", Py_None, Py_True, s.steps);
        goto done;
    }
    int borne = tg.borne;
    c.opp = me + OPP;
    s.t = &tg;
    s.most_waste = c.most_waste;
    s.nruns = c.nruns;
    for (int r = 0; r < c.nruns; r++) {
        s.len[r] = c.len[r];
        s.full |= (uint32_t)c.len[r] << (4 * r);
    }
    s.cap = cap;
    if (cw_set_open(&s.failed) < 0) {
        PyErr_NoMemory();
        goto done;
    }
    /* the latest run first as the first to bear off: a play bears off late far more often than early */
    for (int f = borne ? c.nruns - 1 : c.nruns; f >= 0 && got == 0; f = borne ? f - 1 : -1) {
        c.first_off = f;
        Py_ssize_t counts[25];
        for (int p = 1; p <= 24; p++) {
            opts[p].n = 0;
            counts[p] = 0;
            if (!me[p]) continue;
            c.out = &opts[p];
            cw_options(&c, 0, p, 0);
            if (opts[p].nomem) {
                PyErr_NoMemory();
                goto done;
            }
            counts[p] = opts[p].n;
            if (order_by)
                qsort(opts[p].o, (size_t)opts[p].n, sizeof(CwOption), order_by == 1 ? ft_late_first : ft_early_first);
        }
        int order[24], np = cw_fewest_first(me, counts, order);
        s.n = 0;
        for (int k = 0; k < np; k++)
            for (int q = 0; q < me[order[k]] && s.n < 15; q++) {
                s.point[s.n] = order[k];
                s.ways[s.n++] = &opts[order[k]];
            }
        memset(s.most[s.n], 0, sizeof(s.most[s.n]));
        s.wastes[s.n] = 0;
        for (int i = s.n - 1; i >= 0; i--) {
            for (int r = 0; r < s.nruns; r++) {
                int most = 0;
                for (Py_ssize_t j = 0; j < s.ways[i]->n; j++)
                    if (s.ways[i]->o[j].taken[r] > most) most = s.ways[i]->o[j].taken[r];
                s.most[i][r] = s.most[i + 1][r] + most;
            }
            int most = 0;
            for (Py_ssize_t j = 0; j < s.ways[i]->n; j++)
                if (s.ways[i]->o[j].waste > most) most = s.ways[i]->o[j].waste;
            s.wastes[i] = s.wastes[i + 1] + most;
        }
        cw_clear(&s.failed);
        got = ft_rec(&s, 0, 0, tg.left0, 0, 0);
        if (s.nomem) {
            PyErr_NoMemory();
            goto done;
        }
    }
    if (got == 0) { /* every run tried as the first to bear off, to the end: no sharing */
        out = Py_BuildValue("(OOL)", Py_None, Py_True, s.steps);
        goto done;
    }
    if (got < 0) goto none;
    const uint8_t *taken[15];
    for (int i = 0; i < s.n; i++) taken[i] = s.ways[i]->o[s.chosen[i]].taken;
    PyObject *list = share_list(s.n, s.nruns, s.point, taken);
    if (!list) goto done;
    out = Py_BuildValue("(NOL)", list, Py_False, s.steps);
    goto done;
none:
    out = Py_BuildValue("(OOL)", Py_None, Py_False, s.steps);
done:
    for (int p = 0; p < 25; p++) free(opts[p].o);
    free(s.failed.keys);
    free(s.failed.table);
    PyBuffer_Release(&board);
    PyBuffer_Release(&target);
    PyBuffer_Release(&dice);
    return out;
}

/* ------------------------------------------------------------ every die played: a sharing with no target (checkerwise.sharing) */

typedef struct {
    uint8_t taken[CW_RUNS];
    uint32_t packed; /* taken, 4 bits a run */
    int total, order; /* dice taken; place in the walk that listed it (a stable sort) */
} ShWay;

typedef struct {
    ShWay *w;
    Py_ssize_t n, cap;
} ShWays;

/* checkerwise._ways: a checker's ways from p (cw_options with every place wanted and no bound on the
 * pips wasted), listed in the walk's order: 0, or -1 out of memory */
static int sh_ways(CwWalk *c, int p, ShWays *out) {
    CwOptions found;
    memset(&found, 0, sizeof(found));
    c->out = &found;
    cw_options(c, 0, p, 0);
    int failed = found.nomem;
    out->n = 0;
    for (Py_ssize_t j = 0; j < found.n && !failed; j++) {
        ShWay *grown = room(out->w, out->n, &out->cap, sizeof(ShWay), 64);
        if (!grown) {
            failed = 1;
            break;
        }
        out->w = grown;
        ShWay *e = &out->w[out->n];
        memset(e, 0, sizeof(*e));
        memcpy(e->taken, found.o[j].taken, CW_RUNS);
        e->packed = found.o[j].packed;
        for (int r = 0; r < c->nruns; r++) e->total += e->taken[r];
        e->order = (int)out->n++;
    }
    free(found.o);
    return failed ? -1 : 0;
}

static int sh_by_total(const void *a, const void *b) { /* most dice first, else as listed */
    const ShWay *x = a, *y = b;
    if (x->total != y->total) return y->total - x->total;
    return x->order - y->order;
}

typedef struct {
    int nruns, len[CW_RUNS], n; /* runs; checkers */
    int point[15];
    const ShWays *ways[15];  /* each checker's ways */
    int most[16][CW_RUNS];   /* the most of each run checkers i.. take */
    int pips[16];            /* the most pips checkers i.. move */
    int value[CW_RUNS];      /* each run's number */
    uint32_t full;
    CwSet failed;            /* (checker, dice taken, first way) that found nothing */
    int chosen[15];          /* the way each checker takes */
    long long steps, cap;
    int nomem;
} ShSearch;

/* checkerwise.sharing_python's rec: 1 found, 0 not, -1 past the cap or out of memory */
static int sh_rec(ShSearch *s, int i, uint32_t used, int lo) {
    if (i == s->n) return used == s->full;
    int pips = 0;
    for (int r = 0; r < s->nruns; r++) {
        int have = (int)((used >> (4 * r)) & 15);
        if (have + s->most[i][r] < s->len[r]) return 0;
        pips += (s->len[r] - have) * s->value[r];
    }
    if (pips > s->pips[i]) return 0;
    int same = i > 0 && s->point[i - 1] == s->point[i];
    int first = same ? lo : 0;
    uint64_t key = ((uint64_t)i << 56) | ((uint64_t)first << 32) | used;
    if (cw_has(&s->failed, key)) return 0;
    const ShWays *o = s->ways[i];
    for (int j = first; j < o->n; j++) {
        const ShWay *w = &o->w[j];
        int fits = 1;
        for (int r = 0; r < s->nruns; r++)
            if ((int)((used >> (4 * r)) & 15) + w->taken[r] > s->len[r]) {
                fits = 0;
                break;
            }
        if (!fits) continue;
        if (++s->steps > s->cap) return -1;
        s->chosen[i] = j;
        int got = sh_rec(s, i + 1, used + w->packed, j);
        if (got) return got;
    }
    if (cw_insert(&s->failed, key) < 0) {
        s->nomem = 1;
        return -1;
    }
    return 0;
}

PyDoc_STRVAR(sharing_doc,
             "sharing(board, dice, cap) -> (list or None, proof, steps)\n\n"
             "checkerwise.sharing_python: board is the mover's and the opponent's 52 counts, dice at most 64 of 1\n"
             "to 6; a sharing of every die among the mover's checkers, [(point, taken per run), ...], or None, and\n"
             "proof True where the search ran to its end without one; steps past cap: given up.");

static PyObject *sharing(PyObject *self, PyObject *args) {
    Py_buffer board, dice;
    long long cap;
    if (!PyArg_ParseTuple(args, "y*y*L:sharing", &board, &dice, &cap)) return NULL;
    PyObject *out = NULL;
    ShWays ways[25];
    memset(ways, 0, sizeof(ways));
    ShSearch s;
    memset(&s, 0, sizeof(s));
    const uint8_t *dv = dice.buf, *me = board.buf;
    if (check_board(board.buf, board.len, "board") < 0) goto done;
    if (check_dice(&dice, MAX_WALK) < 0) goto done;
    CwWalk c;
    memset(&c, 0, sizeof(c));
    c.nruns = cw_runs(dv, dice.len, c.value, c.len);
    if (me[25] || c.nruns < 0) { /* a checker on the bar, or dice the search does not take: none looked for */
        out = Py_BuildValue("(OOi)", Py_None, Py_False, 0);
        goto done;
    }
    int every[25] = {0}; /* every place is one a checker may stop on */
    c.slot = every;
    c.most_waste = INT_MAX;
    c.opp = me + OPP;
    s.nruns = c.nruns;
    for (int r = 0; r < c.nruns; r++) {
        s.len[r] = c.len[r];
        s.value[r] = c.value[r];
        s.full |= (uint32_t)c.len[r] << (4 * r);
    }
    s.cap = cap;
    if (cw_set_open(&s.failed) < 0) {
        PyErr_NoMemory();
        goto done;
    }
    int got = 0;
    for (int f = 0; f <= c.nruns && got == 0; f++) {
        c.first_off = f == 0 ? c.nruns : f - 1; /* none borne off first, then each run */
        Py_ssize_t counts[25];
        for (int p = 24; p >= 1; p--) {
            counts[p] = 0;
            if (!me[p]) continue;
            if (sh_ways(&c, p, &ways[p]) < 0) {
                PyErr_NoMemory();
                goto done;
            }
            qsort(ways[p].w, (size_t)ways[p].n, sizeof(ShWay), sh_by_total);
            counts[p] = ways[p].n;
        }
        int order[24], np = cw_fewest_first(me, counts, order);
        s.n = 0;
        for (int k = 0; k < np; k++)
            for (int m = 0; m < me[order[k]] && s.n < 15; m++) {
                s.point[s.n] = order[k];
                s.ways[s.n++] = &ways[order[k]];
            }
        memset(s.most[s.n], 0, sizeof(s.most[s.n]));
        s.pips[s.n] = 0;
        for (int i = s.n - 1; i >= 0; i--) {
            const ShWays *o = s.ways[i];
            for (int r = 0; r < s.nruns; r++) {
                int most = 0;
                for (Py_ssize_t j = 0; j < o->n; j++)
                    if (o->w[j].taken[r] > most) most = o->w[j].taken[r];
                s.most[i][r] = s.most[i + 1][r] + most;
            }
            int most = 0;
            for (Py_ssize_t j = 0; j < o->n; j++) {
                int moved = 0;
                for (int r = 0; r < s.nruns; r++) moved += o->w[j].taken[r] * s.value[r];
                if (moved > most) most = moved;
            }
            s.pips[i] = s.pips[i + 1] + most;
        }
        cw_clear(&s.failed);
        got = sh_rec(&s, 0, 0, 0);
        if (s.nomem) {
            PyErr_NoMemory();
            goto done;
        }
    }
    if (got <= 0) {
        out = Py_BuildValue("(OOL)", Py_None, got == 0 ? Py_True : Py_False, s.steps);
        goto done;
    }
    const uint8_t *taken[15];
    for (int i = 0; i < s.n; i++) taken[i] = s.ways[i]->w[s.chosen[i]].taken;
    PyObject *list = share_list(s.n, s.nruns, s.point, taken);
    if (!list) goto done;
    out = Py_BuildValue("(NOL)", list, Py_False, s.steps);
done:
    for (int p = 0; p < 25; p++) free(ways[p].w);
    free(s.failed.keys);
    free(s.failed.table);
    PyBuffer_Release(&board);
    PyBuffer_Release(&dice);
    return out;
}

/* ============================================================================ the pinning game
 * movegen._Search.run for one dice sequence of plakoto (at most four dice): a lone opposing checker
 * is pinned under the mover's, not hit; a point with the mover's checker pinned, or two opposing
 * checkers, is closed; a pinned checker stops its side bearing off (from outside home always; from
 * home unless bear_off_while_pinned). Boards are 78 bytes: me[0..25], opp[0..25], pins[0..25]
 * (1: the mover's checker pinned there, 2: the opponent's pinned under the mover's). */
#define PB 78
#define PINS 52
#define P_DICE 4

typedef struct {
    uint8_t key[PB];
    uint8_t n, first, marks;
    uint8_t mv[P_DICE][3];
} PResult;

typedef struct {
    uint8_t k[PB + 2]; /* depth, then the board, then a pad byte */
} PSeen;

typedef struct {
    uint8_t b[PB];
    uint8_t dice[P_DICE];
    int n;
    int outside_fixed; /* the mover's pinned checkers that stop bearing off */
    int mother_rule, mother_exception;
    long long calls, budget;
    int stopped, nomem, best;
    uint8_t path[P_DICE][3];
    PResult *res;
    Py_ssize_t n_res, cap_res;
    PSeen *seen;
    size_t seen_mask, seen_used;
} Pins;

static uint64_t p_hash(const uint8_t *k, size_t len) {
    uint64_t h = 0x243F6A8885A308D3ULL, w;
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        memcpy(&w, k + i, 8);
        h = (h ^ w) * 0x9E3779B97F4A7C15ULL;
        h ^= h >> 31;
    }
    for (; i < len; i++) h = (h ^ k[i]) * 0x100000001B3ULL;
    return h ^ (h >> 29);
}

/* Add (depth, board) to the seen set: 1 when new, 0 when there already, -1 out of memory. */
static int p_seen_add(Pins *p, int depth) {
    if ((p->seen_used + 1) * 2 > p->seen_mask + 1) {
        size_t mask = p->seen_mask * 2 + 1;
        PSeen *t = calloc(mask + 1, sizeof(PSeen));
        if (!t) return -1;
        for (size_t i = 0; i <= p->seen_mask; i++) {
            if (!p->seen[i].k[PB + 1]) continue;
            size_t j = p_hash(p->seen[i].k, PB + 1) & mask;
            while (t[j].k[PB + 1]) j = (j + 1) & mask;
            t[j] = p->seen[i];
        }
        free(p->seen);
        p->seen = t;
        p->seen_mask = mask;
    }
    PSeen e;
    e.k[0] = (uint8_t)depth;
    memcpy(e.k + 1, p->b, PB);
    e.k[PB + 1] = 1; /* the slot is taken */
    size_t j = p_hash(e.k, PB + 1) & p->seen_mask;
    while (p->seen[j].k[PB + 1]) {
        if (memcmp(p->seen[j].k, e.k, PB + 1) == 0) return 0;
        j = (j + 1) & p->seen_mask;
    }
    p->seen[j] = e;
    p->seen_used++;
    return 1;
}

/* _Search._record: the board as it is now, reached by the `len` moves of the path. */
static void p_record(Pins *p, int len, int depth) {
    if (depth > p->best) {
        p->best = depth;
        p->n_res = 0;
    }
    if (depth != p->best) return;
    int marks = 0;
    for (int i = 0; i < len; i++) marks += p->path[i][2];
    for (Py_ssize_t i = 0; i < p->n_res; i++) { /* a roll has a few dozen plays: a scan is enough */
        PResult *r = &p->res[i];
        if (memcmp(r->key, p->b, PB) != 0) continue;
        if (marks < r->marks) { /* a pin made and released on the way reads worse than the plain route */
            r->n = (uint8_t)len;
            r->marks = (uint8_t)marks;
            memcpy(r->mv, p->path, (size_t)len * 3);
        }
        return;
    }
    PResult *res = room(p->res, p->n_res, &p->cap_res, sizeof(PResult), 64);
    if (!res) {
        p->nomem = 1;
        return;
    }
    p->res = res;
    PResult *r = &p->res[p->n_res++];
    memcpy(r->key, p->b, PB);
    r->n = (uint8_t)len;
    r->first = depth ? p->dice[0] : 0;
    r->marks = (uint8_t)marks;
    memcpy(r->mv, p->path, (size_t)len * 3);
}

/* The mover's checkers that stop bearing off now (CheckerMoves.outside). */
static int p_outside(const Pins *p) {
    const uint8_t *me = p->b;
    int n = me[BAR] + p->outside_fixed;
    for (int i = 7; i <= 24; i++) n += me[i];
    return n;
}

/* CheckerMoves.try_move for plakoto: the destination (0: borne off), or -1; *pinned, *released set.
 * Made in place. */
static int p_try(Pins *p, int src, int d, int *pinned, int *released) {
    uint8_t *me = p->b, *opp = p->b + OPP, *pins = p->b + PINS;
    int dst = src - d;
    *pinned = *released = 0;
    if (dst <= 0) {
        if (p_outside(p)) return -1;
        if (dst < 0)
            for (int i = src + 1; i <= 6; i++)
                if (me[i] || pins[i] == 1) return -1;
        dst = 0;
    }
    if (dst) {
        if (pins[dst] == 1) return -1;
        if (pins[dst] == 0) {
            if (opp[dst] >= 2) return -1;
            if (opp[dst] == 1) *pinned = 1;
        }
    }
    me[src]--;
    if (src <= 24 && me[src] == 0 && pins[src] == 2) {
        pins[src] = 0;
        opp[src] = 1;
        *released = 1;
    }
    if (dst) {
        me[dst]++;
        if (*pinned) {
            opp[dst] = 0;
            pins[dst] = 2;
        }
    } else {
        me[0]++;
    }
    return dst;
}

static void p_undo(Pins *p, int src, int dst, int pinned, int released) {
    uint8_t *me = p->b, *opp = p->b + OPP, *pins = p->b + PINS;
    if (dst) {
        me[dst]--;
        if (pinned) {
            opp[dst] = 1;
            pins[dst] = 0;
        }
    } else {
        me[0]--;
    }
    if (released) {
        pins[src] = 2;
        opp[src] = 0;
    }
    me[src]++;
}

static void p_rec(Pins *p, int depth) {
    if (depth == p->n) {
        p_record(p, depth, depth);
        return;
    }
    if (p->budget >= 0 && ++p->calls > p->budget) {
        p->stopped = 1;
        return;
    }
    if (p->budget < 0) p->calls++;
    uint8_t *me = p->b;
    int d = p->dice[depth], moved = 0;
    int hi = me[BAR] ? BAR : 24, lo = me[BAR] ? BAR : 1;
    for (int src = hi; src >= lo && !p->stopped && !p->nomem; src--) {
        if (!me[src]) continue;
        int pinned, released;
        int dst = p_try(p, src, d, &pinned, &released);
        if (dst < 0) continue;
        moved = 1;
        p->path[depth][0] = (uint8_t)src;
        p->path[depth][1] = (uint8_t)dst;
        p->path[depth][2] = (uint8_t)pinned;
        int ends = 0;
        if (dst == 0)
            ends = me[0] == ALL_OFF;
        else if (pinned && dst == 1) /* Plakoto.mother_pin_ends_game, with the checkers left on the start */
            ends = p->mother_rule && !(p->mother_exception && me[24] > 0);
        if (ends) {
            p_record(p, depth + 1, p->n); /* the game ends at once: the play is complete */
        } else {
            int added = p_seen_add(p, depth);
            if (added < 0)
                p->nomem = 1;
            else if (added)
                p_rec(p, depth + 1);
        }
        p_undo(p, src, dst, pinned, released);
    }
    if (!moved && !p->stopped && !p->nomem) p_record(p, depth, depth);
}

PyDoc_STRVAR(search_pins_doc,
             "search_pins(board, dice, mother_rule, mother_exception, bear_off_while_pinned, budget)\n"
             "    -> (results or None, most dice played, boards visited)\n\n"
             "movegen._Search.run for one dice sequence (at most 4) of plakoto: board is the 78 bytes of\n"
             "Board.key() (me, opp, pins); results are [(final board key, (checker moves, first die))] in\n"
             "the order found. budget: boards the search may visit (-1: no limit); past it the count is\n"
             "budget + 1 and no results are given.");

static PyObject *search_pins(PyObject *self, PyObject *args) {
    Py_buffer board, dice;
    int mother_rule, mother_exception, off_while_pinned;
    long long budget;
    if (!PyArg_ParseTuple(args, "y*y*pppL:search_pins", &board, &dice, &mother_rule, &mother_exception,
                          &off_while_pinned, &budget))
        return NULL;
    PyObject *out = NULL;
    Pins *p = NULL;
    if (board.len != PB) {
        PyErr_Format(PyExc_ValueError, "board: %zd bytes, expected %d", board.len, PB);
        goto done;
    }
    if (dice.len < 1 || dice.len > P_DICE) {
        PyErr_Format(PyExc_ValueError, "dice: %zd dice, expected 1 to %d", dice.len, P_DICE);
        goto done;
    }
    const uint8_t *b = board.buf, *dv = dice.buf;
    for (int i = 0; i < PB; i++)
        if (b[i] > ALL_OFF || (i >= PINS && b[i] > 2)) {
            PyErr_Format(PyExc_ValueError, "board: byte %d is %d, out of range", i, b[i]);
            goto done;
        }
    for (Py_ssize_t i = 0; i < dice.len; i++)
        if (dv[i] < 1 || dv[i] > 6) {
            PyErr_Format(PyExc_ValueError, "dice: %d is not a die", dv[i]);
            goto done;
        }
    if (!(p = calloc(1, sizeof(Pins))) || !(p->seen = calloc(256, sizeof(PSeen)))) {
        PyErr_NoMemory();
        goto done;
    }
    p->seen_mask = 255;
    memcpy(p->b, b, PB);
    memcpy(p->dice, dv, (size_t)dice.len);
    p->n = (int)dice.len;
    p->mother_rule = mother_rule;
    p->mother_exception = mother_exception;
    p->budget = budget;
    p->best = -1;
    for (int i = 1; i <= 24; i++)
        if (b[PINS + i] == 1 && (i > 6 || !off_while_pinned)) p->outside_fixed++;
    p_rec(p, 0);
    if (p->nomem) {
        PyErr_NoMemory();
        goto done;
    }
    if (p->stopped) {
        out = Py_BuildValue("(OiL)", Py_None, p->best, p->calls);
        goto done;
    }
    PyObject *found = PyList_New(p->n_res);
    if (!found) goto done;
    for (Py_ssize_t i = 0; i < p->n_res; i++) {
        const PResult *r = &p->res[i];
        PyObject *mv = PyTuple_New(r->n);
        if (!mv) {
            Py_DECREF(found);
            goto done;
        }
        for (int k = 0; k < r->n; k++) {
            PyObject *m = MOVES[r->mv[k][0]][r->mv[k][1]][r->mv[k][2]];
            Py_INCREF(m);
            PyTuple_SET_ITEM(mv, k, m);
        }
        PyObject *item = Py_BuildValue("(y#(Ni))", (const char *)r->key, (Py_ssize_t)PB, mv, (int)r->first);
        if (!item) {
            Py_DECREF(found);
            goto done;
        }
        PyList_SET_ITEM(found, i, item);
    }
    out = Py_BuildValue("(NiL)", found, p->best, p->calls);
done:
    if (p) {
        free(p->res);
        free(p->seen);
        free(p);
    }
    PyBuffer_Release(&board);
    PyBuffer_Release(&dice);
    return out;
}

static PyMethodDef methods[] = {
    {"search", search, METH_VARARGS, search_doc},
    {"results", results, METH_VARARGS, results_doc},
    {"position_results", (PyCFunction)(void (*)(void))position_results, METH_FASTCALL, position_results_doc},
    {"max_depth", max_depth, METH_VARARGS, max_depth_doc},
    {"forward_paths", forward_paths, METH_VARARGS, forward_paths_doc},
    {"backward_path", backward_path, METH_VARARGS, backward_path_doc},
    {"search_blocking", search_blocking, METH_VARARGS, search_blocking_doc},
    {"step_blocking", step_blocking, METH_VARARGS, step_blocking_doc},
    {"checkerwise", checkerwise, METH_VARARGS, checkerwise_doc},
    {"sharing", sharing, METH_VARARGS, sharing_doc},
    {"find_sharing", find_sharing, METH_VARARGS, find_sharing_doc},
    {"search_pins", search_pins, METH_VARARGS, search_pins_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "board_rules._fastgen", "Compiled legal plays of the hitting games (see fastgen.py).",
    -1, methods,
};

PyMODINIT_FUNC PyInit__fastgen(void) {
    for (int n = 0; n <= ALL_OFF; n++)
        if (!COUNTS[n] && !(COUNTS[n] = PyLong_FromLong(n))) return NULL;
    for (int s = 0; s < 26; s++)
        for (int t = 0; t < 26; t++)
            for (int h = 0; h < 2; h++)
                if (!MOVES[s][t][h] && !(MOVES[s][t][h] = Py_BuildValue("(iiO)", s, t, h ? Py_True : Py_False)))
                    return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    static StepApi api = {1, step_core, step_table};
    PyObject *capsule = PyCapsule_New(&api, "board_rules._fastgen._step_blocking", NULL);
    if (!capsule || PyModule_AddObject(m, "_step_blocking", capsule) < 0) {
        Py_XDECREF(capsule);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
