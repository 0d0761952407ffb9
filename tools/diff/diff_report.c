/*
 * diff_report.c: hprof-diff's text table, Markdown (CI job summaries, pull-request comments)
 * and JSON. Every output shows both the raw numbers and the shares, and says which of the two
 * was judged. The HTML is one differential flame graph per stack-shaped kind, drawn by
 * hprof-convert's tools/flame.
 */
#include "diff.h"
#include "diff_retained.h"
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
    case DV_UNIFORM:
        return "with run";
    case DV_GREW:
        return "grew via";
    default:
        return "not judged";
    }
}

static const char *model_text(const struct diff_table *t, unsigned m)
{
    switch (diff_measure_model(t->kind, m)) {
    case DMM_SAMPLED:
        return "CPU time (samples x interval), exact conditional binomial test of the two counts";
    case DMM_MEASURED:
        return "measured ms, binomial test of the two counts of ms";
    default:
        return "exact counts, no test";
    }
}

/* "samples as CPU time (...)" for each judged measure */
static void judged_text(FILE *o, const struct diff_table *t)
{
    bool first = true;
    for (unsigned m = 0; m < hprof_section_nmeasures(t->section); m++) {
        if (!(t->judge & (1u << m)))
            continue;
        fprintf(o, "%s%s", first ? "" : "; ", hprof_section_measure(t->section, m));
        if (t->mode == DM_COUNT)
            fprintf(o, " as %s", model_text(t, m));
        first = false;
    }
    if (t->mode == DM_SHARE)
        fprintf(o, " as %s",
                t->sampled ? "shares of the total (--mode share; sampled: two-proportion z test)"
                           : "shares of the total (--mode share)");
}

