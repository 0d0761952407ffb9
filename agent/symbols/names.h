/* Class and method names in the forms the outputs want. Pure C. */
#ifndef HPROF_NAMES_H
#define HPROF_NAMES_H

#include <stddef.h>
#include <stdint.h>

/* JVM signature -> Java source form: "Ljava/lang/String;" -> "java.lang.String",
 * "[I" -> "int[]", "[[Ljava/lang/Object;" -> "java.lang.Object[][]". A plain internal name
 * ("java/lang/String") is accepted too. Returns a malloc'ed string (NULL if out of memory). */
char *names_java_class_name(const char *signature);

/* For an array signature, the basic type of its elements as in the binary ALLOC SITES array
 * indicator (2 for object arrays, 4..11 for primitives); 0 for a non-array. */
uint8_t names_array_type(const char *signature);

#endif
