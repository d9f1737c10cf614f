/* paths.h - DuckTracks paths and path counters (paper §2.1, §2.2).
 *
 * Graph.  The method's blocks plus one virtual node X standing for "outside
 * the method": X -> entry block, X -> every exception handler, and every
 * exit block (return, athrow) -> X.  Exception edges are not followed:
 * a handler starts its own path (counts are exact on runs where no
 * exception unwinds an instrumented method, see agent/README.md).
 *
 * Paths (§2.1).  The hot path starts at X -> entry and appends the most
 * likely successor until it leaves the method or reaches a block of
 * another path (a join).  Most likely: the highest edge frequency when
 * frequencies are given; otherwise these static heuristics, in order:
 *   1. a successor ending in athrow is least likely (error paths are cold);
 *   2. a backward edge (to a block at a lower offset) is most likely
 *      (loops iterate);
 *   3. falling through beats a taken branch (javac puts the "then" part
 *      after the test; switches: the default first, then cases in order);
 *   4. but a successor that allocates is less likely than one that does
 *      not (it outweighs 3, not 1-2): a "then" part that allocates is
 *      often a lazy initialization, a verbose message or an error path.
 *      Measured (agent/README.md): ANTLR 3 went from 13.7% more increments
 *      than per-site counting to 18.1% fewer, the threads example from
 *      27.8% to 42.7% fewer, Ant from 30.0% to 32.5%.
 * Ties go to the lower cfg edge.  With frequencies, the higher frequency
 * wins and the heuristics break ties.
 * When a path reaches a block already on itself, the segment after that
 * header block is split off as a loop path (branching off the header and
 * joining it, Figure 2) and the path continues at the header with another
 * successor; a path never joins a loop split off from itself.  Then every
 * edge not yet on a path starts a side path, in the order the blocks were
 * put on paths (loop paths' blocks included), handlers after the entry.
 * Every edge is on exactly one path; a path may own no block at all (an
 * edge straight from its branching block to its joining block).
 *
 * Counters (§2.2).  Each path gets one counter on its least-shared edge:
 * the share count of the path's i-th edge is 1 + the paths branching off
 * at or after the edge's end block + the paths joining at or before its
 * start block; ties go to the edge that needs no critical-edge split.
 * Semantics: the edges without a counter form a spanning tree of the
 * blocks and X; with phi(X) = 0 and phi(v) = phi(u) + allocs(v) along tree
 * edges, a counter on u -> v means phi(u) + allocs(v) - phi(v), per site.
 * That is exactly the paper's allocations + branching correction + joining
 * correction carried through whole branch and join chains (loops: the
 * corrections cancel to the loop's and its header's allocations).  Over any
 * walk from X to X the counters' semantics add up to the walk's
 * allocations (the sum telescopes).  Counters with empty semantics are
 * dropped.  Should a path's non-counter edges close a cycle (a path that
 * could only continue into its own loop), the closing edge gets a counter
 * as well, so the rule above still holds.
 *
 * Ownership: struct paths owns every array in it; paths_free releases them.
 */
#ifndef HEAPFS_AGENT_PATHS_H
#define HEAPFS_AGENT_PATHS_H

#include <stdint.h>

#include "agent/cfg.h"

#define PATHS_X UINT32_MAX     /* the virtual node outside the method */
#define PATHS_NONE UINT32_MAX

struct pedge {
	uint32_t from, to;         /* block ids or PATHS_X */
	uint32_t cfg_edge;         /* index in cfg.e, PATHS_NONE for edges to/from X */
	uint32_t path;             /* owning path */
	uint32_t share;            /* share count (§2.2.1) */
	uint8_t counter;           /* carries a counter (after paths_place) */
};

struct path {
	uint32_t first, n;         /* its edges: edge_list[first .. first + n) in order */
	uint32_t split_from;       /* loop paths: the path they were split off, else PATHS_NONE */
	uint32_t counter_edge;     /* pedge index, PATHS_NONE if none */
};

struct paths {
	uint32_t nblocks, nsites;
	uint32_t nedges;
	struct pedge *e;
	uint32_t *block_path;      /* [nblocks] owning path, PATHS_NONE if unreachable */
	uint32_t npaths;
	struct path *p;
	uint32_t *edge_list;       /* [nedges] path edges, path by path */
	/* counters (paths_place + paths_semantics) */
	uint32_t ncounters;
	uint32_t *counter_edge;    /* [ncounters] pedge index */
	int32_t *sem;              /* [ncounters * nsites] coefficient per site */
	/* phi of every block and X ([(nblocks + 1) * nsites], X last): after
	 * block b, on any walk from X, the counters executed so far count
	 * exactly phi(b) fewer allocations than happened (per site).  An
	 * exception that leaves b early therefore needs phi(b) minus the
	 * allocations of b not yet made added (instrument.h, corrections). */
	int32_t *phi;
};

/* Limit on blocks x sites for the semantics (bytes = 4x this). */
#define PATHS_MAX_CELLS (1u << 22)

/* Builds the paths.  freq: measured edge frequencies in the layout of
 * paths_edge_freq, or NULL for the static heuristics.  0, -ENOMEM, -E2BIG
 * (method too large). */
int paths_build(const struct cfg *g, const double *freq, struct paths *ps);

/* Places the counters (least-shared edge per path).  forced: per path a
 * pedge index to use instead, or PATHS_NONE; NULL for none (tests). */
int paths_place(struct paths *ps, const struct cfg *g, const uint32_t *forced);

/* Computes the semantics of the counters placed and drops empty ones. */
int paths_semantics(struct paths *ps, const struct cfg *g);

/* All three. */
int paths_plan(const struct cfg *g, const double *freq, struct paths *ps);

/* The strongly connected components of the blocks over the edges between
 * blocks (X edges left out): comp[b] for b < nb, comp[nb] (X) one of its
 * own.  An edge between blocks lies on a cycle iff its ends share a
 * component.  Iterative Tarjan.  Caller frees; NULL: out of memory. */
uint32_t *paths_components(uint32_t nb, uint32_t nedges, const struct pedge *e);

/* The frequency of path edge e in a measured-frequency array laid out as
 * [0, nnormal) the normal cfg edges, [nnormal + b] the edge X -> b,
 * [nnormal + nblocks + b] the edge b -> X (instrument.h, sink->freq). */
double paths_edge_freq(const struct cfg *g, const struct pedge *e, const double *freq);

/* The pedge from -> to (PATHS_X allowed), or PATHS_NONE. */
uint32_t paths_find_edge(const struct paths *ps, uint32_t from, uint32_t to);

void paths_free(struct paths *ps);

#endif
