/* OpenJ9 classic heap dump: the text format (doc/phd.md; layout in the OpenJ9 heap dump
 * notes of the spec folder), rendered as the OpenJ9 VM writes it, which line readers are
 * written against (the documentation's examples indent with spaces and leave out empty
 * reference lines; the VM does not):
 *
 *   // Version: <text>
 *   0x<address> [<bytes>] OBJ <type>        an instance or array, then, on every record,
 *   \t0x<ref> 0x<ref> ... \n               one TAB-led line of its non-null references, each
 *                                           followed by a space ("\t" alone when there are none)
 *   0x<address> [<bytes>] CLS <class>       a class (its Class object's size), then references
 *   // Breakdown - Classes: C, Objects: O, ObjectArrays: A, PrimitiveArrays: P
 *   // EOF:  Total 'Objects',Refs(null) : total,refs(nulls)
 *
 * The VM starts each record with the newline that ends the line before it; the bytes are the
 * same as ending each line, as done here. Null references are counted in refs and nulls, not
 * written.
 *
 * Types are the VM's names: java/lang/String, [I, [Ljava/lang/String;. Addresses are those of
 * the PHD writer (openj9_common_address), so the two formats of one walk name objects alike. Like
 * PHD, a file holds one heap dump: later dumps are dropped with a note on stderr; every
 * non-dump record is ignored. */
#include "writer.h"
#include "writer_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CLASSIC_VERSION "hprof agent (JVMTI), classic heap dump writer 1"

struct classic_writer {
    struct hprof_writer w;
    bool in_dump, dumped, extra_dump_reported, big_id_reported;
    uint64_t classes, objects, obj_arrays, prim_arrays, refs, null_refs;
    char name[65536];
};

static struct classic_writer *cw(struct hprof_writer *w)
{
    return (struct classic_writer *)w;
}

static uint64_t addr(struct classic_writer *c, hprof_id id)
{
    return openj9_common_address(id, &c->big_id_reported);
}

static void header_line(struct classic_writer *c, uint64_t a, uint64_t size, const char *what,
                        const char *type)
{
    sink_printf(c->w.sink, "0x%016" PRIX64 " [%" PRIu64 "] %s %s\n\t", a, size, what, type);
}

/* The reference line is opened by header_line's TAB and closed by end_refs. */
static void put_ref(struct classic_writer *c, hprof_id id)
{
    c->refs++;
    if (!id) {
        c->null_refs++;
        return;
    }
    sink_printf(c->w.sink, "0x%016" PRIX64 " ", addr(c, id));
}

static void end_refs(struct classic_writer *c)
{
    sink_write(c->w.sink, "\n", 1);
}

static void cl_heap_dump_begin(struct hprof_writer *w, const struct hprof_heap_totals *totals)
{
    (void)totals; /* not written in this format */
    struct classic_writer *c = cw(w);
    if (c->in_dump)
        return;
    if (c->dumped) {
        if (!c->extra_dump_reported) {
            c->extra_dump_reported = true;
            fprintf(stderr, "HPROF WARNING: a classic heap dump file holds one heap dump: this "
                            "and later heap dumps are not written (the first one is in the "
                            "file)\n");
        }
        return;
    }
    sink_printf(w->sink, "// Version: %s\n", CLASSIC_VERSION);
    c->in_dump = true;
}

static void cl_heap_dump_end(struct hprof_writer *w, const struct hprof_heap_totals *totals)
{
    (void)totals;
    struct classic_writer *c = cw(w);
    if (!c->in_dump)
        return;
    sink_printf(w->sink,
                "// Breakdown - Classes: %" PRIu64 ", Objects: %" PRIu64 ", ObjectArrays: %" PRIu64
                ", PrimitiveArrays: %" PRIu64 "\n",
                c->classes, c->objects, c->obj_arrays, c->prim_arrays);
    sink_printf(w->sink,
                "// EOF:  Total 'Objects',Refs(null) : %" PRIu64 ",%" PRIu64 "(%" PRIu64 ")\n",
                c->classes + c->objects + c->obj_arrays + c->prim_arrays, c->refs, c->null_refs);
    c->in_dump = false;
    c->dumped = true;
    sink_flush(w->sink);
}

