/* Fast path for ingest.spans.parse_spans: a spans.jsonl file whose every line is a well-formed
 * OpenTelemetry SDK span line (what the workbench writes) in a restricted JSON grammar.
 *
 *   configure(fields, owned, owned_columns, grounding_mode) -- once, by ingest/spans.py at load
 *   sdk_rows(text, inv, iso_times) -> list of span row tuples, or None ("decline")
 *
 * The constants come from ingest/spans.py, where they are defined once: `fields` the names of a
 * row's columns in its order (spans.FIELDS), `owned` the span attributes copied into columns of
 * their own (spans.OWNED) and `owned_columns` those columns' names, `grounding_mode` the owned
 * attribute whose JSON text is kept too. configure raises ValueError unless every column of
 * `fields` is one this file fills, each once (the row width is checked there, not per row).
 *
 * The rows are exactly those ingest/spans.py builds (_sdk_line -> _row(..., fast=True)); on None
 * the caller runs the Python path, which handles everything. Anything outside the restricted
 * grammar or the well-formed SDK shape declines the WHOLE file:
 *
 *   - text: str (pure ASCII) or bytes, at most 4 MiB; lines split on '\n' (the only line break
 *     an ASCII text without control characters can hold, so the same lines as str.splitlines);
 *   - a line of spaces only is blank (skipped, still counted);
 *   - every other line: one JSON object; objects, arrays, strings of 0x20..0x7E without '"'
 *     and '\\' (so no escapes), integers -?(0|[1-9][0-9]*) except "-0" with at most 18 digits,
 *     true, false, null; whitespace ' ' only; nesting depth <= 64; no duplicate key in any
 *     object; at most 128 keys per object; no run of 19+ digits anywhere (the Python path
 *     then uses json.loads, jsontext.needs_exact);
 *   - no top-level "resourceSpans" / "traceId" (OTLP forms);
 *   - the _well_formed_sdk shape: context object with string span_id/trace_id; string name,
 *     start_time, end_time; parent_id absent/null/string; attributes absent/null/object;
 *     iso_times accepts both times;
 *   - dd.* values, dd.grounding_mode, status.status_code and resource.attributes.service.name
 *     are scalars (an array or object there declines).
 *
 * Times: iso_times (the Python function, passed in) is called for every time string, except
 * that a string of the exact form YYYY-MM-DDTHH:MM:SS.ffffffZ whose second (first 19
 * characters) was already parsed in this call is derived from that second the way iso_times'
 * own per-second shortcut does: us = second_us + ffffff, key = us / 1e6 * 1e9 (doubles, exact
 * while |us| < 2**53, which the cache requires).
 *
 * Errors: only real Python errors (MemoryError) propagate; input problems return None.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "_native_config.h"

#define MAX_SIZE ((Py_ssize_t)4 * 1024 * 1024)
#define MAX_DEPTH 64
#define MAX_OBJECT_KEYS 128
#define KEY_STACK 4096
#define MAX_DIGITS 18
#define TIME_CACHE 8
#define MAX_OWNED 32

/* outcome of a step: OK, DECLINE (input outside the fast path), ERROR (Python exception set) */
#define OK 0
#define DECLINE 1
#define ERROR (-1)

enum { A_ABSENT = 0, A_STR, A_INT, A_TRUE, A_FALSE, A_NULL, A_ARR, A_OBJ };
enum { R_OTHER = 0, R_TOP, R_CONTEXT, R_STATUS, R_RESOURCE, R_RESATTRS, R_ATTRS };
enum {
    S_NAME = 0, S_CONTEXT, S_PARENT, S_START, S_END, S_ATTRS, S_STATUS, S_RESOURCE,
    S_SPAN_ID, S_TRACE_ID, S_STATUS_CODE, S_RES_ATTRS, S_SERVICE, S_DD0, NSLOTS = S_DD0 + MAX_OWNED,
    S_NONE = -1, S_REJECT = -2
};

/* The columns this file fills besides the owned attributes' (their meaning is in make_row; their
 * names are those of spans.FIELDS); C_OWNED0 + i is the column of owned attribute i. */
enum {
    C_INV, C_ORD, C_LINE_NO, C_FORMAT, C_NAME, C_NAME_JSON, C_SPAN_ID, C_TRACE_ID, C_PARENT_ID,
    C_START, C_END, C_GM_JSON, C_GM_IS_STR, C_STATUS, C_SERVICE, C_ATTRS, C_START_NS, C_END_NS,
    C_START_WB, C_END_WB, N_FIXED, C_OWNED0 = N_FIXED, MAX_COLS = N_FIXED + MAX_OWNED
};
static const char *const FIXED_NAMES[N_FIXED] = {
    "invocation_id", "ord", "line_no", "source_format", "name", "name_json", "span_id", "trace_id",
    "parent_id", "start_time", "end_time", "dd_grounding_mode_json", "dd_grounding_mode_is_string",
    "status_code", "service_name", "attributes", "start_unix_nano", "end_unix_nano",
    "start_workbench_ns", "end_workbench_ns"};

