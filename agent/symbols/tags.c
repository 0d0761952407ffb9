#include "tags.h"

#include <stdatomic.h>

static _Atomic(uint64_t) last_serial;

uint64_t tags_next_serial(void)
{
    return atomic_fetch_add_explicit(&last_serial, 1, memory_order_relaxed) + 1;
}

uint64_t tags_reserve_serials(uint64_t n)
{
    return atomic_fetch_add_explicit(&last_serial, n, memory_order_relaxed) + 1;
}