static void cl_instance_dump(struct hprof_writer *w, const struct hprof_instance_dump *o)
{
    struct classic_writer *c = cw(w);
    if (!c->in_dump)
        return;
    openj9_common_class_name(o->class_name ? o->class_name : "?", c->name, sizeof c->name);
    header_line(c, addr(c, o->object_id), o->size, "OBJ", c->name);
    c->objects++;
    for (size_t i = 0; i < o->nvalues; i++)
        if (o->fields[i].type == HPROF_TYPE_OBJECT)
            put_ref(c, o->values[i].obj);
    end_refs(c);
}

static void cl_obj_array_dump(struct hprof_writer *w, const struct hprof_obj_array_dump *a)
{
    struct classic_writer *c = cw(w);
    if (!c->in_dump)
        return;
    openj9_common_class_name(a->class_name ? a->class_name : "java.lang.Object[]", c->name,
                             sizeof c->name);
    header_line(c, addr(c, a->array_id), a->size, "OBJ", c->name);
    c->obj_arrays++;
    for (uint32_t i = 0; i < a->nelems; i++)
        put_ref(c, a->elems[i]);
    end_refs(c);
}

static const char *prim_descriptor(enum hprof_basic_type t)
{
    switch (t) {
    case HPROF_TYPE_BOOLEAN:
        return "[Z";
    case HPROF_TYPE_CHAR:
        return "[C";
    case HPROF_TYPE_FLOAT:
        return "[F";
    case HPROF_TYPE_DOUBLE:
        return "[D";
    case HPROF_TYPE_BYTE:
        return "[B";
    case HPROF_TYPE_SHORT:
        return "[S";
    case HPROF_TYPE_INT:
        return "[I";
    case HPROF_TYPE_LONG:
        return "[J";
    case HPROF_TYPE_OBJECT:
        break;
    }
    return NULL;
}

static void cl_prim_array_dump(struct hprof_writer *w, const struct hprof_prim_array_dump *a)
{
    struct classic_writer *c = cw(w);
    const char *d = prim_descriptor(a->elem_type);
    if (!c->in_dump || !d)
        return;
    header_line(c, addr(c, a->array_id), a->size, "OBJ", d);
    c->prim_arrays++;
    end_refs(c);
}

static void cl_class_dump(struct hprof_writer *w, const struct hprof_class_dump *k)
{
    struct classic_writer *c = cw(w);
    if (!c->in_dump)
        return;
    openj9_common_class_name(k->name ? k->name : "?", c->name, sizeof c->name);
    header_line(c, addr(c, k->class_id), k->class_object_size, "CLS", c->name);
    c->classes++;
    for (size_t i = 0; i < k->nstatics; i++)
        if (k->statics[i].field.type == HPROF_TYPE_OBJECT)
            put_ref(c, k->statics[i].value.obj);
    for (size_t i = 0; i < k->ncp; i++)
        if (k->cp[i].type == HPROF_TYPE_OBJECT)
            put_ref(c, k->cp[i].value.obj);
    put_ref(c, k->loader_id);
    put_ref(c, k->signers_id);
    put_ref(c, k->domain_id);
    end_refs(c);
}

/* ---- the rest of the interface has no place in a classic heap dump: left out (NULL) ----- */

static void cl_close(struct hprof_writer *w)
{
    cl_heap_dump_end(w, NULL); /* close inside a dump ends it */
    sink_close(w->sink);
    free(cw(w));
}

static const struct hprof_writer_ops classic_ops = {
    .name = "classic",
    .heap_dump_begin = cl_heap_dump_begin,
    .class_dump = cl_class_dump,
    .instance_dump = cl_instance_dump,
    .obj_array_dump = cl_obj_array_dump,
    .prim_array_dump = cl_prim_array_dump,
    .heap_dump_end = cl_heap_dump_end,
    .close = cl_close,
};

struct hprof_writer *classic_writer_new(struct hprof_sink *sink)
{
    struct classic_writer *c = calloc(1, sizeof *c);
    if (!c) {
        sink_close(sink);
        return NULL;
    }
    writer_common_init(&c->w, &classic_ops, sink);
    return &c->w;
}
