/* The compiled scanners of aoti_lint (aoti_lint/screen/token_scan.py), each giving exactly what its Python equivalent gives;
 * tests/test_token_scan.py compares them on generated input and on the repository.
 *
 * - Scanner: which of up to 64 byte strings a buffer holds, found in one pass over it. The pure-Python first stage
 *   (aoti_lint/screen/file_context.py) runs one `bytes.find` per anchor word over every file: on torch's 46 MB of sources
 *   some 14 passes, once the largest part of a cold run. Here each token is keyed by both pairs of its rarest three
 *   bytes (chosen by token_scan.py; by its one pair if it has two), and one pass looks every other pair of the
 *   buffer up in a bitmap that fits in the first-level cache (every pair where a token has only one): wherever a
 *   token occurs, one of its two pairs starts at an even position. A token is compared only where a pair of it
 *   occurs. The result is `[token in data for token in tokens]`, as a bit mask.
 * - string_spans and statement_starts: aoti_lint/screen/text_layout.py's readings of a Python text (its string literals,
 *   where its top-level statements may start), a character at a time instead of a pattern match at a time.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define MAX_TOKENS 64

typedef struct {
    const unsigned char *text; /* the token's bytes, owned by `tokens` */
    Py_ssize_t length;
    Py_ssize_t offset; /* where the keying pair starts in the token */
    int token;         /* the token's index: its bit in the answer */
    int next;          /* the next entry keyed by the same pair, or -1 */
} Entry;

typedef struct {
    PyObject_HEAD
    PyObject *tokens; /* a tuple of bytes, kept alive for the entries' pointers */
    int count;
    /* 2 when every token is keyed by two pairs in a row (three bytes from its offset): one of them starts at an even
     * position wherever the token occurs, and the scan looks at every other pair of the buffer only; else 1. */
    int stride;
    Entry entries[2 * MAX_TOKENS];
    int16_t first[65536];          /* the first entry keyed by each pair, or -1 */
    uint8_t keyed[65536 / 8];      /* whether some entry is keyed by the pair: the only lookup most bytes need */
} Scanner;

static void Scanner_dealloc(Scanner *self) {
    Py_XDECREF(self->tokens);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* Scanner(tokens, offsets): `tokens` a tuple of bytes of two bytes or more, `offsets` where each one's keying
 * bytes start (ints): two pairs from there where every token has three bytes from its offset on, else one pair.
 * Every argument is checked before the table is touched, and nothing here calls into Python code once it is: a
 * `__init__` run again from inside another (an `__index__`, say) could otherwise leave entries pointing into a
 * tuple already released. Sizes are compared by subtraction, which cannot overflow. */
static int Scanner_init(Scanner *self, PyObject *args, PyObject *kwargs) {
    PyObject *tokens, *offsets;
    static char *keywords[] = {"tokens", "offsets", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!O!", keywords, &PyTuple_Type, &tokens, &PyTuple_Type,
                                     &offsets)) {
        return -1;
    }
    Py_ssize_t count = PyTuple_GET_SIZE(tokens);
    self->count = 0; /* scans nothing until the table is whole */
    if (count > MAX_TOKENS || PyTuple_GET_SIZE(offsets) != count) {
        PyErr_SetString(PyExc_ValueError, "at most 64 tokens, each with one offset");
        return -1;
    }
    Py_ssize_t starts[MAX_TOKENS];
    int stride = 2;
    for (Py_ssize_t index = 0; index < count; index++) {
        PyObject *token = PyTuple_GET_ITEM(tokens, index), *number = PyTuple_GET_ITEM(offsets, index);
        if (!PyBytes_Check(token) || PyBytes_GET_SIZE(token) < 2) {
            PyErr_SetString(PyExc_ValueError, "each token is bytes of two bytes or more");
            return -1;
        }
        if (!PyLong_Check(number)) { /* an int only: no `__index__`, no Python code run here */
            PyErr_SetString(PyExc_TypeError, "each offset is an int");
            return -1;
        }
        int overflow = 0;
        long long offset = PyLong_AsLongLongAndOverflow(number, &overflow);
        if (offset == -1 && PyErr_Occurred()) {
            return -1;
        }
        Py_ssize_t size = PyBytes_GET_SIZE(token);
        if (overflow || offset < 0 || offset > (long long)(size - 2)) {
            PyErr_SetString(PyExc_ValueError, "an offset outside its token");
            return -1;
        }
        starts[index] = (Py_ssize_t)offset;
        if (offset > (long long)(size - 3)) {
            stride = 1;
        }
    }
    memset(self->first, 0xff, sizeof(self->first));
    memset(self->keyed, 0, sizeof(self->keyed));
    int entries = 0;
    for (Py_ssize_t index = 0; index < count; index++) {
        PyObject *token = PyTuple_GET_ITEM(tokens, index);
        const unsigned char *text = (const unsigned char *)PyBytes_AS_STRING(token);
        for (int second = 0; second < stride; second++) {
            Py_ssize_t offset = starts[index] + second;
            unsigned pair = text[offset] | (text[offset + 1] << 8);
            Entry *entry = &self->entries[entries];
            entry->text = text;
            entry->length = PyBytes_GET_SIZE(token);
            entry->offset = offset;
            entry->token = (int)index;
            entry->next = self->first[pair];
            self->first[pair] = (int16_t)entries++;
            self->keyed[pair >> 3] |= (uint8_t)(1u << (pair & 7));
        }
    }
    self->stride = stride;
    Py_INCREF(tokens);
    Py_XSETREF(self->tokens, tokens);
    self->count = (int)count;
    return 0;
}

