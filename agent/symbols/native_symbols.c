/* /proc/self/maps plus ELF symbol tables (native_symbols.h). */
#include "native_symbols.h"

#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* A mapping whose pc is not found is looked for again in a re-read of the maps at most this
 * often (a library dlopen'ed after the last read). */
#define REREAD_NS INT64_C(1000000000)

struct func {
    uintptr_t start, end; /* file virtual addresses */
    const char *name;     /* in the library's strings */
};

struct library {
    char *path;
    const char *base;
    bool loaded;
    struct func *funcs;
    size_t nfuncs;
    char *strings; /* a copy of the symbol table's strings */
};

struct mapping {
    uintptr_t start, end, bias; /* runtime address = file virtual address + bias */
    struct library *lib;
};

struct native_symbols {
    struct mapping *maps;
    size_t nmaps;
    struct library **libs;
    size_t nlibs;
    int64_t last_read_ns;
};

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static struct library *library_of(struct native_symbols *ns, const char *path)
{
    for (size_t i = 0; i < ns->nlibs; i++)
        if (strcmp(ns->libs[i]->path, path) == 0)
            return ns->libs[i];
    struct library **grown = realloc(ns->libs, (ns->nlibs + 1) * sizeof *grown);
    if (!grown)
        return NULL;
    ns->libs = grown;
    struct library *lib = calloc(1, sizeof *lib);
    if (!lib || !(lib->path = strdup(path))) {
        free(lib);
        return NULL;
    }
    const char *slash = strrchr(lib->path, '/');
    lib->base = slash ? slash + 1 : lib->path;
    ns->libs[ns->nlibs++] = lib;
    return lib;
}

/* The bias of a mapping of path at file offset off: from the PT_LOAD segment holding off. */
static bool mapping_bias(const unsigned char *img, size_t size, uintptr_t start, uint64_t off,
                         uintptr_t *bias)
{
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img;
    if (eh->e_phoff > size || (size - eh->e_phoff) / sizeof(Elf64_Phdr) < eh->e_phnum)
        return false;
    long page = sysconf(_SC_PAGESIZE);
    for (int i = 0; i < eh->e_phnum; i++) {
        const Elf64_Phdr *ph = (const Elf64_Phdr *)(img + eh->e_phoff) + i;
        if (ph->p_type != PT_LOAD)
            continue;
        uint64_t seg_off = ph->p_offset & ~(uint64_t)(page - 1);
        if (off >= seg_off && off < ph->p_offset + ph->p_filesz) {
            uint64_t vaddr = (ph->p_vaddr & ~(uint64_t)(page - 1)) + (off - seg_off);
            *bias = start - (uintptr_t)vaddr;
            return true;
        }
    }
    return false;
}

static const unsigned char *map_file(const char *path, size_t *size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    struct stat sb;
    void *p = MAP_FAILED;
    if (fstat(fd, &sb) == 0 && sb.st_size >= (off_t)sizeof(Elf64_Ehdr))
        p = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (p == MAP_FAILED)
        return NULL;
    const unsigned char *img = p;
    if (memcmp(img, ELFMAG, SELFMAG) != 0 || img[EI_CLASS] != ELFCLASS64) {
        munmap(p, (size_t)sb.st_size);
        return NULL;
    }
    *size = (size_t)sb.st_size;
    return img;
}

static int by_start(const void *a, const void *b)
{
    const struct func *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

/* The functions of one symbol table section (SHT_SYMTAB or SHT_DYNSYM), if it has any. */
static void load_table(struct library *lib, const unsigned char *img, size_t size, Elf64_Word type)
{
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img;
    if (eh->e_shoff == 0 || eh->e_shoff > size ||
        (size - eh->e_shoff) / sizeof(Elf64_Shdr) < eh->e_shnum)
        return;
    const Elf64_Shdr *sh = (const Elf64_Shdr *)(img + eh->e_shoff);
    for (int i = 0; i < eh->e_shnum; i++) {
        if (sh[i].sh_type != type || sh[i].sh_link >= eh->e_shnum ||
            sh[i].sh_entsize != sizeof(Elf64_Sym))
            continue;
        const Elf64_Shdr *str = &sh[sh[i].sh_link];
        if (sh[i].sh_offset > size || sh[i].sh_size > size - sh[i].sh_offset ||
            str->sh_offset > size || str->sh_size > size - str->sh_offset || str->sh_size == 0)
            continue;
        size_t n = sh[i].sh_size / sizeof(Elf64_Sym);
        const Elf64_Sym *syms = (const Elf64_Sym *)(img + sh[i].sh_offset);
        char *strings = malloc(str->sh_size);
        struct func *funcs = malloc((n ? n : 1) * sizeof *funcs);
        if (!strings || !funcs) {
            free(strings);
            free(funcs);
            return;
        }
        memcpy(strings, img + str->sh_offset, str->sh_size);
        strings[str->sh_size - 1] = '\0';
        size_t k = 0;
        for (size_t j = 0; j < n; j++) {
            int t = ELF64_ST_TYPE(syms[j].st_info);
            if ((t != STT_FUNC && t != STT_GNU_IFUNC) || syms[j].st_value == 0 ||
                syms[j].st_size == 0 || syms[j].st_name >= str->sh_size)
                continue;
            funcs[k++] = (struct func){(uintptr_t)syms[j].st_value,
                                       (uintptr_t)(syms[j].st_value + syms[j].st_size),
                                       strings + syms[j].st_name};
        }
        if (k == 0) {
            free(strings);
            free(funcs);
            continue;
        }
        qsort(funcs, k, sizeof *funcs, by_start);
        lib->funcs = funcs;
        lib->nfuncs = k;
        lib->strings = strings;
        return;
    }
}

/* The separate debug file of a stripped library (Debian's -dbg and -dbgsym packages put it
 * under /usr/lib/debug/.build-id/xx/yyyy.debug): its .symtab has the local functions too. */
static bool debug_file_path(const unsigned char *img, size_t size, char *path, size_t len)
{
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img;
    if (eh->e_shoff == 0 || eh->e_shoff > size ||
        (size - eh->e_shoff) / sizeof(Elf64_Shdr) < eh->e_shnum)
        return false;
    const Elf64_Shdr *sh = (const Elf64_Shdr *)(img + eh->e_shoff);
    for (int i = 0; i < eh->e_shnum; i++) {
        if (sh[i].sh_type != SHT_NOTE || sh[i].sh_offset > size ||
            sh[i].sh_size > size - sh[i].sh_offset)
            continue;
        const unsigned char *p = img + sh[i].sh_offset, *end = p + sh[i].sh_size;
        while ((size_t)(end - p) >= sizeof(Elf64_Nhdr)) {
            const Elf64_Nhdr *nh = (const Elf64_Nhdr *)p;
            size_t name_len = (nh->n_namesz + 3u) & ~3u, desc_len = (nh->n_descsz + 3u) & ~3u;
            const unsigned char *desc = p + sizeof *nh + name_len;
            if (desc > end || desc_len > (size_t)(end - desc))
                break;
            if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
                memcmp(p + sizeof *nh, "GNU", 4) == 0 && nh->n_descsz >= 2 && nh->n_descsz <= 64) {
                char hex[130];
                for (Elf64_Word k = 0; k < nh->n_descsz; k++)
                    snprintf(hex + 2 * k, 3, "%02x", desc[k]);
                return snprintf(path, len, "/usr/lib/debug/.build-id/%.2s/%s.debug", hex, hex + 2) <
                       (int)len;
            }
            p = desc + desc_len;
        }
    }
    return false;
}

static void load_library(struct library *lib)
{
    lib->loaded = true;
    size_t size = 0;
    const unsigned char *img = map_file(lib->path, &size);
    if (!img)
        return;
    load_table(lib, img, size, SHT_SYMTAB); /* all functions, when not stripped */
    char debug_path[256];
    if (!lib->funcs && debug_file_path(img, size, debug_path, sizeof debug_path)) {
        size_t debug_size = 0;
        const unsigned char *debug = map_file(debug_path, &debug_size);
        if (debug) {
            load_table(lib, debug, debug_size, SHT_SYMTAB);
            munmap((void *)debug, debug_size);
        }
    }
    if (!lib->funcs)
        load_table(lib, img, size, SHT_DYNSYM);
    munmap((void *)img, size);
}

static void read_maps(struct native_symbols *ns)
{
    ns->last_read_ns = now_ns();
    FILE *f = fopen("/proc/self/maps", "re");
    if (!f)
        return;
    char line[4096 + 128];
    size_t n = 0, cap = ns->nmaps;
    while (fgets(line, sizeof line, f)) {
        unsigned long start, end, off;
        char perms[8];
        int pathpos = 0;
        if (sscanf(line, "%lx-%lx %7s %lx %*s %*s %n", &start, &end, perms, &off, &pathpos) < 4 ||
            perms[2] != 'x' || pathpos == 0 || line[pathpos] != '/')
            continue;
        char *path = line + pathpos;
        path[strcspn(path, "\n")] = '\0';
        struct library *lib = library_of(ns, path);
        size_t size = 0;
        const unsigned char *img = lib ? map_file(path, &size) : NULL;
        uintptr_t bias = 0;
        bool ok = img && mapping_bias(img, size, start, off, &bias);
        if (img)
            munmap((void *)img, size);
        if (!ok)
            continue;
        if (n == cap) {
            size_t ncap = cap ? cap * 2 : 64;
            struct mapping *grown = realloc(ns->maps, ncap * sizeof *grown);
            if (!grown)
                break;
            ns->maps = grown;
            cap = ncap;
        }
        ns->maps[n++] = (struct mapping){start, end, bias, lib};
    }
    fclose(f);
    ns->nmaps = n;
}

struct native_symbols *native_symbols_new(void)
{
    struct native_symbols *ns = calloc(1, sizeof *ns);
    if (ns)
        read_maps(ns);
    return ns;
}

void native_symbols_free(struct native_symbols *ns)
{
    if (!ns)
        return;
    for (size_t i = 0; i < ns->nlibs; i++) {
        free(ns->libs[i]->path);
        free(ns->libs[i]->funcs);
        free(ns->libs[i]->strings);
        free(ns->libs[i]);
    }
    free(ns->libs);
    free(ns->maps);
    free(ns);
}

static const struct mapping *find_mapping(const struct native_symbols *ns, uintptr_t pc)
{
    for (size_t i = 0; i < ns->nmaps; i++)
        if (pc >= ns->maps[i].start && pc < ns->maps[i].end)
            return &ns->maps[i];
    return NULL;
}

static const char *find_func(const struct library *lib, uintptr_t addr)
{
    size_t lo = 0, hi = lib->nfuncs; /* the last function starting at or before addr */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (lib->funcs[mid].start <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    /* Functions may nest (aliases, cold parts): look back a little for one that holds addr. */
    for (size_t i = lo, back = 0; i > 0 && back < 8; i--, back++)
        if (addr < lib->funcs[i - 1].end)
            return lib->funcs[i - 1].name;
    return NULL;
}

bool native_symbols_lookup(struct native_symbols *ns, uintptr_t pc, struct native_place *out)
{
    const struct mapping *m = find_mapping(ns, pc);
    if (!m && now_ns() - ns->last_read_ns >= REREAD_NS) {
        read_maps(ns);
        m = find_mapping(ns, pc);
    }
    if (!m)
        return false;
    if (!m->lib->loaded)
        load_library(m->lib);
    out->library = m->lib->base;
    out->symbol = find_func(m->lib, pc - m->bias);
    return true;
}
