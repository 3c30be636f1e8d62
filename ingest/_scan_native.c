/* Fast path for ingest.scan.list_and_read: read every file of a run folder that holds regular
 * files only.
 *
 *   read_folder(path) -> [(name, data, mtime_ns, listed_size), ...] sorted by name, or None
 *
 * The folder is opened once (following a symlink, as os.scandir(path) does), listed with
 * readdir, and each entry opened relative to it with O_NOFOLLOW, fstat-ed and read exactly as
 * ingest/scan.py's _read_at does: one read of st_size + 1 bytes; when that returns more than
 * st_size (the file grew), further reads of 1 MiB until end of file. listed_size is st_size,
 * mtime_ns st_mtim as nanoseconds.
 *
 * It declines (None; the Python path then lists and reads the folder itself and words every
 * issue) on anything else: a folder that cannot be opened or listed; an entry whose directory
 * type is not DT_REG (symlinks, folders, FIFOs, devices, sockets, DT_UNKNOWN -- none of them is
 * ever opened); a name with a byte outside 0x01..0x7F (non-ASCII names keep Python's
 * decoding and UTF-8 check); a file that cannot be opened, is no regular file once open, or
 * fails to read; an mtime beyond int64 nanoseconds; more than 1024 entries.
 *
 * Every descriptor it opens is closed before it returns, on every path. Errors: only real
 * Python errors (MemoryError) propagate.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_ENTRIES 1024
#define CHUNK ((Py_ssize_t)1 << 20)

#define OK 0
#define DECLINE 1
#define ERROR (-1)

static int
cmp_names(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static ssize_t
read_retry(int fd, char *buf, size_t n)
{
    ssize_t got;
    do {
        got = read(fd, buf, n);
    } while (got < 0 && errno == EINTR);
    return got;
}

/* the (name, data, mtime_ns, listed_size) of one file into *out, or DECLINE / ERROR */
static int
read_one(int dfd, const char *name, PyObject **out)
{
    int fd;
    do {
        fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0)
        return DECLINE;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < 0
        || (uint64_t)st.st_size >= (uint64_t)PY_SSIZE_T_MAX - CHUNK) {
        close(fd);
        return DECLINE;
    }
    /* st_mtim in nanoseconds must fit int64 (|sec| < 9.2e9) */
    if (st.st_mtim.tv_sec > 9000000000LL || st.st_mtim.tv_sec < -9000000000LL) {
        close(fd);
        return DECLINE;
    }
    long long mtime_ns = (long long)st.st_mtim.tv_sec * 1000000000LL + (long long)st.st_mtim.tv_nsec;
    Py_ssize_t size = (Py_ssize_t)st.st_size;
    PyObject *data = PyBytes_FromStringAndSize(NULL, size + 1);
    if (data == NULL) {
        close(fd);
        return ERROR;
    }
    ssize_t got = read_retry(fd, PyBytes_AS_STRING(data), (size_t)size + 1);
    if (got < 0) {
        close(fd);
        Py_DECREF(data);
        return DECLINE;
    }
    Py_ssize_t len = got;
    if (len > size) { /* growing while we read: take everything there is */
        for (;;) {
            if (_PyBytes_Resize(&data, len + CHUNK) != 0) {
                close(fd);
                return ERROR;
            }
            got = read_retry(fd, PyBytes_AS_STRING(data) + len, (size_t)CHUNK);
            if (got < 0) {
                close(fd);
                Py_DECREF(data);
                return DECLINE;
            }
            if (got == 0)
                break;
            len += got;
        }
    }
    close(fd);
    if (_PyBytes_Resize(&data, len) != 0)
        return ERROR;
    PyObject *str = PyUnicode_DecodeASCII(name, (Py_ssize_t)strlen(name), NULL);
    if (str == NULL) {
        Py_DECREF(data);
        return ERROR;
    }
    *out = Py_BuildValue("(NNLn)", str, data, mtime_ns, size);
    return *out == NULL ? ERROR : OK;
}

static PyObject *
read_folder(PyObject *self, PyObject *arg)
{
    (void)self;
    PyObject *path_bytes = NULL;
    if (!PyUnicode_FSConverter(arg, &path_bytes))
        return NULL;
    int dfd;
    do {
        dfd = open(PyBytes_AS_STRING(path_bytes), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    } while (dfd < 0 && errno == EINTR);
    Py_DECREF(path_bytes);
    if (dfd < 0)
        Py_RETURN_NONE;
    int lfd = dup(dfd); /* closedir closes the listing's descriptor; dfd stays for openat */
    if (lfd < 0) {
        close(dfd);
        Py_RETURN_NONE;
    }
    DIR *dir = fdopendir(lfd);
    if (dir == NULL) {
        close(lfd);
        close(dfd);
        Py_RETURN_NONE;
    }
    /* names, copied into one arena */
    char *names[MAX_ENTRIES];
    size_t n = 0, used = 0, cap = 4096;
    char *arena = malloc(cap);
    size_t offsets[MAX_ENTRIES];
    int status = arena == NULL ? ERROR : OK;
    while (status == OK) {
        errno = 0;
        struct dirent *d = readdir(dir);
        if (d == NULL) {
            if (errno != 0)
                status = DECLINE;
            break;
        }
        const char *nm = d->d_name;
        if (nm[0] == '.' && (nm[1] == '\0' || (nm[1] == '.' && nm[2] == '\0')))
            continue;
        if (d->d_type != DT_REG || n >= MAX_ENTRIES) {
            status = DECLINE;
            break;
        }
        size_t k = 0;
        for (; nm[k]; k++)
            if ((unsigned char)nm[k] >= 0x80) {
                status = DECLINE;
                break;
            }
        if (status != OK)
            break;
        if (used + k + 1 > cap) {
            while (used + k + 1 > cap)
                cap *= 2;
            char *grown = realloc(arena, cap);
            if (grown == NULL) {
                status = ERROR;
                break;
            }
            arena = grown;
        }
        memcpy(arena + used, nm, k + 1);
        offsets[n++] = used;
        used += k + 1;
    }
    closedir(dir);
    PyObject *result = NULL;
    if (status == OK) {
        for (size_t i = 0; i < n; i++)
            names[i] = arena + offsets[i];
        qsort(names, n, sizeof(char *), cmp_names); /* ASCII: byte order = code point order */
        result = PyList_New((Py_ssize_t)n);
        if (result == NULL)
            status = ERROR;
        for (size_t i = 0; status == OK && i < n; i++) {
            PyObject *entry = NULL;
            status = read_one(dfd, names[i], &entry);
            if (status != OK)
                break;
            PyList_SET_ITEM(result, (Py_ssize_t)i, entry);
        }
    }
    free(arena);
    close(dfd);
    if (status == OK)
        return result;
    Py_XDECREF(result);
    if (status == ERROR) {
        if (!PyErr_Occurred())
            PyErr_NoMemory();
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"read_folder", (PyCFunction)read_folder, METH_O,
     "read_folder(path) -> [(name, data, mtime_ns, listed_size)] sorted by name, or None when the "
     "folder holds anything but regular files with ASCII names (see ingest/_scan_native.c)."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef moduledef = {PyModuleDef_HEAD_INIT, "_scan_native",
                                       "Fast path of ingest.scan.list_and_read (see ingest/_scan_native.c).",
                                       -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC
PyInit__scan_native(void)
{
    return PyModule_Create(&moduledef);
}
