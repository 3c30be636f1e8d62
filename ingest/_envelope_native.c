/* envelope.json / request.json in C: the optional fast path of ingest.parse (see ingest/envelope.py).
 *
 *   configure(run_columns, payload_fields, evidence_fields, delegation_fields, registered,
 *             projected, projection_fields, withheld_type) -- once, by ingest/parse.py at load
 *   envelope(data, inv, folder_check, iso_to_us_opt, sha256)
 *       -> (run_values, payload_rows, evidence_rows, delegation_rows), or None ("decline")
 *   request(data, iso_to_us_opt, sha256) -> (request_json, input_hash, issued_at), or None
 *
 * The constants come from where Python defines them once: the column names of the runs values
 * and of each row kind, in their order (ingest/envelope.py ENVELOPE_COLUMNS, PAYLOAD_FIELDS,
 * EVIDENCE_FIELDS, DELEGATION_FIELDS), the registered canonicalisations, the projected one and
 * its fields (groundwork/core/canonical.py REGISTERED, PROJECTED, FAIRSHARING_FIELDS) and the
 * problem type of a withheld payload (envelope.WITHHELD_TYPE). configure raises ValueError unless
 * each row holds exactly the columns this file fills; values go where those names put them. The
 * rows are then payload_rows(), evidence_rows() and delegation_rows() of ingest/envelope.py.
 * Everything is EXACTLY what the Python path gives for the same bytes, or the call declines and
 * the Python path runs. It declines whenever the input is outside the clean common case:
 *
 *   - a byte >= 0x80, a run of 19+ ASCII digits anywhere (jsontext.needs_exact_bytes), anything but
 *     ONE JSON value of the restricted grammar below (with JSON whitespace around it), a root that
 *     is not an object, nesting deeper than MAX_DEPTH, a duplicate key in any object, more than
 *     MAX_DOC bytes;
 *   - numbers: -?(0|[1-9][0-9]*)(.[0-9]+)? only (no exponent, no NaN/Infinity); a float whose
 *     repr would hold an exponent or whose magnitude is below 1e-4 (0.0 and -0.0 are fine): in the
 *     accepted range float.__repr__ (json.dumps, str(), canonical bytes) and orjson agree;
 *   - strings: raw control characters (json.loads rejects them), a \u escape giving a lone
 *     surrogate (a valid pair is fine);
 *   - anything for which the Python path records an issue (wrong types per docs/rules.md#truthiness, docs/rules.md#evidence-pairs, docs/rules.md#citable-set, docs/rules.md#unverifiable-runs,
 *     folder name mismatch, non-object evidence elements, request without "input");
 *   - a value that would be str()-ed (vstr) while it is an array or object (Python repr: rare);
 *   - an evidence content object whose canonicalisation is not a registered name (the Python
 *     path stores an error text), or a json-sorted-utf8-v1 list item that is an array/object.
 *
 * Within that domain the Python path parses with orjson (fast=True), so dumps_doc() is orjson's
 * compact form (raw UTF-8, 0x7F raw), dumps() is json.dumps' default form (", " / ": ",
 * ensure_ascii), and canonical bytes are json.dumps(sort_keys=True, separators=(",", ":"),
 * ensure_ascii=False) in UTF-8; strings are escaped alike in all three (\" \\ \b \f \n \r \t,
 * other controls \u00xx), ensure_ascii also escapes 0x7F and above as \uxxxx (surrogate pairs).
 * Keys sort by code point = by their UTF-8 bytes.
 *
 * Memory safety: every read is bounds-checked against the input's end, nesting is bounded, all
 * buffers grow with overflow checks, and every C-API failure propagates as an exception.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "canonical_json.h" /* the canonical writer's parts, shared with groundwork/core/_canonical_native.c */
#include "_native_config.h"

#define MAX_DEPTH 64
#define MAX_DOC (64 * 1024 * 1024)

enum { T_NULL, T_FALSE, T_TRUE, T_INT, T_FLOAT, T_STR, T_ARR, T_OBJ };

#define F_ESC 1   /* holds '"', '\\' or a control character: escaped in every form */
#define F_HIGH 2  /* holds 0x7F or a non-ASCII code point: escaped by ensure_ascii */

typedef struct {
    uint8_t type, flags, kflags;
    int32_t count;          /* ARR/OBJ: elements / members */
    int32_t first, next;    /* first child, next sibling (-1: none) */
    int32_t off, len;       /* STR: decoded UTF-8, INT/FLOAT: output text (both in the pool) */
    int32_t koff, klen;     /* the key when this node is an object member */
    int32_t sorted;         /* OBJ: offset in idx of its members in key order */
} Node;

typedef CJBuf Buf;

typedef struct {
    const unsigned char *s, *end;
    Node *nodes;
    Py_ssize_t nn, ncap;
    Buf pool;
    int32_t *idx;
    Py_ssize_t ni, icap;
    int err;       /* 1: a Python exception is set */
} P;

/* ------------------------------------------------------------------------------- buffers */

/* Make room for `n` more elements of `size` bytes after `len` in the array *mem of capacity
 * *cap (doubling from `first`, never beyond `max` elements). -1 with MemoryError set. */
static int
grow(void **mem, Py_ssize_t *cap, Py_ssize_t len, Py_ssize_t n, size_t size, Py_ssize_t first, Py_ssize_t max)
{
    if (*cap - len >= n)
        return 0;
    Py_ssize_t c = *cap ? *cap : first;
    while (c - len < n) {
        if (c > max / 2) {
            PyErr_NoMemory();
            return -1;
        }
        c *= 2;
    }
    void *m = PyMem_Realloc(*mem, (size_t)c * size);
    if (m == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    *mem = m;
    *cap = c;
    return 0;
}

#define buf_reserve cj_reserve
#define buf_put cj_put
#define buf_putc cj_putc
#define PUTS CJ_PUTS

/* ---------------------------------------------------------------------------------- parser */

#define DECLINE (-1)
#define FAIL(p) ((p)->err = 1, -1)

static int32_t
new_node(P *p, uint8_t type)
{
    if (grow((void **)&p->nodes, &p->ncap, p->nn, 1, sizeof(Node), 256, INT32_MAX / 2) < 0)
        return FAIL(p);
    Node *n = &p->nodes[p->nn];
    memset(n, 0, sizeof(Node));
    n->type = type;
    n->first = n->next = n->sorted = -1;
    return (int32_t)p->nn++;
}

static inline void
skip_ws(P *p)
{
    while (p->s < p->end && (*p->s == ' ' || *p->s == '\n' || *p->s == '\r' || *p->s == '\t'))
        p->s++;
}

static int
hex4(const unsigned char *s, const unsigned char *end, unsigned *out)
{
    if (end - s < 4)
        return -1;
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        unsigned c = s[i], d;
        if (c >= '0' && c <= '9')
            d = c - '0';
        else if (c >= 'a' && c <= 'f')
            d = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
            d = c - 'A' + 10;
        else
            return -1;
        v = v * 16 + d;
    }
    *out = v;
    return 0;
}

#define ONES 0x0101010101010101ULL
#define HIGHS 0x8080808080808080ULL

/* High bit set in each byte of v that is '"', '\\', below 0x20 or 0x7F and above; borrows and
 * carries can flag bytes above (later than) a flagged byte, never below it. */
static inline uint64_t
special_mask(uint64_t v)
{
    uint64_t q = v ^ (ONES * '"'), b = v ^ (ONES * '\\');
    return (((v - ONES * 0x20) & ~v) | ((q - ONES) & ~q) | ((b - ONES) & ~b) | (v + ONES) | v) & HIGHS;
}

