#include "heap_spool.h"
#include "env_knobs.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Record layout (host byte order, the file never leaves this process):
 *   'R' kind:u8 object:u64 thread:u32 depth:i32 trace:u32 jni_ref:u64
 *   'I' class:u32 id:u64 size:u64 n:u32 values:n*u64
 *   'A' class:u32 id:u64 size:u64 n:u32 elems:n*u64
 *   'P' type:u8 id:u64 size:u64 n:u32 elems:n*size(type) */

#define SPOOL_BUFFER (1u << 20)

struct heap_spool {
    FILE *f;
    char *buf;
    bool failed;
};

/* A file in $TMPDIR (else /tmp), unlinked at once. */
static FILE *temp_file(void)
{
    const char *dir = env_knobs()->tmpdir;
    char path[4096];
    if (snprintf(path, sizeof path, "%s/hprof-dump-XXXXXX", dir) >= (int)sizeof path)
        return NULL;
    int fd = mkostemp(path, O_CLOEXEC);
    if (fd < 0)
        return NULL;
    unlink(path);
    FILE *f = fdopen(fd, "w+b");
    if (!f)
        close(fd);
    return f;
}

struct heap_spool *spool_open(void)
{
    struct heap_spool *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->f = temp_file();
    s->buf = malloc(SPOOL_BUFFER);
    if (!s->f || !s->buf) {
        spool_close(s);
        return NULL;
    }
    setvbuf(s->f, s->buf, _IOFBF, SPOOL_BUFFER);
    return s;
}

void spool_close(struct heap_spool *s)
{
    if (!s)
        return;
    if (s->f)
        fclose(s->f);
    free(s->buf);
    free(s);
}

bool spool_failed(const struct heap_spool *s)
{
    return s->failed;
}

static void put(struct heap_spool *s, const void *p, size_t n)
{
    if (!s->failed && n && fwrite(p, 1, n, s->f) != n)
        s->failed = true;
}

#define PUT(s, v) put((s), &(v), sizeof(v))

void spool_root(struct heap_spool *s, const struct hprof_root *r)
{
    uint8_t tag = 'R', kind = (uint8_t)r->kind;
    PUT(s, tag);
    PUT(s, kind);
    PUT(s, r->object);
    PUT(s, r->thread_serial);
    PUT(s, r->frame_depth);
    PUT(s, r->trace_serial);
    PUT(s, r->jni_ref);
}

void spool_instance(struct heap_spool *s, uint32_t class_serial, hprof_id id, uint64_t size,
                    uint32_t nvalues, const union hprof_value *values)
{
    uint8_t tag = 'I';
    PUT(s, tag);
    PUT(s, class_serial);
    PUT(s, id);
    PUT(s, size);
    PUT(s, nvalues);
    put(s, values, (size_t)nvalues * sizeof *values);
}

void spool_obj_array(struct heap_spool *s, uint32_t class_serial, hprof_id id, uint64_t size,
                     uint32_t n, const hprof_id *elems)
{
    uint8_t tag = 'A';
    PUT(s, tag);
    PUT(s, class_serial);
    PUT(s, id);
    PUT(s, size);
    PUT(s, n);
    put(s, elems, (size_t)n * sizeof *elems);
}

void spool_prim_array(struct heap_spool *s, hprof_id id, enum hprof_basic_type type, uint64_t size,
                      uint32_t n, const void *elems)
{
    uint8_t tag = 'P', t = (uint8_t)type;
    PUT(s, tag);
    PUT(s, t);
    PUT(s, id);
    PUT(s, size);
    PUT(s, n);
    put(s, elems, (size_t)n * hprof_type_size(type));
}

static bool get(FILE *f, void *p, size_t n)
{
    return n == 0 || fread(p, 1, n, f) == n;
}

#define GET(f, v) get((f), &(v), sizeof(v))

/* A buffer for one record's payload, grown as needed. */
static void *payload(void **buf, size_t *cap, size_t n)
{
    if (n > *cap) {
        void *b = realloc(*buf, n);
        if (!b)
            return NULL;
        *buf = b;
        *cap = n;
    }
    return *buf;
}

int spool_replay(struct heap_spool *s, const struct spool_reader *r)
{
    if (s->failed || fflush(s->f) != 0 || fseek(s->f, 0, SEEK_SET) != 0)
        return -1;
    void *buf = NULL;
    size_t cap = 0;
    int rc = 0;
    uint8_t tag;
    while (rc == 0 && GET(s->f, tag)) {
        uint32_t cls = 0, n = 0;
        uint64_t id = 0, size = 0;
        switch (tag) {
        case 'R': {
            struct hprof_root root;
            memset(&root, 0, sizeof root);
            uint8_t kind = 0;
            if (!GET(s->f, kind) || !GET(s->f, root.object) || !GET(s->f, root.thread_serial) ||
                !GET(s->f, root.frame_depth) || !GET(s->f, root.trace_serial) ||
                !GET(s->f, root.jni_ref)) {
                rc = -1;
                break;
            }
            root.kind = (enum hprof_root_kind)kind;
            r->root(r->ctx, &root);
            break;
        }
        case 'I':
        case 'A': {
            if (!GET(s->f, cls) || !GET(s->f, id) || !GET(s->f, size) || !GET(s->f, n)) {
                rc = -1;
                break;
            }
            void *p = payload(&buf, &cap, (size_t)n * 8 + 1);
            if (!p || !get(s->f, p, (size_t)n * 8)) {
                rc = -1;
                break;
            }
            if (tag == 'I')
                r->instance(r->ctx, cls, id, size, n, p);
            else
                r->obj_array(r->ctx, cls, id, size, n, p);
            break;
        }
        case 'P': {
            uint8_t t = 0;
            if (!GET(s->f, t) || !GET(s->f, id) || !GET(s->f, size) || !GET(s->f, n)) {
                rc = -1;
                break;
            }
            size_t bytes = (size_t)n * hprof_type_size((enum hprof_basic_type)t);
            void *p = payload(&buf, &cap, bytes + 1);
            if (!p || !get(s->f, p, bytes)) {
                rc = -1;
                break;
            }
            r->prim_array(r->ctx, id, (enum hprof_basic_type)t, size, n, p);
            break;
        }
        default:
            rc = -1;
        }
    }
    free(buf);
    if (rc == 0 && ferror(s->f))
        rc = -1;
    return rc;
}
