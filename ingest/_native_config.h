/* The constant tables a C path receives from Python when it is loaded (its configure(), called
 * by the Python module that loads it): checks shared by ingest/_spans_native.c and
 * ingest/_envelope_native.c. A mismatch is a ValueError / TypeError at load, and the Python
 * module then runs its own path (groundwork/core/native.py), never a row in the wrong order.
 */
#ifndef GROUNDWORK_NATIVE_CONFIG_H
#define GROUNDWORK_NATIVE_CONFIG_H

#include <Python.h>
#include <string.h>

/* 0 when t is a tuple of at most max str, else -1 with TypeError */
static int
nc_str_tuple(PyObject *t, const char *what, Py_ssize_t max)
{
    int ok = PyTuple_CheckExact(t) && PyTuple_GET_SIZE(t) <= max;
    for (Py_ssize_t i = 0; ok && i < PyTuple_GET_SIZE(t); i++)
        ok = PyUnicode_Check(PyTuple_GET_ITEM(t, i));
    if (!ok) {
        PyErr_Format(PyExc_TypeError, "configure: %s must be a tuple of at most %zd str", what, max);
        return -1;
    }
    return 0;
}

/* The position in `names` (a row's column names, in its order) of each of the n columns known[]
 * that a C path fills: pos[k] = names.index(known[k]). names must hold exactly these n names,
 * each once (so the row width is n). 0, or -1 with ValueError / TypeError. */
static int
nc_positions(PyObject *names, const char *const *known, int n, Py_ssize_t *pos, const char *what)
{
    if (nc_str_tuple(names, what, PY_SSIZE_T_MAX) < 0)
        return -1;
    Py_ssize_t width = PyTuple_GET_SIZE(names);
    if (width != n) {
        PyErr_Format(PyExc_ValueError, "configure: the %s row has %zd columns; this C path fills %d", what, width, n);
        return -1;
    }
    for (int k = 0; k < n; k++)
        pos[k] = -1;
    for (Py_ssize_t j = 0; j < width; j++) {
        PyObject *name = PyTuple_GET_ITEM(names, j);
        const char *s = PyUnicode_AsUTF8(name);
        if (s == NULL)
            return -1;
        int k = 0;
        while (k < n && strcmp(s, known[k]) != 0)
            k++;
        if (k == n) {
            PyErr_Format(PyExc_ValueError, "configure: %s column %R is not one this C path fills", what, name);
            return -1;
        }
        if (pos[k] >= 0) {
            PyErr_Format(PyExc_ValueError, "configure: %s column %R is given twice", what, name);
            return -1;
        }
        pos[k] = j;
    }
    return 0;
}

#endif
