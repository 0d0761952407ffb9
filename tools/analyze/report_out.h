/*
 * report_out: the three output formats of hprof-analyze (text, Markdown, JSON) behind one
 * small interface: a report is a list of sections, each either key/value pairs or a table
 * whose columns are numbers or strings. The JSON schema follows directly (doc/heap-analysis.md).
 */
#ifndef REPORT_OUT_H
#define REPORT_OUT_H

#include <stdint.h>
#include <stdio.h>

enum rout_format { ROUT_TEXT, ROUT_MARKDOWN, ROUT_JSON };

struct rout_col {
    const char *key; /* JSON key and header */
    char type;       /* 'n' number (right-aligned), 's' string */
    int width;       /* text width */
};

struct rout {
    FILE *f;
    enum rout_format fmt;
    int sections, rows, kvs;
    const struct rout_col *cols;
    int ncols;
    int in_table; /* 1 table, 2 key/values */
};

void rout_begin(struct rout *o, FILE *f, enum rout_format fmt);
void rout_end(struct rout *o);
/* A key/value section. */
void rout_kv_begin(struct rout *o, const char *key, const char *title);
void rout_kv_num(struct rout *o, const char *key, uint64_t v);
void rout_kv_str(struct rout *o, const char *key, const char *v);
/* A table section; cells of rout_row are strings (numbers written as decimal digits). */
void rout_table_begin(struct rout *o, const char *key, const char *title,
                      const struct rout_col *cols, int ncols);
void rout_row(struct rout *o, const char *const *cells);
void rout_section_end(struct rout *o);

#endif
