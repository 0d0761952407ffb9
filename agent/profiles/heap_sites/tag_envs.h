/* heap=sites' JVMTI environments for object tags. HotSpot keeps one tag map per environment,
 * each behind its own lock: with every allocation tagged through one environment, allocating
 * threads queue on that lock (doc/heap-sites.md, "Many threads"). heap=sites therefore tags
 * through several environments of its own, never through the agent's main one (which keeps
 * class and thread tags):
 *  - an object of a class with no default site goes to its thread's environment (one per
 *    thread, handed out in turn);
 *  - an object of a class with a default site goes to its class's environment (by class
 *    serial), so that every tag of the class, the class object's own tag there and the heap
 *    walks that pin or move the class's default site are in one environment.
 * In sampled mode each of them posts ObjectFree for the tags it holds. */
#ifndef HPROF_TAG_ENVS_H
#define HPROF_TAG_ENVS_H

#include <jvmti.h>
#include <stdbool.h>
#include <stdint.h>

#include "hprof_error.h"

#define TAG_ENVS_MAX 16
#define TAG_ENVS_DEFAULT 4

/* Creates n (1..TAG_ENVS_MAX) environments with can_tag_objects and, when on_free is not NULL,
 * ObjectFree enabled and sent to on_free. Also watches GarbageCollectionFinish (see
 * tag_envs_collections). Returns hprof_ok() or why not (the caller logs it). */
struct hprof_error tag_envs_init(int n, jvmtiEventObjectFree on_free);

int tag_envs_count(void);
jvmtiEnv *tag_envs_at(int i);

/* The environment of a class with a default site. */
static inline int tag_envs_of_class(uint32_t class_serial, int n)
{
    return (int)(class_serial % (uint32_t)n);
}

/* An environment for a new thread (each in turn). */
int tag_envs_next_for_thread(void);

/* Garbage collections finished so far (counted only if the VM offers the event; 0 then). */
uint64_t tag_envs_collections(void);

/* Enables ObjectFree in every environment again, which makes HotSpot post the pending ones
 * (sampled mode, before a dump). */
void tag_envs_flush_frees(void);

#endif
