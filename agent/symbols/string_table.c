#include "string_table.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "keymap.h"
#include "mem_account.h"
#include "segarray.h"

/* A string's text is kept once: the index's own copy of its key, which is the text with its
 * terminating NUL (keymap_put_ref: copies never move, and this index is never pruned). An entry
 * is only the pointer to it. */
struct string_entry {
    const char *text;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct keymap *index_by_text;
static struct segarray entries; /* id = index + 1 */

static void strings_measure(struct mem_use *u)
{
    pthread_mutex_lock(&lock);
    u->entries = segarray_count(&entries);
    u->bytes = keymap_bytes(index_by_text) + segarray_bytes(&entries);
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
    size_t len = strlen(s) + 1; /* the key holds the NUL: the copy is the entry's text */
    uint32_t id = 0;
    pthread_mutex_lock(&lock);
    if (!keymap_get(index_by_text, s, len, &id)) {
        uint32_t i = segarray_append(&entries);
        const void *stored = NULL;
        if (i != UINT32_MAX && keymap_put_ref(index_by_text, s, len, i + 1, &stored)) {
            ((struct string_entry *)segarray_at(&entries, i))->text = stored;
            id = i + 1;
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
    segarray_free(&entries);
    keymap_free(index_by_text);
    index_by_text = NULL;
}
