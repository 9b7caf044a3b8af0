/* The compiled twin of vision/field_model.py's Scorer.scores, where the field finder spends its
 * time: each trial's homography, the field model's samples taken through it, the photo's colour read
 * at each, the sums per model region, the edge across the model's triangle sides and the score they
 * make. The photo is read as OpenCV's remap reads a float image (bilinear, positions rounded to 1/32
 * px, the same weights, the same sums in the same order), so the colours are the same floats, and
 * the scores agree with the numpy's to about 1e-13; tests/test_field_compiled.py holds them to it.
 * Optional: where it does not build, the numpy runs.
 *
 * Images are float32, rows of W pixels of 3 channels; homographies float64, row-major 3x3 each.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#define TAB 32 /* OpenCV's INTER_TAB_SIZE: a px cut in 32 */
#define STATS 5 /* per region: three channel sums, the count, the sum of squares */

static float WEIGHTS[TAB * TAB][4];

/* OpenCV's bilinear table for float images: (1 - fy)(1 - fx), (1 - fy) fx, fy (1 - fx), fy fx */
static void tables(void) {
    for (int i = 0; i < TAB; i++)
        for (int j = 0; j < TAB; j++) {
            float fy = (float)i * (1.f / TAB), fx = (float)j * (1.f / TAB);
            float *w = WEIGHTS[i * TAB + j];
            w[0] = (1.f - fy) * (1.f - fx);
            w[1] = (1.f - fy) * fx;
            w[2] = fy * (1.f - fx);
            w[3] = fy * fx;
        }
}

static int clamp(int v, int n) { return v < 0 ? 0 : (v >= n ? n - 1 : v); }

/* The image at (x, y), 3 channels, beyond its edges the edge's own (replicate) or 0 (constant). The
 * replicated reads are of samples inside the photo only; the constant ones may lie anywhere. */
static inline __attribute__((always_inline)) void sample(const float *img, int h, int w, float x, float y,
                                                         int replicate, float out[3]) {
    if (!(fabsf(x) < 1e6f && fabsf(y) < 1e6f)) { /* far off, or not a number: OpenCV reads 0 there (constant) */
        out[0] = out[1] = out[2] = 0.f;
        return;
    }
    int fx = (int)lrintf(x * (float)TAB), fy = (int)lrintf(y * (float)TAB);
    int sx = fx >> 5, sy = fy >> 5; /* floor, as an arithmetic shift */
    const float *wt = WEIGHTS[(fy & (TAB - 1)) * TAB + (fx & (TAB - 1))];
    const float *v[4];
    static const float zero[3] = {0.f, 0.f, 0.f};
    if (sx >= 0 && sx < w - 1 && sy >= 0 && sy < h - 1) {
        const float *s = img + ((size_t)sy * w + sx) * 3;
        v[0] = s;
        v[1] = s + 3;
        v[2] = s + (size_t)w * 3;
        v[3] = s + (size_t)w * 3 + 3;
    } else if (replicate) {
        int x0 = clamp(sx, w), x1 = clamp(sx + 1, w), y0 = clamp(sy, h), y1 = clamp(sy + 1, h);
        v[0] = img + ((size_t)y0 * w + x0) * 3;
        v[1] = img + ((size_t)y0 * w + x1) * 3;
        v[2] = img + ((size_t)y1 * w + x0) * 3;
        v[3] = img + ((size_t)y1 * w + x1) * 3;
    } else {
        if (sx >= w || sx + 1 < 0 || sy >= h || sy + 1 < 0) {
            out[0] = out[1] = out[2] = 0.f;
            return;
        }
        int xs[2] = {sx, sx + 1}, ys[2] = {sy, sy + 1};
        for (int k = 0; k < 4; k++) {
            int xx = xs[k & 1], yy = ys[k >> 1];
            v[k] = (xx >= 0 && xx < w && yy >= 0 && yy < h) ? img + ((size_t)yy * w + xx) * 3 : zero;
        }
    }
    for (int c = 0; c < 3; c++) {
        float t = v[0][c] * wt[0];
        t = t + v[1][c] * wt[1];
        t = t + v[2][c] * wt[2];
        t = t + v[3][c] * wt[3];
        out[c] = t;
    }
}