/* set by configure(): the row width (0 = not configured), each column's position in a row, the
 * owned attribute keys (pointing into CONFIG, kept alive) and which of them is the grounding mode */
static Py_ssize_t WIDTH;
static Py_ssize_t POS[MAX_COLS];
static int N_OWNED, GM_INDEX;
static const char *OWNED[MAX_OWNED];
static Py_ssize_t OWNED_LEN[MAX_OWNED];
static unsigned char OWNED_FIRST[256]; /* 1: some owned key starts with this byte */
static PyObject *CONFIG;

typedef struct {
    int t;
    const char *b, *e; /* strings: the characters between the quotes; others: the whole token */
} Val;

typedef struct {
    const char *k;
    Py_ssize_t n;
} Key;

typedef struct {
    const char *end; /* end of the current line */
    Key *keys;
    Py_ssize_t nkeys;
    Val slot[NSLOTS];
    /* the last "resource" value parsed (the same text on nearly every line): identical text
     * parses to the identical result, so it is compared instead of parsed again */
    const char *res_b;
    Py_ssize_t res_n;
    Val res_attrs, res_service;
} Parser;

/* 1: a character a string may hold as it is (0x20..0x7E except '"' and '\\'), else 0 */
static unsigned char CLS[256];

static void
init_tables(void)
{
    for (int c = 0x20; c <= 0x7E; c++)
        CLS[c] = 1;
    CLS['"'] = 0;
    CLS['\\'] = 0;
}

static inline int
is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* jsontext.needs_exact: a run of 19 or more ASCII digits anywhere. Such a run covers a position
 * i with i % 19 == 18, so only those are looked at (and the run around them measured). */
static int
has_long_digit_run(const char *d, Py_ssize_t n)
{
    for (Py_ssize_t i = MAX_DIGITS; i < n; i += MAX_DIGITS + 1) {
        if (!is_digit(d[i]))
            continue;
        Py_ssize_t lo = i, hi = i;
        while (lo > 0 && is_digit(d[lo - 1]) && hi - lo < MAX_DIGITS)
            lo--;
        while (hi + 1 < n && is_digit(d[hi + 1]) && hi - lo < MAX_DIGITS)
            hi++;
        if (hi - lo >= MAX_DIGITS)
            return 1;
    }
    return 0;
}

#define ONES 0x0101010101010101ULL
#define HIGHS 0x8080808080808080ULL
/* some byte of w is zero / below n (n <= 128) / above n (n <= 127): exact as booleans */
#define HAS_ZERO(w) (((w) - ONES) & ~(w) & HIGHS)
#define HAS_LESS(w, n) (((w) - ONES * (n)) & ~(w) & HIGHS)
#define HAS_MORE(w, n) ((((w) + ONES * (127 - (n))) | (w)) & HIGHS)

static inline const char *
skip_spaces(const char *p, const char *end)
{
    while (p < end && *p == ' ')
        p++;
    return p;
}

/* After an array element or object member: past a ',' (and spaces) -> 1, past `close` -> 0,
 * anything else -> -1 (decline). */
static inline int
after_member(const char **pp, const char *end, char close)
{
    const char *p = skip_spaces(*pp, end);
    if (p >= end)
        return -1;
    if (*p == ',') {
        *pp = skip_spaces(p + 1, end);
        return 1;
    }
    if (*p == close) {
        *pp = p + 1;
        return 0;
    }
    return -1;
}

/* p at the opening quote; on OK *pp is just past the closing quote */
static inline int
scan_string(const char **pp, const char *end, const char **b, const char **e)
{
    const char *p = *pp + 1;
    *b = p;
    /* eight characters at a time while none is '"', '\\', below 0x20 or above 0x7E */
    while (end - p >= 8) {
        uint64_t w, q, s;
        memcpy(&w, p, 8);
        q = w ^ (ONES * '"');
        s = w ^ (ONES * '\\');
        if (HAS_ZERO(q) | HAS_ZERO(s) | HAS_LESS(w, 0x20) | HAS_MORE(w, 0x7E))
            break;
        p += 8;
    }
    while (p < end && CLS[(unsigned char)*p])
        p++;
    if (p >= end || *p != '"')
        return DECLINE;
    *e = p;
    *pp = p + 1;
    return OK;
}

#define key_is(k, n, lit) ((n) == (Py_ssize_t)sizeof(lit) - 1 && memcmp((k), (lit), sizeof(lit) - 1) == 0)

