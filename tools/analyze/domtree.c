/* Dominator tree children lists: counted, placed, then each list sorted by retained size.
 * Lists of up to SMALL_LIST children (nearly all of them in a heap) are insertion-sorted in
 * place; longer ones are sorted as (retained, node) pairs in a scratch array, so the comparisons
 * read consecutive memory rather than retained[] at random: heap sort up to BIG_LIST, a stable
 * radix sort on 16-bit digits of node indexes above (the root's list can hold millions of
 * children, where the heap sort's scattered accesses took seconds). */
#include "domtree.h"

#include <stdlib.h>
#include <string.h>

#define NONE UINT32_MAX
#define SMALL_LIST 16
#define BIG_LIST 65536

struct keyed {
    uint64_t key;
    uint32_t node;
};

/* a goes before b: bigger retained size first, then the smaller node index */
static int before(uint64_t ka, uint32_t a, uint64_t kb, uint32_t b)
{
    return ka > kb || (ka == kb && a < b);
}

static void insertion_sort(uint32_t *list, uint32_t k, const uint32_t *retained)
{
    for (uint32_t i = 1; i < k; i++) {
        uint32_t x = list[i], j = i;
        for (; j > 0 && before(retained[x], x, retained[list[j - 1]], list[j - 1]); j--)
            list[j] = list[j - 1];
        list[j] = x;
    }
}

/* Moves a[i] down a heap (of size k) whose top is the element that goes last. */
static void sift_down(struct keyed *a, uint64_t i, uint64_t k)
{
    struct keyed x = a[i];
    for (;;) {
        uint64_t c = 2 * i + 1;
        if (c >= k)
            break;
        if (c + 1 < k && before(a[c].key, a[c].node, a[c + 1].key, a[c + 1].node))
            c++;
        if (!before(x.key, x.node, a[c].key, a[c].node))
            break;
        a[i] = a[c];
        i = c;
    }
    a[i] = x;
}

static void heap_sort(uint32_t *list, uint64_t k, const uint32_t *retained, struct keyed *tmp)
{
    for (uint64_t i = 0; i < k; i++)
        tmp[i] = (struct keyed){retained[list[i]], list[i]};
    for (uint64_t i = k / 2; i-- > 0;)
        sift_down(tmp, i, k);
    for (uint64_t end = k; end-- > 1;) {
        struct keyed last = tmp[0];
        tmp[0] = tmp[end];
        tmp[end] = last;
        sift_down(tmp, 0, end);
    }
    for (uint64_t i = 0; i < k; i++)
        list[i] = tmp[i].node;
}

/* Stable LSD radix sort of list (k > BIG_LIST entries, in ascending node order) by retained size
 * descending: sorting ~retained ascending keeps equal sizes in ascending node order. Only node
 * indexes move (tmp holds k of them); each pass reads retained[] at random, but those reads do
 * not depend on each other, so they overlap. Digits that all keys share are skipped (sizes rarely
 * use more than 32 bits). */
static int radix_sort(uint32_t *list, uint64_t k, const uint32_t *retained, uint32_t *tmp)
{
    uint32_t(*count)[65536] = calloc(4, sizeof *count);
    if (!count)
        return -1;
    for (uint64_t i = 0; i < k; i++) {
        uint64_t key = ~(uint64_t)retained[list[i]];
        for (int d = 0; d < 4; d++)
            count[d][key >> (16 * d) & 0xffff]++;
    }
    uint32_t *src = list, *dst = tmp;
    uint64_t first = ~(uint64_t)retained[list[0]];
    for (int d = 0; d < 4; d++) {
        if (count[d][first >> (16 * d) & 0xffff] == k)
            continue;
        uint32_t sum = 0;
        for (uint32_t b = 0; b < 65536; b++) {
            uint32_t c = count[d][b];
            count[d][b] = sum;
            sum += c;
        }
        for (uint64_t i = 0; i < k; i++)
            dst[count[d][~(uint64_t)retained[src[i]] >> (16 * d) & 0xffff]++] = src[i];
        uint32_t *swap = src;
        src = dst;
        dst = swap;
    }
    if (src != list)
        memcpy(list, src, k * sizeof *list);
    free(count);
    return 0;
}

