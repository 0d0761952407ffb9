/* Native pcs to pseudo-frames (native_frames.h). */
#include "native_frames.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "class_table.h"
#include "frame_table.h"
#include "native_symbols.h"

/* One pseudo-frame: its address is the pseudo-method's id (never freed). */
struct native_frame {
    struct native_frame *next;
    const char *library, *symbol; /* native_symbols' strings, kept for the process's life */
};

struct native_class {
    struct native_class *next;
    const char *library;
    uint32_t serial;
};

static struct native_symbols *symbols;
static bool failed;
static struct native_frame *frames;
static struct native_class *classes;

static bool is_jvm(const char *library)
{
    return strcmp(library, "libjvm.so") == 0;
}

static uint32_t class_of(const char *library)
{
    for (struct native_class *c = classes; c; c = c->next)
        if (c->library == library)
            return c->serial;
    char name[300];
    snprintf(name, sizeof name, "[%s]", library);
    struct native_class *c = calloc(1, sizeof *c);
    if (!c)
        return 0;
    c->library = library;
    c->serial = class_table_register_synthetic(name);
    if (!c->serial) {
        free(c);
        return 0;
    }
    c->next = classes;
    classes = c;
    return c->serial;
}

jmethodID native_frames_method(uintptr_t pc)
{
    if (failed || !pc)
        return NULL;
    if (!symbols && !(symbols = native_symbols_new())) {
        failed = true;
        return NULL;
    }
    struct native_place at;
    if (!native_symbols_lookup(symbols, pc, &at) || is_jvm(at.library))
        return NULL;
    for (struct native_frame *f = frames; f; f = f->next)
        if (f->library == at.library && f->symbol == at.symbol)
            return (jmethodID)(void *)f;
    uint32_t cls = class_of(at.library);
    struct native_frame *f = cls ? calloc(1, sizeof *f) : NULL;
    if (!f)
        return NULL;
    f->library = at.library;
    f->symbol = at.symbol;
    if (!frame_table_register_synthetic((jmethodID)(void *)f, cls,
                                        at.symbol ? at.symbol : "<unknown>")) {
        free(f);
        return NULL;
    }
    f->next = frames;
    frames = f;
    return (jmethodID)(void *)f;
}