/* which slot a member of an object in `role` fills, and the role of its value */
static int
classify(int role, const char *k, Py_ssize_t n, int *child)
{
    *child = R_OTHER;
    switch (role) {
    case R_TOP:
        if (key_is(k, n, "name")) return S_NAME;
        if (key_is(k, n, "context")) { *child = R_CONTEXT; return S_CONTEXT; }
        if (key_is(k, n, "parent_id")) return S_PARENT;
        if (key_is(k, n, "start_time")) return S_START;
        if (key_is(k, n, "end_time")) return S_END;
        if (key_is(k, n, "attributes")) { *child = R_ATTRS; return S_ATTRS; }
        if (key_is(k, n, "status")) { *child = R_STATUS; return S_STATUS; }
        if (key_is(k, n, "resource")) { *child = R_RESOURCE; return S_RESOURCE; }
        if (key_is(k, n, "resourceSpans") || key_is(k, n, "traceId")) return S_REJECT;
        return S_NONE;
    case R_CONTEXT:
        if (key_is(k, n, "span_id")) return S_SPAN_ID;
        if (key_is(k, n, "trace_id")) return S_TRACE_ID;
        return S_NONE;
    case R_STATUS:
        return key_is(k, n, "status_code") ? S_STATUS_CODE : S_NONE;
    case R_RESOURCE:
        if (key_is(k, n, "attributes")) { *child = R_RESATTRS; return S_RES_ATTRS; }
        return S_NONE;
    case R_RESATTRS:
        return key_is(k, n, "service.name") ? S_SERVICE : S_NONE;
    case R_ATTRS:
        if (n > 0 && OWNED_FIRST[(unsigned char)k[0]]) {
            for (int i = 0; i < N_OWNED; i++)
                if (n == OWNED_LEN[i] && memcmp(k, OWNED[i], (size_t)n) == 0)
                    return S_DD0 + i;
        }
        return S_NONE;
    default:
        return S_NONE;
    }
}

/* Parse one value at *pp (no leading spaces). depth = nesting depth of the value's container. */
static int
parse_value(Parser *ps, const char **pp, int depth, int role, Val *out)
{
    const char *p = *pp, *end = ps->end;
    if (p >= end)
        return DECLINE;
    char c = *p;
    if (c == '"') {
        out->t = A_STR;
        if (scan_string(&p, end, &out->b, &out->e) != OK)
            return DECLINE;
    }
    else if (c == '-' || (c >= '0' && c <= '9')) {
        const char *b = p;
        if (c == '-') {
            p++;
            if (p >= end)
                return DECLINE;
        }
        const char *d = p;
        if (*p == '0') {
            if (c == '-')
                return DECLINE; /* -0: parses to 0, so its text is not the value's */
            p++;
        }
        else if (*p >= '1' && *p <= '9') {
            while (p < end && *p >= '0' && *p <= '9')
                p++;
        }
        else {
            return DECLINE;
        }
        if (p - d > MAX_DIGITS)
            return DECLINE;
        out->t = A_INT;
        out->b = b;
        out->e = p;
        /* a following '.', 'e', 'E' or digit is rejected by the caller's grammar */
    }
    else if (c == 't' || c == 'f' || c == 'n') {
        const char *lit = c == 't' ? "true" : c == 'f' ? "false" : "null";
        Py_ssize_t m = (Py_ssize_t)strlen(lit);
        if (end - p < m || memcmp(p, lit, (size_t)m) != 0)
            return DECLINE;
        out->t = c == 't' ? A_TRUE : c == 'f' ? A_FALSE : A_NULL;
        out->b = p;
        p += m;
        out->e = p;
    }
    else if (c == '[') {
        if (depth >= MAX_DEPTH)
            return DECLINE;
        out->b = p;
        p = skip_spaces(p + 1, end);
        if (p < end && *p == ']') {
            p++;
        }
        else {
            for (;;) {
                Val v;
                if (parse_value(ps, &p, depth + 1, R_OTHER, &v) != OK)
                    return DECLINE;
                int more = after_member(&p, end, ']');
                if (more < 0)
                    return DECLINE;
                if (!more)
                    break;
            }
        }
        out->t = A_ARR;
        out->e = p;
    }
    else if (c == '{') {
        if (depth >= MAX_DEPTH)
            return DECLINE;
        if (role == R_RESOURCE && ps->res_n > 0 && end - p >= ps->res_n && memcmp(p, ps->res_b, (size_t)ps->res_n) == 0) {
            ps->slot[S_RES_ATTRS] = ps->res_attrs;
            ps->slot[S_SERVICE] = ps->res_service;
            out->t = A_OBJ;
            out->b = p;
            out->e = *pp = p + ps->res_n;
            return OK;
        }
        out->b = p;
        Py_ssize_t base = ps->nkeys;
        p = skip_spaces(p + 1, end);
        if (p < end && *p == '}') {
            p++;
        }
        else {
            for (;;) {
                const char *kb, *ke;
                if (p >= end || *p != '"' || scan_string(&p, end, &kb, &ke) != OK)
                    return DECLINE;
                Py_ssize_t kn = ke - kb;
                for (Py_ssize_t i = base; i < ps->nkeys; i++) {
                    if (ps->keys[i].n == kn && ps->keys[i].k[0] == kb[0] && memcmp(ps->keys[i].k, kb, (size_t)kn) == 0)
                        return DECLINE; /* duplicate key: json.loads keeps the last value */
                }
                if (ps->nkeys >= KEY_STACK || ps->nkeys - base >= MAX_OBJECT_KEYS)
                    return DECLINE;
                ps->keys[ps->nkeys].k = kb;
                ps->keys[ps->nkeys].n = kn;
                ps->nkeys++;
                p = skip_spaces(p, end);
                if (p >= end || *p != ':')
                    return DECLINE;
                p = skip_spaces(p + 1, end);
                int child;
                int s = role == R_OTHER ? S_NONE : classify(role, kb, kn, &child);
                if (s == S_REJECT)
                    return DECLINE;
                Val v;
                if (parse_value(ps, &p, depth + 1, s == S_NONE ? R_OTHER : child, &v) != OK)
                    return DECLINE;
                if (s >= 0)
                    ps->slot[s] = v;
                int more = after_member(&p, end, '}');
                if (more < 0)
                    return DECLINE;
                if (!more)
                    break;
            }
        }
        ps->nkeys = base;
        out->t = A_OBJ;
        out->e = p;
        if (role == R_RESOURCE) {
            ps->res_b = out->b;
            ps->res_n = out->e - out->b;
            ps->res_attrs = ps->slot[S_RES_ATTRS];
            ps->res_service = ps->slot[S_SERVICE];
        }
    }
    else {
        return DECLINE;
    }
    *pp = p;
    return OK;
}

