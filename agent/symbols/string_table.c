#include "string_table.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "keymap.h"
#include "mem_account.h"
#include "segarray.h"

struct string_entry {
    const char *text;
    size_t len;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct keymap *index_by_text;
static struct segarray entries; /* id = index + 1 */
static size_t text_bytes;       /* the copies of the texts; under the lock */

static void strings_measure(struct mem_use *u)
{
    pthread_mutex_lock(&lock);
    u->entries = segarray_count(&entries);
    u->bytes = keymap_bytes(index_by_text) + segarray_bytes(&entries) + text_bytes;
    pthread_mutex_unlock(&lock);
}

int string_table_init(void)
{
    segarray_init(&entries, sizeof(struct string_entry));
    index_by_text = keymap_new(4096);
    mem_account_register("strings", strings_measure);
    return index_by_text ? 0 : -1;
}

hprof_id string_table_intern(const char *s)
{
    if (!s)
        return 0;
    size_t len = strlen(s);
    uint32_t id = 0;
    pthread_mutex_lock(&lock);
    if (!keymap_get(index_by_text, s, len, &id)) {
        char *copy = malloc(len + 1);
        uint32_t i = copy ? segarray_append(&entries) : UINT32_MAX;
        if (i != UINT32_MAX) {
            memcpy(copy, s, len + 1);
            struct string_entry *e = segarray_at(&entries, i);
            e->text = copy;
            e->len = len;
            text_bytes += mem_block(len + 1);
            mem_account_charge(mem_block(len + 1));
            id = keymap_put(index_by_text, s, len, i + 1);
        } else {
            free(copy);
        }
    }
    pthread_mutex_unlock(&lock);
    return id;
}

const char *string_table_text(hprof_id id)
{
    if (id == 0 || id > segarray_count(&entries))
        return NULL;
    return ((struct string_entry *)segarray_at(&entries, (uint32_t)(id - 1)))->text;
}

void string_table_teardown(void)
{
    uint32_t n = segarray_count(&entries);
    for (uint32_t i = 0; i < n; i++)
        free((char *)((struct string_entry *)segarray_at(&entries, i))->text);
    segarray_free(&entries);
    mem_account_uncharge(text_bytes);
    text_bytes = 0;
    keymap_free(index_by_text);
    index_by_text = NULL;
}
