#include "heap_layout.h"

#include <stdlib.h>
#include <string.h>

enum hprof_basic_type heap_layout_type_of_signature(const char *sig)
{
    switch (sig ? sig[0] : 'L') {
    case 'Z':
        return HPROF_TYPE_BOOLEAN;
    case 'C':
        return HPROF_TYPE_CHAR;
    case 'F':
        return HPROF_TYPE_FLOAT;
    case 'D':
        return HPROF_TYPE_DOUBLE;
    case 'B':
        return HPROF_TYPE_BYTE;
    case 'S':
        return HPROF_TYPE_SHORT;
    case 'I':
        return HPROF_TYPE_INT;
    case 'J':
        return HPROF_TYPE_LONG;
    default:
        return HPROF_TYPE_OBJECT;
    }
}

void heap_layout_free(struct class_layout *l)
{
    free(l->instance);
    free(l->statics);
    free(l->slot_of_index);
    free(l->static_of_index);
    memset(l, 0, sizeof *l);
}

int heap_layout_build(const struct layout_level *chain, size_t nlevels, uint32_t interface_fields,
                      struct class_layout *out)
{
    memset(out, 0, sizeof *out);
    uint64_t nindex = interface_fields, ninst = 0, nstat = 0;
    for (size_t k = 0; k < nlevels; k++) {
        nindex += chain[k].nfields;
        for (uint32_t p = 0; p < chain[k].nfields; p++) {
            if (!chain[k].fields[p].is_static)
                ninst++;
            else if (k == 0)
                nstat++;
        }
    }
    if (nindex > INT32_MAX)
        return -1;
    out->nindex = (uint32_t)nindex;
    out->instance = calloc(ninst ? ninst : 1, sizeof *out->instance);
    out->statics = calloc(nstat ? nstat : 1, sizeof *out->statics);
    out->slot_of_index = malloc((nindex ? nindex : 1) * sizeof *out->slot_of_index);
    out->static_of_index = malloc((nindex ? nindex : 1) * sizeof *out->static_of_index);
    if (!out->instance || !out->statics || !out->slot_of_index || !out->static_of_index) {
        heap_layout_free(out);
        return -1;
    }
    for (uint64_t i = 0; i < nindex; i++)
        out->slot_of_index[i] = out->static_of_index[i] = -1;

    /* The indexes of level k start after the interface fields and every field of the levels
     * above it (its superclasses): walk from the class up, counting down from the end. */
    uint64_t end = nindex;
    for (size_t k = 0; k < nlevels; k++) {
        const struct layout_level *lv = &chain[k];
        uint64_t start = end - lv->nfields;
        for (uint32_t p = 0; p < lv->nfields; p++) {
            const struct layout_field *f = &lv->fields[p];
            struct hprof_field hf = {f->name_id, f->name, f->type};
            if (!f->is_static) {
                out->slot_of_index[start + p] = (int32_t)out->ninstance;
                out->instance[out->ninstance++] = hf;
                out->instance_bytes += writer_common_type_size(f->type);
                if (k == 0)
                    out->nown++;
            } else if (k == 0) {
                out->static_of_index[start + p] = (int32_t)out->nstatics;
                out->statics[out->nstatics++] = hf;
            }
        }
        end = start;
    }
    return 0;
}

bool heap_layout_solve_array_rule(const uint64_t *sizes, size_t count, struct array_size_rule *out)
{
    static const uint32_t elems[] = {4, 8};
    for (uint32_t align = 8; align <= 256; align *= 2)
        for (size_t e = 0; e < sizeof elems / sizeof *elems; e++)
            for (uint32_t header = 8; header <= 64; header += 4) {
                struct array_size_rule r = {header, elems[e], align};
                size_t n = 0;
                while (n < count && layout_array_size(&r, n) == sizes[n])
                    n++;
                if (n == count && count > 0) {
                    *out = r;
                    return true;
                }
            }
    return false;
}
