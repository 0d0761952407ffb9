/* array_spill.c: see array_spill.h. */
#include "array_spill.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int temp_file(void)
{
    const char *dir = getenv("TMPDIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/hprof-analyze.XXXXXX", dir && *dir ? dir : "/tmp");
    int fd = mkstemp(path);
    if (fd >= 0)
        unlink(path); /* gone when closed, whatever happens to the process */
    return fd;
}

void array_spill_out(struct array_spill *s, void **p, size_t bytes)
{
    s->fd = -1;
    s->bytes = bytes;
    if (!*p || !bytes)
        return;
    int fd = temp_file();
    if (fd < 0)
        return;
    for (size_t done = 0; done < bytes;) {
        ssize_t k = write(fd, (const uint8_t *)*p + done, bytes - done);
        if (k <= 0) { /* disk full: keep the array */
            close(fd);
            return;
        }
        done += (size_t)k;
    }
    s->fd = fd;
    free(*p);
    *p = NULL;
}

int array_spill_in(struct array_spill *s, void **p)
{
    if (s->fd < 0)
        return 0;
    int fd = s->fd;
    s->fd = -1;
    uint8_t *a = malloc(s->bytes);
    for (size_t done = 0; a && done < s->bytes;) {
        ssize_t k = pread(fd, a + done, s->bytes - done, (off_t)done);
        if (k <= 0) {
            free(a);
            a = NULL;
        } else {
            done += (size_t)k;
        }
    }
    close(fd);
    *p = a;
    return a ? 0 : -1;
}