/* ------------------------------------------------------------------------------ Python values */

static PyObject *S_SDK, *S_TRUE_STR, *S_FALSE_STR, *S_NONE_STR, *S_TRUE_JSON, *S_FALSE_JSON,
    *S_NULL_JSON, *S_EMPTY_OBJ;

static PyObject *
mkstr(const char *b, Py_ssize_t n)
{
    PyObject *o = PyUnicode_New(n, 127);
    if (o != NULL && n > 0)
        memcpy(PyUnicode_1BYTE_DATA(o), b, (size_t)n);
    return o;
}

/* '"' + s + '"' (json.dumps of a printable ASCII string without '"' and '\\') */
static PyObject *
mkquoted(const char *b, Py_ssize_t n)
{
    PyObject *o = PyUnicode_New(n + 2, 127);
    if (o != NULL) {
        Py_UCS1 *d = PyUnicode_1BYTE_DATA(o);
        d[0] = '"';
        if (n > 0)
            memcpy(d + 1, b, (size_t)n);
        d[n + 1] = '"';
    }
    return o;
}

/* The last string made for one column: values repeated from line to line (trace id, service,
 * agent id, ...) share one str object. */
typedef struct {
    const char *b;
    Py_ssize_t n;
    PyObject *obj;
} Last;

static PyObject *
cached_str(Last *c, const char *b, Py_ssize_t n)
{
    if (c->obj != NULL && c->n == n && memcmp(c->b, b, (size_t)n) == 0) {
        Py_INCREF(c->obj);
        return c->obj;
    }
    PyObject *o = mkstr(b, n);
    if (o != NULL) {
        Py_XSETREF(c->obj, o);
        Py_INCREF(o);
        c->b = b;
        c->n = n;
    }
    return o;
}

static inline PyObject *
newref(PyObject *o)
{
    Py_INCREF(o);
    return o;
}

/* vstr() of a scalar: the string itself, the integer's digits, True/False/None */
static int
vstr_of(const Val *v, Last *c, PyObject **out)
{
    switch (v->t) {
    case A_STR:
    case A_INT:
        *out = cached_str(c, v->b, v->e - v->b);
        break;
    case A_TRUE:
        *out = newref(S_TRUE_STR);
        break;
    case A_FALSE:
        *out = newref(S_FALSE_STR);
        break;
    case A_NULL:
        *out = newref(S_NONE_STR);
        break;
    default:
        return DECLINE;
    }
    return *out == NULL ? ERROR : OK;
}

/* jsontext.dumps() of a scalar */
static int
dumps_of(const Val *v, PyObject **out)
{
    switch (v->t) {
    case A_STR:
        *out = mkquoted(v->b, v->e - v->b);
        break;
    case A_INT:
        *out = mkstr(v->b, v->e - v->b);
        break;
    case A_TRUE:
        *out = newref(S_TRUE_JSON);
        break;
    case A_FALSE:
        *out = newref(S_FALSE_JSON);
        break;
    case A_NULL:
        *out = newref(S_NULL_JSON);
        break;
    default:
        return DECLINE;
    }
    return *out == NULL ? ERROR : OK;
}

/* An id without a leading "0x" (jsontext.strip0x) */
static PyObject *
strip0x(const Val *v, Last *c)
{
    const char *b = v->b;
    if (v->e - b >= 2 && b[0] == '0' && b[1] == 'x')
        b += 2;
    return c != NULL ? cached_str(c, b, v->e - b) : mkstr(b, v->e - b);
}