/* A string at p->s (the opening quote) decoded into the pool as UTF-8. */
static int
parse_string(P *p, int32_t *off, int32_t *len, uint8_t *flags)
{
    const unsigned char *s = p->s + 1, *end = p->end;
    uint8_t fl = 0;
    Buf *b = &p->pool;
    /* decoded text is never longer than the escaped text */
    if (buf_reserve(b, (end - s) + 1) < 0)
        return FAIL(p);
    Py_ssize_t start = b->len;
    char *o = b->p + b->len;
    for (;;) {
        const unsigned char *q = s;
#if defined(__GNUC__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        /* 8 bytes at a time until one is special ('"', '\\', < 0x20, >= 0x7F). The output has
         * room: decoding never makes the text longer, and the input has 8 more bytes. */
        while (end - q >= 8) {
            uint64_t v;
            memcpy(&v, q, 8);
            uint64_t m = special_mask(v);
            memcpy(o, q, 8);
            if (m) {
                int k = __builtin_ctzll(m) >> 3;   /* the lowest flagged byte is a true one */
                q += k;
                o += k;
                break;
            }
            q += 8;
            o += 8;
        }
        s = q;
#endif
        while (q < end && *q >= 0x20 && *q != '"' && *q != '\\' && *q < 0x7f)
            q++;
        memcpy(o, s, (size_t)(q - s));
        o += q - s;
        s = q;
        if (s >= end)
            return DECLINE;
        unsigned char c = *s;
        if (c == '"')
            break;
        if (c < 0x20 || c >= 0x80)
            return DECLINE;
        if (c == 0x7f) {
            fl |= F_HIGH;
            *o++ = (char)c;
            s++;
            continue;
        }
        /* backslash */
        if (end - s < 2)
            return DECLINE;
        c = s[1];
        s += 2;
        switch (c) {
        case '"': *o++ = '"'; fl |= F_ESC; break;
        case '\\': *o++ = '\\'; fl |= F_ESC; break;
        case '/': *o++ = '/'; break;
        case 'b': *o++ = '\b'; fl |= F_ESC; break;
        case 'f': *o++ = '\f'; fl |= F_ESC; break;
        case 'n': *o++ = '\n'; fl |= F_ESC; break;
        case 'r': *o++ = '\r'; fl |= F_ESC; break;
        case 't': *o++ = '\t'; fl |= F_ESC; break;
        case 'u': {
            unsigned cp;
            if (hex4(s, end, &cp) < 0)
                return DECLINE;
            s += 4;
            if (cp >= 0xDC00 && cp <= 0xDFFF)
                return DECLINE;
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                unsigned lo;
                if (end - s < 6 || s[0] != '\\' || s[1] != 'u' || hex4(s + 2, end, &lo) < 0
                    || lo < 0xDC00 || lo > 0xDFFF)
                    return DECLINE;
                s += 6;
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            }
            if (cp < 0x20 || cp == '"' || cp == '\\')
                fl |= F_ESC;
            if (cp >= 0x7f)
                fl |= F_HIGH;
            /* at most 4 bytes out for 6 or 12 bytes in */
            if (cp < 0x80) {
                *o++ = (char)cp;
            } else if (cp < 0x800) {
                *o++ = (char)(0xC0 | (cp >> 6));
                *o++ = (char)(0x80 | (cp & 0x3F));
            } else if (cp < 0x10000) {
                *o++ = (char)(0xE0 | (cp >> 12));
                *o++ = (char)(0x80 | ((cp >> 6) & 0x3F));
                *o++ = (char)(0x80 | (cp & 0x3F));
            } else {
                *o++ = (char)(0xF0 | (cp >> 18));
                *o++ = (char)(0x80 | ((cp >> 12) & 0x3F));
                *o++ = (char)(0x80 | ((cp >> 6) & 0x3F));
                *o++ = (char)(0x80 | (cp & 0x3F));
            }
            break;
        }
        default:
            return DECLINE;
        }
    }
    p->s = s + 1;
    Py_ssize_t n = (o - b->p) - start;
    if (n > INT32_MAX || start > INT32_MAX)
        return DECLINE;
    b->len = start + n;
    *off = (int32_t)start;
    *len = (int32_t)n;
    *flags = fl;
    return 0;
}

static int
parse_number(P *p, int32_t node)
{
    const unsigned char *s = p->s, *end = p->end, *t = s;
    int is_float = 0;
    if (t < end && *t == '-')
        t++;
    if (t >= end || *t < '0' || *t > '9')
        return DECLINE;
    if (*t == '0')
        t++;
    else
        while (t < end && *t >= '0' && *t <= '9')
            t++;
    if (t < end && *t == '.') {
        t++;
        const unsigned char *f = t;
        while (t < end && *t >= '0' && *t <= '9')
            t++;
        if (t == f)
            return DECLINE;
        is_float = 1;
    }
    if (t < end && (*t == 'e' || *t == 'E'))
        return DECLINE;
    Py_ssize_t n = t - s;
    if (n > 64)
        return DECLINE;   /* cannot happen without a 19-digit run; bounds the copy below */
    p->s = t;
    Buf *b = &p->pool;
    if (!is_float) {
        if (n == 2 && s[0] == '-' && s[1] == '0') {
            s++;
            n = 1;
        }
        if (b->len > INT32_MAX - 64)
            return DECLINE;
        p->nodes[node].type = T_INT;
        p->nodes[node].off = (int32_t)b->len;
        p->nodes[node].len = (int32_t)n;
        return buf_put(b, (const char *)s, n) < 0 ? FAIL(p) : 0;
    }
    char tmp[72];
    memcpy(tmp, s, (size_t)n);
    tmp[n] = '\0';
    double x = PyOS_string_to_double(tmp, NULL, NULL);
    if (x == -1.0 && PyErr_Occurred())
        return FAIL(p);
    if (!isfinite(x) || (x != 0.0 && fabs(x) < 1e-4) || fabs(x) >= 1e16)
        return DECLINE;
    char *r = cj_float_repr(x);
    if (r == NULL)
        return FAIL(p);
    size_t rl = strlen(r);
    int bad = strchr(r, 'e') != NULL || strchr(r, 'n') != NULL || rl > 64 || b->len > INT32_MAX - 64;
    int rc = 0;
    if (!bad) {
        p->nodes[node].type = T_FLOAT;
        p->nodes[node].off = (int32_t)b->len;
        p->nodes[node].len = (int32_t)rl;
        if (buf_put(b, r, (Py_ssize_t)rl) < 0)
            rc = FAIL(p);
    }
    PyMem_Free(r);
    return bad ? DECLINE : rc;
}

static inline int
key_cmp(P *p, int32_t a, int32_t b)
{
    Node *x = &p->nodes[a], *y = &p->nodes[b];
    return cj_key_cmp(p->pool.p + x->koff, x->klen, p->pool.p + y->koff, y->klen);
}

/* merge sort of v[0..n) by key, tmp holds n entries */
static void
sort_keys(P *p, int32_t *v, int32_t *tmp, Py_ssize_t n)
{
    if (n < 2)
        return;
    if (n <= 16) {
        for (Py_ssize_t i = 1; i < n; i++) {
            int32_t x = v[i];
            Py_ssize_t j = i;
            while (j > 0 && key_cmp(p, v[j - 1], x) > 0) {
                v[j] = v[j - 1];
                j--;
            }
            v[j] = x;
        }
        return;
    }
    Py_ssize_t h = n / 2;
    sort_keys(p, v, tmp, h);
    sort_keys(p, v + h, tmp, n - h);
    Py_ssize_t i = 0, j = h, k = 0;
    while (i < h && j < n)
        tmp[k++] = key_cmp(p, v[j], v[i]) < 0 ? v[j++] : v[i++];
    while (i < h)
        tmp[k++] = v[i++];
    while (j < n)
        tmp[k++] = v[j++];
    memcpy(v, tmp, (size_t)n * sizeof(int32_t));
}

static int32_t parse_value(P *p, int depth);

static inline int
idx_reserve(P *p, Py_ssize_t n)
{
    return grow((void **)&p->idx, &p->icap, p->ni, n, sizeof(int32_t), 256, INT32_MAX / 2);
}

