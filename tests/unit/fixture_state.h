/* fixture_state.h - heap states built by hand for the analyses' unit
 * tests: objects, edges and roots as a test writes them down, without a
 * trace.  Linked into every unit test (Makefile: TEST_HELPER_SRC).
 *
 * Reachability is computed here by a plain breadth-first search from the
 * roots, not by the model's derivation, so that a test of an analysis
 * does not take its expected values from model code it may exercise.
 *
 * Ownership: the caller owns the state; heap_state_free() releases it.
 */
#ifndef HEAPFS_TESTS_FIXTURE_STATE_H
#define HEAPFS_TESTS_FIXTURE_STATE_H

#include <stdint.h>

#include "model/heap_state.h"

struct fx_edge {
	uint32_t from, to;     /* dense object indexes */
};

/* A graph state of n objects: object i has id i + 1, info
 * info_of ? info_of[i] : i, no birth GC; ninfos zeroed objinfos for the
 * caller to fill (array_length -1, thread and site UINT32_MAX); out- and
 * in-edges in the order given (slots 0); roots[0..nroots) of kind
 * HTR_ROOT_OTHER; reachable, nreachable from them.  Fails the test when
 * memory runs out. */
struct heap_state *fx_state(uint32_t n, const uint32_t *info_of, uint32_t ninfos, const struct fx_edge *edges,
			    uint32_t ne, const uint32_t *roots, uint32_t nroots);

/* Writes a synthetic scenario's trace (model/synth.h) of about n objects
 * and g GCs to path; fails the test if it cannot. */
void fx_synth_trace(const char *scenario, uint64_t n, uint32_t g, const char *path);

struct hfs;
/* The tree of the trace or dump at path with default options (hfs_close
 * frees it); fails the test if it does not open. */
struct hfs *fx_open_tree(const char *path);

#endif