/* The object text [b, e) without whitespace outside strings: orjson.dumps of the parsed dict
 * under this grammar (keys in text order, no duplicates, integer tokens as written). */
static int
minify(const Val *v, char **buf, Py_ssize_t *cap, PyObject **out)
{
    Py_ssize_t need = v->e - v->b;
    if (need > *cap) {
        char *nb = PyMem_Realloc(*buf, (size_t)need);
        if (nb == NULL) {
            PyErr_NoMemory();
            return ERROR;
        }
        *buf = nb;
        *cap = need;
    }
    const char *p = v->b, *e = v->e;
    char *q = *buf;
    while (p < e) {
        char c = *p;
        if (c == ' ') {
            p++;
        }
        else if (c == '"') {
            const char *s = memchr(p + 1, '"', (size_t)(e - p - 1));
            if (s == NULL)
                return DECLINE; /* cannot happen for a parsed object */
            memcpy(q, p, (size_t)(s + 1 - p));
            q += s + 1 - p;
            p = s + 1;
        }
        else {
            *q++ = c;
            p++;
        }
    }
    *out = mkstr(*buf, q - *buf);
    return *out == NULL ? ERROR : OK;
}

/* ----------------------------------------------------------------------------------- times */

typedef struct {
    char prefix[19];
    long long second_us;
} TimeEntry;

typedef struct {
    TimeEntry e[TIME_CACHE];
    int n, next;
} TimeCache;

#define EXACT_DOUBLE ((long long)1 << 53)

/* YYYY-MM-DDTHH:MM:SS.ffffffZ with HH <= 23, MM <= 59, SS <= 59; *micro = ffffff */
static int
utc_micros_form(const char *s, Py_ssize_t n, long long *micro)
{
    static const char shape[] = "dddd-dd-ddTdd:dd:dd.ddddddZ";
    if (n != 27)
        return 0;
    for (int i = 0; i < 27; i++) {
        char want = shape[i];
        if (want == 'd') {
            if (s[i] < '0' || s[i] > '9')
                return 0;
        }
        else if (s[i] != want) {
            return 0;
        }
    }
    if (s[11] > '2' || (s[11] == '2' && s[12] > '3') || s[14] > '5' || s[17] > '5')
        return 0;
    long long m = 0;
    for (int i = 20; i < 26; i++)
        m = m * 10 + (s[i] - '0');
    *micro = m;
    return 1;
}

/* iso_times(value) -> new refs *us (int), *wb (float) and the microseconds as a C value
 * (*fits = 0 when they do not fit a long long). */
static int
get_time(const Val *v, PyObject *iso, TimeCache *tc, PyObject **us_obj, PyObject **wb_obj,
         long long *us, int *fits)
{
    const char *s = v->b;
    Py_ssize_t n = v->e - v->b;
    long long micro = 0;
    int form = utc_micros_form(s, n, &micro);
    if (form) {
        for (int i = 0; i < tc->n; i++) {
            if (memcmp(tc->e[i].prefix, s, 19) == 0) {
                long long u = tc->e[i].second_us + micro;
                *us = u;
                *fits = 1;
                *us_obj = PyLong_FromLongLong(u);
                if (*us_obj == NULL)
                    return ERROR;
                *wb_obj = PyFloat_FromDouble((double)u / 1000000.0 * 1e9);
                if (*wb_obj == NULL) {
                    Py_CLEAR(*us_obj);
                    return ERROR;
                }
                return OK;
            }
        }
    }
    PyObject *arg = mkstr(s, n);
    if (arg == NULL)
        return ERROR;
    PyObject *res = PyObject_CallOneArg(iso, arg);
    Py_DECREF(arg);
    if (res == NULL) {
        if (PyErr_ExceptionMatches(PyExc_MemoryError))
            return ERROR;
        PyErr_Clear(); /* TimeProblem, OverflowError, ...: the Python path reports it */
        return DECLINE;
    }
    if (!PyTuple_CheckExact(res) || PyTuple_GET_SIZE(res) != 2 || !PyLong_CheckExact(PyTuple_GET_ITEM(res, 0))
        || !PyFloat_CheckExact(PyTuple_GET_ITEM(res, 1))) {
        Py_DECREF(res);
        return DECLINE;
    }
    int overflow = 0;
    long long u = PyLong_AsLongLongAndOverflow(PyTuple_GET_ITEM(res, 0), &overflow);
    if (u == -1 && PyErr_Occurred()) {
        Py_DECREF(res);
        return ERROR;
    }
    *fits = overflow == 0;
    *us = u;
    *us_obj = newref(PyTuple_GET_ITEM(res, 0));
    *wb_obj = newref(PyTuple_GET_ITEM(res, 1));
    Py_DECREF(res);
    if (form && *fits && u - micro > -EXACT_DOUBLE && u - micro + 1000000 < EXACT_DOUBLE) {
        TimeEntry *e = &tc->e[tc->next];
        memcpy(e->prefix, s, 19);
        e->second_us = u - micro;
        tc->next = (tc->next + 1) % TIME_CACHE;
        if (tc->n < TIME_CACHE)
            tc->n++;
    }
    return OK;
}

