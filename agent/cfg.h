/* cfg.h - control-flow graph of one method's bytecode (DuckTracks §2).
 *
 * Blocks are maximal runs of instructions entered only at their first one:
 * leaders are offset 0, branch and switch targets, the instruction after
 * any branch, switch, return or athrow, exception handlers and the bounds
 * of try ranges.  Edges are (from, to) pairs, deduplicated (a conditional
 * branch to the next instruction is one edge; switch cases with one target
 * are one edge), normal edges first, then exception edges (a block inside a
 * try range to its handler).  Blocks ending in a return or athrow are exits.
 *
 * Allocation sites are the instructions decoded as sites (struct
 * cf_insn's site: new, newarray, anewarray, multianewarray, and calls of
 * the allocating intrinsics), numbered in code order.
 *
 * The same structure is built by hand in tests (cfg_init, cfg_add_*).
 * Ownership: struct cfg owns its arrays; cfg_free releases them.
 */
#ifndef HEAPFS_AGENT_CFG_H
#define HEAPFS_AGENT_CFG_H

#include <stdint.h>

#include "agent/classfile.h"

enum cfg_edge_kind { CFG_NORMAL = 0, CFG_EXC = 1 };

struct cfg_block {
	uint32_t first, end;      /* instruction indexes [first, end) (bytecode built) */
	uint32_t start_pc;        /* bytecode offset of its first instruction */
	uint8_t exit;             /* ends in a return or athrow: leaves the method */
	uint8_t throws;           /* ends in athrow */
	uint8_t handler;          /* an exception handler starts here */
};

struct cfg_edge {
	uint32_t from, to;
	uint8_t kind;             /* enum cfg_edge_kind */
	uint8_t fall;             /* taken by falling through (to starts right after from) */
	uint8_t jump;             /* taken by a branch or switch */
};

struct cfg {
	uint32_t nblocks;
	struct cfg_block *b;
	uint32_t nedges, nnormal; /* e[0..nnormal) normal, then exception edges */
	struct cfg_edge *e;
	uint32_t nsites;
	uint32_t nalloc;          /* sites [0, nalloc) allocate (set by cfg_finish); sites
				   * added later stand for calls (instrument.c, counter
				   * inlining), which the path heuristics take for
				   * plain code */
	uint32_t *site_pc;        /* [nsites] bytecode offset (hand-built: site number) */
	uint32_t *site_block;     /* [nsites] */
	uint32_t cap_edges, cap_sites;
};

/* From decoded instructions.  0, -ENOTSUP (jsr/ret), -EINVAL, -ENOMEM. */
int cfg_build(const struct cf_insn *v, uint32_t n, const struct cf_code *code, struct cfg *g);

/* Hand-built graphs: cfg_init gives nblocks blocks (start_pc = index), then
 * edges and sites are added; cfg_finish sorts and deduplicates. */
int cfg_init(struct cfg *g, uint32_t nblocks);
int cfg_add_edge(struct cfg *g, uint32_t from, uint32_t to, enum cfg_edge_kind kind, int fall);
int cfg_add_site(struct cfg *g, uint32_t block, uint32_t pc);
int cfg_finish(struct cfg *g);

/* A deep copy of src into *dst (dst owns it: cfg_free).  0 or -ENOMEM. */
int cfg_copy(const struct cfg *src, struct cfg *dst);

void cfg_free(struct cfg *g);

#endif
