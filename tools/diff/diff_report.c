/*
 * diff_report.c: hprof-diff's text table, Markdown (CI job summaries, pull-request comments)
 * and JSON. Every output shows both the raw numbers and the shares, and says which of the two
 * was judged. The HTML is one differential flame graph per stack-shaped kind, drawn by
 * hprof-convert's tools/flame.
 */
#include "diff.h"
#include "flame.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *verdict_word(enum diff_verdict v)
{
    switch (v) {
    case DV_REGRESSION:
        return "regression";
    case DV_SHRANK:
        return "improved";
    case DV_SAME:
        return "same";
    default:
        return "not judged";
    }
}

static const char *mode_text(const struct diff_table *t)
{
    if (t->mode == DM_COUNT)
        return "raw counts (the profile is exact for the same workload)";
    return t->sampled
               ? "shares of the total (runs differ in length; sampled: two-proportion z test)"
               : "shares of the total (runs differ in length)";
}

/* "+14.6 pts (+36%)", "+10000 (+25%)", "+10000 (new)" for measure m of e */
static void change_text(const struct diff_table *t, const struct diff_entry *e, unsigned m,
                        char *buf, size_t cap)
{
    double rel;
    char head[64], tail[48];
    if (t->mode == DM_SHARE) {
        double d = (e->new_share[m] - e->base_share[m]) * 100;
        snprintf(head, sizeof head, "%+.1f pts", d);
        rel = e->base_share[m] > 0 ? (e->new_share[m] / e->base_share[m] - 1) * 100 : NAN;
    } else {
        int64_t d = (int64_t)e->new_[m] - (int64_t)e->base[m];
        snprintf(head, sizeof head, "%+" PRId64, d);
        rel = e->base[m] > 0 ? ((double)e->new_[m] / e->base[m] - 1) * 100 : NAN;
    }
    if (!isnan(rel))
        snprintf(tail, sizeof tail, "%+.0f%%", rel);
    else
        snprintf(tail, sizeof tail, "%s", e->new_[m] ? "new" : "0");
    if (t->sampled && isfinite(e->z[m]))
        snprintf(buf, cap, "%s (%s, z %.1f)", head, tail, e->z[m]);
    else
        snprintf(buf, cap, "%s (%s)", head, tail);
}

static void value_text(uint64_t v, double share, char *buf, size_t cap)
{
    snprintf(buf, cap, "%" PRIu64 " (%.1f%%)", v, share * 100);
}

/* The cells of measure m of an entry: base and new as "count (share)", the change. */
struct cells {
    char base[48], new_[48], change[512];
};

static void cells_of(const struct diff_table *t, const struct diff_entry *e, unsigned m,
                     struct cells *c)
{
    value_text(e->base[m], e->base_share[m], c->base, sizeof c->base);
    value_text(e->new_[m], e->new_share[m], c->new_, sizeof c->new_);
    change_text(t, e, m, c->change, sizeof c->change);
}

/* "live_bytes 120 -> 130, live_objects 3 -> 3": the measures not judged */
static void others_text(const struct diff_table *t, const struct diff_entry *e, char *buf,
                        size_t cap)
{
    size_t len = 0;
    buf[0] = 0;
    for (unsigned m = 0; m < hprof_section_nmeasures(t->section); m++) {
        if (t->judge & (1u << m))
            continue;
        int n = snprintf(buf + len, cap - len, "%s%s %" PRIu64 " -> %" PRIu64, len ? ", " : "",
                         hprof_section_measure(t->section, m), e->base[m], e->new_[m]);
        if (n < 0 || (size_t)n >= cap - len)
            break;
        len += (size_t)n;
    }
}

/* Entries listed: every regression and improvement, and the top largest other changes. */
static bool listed(const struct diff_entry *e, unsigned top, size_t *others)
{
    if (e->verdict == DV_REGRESSION || e->verdict == DV_SHRANK)
        return true;
    if (e->verdict != DV_SAME || *others >= top)
        return false;
    ++*others;
    return true;
}