/* _ns: microseconds * 1000 when that fits a BIGINT, else None */
static PyObject *
ns_of(long long us, int fits)
{
    if (!fits || us < LLONG_MIN / 1000 || us > LLONG_MAX / 1000)
        Py_RETURN_NONE;
    return PyLong_FromLongLong(us * 1000);
}

/* ------------------------------------------------------------------------------------ rows */

/* column c (C_*) of the row: at the position configure() gave it */
#define SET(c, expr)                                   \
    do {                                               \
        PyObject *o_ = (expr);                         \
        if (o_ == NULL)                                \
            goto error;                                \
        PyTuple_SET_ITEM(row, POS[c], o_);             \
    } while (0)

#define STEP(c, call)                                  \
    do {                                               \
        PyObject *o_ = NULL;                           \
        int r_ = (call);                               \
        if (r_ != OK) {                                \
            rc = r_;                                   \
            goto fail;                                 \
        }                                              \
        PyTuple_SET_ITEM(row, POS[c], o_);             \
    } while (0)

/* One row (a new tuple in *out) from the slots of a parsed line. */
static int
make_row(Parser *ps, PyObject *inv, Py_ssize_t ord, Py_ssize_t line_no, PyObject *iso, TimeCache *tc,
         Last *last, char **buf, Py_ssize_t *cap, PyObject **out)
{
    Val *sl = ps->slot;
    /* _well_formed_sdk */
    if (sl[S_CONTEXT].t != A_OBJ || sl[S_NAME].t != A_STR || sl[S_START].t != A_STR || sl[S_END].t != A_STR
        || !(sl[S_PARENT].t == A_ABSENT || sl[S_PARENT].t == A_NULL || sl[S_PARENT].t == A_STR)
        || !(sl[S_ATTRS].t == A_ABSENT || sl[S_ATTRS].t == A_NULL || sl[S_ATTRS].t == A_OBJ)
        || sl[S_SPAN_ID].t != A_STR || sl[S_TRACE_ID].t != A_STR)
        return DECLINE;
    for (int i = 0; i < N_OWNED; i++)
        if (sl[S_DD0 + i].t == A_ARR || sl[S_DD0 + i].t == A_OBJ)
            return DECLINE;
    if (sl[S_STATUS_CODE].t == A_ARR || sl[S_STATUS_CODE].t == A_OBJ || sl[S_SERVICE].t == A_ARR
        || sl[S_SERVICE].t == A_OBJ)
        return DECLINE;

    int rc = OK;
    PyObject *row = PyTuple_New(WIDTH);
    if (row == NULL)
        return ERROR;
    long long start_us = 0, end_us = 0;
    int start_fits = 0, end_fits = 0;
    PyObject *su = NULL, *sw = NULL, *eu = NULL, *ew = NULL;
    rc = get_time(&sl[S_START], iso, tc, &su, &sw, &start_us, &start_fits);
    if (rc != OK)
        goto fail;
    PyTuple_SET_ITEM(row, POS[C_START], su);
    PyTuple_SET_ITEM(row, POS[C_START_WB], sw);
    rc = get_time(&sl[S_END], iso, tc, &eu, &ew, &end_us, &end_fits);
    if (rc != OK)
        goto fail;
    PyTuple_SET_ITEM(row, POS[C_END], eu);
    PyTuple_SET_ITEM(row, POS[C_END_WB], ew);

    SET(C_INV, newref(inv));
    SET(C_ORD, PyLong_FromSsize_t(ord));
    SET(C_LINE_NO, PyLong_FromSsize_t(line_no));
    SET(C_FORMAT, newref(S_SDK));
    SET(C_NAME, cached_str(&last[C_NAME], sl[S_NAME].b, sl[S_NAME].e - sl[S_NAME].b));
    SET(C_NAME_JSON, mkquoted(sl[S_NAME].b, sl[S_NAME].e - sl[S_NAME].b));
    SET(C_SPAN_ID, strip0x(&sl[S_SPAN_ID], NULL));
    SET(C_TRACE_ID, strip0x(&sl[S_TRACE_ID], &last[C_TRACE_ID]));
    if (sl[S_PARENT].t == A_STR && sl[S_PARENT].e > sl[S_PARENT].b)
        SET(C_PARENT_ID, strip0x(&sl[S_PARENT], NULL));
    else
        SET(C_PARENT_ID, newref(Py_None));
    for (int i = 0; i < N_OWNED; i++) {
        if (sl[S_DD0 + i].t == A_ABSENT)
            SET(C_OWNED0 + i, newref(Py_None));
        else
            STEP(C_OWNED0 + i, vstr_of(&sl[S_DD0 + i], &last[C_OWNED0 + i], &o_));
    }
    if (sl[S_DD0 + GM_INDEX].t == A_ABSENT) {
        SET(C_GM_JSON, newref(Py_None));
        SET(C_GM_IS_STR, newref(Py_False));
    }
    else {
        STEP(C_GM_JSON, dumps_of(&sl[S_DD0 + GM_INDEX], &o_));
        SET(C_GM_IS_STR, newref(sl[S_DD0 + GM_INDEX].t == A_STR ? Py_True : Py_False));
    }
    if (sl[S_STATUS_CODE].t == A_ABSENT)
        SET(C_STATUS, newref(Py_None));
    else
        STEP(C_STATUS, vstr_of(&sl[S_STATUS_CODE], &last[C_STATUS], &o_));
    if (sl[S_SERVICE].t == A_ABSENT)
        SET(C_SERVICE, newref(Py_None));
    else
        STEP(C_SERVICE, vstr_of(&sl[S_SERVICE], &last[C_SERVICE], &o_));
    if (sl[S_ATTRS].t == A_OBJ)
        STEP(C_ATTRS, minify(&sl[S_ATTRS], buf, cap, &o_));
    else
        SET(C_ATTRS, newref(S_EMPTY_OBJ));
    SET(C_START_NS, ns_of(start_us, start_fits));
    SET(C_END_NS, ns_of(end_us, end_fits));
    *out = row;
    return OK;
error:
    rc = ERROR;
fail:
    Py_DECREF(row);
    return rc;
}

