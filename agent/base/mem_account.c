#include "mem_account.h"

#include <stdatomic.h>
#include <malloc.h>
#include <pthread.h>
#include <unistd.h>
#include <stdio.h>
#include <string.h>

#include "log.h"

static _Atomic(size_t) charged;
static size_t budget;
static atomic_bool budget_said;

#define MAX_TABLES 24
static struct {
    const char *name;
    mem_measure_fn measure;
} tables[MAX_TABLES];
static _Atomic(size_t) ntables;

void mem_account_charge(size_t bytes)
{
    atomic_fetch_add_explicit(&charged, bytes, memory_order_relaxed);
}

void mem_account_uncharge(size_t bytes)
{
    atomic_fetch_sub_explicit(&charged, bytes, memory_order_relaxed);
}

size_t mem_account_charged(void)
{
    return atomic_load_explicit(&charged, memory_order_relaxed);
}

void mem_account_budget_set(size_t bytes)
{
    budget = bytes;
    atomic_store(&budget_said, false);
}

size_t mem_account_budget(void)
{
    return budget;
}

bool mem_account_budget_passed(void)
{
    return budget != 0 && mem_account_charged() >= budget;
}

bool mem_account_budget_reached(const char *what)
{
    if (budget == 0 || mem_account_charged() < budget)
        return false;
    if (!atomic_exchange(&budget_said, true))
        log_warning("the agent's tables reached memory=%zu (MB): %s are counted under "
                    "<memory_budget_reached> from now on (totals stay exact)",
                    budget >> 20, what);
    return true;
}

void mem_account_register(const char *name, mem_measure_fn measure)
{
    size_t n = atomic_load(&ntables);
    for (size_t i = 0; i < n; i++)
        if (tables[i].measure == measure)
            return;
    if (n == MAX_TABLES)
        return;
    tables[n].name = name;
    tables[n].measure = measure;
    atomic_store(&ntables, n + 1);
}

size_t mem_account_each(void (*line)(const char *name, const struct mem_use *use, void *ctx),
                        void *ctx)
{
    size_t n = atomic_load(&ntables);
    struct mem_use total = {0, mem_account_charged()};
    for (size_t i = 0; i < n; i++) {
        struct mem_use u = {0, 0};
        tables[i].measure(&u);
        total.entries += u.entries;
        line(tables[i].name, &u, ctx);
    }
    line("total", &total, ctx);
    return n;
}

struct log_line {
    char text[900];
    size_t len;
};

static void add_part(const char *name, const struct mem_use *u, void *ctx)
{
    struct log_line *l = ctx;
    if (l->len >= sizeof l->text)
        return;
    size_t room = sizeof l->text - l->len;
    int n;
    if (strcmp(name, "total") == 0)
        n = snprintf(l->text + l->len, room, "; %.1f MB in all", (double)u->bytes / 1048576.0);
    else if (u->entries)
        n = snprintf(l->text + l->len, room, "%s%s %zu x %zu B", l->len ? ", " : "", name,
                     u->entries, u->bytes / u->entries);
    else
        n = snprintf(l->text + l->len, room, "%s%s %zu B", l->len ? ", " : "", name, u->bytes);
    l->len += n > 0 ? (size_t)n : 0;
}

/* No periodic trim from a thread of the agent's own: when an attach fails, the VM unloads the
 * library, and such a thread would wake up in unmapped code (a crash seen in NetTest's refused
 * attach). The trim runs after each dump instead, on the thread that dumps. */
void mem_account_start(size_t budget_bytes)
{
    mem_account_budget_set(budget_bytes);
}

void mem_account_dump_done(void)
{
    /* A dump allocates rows, copies and the VM's heap-walk state, and frees them: give the
     * pages back, or the process keeps them (glibc keeps freed memory in its arenas). */
    malloc_trim(0);
    mem_account_log();
}

void mem_account_log(void)
{
    struct log_line l = {.len = 0};
    mem_account_each(add_part, &l);
    log_info("agent tables (entries x bytes each): %s", l.text);
}
