/* loops.h - counted loops (loops=on; beyond the paper).
 *
 * A path counter on a loop's back edge is incremented once per
 * iteration.  When the program counts the iterations itself, in an int
 * local that starts at 0 and that the back edge's block increments, the
 * counter can be added once, at the loop's exits, by that local's value
 * (instrument.h, loops): one increment per loop run that iterated at all
 * instead of one per iteration.  In ANTLR 3 the recursion
 * GrammarAST.descendants iterates over a tree node's children; 68% of the
 * nodes are leaves, whose calls then count nothing.
 *
 * A loop qualifies when, on the method's CFG:
 *   - its latch B ends `iinc var 1; goto head` (javac's for loop) and is
 *     the head's only predecessor inside the loop (the natural loop of
 *     B -> head: the blocks that reach B without passing the head);
 *   - it is entered at the head only, and every entry (a block outside the
 *     loop with the head as its one successor) ends `iconst_0; istore var`
 *     (goto head): var is 0 at every entry;
 *   - nothing in the loop writes var but that iinc, so that at any point
 *     of the loop var is the number of back edges taken since entry;
 *   - it has no return or athrow, no exception handler and no instruction
 *     a handler of the method covers: every exception leaves the method;
 *   - every exit target (a block outside the loop that a loop block
 *     reaches) has a stack-map frame when the class needs them (version
 *     50 on): the add goes at its start.  It is reached from the loop
 *     only, or else (frames needed) var has no value in its frame and
 *     every block outside the loop that enters it has it as its one
 *     successor, by a goto or by falling through: such a block sets var to
 *     0 last (`iconst_0; istore var`, where the program can no longer read
 *     var), so that the add there adds nothing.  javac's `if (c) { for
 *     ... } else { for ... }` leaves both loops at the same block;
 *   - with frames, every frame inside the loop has var as an int.
 * Of two nested candidates only the inner one is kept (blocks belong to
 * one loop at most); nor is a loop kept whose zeroing block lies in
 * another kept loop (or another's in it).
 *
 * Ownership: struct trip_loops owns its arrays; trip_loops_free releases them.
 */
#ifndef HEAPFS_AGENT_LOOPS_H
#define HEAPFS_AGENT_LOOPS_H

#include <stdint.h>

#include "agent/cfg.h"
#include "agent/classfile.h"

#define TRIP_NONE UINT32_MAX

struct trip_loop {
	uint32_t head, latch;      /* blocks */
	uint32_t var;              /* the int local counting its iterations */
	uint32_t exit_first, nexits; /* its exit targets: exit[exit_first ..) */
	uint32_t zero_first, nzero; /* blocks outside entering them: zero[zero_first ..) */
};

struct trip_loops {
	uint32_t n;
	struct trip_loop *l;       /* [n] */
	uint32_t *exit;            /* exit target blocks, loop by loop */
	uint32_t *zero;            /* blocks that set a loop's variable to 0 last,
				    * loop by loop */
	uint32_t *loop_of;         /* [nblocks] the loop a block belongs to, TRIP_NONE */
};

/* The qualifying loops of a method: g its CFG, v its instructions,
 * k its code; frames its complete frames (cf_frames_expand) or NULL, and
 * need_frames whether the class needs them (version 50 on: a loop whose
 * exit target has no frame is left out).  0 or -ENOMEM. */
int trip_loops_find(const struct cfg *g, const struct cf_insn *v, const struct cf_code *k,
		    const struct cf_frame *frames, uint32_t nframes, int need_frames, struct trip_loops *out);

/* The entry index of local slot `slot` in a complete frame's locals (a long
 * or double is one entry for two slots), or -1 when the frame lists fewer
 * slots, or -2 when the slot is the second half of a long or double. */
int trip_frame_entry(const struct cf_frame *f, uint32_t slot);

void trip_loops_free(struct trip_loops *t);

/* A counted loop's counter as read over a run.  The exit's add is
 * `c += (1L << 32) + var`: the value packs the adds made (high 32 bits)
 * over the turns (low 32 bits), so that after 2^32 turns in all the turns
 * would carry into the adds.  Reading takes the growth since the previous
 * read apart instead: while fewer than 2^32 turns were added between two
 * reads, the growth's low half is the turns added and its high half the
 * adds, exactly, whatever the totals (the value may even wrap past
 * 2^64).  Reads must come in order (the counter only grows). */
struct trip_count {
	uint64_t last;             /* the packed value at the previous read */
	uint64_t turns, adds;      /* over the run */
};

/* Takes in the packed value read now. */
void trip_count_read(struct trip_count *t, uint64_t packed);

#endif