static PyObject *
sdk_rows(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "sdk_rows(text, inv, iso_times) takes 3 arguments");
        return NULL;
    }
    PyObject *text = args[0], *inv = args[1], *iso = args[2];
    const char *data;
    Py_ssize_t size;
    if (PyUnicode_Check(text)) {
        if (PyUnicode_READY(text) < 0)
            return NULL;
        if (!PyUnicode_IS_ASCII(text))
            Py_RETURN_NONE;
        data = (const char *)PyUnicode_1BYTE_DATA(text);
        size = PyUnicode_GET_LENGTH(text);
    }
    else if (PyBytes_Check(text)) {
        data = PyBytes_AS_STRING(text);
        size = PyBytes_GET_SIZE(text);
    }
    else {
        PyErr_SetString(PyExc_TypeError, "sdk_rows: text must be str or bytes");
        return NULL;
    }
    if (WIDTH == 0) {
        PyErr_SetString(PyExc_RuntimeError, "sdk_rows: configure() has not been called (ingest/spans.py does)");
        return NULL;
    }
    if (!PyCallable_Check(iso)) {
        PyErr_SetString(PyExc_TypeError, "sdk_rows: iso_times must be callable");
        return NULL;
    }
    if (size > MAX_SIZE || has_long_digit_run(data, size))
        Py_RETURN_NONE;

    /* text must stay alive (and unchanged: str and bytes are immutable) while we point into it */
    Py_INCREF(text);
    PyObject *rows = PyList_New(0);
    Key *keys = PyMem_Malloc(sizeof(Key) * KEY_STACK);
    char *buf = NULL;
    Py_ssize_t cap = 0;
    TimeCache tc;
    tc.n = tc.next = 0;
    Last last[MAX_COLS];
    memset(last, 0, sizeof last);
    int rc = OK;
    if (rows == NULL || keys == NULL) {
        if (keys == NULL)
            PyErr_NoMemory();
        rc = ERROR;
        goto done;
    }
    Parser ps;
    ps.keys = keys;
    ps.res_b = NULL;
    ps.res_n = 0;
    const char *p = data, *stop = data + size;
    Py_ssize_t line_no = 0;
    while (p < stop) {
        const char *nl = memchr(p, '\n', (size_t)(stop - p));
        const char *line_end = nl != NULL ? nl : stop;
        line_no++;
        const char *q = skip_spaces(p, line_end);
        p = nl != NULL ? nl + 1 : stop;
        if (q == line_end)
            continue; /* blank line */
        if (*q != '{') {
            rc = DECLINE;
            break;
        }
        ps.end = line_end;
        ps.nkeys = 0;
        memset(ps.slot, 0, sizeof ps.slot);
        Val top;
        if (parse_value(&ps, &q, 0, R_TOP, &top) != OK || skip_spaces(q, line_end) != line_end) {
            rc = DECLINE;
            break;
        }
        PyObject *row = NULL;
        rc = make_row(&ps, inv, PyList_GET_SIZE(rows), line_no, iso, &tc, last, &buf, &cap, &row);
        if (rc != OK)
            break;
        int appended = PyList_Append(rows, row);
        Py_DECREF(row);
        if (appended < 0) {
            rc = ERROR;
            break;
        }
    }
done:
    for (int i = 0; i < MAX_COLS; i++)
        Py_XDECREF(last[i].obj);
    PyMem_Free(keys);
    PyMem_Free(buf);
    Py_DECREF(text);
    if (rc == OK)
        return rows;
    Py_XDECREF(rows);
    if (rc == ERROR)
        return NULL;
    Py_RETURN_NONE;
}

