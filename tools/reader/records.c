/*
 * records.c: the file header and the top-level records, with the strict checks of each.
 * See hprof_parse.h and doc/tools.md.
 */
#include "reader_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------------------------------------ */
/* Tables                                                                                     */

bool hp_str_get(const struct parser *P, uint64_t id, const char **p, size_t *len)
{
    uint32_t i;
    if (!id || !map_get(&P->strings, id, &i))
        return false;
    *p = P->sarena.v + P->str.v[i].off;
    *len = P->str.v[i].len;
    return true;
}

/* An id that must name an earlier STRING record (0 allowed when allow0) */
void hp_check_str(struct parser *P, uint64_t id, bool allow0, uint64_t off, const char *what)
{
    if (id == 0) {
        if (!allow0)
            ERR(P, HK_STRING, off, "%s: string id 0", what);
        return;
    }
    if (!map_get(&P->strings, id, NULL))
        ERR(P, HK_STRING, off, "%s: string id 0x%" PRIx64 " not defined by an earlier STRING", what,
            id);
}

/* A trace serial in a non-heap-dump record: must be > 0 and defined by an earlier trace */
static void check_trace(struct parser *P, uint32_t serial, uint64_t off, const char *what)
{
    if (serial == 0)
        ERR(P, HK_TRACE, off, "%s: stack trace serial 0", what);
    else if (!map_get(&P->traces, serial, NULL))
        ERR(P, HK_TRACE, off,
            "%s: stack trace serial %" PRIu32 " not defined by an earlier STACK TRACE", what,
            serial);
}

static void check_class_serial(struct parser *P, uint32_t serial, uint64_t off, const char *what)
{
    uint32_t ci;
    if (!map_get(&P->class_by_serial, serial, &ci))
        ERR(P, HK_CLASS_SERIAL, off,
            "%s: class serial %" PRIu32 " not defined by an earlier LOAD CLASS", what, serial);
    else if (P->cls.v[ci].unloaded)
        ERR(P, HK_CLASS_SERIAL, off,
            "%s: class serial %" PRIu32 " was unloaded by an earlier UNLOAD CLASS", what, serial);
}

/* Thread serials must be defined by a START THREAD anywhere in the input (the JDK 5-8 agent
   wrote a thread's first STACK TRACE before its START THREAD): remember the first reference
   to each serial, check at the end. A warning unless --strict-threads. */
void hp_check_thread(struct parser *P, uint32_t serial, uint64_t off, const char *what)
{
    if (serial == 0) {
        hp_viol(P, P->o->strict_threads ? HPROF_ERROR : HPROF_WARNING, HK_THREAD, off,
                "%s: thread serial 0", what);
        return;
    }
    if (!hp_map_put(P, &P->thread_refs, serial, (uint32_t)P->tref.n, NULL))
        return;
    struct thread_ref *t = VPUSH(P, P->tref);
    t->off = off;
    t->what = what;
    t->serial = serial;
}

