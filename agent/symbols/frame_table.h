/* Methods and stack frames. A frame is (method, line): the locations of one line are one frame
 * (with lineno=n, the whole method); its serial is its HPROF frame id.
 * Method details (names, source file, line table) are read once, when a method is first
 * seen, while its class is surely loaded. Thread-safe. */
#ifndef HPROF_FRAME_TABLE_H
#define HPROF_FRAME_TABLE_H

#include <jvmti.h>
#include <stdbool.h>
#include <stdint.h>

#include "writer.h"

/* 32 bytes a method: kept for the life of the process (frames name it), so no jmethodID (the
 * index holds it while the class lives) and string ids in 32 bits (string_table ids are). */
struct method_info {
    jvmtiLineNumberEntry *lines; /* sorted by start_location; NULL if none or forgotten */
    uint32_t class_serial;
    uint32_t name_id, sig_id, source_id; /* string ids; source_id 0 = unknown */
    jint nlines;
    bool native;
};

/* 8 bytes a frame: its serial is its index + 1. */
struct frame_info {
    uint32_t method; /* index of its method_info */
    int32_t line;    /* > 0, or HPROF_LINE_NONE / _UNKNOWN / _NATIVE */
};

/* lineno=n: frames carry no line numbers and frames of one method are one frame. */
int frame_table_init(bool lineno);

/* The serial (>= 1) of the frame at location in method; 0 if the method cannot be read. */
uint32_t frame_table_intern(jvmtiEnv *jvmti, jmethodID method, jlocation location);

/* The method's details, read and kept on first call; NULL if it cannot be read. */
const struct method_info *frame_table_method(jvmtiEnv *jvmti, jmethodID method);

/* A method that is no Java method (cpu=samples' pseudo-frames): frame_table_intern(id, 0) then
 * gives its frame without asking JVMTI. id must never be a real jmethodID (an address of the
 * caller's own static data). Returns false when out of memory. */
bool frame_table_register_synthetic(jmethodID id, uint32_t class_serial, const char *name);

const struct frame_info *frame_table_get(uint32_t serial);

/* Fills the writer's view of a frame (pointers stay valid for the process's life). */
void frame_table_describe(uint32_t serial, struct hprof_frame *out);

/* The class serial of a frame's method (0 for an unknown serial). */
uint32_t frame_table_frame_class(uint32_t serial);

/* The class serial of a method met before (0 if unknown or forgotten). */
uint32_t frame_table_class_of(jmethodID method);

/* Forgets how to find the methods and frames of the classes with classes[serial] != 0 (serial
 * < n), classes unloaded some time ago: their jmethodID lookups and line tables go, their
 * entries stay (traces still print them, serials are never reused). A stack of such a method
 * met later (a sample drained long after the unload) resolves again through JVMTI, which
 * refuses an unloaded method's id or names the method that reuses it. Returns the lookups
 * dropped. */
size_t frame_table_forget(const uint8_t *classes, uint32_t n);

/* Frees the table (no thread may use it any more): a failed start leaves nothing behind. */
void frame_table_teardown(void);

/* "java.lang.String.hashCode": class and method name of a frame, for ranked reports. */
void frame_table_method_label(uint32_t serial, char *buf, size_t len);

#endif