static void header_totals(FILE *o, const struct diff_table *t, bool is_new, bool md)
{
    const uint64_t *tot = is_new ? t->new_total : t->base_total;
    unsigned idx = is_new ? t->new_index : t->base_index,
             cnt = is_new ? t->new_count : t->base_count;
    const char *path = is_new ? t->new_path : t->base_path;
    fprintf(o, md ? "`%s`" : "%s", path);
    if (cnt > 1)
        fprintf(o, " (section %u of %u)", idx + 1, cnt);
    for (unsigned m = 0; m < hprof_section_nmeasures(t->section); m++)
        fprintf(o, "%s%" PRIu64 " %s", m ? ", " : ": ", tot[m],
                hprof_section_measure(t->section, m));
}

static void judged_list(FILE *o, const struct diff_table *t)
{
    bool first = true;
    for (unsigned m = 0; m < hprof_section_nmeasures(t->section); m++)
        if (t->judge & (1u << m)) {
            fprintf(o, "%s%s", first ? "" : ", ", hprof_section_measure(t->section, m));
            first = false;
        }
}

static void thresholds_text(FILE *o, const struct diff_table *t)
{
    const struct diff_thresholds *th = &t->th;
    fprintf(o, "growth >= %g%%", th->growth * 100);
    if (t->mode == DM_SHARE)
        fprintf(o, " and by >= %g points of share", th->delta_share * 100);
    else
        fprintf(o, " and by >= %g", th->delta_count);
    if (t->sampled)
        fprintf(o, " and z >= %g", th->z);
    fprintf(o, "; entries under %g%% of the total in both runs are not judged",
            th->min_share * 100);
}

void diff_write_text(FILE *o, struct diff_table *const *tabs, size_t nt, unsigned top)
{
    for (size_t k = 0; k < nt; k++) {
        struct diff_table *t = tabs[k];
        diff_sort_for_report(t);
        fprintf(o, "%s%s (%s)\n", k ? "\n" : "", hprof_section_name(t->section),
                diff_kind_name(t->kind));
        fprintf(o, "  base ");
        header_totals(o, t, false, false);
        fprintf(o, "\n  new  ");
        header_totals(o, t, true, false);
        fprintf(o, "\n  judged: ");
        judged_list(o, t);
        fprintf(o, " as %s\n  thresholds: ", mode_text(t));
        thresholds_text(o, t);
        fprintf(o, "\n  %s: %zu regression%s, %zu improved, %zu entries\n",
                t->regressions ? "REGRESSION" : "OK", t->regressions,
                t->regressions == 1 ? "" : "s", t->improvements, t->n);
        size_t others = 0, nlisted = 0;
        fprintf(o, "\n  %-10s %-7s %-13s %-20s %-20s %-26s %s\n", "verdict", "what", "measure",
                "base", "new", "change", "key");
        for (size_t i = 0; i < t->n; i++) {
            const struct diff_entry *e = &t->e[i];
            if (!listed(e, top, &others))
                continue;
            nlisted++;
            bool firstline = true;
            for (unsigned m = 0; m < hprof_section_nmeasures(t->section); m++) {
                if (!(t->judge & (1u << m)))
                    continue;
                struct cells c;
                cells_of(t, e, m, &c);
                fprintf(o, "  %-10s %-7s %-13s %-20s %-20s %-26s %s%s\n",
                        firstline ? verdict_word(e->verdict) : "",
                        firstline ? diff_group_name(e->group) : "",
                        hprof_section_measure(t->section, m), c.base, c.new_, c.change,
                        e->flagged & (1u << m) ? "* " : "", firstline ? e->key : "");
                firstline = false;
            }
            char rest[256];
            others_text(t, e, rest, sizeof rest);
            if (rest[0])
                fprintf(o, "  %-10s %-7s %s\n", "", "", rest);
        }
        if (t->n > nlisted)
            fprintf(o, "  (%zu more entries not listed: --top, --json)\n", t->n - nlisted);
    }
}