static int32_t
parse_container(P *p, int depth, int obj)
{
    int32_t node = new_node(p, obj ? T_OBJ : T_ARR);
    if (node < 0)
        return -1;
    p->s++;
    skip_ws(p);
    int32_t last = -1, count = 0;
    if (p->s < p->end && *p->s == (obj ? '}' : ']')) {
        p->s++;
    } else {
        for (;;) {
            int32_t koff = 0, klen = 0;
            uint8_t kfl = 0;
            if (obj) {
                if (p->s >= p->end || *p->s != '"')
                    return DECLINE;
                if (parse_string(p, &koff, &klen, &kfl) < 0)
                    return -1;
                skip_ws(p);
                if (p->s >= p->end || *p->s != ':')
                    return DECLINE;
                p->s++;
                skip_ws(p);
            }
            int32_t child = parse_value(p, depth + 1);
            if (child < 0)
                return -1;
            Node *c = &p->nodes[child];
            c->koff = koff;
            c->klen = klen;
            c->kflags = kfl;
            if (last < 0)
                p->nodes[node].first = child;
            else
                p->nodes[last].next = child;
            last = child;
            if (count == INT32_MAX)
                return DECLINE;
            count++;
            skip_ws(p);
            if (p->s >= p->end)
                return DECLINE;
            if (*p->s == ',') {
                p->s++;
                skip_ws(p);
                continue;
            }
            if (*p->s == (obj ? '}' : ']')) {
                p->s++;
                break;
            }
            return DECLINE;
        }
    }
    p->nodes[node].count = count;
    if (obj && count > 0) {
        if (idx_reserve(p, 2 * (Py_ssize_t)count) < 0)
            return FAIL(p);
        int32_t *v = p->idx + p->ni;
        Py_ssize_t k = 0;
        for (int32_t c = p->nodes[node].first; c >= 0; c = p->nodes[c].next)
            v[k++] = c;
        sort_keys(p, v, v + count, count);
        for (Py_ssize_t i = 1; i < count; i++)
            if (key_cmp(p, v[i - 1], v[i]) == 0)
                return DECLINE;   /* duplicate key */
        p->nodes[node].sorted = (int32_t)p->ni;
        p->ni += count;
    }
    return node;
}

static int32_t
parse_value(P *p, int depth)
{
    if (depth > MAX_DEPTH || p->s >= p->end)
        return DECLINE;
    unsigned char c = *p->s;
    int32_t node;
    switch (c) {
    case '{':
        return parse_container(p, depth, 1);
    case '[':
        return parse_container(p, depth, 0);
    case '"': {
        int32_t off, len;
        uint8_t fl;
        if (parse_string(p, &off, &len, &fl) < 0)
            return -1;
        node = new_node(p, T_STR);
        if (node < 0)
            return -1;
        p->nodes[node].off = off;
        p->nodes[node].len = len;
        p->nodes[node].flags = fl;
        return node;
    }
    case 't':
    case 'f':
    case 'n': {
        const char *lit = c == 't' ? "true" : c == 'f' ? "false" : "null";
        Py_ssize_t n = (Py_ssize_t)strlen(lit);
        if (p->end - p->s < n || memcmp(p->s, lit, (size_t)n) != 0)
            return DECLINE;
        p->s += n;
        return new_node(p, c == 't' ? T_TRUE : c == 'f' ? T_FALSE : T_NULL);
    }
    default:
        if (c == '-' || (c >= '0' && c <= '9')) {
            node = new_node(p, T_INT);
            if (node < 0)
                return -1;
            if (parse_number(p, node) < 0)
                return -1;
            return node;
        }
        return DECLINE;
    }
}

#define IS_DIGIT(c) ((c) >= '0' && (c) <= '9')

/* No run of 19+ ASCII digits anywhere (jsontext.needs_exact_bytes). Any 19 consecutive positions
 * hold one index i with i % 19 == 18: only those are looked at, and the run through a digit
 * there is measured. (Bytes >= 0x80 need no scan: outside strings they are a syntax error, and
 * parse_string declines them.) */
static int
prescan(const unsigned char *s, Py_ssize_t n)
{
    for (Py_ssize_t i = 18; i < n; i += 19) {
        if (!IS_DIGIT(s[i]))
            continue;
        Py_ssize_t a = i, b = i;
        while (a > 0 && IS_DIGIT(s[a - 1]))
            a--;
        while (b + 1 < n && IS_DIGIT(s[b + 1]))
            b++;
        if (b - a + 1 >= 19)
            return 0;
    }
    return 1;
}

/* Parse the whole document; root node index, or -1 (check p->err). */
static int32_t
parse_doc(P *p, const char *data, Py_ssize_t n)
{
    memset(p, 0, sizeof(P));
    if (n > MAX_DOC || !prescan((const unsigned char *)data, n))
        return -1;
    p->s = (const unsigned char *)data;
    p->end = p->s + n;
    skip_ws(p);
    int32_t root = parse_value(p, 1);
    if (root < 0)
        return -1;
    skip_ws(p);
    if (p->s != p->end || p->nodes[root].type != T_OBJ)
        return -1;
    return root;
}

static void
p_free(P *p)
{
    PyMem_Free(p->nodes);
    cj_free(&p->pool);
    PyMem_Free(p->idx);
}

/* --------------------------------------------------------------------------------- writers */

enum { COMPACT, DUMPS, CANON };

static int
put_u(Buf *b, unsigned cp)
{
    char e[6] = {'\\', 'u', CJ_HEX[(cp >> 12) & 15], CJ_HEX[(cp >> 8) & 15], CJ_HEX[(cp >> 4) & 15], CJ_HEX[cp & 15]};
    return buf_put(b, e, 6);
}

/* A string of the pool (valid UTF-8). COMPACT and CANON: canonical_json.h's string (orjson
 * writes strings alike); DUMPS (ascii): the same escapes, and 0x7F and above as \uxxxx. */
static int
write_str(Buf *b, const char *s, Py_ssize_t n, uint8_t flags, int ascii)
{
    if (!(flags & F_ESC) && !(ascii && (flags & F_HIGH))) {
        if (buf_reserve(b, n + 2) < 0)
            return -1;
        b->p[b->len++] = '"';
        memcpy(b->p + b->len, s, (size_t)n);
        b->len += n;
        b->p[b->len++] = '"';
        return 0;
    }
    if (!ascii)
        return cj_write_utf8(b, s, n);
    if (buf_putc(b, '"') < 0)
        return -1;
    const unsigned char *u = (const unsigned char *)s, *end = u + n;
    while (u < end) {
        unsigned c = *u;
        if (c >= 0x20 && c != '"' && c != '\\' && c < 0x7f) {
            if (buf_putc(b, (char)c) < 0)
                return -1;
            u++;
            continue;
        }
        int rc;
        if (c < 0x7f) {   /* an escape of the canonical form */
            if (buf_reserve(b, 6) < 0)
                return -1;
            b->len = cj_escape(b->p + b->len, c) - b->p;
            rc = 0;
        } else if (c == 0x7f) {
            rc = put_u(b, c);
        } else {
            /* valid UTF-8 written by parse_string */
            unsigned cp;
            int len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
            if (end - u < len)
                return -1;   /* cannot happen */
            if (len == 2)
                cp = ((c & 0x1F) << 6) | (u[1] & 0x3F);
            else if (len == 3)
                cp = ((c & 0x0F) << 12) | ((u[1] & 0x3F) << 6) | (u[2] & 0x3F);
            else
                cp = ((c & 0x07) << 18) | ((u[1] & 0x3F) << 12) | ((u[2] & 0x3F) << 6) | (u[3] & 0x3F);
            u += len - 1;
            if (cp >= 0x10000) {
                cp -= 0x10000;
                rc = put_u(b, 0xD800 | (cp >> 10));
                if (rc == 0)
                    rc = put_u(b, 0xDC00 | (cp & 0x3FF));
            } else {
                rc = put_u(b, cp);
            }
        }
        if (rc < 0)
            return -1;
        u++;
    }
    return buf_putc(b, '"');
}

