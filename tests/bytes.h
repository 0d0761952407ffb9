/* The one byte builder of the C tests: expected output and hand-made input streams, in
 * big-endian (HPROF, the control protocol). Grows as needed; fails the running test when out
 * of memory. Free with bytes_free. */
#ifndef HPROF_TEST_BYTES_H
#define HPROF_TEST_BYTES_H

#include <stddef.h>
#include <stdint.h>

struct bytes {
    uint8_t *p;
    size_t n, cap;
    unsigned id_size; /* bytes_id: 8, or 4 (any other value) */
};

void bytes_put(struct bytes *b, const void *data, size_t n);
void bytes_u1(struct bytes *b, uint8_t v);
void bytes_u2(struct bytes *b, uint16_t v);
void bytes_u4(struct bytes *b, uint32_t v);
void bytes_u8(struct bytes *b, uint64_t v);
/* An identifier of b->id_size bytes. */
void bytes_id(struct bytes *b, uint64_t v);
/* A float's IEEE 754 bits, as u4. */
void bytes_f4(struct bytes *b, float f);
void bytes_free(struct bytes *b);

#endif