/* Markdown: a key in a table cell, with '|' escaped and long stacks shortened to their last
 * frames (the JSON has them whole) */
static void md_key(FILE *o, const char *key)
{
    size_t len = strlen(key);
    const char *s = key;
    if (len > 160) {
        s = key + len - 150;
        const char *semi = strchr(s, ';');
        if (semi)
            s = semi + 1;
        fputs("…;", o);
    }
    fputc('`', o);
    for (; *s; s++) {
        if (*s == '|')
            fputs("\\|", o);
        else if (*s == '`')
            fputc('\'', o);
        else
            fputc(*s, o);
    }
    fputc('`', o);
}

void diff_write_markdown(FILE *o, struct diff_table *const *tabs, size_t nt, unsigned top)
{
    size_t reg = 0;
    for (size_t k = 0; k < nt; k++)
        reg += tabs[k]->regressions;
    fprintf(o, "## hprof-diff: %s\n\n", reg ? "regression" : "no regression");
    for (size_t k = 0; k < nt; k++) {
        struct diff_table *t = tabs[k];
        diff_sort_for_report(t);
        fprintf(o, "### %s %s (`%s`): %zu regression%s, %zu improved\n\n",
                t->regressions ? "🔴" : "🟢", hprof_section_name(t->section),
                diff_kind_name(t->kind), t->regressions, t->regressions == 1 ? "" : "s",
                t->improvements);
        fprintf(o, "- base ");
        header_totals(o, t, false, true);
        fprintf(o, "\n- new ");
        header_totals(o, t, true, true);
        fprintf(o, "\n- judged: **");
        judged_list(o, t);
        fprintf(o, "** as %s\n- thresholds: ", mode_text(t));
        thresholds_text(o, t);
        fprintf(o, "\n\n");
        size_t others = 0, nlisted = 0;
        fprintf(o, "| | what | key | measure | base | new | change |\n"
                   "|---|---|---|---|--:|--:|--:|\n");
        for (size_t i = 0; i < t->n; i++) {
            const struct diff_entry *e = &t->e[i];
            if (!listed(e, top, &others))
                continue;
            nlisted++;
            for (unsigned m = 0; m < hprof_section_nmeasures(t->section); m++) {
                if (!(t->judge & (1u << m)))
                    continue;
                struct cells c;
                cells_of(t, e, m, &c);
                const char *mark = e->flagged & (1u << m)    ? "🔴"
                                   : e->verdict == DV_SHRANK ? "🟢"
                                                             : "";
                fprintf(o, "| %s | %s | ", mark, diff_group_name(e->group));
                md_key(o, e->key);
                fprintf(o, " | %s | %s | %s | %s%s%s |\n", hprof_section_measure(t->section, m),
                        c.base, c.new_, e->flagged & (1u << m) ? "**" : "", c.change,
                        e->flagged & (1u << m) ? "**" : "");
            }
        }
        fprintf(o, "\n");
        if (t->n > nlisted)
            fprintf(o, "%zu more entries not listed (`--top N`, or `--json` for all).\n\n",
                    t->n - nlisted);
    }
}

static void json_str(FILE *o, const char *s)
{
    fputc('"', o);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(o, "\\%c", c);
        else if (c < 0x20)
            fprintf(o, "\\u%04x", c);
        else
            fputc(c, o);
    }
    fputc('"', o);
}

static void json_num(FILE *o, double v)
{
    if (isfinite(v))
        fprintf(o, "%.6g", v);
    else
        fputs("null", o);
}

static void json_u64s(FILE *o, const uint64_t *v, unsigned n)
{
    fputc('[', o);
    for (unsigned i = 0; i < n; i++)
        fprintf(o, "%s%" PRIu64, i ? "," : "", v[i]);
    fputc(']', o);
}

static void json_dbls(FILE *o, const double *v, unsigned n)
{
    fputc('[', o);
    for (unsigned i = 0; i < n; i++) {
        if (i)
            fputc(',', o);
        json_num(o, v[i]);
    }
    fputc(']', o);
}

