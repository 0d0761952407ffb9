/* The agent's own memory: what its tables hold, by table, and the budget (memory=, in
 * doc/options.md) they may not grow past. Containers (keymap, segarray) and tables charge every
 * block they allocate and uncharge it when they free it; a table past the budget stops making
 * entries and counts what it would have made under an overflow entry of its own. Each table also
 * registers a measure function, so verbose=y reports bytes and entries per table at each dump.
 * Pure C; the counters are atomic, the registry is filled at start-up. */
#ifndef HPROF_MEM_ACCOUNT_H
#define HPROF_MEM_ACCOUNT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A block the glibc allocator hands out costs its size rounded up to 16 plus an 8-byte header:
 * what the figures below count, so they match RSS rather than the sizes asked for. */
static inline size_t mem_block(size_t size)
{
    return ((size + 8 + 15) & ~(size_t)15);
}

void mem_account_charge(size_t bytes);
void mem_account_uncharge(size_t bytes);
/* Bytes charged now, by every table. */
size_t mem_account_charged(void);

/* At start-up: the budget (mem_account_budget_set). */
void mem_account_start(size_t budget_bytes);

/* memory=: the budget in bytes, 0 for none. */
void mem_account_budget_set(size_t bytes);
size_t mem_account_budget(void);
/* Whether the tables hold the budget or more: a table then makes no new entry. The first time
 * it says so, one line on stderr names what (`what`: "new stacks") is counted where instead. */
bool mem_account_budget_reached(const char *what);
/* The same without the line on stderr. */
bool mem_account_budget_passed(void);

/* One table's figures, for the report. */
struct mem_use {
    size_t entries;
    size_t bytes;
};
typedef void (*mem_measure_fn)(struct mem_use *out);

/* Registers a table's measure function under name (a string literal); registering the same
 * function again does nothing (a second start after a failed one). */
void mem_account_register(const char *name, mem_measure_fn measure);
/* Each table's figures, in registration order, through line (called once per table, then once
 * with name "total": the entries summed, the bytes charged by every table). Returns the count. */
size_t mem_account_each(void (*line)(const char *name, const struct mem_use *use, void *ctx),
                        void *ctx);
/* verbose=y: one line on stderr with each table's entries and bytes per entry, and the total
 * (at each dump). */
void mem_account_log(void);
/* After each dump: frees the pages the dump left unused in the allocator's arenas (malloc_trim),
 * then mem_account_log. */
void mem_account_dump_done(void);

#endif