/* The sums per region (STATS x regions) over the samples (uv: field units; labels: their regions)
 * that the homography m takes inside the photo, and how many do; *front = 0 (and nothing summed)
 * where a sample lies behind the camera. */
static void accumulate(const float *img, int h, int w, const double *g, const uint8_t *lb, Py_ssize_t n, int regions,
                       const double *m, double *s, double *inside, uint8_t *front) {
    memset(s, 0, sizeof(double) * STATS * regions);
    *inside = 0.0;
    *front = 1;
    for (Py_ssize_t i = 0; i < n; i++)
        if (!(g[2 * i] * m[6] + g[2 * i + 1] * m[7] + m[8] > 1e-9)) {
            *front = 0;
            return;
        }
    float right = (float)(w - 1), bottom = (float)(h - 1);
    Py_ssize_t seen = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        double u = g[2 * i], v = g[2 * i + 1];
        double z = u * m[6] + v * m[7] + m[8];
        float x = (float)((u * m[0] + v * m[1] + m[2]) / z), y = (float)((u * m[3] + v * m[4] + m[5]) / z);
        if (!(x >= 0.f && x <= right && y >= 0.f && y <= bottom)) continue;
        float c[3];
        sample(img, h, w, x, y, 1, c);
        double c0 = c[0], c1 = c[1], c2 = c[2];
        int k = lb[i];
        s[k] += c0;
        s[regions + k] += c1;
        s[2 * regions + k] += c2;
        s[3 * regions + k] += 1.0;
        s[4 * regions + k] += c0 * c0 + c1 * c1 + c2 * c2;
        seen++;
    }
    *inside = (double)seen;
}

/* How strongly the colour changes across each of the model's triangle sides (pts: k homogeneous
 * samples in field units, per_side a side) at each sample, through the homography m: sqrt(n' J n) of
 * the structure tensor J (channels Jxx, Jxy, Jyy, 0 beyond the photo), n the side's unit normal. */
static void across_sides(const float *img, int h, int w, const double *p, Py_ssize_t k, int per_side, const double *m,
                         double *out) {
    for (Py_ssize_t side = 0; side < k / per_side; side++) {
        const double *q = p + 3 * side * per_side;
        double xs[per_side], ys[per_side];
        for (int j = 0; j < per_side; j++) {
            const double *r = q + 3 * j;
            double z = r[0] * m[6] + r[1] * m[7] + r[2] * m[8];
            xs[j] = (r[0] * m[0] + r[1] * m[1] + r[2] * m[2]) / z;
            ys[j] = (r[0] * m[3] + r[1] * m[4] + r[2] * m[5]) / z;
        }
        double dx = xs[per_side - 1] - xs[0], dy = ys[per_side - 1] - ys[0];
        double norm = sqrt(dx * dx + dy * dy);
        if (!(norm >= 1e-9)) norm = norm != norm ? norm : 1e-9;
        double nx = -dy / norm, ny = dx / norm;
        for (int j = 0; j < per_side; j++) {
            float c[3];
            sample(img, h, w, (float)xs[j], (float)ys[j], 0, c);
            double v = nx * nx * (double)c[0] + 2 * nx * ny * (double)c[1] + ny * ny * (double)c[2];
            out[side * per_side + j] = v != v ? v : sqrt(v > 0.0 ? v : 0.0); /* NaN stays, as numpy's */
        }
    }
}

static int sized(const Py_buffer *b, Py_ssize_t unit, const char *name, Py_ssize_t *count) {
    if (b->len % unit) {
        PyErr_Format(PyExc_ValueError, "%s: %zd bytes, not a whole number of %zd-byte items", name, b->len, unit);
        return -1;
    }
    *count = b->len / unit;
    return 0;
}

