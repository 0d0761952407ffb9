/*
 * diff.h: the comparison behind hprof-diff (doc/tools.md): two profiles of one kind turned
 * into tables of keyed entries (a stack, a method's self or total, an allocation site, a
 * monitor, a class), each with its measures in the base and in the new profile; thresholds
 * (command line and rules file) that judge each entry; and the outputs (text, Markdown, JSON,
 * the differential flame graph, drawn by tools/flame).
 *
 * Plain C11 on tools/reader/profile.h. Allocation failure ends the command (exit 2): this is a
 * short-lived command-line tool, never code that runs inside the JVM.
 */
#ifndef HPROF_DIFF_H
#define HPROF_DIFF_H

#include "profile.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The kinds hprof-diff compares, by the name the command line and the rules file use. */
enum diff_kind { DK_CPU, DK_TIMES, DK_METHODS, DK_SITES, DK_MONITOR, DK_HEAP, DK_WALL, DK_NKINDS };

/* What one entry stands for. */
enum diff_group {
    DG_STACK,   /* a whole stack (CPU SAMPLES, CPU TIME) */
    DG_SELF,    /* a method as the leaf frame */
    DG_TOTAL,   /* a method anywhere in the stack (counted once per stack) */
    DG_METHOD,  /* a row of CPU TIME BY METHOD */
    DG_SITE,    /* allocated class plus stack */
    DG_MONITOR, /* monitor class plus stack */
    DG_CLASS,   /* a class of a heap dump */
    DG_NGROUPS
};

/* How a measure is judged: as a share of its total, or as a count (CPU time, calls, objects):
 * the default for every kind (doc/tools.md, "When an entry is a regression"). */
enum diff_mode { DM_DEFAULT, DM_SHARE, DM_COUNT };

/* What a count is, which says how its change is tested. */
enum diff_model {
    DMM_SAMPLED,  /* samples: Poisson counts, the exact conditional binomial test */
    DMM_MEASURED, /* measured milliseconds: the same test on the counts of ms */
    DMM_EXACT     /* counted events (calls, objects): any change is real, no test */
};

/* DV_UNIFORM: grew (or shrank) past the thresholds, but by the factor the whole run did */
/* DV_GREW: crossed, but only through stacks flagged on their own (a caller, a shared leaf) */
enum diff_verdict { DV_NOT_JUDGED, DV_SAME, DV_GREW, DV_SHRANK, DV_REGRESSION, DV_UNIFORM };

/* The z reported for a p-value too small for a double, and for an exact change. */
#define DIFF_Z_MAX 38.0

/* The factor by which a whole run changed (one measure of a table, count mode). */
struct diff_uniform {
    bool accepted;        /* a majority of the informative entries share one factor */
    bool finding;         /* accepted and past --growth and --z: reported as one finding */
    bool fails;           /* the finding is past uniform-growth: it fails the build */
    double factor;        /* new over base of the entries that share it; 1 when not accepted */
    double median;        /* the median of the informative entries' ratios (each one vote) */
    double z;             /* of the run's total change against no change */
    unsigned informative; /* entries of the partition group that vote */
    unsigned agreeing;    /* ... and those that share the factor */
    double scatter;       /* sd of an entry's change beyond Poisson's, in counts (0: none) */
    bool spread_known;    /* at least five voters: the scatter was estimated */
};

struct diff_entry {
    enum diff_group group;
    char *key;     /* "Main.main;Work.run;Work.a", "int[] @ Main.main;Main.fill", "Leak" */
    char **frames; /* root first, for the flame graph; NULL for DG_CLASS, DG_METHOD, methods */
    unsigned nframes;
    uint64_t base[HPROF_MAX_MEASURES], new_[HPROF_MAX_MEASURES];
    bool in_base, in_new;
    /* filled by diff_judge() for every measure */
    double base_share[HPROF_MAX_MEASURES], new_share[HPROF_MAX_MEASURES];
    double z[HPROF_MAX_MEASURES]; /* two-proportion z of the share change */
    /* count mode: new over base (in time for samples: x interval), and the z of that change
     * against no change and against the run's uniform factor */
    double ratio[HPROF_MAX_MEASURES], z_count[HPROF_MAX_MEASURES], z_uniform[HPROF_MAX_MEASURES];
    unsigned flagged;       /* bit i: measure i crossed the thresholds */
    unsigned share_flagged; /* bit i: measure i crossed them judged on shares */
    bool share_shrank;      /* ... and shrank past them, judged on shares */
    enum diff_verdict verdict;
};

struct diff_thresholds {
    double growth;         /* relative growth, fraction (0.10 = 10%) */
    double delta_share;    /* absolute growth of a share, fraction of the total (0.01 = 1 point) */
    double delta_count;    /* absolute growth of a count */
    double min_share;      /* an entry under this share of its total in both runs is not judged */
    double z;              /* minimum z of a change (count tests, sampled shares); 0 = no test */
    double uniform_growth; /* a uniform growth at least this fails; < 0: never */
    enum diff_mode mode;
    unsigned judge; /* bit i: measure i is judged; 0 = the kind's default */
};