static int
write_value(P *p, Buf *b, int32_t i, int form)
{
    Node *n = &p->nodes[i];
    switch (n->type) {
    case T_NULL: return PUTS(b, "null");
    case T_TRUE: return PUTS(b, "true");
    case T_FALSE: return PUTS(b, "false");
    case T_INT:
    case T_FLOAT: return buf_put(b, p->pool.p + n->off, n->len);
    case T_STR: return write_str(b, p->pool.p + n->off, n->len, n->flags, form == DUMPS);
    case T_ARR: {
        if (buf_putc(b, '[') < 0)
            return -1;
        for (int32_t c = n->first; c >= 0; c = p->nodes[c].next) {
            if (c != n->first && (form == DUMPS ? PUTS(b, ", ") : buf_putc(b, CJ_ITEM_SEP)) < 0)
                return -1;
            if (write_value(p, b, c, form) < 0)
                return -1;
        }
        return buf_putc(b, ']');
    }
    default: {   /* T_OBJ */
        if (buf_putc(b, '{') < 0)
            return -1;
        int32_t count = n->count, c = n->first;
        int32_t sorted = n->sorted;
        for (int32_t k = 0; k < count; k++) {
            int32_t m = form == CANON ? p->idx[sorted + k] : c;
            if (k && (form == DUMPS ? PUTS(b, ", ") : buf_putc(b, CJ_ITEM_SEP)) < 0)
                return -1;
            Node *mn = &p->nodes[m];
            if (write_str(b, p->pool.p + mn->koff, mn->klen, mn->kflags, form == DUMPS) < 0)
                return -1;
            if ((form == DUMPS ? PUTS(b, ": ") : buf_putc(b, CJ_KEY_SEP)) < 0)
                return -1;
            if (write_value(p, b, m, form) < 0)
                return -1;
            c = p->nodes[c].next;
        }
        return buf_putc(b, '}');
    }
    }
}

/* -------------------------------------------------------------------- the configuration */

/* The values each row holds (their names: the *_NAMES tables; their positions: configure()). */
enum {
    R_ENVELOPE_ID, R_AGENT_ID, R_AGENT_VERSION, R_COMPLETED_AT, R_MODE, R_MODE_JSON, R_MODE_TRUTHY,
    R_OUTCOME_STATUS, R_SUCCEEDED, R_PROBLEM_TYPE, R_WITHHELD, R_PAYLOAD_TYPE, R_HAS_SCHEMA_CLASS,
    R_SCHEMA_CLASS_JSON, R_HAS_GROUNDED_ON, R_EVIDENCE_COUNT, R_DELEGATION_COUNT, R_CONVERSATION_ID,
    R_PARENT_ID, R_TRACE_ID, R_ENVELOPE_HASH, R_ENVELOPE_JSON, N_RUN
};
static const char *const RUN_NAMES[N_RUN] = {
    "envelope_invocation_id", "agent_id", "agent_version", "completed_at", "grounding_mode",
    "grounding_mode_json", "grounding_mode_truthy", "outcome_status", "succeeded", "problem_type",
    "withheld", "payload_type", "payload_has_schema_class", "payload_schema_class_json",
    "payload_has_grounded_on", "evidence_count", "delegation_count", "conversation_id",
    "parent_invocation_id", "telemetry_trace_id", "envelope_hash", "envelope_json"};
enum { P_INV, P_ORD, P_PATH, P_KIND, P_SOURCE_ID, P_CONTENT_HASH, P_VALUE_JSON, N_PAYLOAD };
static const char *const PAYLOAD_NAMES[N_PAYLOAD] = {
    "invocation_id", "ord", "path", "kind", "source_id", "content_hash", "value_json"};
enum {
    V_INV, V_ORD, V_SOURCE_ID, V_SOURCE_ID_JSON, V_CONTENT_HASH, V_CANON, V_CANON_JSON, V_SNAPSHOT_REF,
    V_SOURCE_URI, V_RETRIEVED_AT, V_HASH_ALGORITHM, V_CONTENT_TYPE, V_CONTENT_JSON, V_COMPUTED_HASH,
    V_CANONICAL_ERROR, V_ITEM_TYPE, V_ITEM_JSON, V_SNAPSHOT_REF_JSON, N_EVIDENCE
};
static const char *const EVIDENCE_NAMES[N_EVIDENCE] = {
    "invocation_id", "ord", "source_id", "source_id_json", "content_hash", "canonicalisation",
    "canonicalisation_json", "snapshot_ref", "source_uri", "retrieved_at", "hash_algorithm",
    "content_type", "content_json", "computed_hash", "canonical_error", "item_type", "item_json",
    "snapshot_ref_json"};
enum { D_INV, D_ORD, D_ID, D_CONTENT_HASH, D_AGENT_ID, D_AGENT_VERSION, D_STATUS, N_DELEGATION };
static const char *const DELEGATION_NAMES[N_DELEGATION] = {
    "invocation_id", "ord", "delegated_invocation_id", "content_hash", "delegated_agent_id",
    "delegated_agent_version", "delegated_status"};

#define MAX_NAMES 64

/* set by configure(); CONFIG keeps the str objects the pointers below point into */
static int CONFIGURED;
static PyObject *CONFIG;
static Py_ssize_t RUN_POS[N_RUN], PAYLOAD_POS[N_PAYLOAD], EVIDENCE_POS[N_EVIDENCE], DELEGATION_POS[N_DELEGATION];
typedef struct {
    const char *s;
    Py_ssize_t n;
} Text;
static Text REGISTERED[MAX_NAMES], PROJECTED, WITHHELD;
static int N_REGISTERED;
static Text PROJECTION[MAX_NAMES]; /* the projection's fields in key order */
static int N_PROJECTION;

/* ------------------------------------------------------------------------ Python values */

static PyObject *str_hexdigest;   /* "hexdigest", interned at import */

typedef struct {
    P p;
    Buf w;            /* scratch output */
    PyObject *inv, *iso, *sha256;
} Ctx;

/* constant texts, interned at import */
static PyObject *S_NONE, *S_TRUE, *S_FALSE, *S_NULL, *S_BOOLEAN, *S_NUMBER, *S_STRING, *S_ARRAY, *S_OBJECT, *S_NOT_LIST, *S_REF, *S_MALFORMED;

static inline PyObject *
newref(PyObject *o)
{
    Py_INCREF(o);
    return o;
}

/* Results: a new reference; NULL with an exception set = error, NULL without = decline. */
#define DECLINED(o) ((o) == NULL && !PyErr_Occurred())

static PyObject *
str_from(const char *s, Py_ssize_t n, int maybe_high)
{
    if (!maybe_high) {
        PyObject *u = PyUnicode_New(n, 127);
        if (u != NULL)
            memcpy(PyUnicode_DATA(u), s, (size_t)n);
        return u;
    }
    return PyUnicode_DecodeUTF8(s, n, "strict");
}

static int32_t
get(P *p, int32_t obj, const char *key)
{
    if (obj < 0 || p->nodes[obj].type != T_OBJ)
        return -1;
    size_t kl = strlen(key);
    for (int32_t c = p->nodes[obj].first; c >= 0; c = p->nodes[c].next)
        if ((size_t)p->nodes[c].klen == kl && memcmp(p->pool.p + p->nodes[c].koff, key, kl) == 0)
            return c;
    return -1;
}

static int
str_eq(P *p, int32_t i, const char *s, Py_ssize_t n)
{
    return i >= 0 && p->nodes[i].type == T_STR && p->nodes[i].len == n
           && memcmp(p->pool.p + p->nodes[i].off, s, (size_t)n) == 0;
}

/* vstr() of a node (-1: absent, read as None); arrays and objects decline. */
static PyObject *
vstr(P *p, int32_t i)
{
    if (i < 0)
        return newref(S_NONE);
    Node *n = &p->nodes[i];
    switch (n->type) {
    case T_NULL: return newref(S_NONE);
    case T_TRUE: return newref(S_TRUE);
    case T_FALSE: return newref(S_FALSE);
    case T_INT:
    case T_FLOAT: return str_from(p->pool.p + n->off, n->len, 0);
    case T_STR: return str_from(p->pool.p + n->off, n->len, n->flags & F_HIGH);
    default: return NULL;
    }
}

