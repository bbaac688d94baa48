/* The compiled walk of an `ast` tree (aoti_lint/pyast.py), giving exactly what its Python equivalent gives;
 * tests/test_pyast.py compares them on the repository's modules and on torch's.
 *
 * The prefilter's later stages walk the tree of every file that passes stage one (`code_index`, the fake kernels'
 * scan): in Python, a generator step, a `getattr` per field and an `isinstance` per child cost 0.6 to 1.5 us a
 * node, a tenth of a cold run over torch's sources. Here the same steps run in C:
 *
 * - walk(root, base, fields_of, child_fields, skip): every node under `root`, itself first, in the order of
 *   `pyast.walk` (depth first, the last child first), as a list. A node's children are the values of its fields
 *   (`fields_of[type]`, filled by calling `child_fields(type)` on a miss: the expression context aside) that are
 *   instances of `base`, or the items that are, of a field holding a list. A child that is an instance of `skip`
 *   (a tuple of types, or None) is left out with everything under it.
 * - children(node, base, fields_of, child_fields): the node's children in field order, as `pyast.children`.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* The names of the fields of `node`'s type that may hold nodes: a new reference, or NULL with an error set. */
static PyObject *fields_of_node(PyObject *node, PyObject *fields_of, PyObject *child_fields) {
    PyObject *type = (PyObject *)Py_TYPE(node);
    PyObject *names = PyDict_GetItemWithError(fields_of, type);
    if (names != NULL) {
        Py_INCREF(names);
        return names;
    }
    if (PyErr_Occurred()) {
        return NULL;
    }
    names = PyObject_CallOneArg(child_fields, type);
    if (names != NULL && !PyTuple_Check(names)) {
        PyErr_SetString(PyExc_TypeError, "child_fields must give a tuple");
        Py_CLEAR(names);
    }
    return names;
}

/* Whether `value` is a child to keep: an instance of `base` and, where `skip` is a tuple, of none of its types.
 * 1, 0, or -1 with an error set. */
static int is_kept(PyObject *value, PyTypeObject *base, PyObject *skip) {
    if (!PyObject_TypeCheck(value, base)) {
        return 0;
    }
    if (skip == Py_None) {
        return 1;
    }
    int skipped = PyObject_IsInstance(value, skip);
    return skipped < 0 ? -1 : !skipped;
}

/* A growing array of new references: the nodes still to visit. */
typedef struct {
    PyObject **items;
    Py_ssize_t size, capacity;
} Stack;