/* "+14.6 pts (+36%)", "+10000 (+25%)", "+10000 (new)" for measure m of e */
static void change_text(const struct diff_table *t, const struct diff_entry *e, unsigned m,
                        char *buf, size_t cap)
{
    double rel;
    char head[64], tail[48];
    bool tested = t->mode == DM_COUNT && diff_measure_model(t->kind, m) != DMM_EXACT;
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
    else if (tested && t->uniform[m].finding)
        snprintf(buf, cap, "%s (%s, z %.1f; x%.2f of the run's, z %.1f)", head, tail, e->z_count[m],
                 e->ratio[m] / t->uniform[m].factor, e->z_uniform[m]);
    else if (tested)
        snprintf(buf, cap, "%s (%s, z %.1f)", head, tail, e->z_count[m]);
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
    if ((e->verdict != DV_SAME && e->verdict != DV_UNIFORM && e->verdict != DV_GREW) ||
        *others >= top)
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

/* The sampling interval of each file (cpu). */
static void interval_text(FILE *o, const struct diff_table *t)
{
    fprintf(o, "base %g ms, new %g ms (%s)%s", t->base_interval, t->new_interval,
            t->interval_given ? "given with --interval"
                              : "assumed, the agent's default: the files do not record it",
            t->normalized ? "; CPU time compared as samples x interval (--normalize)" : "");
}

static const char *partition_name(const struct diff_table *t)
{
    switch (t->kind) {
    case DK_CPU:
    case DK_WALL:
    case DK_TIMES:
        return "stacks";
    case DK_METHODS:
        return "methods";
    case DK_SITES:
        return "sites";
    default:
        return "monitors";
    }
}

/* The whole run's change of measure m, and whether it was one uniform factor. */
static void uniform_text(FILE *o, const struct diff_table *t, unsigned m)
{
    const struct diff_uniform *u = &t->uniform[m];
    const char *what = hprof_section_measure(t->section, m);
    double total = t->base_total[m] ? (double)t->new_total[m] / t->base_total[m] *
                                          (t->kind == DK_CPU && t->base_interval > 0
                                               ? t->new_interval / t->base_interval
                                               : 1)
                                    : NAN;
    if (u->finding)
        fprintf(o, "UNIFORM: the whole run's %s changed by %+.0f%%, spread evenly: ", what,
                (u->factor - 1) * 100);
    else
        fprintf(o, "whole run: %s %+.1f%% in total; ", what, (total - 1) * 100);
    if (u->accepted)
        fprintf(o, "%u of %u %s share a factor of %.3f (z %.1f)", u->agreeing, u->informative,
                partition_name(t), u->factor, u->z);
    else
        fprintf(o, "no factor shared by most %s (%u of %u agree)", partition_name(t), u->agreeing,
                u->informative);
    fprintf(o, "; median ratio %.3f, each of the %s one vote", u->median, partition_name(t));
    if (u->scatter > 0)
        fprintf(o, "; the entries' changes scatter by +-%.0f beyond Poisson's (taken into z)",
                u->scatter);

    if (u->finding)
        fprintf(o, "; %s",
                u->fails                   ? "past uniform-growth: it fails the build"
                : t->th.uniform_growth < 0 ? "uniform-growth none: it does not fail the build"
                                           : "under uniform-growth: it does not fail the build");
}

/* Entries whose verdict on shares differs from the one on counts (count mode). */
static size_t share_story(FILE *o, const struct diff_table *t, bool md, size_t max)
{
    size_t n = 0;
    unsigned m = diff_first_judged(t);
    if (t->mode != DM_COUNT)
        return 0;
    for (size_t i = 0; i < t->n; i++) {
        const struct diff_entry *e = &t->e[i];
        bool count_up = e->flagged != 0, share_up = e->share_flagged != 0;
        if (count_up == share_up || e->verdict == DV_NOT_JUDGED)
            continue;
        if (n++ >= max)
            continue;
        fprintf(o,
                md ? "- shares tell another story: `%s` (%s) is %s on counts but %s on its "
                     "share (%.1f%% -> %.1f%%)\n"
                   : "  shares tell another story: %s (%s) is %s on counts but %s on its "
                     "share (%.1f%% -> %.1f%%)\n",
                e->key, diff_group_name(e->group), count_up ? "a regression" : "not one",
                share_up ? "would be one" : "would not be one", e->base_share[m] * 100,
                e->new_share[m] * 100);
    }
    if (n > max)
        fprintf(o,
                md ? "- and %zu more entries whose shares tell another story (JSON)\n"
                   : "  and %zu more entries whose shares tell another story (JSON)\n",
                n - max);
    return n;
}

static void thresholds_text(FILE *o, const struct diff_table *t)
{
    const struct diff_thresholds *th = &t->th;
    fprintf(o, "growth >= %g%%", th->growth * 100);
    if (t->mode == DM_SHARE)
        fprintf(o, " and by >= %g points of share", th->delta_share * 100);
    else
        fprintf(o, " and by >= %g", th->delta_count);
    if (t->sampled || (t->mode == DM_COUNT && th->z > 0))
        fprintf(o, " and z >= %g", th->z);
    fprintf(o, "; entries under %g%% of the total in both runs are not judged",
            th->min_share * 100);
    if (t->mode == DM_COUNT && t->kind != DK_HEAP) {
        if (th->uniform_growth >= 0)
            fprintf(o, "; a uniform growth of %g%% or more fails", th->uniform_growth * 100);
        else
            fprintf(o, "; a uniform growth never fails");
    }
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
        if (t->kind == DK_CPU) {
            fprintf(o, "\n  interval: ");
            interval_text(o, t);
        }
        fprintf(o, "\n  judged: ");
        judged_text(o, t);
        fprintf(o, "\n  thresholds: ");
        thresholds_text(o, t);
        for (unsigned m = 0; m < HPROF_MAX_MEASURES; m++)
            if (t->mode == DM_COUNT && t->kind != DK_HEAP && (t->judge & (1u << m))) {
                fprintf(o, "\n  ");
                uniform_text(o, t, m);
            }
        fprintf(o, "\n  %s: %zu regression%s, %zu improved, %zu entries%s\n",
                t->regressions || t->uniform_fails ? "REGRESSION" : "OK", t->regressions,
                t->regressions == 1 ? "" : "s", t->improvements, t->n,
                t->uniform_fails ? ", and a uniform change that fails" : "");
        share_story(o, t, false, 5);
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
        reg += tabs[k]->regressions + tabs[k]->uniform_fails;
    fprintf(o, "## hprof-diff: %s\n\n", reg ? "regression" : "no regression");
    for (size_t k = 0; k < nt; k++) {
        struct diff_table *t = tabs[k];
        diff_sort_for_report(t);
        fprintf(o, "### %s %s (`%s`): %zu regression%s, %zu improved%s\n\n",
                t->regressions || t->uniform_fails ? "🔴" : "🟢", hprof_section_name(t->section),
                diff_kind_name(t->kind), t->regressions, t->regressions == 1 ? "" : "s",
                t->improvements, t->uniform_fails ? ", a uniform change that fails" : "");
        fprintf(o, "- base ");
        header_totals(o, t, false, true);
        fprintf(o, "\n- new ");
        header_totals(o, t, true, true);
        if (t->kind == DK_CPU) {
            fprintf(o, "\n- interval: ");
            interval_text(o, t);
        }
        fprintf(o, "\n- judged: ");
        judged_text(o, t);
        fprintf(o, "\n- thresholds: ");
        thresholds_text(o, t);
        for (unsigned m = 0; m < HPROF_MAX_MEASURES; m++)
            if (t->mode == DM_COUNT && t->kind != DK_HEAP && (t->judge & (1u << m))) {
                fprintf(o, "\n- ");
                uniform_text(o, t, m);
            }
        fprintf(o, "\n");
        share_story(o, t, true, 5);
        fprintf(o, "\n");
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

void diff_write_json(FILE *o, struct diff_table *const *tabs, size_t nt,
                     const struct diff_retained *held)
{
    size_t reg = held ? diff_retained_verdicts(held) : 0, ufail = 0;
    for (size_t k = 0; k < nt; k++) {
        reg += tabs[k]->regressions;
        ufail += tabs[k]->uniform_fails;
    }
    fprintf(o, "{\"failed\":%s,\"regressions\":%zu,\"uniform_fails\":%zu,\"comparisons\":[",
            reg + ufail ? "true" : "false", reg, ufail);
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
        fprintf(o, ",\"uniform_growth\":");
        json_num(o, t->th.uniform_growth);
        fprintf(o, "}");
        if (t->kind == DK_CPU) {
            fprintf(o, ",\"interval\":{\"base\":");
            json_num(o, t->base_interval);
            fprintf(o, ",\"new\":");
            json_num(o, t->new_interval);
            fprintf(o, ",\"given\":%s,\"normalized\":%s}", t->interval_given ? "true" : "false",
                    t->normalized ? "true" : "false");
        }
        fprintf(o, ",\"uniform\":[");
        first = true;
        for (unsigned m = 0; m < nm; m++) {
            const struct diff_uniform *u = &t->uniform[m];
            if (!(t->judge & (1u << m)) || t->mode != DM_COUNT || t->kind == DK_HEAP)
                continue;
            fprintf(o,
                    "%s{\"measure\":\"%s\",\"accepted\":%s,\"finding\":%s,\"fails\":%s,"
                    "\"informative\":%u,\"agreeing\":%u,\"factor\":",
                    first ? "" : ",", hprof_section_measure(t->section, m),
                    u->accepted ? "true" : "false", u->finding ? "true" : "false",
                    u->fails ? "true" : "false", u->informative, u->agreeing);
            json_num(o, u->factor);
            fprintf(o, ",\"median\":");
            json_num(o, u->median);
            fprintf(o, ",\"z\":");
            json_num(o, u->z);
            fprintf(o, ",\"scatter\":");
            json_num(o, u->scatter);
            fputc('}', o);
            first = false;
        }
        fprintf(o, "],\"base_total\":");
        json_u64s(o, t->base_total, nm);
        fprintf(o, ",\"new_total\":");
        json_u64s(o, t->new_total, nm);
        fprintf(o,
                ",\"regressions\":%zu,\"improvements\":%zu,\"uniform_fails\":%zu,"
                "\"entries\":[",
                t->regressions, t->improvements, t->uniform_fails);
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
            if (t->sampled || t->kind == DK_CPU) {
                fprintf(o, ",\"z\":");
                json_dbls(o, e->z, nm);
            }
            if (t->mode == DM_COUNT) {
                fprintf(o, ",\"ratio\":");
                json_dbls(o, e->ratio, nm);
                fprintf(o, ",\"z_count\":");
                json_dbls(o, e->z_count, nm);
                fprintf(o, ",\"z_uniform\":");
                json_dbls(o, e->z_uniform, nm);
            }
            fprintf(o, ",\"share_flagged\":[");
            first = true;
            for (unsigned m = 0; m < nm; m++)
                if (e->share_flagged & (1u << m)) {
                    fprintf(o, "%s\"%s\"", first ? "" : ",", hprof_section_measure(t->section, m));
                    first = false;
                }
            fprintf(o, "]}");
        }
        fprintf(o, "]}");
    }
    fprintf(o, "]");
    if (held) {
        fprintf(o, ",\"retained\":");
        diff_retained_write_json(o, held);
    }
    fprintf(o, "}\n");
}

/* ---- HTML: the differential flame graphs, drawn by tools/flame -------------------------- */

static bool stack_shaped(const struct diff_table *t)
{
    return t->kind == DK_CPU || t->kind == DK_WALL || t->kind == DK_TIMES || t->kind == DK_SITES ||
           t->kind == DK_MONITOR;
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