static void check_thread_refs(struct parser *P)
{
    for (size_t i = 0; i < P->tref.n; i++) {
        const struct thread_ref *t = &P->tref.v[i];
        if (!map_get(&P->threads, t->serial, NULL))
            hp_viol(P, P->o->strict_threads ? HPROF_ERROR : HPROF_WARNING, HK_THREAD, t->off,
                    "%s: thread serial %" PRIu32 " not defined by any START THREAD"
                    " (reported once per serial, at its first use)",
                    t->what, t->serial);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Top-level records                                                                          */

static bool expect_len(struct parser *P, const char *name, uint64_t len, uint64_t want)
{
    if (len == want)
        return true;
    ERR(P, HK_LENGTH, P->rec_off, "%s record body is %" PRIu64 " bytes, expected %" PRIu64, name,
        len, want);
    return false;
}

static void rec_string(struct parser *P, uint64_t len)
{
    uint64_t off = P->rec_off;
    if (len < P->idsize) {
        ERR(P, HK_LENGTH, off, "STRING record body is %" PRIu64 " bytes, shorter than an id", len);
        return;
    }
    const uint8_t *p = rd(P, P->idsize);
    if (!p)
        return;
    uint64_t id = getid(P, p);
    uint64_t n = len - P->idsize;
    size_t keep = n > STR_KEEP ? STR_KEEP : (size_t)n;
    p = rd(P, keep);
    if (!p)
        return;
    if (id == 0) {
        ERR(P, HK_ZERO_ID, off, "STRING with id 0");
    } else if (hp_map_put(P, &P->strings, id, (uint32_t)P->str.n, NULL)) {
        struct strent *e = VPUSH(P, P->str);
        e->off = P->sarena.n;
        e->len = (uint32_t)keep;
        VRESERVE(P, P->sarena, P->sarena.n + keep + 1);
        memcpy(P->sarena.v + P->sarena.n, p, keep);
        P->sarena.n += keep;
        P->sarena.v[P->sarena.n++] = 0;
        if (P->o->visit && P->o->visit->string)
            P->o->visit->string(P->o->visit->ctx, id, (const char *)p, keep);
    } else {
        ERR(P, HK_DUPLICATE, off, "STRING id 0x%" PRIx64 " defined twice", id);
    }
    if (n > keep)
        hp_skip(P, n - keep);
}

static void rec_load_class(struct parser *P, uint64_t len)
{
    uint64_t off = P->rec_off;
    if (!expect_len(P, "LOAD CLASS", len, 8 + 2 * P->idsize))
        return;
    const uint8_t *p = rd(P, (size_t)len);
    if (!p)
        return;
    uint32_t serial = be32(p);
    uint64_t id = getid(P, p + 4);
    uint32_t trace = be32(p + 4 + P->idsize);
    uint64_t name = getid(P, p + 8 + P->idsize);
    if (serial == 0)
        ERR(P, HK_ZERO_ID, off, "LOAD CLASS with class serial 0");
    if (id == 0)
        ERR(P, HK_ZERO_ID, off, "LOAD CLASS serial %" PRIu32 " with class object id 0", serial);
    if (trace != 0 && P->o->lenient_traces && !map_get(&P->traces, trace, NULL)) {
        struct fwdref *f = VPUSH(P, P->fwd); /* checked at the end of the input */
        f->off = off;
        f->serial = trace;
    } else {
        check_trace(P, trace, off, "LOAD CLASS");
    }
    hp_check_str(P, name, false, off, "LOAD CLASS name");
    if (serial == 0)
        return;
    uint32_t idx = (uint32_t)P->cls.n;
    if (!hp_map_put(P, &P->class_by_serial, serial, idx, NULL)) {
        ERR(P, HK_DUPLICATE, off, "LOAD CLASS serial %" PRIu32 " defined twice", serial);
        return;
    }
    struct lclass *c = VPUSH(P, P->cls);
    c->id = id;
    c->name = name;
    c->serial = serial;
    c->trace = trace;
    c->unloaded = false;
    if (P->o->visit && P->o->visit->load_class)
        P->o->visit->load_class(P->o->visit->ctx, serial, id, name);
    if (id) {
        /* a class id can be loaded again after an UNLOAD CLASS: keep the newest */
        uint32_t old;
        if (!hp_map_put(P, &P->class_by_id, id, idx, &old)) {
            size_t mask = P->class_by_id.cap - 1, i = slot_of(id, P->class_by_id.shift);
            while (P->class_by_id.keys[i] != id)
                i = (i + 1) & mask;
            P->class_by_id.vals[i] = idx;
        }
    }
}

static void rec_unload_class(struct parser *P, uint64_t len)
{
    if (!expect_len(P, "UNLOAD CLASS", len, 4))
        return;
    const uint8_t *p = rd(P, 4);
    if (!p)
        return;
    P->sum->classes_unloaded++;
    uint32_t serial = be32(p), ci;
    check_class_serial(P, serial, P->rec_off, "UNLOAD CLASS");
    if (map_get(&P->class_by_serial, serial, &ci))
        P->cls.v[ci].unloaded = true;
}

static void rec_stack_frame(struct parser *P, uint64_t len)
{
    uint64_t off = P->rec_off;
    unsigned I = P->idsize;
    if (!expect_len(P, "STACK FRAME", len, 4 * I + 8))
        return;
    const uint8_t *p = rd(P, (size_t)len);
    if (!p)
        return;
    uint64_t id = getid(P, p);
    struct frame f = {
        .method = getid(P, p + I),
        .sig = getid(P, p + 2 * I),
        .source = getid(P, p + 3 * I),
        .class_serial = be32(p + 4 * I),
        .line = (int32_t)be32(p + 4 * I + 4),
    };
    hp_check_str(P, f.method, false, off, "STACK FRAME method name");
    hp_check_str(P, f.sig, false, off, "STACK FRAME method signature");
    hp_check_str(P, f.source, true, off, "STACK FRAME source file");
    check_class_serial(P, f.class_serial, off, "STACK FRAME");
    if (id == 0) {
        ERR(P, HK_ZERO_ID, off, "STACK FRAME with frame id 0");
        return;
    }
    if (!hp_map_put(P, &P->frames, id, (uint32_t)P->fr.n, NULL)) {
        ERR(P, HK_DUPLICATE, off, "STACK FRAME id 0x%" PRIx64 " defined twice", id);
        return;
    }
    *VPUSH(P, P->fr) = f;
    if (P->o->visit && P->o->visit->frame)
        P->o->visit->frame(P->o->visit->ctx, id, f.method, f.sig, f.source, f.class_serial, f.line);
}

static void rec_stack_trace(struct parser *P, uint64_t len)
{
    uint64_t off = P->rec_off;
    if (len < 12) {
        ERR(P, HK_LENGTH, off, "STACK TRACE record body is %" PRIu64 " bytes, less than 12", len);
        return;
    }
    const uint8_t *p = rd(P, 12);
    if (!p)
        return;
    P->tframes.n = 0;
    struct trace t = {.serial = be32(p), .thread = be32(p + 4), .nframes = be32(p + 8)};
    if (!expect_len(P, "STACK TRACE", len, 12 + (uint64_t)t.nframes * P->idsize))
        return;
    for (uint32_t i = 0; i < t.nframes; i++) {
        if (!(p = rd(P, P->idsize)))
            return;
        uint64_t fid = getid(P, p);
        if (i == 0)
            t.top = fid;
        if (P->o->visit)
            *VPUSH(P, P->tframes) = fid;
        if (!fid || !map_get(&P->frames, fid, NULL))
            ERR(P, HK_FRAME, off,
                "STACK TRACE serial %" PRIu32 " frame %" PRIu32 ": frame id 0x%" PRIx64
                " not defined by an earlier STACK FRAME",
                t.serial, i, fid);
    }
    if (t.thread != 0)
        hp_check_thread(P, t.thread, off, "STACK TRACE");
    if (t.serial == 0) {
        ERR(P, HK_ZERO_ID, off, "STACK TRACE with serial 0");
        return;
    }
    if (!hp_map_put(P, &P->traces, t.serial, (uint32_t)P->tr.n, NULL)) {
        ERR(P, HK_DUPLICATE, off, "STACK TRACE serial %" PRIu32 " defined twice", t.serial);
        return;
    }
    *VPUSH(P, P->tr) = t;
    if (P->o->visit && P->o->visit->trace)
        P->o->visit->trace(P->o->visit->ctx, t.serial, t.thread, t.nframes, P->tframes.v);
}

static bool valid_array_type(unsigned t)
{
    return t == 0 || t == BT_OBJECT || (t >= 4 && t <= 11);
}

static void rec_alloc_sites(struct parser *P, uint64_t len)
{
    uint64_t off = P->rec_off;
    struct hprof_summary *S = P->sum;
    if (len < 34) {
        ERR(P, HK_LENGTH, off, "ALLOC SITES record body is %" PRIu64 " bytes, less than 34", len);
        return;
    }
    const uint8_t *p = rd(P, 34);
    if (!p)
        return;
    uint32_t n = be32(p + 30);
    if (!expect_len(P, "ALLOC SITES", len, 34 + (uint64_t)n * 25))
        return;
    S->alloc_sites_records++;
    S->sites_flags = be16(p);
    uint32_t cut = be32(p + 2);
    memcpy(&S->sites_cutoff, &cut, sizeof cut);
    S->sites_live_bytes = be32(p + 6);
    S->sites_live_instances = be32(p + 10);
    S->sites_alloc_bytes = be64(p + 14);
    S->sites_alloc_instances = be64(p + 22);
    S->nsites = n;
    P->sites.n = 0;
    P->vsites.n = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (!(p = rd(P, 25)))
            return;
        struct site *s = VPUSH(P, P->sites);
        s->array = p[0];
        s->class_serial = be32(p + 1);
        s->trace = be32(p + 5);
        s->live_bytes = be32(p + 9);
        s->live_inst = be32(p + 13);
        s->alloc_bytes = be32(p + 17);
        s->alloc_inst = be32(p + 21);
        s->row = i;
        if (!valid_array_type(s->array))
            ERR(P, HK_SUBRECORD, off, "ALLOC SITES row %" PRIu32 ": bad array type %u", i,
                s->array);
        check_class_serial(P, s->class_serial, off, "ALLOC SITES row");
        check_trace(P, s->trace, off, "ALLOC SITES row");
        if (P->o->visit)
            *VPUSH(P, P->vsites) =
                (struct hprof_site_rec){s->array,     s->class_serial, s->trace,     s->live_bytes,
                                        s->live_inst, s->alloc_bytes,  s->alloc_inst};
    }
    if (P->o->visit && P->o->visit->sites)
        P->o->visit->sites(P->o->visit->ctx, S->sites_flags, S->sites_alloc_bytes,
                           S->sites_alloc_instances, S->sites_live_bytes, S->sites_live_instances,
                           P->vsites.n, P->vsites.v);
}

static void rec_heap_summary(struct parser *P, uint64_t len)
{
    if (!expect_len(P, "HEAP SUMMARY", len, 24))
        return;
    const uint8_t *p = rd(P, 24);
    if (!p)
        return;
    struct hprof_summary *S = P->sum;
    S->heap_summary_records++;
    S->hs_live_bytes = be32(p);
    S->hs_live_instances = be32(p + 4);
    S->hs_alloc_bytes = be64(p + 8);
    S->hs_alloc_instances = be64(p + 16);
}

static void rec_start_thread(struct parser *P, uint64_t len)
{
    uint64_t off = P->rec_off;
    unsigned I = P->idsize;
    if (!expect_len(P, "START THREAD", len, 8 + 4 * I))
        return;
    const uint8_t *p = rd(P, (size_t)len);
    if (!p)
        return;
    uint32_t serial = be32(p);
    uint32_t trace = be32(p + 4 + I);
    check_trace(P, trace, off, "START THREAD");
    hp_check_str(P, getid(P, p + 8 + I), true, off, "START THREAD name");
    hp_check_str(P, getid(P, p + 8 + 2 * I), true, off, "START THREAD group name");
    hp_check_str(P, getid(P, p + 8 + 3 * I), true, off, "START THREAD parent group name");
    P->sum->threads_started++;
    if (serial == 0)
        ERR(P, HK_ZERO_ID, off, "START THREAD with thread serial 0");
    else if (!hp_map_put(P, &P->threads, serial, 0, NULL))
        ERR(P, HK_DUPLICATE, off, "START THREAD serial %" PRIu32 " started twice", serial);
}

static void rec_end_thread(struct parser *P, uint64_t len)
{
    if (!expect_len(P, "END THREAD", len, 4))
        return;
    const uint8_t *p = rd(P, 4);
    if (!p)
        return;
    P->sum->threads_ended++;
    hp_check_thread(P, be32(p), P->rec_off, "END THREAD");
}

static void rec_cpu_samples(struct parser *P, uint64_t len)
{
    uint64_t off = P->rec_off;
    struct hprof_summary *S = P->sum;
    if (len < 8) {
        ERR(P, HK_LENGTH, off, "CPU SAMPLES record body is %" PRIu64 " bytes, less than 8", len);
        return;
    }
    const uint8_t *p = rd(P, 8);
    if (!p)
        return;
    uint32_t total = be32(p), n = be32(p + 4);
    if (!expect_len(P, "CPU SAMPLES", len, 8 + (uint64_t)n * 8))
        return;
    S->cpu_samples_records++;
    S->cpu_total = total;
    S->cpu_ntraces = n;
    P->samples.n = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (!(p = rd(P, 8)))
            return;
        struct hprof_sample_rec *s = VPUSH(P, P->samples);
        s->count = be32(p);
        s->trace = be32(p + 4);
        check_trace(P, s->trace, off, "CPU SAMPLES row");
    }
    if (P->o->visit && P->o->visit->cpu_samples) {
        P->o->visit->cpu_samples(P->o->visit->ctx, total, P->samples.n, P->samples.v);
    }
}