static uint64_t scan(const Scanner *self, const unsigned char *data, Py_ssize_t length) {
    uint64_t all = self->count == MAX_TOKENS ? ~(uint64_t)0 : (((uint64_t)1 << self->count) - 1);
    uint64_t found = 0;
    if (self->count == 0) {
        return 0;
    }
    Py_ssize_t stride = self->stride;
    for (Py_ssize_t at = 0; at + 1 < length; at += stride) {
        unsigned pair = data[at] | (data[at + 1] << 8);
        if (!(self->keyed[pair >> 3] & (1u << (pair & 7)))) {
            continue;
        }
        for (int index = self->first[pair]; index != -1; index = self->entries[index].next) {
            const Entry *entry = &self->entries[index];
            uint64_t bit = (uint64_t)1 << entry->token;
            Py_ssize_t start = at - entry->offset;
            if ((found & bit) || start < 0 || entry->length > length - start) {
                continue;
            }
            if (memcmp(data + start, entry->text, (size_t)entry->length) == 0) {
                found |= bit;
                if (found == all) {
                    return found;
                }
            }
        }
    }
    return found;
}

static PyObject *Scanner_present(Scanner *self, PyObject *argument) {
    Py_buffer view;
    /* Getting (and releasing) the buffer may run Python code (a class's `__buffer__`), `__init__` on this scanner
     * included: the table is read only between the two, where nothing runs but the scan. */
    if (PyObject_GetBuffer(argument, &view, PyBUF_SIMPLE) != 0) {
        return NULL;
    }
    if (view.len < 0 || (view.len > 0 && view.buf == NULL)) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_ValueError, "present() takes a buffer of bytes");
        return NULL;
    }
    /* The GIL is kept: a scan is short, and `__init__` on the same object from another thread would change the
     * table under it. */
    uint64_t found = scan(self, (const unsigned char *)view.buf, view.len);
    PyBuffer_Release(&view);
    return PyLong_FromUnsignedLongLong(found);
}

/* The string literals of a Python text and their prefix letters, as aoti_lint/screen/text_layout.py's `_read_strings`
 * reads them with its `_TOKEN` pattern: a comment runs to its line's end; a string from its opening quote to its
 * closing one, a backslash escaping the character after it, a one-line string ended by a line feed. Its prefix: the
 * one or two ASCII letters just before its quote, after no word character. A string that does not end, or an
 * f-string whose replacement fields do not close, makes the answer None: the strings cannot be told apart. */
