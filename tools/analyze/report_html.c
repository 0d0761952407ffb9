/*
 * report_html.c: hprof-analyze --format=html: one self-contained page (no external file, no
 * network) with the summary, the classes by retained size and the dominator tree, which opens
 * level by level: the tree is embedded as a JSON array of nodes (name, shallow, retained,
 * children) down to --depth levels and --fanout children per node, and a small script builds
 * each level's rows when its parent is opened. See doc/heap-analysis.md.
 */
#include "report_html.h"

#include "domtree.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* A string for a JSON literal inside <script>: escapes quotes, backslashes, '<' (no "</script>") */
static void js_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p < 0x20 || *p == '<' || *p == '>' || *p == '&')
            fprintf(f, "\\u%04x", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}

static void html_str(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '<')
            fputs("&lt;", f);
        else if (*s == '>')
            fputs("&gt;", f);
        else if (*s == '&')
            fputs("&amp;", f);
        else
            fputc(*s, f);
    }
}

static const char page_head[] =
    "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Heap dump: ";
static const char page_style[] =
    "</title>\n<style>body{font:14px sans-serif;margin:1em}table{border-collapse:collapse}"
    "td,th{padding:2px 8px;text-align:right}td.l,th.l{text-align:left}"
    "details{margin-left:1.2em}summary{cursor:pointer;font-family:monospace}"
    ".n{display:inline-block;min-width:9em;text-align:right;color:#555}</style></head><body>\n";
/* Rows are made when their parent opens (fill); "#open=N" in the address opens N levels */
static const char page_script[] =
    "<script>\n"
    "function fmt(b){return b.toLocaleString('en-US')}\n"
    "function fill(d){if(d.filled)return;d.filled=1;"
    "T[d.dataset.node][3].forEach(function(c){d.appendChild(row(c,+d.dataset.depth+1))})}\n"
    "function row(i,depth){var "
    "n=T[i],kids=n[3].length,d=document.createElement(kids?'details':'div');"
    "var s=document.createElement(kids?'summary':'div');"
    "s.innerHTML='<span class=n>'+fmt(n[2])+'</span> <span class=n>'+(100*n[2]/TOTAL).toFixed(2)"
    "+'%</span> ';s.appendChild(document.createTextNode(n[0]+'  (shallow '+fmt(n[1])+')'));"
    "d.appendChild(s);d.className='node';d.dataset.node=i;d.dataset.depth=depth;"
    "if(kids)d.addEventListener('toggle',function(){if(d.open)fill(d)});return d}\n"
    "function openTo(d,k){if(k<=0||d.tagName!='DETAILS')return;d.open=true;fill(d);"
    "Array.prototype.forEach.call(d.children,function(c){if(c.className=='node')openTo(c,k-1)})}\n"
    "var box=document.getElementById('tree'),m=/open=(\\d+)/.exec(location.hash);"
    "T[0][3].forEach(function(c){var r=row(c,1);box.appendChild(r);if(m)openTo(r,+m[1]-1)});\n"
    "</script>\n</body></html>\n";

/* The tree nodes, depth-first, as [name, shallow, retained, [child indexes]]: children are
 * numbered as they are written, so a node's list is known only after its subtree; it is
 * written with a second array of child lists. */
static int tree_json(const struct heap_analysis *a, const struct report_opts *o, FILE *f)
{
    const struct heap_graph *g = a->g;
    unsigned maxd = o->depth ? o->depth : 1;
    size_t cap = 1024, n = 0;
    uint32_t *node = malloc(cap * sizeof *node), *parent = malloc(cap * sizeof *parent);
    if (!node || !parent) {
        free(node);
        free(parent);
        return -1;
    }
    /* breadth-first numbering: the children of entry i are contiguous */
    node[n] = 0;
    parent[n++] = UINT32_MAX;
    uint8_t *depth = calloc(cap, 1);
    for (size_t i = 0; i < n && depth; i++) {
        if (depth[i] >= maxd)
            continue;
        const uint32_t *kids;
        uint32_t nk = domtree_children(&a->tree, node[i], &kids);
        for (uint32_t k = 0; k < nk && k < o->fanout; k++) {
            if (n == cap) {
                cap *= 2;
                uint32_t *n2 = realloc(node, cap * sizeof *n2);
                if (n2)
                    node = n2;
                uint32_t *p2 = n2 ? realloc(parent, cap * sizeof *p2) : NULL;
                if (p2)
                    parent = p2;
                uint8_t *d2 = p2 ? realloc(depth, cap) : NULL;
                if (!d2) {
                    free(depth);
                    depth = NULL;
                    break;
                }
                depth = d2;
            }
            node[n] = kids[k];
            parent[n] = (uint32_t)i;
            depth[n++] = (uint8_t)(depth[i] + 1);
        }
    }
    int rc = depth ? 0 : -1;
    if (!rc) {
        fputs("<script>\nvar T=[", f);
        size_t next_child = 1;
        for (size_t i = 0; i < n; i++) {
            char name[512];
            fputs(i ? ",\n[" : "[", f);
            js_str(f, i ? report_node_name(g, node[i], name, sizeof name) : "<GC roots>");
            fprintf(f, ",%" PRIu64 ",%" PRIu64 ",[", i ? heap_analysis_shallow(a, node[i]) : 0,
                    heap_analysis_retained(a, node[i]));
            bool first = true;
            while (next_child < n && parent[next_child] == i) {
                fprintf(f, first ? "%zu" : ",%zu", next_child++);
                first = false;
            }
            fputs("]]", f);
        }
        fprintf(f, "];\nvar TOTAL=%" PRIu64 "||1;\n</script>\n", a->reachable_bytes);
    }
    free(node);
    free(parent);
    free(depth);
    return rc;
}

int report_html(const struct heap_analysis *a, const struct report_opts *o, FILE *f)
{
    const struct heap_graph *g = a->g;
    fputs(page_head, f);
    html_str(f, o->file);
    fputs(page_style, f);
    fputs("<h1>Heap dump ", f);
    html_str(f, o->file);
    fprintf(f,
            "</h1>\n<p>%" PRIu64 " objects, %" PRIu64 " references; reachable: %" PRIu64
            " objects, %" PRIu64 " bytes; unreachable: %" PRIu64 " objects, %" PRIu64
            " bytes.</p>\n",
            g->nobjects, g->object_refs, a->reachable_objects, a->reachable_bytes,
            a->unreachable_objects, a->unreachable_bytes);
    fputs("<h2>Classes by retained size</h2>\n<table><tr><th>instances</th><th>shallow "
          "bytes</th><th>retained bytes</th><th class=l>class</th></tr>\n",
          f);
    uint32_t *ci = malloc(((size_t)g->nclasses + 1) * sizeof *ci);
    if (!ci)
        return -1;
    uint32_t nci = report_classes_by_retained(a, ci);
    for (uint32_t i = 0; i < nci && i < o->top; i++) {
        const struct class_total *t = &a->classes[ci[i]];
        fprintf(f, "<tr><td>%" PRIu64 "</td><td>%" PRIu64 "</td><td>%" PRIu64 "</td><td class=l>",
                t->count, t->shallow, t->retained);
        html_str(f, g->classes[ci[i]].name);
        fputs("</td></tr>\n", f);
    }
    free(ci);
    fputs("</table>\n<h2>Dominator tree</h2>\n<p>Retained bytes, share of the reachable heap, "
          "object; open a node to see what it keeps alive.</p>\n<div id=\"tree\"></div>\n",
          f);
    if (tree_json(a, o, f) < 0)
        return -1;
    fputs(page_script, f);
    return 0;
}