int domtree_build(struct domtree *t, uint32_t n, const uint32_t *idom, const uint32_t *retained)
{
    *t = (struct domtree){0};
    uint32_t *off = calloc((size_t)n + 1, sizeof *off);
    if (!off)
        return -1;
    /* counts in off[v], then off[v] = end of v's range, moved back to its start as the
     * children are placed (in ascending order) */
    for (uint32_t v = 1; v < n; v++)
        if (idom[v] != NONE)
            off[idom[v]]++;
    uint64_t largest = 0, total = 0;
    for (uint32_t v = 0; v < n; v++) {
        if (off[v] > largest)
            largest = off[v];
        total += off[v];
        off[v] = (uint32_t)total;
    }
    off[n] = (uint32_t)total;
    uint32_t *child = malloc((total ? total : 1) * sizeof *child);
    /* scratch: pairs for the heap sort, node indexes for the radix sort */
    size_t scratch = largest > BIG_LIST     ? largest * sizeof(uint32_t)
                     : largest > SMALL_LIST ? largest * sizeof(struct keyed)
                                            : 0;
    void *tmp = scratch ? malloc(scratch) : NULL;
    if (!child || (scratch && !tmp))
        goto fail;
    for (uint32_t v = n; v-- > 1;)
        if (idom[v] != NONE)
            child[--off[idom[v]]] = v;
    for (uint32_t v = 0; v < n; v++) {
        uint64_t k = off[v + 1] - off[v];
        if (k > BIG_LIST) {
            if (radix_sort(child + off[v], k, retained, tmp) != 0)
                goto fail;
        } else if (k > SMALL_LIST)
            heap_sort(child + off[v], k, retained, tmp);
        else if (k > 1)
            insertion_sort(child + off[v], (uint32_t)k, retained);
    }
    free(tmp);
    t->n = n;
    t->child_off = off;
    t->child = child;
    return 0;
fail:
    free(off);
    free(child);
    free(tmp);
    return -1;
}

void domtree_free(struct domtree *t)
{
    free(t->child_off);
    free(t->child);
    *t = (struct domtree){0};
}

uint32_t domtree_accumulation_point(const struct domtree *t, const uint32_t *retained, uint32_t v,
                                    double share)
{
    while (t->child_off[v] < t->child_off[v + 1] && retained[v] > 0) {
        uint32_t c = t->child[t->child_off[v]];
        if ((double)retained[c] < share * (double)retained[v])
            break;
        v = c;
    }
    return v;
}

/* path of the walk below: the node at each level and the next of its children to visit */
struct walk_level {
    uint32_t node;
    uint64_t next;
};

int domtree_group_retained(const struct domtree *t, const uint32_t *retained, const uint32_t *group,
                           uint32_t groups, uint64_t *out)
{
    uint32_t *open = calloc(groups ? groups : 1, sizeof *open);
    size_t cap = 1024, depth = 0;
    struct walk_level *path = malloc(cap * sizeof *path);
    if (!open || !path) {
        free(open);
        free(path);
        return -1;
    }
    for (uint32_t g = 0; g < groups; g++)
        out[g] = 0;
    if (t->n == 0)
        goto done;
    /* open[g] = how many nodes of group g are on the path: a node counts when it is the first */
    uint32_t v = 0;
    for (;;) {
        /* enter v */
        uint32_t g = group[v];
        if (g != NONE && open[g]++ == 0)
            out[g] += retained[v];
        if (depth == cap) {
            struct walk_level *bigger = realloc(path, 2 * cap * sizeof *path);
            if (!bigger) {
                free(open);
                free(path);
                return -1;
            }
            path = bigger;
            cap *= 2;
        }
        path[depth++] = (struct walk_level){v, t->child_off[v]};
        /* next node to enter: the next child of the deepest node that has one left */
        for (;;) {
            struct walk_level *top = &path[depth - 1];
            if (top->next < t->child_off[top->node + 1]) {
                v = t->child[top->next++];
                break;
            }
            uint32_t gl = group[top->node];
            if (gl != NONE)
                open[gl]--;
            if (--depth == 0)
                goto done;
        }
    }
done:
    free(open);
    free(path);
    return 0;
}