void diff_write_json(FILE *o, struct diff_table *const *tabs, size_t nt)
{
    size_t reg = 0;
    for (size_t k = 0; k < nt; k++)
        reg += tabs[k]->regressions;
    fprintf(o, "{\"regressions\":%zu,\"comparisons\":[", reg);
    for (size_t k = 0; k < nt; k++) {
        struct diff_table *t = tabs[k];
        unsigned nm = hprof_section_nmeasures(t->section);
        diff_sort_for_report(t);
        fprintf(o, "%s{\"kind\":\"%s\",\"section\":\"%s\",\"base\":", k ? "," : "",
                diff_kind_name(t->kind), hprof_section_name(t->section));
        json_str(o, t->base_path);
        fprintf(o, ",\"new\":");
        json_str(o, t->new_path);
        fprintf(o, ",\"base_section\":%u,\"new_section\":%u,\"measures\":[", t->base_index + 1,
                t->new_index + 1);
        for (unsigned m = 0; m < nm; m++)
            fprintf(o, "%s\"%s\"", m ? "," : "", hprof_section_measure(t->section, m));
        fprintf(o, "],\"judged\":[");
        bool first = true;
        for (unsigned m = 0; m < nm; m++)
            if (t->judge & (1u << m)) {
                fprintf(o, "%s\"%s\"", first ? "" : ",", hprof_section_measure(t->section, m));
                first = false;
            }
        fprintf(o, "],\"mode\":\"%s\",\"sampled\":%s,\"thresholds\":{\"growth\":",
                t->mode == DM_SHARE ? "share" : "count", t->sampled ? "true" : "false");
        json_num(o, t->th.growth);
        fprintf(o, ",\"delta_share\":");
        json_num(o, t->th.delta_share);
        fprintf(o, ",\"delta_count\":");
        json_num(o, t->th.delta_count);
        fprintf(o, ",\"min_share\":");
        json_num(o, t->th.min_share);
        fprintf(o, ",\"z\":");
        json_num(o, t->th.z);
        fprintf(o, "},\"base_total\":");
        json_u64s(o, t->base_total, nm);
        fprintf(o, ",\"new_total\":");
        json_u64s(o, t->new_total, nm);
        fprintf(o, ",\"regressions\":%zu,\"improvements\":%zu,\"entries\":[", t->regressions,
                t->improvements);
        for (size_t i = 0; i < t->n; i++) {
            const struct diff_entry *e = &t->e[i];
            fprintf(o, "%s{\"group\":\"%s\",\"key\":", i ? "," : "", diff_group_name(e->group));
            json_str(o, e->key);
            fprintf(o, ",\"verdict\":\"%s\",\"flagged\":[", verdict_word(e->verdict));
            first = true;
            for (unsigned m = 0; m < nm; m++)
                if (e->flagged & (1u << m)) {
                    fprintf(o, "%s\"%s\"", first ? "" : ",", hprof_section_measure(t->section, m));
                    first = false;
                }
            fprintf(o, "],\"base\":");
            json_u64s(o, e->base, nm);
            fprintf(o, ",\"new\":");
            json_u64s(o, e->new_, nm);
            fprintf(o, ",\"base_share\":");
            json_dbls(o, e->base_share, nm);
            fprintf(o, ",\"new_share\":");
            json_dbls(o, e->new_share, nm);
            if (t->sampled) {
                fprintf(o, ",\"z\":");
                json_dbls(o, e->z, nm);
            }
            fputc('}', o);
        }
        fprintf(o, "]}");
    }
    fprintf(o, "]}\n");
}

/* ---- HTML: the differential flame graphs, drawn by tools/flame -------------------------- */

static bool stack_shaped(const struct diff_table *t)
{
    return t->kind == DK_CPU || t->kind == DK_TIMES || t->kind == DK_SITES || t->kind == DK_MONITOR;
}

