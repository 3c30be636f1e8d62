/* The canonical JSON writer shared by groundwork/core/_canonical_native.c (Python values) and
 * ingest/_envelope_native.c (its own parse tree): one definition of the bytes of
 *
 *   json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
 *
 * (groundwork/core/canonical.py, docs/schema.md "content hashes"). Each C file walks its own
 * representation of a value (a dict/list, or parsed nodes) and writes every part through the
 * functions below:
 *
 *   - separators: CJ_ITEM_SEP between members and elements, CJ_KEY_SEP after a key;
 *   - keys sorted by code point: cj_key_cmp on UTF-8 (byte order is code point order),
 *     cj_str_cmp on str objects;
 *   - strings: cj_write_utf8 (UTF-8 text) or cj_put_cp (one code point): '"' '\\' \n \r \t \b \f
 *     as two-character escapes, the other code points below 0x20 as \u00xx (lowercase hex),
 *     everything else (0x7F included) raw UTF-8 -- json's C encoder (Modules/_json.c);
 *   - numbers: cj_put_int (int.__repr__ of a 64-bit value) and cj_float_repr (float.__repr__).
 *
 * CJBuf is the growable output buffer of both; it may start on caller-owned storage (`stack`).
 * Every function returns 0, or -1 with MemoryError set. Header-only: each including file gets
 * its own static copy (call cj_init() once, at module init).
 */
#ifndef GROUNDWORK_CANONICAL_JSON_H
#define GROUNDWORK_CANONICAL_JSON_H

#include <Python.h>
#include <stdint.h>
#include <string.h>

#define CJ_ITEM_SEP ','
#define CJ_KEY_SEP ':'

typedef struct {
    char *p;
    Py_ssize_t len, cap;
    char *stack; /* the initial storage when p == stack (not freed, copied when outgrown) */
} CJBuf;

