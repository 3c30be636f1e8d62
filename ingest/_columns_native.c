/* Fast path for ingest.tables.to_arrow: one column of a list of row tuples -> the buffers of its
 * Arrow array, which to_arrow wraps with pyarrow.Array.from_buffers (no copy) instead of
 * converting the column's Python values with pyarrow.array.
 *
 *   column(rows, index, kind) -> (null_count, validity, values, data) or None ("decline")
 *
 * rows: a list of tuples; index: the column's position in every tuple; kind: the Arrow type as
 * one character (tables.NATIVE_KINDS):
 *
 *   's'  utf8 string   values = int32 offsets (n + 1), data = the UTF-8 bytes
 *   'i'  int32         values = n little-endian int32            data = None
 *   'l'  int64 / timestamp[us] (an int counting microseconds)    data = None
 *   'b'  bool          values = a bitmap, LSB first              data = None
 *   'd'  float64       values = n doubles                        data = None
 *
 * validity is None when no value is None, else the bitmap (1 = valid, LSB first). A null slot's
 * value is 0 (an empty string). The result is exactly the array pyarrow.array(column, type)
 * builds, for the values accepted here: None, and per kind an exact str / int (not bool) in
 * range / True or False / float. Anything else (another type, an int out of range, a str that
 * UTF-8 cannot encode, more than 2**31 - 1 bytes of strings, a row that is no tuple or too
 * short) declines the whole column: to_arrow then calls pyarrow.array, which converts it or
 * raises exactly as before. Only real Python errors (MemoryError) propagate.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

/* the value of row r's column, or NULL when the row is no tuple holding it (decline) */
static inline PyObject *
cell(PyObject *rows, Py_ssize_t r, Py_ssize_t index)
{
    PyObject *row = PyList_GET_ITEM(rows, r);
    if (!PyTuple_CheckExact(row) || PyTuple_GET_SIZE(row) <= index)
        return NULL;
    return PyTuple_GET_ITEM(row, index);
}

/* a new zero-filled bytes object of n bytes */
static PyObject *
zeros(Py_ssize_t n)
{
    PyObject *b = PyBytes_FromStringAndSize(NULL, n);
    if (b != NULL)
        memset(PyBytes_AS_STRING(b), 0, (size_t)n);
    return b;
}

#define DECLINE 1  /* fill_* result: not this path's column (no Python error set) */

static int
fill_strings(PyObject *rows, Py_ssize_t n, Py_ssize_t index, uint8_t *valid, Py_ssize_t *nulls,
             PyObject **values, PyObject **data)
{
    /* first pass: check every value and add up the bytes (UTF-8 of a non-ASCII str is cached
       in the str by CPython, as pyarrow.array also asks for it) */
    int64_t total = 0;
    for (Py_ssize_t r = 0; r < n; r++) {
        PyObject *v = cell(rows, r, index);
        if (v == NULL)
            return DECLINE;
        if (v == Py_None)
            continue;
        if (!PyUnicode_CheckExact(v))
            return DECLINE;
        Py_ssize_t len;
        if (PyUnicode_IS_COMPACT_ASCII(v))
            len = PyUnicode_GET_LENGTH(v);
        else if (PyUnicode_AsUTF8AndSize(v, &len) == NULL) {
            PyErr_Clear();  /* e.g. a lone surrogate: pyarrow.array words it */
            return DECLINE;
        }
        total += len;
        if (total > INT32_MAX)
            return DECLINE;
    }
    *values = PyBytes_FromStringAndSize(NULL, (n + 1) * (Py_ssize_t)sizeof(int32_t));
    *data = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)total);
    if (*values == NULL || *data == NULL)
        return -1;
    int32_t *off = (int32_t *)PyBytes_AS_STRING(*values);
    char *out = PyBytes_AS_STRING(*data);
    int32_t at = 0;
    off[0] = 0;
    for (Py_ssize_t r = 0; r < n; r++) {
        PyObject *v = PyTuple_GET_ITEM(PyList_GET_ITEM(rows, r), index);
        if (v == Py_None) {
            (*nulls)++;
        } else {
            Py_ssize_t len;
            const char *s;
            if (PyUnicode_IS_COMPACT_ASCII(v)) {
                s = (const char *)PyUnicode_DATA(v);
                len = PyUnicode_GET_LENGTH(v);
            } else {
                s = PyUnicode_AsUTF8AndSize(v, &len);  /* cached by the first pass */
                if (s == NULL)
                    return -1;
            }
            memcpy(out + at, s, (size_t)len);
            at += (int32_t)len;
            valid[r >> 3] |= (uint8_t)(1u << (r & 7));
        }
        off[r + 1] = at;
    }
    return 0;
}