/* t's stacks merged into one tree with (base, new) of the first judged measure per node, drawn
 * as one flame page into a memory buffer; NULL on out of memory. */
static char *flame_page(const struct diff_table *t)
{
    unsigned m = diff_first_judged(t);
    struct flame_tree *tree = flame_tree_new(2);
    if (!tree)
        return NULL;
    bool leaf_is_class = t->kind == DK_SITES || t->kind == DK_MONITOR;
    for (size_t i = 0; i < t->n; i++) {
        const struct diff_entry *e = &t->e[i];
        uint32_t node = FLAME_ROOT;
        for (unsigned f = 0; e->frames && f < e->nframes && node != FLAME_NONE; f++) {
            bool leaf = leaf_is_class && f + 1 == e->nframes;
            node = flame_child(tree, node, e->frames[f],
                               leaf ? FLAME_LEAF : flame_kind_of_class(e->frames[f]));
        }
        if (e->frames && node != FLAME_NONE)
            flame_add(tree, node, (const uint64_t[2]){e->base[m], e->new_[m]});
    }
    char title[256], sub[1024];
    const char *measure = hprof_section_measure(t->section, m);
    snprintf(title, sizeof title, "%s: %s", hprof_section_name(t->section), measure);
    snprintf(sub, sizeof sub,
             "hprof-diff: base %s: %" PRIu64 ", new %s: %" PRIu64 " %s; %zu regression%s",
             t->base_path, t->base_total[m], t->new_path, t->new_total[m], measure, t->regressions,
             t->regressions == 1 ? "" : "s");
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    struct flame_html_info info = {title, sub, measure, {"base", "new"}};
    int rc = mem ? flame_write_html(tree, &info, mem) : -1;
    if (mem && fclose(mem))
        rc = -1;
    flame_tree_free(tree);
    if (rc) {
        free(buf);
        return NULL;
    }
    return buf;
}

static void html_attr(FILE *o, const char *s)
{
    for (; *s; s++) {
        if (*s == '&')
            fputs("&amp;", o);
        else if (*s == '"')
            fputs("&quot;", o);
        else
            fputc(*s, o);
    }
}

int diff_write_flame(FILE *o, struct diff_table *const *tabs, size_t nt)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>hprof-diff"
          "</title>\n<style>body{margin:0;font:13px system-ui,sans-serif}iframe{display:block;"
          "width:100%;border:0;border-bottom:2px solid #ccc}</style></head><body>\n",
          o);
    size_t drawn = 0;
    for (size_t k = 0; k < nt; k++) {
        if (!stack_shaped(tabs[k]))
            continue;
        char *page = flame_page(tabs[k]);
        if (!page) {
            fprintf(stderr, "hprof-diff: out of memory\n");
            exit(2);
        }
        /* each kind is one flame page of its own, kept whole in an iframe's srcdoc */
        fputs("<iframe class=\"flame\" height=\"400\" srcdoc=\"", o);
        html_attr(o, page);
        fputs("\"></iframe>\n", o);
        free(page);
        drawn++;
    }
    if (!drawn) {
        fputs("<p>No stacks to draw: heap dumps and cpu=old have none.</p>\n</body></html>\n", o);
        return -1;
    }
    /* fit each frame to its page once drawn; data-state tells a headless browser it was */
    fputs("<script>\ndocument.querySelectorAll('iframe.flame').forEach(function (f) {\n"
          "  function fit() {\n"
          "    var d = f.contentDocument, st = d && d.getElementById('status');\n"
          "    if (!st || st.dataset.state !== 'rendered') return false;\n"
          "    f.style.height = d.body.scrollHeight + 'px';\n"
          "    f.dataset.state = 'rendered';\n"
          "    f.dataset.title = d.getElementById('title').textContent;\n"
          "    return true;\n"
          "  }\n"
          "  if (!fit()) f.addEventListener('load', fit);\n"
          "});\n</script>\n</body></html>\n",
          o);
    return 0;
}