/* _opt_nonnull: None when absent or null */
static PyObject *
vstr_nonnull(P *p, int32_t i)
{
    if (i < 0 || p->nodes[i].type == T_NULL)
        Py_RETURN_NONE;
    return vstr(p, i);
}

/* _opt: None when absent */
static PyObject *
vstr_opt(P *p, int32_t i)
{
    if (i < 0)
        Py_RETURN_NONE;
    return vstr(p, i);
}

static PyObject *
dumps(Ctx *c, int32_t i, int form)
{
    if (i < 0)
        return newref(S_NULL);
    c->w.len = 0;
    if (write_value(&c->p, &c->w, i, form) < 0)
        return NULL;
    return str_from(c->w.p, c->w.len, form != DUMPS);
}

static PyObject *
hash_buf(Ctx *c)
{
    if (PyErr_Occurred())
        return NULL;   /* never call Python code with an exception set */
    PyObject *bytes = PyBytes_FromStringAndSize(c->w.p, c->w.len);
    if (bytes == NULL)
        return NULL;
    PyObject *h = PyObject_CallOneArg(c->sha256, bytes);   /* hashlib.sha256(bytes) */
    Py_DECREF(bytes);
    if (h == NULL)
        return NULL;
    PyObject *hex = PyObject_CallMethodNoArgs(h, str_hexdigest);
    Py_DECREF(h);
    if (hex != NULL && !PyUnicode_Check(hex)) {
        Py_DECREF(hex);
        PyErr_SetString(PyExc_TypeError, "sha256(...).hexdigest() must return str");
        return NULL;
    }
    return hex;
}

static PyObject *
canonical_hash(Ctx *c, int32_t i)
{
    c->w.len = 0;
    if (write_value(&c->p, &c->w, i, CANON) < 0)
        return NULL;
    return hash_buf(c);
}

typedef struct {
    const char *s;
    Py_ssize_t n;
    uint8_t flags;
} Item;

static int
item_cmp(const void *a, const void *b)
{
    const Item *x = a, *y = b;
    return cj_key_cmp(x->s, x->n, y->s, y->n);   /* str order = UTF-8 byte order */
}

/* the projected canonicalisation (json-sorted-utf8-v1): canonical bytes of
 * canonical.project_fairsharing(record); 1 = declined */
static int
fairsharing_bytes(Ctx *c, int32_t rec)
{
    P *p = &c->p;
    Buf *b = &c->w;
    b->len = 0;
    if (buf_putc(b, '{') < 0)
        return -1;
    for (int f = 0; f < N_PROJECTION; f++) {
        const char *key = PROJECTION[f].s;
        if (f && buf_putc(b, CJ_ITEM_SEP) < 0)
            return -1;
        if (cj_write_utf8(b, key, PROJECTION[f].n) < 0 || buf_putc(b, CJ_KEY_SEP) < 0)
            return -1;
        int32_t v = get(p, rec, key);
        if (v < 0) {
            if (PUTS(b, "null") < 0)
                return -1;
            continue;
        }
        Node *n = &p->nodes[v];
        if (n->type != T_ARR) {
            if (write_value(p, b, v, CANON) < 0)
                return -1;
            continue;
        }
        Item stack_items[16], *items = stack_items;
        if (n->count > 16) {
            items = PyMem_Malloc((size_t)n->count * sizeof(Item));
            if (items == NULL) {
                PyErr_NoMemory();
                return -1;
            }
        }
        int32_t k = 0, bad = 0;
        for (int32_t e = n->first; e >= 0; e = p->nodes[e].next, k++) {
            Node *en = &p->nodes[e];
            Item *it = &items[k];
            it->flags = 0;
            switch (en->type) {
            case T_STR: it->s = p->pool.p + en->off; it->n = en->len; it->flags = en->flags; break;
            case T_INT:
            case T_FLOAT: it->s = p->pool.p + en->off; it->n = en->len; break;
            case T_NULL: it->s = "None"; it->n = 4; break;
            case T_TRUE: it->s = "True"; it->n = 4; break;
            case T_FALSE: it->s = "False"; it->n = 5; break;
            default: bad = 1;
            }
        }
        int rc = 0;
        if (!bad) {
            qsort(items, (size_t)k, sizeof(Item), item_cmp);
            rc = buf_putc(b, '[');
            for (int32_t j = 0; j < k && rc == 0; j++) {
                if (j)
                    rc = buf_putc(b, CJ_ITEM_SEP);
                if (rc == 0)
                    rc = write_str(b, items[j].s, items[j].n, items[j].flags, 0);
            }
            if (rc == 0)
                rc = buf_putc(b, ']');
        }
        if (items != stack_items)
            PyMem_Free(items);
        if (rc < 0)
            return -1;
        if (bad)
            return 1;
    }
    return buf_putc(b, '}');
}

static int
truthy(P *p, int32_t i)
{
    if (i < 0)
        return 0;
    Node *n = &p->nodes[i];
    switch (n->type) {
    case T_NULL:
    case T_FALSE: return 0;
    case T_TRUE: return 1;
    case T_INT: return !(n->len == 1 && p->pool.p[n->off] == '0');
    case T_FLOAT: {
        for (int32_t k = 0; k < n->len; k++) {
            char ch = p->pool.p[n->off + k];
            if (ch >= '1' && ch <= '9')
                return 1;
        }
        return 0;
    }
    case T_STR: return n->len > 0;
    default: return n->count > 0;
    }
}

static PyObject *
json_type(P *p, int32_t i)
{
    if (i < 0)
        Py_RETURN_NONE;
    switch (p->nodes[i].type) {
    case T_NULL: Py_RETURN_NONE;
    case T_TRUE:
    case T_FALSE: return newref(S_BOOLEAN);
    case T_INT:
    case T_FLOAT: return newref(S_NUMBER);
    case T_STR: return newref(S_STRING);
    case T_ARR: return newref(S_ARRAY);
    default: return newref(S_OBJECT);
    }
}

static int
num(const char *s, int n)
{
    int v = 0;
    for (int k = 0; k < n; k++) {
        if (!IS_DIGIT(s[k]))
            return -1;
        v = v * 10 + (s[k] - '0');
    }
    return v;
}

