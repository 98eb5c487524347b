/* Python clients of `simgpu run --am`: the client-side setup (wiring/am_client.py: the synthetic firmware where
 * tinygrad's AM backend looks for it) runs inside the program's own interpreter whatever its environment -- `python
 * -I`, a venv or a sys.path without simgpu -- as nothing of it has to be importable from there.
 *
 * An LD_PRELOAD library cannot put a module on sys.path, but CPython's audit hooks may be added before the interpreter
 * starts (PySys_AddAuditHook, documented as safe before Py_Initialize) and see every import. When the program first
 * imports tinygrad, the hook runs the file $SIMGPU_AM_CLIENT with runpy, once, then steps aside. In a program that
 * is not a CPython interpreter (no PySys_AddAuditHook to find), or without the variable, this does nothing.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

typedef struct _object PyObject;
typedef int (*audit_hook)(const char *, PyObject *, void *);

static PyObject *(*tuple_item)(PyObject *, ssize_t);
static const char *(*as_utf8)(PyObject *);
static int (*run_string)(const char *, void *);
static int done;

static int on_audit(const char *event, PyObject *args, void *data) {
    (void)data;
    if (done || strcmp(event, "import") != 0) return 0;
    PyObject *name = tuple_item(args, 0); /* borrowed: the module's name, a str */
    const char *s = name ? as_utf8(name) : NULL;
    if (!s || (strcmp(s, "tinygrad") != 0 && strncmp(s, "tinygrad.", 9) != 0)) return 0;
    done = 1; /* before running: the script's own imports come back here */
    run_string("__import__('runpy').run_path(__import__('os').environ['SIMGPU_AM_CLIENT'], "
               "run_name='__simgpu_am_client__')", NULL);
    return 0;
}

__attribute__((constructor)) static void pyhook_init(void) {
    if (!getenv("SIMGPU_AM_CLIENT")) return;
    int (*add_hook)(audit_hook, void *) = (int (*)(audit_hook, void *))dlsym(RTLD_DEFAULT, "PySys_AddAuditHook");
    tuple_item = (PyObject *(*)(PyObject *, ssize_t))dlsym(RTLD_DEFAULT, "PyTuple_GetItem");
    as_utf8 = (const char *(*)(PyObject *))dlsym(RTLD_DEFAULT, "PyUnicode_AsUTF8");
    run_string = (int (*)(const char *, void *))dlsym(RTLD_DEFAULT, "PyRun_SimpleStringFlags");
    if (add_hook && tuple_item && as_utf8 && run_string) add_hook(on_audit, NULL);
}