/* configure(fields, owned, owned_columns, grounding_mode): see the top of this file. Checks
 * everything before it changes anything, so a failed call leaves the previous configuration. */
static PyObject *
configure(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "configure(fields, owned, owned_columns, grounding_mode) takes 4 arguments");
        return NULL;
    }
    PyObject *fields = args[0], *owned = args[1], *owned_cols = args[2], *gm = args[3];
    if (nc_str_tuple(owned, "owned", MAX_OWNED) < 0 || nc_str_tuple(owned_cols, "owned_columns", MAX_OWNED) < 0)
        return NULL;
    if (!PyUnicode_Check(gm)) {
        PyErr_SetString(PyExc_TypeError, "configure: grounding_mode must be a str");
        return NULL;
    }
    int n_owned = (int)PyTuple_GET_SIZE(owned);
    if (PyTuple_GET_SIZE(owned_cols) != n_owned) {
        PyErr_Format(PyExc_ValueError, "configure: %d owned attributes but %zd owned columns", n_owned,
                     PyTuple_GET_SIZE(owned_cols));
        return NULL;
    }
    /* the columns: FIXED_NAMES, then one per owned attribute (C_OWNED0 + i) */
    const char *known[MAX_COLS], *owned_keys[MAX_OWNED];
    Py_ssize_t owned_lens[MAX_OWNED], pos[MAX_COLS];
    memcpy(known, FIXED_NAMES, sizeof FIXED_NAMES);
    int gm_index = -1;
    for (int i = 0; i < n_owned; i++) {
        owned_keys[i] = PyUnicode_AsUTF8AndSize(PyTuple_GET_ITEM(owned, i), &owned_lens[i]);
        known[C_OWNED0 + i] = PyUnicode_AsUTF8(PyTuple_GET_ITEM(owned_cols, i));
        if (owned_keys[i] == NULL || known[C_OWNED0 + i] == NULL)
            return NULL;
        if (PyUnicode_Compare(PyTuple_GET_ITEM(owned, i), gm) == 0)
            gm_index = i;
    }
    if (gm_index < 0) {
        PyErr_Format(PyExc_ValueError, "configure: grounding_mode %R is not an owned attribute", gm);
        return NULL;
    }
    if (nc_positions(fields, known, N_FIXED + n_owned, pos, "span") < 0)
        return NULL;
    PyObject *config = PyTuple_Pack(4, fields, owned, owned_cols, gm);
    if (config == NULL)
        return NULL;
    Py_XSETREF(CONFIG, config);
    memcpy(POS, pos, sizeof(Py_ssize_t) * (size_t)(N_FIXED + n_owned));
    memset(OWNED_FIRST, 0, sizeof OWNED_FIRST);
    for (int i = 0; i < n_owned; i++) {
        OWNED[i] = owned_keys[i];
        OWNED_LEN[i] = owned_lens[i];
        if (owned_lens[i] > 0)
            OWNED_FIRST[(unsigned char)owned_keys[i][0]] = 1;
    }
    N_OWNED = n_owned;
    GM_INDEX = gm_index;
    WIDTH = N_FIXED + n_owned;
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"configure", (PyCFunction)(void (*)(void))configure, METH_FASTCALL,
     "configure(fields, owned, owned_columns, grounding_mode): the row's column order and the owned span "
     "attributes, from ingest/spans.py (once, at load)."},
    {"sdk_rows", (PyCFunction)(void (*)(void))sdk_rows, METH_FASTCALL,
     "sdk_rows(text, inv, iso_times) -> list of span rows, or None when the file is outside the fast path."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef moduledef = {PyModuleDef_HEAD_INIT, "_spans_native",
                                       "Fast path of ingest.spans.parse_spans (see ingest/_spans_native.c).",
                                       -1, methods, NULL, NULL, NULL, NULL};

static PyObject *
intern(const char *s)
{
    PyObject *o = PyUnicode_InternFromString(s);
    return o;
}

PyMODINIT_FUNC
PyInit__spans_native(void)
{
    init_tables();
    if (S_SDK == NULL) {
        S_SDK = intern("sdk");
        S_TRUE_STR = intern("True");
        S_FALSE_STR = intern("False");
        S_NONE_STR = intern("None");
        S_TRUE_JSON = intern("true");
        S_FALSE_JSON = intern("false");
        S_NULL_JSON = intern("null");
        S_EMPTY_OBJ = intern("{}");
        if (!S_SDK || !S_TRUE_STR || !S_FALSE_STR || !S_NONE_STR || !S_TRUE_JSON || !S_FALSE_JSON || !S_NULL_JSON
            || !S_EMPTY_OBJ) {
            Py_CLEAR(S_SDK);
            return NULL;
        }
    }
    return PyModule_Create(&moduledef);
}
