/* Canonical JSON bytes in C: the fast path of groundwork.core.canonical.canonical_bytes.
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
 * Formats: those of canonical_json.h (json's C encoder, Modules/_json.c, with ensure_ascii=False;
 * shared with ingest/_envelope_native.c), and here
 *   - keys of one dict are distinct, so sorting the (key, value) items as json does never
 *     compares values;
 *   - int: int.__repr__ (decimal; PyLong_Type.tp_repr beyond 64 bits);
 *   - float: float.__repr__, and NaN, Infinity, -Infinity for the non-finite values (json.dumps
 *     allows them by default).
 *
 * No Python code runs while a value is written (exact built-in types only), so the borrowed
 * references taken from dicts and lists stay valid. Only real errors (MemoryError) propagate.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "canonical_json.h" /* the writer's parts, shared with ingest/_envelope_native.c */

#define OK 0
#define DECLINE 1
#define ERROR (-1)

#define MARGIN 6          /* recursion levels reserved for json.dumps' own frames (see above) */
#define STACK_BUF 8192    /* output bytes kept on the C stack before the first heap buffer */
#define STACK_ITEMS 32    /* dict items sorted on the C stack */
#define CHUNK 4096        /* code points written per capacity check */
#define INSERTION_SORT 24 /* dicts up to this size are sorted by insertion */

typedef CJBuf Writer;

static inline int
put(Writer *w, const char *s, Py_ssize_t n)
{
    return cj_put(w, s, n) < 0 ? ERROR : OK;
}

static inline int
putc1(Writer *w, char c)
{
    return cj_putc(w, c) < 0 ? ERROR : OK;
}

static int
write_str(Writer *w, PyObject *s)
{
    Py_ssize_t n = PyUnicode_GET_LENGTH(s);
    const void *data = PyUnicode_DATA(s);
    if (PyUnicode_IS_ASCII(s)) /* ASCII is UTF-8 */
        return cj_write_utf8(w, (const char *)data, n) < 0 ? ERROR : OK;
    int kind = PyUnicode_KIND(s);
    if (putc1(w, '"') < 0)
        return ERROR;
    for (Py_ssize_t start = 0; start < n; start += CHUNK) {
        Py_ssize_t end = n - start > CHUNK ? start + CHUNK : n;
        if (cj_reserve(w, 6 * (end - start)) < 0) /* at most 6 bytes per code point */
            return ERROR;
        char *p = w->p + w->len;
        for (Py_ssize_t i = start; i < end; i++) {
            p = cj_put_cp(p, PyUnicode_READ(kind, data, i));
            if (p == NULL)
                return DECLINE; /* lone surrogate: not encodable */
        }
        w->len = p - w->p;
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
        return cj_put_int(w, x) < 0 ? ERROR : OK;
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
    char *text = cj_float_repr(x);
    if (text == NULL)
        return ERROR;
    int rc = put(w, text, (Py_ssize_t)strlen(text));
    PyMem_Free(text);
    return rc;
}

typedef struct {
    PyObject *key;
    PyObject *value;
} Item;

static int
item_cmp(const void *a, const void *b)
{
    return cj_str_cmp(((const Item *)a)->key, ((const Item *)b)->key);
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
            while (j > 0 && cj_str_cmp(items[j - 1].key, it.key) > 0) {
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
        if (i && (rc = putc1(w, CJ_ITEM_SEP)) != OK)
            goto done;
        if ((rc = write_str(w, items[i].key)) != OK)
            goto done;
        if ((rc = putc1(w, CJ_KEY_SEP)) != OK)
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
        if (i && putc1(w, CJ_ITEM_SEP) < 0)
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
    char stack[STACK_BUF];
    Writer w = {stack, 0, STACK_BUF, stack};
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
        result = PyBytes_FromStringAndSize(w.p, w.len);
    else if (rc == DECLINE)
        result = Py_NewRef(Py_None);
    cj_free(&w);
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
    cj_init();
    return PyModule_Create(&moduledef);
}
