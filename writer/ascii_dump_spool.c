/* The ascii writer's held-back heap dump (ascii_dump_spool.h). */
#include "ascii_dump_spool.h"
#include "writer_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Bytes read back from the temporary file at a time. */
#define SPOOL_READ_SIZE (1024 * 1024)

struct ascii_dump_spool {
    struct hprof_sink *records; /* on the temporary file */
    struct hprof_sink *classes; /* in memory */
    int fd;                     /* the temporary file, to read it back */
};

struct hprof_error ascii_dump_spool_open(struct ascii_dump_spool **out)
{
    *out = NULL;
    struct ascii_dump_spool *sp = calloc(1, sizeof *sp);
    if (!sp)
        return hprof_errorf("out of memory");
    sp->fd = writer_common_temp_file(NULL, "hprof-dump");
    if (sp->fd < 0) {
        struct hprof_error e = hprof_errorf("no temporary file: %s", strerror(-sp->fd));
        free(sp);
        return e;
    }
    int wfd = dup(sp->fd);
    if (wfd >= 0)
        sp->records = sink_open_fd(wfd, false, 0, "the temporary file of the ascii heap dump");
    if (!sp->records && wfd >= 0)
        close(wfd);
    sp->classes = sink_open_memory();
    if (!sp->records || !sp->classes) {
        ascii_dump_spool_close(sp);
        return hprof_errorf("no temporary file: %s", wfd < 0 ? strerror(errno) : "out of memory");
    }
    *out = sp;
    return hprof_ok();
}

struct hprof_sink *ascii_dump_spool_records(struct ascii_dump_spool *sp)
{
    return sp->records;
}

struct hprof_sink *ascii_dump_spool_classes(struct ascii_dump_spool *sp)
{
    return sp->classes;
}

bool ascii_dump_spool_failed(const struct ascii_dump_spool *sp)
{
    return sink_failed(sp->records) || sink_failed(sp->classes);
}

struct hprof_error ascii_dump_spool_copy(struct ascii_dump_spool *sp, struct hprof_sink *out)
{
    size_t len;
    const uint8_t *text = sink_memory_data(sp->classes, &len);
    sink_write(out, text, len);
    sink_flush(sp->records);
    if (sink_failed(sp->records))
        return hprof_errorf("writing the temporary file failed");
    uint8_t *buf = malloc(SPOOL_READ_SIZE);
    if (!buf)
        return hprof_errorf("out of memory reading the temporary file back");
    struct hprof_error e = hprof_ok();
    off_t at = 0;
    for (;;) {
        ssize_t r = pread(sp->fd, buf, SPOOL_READ_SIZE, at);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            e = hprof_errorf("reading the temporary file back: %s", strerror(errno));
            break;
        }
        if (r == 0)
            break;
        sink_write(out, buf, (size_t)r);
        at += r;
    }
    free(buf);
    return e;
}

void ascii_dump_spool_close(struct ascii_dump_spool *sp)
{
    if (!sp)
        return;
    sink_close(sp->records);
    sink_close(sp->classes);
    if (sp->fd >= 0)
        close(sp->fd);
    free(sp);
}
