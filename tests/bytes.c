/* The tests' byte builder (bytes.h). */
#include "bytes.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

void bytes_put(struct bytes *b, const void *data, size_t n)
{
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->n + n)
            cap *= 2;
        b->p = realloc(b->p, cap);
        ck_assert_ptr_nonnull(b->p);
        b->cap = cap;
    }
    if (n)
        memcpy(b->p + b->n, data, n);
    b->n += n;
}

void bytes_u1(struct bytes *b, uint8_t v)
{
    bytes_put(b, &v, 1);
}

void bytes_u2(struct bytes *b, uint16_t v)
{
    uint8_t x[2] = {(uint8_t)(v >> 8), (uint8_t)v};
    bytes_put(b, x, 2);
}

void bytes_u4(struct bytes *b, uint32_t v)
{
    uint8_t x[4] = {(uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v};
    bytes_put(b, x, 4);
}

void bytes_u8(struct bytes *b, uint64_t v)
{
    bytes_u4(b, (uint32_t)(v >> 32));
    bytes_u4(b, (uint32_t)v);
}

void bytes_id(struct bytes *b, uint64_t v)
{
    if (b->id_size == 8)
        bytes_u8(b, v);
    else
        bytes_u4(b, (uint32_t)v);
}

void bytes_f4(struct bytes *b, float f)
{
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    bytes_u4(b, bits);
}

void bytes_free(struct bytes *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}
