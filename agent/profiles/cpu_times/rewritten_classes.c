#include "rewritten_classes.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "jvmti_util.h"
#include "keymap.h"
#include "mem_account.h"
#include "names.h"
#include "segarray.h"

/* A record's texts are one block (a server that keeps loading classes keeps one record per class
 * for the whole run, issue 31): per method the offsets of its name and descriptor (NO_TEXT when
 * the class file gave none), then the class's two names and every method's texts, each with its
 * NUL; a descriptor met earlier in the same class is shared. */
#define NO_TEXT UINT32_MAX

struct tracked_class {
    _Atomic(bool) ready;   /* filled: the fields below stay as they are */
    const char *name;      /* internal form, "java/lang/String" (in text) */
    const char *java_name; /* "java.lang.String" (in text) */
    jweak loader;          /* NULL = the boot loader */
    uint32_t nmethods;
    uint32_t *text;          /* offsets[2 * nmethods] (name, descriptor), then the characters */
    uint32_t next_same_name; /* another record of this name, 0 = none; under lock */
    bool bound;              /* under lock */
    _Atomic(jmethodID *) methods; /* per mnum, NULL entries for methods not found */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct segarray records; /* cnum = index + 1 */
static struct keymap *by_name;  /* internal name -> index + 1 in heads */
static struct segarray heads;   /* uint32_t: the newest cnum of a name; under lock */
static _Atomic(uint32_t) nbound;
static _Atomic(uint64_t) nmethods_total;
static _Atomic(size_t) text_bytes; /* names, method names and descriptors, jmethodID arrays */

/* verbose=y's memory report: the records, the name index and what the records point to. */
static void tracked_classes_measure(struct mem_use *u)
{
    pthread_mutex_lock(&lock);
    u->entries = segarray_count(&records);
    u->bytes = segarray_bytes(&records) + segarray_bytes(&heads) + keymap_bytes(by_name) +
               atomic_load(&text_bytes);
    pthread_mutex_unlock(&lock);
}

static void charge(size_t bytes)
{
    atomic_fetch_add(&text_bytes, bytes);
    mem_account_charge(bytes);
}

int rewritten_classes_init(void)
{
    segarray_init(&records, sizeof(struct tracked_class));
    segarray_init(&heads, sizeof(uint32_t));
    by_name = keymap_new(4096);
    mem_account_register("tracked classes", tracked_classes_measure);
    return by_name ? 0 : -1;
}

static struct tracked_class *record(uint32_t cnum)
{
    if (cnum == 0 || cnum > segarray_count(&records))
        return NULL;
    return segarray_at(&records, cnum - 1);
}

uint32_t rewritten_classes_reserve(void)
{
    pthread_mutex_lock(&lock);
    uint32_t i = segarray_append(&records);
    pthread_mutex_unlock(&lock);
    return i == UINT32_MAX ? 0 : i + 1;
}

static const char *method_text(const struct tracked_class *c, uint32_t mnum, int which)
{
    uint32_t off = c->text[2 * mnum + (uint32_t)which];
    return off == NO_TEXT ? NULL : (const char *)(c->text + 2 * c->nmethods) + off;
}

/* A descriptor already in the block, among the class's earlier methods (a few dozen looked at:
 * classes with thousands of methods share less and must not cost n^2). */
static uint32_t shared_desc(const uint32_t *offs, const char *chars, uint32_t mnum,
                            const char *desc)
{
    for (uint32_t i = mnum, seen = 0; i-- > 0 && seen < 32; seen++) {
        uint32_t off = offs[2 * i + 1];
        if (off != NO_TEXT && strcmp(chars + off, desc) == 0)
            return off;
    }
    return NO_TEXT;
}

/* Copies str to text + *at; returns its offset. */
static uint32_t put(char *text, size_t *at, const char *str)
{
    size_t len = strlen(str) + 1, off = *at;
    memcpy(text + off, str, len);
    *at += len;
    return (uint32_t)off;
}

/* The block of name, java_name and res's method texts; NULL when out of memory. */
static uint32_t *pack_texts(const char *name, const char *java_name,
                            const struct rewrite_result *res, size_t *bytes)
{
    uint32_t n = res->method_names && res->method_descs ? res->nmethods : 0;
    size_t chars = strlen(name) + 1 + strlen(java_name) + 1;
    for (uint32_t i = 0; i < n; i++)
        chars += (res->method_names[i] ? strlen(res->method_names[i]) + 1 : 0) +
                 (res->method_descs[i] ? strlen(res->method_descs[i]) + 1 : 0);
    size_t head = sizeof(uint32_t) * 2 * (size_t)n;
    if (chars >= NO_TEXT)
        return NULL;
    uint32_t *block = malloc(head + chars);
    if (!block)
        return NULL;
    char *text = (char *)(block + 2 * n);
    size_t at = 0;
    put(text, &at, name);
    put(text, &at, java_name);
    for (uint32_t i = 0; i < n; i++) {
        const char *mn = res->method_names[i], *md = res->method_descs[i];
        block[2 * i] = mn ? put(text, &at, mn) : NO_TEXT;
        uint32_t shared = md ? shared_desc(block, text, i, md) : NO_TEXT;
        block[2 * i + 1] = !md ? NO_TEXT : shared != NO_TEXT ? shared : put(text, &at, md);
    }
    *bytes = head + at;
    uint32_t *fit = realloc(block, head + at); /* shared descriptors left room at the end */
    return fit ? fit : block;
}

void rewritten_classes_fill(JNIEnv *jni, uint32_t cnum, const char *name, jobject loader,
                            struct rewrite_result *res)
{
    struct tracked_class *c = record(cnum);
    if (!c)
        return;
    /* as a signature: an internal name that starts with 'L' would read as one */
    size_t n = strlen(name);
    char *sig = malloc(n + 3);
    char *java_name = NULL;
    if (sig) {
        sig[0] = 'L';
        memcpy(sig + 1, name, n);
        sig[n + 1] = ';';
        sig[n + 2] = '\0';
        java_name = names_java_class_name(sig);
        free(sig);
    }
    size_t bytes = 0;
    c->text = java_name ? pack_texts(name, java_name, res, &bytes) : NULL;
    free(java_name);
    if (c->text) {
        c->nmethods = res->method_names && res->method_descs ? res->nmethods : 0;
        const char *chars = (const char *)(c->text + 2 * c->nmethods);
        c->name = chars;
        c->java_name = chars + strlen(chars) + 1;
    }
    c->loader = loader ? (*jni)->NewWeakGlobalRef(jni, loader) : NULL;
    atomic_fetch_add(&nmethods_total, c->nmethods);
    charge(mem_block(bytes));
    pthread_mutex_lock(&lock);
    uint32_t h = 0;
    if (c->name && !keymap_get(by_name, c->name, strlen(c->name), &h)) {
        uint32_t i = segarray_append(&heads);
        if (i != UINT32_MAX)
            h = keymap_put(by_name, c->name, strlen(c->name), i + 1);
    }
    if (h) {
        uint32_t *head = segarray_at(&heads, h - 1);
        c->next_same_name = *head;
        *head = cnum;
    }
    atomic_store_explicit(&c->ready, true, memory_order_release);
    pthread_mutex_unlock(&lock);
}

/* mnum by "name\0desc" of the record's methods: a class may have thousands. */
static struct keymap *method_index(const struct tracked_class *c)
{
    struct keymap *m = keymap_new(c->nmethods * 2 + 8);
    if (!m)
        return NULL;
    char small[512];
    for (uint32_t i = 0; i < c->nmethods; i++) {
        const char *n = method_text(c, i, 0), *d = method_text(c, i, 1);
        if (!n || !d)
            continue;
        size_t ln = strlen(n), ld = strlen(d), len = ln + 1 + ld;
        char *key = len <= sizeof small ? small : malloc(len);
        if (!key)
            continue;
        memcpy(key, n, ln + 1);
        memcpy(key + ln + 1, d, ld);
        keymap_put(m, key, len, i + 1);
        if (key != small)
            free(key);
    }
    return m;
}

/* Reads klass's jmethodIDs and matches them to the record's method numbers by name and
 * descriptor (GetClassMethods promises no order). */
static jmethodID *read_methods(jvmtiEnv *jvmti, const struct tracked_class *c, jclass klass)
{
    jint n = 0;
    jmethodID *ids = NULL;
    if ((*jvmti)->GetClassMethods(jvmti, klass, &n, &ids) != JVMTI_ERROR_NONE)
        return NULL;
    jmethodID *by_mnum = calloc(c->nmethods ? c->nmethods : 1, sizeof *by_mnum);
    struct keymap *index = method_index(c);
    char small[512];
    for (jint i = 0; by_mnum && index && i < n; i++) {
        char *name = NULL, *sig = NULL;
        if ((*jvmti)->GetMethodName(jvmti, ids[i], &name, &sig, NULL) != JVMTI_ERROR_NONE)
            continue;
        size_t ln = strlen(name), ls = strlen(sig), len = ln + 1 + ls;
        char *key = len <= sizeof small ? small : malloc(len);
        uint32_t mnum = 0;
        if (key) {
            memcpy(key, name, ln + 1);
            memcpy(key + ln + 1, sig, ls);
            if (keymap_get(index, key, len, &mnum))
                by_mnum[mnum - 1] = ids[i];
            if (key != small)
                free(key);
        }
        jvmti_util_free(jvmti, name);
        jvmti_util_free(jvmti, sig);
    }
    keymap_free(index);
    jvmti_util_free(jvmti, ids);
    return by_mnum;
}

static bool bind(jvmtiEnv *jvmti, struct tracked_class *c, jclass klass)
{
    jmethodID *m = read_methods(jvmti, c, klass);
    if (!m)
        return false;
    jmethodID *expected = NULL;
    if (atomic_compare_exchange_strong(&c->methods, &expected, m)) {
        atomic_fetch_add(&nbound, 1);
        charge(mem_block(sizeof *m * (c->nmethods ? c->nmethods : 1)));
    } else
        free(m); /* bound meanwhile */
    return true;
}

void rewritten_classes_bind(jvmtiEnv *jvmti, uint32_t cnum, jclass klass)
{
    struct tracked_class *c = record(cnum);
    if (!c || !atomic_load_explicit(&c->ready, memory_order_acquire))
        return;
    /* A class loaded but not linked yet (retransformed at VM init) has no methods to list
     * (JVMTI_ERROR_CLASS_NOT_PREPARED): it stays unbound until its ClassPrepare. */
    if (bind(jvmti, c, klass)) {
        pthread_mutex_lock(&lock);
        c->bound = true;
        pthread_mutex_unlock(&lock);
    }
}

void rewritten_classes_prepared(jvmtiEnv *jvmti, JNIEnv *jni, jclass klass)
{
    char *sig = NULL;
    if ((*jvmti)->GetClassSignature(jvmti, klass, &sig, NULL) != JVMTI_ERROR_NONE || !sig)
        return;
    size_t len = strlen(sig);
    if (len < 3 || sig[0] != 'L') { /* arrays and primitives are never rewritten */
        jvmti_util_free(jvmti, sig);
        return;
    }
    jobject loader = NULL;
    if ((*jvmti)->GetClassLoader(jvmti, klass, &loader) != JVMTI_ERROR_NONE) {
        jvmti_util_free(jvmti, sig);
        return;
    }
    /* Every unbound record of this name and loader: two threads may have rewritten the same
     * class (parallel loading); whichever definition won, its methods have these names. */
    uint32_t found[16];
    size_t nfound = 0;
    pthread_mutex_lock(&lock);
    uint32_t cnum = 0, h = 0;
    if (keymap_get(by_name, sig + 1, len - 2, &h))
        cnum = *(uint32_t *)segarray_at(&heads, h - 1);
    while (cnum && nfound < sizeof found / sizeof *found) {
        struct tracked_class *c = record(cnum);
        if (!c)
            break;
        if (!c->bound && (loader ? (c->loader && (*jni)->IsSameObject(jni, c->loader, loader))
                                 : c->loader == NULL)) {
            c->bound = true;
            found[nfound++] = cnum;
        }
        cnum = c->next_same_name;
    }
    pthread_mutex_unlock(&lock);
    for (size_t i = 0; i < nfound; i++)
        bind(jvmti, record(found[i]), klass);
    if (loader)
        (*jni)->DeleteLocalRef(jni, loader);
    jvmti_util_free(jvmti, sig);
}

jmethodID rewritten_classes_method(uint32_t cnum, uint32_t mnum)
{
    struct tracked_class *c = record(cnum);
    if (!c || !atomic_load_explicit(&c->ready, memory_order_acquire) || mnum >= c->nmethods)
        return NULL;
    jmethodID *m = atomic_load_explicit(&c->methods, memory_order_acquire);
    return m ? m[mnum] : NULL;
}

bool rewritten_classes_describe(uint32_t cnum, uint32_t mnum, const char **java_class,
                                const char **method, const char **desc)
{
    struct tracked_class *c = record(cnum);
    if (!c || !atomic_load_explicit(&c->ready, memory_order_acquire) || mnum >= c->nmethods ||
        !c->java_name)
        return false;
    *java_class = c->java_name;
    *method = method_text(c, mnum, 0);
    *desc = method_text(c, mnum, 1);
    return *method && *desc;
}

struct rewritten_classes_stats rewritten_classes_stats(void)
{
    struct rewritten_classes_stats s = {
        .classes = segarray_count(&records),
        .bound = atomic_load(&nbound),
        .methods = atomic_load(&nmethods_total),
    };
    return s;
}

bool rewritten_classes_unloaded(JNIEnv *jni, uint32_t cnum)
{
    struct tracked_class *c = record(cnum);
    if (!c || !atomic_load_explicit(&c->ready, memory_order_acquire) || !c->loader)
        return false;
    return (*jni)->IsSameObject(jni, c->loader, NULL);
}