/* The constants of vision/field_model.py that a score uses, in this order (Scorer._constants). */
enum {
    K_NOISE, K_STRONG, K_ASPECT_LO, K_ASPECT_HI, K_ASPECT_FALLOFF, K_POINT_LO, K_POINT_HI, K_POINT_FALLOFF,
    K_FOCAL_LO, K_FOCAL_HI, K_FOCAL_DEFAULT, K_MIN_CONVERGE, K_MIN_BALANCE, K_SIDE_EDGES_MAX,
    K_TOP_EVEN, K_TOP_ODD, K_BACK_TOP, K_BOTTOM_EVEN, K_BOTTOM_ODD, K_BACK_BOTTOM, K_COUNT
};

/* field_model._homographies for one trial: 0 for corners that bound no convex quadrilateral */
static int homography(const double *corners, double m[9]) {
    double c[4][2];
    for (int k = 0; k < 4; k++) {
        c[k][0] = (double)(float)corners[2 * k];
        c[k][1] = (double)(float)corners[2 * k + 1];
    }
    int pos = 0, neg = 0;
    for (int k = 0; k < 4; k++) {
        int k1 = (k + 1) % 4, k2 = (k + 2) % 4;
        double dx = c[k1][0] - c[k][0], dy = c[k1][1] - c[k][1];
        double ex = c[k2][0] - c[k1][0], ey = c[k2][1] - c[k1][1];
        double turn = dx * ey - dy * ex;
        pos += turn > 0;
        neg += turn < 0;
    }
    if (pos != 4 && neg != 4) return 0;
    double x0 = c[0][0], y0 = c[0][1], x1 = c[1][0], y1 = c[1][1], x2 = c[2][0], y2 = c[2][1], x3 = c[3][0], y3 = c[3][1];
    double dx1 = x1 - x2, dx2 = x3 - x2, dx3 = x0 - x1 + x2 - x3;
    double dy1 = y1 - y2, dy2 = y3 - y2, dy3 = y0 - y1 + y2 - y3;
    double den = dx1 * dy2 - dx2 * dy1;
    if (!(fabs(den) > 1e-12)) return 0;
    double g = (dx3 * dy2 - dx2 * dy3) / den, h = (dx1 * dy3 - dx3 * dy1) / den;
    double out[9] = {x1 - x0 + g * x1, x3 - x0 + h * x3, x0, y1 - y0 + g * y1, y3 - y0 + h * y3, y0, g, h, 1.0};
    memcpy(m, out, sizeof(out));
    return 1;
}

/* field_model.field_aspect */
static double aspect(const double m[9], int w, int h, const double *k) {
    double diag = hypot((double)w, (double)h);
    double cx = -w / 2.0, cy = -h / 2.0;
    /* t = [[1, 0, cx], [0, 1, cy], [0, 0, 1]] @ m; h1, h2 its first two columns */
    double h1[3] = {m[0] + cx * m[6], m[3] + cy * m[6], m[6]};
    double h2[3] = {m[1] + cx * m[7], m[4] + cy * m[7], m[7]};
    double c1 = fabs(h1[2]) * diag / fmax(hypot(h1[0], h1[1]), 1e-12);
    double c2 = fabs(h2[2]) * diag / fmax(hypot(h2[0], h2[1]), 1e-12);
    double f2 = (diag * k[K_FOCAL_DEFAULT]) * (diag * k[K_FOCAL_DEFAULT]);
    double est = -(h1[0] * h2[0] + h1[1] * h2[1]) / (h1[2] * h2[2]);
    if (fmin(c1, c2) > k[K_MIN_CONVERGE] && est > 0) {
        double lo = (k[K_FOCAL_LO] * diag) * (k[K_FOCAL_LO] * diag), hi = (k[K_FOCAL_HI] * diag) * (k[K_FOCAL_HI] * diag);
        f2 = isfinite(est) ? fmin(fmax(est, lo), hi) : hi;
    }
    double a = sqrt((h1[0] * h1[0] + h1[1] * h1[1]) / f2 + h1[2] * h1[2]);
    double b = sqrt((h2[0] * h2[0] + h2[1] * h2[1]) / f2 + h2[2] * h2[2]);
    return a / fmax(b, 1e-12);
}