/* days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil) */
static int64_t
days_from_civil(int64_t y, int m, int d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

/* iso_to_us_opt() of the form the workbench writes, YYYY-MM-DDTHH:MM:SS.ffffffZ (UTC), as
 * datetime.fromisoformat reads it: 1 and *us set; 0 = another form, or a date or time that
 * fromisoformat rejects (the Python callable then decides). */
static int
utc_micros(const char *s, Py_ssize_t n, int64_t *us)
{
    static const int mdays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (n != 27 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' || s[19] != '.'
        || s[26] != 'Z')
        return 0;
    int y = num(s, 4), mo = num(s + 5, 2), d = num(s + 8, 2), h = num(s + 11, 2), mi = num(s + 14, 2),
        sec = num(s + 17, 2), micro = num(s + 20, 6);
    if (y < 1 || mo < 1 || mo > 12 || d < 1 || h < 0 || h > 23 || mi < 0 || mi > 59 || sec < 0 || sec > 59
        || micro < 0)
        return 0;
    int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    if (d > mdays[mo - 1] + (mo == 2 && leap))
        return 0;
    *us = ((days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec) * 1000000) + micro;
    return 1;
}

static PyObject *
iso_of(Ctx *c, int32_t i)
{
    if (i < 0 || c->p.nodes[i].type != T_STR)
        Py_RETURN_NONE;   /* iso_to_us_opt of a non-string is None */
    if (PyErr_Occurred())
        return NULL;   /* never call Python code with an exception set */
    Node *n = &c->p.nodes[i];
    int64_t us;
    if (utc_micros(c->p.pool.p + n->off, n->len, &us))
        return PyLong_FromLongLong(us);
    PyObject *s = str_from(c->p.pool.p + n->off, n->len, n->flags & F_HIGH);
    if (s == NULL)
        return NULL;
    PyObject *r = PyObject_CallOneArg(c->iso, s);
    Py_DECREF(s);
    return r;
}

/* ------------------------------------------------------------------------------- rows */


/* A new tuple holding the n new references v[k] at positions pos[k] (pos NULL: in order);
 * any NULL = error or decline (all of v released). */
static PyObject *
pack(Py_ssize_t n, PyObject **v, const Py_ssize_t *pos)
{
    PyObject *t = NULL;
    for (Py_ssize_t k = 0; k < n; k++)
        if (v[k] == NULL)
            goto fail;
    t = PyTuple_New(n);
    if (t == NULL)
        goto fail;
    for (Py_ssize_t k = 0; k < n; k++)
        PyTuple_SET_ITEM(t, pos != NULL ? pos[k] : k, v[k]);
    return t;
fail:
    for (Py_ssize_t k = 0; k < n; k++)
        Py_XDECREF(v[k]);
    return NULL;
}

static int
append_row(PyObject *list, PyObject *row)
{
    if (row == NULL)
        return -1;
    int rc = PyList_Append(list, row);
    Py_DECREF(row);
    return rc;
}

static int
key_is_ident(const char *k, Py_ssize_t n)
{
    /* re.match(r"^[A-Za-z_][A-Za-z0-9_]*$"): '$' also matches before one final newline */
    if (n > 0 && k[n - 1] == '\n')
        n--;
    if (n == 0)
        return 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        char ch = k[i];
        int alpha = (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || ch == '_';
        if (!(alpha || (i > 0 && ch >= '0' && ch <= '9')))
            return 0;
    }
    return 1;
}

static int
path_key(Buf *path, P *p, int32_t m)
{
    Node *n = &p->nodes[m];
    const char *k = p->pool.p + n->koff;
    if (key_is_ident(k, n->klen))
        return buf_putc(path, '.') < 0 ? -1 : buf_put(path, k, n->klen);
    if (buf_putc(path, '[') < 0 || write_str(path, k, n->klen, n->kflags, 1) < 0)
        return -1;
    return buf_putc(path, ']');
}

static int
path_index(Buf *path, Py_ssize_t i)
{
    char tmp[32];
    int n = snprintf(tmp, sizeof(tmp), "[%zd]", i);
    return buf_put(path, tmp, n);
}

/* the grounded_on value found at path -> payload_refs rows */
static int
emit_found(Ctx *c, PyObject *rows, Buf *path, int32_t v)
{
    P *p = &c->p;
    PyObject *vals[N_PAYLOAD];
    if (p->nodes[v].type != T_ARR) {
        vals[P_INV] = newref(c->inv);
        vals[P_ORD] = PyLong_FromSsize_t(PyList_GET_SIZE(rows));
        vals[P_PATH] = str_from(path->p, path->len, 0);
        vals[P_KIND] = newref(S_NOT_LIST);
        vals[P_SOURCE_ID] = newref(Py_None);
        vals[P_CONTENT_HASH] = newref(Py_None);
        vals[P_VALUE_JSON] = dumps(c, v, DUMPS);
        return append_row(rows, pack(N_PAYLOAD, vals, PAYLOAD_POS));
    }
    Py_ssize_t i = 0, save = path->len;
    for (int32_t e = p->nodes[v].first; e >= 0; e = p->nodes[e].next, i++) {
        path->len = save;
        if (path_index(path, i) < 0)
            return -1;
        int32_t sid = get(p, e, "source_id"), ch = get(p, e, "content_hash");
        int ref = sid >= 0 && ch >= 0 && p->nodes[sid].type == T_STR && p->nodes[ch].type == T_STR;
        vals[P_INV] = newref(c->inv);
        vals[P_ORD] = PyLong_FromSsize_t(PyList_GET_SIZE(rows));
        vals[P_PATH] = str_from(path->p, path->len, 0);
        vals[P_KIND] = newref(ref ? S_REF : S_MALFORMED);
        vals[P_SOURCE_ID] = ref ? vstr(p, sid) : newref(Py_None);
        vals[P_CONTENT_HASH] = ref ? vstr(p, ch) : newref(Py_None);
        vals[P_VALUE_JSON] = dumps(c, e, DUMPS);
        if (append_row(rows, pack(N_PAYLOAD, vals, PAYLOAD_POS)) < 0)
            return -1;
    }
    path->len = save;
    return 0;
}

static int
walk(Ctx *c, PyObject *rows, Buf *path, int32_t node)
{
    P *p = &c->p;
    Node *n = &p->nodes[node];
    Py_ssize_t save = path->len;
    if (n->type == T_OBJ) {
        for (int32_t m = n->first; m >= 0; m = p->nodes[m].next) {
            Node *mn = &p->nodes[m];
            int found = mn->klen == 11 && memcmp(p->pool.p + mn->koff, "grounded_on", 11) == 0;
            if (!found && mn->type != T_OBJ && mn->type != T_ARR)
                continue;
            path->len = save;
            if (path_key(path, p, m) < 0)
                return -1;
            if ((found ? emit_found(c, rows, path, m) : walk(c, rows, path, m)) < 0)
                return -1;
        }
    } else if (n->type == T_ARR) {
        Py_ssize_t i = 0;
        for (int32_t e = n->first; e >= 0; e = p->nodes[e].next, i++) {
            if (p->nodes[e].type != T_OBJ && p->nodes[e].type != T_ARR)
                continue;
            path->len = save;
            if (path_index(path, i) < 0 || walk(c, rows, path, e) < 0)
                return -1;
        }
    }
    path->len = save;
    return 0;
}

/* one of the registered canonicalisations */
static int
registered(P *p, int32_t i)
{
    for (int k = 0; k < N_REGISTERED; k++)
        if (str_eq(p, i, REGISTERED[k].s, REGISTERED[k].n))
            return 1;
    return 0;
}

static PyObject *
evidence_row(Ctx *c, int32_t ev, Py_ssize_t i)
{
    P *p = &c->p;
    int32_t canon = get(p, ev, "canonicalisation"), content = get(p, ev, "content");
    int32_t sid = get(p, ev, "source_id"), snap = get(p, ev, "snapshot_ref");
    int has_content = content >= 0 && p->nodes[content].type != T_NULL;
    PyObject *computed;
    if (content >= 0 && p->nodes[content].type == T_OBJ) {
        if (str_eq(p, canon, PROJECTED.s, PROJECTED.n)) {
            int rc = fairsharing_bytes(c, content);
            if (rc != 0)
                return NULL;   /* error, or declined (no exception) */
            computed = hash_buf(c);
        } else if (registered(p, canon)) {
            computed = canonical_hash(c, content);
        } else {
            return NULL;   /* unknown canonicalisation: the Python path stores its error text */
        }
        if (computed == NULL)
            return NULL;
    } else {
        computed = newref(Py_None);
    }
    PyObject *v[N_EVIDENCE];
    v[V_INV] = newref(c->inv);
    v[V_ORD] = PyLong_FromSsize_t(i);
    v[V_SOURCE_ID] = vstr(p, sid);
    v[V_SOURCE_ID_JSON] = dumps(c, sid, DUMPS);
    v[V_CONTENT_HASH] = vstr(p, get(p, ev, "content_hash"));
    v[V_CANON] = vstr(p, canon);
    v[V_CANON_JSON] = dumps(c, canon, DUMPS);
    v[V_SNAPSHOT_REF] = vstr(p, snap);
    v[V_SOURCE_URI] = vstr_opt(p, get(p, ev, "source_uri"));
    v[V_RETRIEVED_AT] = vstr_opt(p, get(p, ev, "retrieved_at"));
    v[V_HASH_ALGORITHM] = vstr_opt(p, get(p, ev, "hash_algorithm"));
    v[V_CONTENT_TYPE] = has_content ? json_type(p, content) : newref(Py_None);
    v[V_CONTENT_JSON] = has_content ? dumps(c, content, COMPACT) : newref(Py_None);
    v[V_COMPUTED_HASH] = computed;
    v[V_CANONICAL_ERROR] = newref(Py_None);
    v[V_ITEM_TYPE] = newref(S_OBJECT);
    v[V_ITEM_JSON] = dumps(c, ev, DUMPS);
    v[V_SNAPSHOT_REF_JSON] = dumps(c, snap, DUMPS);
    return pack(N_EVIDENCE, v, EVIDENCE_POS);
}

static PyObject *
envelope_impl(Ctx *c, const char *data, Py_ssize_t n, int folder_check)
{
    P *p = &c->p;
    int32_t root = parse_doc(p, data, n);
    if (root < 0)
        return NULL;
    PyObject *cols[N_RUN] = {NULL};
    PyObject *payload = NULL, *evidence = NULL, *delegs = NULL, *result = NULL;

    int32_t raw_id = get(p, root, "invocation_id");
    if (folder_check) {
        Py_ssize_t il;
        const char *is = PyUnicode_AsUTF8AndSize(c->inv, &il);
        if (is == NULL) {
            PyErr_Clear();   /* e.g. a surrogate-escaped folder name: the Python path decides */
            return NULL;
        }
        if (!str_eq(p, raw_id, is, il))
            return NULL;   /* name mismatch: an issue */
    }
    int32_t mode = get(p, root, "grounding_mode");
    if (mode >= 0 && (p->nodes[mode].type == T_OBJ || p->nodes[mode].type == T_ARR))
        return NULL;   /* C5 */
    int32_t outcome = get(p, root, "outcome");
    int outcome_obj = outcome >= 0 && p->nodes[outcome].type == T_OBJ;
    if (!outcome_obj && truthy(p, outcome))
        return NULL;   /* K6 */
    int32_t evid = get(p, root, "evidence");
    int32_t ev_count = 0;
    if (truthy(p, evid)) {
        if (p->nodes[evid].type != T_ARR)
            return NULL;   /* C2 */
        for (int32_t e = p->nodes[evid].first; e >= 0; e = p->nodes[e].next)
            if (p->nodes[e].type != T_OBJ)
                return NULL;
        ev_count = p->nodes[evid].count;
    }
    int32_t dl = get(p, root, "delegations");
    int32_t dl_count = 0;
    int dl_list = dl >= 0 && p->nodes[dl].type == T_ARR;
    if (dl_list) {
        for (int32_t e = p->nodes[dl].first; e >= 0; e = p->nodes[e].next)
            dl_count += p->nodes[e].type == T_OBJ;
    } else if (truthy(p, dl) && p->nodes[dl].type != T_STR && p->nodes[dl].type != T_OBJ) {
        return NULL;   /* C3 */
    }
    int32_t problem = get(p, root, "problem");
    int32_t pay = get(p, root, "payload");
    int32_t tele = get(p, root, "telemetry");
    int32_t status = outcome_obj ? get(p, outcome, "status") : -1;
    int32_t ptype = get(p, problem, "type");   /* -1 unless problem is an object */
    int pay_obj = pay >= 0 && p->nodes[pay].type == T_OBJ;
    int32_t schema = pay_obj ? get(p, pay, "schema_class") : -1;

    cols[R_ENVELOPE_ID] = vstr(p, raw_id);
    cols[R_AGENT_ID] = vstr_nonnull(p, get(p, root, "agent_id"));
    cols[R_AGENT_VERSION] = vstr_nonnull(p, get(p, root, "agent_version"));
    cols[R_COMPLETED_AT] = iso_of(c, get(p, root, "completed_at"));
    cols[R_MODE] = vstr_nonnull(p, mode);
    cols[R_MODE_JSON] = dumps(c, mode, DUMPS);
    cols[R_MODE_TRUTHY] = newref(truthy(p, mode) ? Py_True : Py_False);
    cols[R_OUTCOME_STATUS] = outcome_obj ? vstr_opt(p, status) : newref(Py_None);
    cols[R_SUCCEEDED] = newref(str_eq(p, status, "succeeded", 9) ? Py_True : Py_False);
    cols[R_PROBLEM_TYPE] = vstr_opt(p, ptype);
    cols[R_WITHHELD] = newref(str_eq(p, ptype, WITHHELD.s, WITHHELD.n) ? Py_True : Py_False);
    cols[R_PAYLOAD_TYPE] = json_type(p, pay);
    cols[R_HAS_SCHEMA_CLASS] = newref(schema >= 0 ? Py_True : Py_False);
    cols[R_SCHEMA_CLASS_JSON] = schema >= 0 ? dumps(c, schema, DUMPS) : newref(Py_None);
    cols[R_HAS_GROUNDED_ON] = newref(pay_obj && get(p, pay, "grounded_on") >= 0 ? Py_True : Py_False);
    cols[R_EVIDENCE_COUNT] = PyLong_FromLong(ev_count);
    cols[R_DELEGATION_COUNT] = PyLong_FromLong(dl_count);
    cols[R_CONVERSATION_ID] = vstr_nonnull(p, get(p, root, "conversation_id"));
    cols[R_PARENT_ID] = vstr_nonnull(p, get(p, root, "parent_invocation_id"));
    cols[R_TRACE_ID] = tele >= 0 && p->nodes[tele].type == T_OBJ ? vstr_nonnull(p, get(p, tele, "trace_id")) : newref(Py_None);
    cols[R_ENVELOPE_HASH] = canonical_hash(c, root);
    cols[R_ENVELOPE_JSON] = dumps(c, root, COMPACT);
    PyObject *row = pack(N_RUN, cols, RUN_POS);
    if (row == NULL)
        return NULL;

    payload = PyList_New(0);
    evidence = PyList_New(0);
    delegs = PyList_New(0);
    if (payload == NULL || evidence == NULL || delegs == NULL)
        goto done;
    if (pay >= 0 && p->nodes[pay].type != T_NULL) {
        Buf path = {NULL, 0, 0, NULL};
        int rc = buf_putc(&path, '$');
        if (rc == 0)
            rc = walk(c, payload, &path, pay);
        cj_free(&path);
        if (rc < 0)
            goto done;
    }
    if (ev_count) {
        Py_ssize_t i = 0;
        for (int32_t e = p->nodes[evid].first; e >= 0; e = p->nodes[e].next, i++)
            if (append_row(evidence, evidence_row(c, e, i)) < 0)
                goto done;
    }
    if (dl_list) {
        Py_ssize_t i = 0;
        for (int32_t d = p->nodes[dl].first; d >= 0; d = p->nodes[d].next, i++) {
            if (p->nodes[d].type != T_OBJ)
                continue;
            PyObject *v[N_DELEGATION];
            v[D_INV] = newref(c->inv);
            v[D_ORD] = PyLong_FromSsize_t(i);
            v[D_ID] = vstr(p, get(p, d, "delegated_invocation_id"));
            v[D_CONTENT_HASH] = vstr(p, get(p, d, "content_hash"));
            v[D_AGENT_ID] = vstr_opt(p, get(p, d, "delegated_agent_id"));
            v[D_AGENT_VERSION] = vstr_opt(p, get(p, d, "delegated_agent_version"));
            v[D_STATUS] = vstr_opt(p, get(p, d, "delegated_status"));
            if (append_row(delegs, pack(N_DELEGATION, v, DELEGATION_POS)) < 0)
                goto done;
        }
    }
    result = PyTuple_Pack(4, row, payload, evidence, delegs);
done:
    Py_DECREF(row);
    Py_XDECREF(payload);
    Py_XDECREF(evidence);
    Py_XDECREF(delegs);
    return result;
}

static int
get_bytes(PyObject *o, const char **s, Py_ssize_t *n)
{
    if (!PyBytes_Check(o))
        return -1;
    *s = PyBytes_AS_STRING(o);
    *n = PyBytes_GET_SIZE(o);
    return 0;
}

/* s (a str) as UTF-8 into *t; -1 with an exception set */
static int
text_of(PyObject *s, Text *t)
{
    t->s = PyUnicode_AsUTF8AndSize(s, &t->n);
    return t->s == NULL ? -1 : 0;
}

static int
text_cmp(const void *a, const void *b)
{
    const Text *x = a, *y = b;
    return cj_key_cmp(x->s, x->n, y->s, y->n);
}

/* configure(...): see the top of this file. Everything is checked before anything changes, so a
 * failed call leaves the previous configuration. */
static PyObject *
configure(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 8) {
        PyErr_SetString(PyExc_TypeError, "configure(run_columns, payload_fields, evidence_fields, delegation_fields, "
                        "registered, projected, projection_fields, withheld_type) takes 8 arguments");
        return NULL;
    }
    Py_ssize_t run[N_RUN], pay[N_PAYLOAD], ev[N_EVIDENCE], dl[N_DELEGATION];
    if (nc_positions(args[0], RUN_NAMES, N_RUN, run, "runs") < 0
        || nc_positions(args[1], PAYLOAD_NAMES, N_PAYLOAD, pay, "payload_refs") < 0
        || nc_positions(args[2], EVIDENCE_NAMES, N_EVIDENCE, ev, "evidence") < 0
        || nc_positions(args[3], DELEGATION_NAMES, N_DELEGATION, dl, "delegations") < 0
        || nc_str_tuple(args[4], "registered", MAX_NAMES) < 0 || nc_str_tuple(args[6], "projection_fields", MAX_NAMES) < 0)
        return NULL;
    if (!PyUnicode_Check(args[5]) || !PyUnicode_Check(args[7])) {
        PyErr_SetString(PyExc_TypeError, "configure: projected and withheld_type must be str");
        return NULL;
    }
    Text reg[MAX_NAMES], proj[MAX_NAMES], projected, withheld;
    int n_reg = (int)PyTuple_GET_SIZE(args[4]), n_proj = (int)PyTuple_GET_SIZE(args[6]), found = 0;
    for (int k = 0; k < n_reg; k++) {
        if (text_of(PyTuple_GET_ITEM(args[4], k), &reg[k]) < 0)
            return NULL;
        found |= PyUnicode_Compare(PyTuple_GET_ITEM(args[4], k), args[5]) == 0;
    }
    for (int k = 0; k < n_proj; k++)
        if (text_of(PyTuple_GET_ITEM(args[6], k), &proj[k]) < 0)
            return NULL;
    if (text_of(args[5], &projected) < 0 || text_of(args[7], &withheld) < 0)
        return NULL;
    if (!found) {
        PyErr_Format(PyExc_ValueError, "configure: the projected canonicalisation %R is not registered", args[5]);
        return NULL;
    }
    qsort(proj, (size_t)n_proj, sizeof(Text), text_cmp);   /* the canonical key order */
    for (int k = 1; k < n_proj; k++)
        if (text_cmp(&proj[k - 1], &proj[k]) == 0) {
            PyErr_SetString(PyExc_ValueError, "configure: a projection field is given twice");
            return NULL;
        }
    PyObject *config = PyTuple_New(nargs);
    if (config == NULL)
        return NULL;
    for (Py_ssize_t k = 0; k < nargs; k++)
        PyTuple_SET_ITEM(config, k, Py_NewRef(args[k]));
    Py_XSETREF(CONFIG, config);
    memcpy(RUN_POS, run, sizeof run);
    memcpy(PAYLOAD_POS, pay, sizeof pay);
    memcpy(EVIDENCE_POS, ev, sizeof ev);
    memcpy(DELEGATION_POS, dl, sizeof dl);
    memcpy(REGISTERED, reg, sizeof(Text) * (size_t)n_reg);
    N_REGISTERED = n_reg;
    memcpy(PROJECTION, proj, sizeof(Text) * (size_t)n_proj);
    N_PROJECTION = n_proj;
    PROJECTED = projected;
    WITHHELD = withheld;
    CONFIGURED = 1;
    Py_RETURN_NONE;
}

