/* libFuzzer target for tools/phd-read (the test oracle of the PHD and classic writers must not
 * crash on what it is meant to reject). By the first byte: half the inputs get a valid PHD
 * header put in front (version 4-6, flags 0-7), so the fuzzer spends its time on the records;
 * a quarter get a classic heap dump's first line (read by tools/classic_read.c); the rest go
 * in as they are. The reader runs on a temporary file in /dev/shm (tmpfs: no disk), quietly. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int phd_read_main(int argc, char **argv);
extern int optind;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char path[64];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!path[0]) {
        snprintf(path, sizeof path, "/dev/shm/fuzz_phd_read.%ld", (long)getpid());
    }
    FILE *f = fopen(path, "wb");
    if (!f)
        return 0;
    bool classic = size > 0 && (data[0] & 0xC0) == 0xC0; /* decided before any prefix */
    if (size > 0 && (data[0] & 0x80) == 0) {
        uint8_t hdr[40] = {0, 18};
        memcpy(hdr + 2, "portable heap dump", 18);
        hdr[23] = (uint8_t)(4 + data[0] % 3);    /* version */
        hdr[27] = (uint8_t)((data[0] >> 2) & 7); /* flags */
        hdr[28] = 1;                             /* start of header */
        hdr[29] = 2;                             /* end of header */
        hdr[30] = 2;                             /* start of dump */
        fwrite(hdr, 1, 31, f);
        data++;
        size--;
    }
    if (classic) {
        fputs("// Version: fuzz\n", f);
        data++;
        size--;
    }
    fwrite(data, 1, size, f);
    fclose(f);
    char *argv[] = {"phd-read", "--quiet", "--max-reports", "0", "--refs", "A", path, NULL};
    optind = 0;
    if (classic) { /* --refs is for PHD files */
        argv[4] = path;
        argv[5] = NULL;
    }
    phd_read_main(classic ? 5 : 7, argv);
    unlink(path); /* libFuzzer ends with _Exit: no atexit clean-up */
    return 0;
}