static int push(Stack *stack, PyObject *node) {
    if (stack->size == stack->capacity) {
        Py_ssize_t capacity = stack->capacity ? 2 * stack->capacity : 256;
        PyObject **items = PyMem_Realloc(stack->items, capacity * sizeof(PyObject *));
        if (items == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        stack->items = items;
        stack->capacity = capacity;
    }
    Py_INCREF(node);
    stack->items[stack->size++] = node;
    return 0;
}

/* Append the node's children in field order: to the list `found`, or pushed on `stack`. 0, or -1 with an error
 * set. A field is read from the node's own dictionary, where `ast` keeps it (getattr's answer, without its look
 * through the type first); a node without one is read by getattr. */
static int add_children(PyObject *node, PyObject *found, Stack *stack, PyTypeObject *base, PyObject *fields_of,
                        PyObject *child_fields, PyObject *skip) {
    PyObject *names = fields_of_node(node, fields_of, child_fields);
    if (names == NULL) {
        return -1;
    }
    PyObject *dict = PyObject_GenericGetDict(node, NULL);
    if (dict == NULL) {
        PyErr_Clear();
    } else if (!PyDict_CheckExact(dict)) {
        Py_CLEAR(dict);
    }
    int failed = 0;
    Py_ssize_t count = PyTuple_GET_SIZE(names);
    for (Py_ssize_t i = 0; i < count && !failed; i++) {
        PyObject *name = PyTuple_GET_ITEM(names, i);
        PyObject *value;
        if (dict != NULL) {
            value = PyDict_GetItemWithError(dict, name);
            if (value == NULL) {
                if (PyErr_Occurred()) {
                    failed = 1;
                    break;
                }
                /* not in the dictionary: getattr decides (a default of the class, or none) */
                value = PyObject_GetAttr(node, name);
            } else {
                Py_INCREF(value);
            }
        } else {
            value = PyObject_GetAttr(node, name);
        }
        if (value == NULL) {
            /* getattr(node, name, None): an optional field left unset is no child */
            if (!PyErr_ExceptionMatches(PyExc_AttributeError)) {
                failed = 1;
                break;
            }
            PyErr_Clear();
            continue;
        }
        if (PyList_CheckExact(value)) {
            for (Py_ssize_t j = 0; j < PyList_GET_SIZE(value) && !failed; j++) {
                PyObject *item = PyList_GET_ITEM(value, j);
                int kept = is_kept(item, base, skip);
                failed = kept < 0 || (kept && (found ? PyList_Append(found, item) : push(stack, item)) < 0);
            }
        } else {
            int kept = is_kept(value, base, skip);
            failed = kept < 0 || (kept && (found ? PyList_Append(found, value) : push(stack, value)) < 0);
        }
        Py_DECREF(value);
    }
    Py_XDECREF(dict);
    Py_DECREF(names);
    return failed ? -1 : 0;
}

static int read_common(PyObject *const *args, PyTypeObject **base, PyObject **fields_of, PyObject **child_fields) {
    if (!PyType_Check(args[1]) || !PyDict_Check(args[2]) || !PyCallable_Check(args[3])) {
        PyErr_SetString(PyExc_TypeError, "expected a type, a dict and a callable");
        return -1;
    }
    *base = (PyTypeObject *)args[1];
    *fields_of = args[2];
    *child_fields = args[3];
    return 0;
}

static PyObject *walk(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    (void)module;
    PyTypeObject *base;
    PyObject *fields_of, *child_fields;
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "walk(root, base, fields_of, child_fields, skip)");
        return NULL;
    }
    if (read_common(args, &base, &fields_of, &child_fields) < 0) {
        return NULL;
    }
    PyObject *skip = args[4];
    if (skip != Py_None && !PyTuple_Check(skip)) {
        PyErr_SetString(PyExc_TypeError, "skip must be a tuple of types or None");
        return NULL;
    }
    PyObject *found = PyList_New(0);
    Stack stack = {NULL, 0, 0};
    if (found == NULL || push(&stack, args[0]) < 0) {
        goto error;
    }
    while (stack.size > 0) {
        PyObject *node = stack.items[--stack.size]; /* the stack's reference, now ours */
        int failed = PyList_Append(found, node) < 0 ||
                     add_children(node, NULL, &stack, base, fields_of, child_fields, skip) < 0;
        Py_DECREF(node);
        if (failed) {
            goto error;
        }
    }
    PyMem_Free(stack.items);
    return found;
error:
    while (stack.size > 0) {
        Py_DECREF(stack.items[--stack.size]);
    }
    PyMem_Free(stack.items);
    Py_XDECREF(found);
    return NULL;
}

static PyObject *children(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    (void)module;
    PyTypeObject *base;
    PyObject *fields_of, *child_fields;
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "children(node, base, fields_of, child_fields)");
        return NULL;
    }
    if (read_common(args, &base, &fields_of, &child_fields) < 0) {
        return NULL;
    }
    PyObject *found = PyList_New(0);
    if (found == NULL || add_children(args[0], found, NULL, base, fields_of, child_fields, Py_None) < 0) {
        Py_XDECREF(found);
        return NULL;
    }
    return found;
}

static PyMethodDef module_functions[] = {
    {"walk", (PyCFunction)(void (*)(void))walk, METH_FASTCALL,
     "walk(root, base, fields_of, child_fields, skip) -> every node under root, as pyast.walk gives them"},
    {"children", (PyCFunction)(void (*)(void))children, METH_FASTCALL,
     "children(node, base, fields_of, child_fields) -> the node's children in field order"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "aoti_lint._tree_walk",
    .m_doc = "The optional compiled walk of an ast tree (aoti_lint/pyast.py).",
    .m_size = -1,
    .m_methods = module_functions,
};

PyMODINIT_FUNC PyInit__tree_walk(void) { return PyModule_Create(&module); }
