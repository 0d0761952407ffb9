/*
 * diff_flame.c: the differential flame graph of hprof-diff, one self-contained HTML page
 * (inline style and script, no network). The stacks of both runs are merged into one tree in
 * C; a frame's width is its share in the new run, its colour the change of its share (or
 * count) against the base: red grew, blue shrank, grey unchanged. Click zooms, the tooltip
 * gives both values. Kept apart from the converter's flame graph (issue 17) on purpose: the two
 * may later share one page.
 */
#include "diff.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

struct node {
    const char *name;
    double base, new_;
    struct node *child, *next;
};

static struct node *child_of(struct node *n, const char *name)
{
    for (struct node *c = n->child; c; c = c->next)
        if (strcmp(c->name, name) == 0)
            return c;
    struct node *c = diff_xmalloc(sizeof *c);
    memset(c, 0, sizeof *c);
    c->name = name;
    c->next = n->child;
    n->child = c;
    return c;
}

static void free_tree(struct node *n)
{
    while (n) {
        struct node *next = n->next;
        free_tree(n->child);
        free(n);
        n = next;
    }
}

/* JSON string safe inside <script>: '<' escaped so that no "</script>" can end it */
static void js_str(FILE *o, const char *s)
{
    fputc('"', o);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(o, "\\%c", c);
        else if (c < 0x20 || c == '<' || c == '>' || c == '&')
            fprintf(o, "\\u%04x", c);
        else
            fputc(c, o);
    }
    fputc('"', o);
}

static void emit(FILE *o, const struct node *n)
{
    fputs("{\"n\":", o);
    js_str(o, n->name);
    fprintf(o, ",\"b\":%.9g,\"v\":%.9g", n->base, n->new_);
    if (n->child) {
        fputs(",\"c\":[", o);
        for (const struct node *c = n->child; c; c = c->next) {
            emit(o, c);
            if (c->next)
                fputc(',', o);
        }
        fputc(']', o);
    }
    fputc('}', o);
}

static bool stack_shaped(const struct diff_table *t)
{
    return t->kind == DK_CPU || t->kind == DK_TIMES || t->kind == DK_SITES || t->kind == DK_MONITOR;
}

static const char page_head[] =
    "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>hprof-diff</title>\n<style>\n"
    "body{font:13px sans-serif;margin:12px}h2{font-size:16px;margin:18px 0 4px}\n"
    ".fg{position:relative;width:100%;overflow:hidden;border:1px solid #ccc}\n"
    ".fg div{position:absolute;height:17px;line-height:17px;font:11px monospace;overflow:hidden;"
    "white-space:nowrap;box-sizing:border-box;border:1px solid #fff;padding-left:2px;"
    "cursor:pointer}\n.key span{display:inline-block;width:14px;height:10px;margin:0 4px 0 12px}\n"
    "</style></head><body>\n<h1 style=\"font-size:18px\">hprof-diff: differential flame "
    "graph</h1>\n<p class=\"key\">width: share in the new run; colour: change against the base"
    "<span style=\"background:#e03030\"></span>grew<span style=\"background:#3060e0\"></span>"
    "shrank<span style=\"background:#ccc\"></span>same. Click a frame to zoom, the top bar to "
    "zoom out.</p>\n";

