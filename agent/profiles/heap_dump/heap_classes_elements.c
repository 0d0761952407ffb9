/* Which class is the element class of each object array class in a heap dump (PHD writes it). */
#include "heap_classes_internal.h"

#include <stdlib.h>
#include <string.h>

struct name_key {
    uint64_t hash;
    hprof_id loader;
    uint32_t serial;
};

static uint64_t name_hash(const char *s, size_t len)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (size_t i = 0; i < len; i++)
        h = (h ^ (uint8_t)s[i]) * 1099511628211ull;
    return h;
}

static int cmp_key(uint64_t h1, hprof_id l1, uint64_t h2, hprof_id l2)
{
    if (h1 != h2)
        return h1 < h2 ? -1 : 1;
    return l1 < l2 ? -1 : l1 > l2;
}

static int cmp_name_key(const void *a, const void *b)
{
    const struct name_key *x = a, *y = b;
    return cmp_key(x->hash, x->loader, y->hash, y->loader);
}

/* Every object array class in the dump gets the class id of its element class: the class
 * whose name is the array's without its last "[]" and whose loader is the array's (an array
 * class is defined by its element's loader); java.lang.Object when none matches. By name and
 * loader, sorted by (hash, loader): one pass, no JNI, and no scan of the many classes of one
 * name that class loaders defining the same class again make. */
int heap_classes_elements_link(uint32_t object_serial)
{
    uint32_t n = 0;
    for (uint32_t s = 1; s < heap_classes_limit(); s++) {
        const struct dump_class *c = heap_classes_get(s);
        n += c && c->in_dump;
    }
    struct name_key *keys = malloc((n ? n : 1) * sizeof *keys);
    if (!keys)
        return -1;
    uint32_t k = 0;
    for (uint32_t s = 1; s < heap_classes_limit(); s++) {
        const struct dump_class *c = heap_classes_get(s);
        if (c && c->in_dump)
            keys[k++] = (struct name_key){name_hash(c->name, strlen(c->name)), c->loader_id, s};
    }
    qsort(keys, n, sizeof *keys, cmp_name_key);
    for (uint32_t s = 1; s < heap_classes_limit(); s++) {
        struct dump_class *c = heap_classes_get(s);
        if (!c || !c->in_dump || c->array_type != HPROF_TYPE_OBJECT)
            continue;
        c->elem_id = heap_classes_id_of(object_serial);
        size_t len = strlen(c->name);
        if (len < 2 || strcmp(c->name + len - 2, "[]") != 0)
            continue;
        len -= 2;
        uint64_t h = name_hash(c->name, len);
        size_t lo = 0, hi = n;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (cmp_key(keys[mid].hash, keys[mid].loader, h, c->loader_id) < 0)
                lo = mid + 1;
            else
                hi = mid;
        }
        for (; lo < n && keys[lo].hash == h && keys[lo].loader == c->loader_id; lo++) {
            const struct dump_class *e = heap_classes_get(keys[lo].serial);
            if (strlen(e->name) == len && memcmp(e->name, c->name, len) == 0) {
                c->elem_id = heap_classes_id_of(keys[lo].serial);
                break;
            }
        }
    }
    free(keys);
    return 0;
}
