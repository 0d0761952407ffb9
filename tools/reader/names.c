/*
 * names.c: the names of record tags, sub-record tags, basic types, root kinds and violation kinds.
 * See hprof_parse.h and doc/tools.md.
 */
#include "reader_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const kind_names[HK_NKINDS] = {
    "gzip",
    "header",
    "truncated",
    "unknown-tag",
    "length",
    "zero-length",
    "duplicate",
    "zero-id",
    "undefined-string",
    "undefined-class",
    "undefined-frame",
    "undefined-trace",
    "undefined-thread",
    "segment",
    "subrecord",
    "straddle",
    "class-dump",
    "instance-class",
    "field-size",
    "dangling",
    "duplicate-object",
};

const char *hprof_kind_name(enum hprof_kind k)
{
    return (unsigned)k < HK_NKINDS ? kind_names[k] : "?";
}

static const char *const root_names[HR_NKINDS] = {
    "unknown",      "jni_global",   "jni_local",    "java_frame",    "native_stack",
    "sticky_class", "thread_block", "monitor_used", "thread_object",
};

const char *hprof_root_name(enum hprof_root r)
{
    return (unsigned)r < HR_NKINDS ? root_names[r] : "?";
}

const char *hprof_tag_name(unsigned tag)
{
    switch (tag) {
    case T_STRING:
        return "STRING";
    case T_LOAD_CLASS:
        return "LOAD CLASS";
    case T_UNLOAD_CLASS:
        return "UNLOAD CLASS";
    case T_STACK_FRAME:
        return "STACK FRAME";
    case T_STACK_TRACE:
        return "STACK TRACE";
    case T_ALLOC_SITES:
        return "ALLOC SITES";
    case T_HEAP_SUMMARY:
        return "HEAP SUMMARY";
    case T_START_THREAD:
        return "START THREAD";
    case T_END_THREAD:
        return "END THREAD";
    case T_HEAP_DUMP:
        return "HEAP DUMP";
    case T_CPU_SAMPLES:
        return "CPU SAMPLES";
    case T_CONTROL_SETTINGS:
        return "CONTROL SETTINGS";
    case T_HEAP_DUMP_SEGMENT:
        return "HEAP DUMP SEGMENT";
    case T_HEAP_DUMP_END:
        return "HEAP DUMP END";
    default:
        return NULL;
    }
}

const char *hprof_basic_type_name(unsigned t)
{
    static const char *const names[12] = {NULL,    NULL,     "object", NULL,    "boolean", "char",
                                          "float", "double", "byte",   "short", "int",     "long"};
    return t < 12 ? names[t] : NULL;
}

const char *hp_sub_name(unsigned tag)
{
    switch (tag) {
    case S_ROOT_UNKNOWN:
        return "ROOT UNKNOWN";
    case S_ROOT_JNI_GLOBAL:
        return "ROOT JNI GLOBAL";
    case S_ROOT_JNI_LOCAL:
        return "ROOT JNI LOCAL";
    case S_ROOT_JAVA_FRAME:
        return "ROOT JAVA FRAME";
    case S_ROOT_NATIVE_STACK:
        return "ROOT NATIVE STACK";
    case S_ROOT_STICKY_CLASS:
        return "ROOT STICKY CLASS";
    case S_ROOT_THREAD_BLOCK:
        return "ROOT THREAD BLOCK";
    case S_ROOT_MONITOR_USED:
        return "ROOT MONITOR USED";
    case S_ROOT_THREAD_OBJECT:
        return "ROOT THREAD OBJECT";
    case S_CLASS_DUMP:
        return "CLASS DUMP";
    case S_INSTANCE_DUMP:
        return "INSTANCE DUMP";
    case S_OBJ_ARRAY_DUMP:
        return "OBJECT ARRAY DUMP";
    case S_PRIM_ARRAY_DUMP:
        return "PRIMITIVE ARRAY DUMP";
    default:
        return "?";
    }
}