static int
cj_grow(CJBuf *b, Py_ssize_t n)
{
    Py_ssize_t cap = b->cap ? b->cap : 1024;
    while (cap - b->len < n) {
        if (cap > PY_SSIZE_T_MAX / 4) {
            PyErr_NoMemory();
            return -1;
        }
        cap *= 2;
    }
    char *p;
    if (b->p != NULL && b->p != b->stack) {
        p = PyMem_Realloc(b->p, (size_t)cap);
    } else {
        p = PyMem_Malloc((size_t)cap);
        if (p != NULL && b->len > 0)
            memcpy(p, b->p, (size_t)b->len);
    }
    if (p == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    b->p = p;
    b->cap = cap;
    return 0;
}

/* room for n more bytes */
static inline int
cj_reserve(CJBuf *b, Py_ssize_t n)
{
    return b->cap - b->len >= n ? 0 : cj_grow(b, n);
}

static void
cj_free(CJBuf *b)
{
    if (b->p != NULL && b->p != b->stack)
        PyMem_Free(b->p);
    b->p = NULL;
    b->len = b->cap = 0;
}

static inline int
cj_put(CJBuf *b, const char *s, Py_ssize_t n)
{
    if (cj_reserve(b, n) < 0)
        return -1;
    memcpy(b->p + b->len, s, (size_t)n);
    b->len += n;
    return 0;
}

static inline int
cj_putc(CJBuf *b, char c)
{
    if (b->len >= b->cap && cj_grow(b, 1) < 0)
        return -1;
    b->p[b->len++] = c;
    return 0;
}

#define CJ_PUTS(b, lit) cj_put((b), (lit), (Py_ssize_t)(sizeof(lit) - 1))

/* ------------------------------------------------------------------------------- strings */

/* CJ_ESC[c] for c < 0x80: 0 = written raw, 'u' = \u00xx, else the letter after the backslash */
static char CJ_ESC[128];
static const char CJ_HEX[] = "0123456789abcdef";
#define CJ_ONES UINT64_C(0x0101010101010101)
#define CJ_HIGHS UINT64_C(0x8080808080808080)

static void
cj_init(void)
{
    for (int c = 0; c < 0x20; c++)
        CJ_ESC[c] = 'u';
    CJ_ESC['"'] = '"';
    CJ_ESC['\\'] = '\\';
    CJ_ESC['\n'] = 'n';
    CJ_ESC['\r'] = 'r';
    CJ_ESC['\t'] = 't';
    CJ_ESC['\b'] = 'b';
    CJ_ESC['\f'] = 'f';
}

/* the escape of a code point below 0x80 with CJ_ESC[c] != 0, at p (room for 6); the end */
static inline char *
cj_escape(char *p, unsigned c)
{
    char e = CJ_ESC[c];
    *p++ = '\\';
    if (e != 'u') {
        *p++ = e;
        return p;
    }
    *p++ = 'u';
    *p++ = '0';
    *p++ = '0';
    *p++ = CJ_HEX[c >> 4];
    *p++ = CJ_HEX[c & 15];
    return p;
}

/* one code point at p (room for 6); the end, or NULL for a surrogate (UTF-8 cannot hold it) */
static inline char *
cj_put_cp(char *p, Py_UCS4 c)
{
    if (c < 0x80) {
        if (CJ_ESC[c])
            return cj_escape(p, c);
        *p++ = (char)c;
    } else if (c < 0x800) {
        *p++ = (char)(0xC0 | (c >> 6));
        *p++ = (char)(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
        if (c >= 0xD800 && c <= 0xDFFF)
            return NULL;
        *p++ = (char)(0xE0 | (c >> 12));
        *p++ = (char)(0x80 | ((c >> 6) & 0x3F));
        *p++ = (char)(0x80 | (c & 0x3F));
    } else {
        *p++ = (char)(0xF0 | (c >> 18));
        *p++ = (char)(0x80 | ((c >> 12) & 0x3F));
        *p++ = (char)(0x80 | ((c >> 6) & 0x3F));
        *p++ = (char)(0x80 | (c & 0x3F));
    }
    return p;
}

/* the quoted string of valid UTF-8 text s[0..n) (no surrogates) */
static int
cj_write_utf8(CJBuf *b, const char *s, Py_ssize_t n)
{
    if (cj_reserve(b, n + 2) < 0)
        return -1;
    const unsigned char *a = (const unsigned char *)s;
    char *p = b->p + b->len;
    *p++ = '"';
    Py_ssize_t i = 0;
    /* 8 bytes at a time while none needs an escape (< 0x20, '"', '\\'; bytes >= 0x80 are raw) */
    for (; i + 8 <= n; i += 8) {
        uint64_t x, q, k;
        memcpy(&x, a + i, 8);
        q = x ^ (CJ_ONES * '"');
        k = x ^ (CJ_ONES * '\\');
        /* high bit set where a byte below 0x80 is < 0x20 or zero after an xor (bytes >= 0x80
         * are masked out by ~x, and cannot borrow into a lower byte's flag) */
        if (((x - CJ_ONES * 0x20) | (q - CJ_ONES) | (k - CJ_ONES)) & ~x & CJ_HIGHS)
            break;
        memcpy(p + i, &x, 8);
    }
    while (i < n && (a[i] >= 0x80 || !CJ_ESC[a[i]])) {
        p[i] = (char)a[i];
        i++;
    }
    if (i == n) {
        p[n] = '"';
        b->len += n + 2;
        return 0;
    }
    /* an escape: the rest goes through the general loop (at most 6 bytes out per byte in) */
    b->len += 1 + i;
    if (cj_reserve(b, 6 * (n - i) + 1) < 0)
        return -1;
    p = b->p + b->len;
    for (; i < n; i++) {
        unsigned c = a[i];
        if (c < 0x80 && CJ_ESC[c])
            p = cj_escape(p, c);
        else
            *p++ = (char)c;
    }
    *p++ = '"';
    b->len = p - b->p;
    return 0;
}

/* ------------------------------------------------------------------------------- key order */

/* UTF-8 byte order = code point order */
static inline int
cj_key_cmp(const char *a, Py_ssize_t na, const char *b, Py_ssize_t nb)
{
    int c = memcmp(a, b, (size_t)(na < nb ? na : nb));
    if (c)
        return c;
    return (na > nb) - (na < nb);
}

/* code point order of two ready str objects (Python's <) */
static inline int
cj_str_cmp(PyObject *a, PyObject *b)
{
    Py_ssize_t la = PyUnicode_GET_LENGTH(a), lb = PyUnicode_GET_LENGTH(b);
    Py_ssize_t n = la < lb ? la : lb;
    int ka = PyUnicode_KIND(a), kb = PyUnicode_KIND(b);
    const void *da = PyUnicode_DATA(a), *db = PyUnicode_DATA(b);
    if (ka == PyUnicode_1BYTE_KIND && kb == PyUnicode_1BYTE_KIND) {
        const unsigned char *ca = (const unsigned char *)da, *cb = (const unsigned char *)db;
        if (n && ca[0] != cb[0]) /* keys mostly differ in their first character */
            return ca[0] < cb[0] ? -1 : 1;
        int c = memcmp(ca, cb, (size_t)n);
        if (c)
            return c;
    } else {
        for (Py_ssize_t i = 0; i < n; i++) {
            Py_UCS4 ca = PyUnicode_READ(ka, da, i), cb = PyUnicode_READ(kb, db, i);
            if (ca != cb)
                return ca < cb ? -1 : 1;
        }
    }
    return la < lb ? -1 : (la > lb ? 1 : 0);
}

/* ------------------------------------------------------------------------------- numbers */

/* int.__repr__ of a 64-bit integer */
static int
cj_put_int(CJBuf *b, long long x)
{
    char tmp[24];
    char *end = tmp + sizeof(tmp), *p = end;
    unsigned long long u = x < 0 ? 0ULL - (unsigned long long)x : (unsigned long long)x;
    do {
        *--p = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (x < 0)
        *--p = '-';
    return cj_put(b, p, end - p);
}

/* float.__repr__ of a finite x (what json.dumps writes): a PyMem string the caller frees, or
 * NULL with an exception set */
static inline char *
cj_float_repr(double x)
{
    return PyOS_double_to_string(x, 'r', 0, Py_DTSF_ADD_DOT_0, NULL);
}

#endif