static void rec_control_settings(struct parser *P, uint64_t len)
{
    if (!expect_len(P, "CONTROL SETTINGS", len, 6))
        return;
    const uint8_t *p = rd(P, 6);
    if (!p)
        return;
    P->sum->control_settings_records++;
    P->sum->control_flags = be32(p);
    P->sum->control_depth = be16(p + 4);
}

/* ------------------------------------------------------------------------------------------ */
/* Driver                                                                                     */

bool hp_parse_header(struct parser *P)
{
    struct hprof_summary *S = P->sum;
    P->rec_off = 0;
    P->rec_tag = 0;
    size_t have = hp_ensure(P, 64);
    const uint8_t *b = P->s.buf + P->s.pos;
    size_t nul = 0;
    while (nul < have && b[nul])
        nul++;
    if (nul == have) {
        ERR(P, have < 64 ? HK_TRUNCATED : HK_HEADER, 0,
            "no NUL-terminated format name at the start of the input (%zu bytes read)", have);
        return false;
    }
    snprintf(S->version, sizeof S->version, "%.*s", (int)(nul < 31 ? nul : 31), (const char *)b);
    bool known = strcmp((const char *)b, "JAVA PROFILE 1.0.2") == 0 ||
                 strcmp((const char *)b, "JAVA PROFILE 1.0.1") == 0;
    if (!known)
        ERR(P, HK_HEADER, 0, "format name \"%s\" is not \"JAVA PROFILE 1.0.2\" or \"1.0.1\"",
            S->version);
    P->s.pos += nul + 1;
    have = hp_ensure(P, 12);
    if (have < 12) {
        P->fatal = true;
        ERR(P, HK_TRUNCATED, nul + 1,
            "input ends inside the file header (%zu of the 12 bytes after the format name)", have);
        return false;
    }
    const uint8_t *p = rd(P, 12);
    uint32_t ids = be32(p);
    S->timestamp_ms = be64(p + 4);
    S->id_size = ids;
    if (ids != 4 && ids != 8) {
        ERR(P, HK_HEADER, nul + 1, "identifier size %" PRIu32 " (must be 4 or 8)", ids);
        return false;
    }
    P->idsize = ids;
    memset(P->tsize, 0, sizeof P->tsize);
    P->tsize[BT_OBJECT] = (uint8_t)ids;
    P->tsize[4] = P->tsize[8] = 1;
    P->tsize[5] = P->tsize[9] = 2;
    P->tsize[6] = P->tsize[10] = 4;
    P->tsize[7] = P->tsize[11] = 8;
    return true;
}

