/* Canonical JSON bytes in C (spec 4.1): the fast path of groundwork.canonical.canonical_bytes.
 *
 *   canonical(value) -> bytes, or None ("decline")
 *
 * The bytes are exactly
 *   json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
 * for a value built from the types json.loads / orjson.loads produce: dict (str keys), list,
 * str, int, float, True, False, None -- exact types only. Anything else declines (returns None)
 * and the caller runs json.dumps itself, which then decides (its result or its exception):
 *
 *   - any other type, a subclass of one of these (a dict subclass may override items()), a
 *     non-str key;
 *   - a str holding a lone surrogate (UTF-8 cannot encode it; the caller's json.dumps path
 *     raises the workbench's CanonicalisationError);
 *   - an int whose decimal form int.__repr__ refuses (sys.set_int_max_str_digits);
 *   - nesting that hits the interpreter's recursion limit: every dict and list enters one level
 *     with Py_EnterRecursiveCall, as json's C encoder does, and MARGIN levels are entered first
 *     for the frames json.dumps itself adds (dumps, encode, iterencode, the encoder call), so
 *     this declines at least as early as json.dumps would raise RecursionError. A
 *     self-containing list or dict declines the same way (json.dumps: "Circular reference").
 *
 * Formats (those of json's C encoder, Modules/_json.c, with ensure_ascii=False):
 *   - keys sorted by code point (Python's str order; keys of one dict are distinct, so sorting
 *     the (key, value) items as json does never compares values);
 *   - strings: '"' and '\\' and \n \r \t \b \f as two-character escapes, the other code points
 *     below 0x20 as \u00xx (lowercase hex), everything else (0x7F included) raw UTF-8;
 *   - int: int.__repr__ (decimal; PyLong_Type.tp_repr beyond 64 bits);
 *   - float: float.__repr__ = PyOS_double_to_string(x, 'r', 0, Py_DTSF_ADD_DOT_0), and NaN,
 *     Infinity, -Infinity for the non-finite values (json.dumps allows them by default).
 *
 * No Python code runs while a value is written (exact built-in types only), so the borrowed
 * references taken from dicts and lists stay valid. Only real errors (MemoryError) propagate.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#define OK 0
#define DECLINE 1
#define ERROR (-1)

#define MARGIN 6          /* recursion levels reserved for json.dumps' own frames (see above) */
#define STACK_BUF 8192    /* output bytes kept on the C stack before the first heap buffer */
#define STACK_ITEMS 32    /* dict items sorted on the C stack */
#define CHUNK 4096        /* code points written per capacity check */
#define INSERTION_SORT 24 /* dicts up to this size are sorted by insertion */

typedef struct {
    char *buf;
    Py_ssize_t len;
    Py_ssize_t cap;
    int heap;
    char stack[STACK_BUF];
} Writer;

static int
grow(Writer *w, Py_ssize_t need)
{
    Py_ssize_t cap = w->cap;
    while (cap - w->len < need) {
        if (cap > PY_SSIZE_T_MAX / 2) {
            PyErr_NoMemory();
            return ERROR;
        }
        cap *= 2;
    }
    char *buf;
    if (w->heap) {
        buf = PyMem_Realloc(w->buf, (size_t)cap);
    } else {
        buf = PyMem_Malloc((size_t)cap);
        if (buf != NULL)
            memcpy(buf, w->buf, (size_t)w->len);
    }
    if (buf == NULL) {
        PyErr_NoMemory();
        return ERROR;
    }
    w->buf = buf;
    w->cap = cap;
    w->heap = 1;
    return OK;
}

static inline int
reserve(Writer *w, Py_ssize_t need)
{
    if (w->cap - w->len >= need)
        return OK;
    return grow(w, need);
}

static inline int
put(Writer *w, const char *s, Py_ssize_t n)
{
    if (reserve(w, n) < 0)
        return ERROR;
    memcpy(w->buf + w->len, s, (size_t)n);
    w->len += n;
    return OK;
}

static inline int
putc1(Writer *w, char c)
{
    if (reserve(w, 1) < 0)
        return ERROR;
    w->buf[w->len++] = c;
    return OK;
}

/* ESC[c] for c < 0x80: 0 = written raw, 'u' = \u00xx, else the letter after the backslash */
static char ESC[128];
static const char HEX[] = "0123456789abcdef";
#define ONES UINT64_C(0x0101010101010101)

static void
init_tables(void)
{
    for (int c = 0; c < 0x20; c++)
        ESC[c] = 'u';
    ESC['"'] = '"';
    ESC['\\'] = '\\';
    ESC['\n'] = 'n';
    ESC['\r'] = 'r';
    ESC['\t'] = 't';
    ESC['\b'] = 'b';
    ESC['\f'] = 'f';
}

/* write one code point below 0x80 that needs an escape; room for 6 bytes is reserved */
static inline char *
escape(char *p, Py_UCS4 c)
{
    char e = ESC[c];
    *p++ = '\\';
    if (e != 'u') {
        *p++ = e;
        return p;
    }
    *p++ = 'u';
    *p++ = '0';
    *p++ = '0';
    *p++ = HEX[c >> 4];
    *p++ = HEX[c & 15];
    return p;
}