static int is_word(Py_UCS4 c) { return c == '_' || Py_UNICODE_ISALNUM(c); }
static int is_ascii_letter(Py_UCS4 c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

#define STRING_SPANS(NAME, CHAR)                                                                                     \
    /* The prefix's length (0 to 2) of the string whose quote is at `start`. */                                     \
    static Py_ssize_t NAME##_prefix(const CHAR *text, Py_ssize_t start) {                                            \
        for (Py_ssize_t letters = 2; letters >= 1; letters--) {                                                      \
            Py_ssize_t first = start - letters, index;                                                               \
            if (first < 0) {                                                                                         \
                continue;                                                                                            \
            }                                                                                                        \
            for (index = first; index < start && is_ascii_letter(text[index]); index++) {                           \
            }                                                                                                        \
            if (index == start && (first == 0 || !is_word(text[first - 1]))) {                                       \
                return letters;                                                                                      \
            }                                                                                                        \
        }                                                                                                            \
        return 0;                                                                                                    \
    }                                                                                                                \
    /* Whether the replacement fields of the f-string at [start, end) all close (`_fields_close`). */               \
    static int NAME##_fields_close(const CHAR *text, Py_ssize_t length, Py_ssize_t start, Py_ssize_t end) {          \
        Py_ssize_t depth = 0, skip = -1;                                                                             \
        for (Py_ssize_t at = start; at < end; at++) {                                                                \
            Py_UCS4 c = text[at];                                                                                    \
            if ((c != '{' && c != '}') || at == skip) {                                                              \
                continue;                                                                                            \
            }                                                                                                        \
            if (depth == 0 && at + 1 < length && text[at + 1] == c) {                                                \
                skip = at + 1; /* a literal brace, written twice */                                                  \
            } else if (c == '{') {                                                                                   \
                depth++;                                                                                             \
            } else if (depth == 0) {                                                                                 \
                return 0;                                                                                            \
            } else {                                                                                                 \
                depth--;                                                                                             \
            }                                                                                                        \
        }                                                                                                            \
        return depth == 0;                                                                                           \
    }                                                                                                                \
    /* 0 done, -1 the answer is None, -2 a Python error. */                                                          \
    static int NAME(PyObject *source, const CHAR *text, Py_ssize_t length, PyObject *spans, PyObject *prefixes,      \
                    PyObject *empty) {                                                                               \
        Py_ssize_t at = 0;                                                                                           \
        while (at < length) {                                                                                        \
            Py_UCS4 quote = text[at];                                                                                \
            if (quote == '#') {                                                                                      \
                while (at < length && text[at] != '\n') {                                                            \
                    at++;                                                                                            \
                }                                                                                                    \
                continue;                                                                                            \
            }                                                                                                        \
            if (quote != '"' && quote != '\'') {                                                                     \
                at++;                                                                                                \
                continue;                                                                                            \
            }                                                                                                        \
            Py_ssize_t start = at, end = -1;                                                                         \
            if (at + 2 < length && text[at + 1] == quote && text[at + 2] == quote) {                                 \
                for (at += 3; at < length;) {                                                                        \
                    Py_UCS4 c = text[at];                                                                            \
                    if (c == '\\') {                                                                                 \
                        at += 2;                                                                                     \
                    } else if (c == quote && at + 2 < length && text[at + 1] == quote && text[at + 2] == quote) {    \
                        end = at + 3;                                                                                \
                        break;                                                                                       \
                    } else {                                                                                         \
                        at++;                                                                                        \
                    }                                                                                                \
                }                                                                                                    \
            } else {                                                                                                 \
                for (at += 1; at < length;) {                                                                        \
                    Py_UCS4 c = text[at];                                                                            \
                    if (c == '\\') {                                                                                 \
                        at += 2;                                                                                     \
                    } else if (c == '\n') {                                                                          \
                        break;                                                                                       \
                    } else if (c == quote) {                                                                         \
                        end = at + 1;                                                                                \
                        break;                                                                                       \
                    } else {                                                                                         \
                        at++;                                                                                        \
                    }                                                                                                \
                }                                                                                                    \
            }                                                                                                        \
            if (end == -1) {                                                                                         \
                return -1; /* the string does not end */                                                             \
            }                                                                                                        \
            Py_ssize_t letters = NAME##_prefix(text, start);                                                         \
            PyObject *prefix = empty;                                                                                \
            Py_INCREF(prefix);                                                                                       \
            if (letters) {                                                                                           \
                int formatted = 0;                                                                                   \
                for (Py_ssize_t index = start - letters; index < start; index++) {                                   \
                    formatted |= text[index] == 'f' || text[index] == 'F';                                           \
                }                                                                                                    \
                if (formatted && !NAME##_fields_close(text, length, start, end)) {                                   \
                    Py_DECREF(prefix);                                                                               \
                    return -1;                                                                                       \
                }                                                                                                    \
                Py_SETREF(prefix, PyUnicode_Substring(source, start - letters, start));                              \
                if (prefix == NULL) {                                                                                \
                    return -2;                                                                                       \
                }                                                                                                    \
            }                                                                                                        \
            PyObject *span = Py_BuildValue("(nn)", start, end);                                                      \
            int failed = span == NULL || PyList_Append(spans, span) < 0 || PyList_Append(prefixes, prefix) < 0;     \
            Py_XDECREF(span);                                                                                        \
            Py_DECREF(prefix);                                                                                       \
            if (failed) {                                                                                            \
                return -2;                                                                                           \
            }                                                                                                        \
            at = end;                                                                                                \
        }                                                                                                            \
        return 0;                                                                                                    \
    }