static int
fill_fixed(PyObject *rows, Py_ssize_t n, Py_ssize_t index, uint8_t *valid, Py_ssize_t *nulls,
           PyObject **values, int kind)
{
    /* kind 'i' (int32) and 'l' (int64): n little-endian integers; 'd': n doubles; 'b': a bitmap */
    *values = zeros(kind == 'b' ? (n + 7) / 8 : n * (kind == 'i' ? 4 : 8));
    if (*values == NULL)
        return -1;
    char *out = PyBytes_AS_STRING(*values);
    for (Py_ssize_t r = 0; r < n; r++) {
        PyObject *v = cell(rows, r, index);
        if (v == NULL)
            return DECLINE;
        if (v == Py_None) {
            (*nulls)++;
            continue;
        }
        if (kind == 'b') {
            if (v == Py_True)
                out[r >> 3] |= (char)(1u << (r & 7));
            else if (v != Py_False)
                return DECLINE;
        } else if (kind == 'd') {
            if (!PyFloat_CheckExact(v))
                return DECLINE;
            double d = PyFloat_AS_DOUBLE(v);
            memcpy(out + 8 * r, &d, 8);
        } else {
            if (!PyLong_CheckExact(v))
                return DECLINE;
            int overflow;
            long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
            if (overflow || (x == -1 && PyErr_Occurred())) {
                PyErr_Clear();
                return DECLINE;
            }
            if (kind == 'l') {
                int64_t y = (int64_t)x;
                memcpy(out + 8 * r, &y, 8);
            } else {
                if (x < INT32_MIN || x > INT32_MAX)
                    return DECLINE;
                int32_t y = (int32_t)x;
                memcpy(out + 4 * r, &y, 4);
            }
        }
        valid[r >> 3] |= (uint8_t)(1u << (r & 7));
    }
    return 0;
}

static PyObject *
column(PyObject *self, PyObject *args)
{
    PyObject *rows;
    Py_ssize_t index;
    int kind;
    if (!PyArg_ParseTuple(args, "O!nC:column", &PyList_Type, &rows, &index, &kind))
        return NULL;
    if (index < 0)
        Py_RETURN_NONE;
    Py_ssize_t n = PyList_GET_SIZE(rows);
    PyObject *validity = zeros((n + 7) / 8), *values = NULL, *data = NULL;
    if (validity == NULL)
        return NULL;
    uint8_t *valid = (uint8_t *)PyBytes_AS_STRING(validity);
    Py_ssize_t nulls = 0;
    int rc;
    switch (kind) {
    case 's': rc = fill_strings(rows, n, index, valid, &nulls, &values, &data); break;
    case 'i': case 'l': case 'b': case 'd': rc = fill_fixed(rows, n, index, valid, &nulls, &values, kind); break;
    default: rc = DECLINE;
    }
    if (rc != 0) {
        Py_DECREF(validity);
        Py_XDECREF(values);
        Py_XDECREF(data);
        if (rc < 0)
            return NULL;
        Py_RETURN_NONE;
    }
    if (nulls == 0) {
        Py_DECREF(validity);
        validity = Py_NewRef(Py_None);
    }
    if (data == NULL)
        data = Py_NewRef(Py_None);
    return Py_BuildValue("(nNNN)", nulls, validity, values, data);
}

static PyMethodDef methods[] = {
    {"column", column, METH_VARARGS,
     "column(rows, index, kind) -> (null_count, validity, values, data) or None: the Arrow buffers "
     "of one column of a list of row tuples (see ingest/_columns_native.c)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_columns_native", NULL, -1, methods};

PyMODINIT_FUNC
PyInit__columns_native(void)
{
    return PyModule_Create(&module);
}
