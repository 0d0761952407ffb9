/* Dominator tree of an object graph (Semi-NCA, iterative) and retained sizes.
 *
 * The graph is a CSR of successors; node 0 is the virtual root above every GC root. The
 * computation runs in DFS preorder numbers and needs, beyond the input and the two output arrays,
 * 16 bytes per reached node that is not a leaf (a leaf: no successor, one incoming edge; its
 * referrer is its immediate dominator) plus 4 bytes per "up" edge (an edge whose target was
 * numbered before its source: back and cross edges, never tree or forward edges), plus 4 bytes per
 * node when order_out is NULL. Nothing recurses: the DFS walks its path through the parent array
 * and path compression halves paths in one pass. See doc/heap-analysis.md, "Algorithms". */
#ifndef HPROF_DOMINATORS_H
#define HPROF_DOMINATORS_H

#include <stddef.h>
#include <stdint.h>

/* node i's successors: adj[off[i]..off[i+1]); node 0 is the virtual root; fewer than 2^32
 * edges */
struct csr_graph {
    uint32_t n;
    const uint32_t *off;
    const uint32_t *adj;
};

/* idom[i] = immediate dominator of i (idom[0] = 0); UINT32_MAX for nodes unreachable from 0.
 * order_out (may be NULL, else n entries) gets the DFS preorder of reachable nodes
 * (order_out[0] = 0; the leaves come after the others, each still after its immediate
 * dominator), their count in *reached (may be NULL). Self-loops and duplicate edges are
 * allowed; n must be below UINT32_MAX - 2 and every successor below n. Returns 0, or -1 on out
 * of memory (or more than 2^32 - 1 up edges, which would need 16 GiB of predecessors). */
int dominators_compute(const struct csr_graph *g, uint32_t *idom, uint32_t *order_out,
                       uint32_t *reached);

/* retained[i] = shallow[i] + sum of retained of the nodes it immediately dominates (0 for
 * unreachable); needs the preorder from dominators_compute (order, reached). */
void dominators_retained(uint32_t n, const uint32_t *idom, const uint32_t *order, uint32_t reached,
                         const uint64_t *shallow, uint64_t *retained);

/* Asks for transparent huge pages (2 MiB) over [p, p + bytes) when it spans at least 4 MiB: the
 * algorithms here are bound by random accesses, which then miss the TLB far less (on the 2-core
 * machine: 325 -> 180 ns per dependent access in a 120 MB array). Best called before the memory is
 * first touched; dominators_compute does it for its own arrays and for idom and order_out, the
 * caller may do it for the graph. No effect where the kernel does not support it. */
void dominators_advise_huge(void *p, size_t bytes);

#endif