static int
write_str(Writer *w, PyObject *s)
{
    Py_ssize_t n = PyUnicode_GET_LENGTH(s);
    const void *data = PyUnicode_DATA(s);
    if (PyUnicode_IS_ASCII(s)) {
        /* copy 8 bytes at a time while none of them needs an escape (< 0x20, '"', '\\') */
        if (reserve(w, n + 2) < 0)
            return ERROR;
        const unsigned char *a = (const unsigned char *)data;
        char *p = w->buf + w->len;
        *p++ = '"';
        Py_ssize_t i = 0;
        for (; i + 8 <= n; i += 8) {
            uint64_t x;
            memcpy(&x, a + i, 8);
            uint64_t q = x ^ (ONES * '"'), b = x ^ (ONES * '\\');
            /* high bit of a byte set where it is < 0x20 or zero after the xor (bytes are < 0x80) */
            uint64_t hit = ((x - ONES * 0x20) | (q - ONES) | (b - ONES)) & ~x & (ONES * 0x80);
            if (hit)
                break;
            memcpy(p + i, &x, 8);
        }
        while (i < n && !ESC[a[i]]) {
            p[i] = (char)a[i];
            i++;
        }
        if (i == n) {
            p[n] = '"';
            w->len += n + 2;
            return OK;
        }
        /* an escape: the general loop below writes the whole string again */
    }
    int kind = PyUnicode_KIND(s);
    if (putc1(w, '"') < 0)
        return ERROR;
    for (Py_ssize_t start = 0; start < n; start += CHUNK) {
        Py_ssize_t end = n - start > CHUNK ? start + CHUNK : n;
        if (reserve(w, 6 * (end - start)) < 0) /* at most 6 bytes per code point */
            return ERROR;
        char *p = w->buf + w->len;
        for (Py_ssize_t i = start; i < end; i++) {
            Py_UCS4 c = PyUnicode_READ(kind, data, i);
            if (c < 0x80) {
                if (ESC[c])
                    p = escape(p, c);
                else
                    *p++ = (char)c;
            } else if (c < 0x800) {
                *p++ = (char)(0xC0 | (c >> 6));
                *p++ = (char)(0x80 | (c & 0x3F));
            } else if (c < 0x10000) {
                if (c >= 0xD800 && c <= 0xDFFF)
                    return DECLINE; /* lone surrogate: not encodable */
                *p++ = (char)(0xE0 | (c >> 12));
                *p++ = (char)(0x80 | ((c >> 6) & 0x3F));
                *p++ = (char)(0x80 | (c & 0x3F));
            } else {
                *p++ = (char)(0xF0 | (c >> 18));
                *p++ = (char)(0x80 | ((c >> 12) & 0x3F));
                *p++ = (char)(0x80 | ((c >> 6) & 0x3F));
                *p++ = (char)(0x80 | (c & 0x3F));
            }
        }
        w->len = p - w->buf;
    }
    return putc1(w, '"');
}

static int
write_int(Writer *w, PyObject *v)
{
    int overflow = 0;
    long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (overflow == 0) {
        if (x == -1 && PyErr_Occurred())
            return ERROR;
        char tmp[24];
        char *end = tmp + sizeof(tmp), *p = end;
        unsigned long long u = x < 0 ? 0ULL - (unsigned long long)x : (unsigned long long)x;
        do {
            *--p = (char)('0' + u % 10);
            u /= 10;
        } while (u);
        if (x < 0)
            *--p = '-';
        return put(w, p, end - p);
    }
    PyObject *text = PyLong_Type.tp_repr(v); /* what json's encoder calls */
    if (text == NULL) {
        PyErr_Clear(); /* e.g. beyond sys.get_int_max_str_digits(): json.dumps raises it */
        return DECLINE;
    }
    int rc = put(w, (const char *)PyUnicode_DATA(text), PyUnicode_GET_LENGTH(text)); /* ASCII */
    Py_DECREF(text);
    return rc;
}

static int
write_float(Writer *w, PyObject *v)
{
    double x = PyFloat_AS_DOUBLE(v);
    if (!isfinite(x)) {
        if (x > 0)
            return put(w, "Infinity", 8);
        if (x < 0)
            return put(w, "-Infinity", 9);
        return put(w, "NaN", 3);
    }
    char *text = PyOS_double_to_string(x, 'r', 0, Py_DTSF_ADD_DOT_0, NULL); /* float.__repr__ */
    if (text == NULL)
        return ERROR;
    int rc = put(w, text, (Py_ssize_t)strlen(text));
    PyMem_Free(text);
    return rc;
}

/* code point order of two str objects (Python's <) */
static inline int
str_cmp(PyObject *a, PyObject *b)
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

typedef struct {
    PyObject *key;
    PyObject *value;
} Item;

static int
item_cmp(const void *a, const void *b)
{
    return str_cmp(((const Item *)a)->key, ((const Item *)b)->key);
}

static int write_value(Writer *w, PyObject *v);