STRING_SPANS(string_spans_1, Py_UCS1)
STRING_SPANS(string_spans_2, Py_UCS2)
STRING_SPANS(string_spans_4, Py_UCS4)

/* string_spans(text) -> (spans, prefixes) | None */
static PyObject *string_spans(PyObject *module, PyObject *text) {
    (void)module;
    if (!PyUnicode_Check(text)) {
        PyErr_SetString(PyExc_TypeError, "string_spans() takes a str");
        return NULL;
    }
#if PY_VERSION_HEX < 0x030C0000
    if (PyUnicode_READY(text) < 0) {
        return NULL;
    }
#endif
    PyObject *spans = PyList_New(0), *prefixes = PyList_New(0), *empty = PyUnicode_New(0, 0);
    if (spans == NULL || prefixes == NULL || empty == NULL) {
        Py_XDECREF(spans);
        Py_XDECREF(prefixes);
        Py_XDECREF(empty);
        return NULL;
    }
    Py_ssize_t length = PyUnicode_GET_LENGTH(text);
    const void *data = PyUnicode_DATA(text);
    int found;
    switch (PyUnicode_KIND(text)) {
    case PyUnicode_1BYTE_KIND:
        found = string_spans_1(text, (const Py_UCS1 *)data, length, spans, prefixes, empty);
        break;
    case PyUnicode_2BYTE_KIND:
        found = string_spans_2(text, (const Py_UCS2 *)data, length, spans, prefixes, empty);
        break;
    default:
        found = string_spans_4(text, (const Py_UCS4 *)data, length, spans, prefixes, empty);
        break;
    }
    Py_DECREF(empty);
    if (found < 0) {
        Py_DECREF(spans);
        Py_DECREF(prefixes);
        if (found == -2) {
            return NULL;
        }
        Py_RETURN_NONE;
    }
    PyObject *result = PyTuple_Pack(2, spans, prefixes);
    Py_DECREF(spans);
    Py_DECREF(prefixes);
    return result;
}

static int append_index(PyObject *list, Py_ssize_t index) {
    PyObject *number = PyLong_FromSsize_t(index);
    if (number == NULL) {
        return -1;
    }
    int failed = PyList_Append(list, number);
    Py_DECREF(number);
    return failed;
}

/* Where a top-level statement may start, as aoti_lint/screen/text_layout.py's `_statement_starts` (and, with `top_level`,
 * `_top_level_starts`) read it: a line that begins outside every string (`spans`, from `string_spans`), with none
 * of whitespace, `#` or a closing bracket, nor with `else`/`elif`/`except`/`finally`; a decorator's statement runs
 * on to its `def`/`class`/`async`. With `top_level`, a line inside brackets (outside strings and comments) or after
 * a line-continuing backslash starts none, and brackets that close more than they opened give None. */
static int keyword_at(PyObject *text, Py_ssize_t at, const char *const *words) {
    Py_ssize_t length = PyUnicode_GET_LENGTH(text);
    for (; *words; words++) {
        Py_ssize_t size = (Py_ssize_t)strlen(*words), index;
        if (at + size > length) {
            continue;
        }
        for (index = 0; index < size && PyUnicode_READ_CHAR(text, at + index) == (Py_UCS4)(*words)[index]; index++) {
        }
        if (index == size && (at + size == length || !is_word(PyUnicode_READ_CHAR(text, at + size)))) {
            return 1;
        }
    }
    return 0;
}

