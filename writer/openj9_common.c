/* Parts shared by the OpenJ9 formats (phd_writer.c, classic_writer.c): addresses from ids,
 * class names in the VM's form. */
#include "writer.h"
#include "writer_internal.h"

#include <stdio.h>
#include <string.h>

/* Id regions (agent/tags.h names the id kinds). */
#define REGION_TAGS (UINT64_C(1) << 60)
#define REGION_CLASSES (UINT64_C(1) << 61)
#define TAG_ID_LIMIT (UINT64_C(1) << 57)
#define CLASS_SITE UINT64_C(0xFFFFFF) /* agent/tags.h TAG_SITE_CLASS */

/* id -> address: untagged objects (bit 63 | address) keep their address (user space, below
 * 2^48, 8-aligned); class ids (site 0xFFFFFF, serial < 2^40) go to 2^61 + 8 * serial; every
 * other tag (below 2^57) to 2^60 + 8 * tag. */
uint64_t openj9_common_address(hprof_id id, bool *warned)
{
    if ((id >> 40) == CLASS_SITE) /* before the address test: bit 63 is set in both */
        return REGION_CLASSES + ((id & ((UINT64_C(1) << 40) - 1)) << 3);
    if (id >> 63)
        return (id & ~(UINT64_C(1) << 63)) & ~UINT64_C(3);
    if (id >= TAG_ID_LIMIT && !*warned) {
        *warned = true;
        fprintf(stderr,
                "HPROF WARNING: PHD/classic output: an object id above 2^57 (%#llx) cannot "
                "be given a unique address; references to it may be wrong\n",
                (unsigned long long)id);
    }
    return REGION_TAGS + ((id & (TAG_ID_LIMIT - 1)) << 3);
}

/* Java source name -> the name in a class record: slash form for classes, descriptors for
 * arrays ("int[]" -> "[I", "java.lang.String[][]" -> "[[Ljava/lang/String;"). Returns the
 * length written (at most cap - 1, NUL-terminated). */
size_t openj9_common_class_name(const char *src, char *out, size_t cap)
{
    size_t len = strlen(src), dims = 0;
    while (len >= 2 && src[len - 2] == '[' && src[len - 1] == ']') {
        len -= 2;
        dims++;
    }
    static const struct {
        const char *name;
        char code;
    } prims[] = {{"boolean", 'Z'}, {"char", 'C'},  {"float", 'F'}, {"double", 'D'},
                 {"byte", 'B'},    {"short", 'S'}, {"int", 'I'},   {"long", 'J'}};
    size_t o = 0;
#define PUT(ch)                                                                                    \
    do {                                                                                           \
        if (o + 1 < cap)                                                                           \
            out[o++] = (ch);                                                                       \
    } while (0)
    for (size_t d = 0; d < dims; d++)
        PUT('[');
    char prim = 0;
    for (size_t i = 0; dims && i < sizeof prims / sizeof prims[0]; i++)
        if (strlen(prims[i].name) == len && memcmp(prims[i].name, src, len) == 0)
            prim = prims[i].code;
    if (prim) {
        PUT(prim);
    } else {
        if (dims)
            PUT('L');
        for (size_t i = 0; i < len; i++)
            PUT(src[i] == '.' ? '/' : src[i]);
        if (dims)
            PUT(';');
    }
#undef PUT
    out[o] = '\0';
    return o;
}