static int
write_dict(Writer *w, PyObject *d)
{
    Py_ssize_t n = PyDict_GET_SIZE(d);
    if (n == 0)
        return put(w, "{}", 2);
    Item stack[STACK_ITEMS];
    Item *items = stack;
    if (n > STACK_ITEMS) {
        items = PyMem_Malloc((size_t)n * sizeof(Item));
        if (items == NULL) {
            PyErr_NoMemory();
            return ERROR;
        }
    }
    int rc = OK;
    Py_ssize_t pos = 0, count = 0;
    PyObject *key, *value;
    while (PyDict_Next(d, &pos, &key, &value)) {
        if (!PyUnicode_CheckExact(key) || count >= n) {
            rc = DECLINE;
            goto done;
        }
#if PY_VERSION_HEX < 0x030C0000
        if (PyUnicode_READY(key) < 0) {
            rc = ERROR;
            goto done;
        }
#endif
        items[count].key = key;
        items[count].value = value;
        count++;
    }
    if (count <= INSERTION_SORT) { /* small dicts, often already in order */
        for (Py_ssize_t i = 1; i < count; i++) {
            Item it = items[i];
            Py_ssize_t j = i;
            while (j > 0 && str_cmp(items[j - 1].key, it.key) > 0) {
                items[j] = items[j - 1];
                j--;
            }
            items[j] = it;
        }
    } else {
        qsort(items, (size_t)count, sizeof(Item), item_cmp);
    }
    if (count != n) { /* cannot happen without Python code running; be safe */
        rc = DECLINE;
        goto done;
    }
    if ((rc = putc1(w, '{')) != OK)
        goto done;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (i && (rc = putc1(w, ',')) != OK)
            goto done;
        if ((rc = write_str(w, items[i].key)) != OK)
            goto done;
        if ((rc = putc1(w, ':')) != OK)
            goto done;
        if ((rc = write_value(w, items[i].value)) != OK)
            goto done;
    }
    rc = putc1(w, '}');
done:
    if (items != stack)
        PyMem_Free(items);
    return rc;
}

static int
write_list(Writer *w, PyObject *l)
{
    if (putc1(w, '[') < 0)
        return ERROR;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(l); i++) {
        if (i && putc1(w, ',') < 0)
            return ERROR;
        int rc = write_value(w, PyList_GET_ITEM(l, i));
        if (rc != OK)
            return rc;
    }
    return putc1(w, ']');
}

static int
enter(void)
{
    if (Py_EnterRecursiveCall(" while encoding a JSON object") == 0)
        return OK;
    if (!PyErr_ExceptionMatches(PyExc_RecursionError))
        return ERROR;
    PyErr_Clear(); /* json.dumps raises its own RecursionError (or ValueError for a cycle) */
    return DECLINE;
}

static int
write_value(Writer *w, PyObject *v)
{
    PyTypeObject *t = Py_TYPE(v);
    if (t == &PyUnicode_Type) {
#if PY_VERSION_HEX < 0x030C0000
        if (PyUnicode_READY(v) < 0)
            return ERROR;
#endif
        return write_str(w, v);
    }
    if (t == &PyDict_Type || t == &PyList_Type) {
        int rc = enter();
        if (rc != OK)
            return rc;
        rc = t == &PyDict_Type ? write_dict(w, v) : write_list(w, v);
        Py_LeaveRecursiveCall();
        return rc;
    }
    if (t == &PyLong_Type)
        return write_int(w, v);
    if (t == &PyFloat_Type)
        return write_float(w, v);
    if (v == Py_True)
        return put(w, "true", 4);
    if (v == Py_False)
        return put(w, "false", 5);
    if (v == Py_None)
        return put(w, "null", 4);
    return DECLINE;
}

static PyObject *
canonical(PyObject *Py_UNUSED(module), PyObject *value)
{
    Writer w;
    w.buf = w.stack;
    w.len = 0;
    w.cap = STACK_BUF;
    w.heap = 0;
    int entered = 0, rc = OK;
    for (; entered < MARGIN; entered++) {
        if ((rc = enter()) != OK)
            break;
    }
    if (rc == OK)
        rc = write_value(&w, value);
    while (entered--)
        Py_LeaveRecursiveCall();
    PyObject *result = NULL;
    if (rc == OK)
        result = PyBytes_FromStringAndSize(w.buf, w.len);
    else if (rc == DECLINE)
        result = Py_NewRef(Py_None);
    if (w.heap)
        PyMem_Free(w.buf);
    return result;
}

static PyMethodDef methods[] = {
    {"canonical", (PyCFunction)canonical, METH_O,
     "canonical(value) -> json.dumps(value, sort_keys=True, separators=(',', ':'), ensure_ascii=False)"
     ".encode('utf-8'), or None when the value is outside the fast path (see the C file)."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef moduledef = {PyModuleDef_HEAD_INIT, "_canonical_native",
                                       "Fast path of groundwork.canonical.canonical_bytes (see _canonical_native.c).",
                                       -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC
PyInit__canonical_native(void)
{
    init_tables();
    return PyModule_Create(&moduledef);
}
