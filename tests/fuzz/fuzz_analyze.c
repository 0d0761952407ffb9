/* libFuzzer target for hprof-analyze's loader and analysis (tools/analyze/): the graph is
 * built, the dominators run and the reports are written (to /dev/null) for whatever the input
 * holds, which must load or fail with a message, never crash. Inputs go in behind a valid
 * HPROF header with 8-byte ids when they do not start with one (the fuzzer then spends its
 * time on records and sub-records), through a memfd (no disk). The kept corpus is
 * tests/fuzz/corpus_analyze/ (small dumps: classes, instances, arrays, roots, a weak referent). */
#include "heap_analysis.h"
#include "report_heap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const uint8_t hdr[31] = "JAVA PROFILE 1.0.2\0\0\0\0\x08\0\0\0\0\0\0\0";
    int fd = memfd_create("fuzz_analyze", 0);
    if (fd < 0)
        return 0;
    bool raw = size >= 19 && memcmp(data, hdr, 18) == 0;
    if ((!raw && write(fd, hdr, sizeof hdr) != (ssize_t)sizeof hdr) ||
        (size && write(fd, data, size) != (ssize_t)size)) {
        close(fd);
        return 0;
    }
    char path[64], err[512];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    struct heap_graph g;
    bool bad;
    if (heap_graph_load(&g, path, 0, 4, false, err, sizeof err, &bad) == 0) {
        struct heap_analysis a;
        if (heap_analysis_run(&a, &g) == 0) {
            FILE *o = fopen("/dev/null", "w");
            struct rout out;
            struct report_opts ro = {.file = "fuzz",
                                     .top = 5,
                                     .depth = 3,
                                     .fanout = 3,
                                     .suspect = 0.1,
                                     .accumulation = 0.8,
                                     .path_to = "Node",
                                     .sites = true};
            rout_begin(&out, o, ROUT_JSON);
            report_heap(&a, &ro, &out);
            rout_end(&out);
            fclose(o);
        }
        heap_analysis_free(&a);
    }
    heap_graph_free(&g);
    close(fd);
    return 0;
}
