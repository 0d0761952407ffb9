/* Objects sampled in heap=sites' sampled mode (sites_interval > 0): object tag -> size, so
 * that ObjectFree, which reports only the tag, can take the object's weight off its site's
 * live counts. Holds only sampled objects that are still live (a few per MiB of live heap).
 * Thread-safe with one mutex: sampled events are rare by construction, and no JVMTI function
 * is called while it is held. Pure C. */
#ifndef HPROF_SAMPLED_OBJECTS_H
#define HPROF_SAMPLED_OBJECTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

int sampled_objects_init(void);
void sampled_objects_free(void);

/* Records a sampled object (tag != 0). False when memory ran out. */
bool sampled_objects_put(uint64_t tag, uint64_t size);

/* Removes tag and returns its size; false if it was not recorded. */
bool sampled_objects_take(uint64_t tag, uint64_t *size);

size_t sampled_objects_count(void);

#endif
