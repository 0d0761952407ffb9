/*
 * report_out.c: text, Markdown and JSON writers of hprof-analyze's sections. See report_out.h.
 */
#include "report_out.h"

#include <inttypes.h>
#include <string.h>

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(f, "\\u%04x", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}

/* Markdown cells: a '|' would end the cell */
static void md_str(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '|')
            fputs("\\|", f);
        else
            fputc(*s, f);
    }
}

void rout_begin(struct rout *o, FILE *f, enum rout_format fmt)
{
    memset(o, 0, sizeof *o);
    o->f = f;
    o->fmt = fmt;
    if (fmt == ROUT_JSON)
        fputs("{\n", f);
}

void rout_end(struct rout *o)
{
    if (o->fmt == ROUT_JSON)
        fputs("\n}\n", o->f);
}

static void section_start(struct rout *o, const char *key, const char *title)
{
    FILE *f = o->f;
    if (o->fmt == ROUT_JSON)
        fprintf(f, "%s  \"%s\": ", o->sections ? ",\n" : "", key);
    else if (o->fmt == ROUT_MARKDOWN)
        fprintf(f, "%s## %s\n\n", o->sections ? "\n" : "", title);
    else
        fprintf(f, "%s%s\n", o->sections ? "\n" : "", title);
    o->sections++;
    o->rows = o->kvs = 0;
}

void rout_kv_begin(struct rout *o, const char *key, const char *title)
{
    section_start(o, key, title);
    o->in_table = 2;
    if (o->fmt == ROUT_JSON)
        fputs("{", o->f);
}

static void kv_key(struct rout *o, const char *key)
{
    if (o->fmt == ROUT_JSON)
        fprintf(o->f, "%s\n    \"%s\": ", o->kvs ? "," : "", key);
    else if (o->fmt == ROUT_MARKDOWN)
        fprintf(o->f, "- %s: ", key);
    else
        fprintf(o->f, "  %-26s ", key);
    o->kvs++;
}

void rout_kv_num(struct rout *o, const char *key, uint64_t v)
{
    kv_key(o, key);
    fprintf(o->f, "%" PRIu64 "%s", v, o->fmt == ROUT_JSON ? "" : "\n");
}

void rout_kv_str(struct rout *o, const char *key, const char *v)
{
    kv_key(o, key);
    if (o->fmt == ROUT_JSON)
        json_str(o->f, v);
    else if (o->fmt == ROUT_MARKDOWN) {
        md_str(o->f, v);
        fputc('\n', o->f);
    } else
        fprintf(o->f, "%s\n", v);
}

void rout_table_begin(struct rout *o, const char *key, const char *title,
                      const struct rout_col *cols, int ncols)
{
    section_start(o, key, title);
    o->in_table = 1;
    o->cols = cols;
    o->ncols = ncols;
    FILE *f = o->f;
    if (o->fmt == ROUT_JSON) {
        fputs("[", f);
    } else if (o->fmt == ROUT_MARKDOWN) {
        for (int i = 0; i < ncols; i++)
            fprintf(f, "| %s ", cols[i].key);
        fputs("|\n", f);
        for (int i = 0; i < ncols; i++)
            fputs(cols[i].type == 'n' ? "| ---: " : "| :--- ", f);
        fputs("|\n", f);
    } else {
        for (int i = 0; i < ncols; i++)
            fprintf(f, cols[i].type == 'n' ? " %*s" : " %-*s", i == ncols - 1 ? 0 : cols[i].width,
                    cols[i].key);
        fputc('\n', f);
    }
}

void rout_row(struct rout *o, const char *const *cells)
{
    FILE *f = o->f;
    if (o->fmt == ROUT_JSON) {
        fprintf(f, "%s\n    {", o->rows ? "," : "");
        for (int i = 0; i < o->ncols; i++) {
            fprintf(f, "%s\"%s\": ", i ? ", " : "", o->cols[i].key);
            if (o->cols[i].type == 'n' && cells[i][0])
                fputs(cells[i], f);
            else
                json_str(f, cells[i]);
        }
        fputs("}", f);
    } else if (o->fmt == ROUT_MARKDOWN) {
        for (int i = 0; i < o->ncols; i++) {
            fputs("| ", f);
            md_str(f, cells[i]);
            fputc(' ', f);
        }
        fputs("|\n", f);
    } else {
        for (int i = 0; i < o->ncols; i++)
            fprintf(f, o->cols[i].type == 'n' ? " %*s" : " %-*s",
                    i == o->ncols - 1 ? 0 : o->cols[i].width, cells[i]);
        fputc('\n', f);
    }
    o->rows++;
}

void rout_section_end(struct rout *o)
{
    if (o->fmt == ROUT_JSON)
        fputs(o->in_table == 1 ? (o->rows ? "\n  ]" : "]") : "\n  }", o->f);
    else if (o->fmt == ROUT_TEXT && o->in_table == 1 && !o->rows)
        fputs("  (none)\n", o->f);
    o->in_table = 0;
}