struct diff_patterns {
    char **include, **exclude; /* fnmatch(3) globs on an entry's key */
    size_t ninclude, nexclude;
};

struct diff_table {
    enum diff_kind kind;
    enum hprof_section_kind section;
    const char *base_path, *new_path;
    unsigned base_index, new_index, base_count, new_count; /* which section of how many */
    uint64_t base_total[HPROF_MAX_MEASURES], new_total[HPROF_MAX_MEASURES];
    size_t n;
    struct diff_entry *e;
    /* filled by diff_judge() */
    struct diff_thresholds th;
    enum diff_mode mode; /* resolved: DM_SHARE or DM_COUNT */
    bool sampled;        /* share mode: the two-proportion z test applies */
    unsigned judge;      /* resolved mask */
    size_t regressions, improvements, uniform_fails;
    struct diff_uniform uniform[HPROF_MAX_MEASURES];
    /* cpu samples: the sampling interval of each file in ms, as given on the command line or
     * assumed (no format records it); a sample stands for interval ms of CPU */
    double base_interval, new_interval;
    bool interval_given, normalized;
};

/* Build options of a table: how stacks become keys. */
struct diff_keys {
    bool lines;      /* keep line numbers in frames ("Work.a:42") */
    unsigned frames; /* keep the top N frames of each stack (0 = all) */
};

/* One class of a histogram read elsewhere (PHD). */
struct diff_class_count {
    const char *name;
    uint64_t count, bytes;
};

void *diff_xmalloc(size_t n);
void *diff_xrealloc(void *p, size_t n);
char *diff_xstrdup(const char *s);

const char *diff_kind_name(enum diff_kind k); /* "cpu", "times", ... */
bool diff_kind_parse(const char *s, enum diff_kind *k);
enum hprof_section_kind diff_kind_section(enum diff_kind k);
const char *diff_group_name(enum diff_group g); /* "stack", "self", ... */

/* The table of kind k from two loaded profiles (sections present in both). */
struct diff_table *diff_table_build(enum diff_kind k, const struct hprof_profile *base,
                                    const struct hprof_profile *nw, const struct diff_keys *keys);
/* The table of two class histograms (PHD heap dumps). */
struct diff_table *diff_table_classes(const struct diff_class_count *base, size_t nbase,
                                      const struct diff_class_count *nw, size_t nnew);
void diff_table_free(struct diff_table *t);

/* Defaults, then the rules file, then the command line (doc/tools.md). */
void diff_thresholds_default(enum diff_kind k, struct diff_thresholds *th);
/* Parse a rules file: apply its settings for kind k (global ones, then the [kind] section)
 * and its include/exclude patterns. 0 ok, -1 with a message in err. */
int diff_rules_load(const char *path, enum diff_kind k, struct diff_thresholds *th,
                    struct diff_patterns *pat, char *err, size_t errlen);
/* One setting "name value" (the rules file's and the command line's names): 0 ok, -1 bad. */
int diff_setting(const char *name, const char *value, enum diff_kind k, struct diff_thresholds *th,
                 struct diff_patterns *pat, char *err, size_t errlen);
void diff_patterns_add(char ***v, size_t *n, const char *pat);
void diff_patterns_free(struct diff_patterns *p);

/* The statistics (diff_stats.c): binomial tails P(X >= k), P(X <= k) of X ~ Binomial(n, p);
 * the z of a one-sided p-value; the signed z of b given a + b when b ~ Binomial(a + b, p). */
double diff_binom_upper(uint64_t k, uint64_t n, double p);
double diff_binom_lower(uint64_t k, uint64_t n, double p);
double diff_z_of_p(double p);
double diff_count_z(uint64_t a, uint64_t b, double p);

enum diff_model diff_measure_model(enum diff_kind k, unsigned m);
/* The uniform factor of measure m of t (diff_uniform.c), from the entries chosen (NULL: all). */
void diff_uniform_estimate(struct diff_table *t, unsigned m, const bool *chosen);
/* The z of entry e's measure m against the factor f (new over base, in the table's units). */
double diff_factor_z(const struct diff_table *t, const struct diff_entry *e, unsigned m, double f);

/* Judge every entry; returns the number of regressions (a uniform finding that fails counts
 * as one). */
size_t diff_judge(struct diff_table *t, const struct diff_thresholds *th,
                  const struct diff_patterns *pat);

/* Outputs. top: unflagged entries shown besides the regressions (largest changes). */
void diff_write_text(FILE *o, struct diff_table *const *t, size_t nt, unsigned top);
void diff_write_markdown(FILE *o, struct diff_table *const *t, size_t nt, unsigned top);
/* held: the retained-size comparison of two heap dumps (its "retained" key), or NULL */
struct diff_retained;
void diff_write_json(FILE *o, struct diff_table *const *t, size_t nt,
                     const struct diff_retained *held);
/* The differential flame graph of the stack-shaped tables; 0 ok, -1 nothing to draw. */
int diff_write_flame(FILE *o, struct diff_table *const *t, size_t nt);

/* For the outputs: entry order (regressions, then largest change of the first judged measure) */
void diff_sort_for_report(struct diff_table *t);
unsigned diff_first_judged(const struct diff_table *t);

#endif