/* field_model._prior */
static double prior(double asp, const double *params, const double *k) {
    double point = 12 * params[2] / fmax(asp * (1 - params[0] - 4 * params[1]), 1e-9);
    double off = fmax(0.0, fmax(k[K_ASPECT_LO] - asp, asp - k[K_ASPECT_HI])) / k[K_ASPECT_FALLOFF];
    double off_point = fmax(0.0, fmax(k[K_POINT_LO] - point, point - k[K_POINT_HI])) / k[K_POINT_FALLOFF];
    return exp(-(off * off) - off_point * off_point);
}

/* the k-th smallest of a (n values, reordered), Hoare's selection */
static double select_kth(double *a, Py_ssize_t n, Py_ssize_t k) {
    Py_ssize_t lo = 0, hi = n - 1;
    while (lo < hi) {
        double pivot = a[(lo + hi) / 2];
        Py_ssize_t i = lo, j = hi;
        while (i <= j) {
            while (a[i] < pivot) i++;
            while (a[j] > pivot) j--;
            if (i <= j) {
                double t = a[i];
                a[i] = a[j];
                a[j] = t;
                i++;
                j--;
            }
        }
        if (k <= j) hi = j;
        else if (k >= i) lo = i;
        else break;
    }
    return a[k];
}

static double median(double *a, Py_ssize_t n) {
    double upper = select_kth(a, n, n / 2);
    if (n % 2) return upper;
    double lower = a[0]; /* the largest of those below n / 2 */
    for (Py_ssize_t i = 1; i < n / 2; i++) lower = fmax(lower, a[i]);
    return (lower + upper) / 2;
}

/* scores(lab, tensor, h, w, uv, labels, regions, sides, per_side, corners, params, constants, out): each
 * trial's score (Scorer.score) at its corners (8 float64 a trial), -1 for corners that bound no field. */