void hp_parse_records(struct parser *P)
{
    struct hprof_summary *S = P->sum;
    while (!P->fatal) {
        uint64_t off = cur(P);
        size_t have = hp_ensure(P, 9);
        if (have == 0)
            break;
        P->rec_off = off;
        P->rec_tag = P->s.buf[P->s.pos];
        P->rec_len = 0;
        if (have < 9) {
            P->fatal = true;
            ERR(P, HK_TRUNCATED, off, "input ends inside a record header (%zu of 9 bytes)", have);
            break;
        }
        const uint8_t *h = rd(P, 9);
        unsigned tag = h[0];
        uint64_t len = be32(h + 5);
        P->rec_len = len;
        S->records++;
        S->tag_counts[tag]++;
        const char *name = hprof_tag_name(tag);
        uint64_t end = off + 9 + len;
        if (P->size_known && end > P->file_size) {
            P->fatal = true;
            ERR(P, HK_TRUNCATED, off,
                "%s record (tag 0x%02x) of length %" PRIu64 " extends %" PRIu64
                " bytes beyond the end of the file",
                name ? name : "unknown", tag, len, end - P->file_size);
            break;
        }
        /* heap dump segment sequencing */
        if (tag == T_HEAP_DUMP_SEGMENT) {
            if (!P->in_segments) {
                if (P->d) /* cannot happen: 0x0C dumps are finished at once */
                    hp_dump_finish(P);
                hp_dump_begin(P, true);
                P->in_segments = true;
                P->seg_open_off = off;
            }
            DS(P)->segments++;
        } else if (tag == T_HEAP_DUMP_END) {
            if (!P->in_segments) {
                ERR(P, HK_SEGMENT, off, "HEAP DUMP END without an open HEAP DUMP SEGMENT");
            } else {
                P->in_segments = false;
                hp_dump_finish(P);
            }
            if (len)
                ERR(P, HK_LENGTH, off, "HEAP DUMP END record body is %" PRIu64 " bytes, expected 0",
                    len);
            hp_skip(P, len);
            continue;
        } else if (P->in_segments) {
            ERR(P, HK_SEGMENT, off,
                "%s record (tag 0x%02x) between the HEAP DUMP SEGMENTs of the dump opened at "
                "offset %" PRIu64,
                name ? name : "unknown", tag, P->seg_open_off);
        }
        if (len == 0) {
            ERR(P, HK_ZERO_LENGTH, off, "%s record (tag 0x%02x) of length 0",
                name ? name : "unknown", tag);
            continue;
        }
        uint64_t body = cur(P);
        switch (tag) {
        case T_STRING:
            S->strings++;
            rec_string(P, len);
            break;
        case T_LOAD_CLASS:
            S->classes++;
            rec_load_class(P, len);
            break;
        case T_UNLOAD_CLASS:
            rec_unload_class(P, len);
            break;
        case T_STACK_FRAME:
            S->frames++;
            rec_stack_frame(P, len);
            break;
        case T_STACK_TRACE:
            S->traces++;
            rec_stack_trace(P, len);
            break;
        case T_ALLOC_SITES:
            rec_alloc_sites(P, len);
            break;
        case T_HEAP_SUMMARY:
            rec_heap_summary(P, len);
            break;
        case T_START_THREAD:
            rec_start_thread(P, len);
            break;
        case T_END_THREAD:
            rec_end_thread(P, len);
            break;
        case T_CPU_SAMPLES:
            rec_cpu_samples(P, len);
            break;
        case T_CONTROL_SETTINGS:
            rec_control_settings(P, len);
            break;
        case T_HEAP_DUMP:
            if (P->in_segments) {
                /* reported above; parse it as part of the open dump */
                DS(P)->segments++;
                hp_dump_body(P, len);
            } else {
                hp_dump_begin(P, false);
                DS(P)->segments = 1;
                hp_dump_body(P, len);
                hp_dump_finish(P);
            }
            break;
        case T_HEAP_DUMP_SEGMENT:
            hp_dump_body(P, len);
            break;
        default:
            ERR(P, HK_UNKNOWN_TAG, off, "unknown record tag 0x%02x (length %" PRIu64 ")", tag, len);
            break;
        }
        if (P->fatal)
            break;
        uint64_t used = cur(P) - body;
        if (used < len)
            hp_skip(P, len - used);
    }
    if (P->in_segments) {
        ERR(P, HK_SEGMENT, cur(P),
            "input ends inside the heap dump opened at offset %" PRIu64 " (no HEAP DUMP END)",
            P->seg_open_off);
        P->in_segments = false;
        P->fatal = true; /* the dump is incomplete: no integrity checks */
    }
    if (P->d)
        hp_dump_finish(P);
    check_thread_refs(P);
    /* LOAD CLASS trace serials defined only later (accepted with --lenient-traces) */
    for (size_t i = 0; i < P->fwd.n; i++)
        if (!map_get(&P->traces, P->fwd.v[i].serial, NULL))
            ERR(P, HK_TRACE, P->fwd.v[i].off,
                "LOAD CLASS: stack trace serial %" PRIu32 " not defined by any STACK TRACE",
                P->fwd.v[i].serial);
}