static int
configured(void)
{
    if (!CONFIGURED)
        PyErr_SetString(PyExc_RuntimeError, "configure() has not been called (ingest/parse.py does)");
    return CONFIGURED;
}

static PyObject *
envelope(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (!configured())
        return NULL;
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "envelope(data, inv, folder_check, iso_to_us_opt, sha256)");
        return NULL;
    }
    const char *s;
    Py_ssize_t n;
    if (get_bytes(args[0], &s, &n) < 0 || !PyUnicode_Check(args[1]))
        Py_RETURN_NONE;
    int folder_check = PyObject_IsTrue(args[2]);
    if (folder_check < 0)
        return NULL;
    Ctx c;
    memset(&c, 0, sizeof(c));
    c.inv = args[1];
    c.iso = args[3];
    c.sha256 = args[4];
    PyObject *r = envelope_impl(&c, s, n, folder_check);
    p_free(&c.p);
    cj_free(&c.w);
    if (r == NULL && !PyErr_Occurred())
        Py_RETURN_NONE;
    return r;
}

static PyObject *
request(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (!configured())
        return NULL;
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "request(data, iso_to_us_opt, sha256)");
        return NULL;
    }
    const char *s;
    Py_ssize_t n;
    if (get_bytes(args[0], &s, &n) < 0)
        Py_RETURN_NONE;
    Ctx c;
    memset(&c, 0, sizeof(c));
    c.iso = args[1];
    c.sha256 = args[2];
    PyObject *r = NULL;
    int32_t root = parse_doc(&c.p, s, n);
    int32_t input = root >= 0 ? get(&c.p, root, "input") : -1;
    if (input >= 0) {   /* no "input": the Python path records missing-key */
        PyObject *v[3];
        v[0] = dumps(&c, root, COMPACT);
        v[1] = canonical_hash(&c, input);
        v[2] = iso_of(&c, get(&c.p, root, "issued_at"));
        r = pack(3, v, NULL);
    }
    p_free(&c.p);
    cj_free(&c.w);
    if (r == NULL && !PyErr_Occurred())
        Py_RETURN_NONE;
    return r;
}