static const char *const CONTINUATIONS[] = {"else", "elif", "except", "finally", NULL};
static const char *const DEFINITIONS[] = {"def", "class", "async", NULL};

#define STATEMENT_STARTS(NAME, CHAR)                                                                                 \
    /* 0 done, -1 the answer is None, -2 a Python error. */                                                          \
    static int NAME(PyObject *source, const CHAR *text, Py_ssize_t length, const Py_ssize_t *spans,                 \
                    Py_ssize_t count, int top_level, PyObject *starts) {                                             \
        Py_ssize_t at = 0, span = 0, depth = 0, comment_end = -1;                                                    \
        int decorated = 0, line_start = 1;                                                                           \
        while (at < length) {                                                                                        \
            if (line_start) {                                                                                        \
                line_start = 0;                                                                                      \
                Py_UCS4 first = text[at];                                                                            \
                int skipped = Py_UNICODE_ISSPACE(first) || first == '#' || first == ')' || first == ']' ||         \
                              first == '}' || keyword_at(source, at, CONTINUATIONS);                                 \
                if (!skipped && top_level) {                                                                         \
                    Py_ssize_t end = at >= 2 && text[at - 2] == '\r' && text[at - 1] == '\n' ? at - 2 : at - 1;      \
                    skipped = depth != 0 || (at > 0 && end >= 1 && text[end - 1] == '\\' && comment_end != end);     \
                }                                                                                                    \
                if (!skipped && decorated) {                                                                         \
                    if (first == '@') {                                                                              \
                        skipped = 1; /* the next decorator of the same statement */                                  \
                    } else if (keyword_at(source, at, DEFINITIONS)) {                                                \
                        decorated = 0; /* the definition the decorators are for */                                   \
                        skipped = 1;                                                                                 \
                    }                                                                                                \
                }                                                                                                    \
                if (!skipped) {                                                                                      \
                    decorated = first == '@';                                                                        \
                    if (at && append_index(starts, at) < 0) {                                                        \
                        return -2;                                                                                   \
                    }                                                                                                \
                }                                                                                                    \
            }                                                                                                        \
            if (span < count && at == spans[2 * span]) {                                                             \
                at = spans[2 * span + 1]; /* a string: no line of it starts a statement, no bracket counts */       \
                span++;                                                                                              \
                continue;                                                                                            \
            }                                                                                                        \
            Py_UCS4 c = text[at];                                                                                    \
            if (c == '#') {                                                                                          \
                Py_ssize_t stop = span < count ? spans[2 * span] : length;                                           \
                while (at < stop && text[at] != '\r' && text[at] != '\n') {                                          \
                    at++;                                                                                            \
                }                                                                                                    \
                comment_end = at;                                                                                    \
                continue;                                                                                            \
            }                                                                                                        \
            if (c == '(' || c == '[' || c == '{') {                                                                  \
                depth++;                                                                                             \
            } else if (c == ')' || c == ']' || c == '}') {                                                           \
                if (--depth < 0 && top_level) {                                                                      \
                    return -1;                                                                                       \
                }                                                                                                    \
            } else if (c == '\n') {                                                                                  \
                line_start = 1;                                                                                      \
            }                                                                                                        \
            at++;                                                                                                    \
        }                                                                                                            \
        return append_index(starts, length) < 0 ? -2 : 0;                                                           \
    }

STATEMENT_STARTS(statement_starts_1, Py_UCS1)
STATEMENT_STARTS(statement_starts_2, Py_UCS2)
STATEMENT_STARTS(statement_starts_4, Py_UCS4)