static const char page_script[] =
    "<script>\n"
    "function pct(x){return (100*x).toFixed(2)+'%';}\n"
    "function colour(n,scale){var d=n.v-n.b;if(scale<=0||Math.abs(d)<1e-12)return '#ccc';\n"
    " var k=Math.min(1,Math.abs(d)/scale),g=Math.round(205-150*k);\n"
    " return d>0?'rgb(235,'+g+','+g+')':'rgb('+g+','+g+',235)';}\n"
    "function maxdelta(n){var m=Math.abs(n.v-n.b);(n.c||[]).forEach(function(c){"
    "m=Math.max(m,maxdelta(c));});return m;}\n"
    "function depth(n){var d=0;(n.c||[]).forEach(function(c){d=Math.max(d,depth(c));});"
    "return d+1;}\n"
    "function draw(el,g,root,path){el.innerHTML='';var scale=maxdelta(g.tree);\n"
    " var rows=path.length+depth(root);el.style.height=(rows*17+2)+'px';\n"
    " function box(n,x,w,y,onclick){var d=document.createElement('div');\n"
    "  d.style.left=(100*x)+'%';d.style.width=(100*w)+'%';d.style.top=(y*17)+'px';\n"
    "  d.style.background=colour(n,scale);d.textContent=n.n;\n"
    "  d.title=n.n+'\\nbase '+(g.count?n.b:pct(n.b))+'  new '+(g.count?n.v:pct(n.v))+"
    "'  change '+(g.count?(n.v-n.b>0?'+':'')+(n.v-n.b):((n.v-n.b>=0?'+':'')+(100*(n.v-n.b))"
    ".toFixed(2)+' pts'));\n"
    "  d.onclick=onclick;el.appendChild(d);}\n"
    " path.forEach(function(p,i){box(p,0,1,i,function(){draw(el,g,p,path.slice(0,i));});});\n"
    " (function lay(n,x,w,y,anc){if(w<0.0005)return;box(n,x,w,y,function(){"
    "if(n!==root)draw(el,g,n,anc);});var cx=x;(n.c||[]).slice().sort(function(a,b){"
    "return a.n<b.n?-1:1;}).forEach(function(c){var cw=w*(n.v>0?c.v/n.v:0);"
    "lay(c,cx,cw,y+1,anc.concat([n]));cx+=cw;});})(root,0,1,path.length,path.slice());\n"
    "}\n"
    "GRAPHS.forEach(function(g,i){var h=document.createElement('h2');h.textContent=g.title;"
    "document.body.appendChild(h);var p=document.createElement('p');p.textContent=g.note;"
    "document.body.appendChild(p);var el=document.createElement('div');el.className='fg';"
    "document.body.appendChild(el);draw(el,g,g.tree,[]);});\n"
    "</script>\n</body></html>\n";

int diff_write_flame(FILE *o, struct diff_table *const *tabs, size_t nt)
{
    size_t drawn = 0;
    for (size_t k = 0; k < nt; k++)
        drawn += stack_shaped(tabs[k]);
    fputs(page_head, o);
    if (!drawn) {
        fputs("<p>No stacks to draw: heap dumps and cpu=old have none.</p>\n</body></html>\n", o);
        return -1;
    }
    fputs("<script>\nvar GRAPHS=[", o);
    bool first = true;
    for (size_t k = 0; k < nt; k++) {
        const struct diff_table *t = tabs[k];
        if (!stack_shaped(t))
            continue;
        unsigned m = diff_first_judged(t);
        bool count = t->mode == DM_COUNT;
        double bt = t->base_total[m] ? (double)t->base_total[m] : 1,
               nt_ = t->new_total[m] ? (double)t->new_total[m] : 1;
        struct node root = {"all", 0, 0, NULL, NULL};
        for (size_t i = 0; i < t->n; i++) {
            const struct diff_entry *e = &t->e[i];
            if (!e->frames)
                continue;
            double b = count ? (double)e->base[m] : e->base[m] / bt,
                   v = count ? (double)e->new_[m] : e->new_[m] / nt_;
            root.base += b;
            root.new_ += v;
            struct node *n = &root;
            for (unsigned f = 0; f < e->nframes; f++) {
                n = child_of(n, e->frames[f]);
                n->base += b;
                n->new_ += v;
            }
        }
        char title[256], note[512];
        snprintf(title, sizeof title, "%s: %s, %s", hprof_section_name(t->section),
                 hprof_section_measure(t->section, m), count ? "counts" : "shares");
        snprintf(
            note, sizeof note, "base %s: %" PRIu64 ", new %s: %" PRIu64 " %s; %zu regression%s",
            t->base_path, t->base_total[m], t->new_path, t->new_total[m],
            hprof_section_measure(t->section, m), t->regressions, t->regressions == 1 ? "" : "s");
        fprintf(o, "%s{\"title\":", first ? "" : ",");
        js_str(o, title);
        fputs(",\"note\":", o);
        js_str(o, note);
        fprintf(o, ",\"count\":%s,\"tree\":", count ? "true" : "false");
        emit(o, &root);
        fputc('}', o);
        free_tree(root.child);
        first = false;
    }
    fputs("];\n</script>\n", o);
    fputs(page_script, o);
    return 0;
}