static PyMethodDef methods[] = {
    {"configure", (PyCFunction)(void (*)(void))configure, METH_FASTCALL,
     "configure(run_columns, payload_fields, evidence_fields, delegation_fields, registered, projected, "
     "projection_fields, withheld_type): the constants, from ingest/parse.py (once, at load)"},
    {"envelope", (PyCFunction)(void (*)(void))envelope, METH_FASTCALL,
     "envelope(data, inv, folder_check, iso_to_us_opt, sha256) -> (run_columns, payload_rows, "
     "evidence_rows, delegation_rows) or None"},
    {"request", (PyCFunction)(void (*)(void))request, METH_FASTCALL,
     "request(data, iso_to_us_opt, sha256) -> (request_json, input_hash, issued_at) or None"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef moduledef = {PyModuleDef_HEAD_INIT, "_envelope_native",
                                       "C fast path for envelope.json and request.json", -1, methods,
                                       NULL, NULL, NULL, NULL};

PyMODINIT_FUNC
PyInit__envelope_native(void)
{
    cj_init();
    str_hexdigest = PyUnicode_InternFromString("hexdigest");
    if (str_hexdigest == NULL)
        return NULL;
    if ((S_NONE = PyUnicode_InternFromString("None")) == NULL)
        return NULL;
    if ((S_TRUE = PyUnicode_InternFromString("True")) == NULL)
        return NULL;
    if ((S_FALSE = PyUnicode_InternFromString("False")) == NULL)
        return NULL;
    if ((S_NULL = PyUnicode_InternFromString("null")) == NULL)
        return NULL;
    if ((S_BOOLEAN = PyUnicode_InternFromString("boolean")) == NULL)
        return NULL;
    if ((S_NUMBER = PyUnicode_InternFromString("number")) == NULL)
        return NULL;
    if ((S_STRING = PyUnicode_InternFromString("string")) == NULL)
        return NULL;
    if ((S_ARRAY = PyUnicode_InternFromString("array")) == NULL)
        return NULL;
    if ((S_OBJECT = PyUnicode_InternFromString("object")) == NULL)
        return NULL;
    if ((S_NOT_LIST = PyUnicode_InternFromString("not_list")) == NULL)
        return NULL;
    if ((S_REF = PyUnicode_InternFromString("ref")) == NULL)
        return NULL;
    if ((S_MALFORMED = PyUnicode_InternFromString("malformed")) == NULL)
        return NULL;
    return PyModule_Create(&moduledef);
}