/* statement_starts(text, spans, top_level) -> list[int] | None */
static PyObject *statement_starts(PyObject *module, PyObject *args) {
    (void)module;
    PyObject *text, *spans;
    int top_level;
    /* `p` may run Python code (a `__bool__`) that changes the list: its size is read only after the parse, and no
     * Python code runs from there on (`PyLong_AsSsize_t` takes ints only, it calls no `__index__`). */
    if (!PyArg_ParseTuple(args, "UO!p", &text, &PyList_Type, &spans, &top_level)) {
        return NULL;
    }
#if PY_VERSION_HEX < 0x030C0000
    if (PyUnicode_READY(text) < 0) {
        return NULL;
    }
#endif
    Py_ssize_t count = PyList_GET_SIZE(spans), length = PyUnicode_GET_LENGTH(text);
    if (count > (PY_SSIZE_T_MAX / (Py_ssize_t)sizeof(Py_ssize_t) - 1) / 2) {
        return PyErr_NoMemory();
    }
    Py_ssize_t *bounds = PyMem_New(Py_ssize_t, 2 * count + 1);
    if (bounds == NULL) {
        return PyErr_NoMemory();
    }
    Py_ssize_t previous = 0;
    for (Py_ssize_t index = 0; index < count; index++) {
        PyObject *pair = PyList_GET_ITEM(spans, index);
        if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2 || !PyLong_Check(PyTuple_GET_ITEM(pair, 0)) ||
            !PyLong_Check(PyTuple_GET_ITEM(pair, 1))) {
            PyMem_Free(bounds);
            PyErr_SetString(PyExc_TypeError, "spans: a list of (start, end) pairs");
            return NULL;
        }
        Py_ssize_t start = PyLong_AsSsize_t(PyTuple_GET_ITEM(pair, 0));
        Py_ssize_t end = PyLong_AsSsize_t(PyTuple_GET_ITEM(pair, 1));
        if ((start == -1 || end == -1) && PyErr_Occurred()) {
            PyMem_Free(bounds);
            return NULL;
        }
        if (start < previous || end <= start || end > length) {
            PyMem_Free(bounds);
            PyErr_SetString(PyExc_ValueError, "spans: ordered, apart, within the text");
            return NULL;
        }
        bounds[2 * index] = start;
        bounds[2 * index + 1] = previous = end;
    }
    PyObject *starts = PyList_New(0);
    if (starts == NULL || append_index(starts, 0) < 0) {
        Py_XDECREF(starts);
        PyMem_Free(bounds);
        return NULL;
    }
    const void *data = PyUnicode_DATA(text);
    int found;
    switch (PyUnicode_KIND(text)) {
    case PyUnicode_1BYTE_KIND:
        found = statement_starts_1(text, (const Py_UCS1 *)data, length, bounds, count, top_level, starts);
        break;
    case PyUnicode_2BYTE_KIND:
        found = statement_starts_2(text, (const Py_UCS2 *)data, length, bounds, count, top_level, starts);
        break;
    default:
        found = statement_starts_4(text, (const Py_UCS4 *)data, length, bounds, count, top_level, starts);
        break;
    }
    PyMem_Free(bounds);
    if (found < 0) {
        Py_DECREF(starts);
        if (found == -2) {
            return NULL;
        }
        Py_RETURN_NONE;
    }
    return starts;
}

static PyMethodDef module_functions[] = {
    {"statement_starts", (PyCFunction)statement_starts, METH_VARARGS,
     "statement_starts(text, spans, top_level) -> list[int] | None: where top-level statements may start (text_layout)"},
    {"string_spans", (PyCFunction)string_spans, METH_O,
     "string_spans(text) -> (spans, prefixes) | None: the string literals of a Python text (text_layout)"},
    {NULL, NULL, 0, NULL},
};

static PyMethodDef Scanner_methods[] = {
    {"present", (PyCFunction)Scanner_present, METH_O,
     "present(data) -> int: bit i set where tokens[i] occurs in data"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject ScannerType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "aoti_lint.screen._token_scan.Scanner",
    .tp_doc = "Scanner(tokens, offsets): which of the tokens a buffer holds, in one pass over it.",
    .tp_basicsize = sizeof(Scanner),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Scanner_init,
    .tp_dealloc = (destructor)Scanner_dealloc,
    .tp_methods = Scanner_methods,
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "aoti_lint.screen._token_scan",
    .m_doc = "The optional compiled scanners of aoti_lint.screen.token_scan and aoti_lint.screen.text_layout.",
    .m_size = -1,
    .m_methods = module_functions,
};

PyMODINIT_FUNC PyInit__token_scan(void) {
    if (PyType_Ready(&ScannerType) < 0) {
        return NULL;
    }
    PyObject *created = PyModule_Create(&module);
    if (created == NULL) {
        return NULL;
    }
    Py_INCREF(&ScannerType);
    if (PyModule_AddObject(created, "Scanner", (PyObject *)&ScannerType) < 0) {
        Py_DECREF(&ScannerType);
        Py_DECREF(created);
        return NULL;
    }
    return created;
}