static PyObject *scores(PyObject *self, PyObject *args) {
    Py_buffer lab, tensor, uv, labels, sides, corners, params, constants, out;
    int h, w, regions, per_side;
    if (!PyArg_ParseTuple(args, "y*y*iiy*y*iy*iy*y*y*w*:scores", &lab, &tensor, &h, &w, &uv, &labels, &regions, &sides,
                          &per_side, &corners, &params, &constants, &out))
        return NULL;
    PyObject *result = NULL;
    double *sums = NULL, *across = NULL;
    Py_ssize_t n, labelled, k, trials, np_, nk, cells;
    if (sized(&uv, 2 * sizeof(double), "uv", &n) < 0 || sized(&labels, 1, "labels", &labelled) < 0 ||
        sized(&sides, 3 * sizeof(double), "sides", &k) < 0 || sized(&corners, 8 * sizeof(double), "corners", &trials) < 0 ||
        sized(&params, sizeof(double), "params", &np_) < 0 || sized(&constants, sizeof(double), "constants", &nk) < 0 ||
        sized(&out, sizeof(double), "out", &cells) < 0)
        goto done;
    Py_ssize_t pixels = (Py_ssize_t)h * w * 3 * (Py_ssize_t)sizeof(float);
    if (h < 1 || w < 1 || lab.len != pixels || tensor.len != pixels || labelled != n || n < 1 || regions < 1 ||
        regions > 255 || per_side < 2 || per_side > 1024 || k < per_side || k % per_side || np_ != 3 || nk != K_COUNT ||
        cells != trials) {
        PyErr_SetString(PyExc_ValueError, "scores: the buffers' sizes do not agree");
        goto done;
    }
    const uint8_t *lb = labels.buf;
    const double *kc = constants.buf;
    for (int i = K_TOP_EVEN; i <= K_BACK_BOTTOM; i++)
        if (!(kc[i] >= 0 && kc[i] < regions)) {
            PyErr_SetString(PyExc_ValueError, "constants: a region beyond the labels' regions");
            goto done;
        }
    for (Py_ssize_t i = 0; i < n; i++)
        if (lb[i] >= regions) {
            PyErr_Format(PyExc_ValueError, "labels: %d at sample %zd: expected below %d", lb[i], i, regions);
            goto done;
        }
    sums = PyMem_Malloc(sizeof(double) * STATS * regions);
    across = PyMem_Malloc(sizeof(double) * k);
    if (!sums || !across) {
        PyErr_NoMemory();
        goto done;
    }
    const double *pr = params.buf, *cs = corners.buf;
    double *res = out.buf;
    int rows[2][3] = {{(int)kc[K_TOP_EVEN], (int)kc[K_TOP_ODD], (int)kc[K_BACK_TOP]},
                      {(int)kc[K_BOTTOM_EVEN], (int)kc[K_BOTTOM_ODD], (int)kc[K_BACK_BOTTOM]}};
    Py_BEGIN_ALLOW_THREADS;
    for (Py_ssize_t t = 0; t < trials; t++) {
        double m[9];
        uint8_t front = 1;
        double inside = 0.0;
        res[t] = -1.0;
        if (!homography(cs + 8 * t, m)) continue;
        accumulate(lab.buf, h, w, uv.buf, lb, n, regions, m, sums, &inside, &front);
        if (!front || inside < 0.3 * (double)n) continue;
        const double *cnt = sums + 3 * regions, *sq = sums + 4 * regions;
        double n_in = 0.0, total_sum[3] = {0.0, 0.0, 0.0}, between = 0.0, squares = 0.0;
        for (int r = 0; r < regions; r++) {
            n_in += cnt[r];
            squares += sq[r];
            double safe = fmax(cnt[r], 1e-9);
            for (int c = 0; c < 3; c++) {
                total_sum[c] += sums[c * regions + r];
                between += sums[c * regions + r] * sums[c * regions + r] / safe;
            }
        }
        n_in = fmax(n_in, 1e-9);
        double tt = total_sum[0] * total_sum[0] + total_sum[1] * total_sum[1] + total_sum[2] * total_sum[2];
        between -= tt / n_in;
        double total = squares - tt / n_in;
        double shown[2];
        for (int row = 0; row < 2; row++) {
            int back = rows[row][2];
            double contrast = 0.0;
            for (int e = 0; e < 2; e++) {
                int r = rows[row][e];
                double d2 = 0.0;
                for (int c = 0; c < 3; c++) {
                    double d = sums[c * regions + r] / fmax(cnt[r], 1e-9) - sums[c * regions + back] / fmax(cnt[back], 1e-9);
                    d2 += d * d;
                }
                contrast += cnt[r] * d2;
            }
            shown[row] = contrast / fmax(cnt[rows[row][0]] + cnt[rows[row][1]] + cnt[back], 1.0);
        }
        double balance = fmin(shown[0], shown[1]) / fmax(fmax(shown[0], shown[1]), 1e-9);
        across_sides(tensor.buf, h, w, sides.buf, k, per_side, m, across);
        double edge = median(across, k) / kc[K_STRONG];
        res[t] = between / (total + kc[K_NOISE] * n_in) * sqrt(inside / (double)n) * prior(aspect(m, w, h, kc), pr, kc) *
                 fmin(1.0, balance / kc[K_MIN_BALANCE]) * sqrt(fmin(edge, kc[K_SIDE_EDGES_MAX]));
    }
    Py_END_ALLOW_THREADS;
    result = Py_NewRef(Py_None);
done:
    PyMem_Free(sums);
    PyMem_Free(across);
    PyBuffer_Release(&lab);
    PyBuffer_Release(&tensor);
    PyBuffer_Release(&uv);
    PyBuffer_Release(&labels);
    PyBuffer_Release(&sides);
    PyBuffer_Release(&corners);
    PyBuffer_Release(&params);
    PyBuffer_Release(&constants);
    PyBuffer_Release(&out);
    return result;
}

static PyMethodDef methods[] = {
    {"scores", scores, METH_VARARGS, "Each trial's score of the field model at its corners."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_fieldscore", NULL, -1, methods};

PyMODINIT_FUNC PyInit__fieldscore(void) {
    tables();
    return PyModule_Create(&module);
}
