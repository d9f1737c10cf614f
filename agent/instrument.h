/* instrument.h - rewrites a class so that its methods count allocations
 * with DuckTracks path counters (mode=count).  Pure C: no JVMTI, so that
 * it is unit-tested over whole class libraries.
 *
 * Every method with an allocating instruction gets its CFG, paths and
 * counters (agent/paths.h).  A counter is the snippet
 *     getstatic heapfs/Counters.c:[J; sipush|ldc_w INDEX; dup2; laload;
 *     lconst_1; ladd; lastore                                  (11 bytes)
 * or, with atomic increments (instr_sink.atomic),
 *     getstatic heapfs/Counters.c:[J; sipush|ldc_w INDEX;
 *     invokestatic heapfs/Counters.inc([JI)V                       (9 bytes)
 * where inc does VarHandle getAndAdd on the array (C2 inlines it to one
 * locked add); placed on its edge u -> v:
 *   - u has one successor: at the end of u (before its goto / return /
 *     athrow, or between u and v when u falls through);
 *   - v has one predecessor: at the start of v;
 *   - a critical edge taken by falling through: between u and v, where
 *     only the fall-through passes it (jumps to v land after it); a
 *     branch of u to v is pointed at it too;
 *   - a critical edge taken by a branch: a stub after the code
 *     (snippet; goto_w v) and u's branch to v pointed at it;
 *   - X -> entry: at offset 0, where no branch can land; X -> handler: at
 *     the handler's start (or a stub the exception table points at, when
 *     the handler is also reached by normal edges);
 *   - exit edges: before the return or athrow.
 * Then every branch offset, switch padding, exception range, line number,
 * local variable range and stack-map frame is relocated; new branch
 * targets get full frames copied from their original targets' frames;
 * max_stack grows by 6.  A method whose branches would no longer fit 16
 * bits, whose code would pass 64 KiB, or that uses jsr/ret is left as it
 * is (counted in the statistics).
 *
 * Ownership: the sink's callbacks are the caller's; out is appended to.
 */
#ifndef HEAPFS_AGENT_INSTRUMENT_H
#define HEAPFS_AGENT_INSTRUMENT_H

#include <stddef.h>
#include <stdint.h>

#include "model/buf.h"
#include "agent/paths.h"

#define INSTR_COUNTERS_CLASS "heapfs/Counters"
#define INSTR_COUNTERS_FIELD "c"
#define INSTR_COUNTERS_INC "inc"
#define INSTR_INLINE_MARKER "heapfs/Inl"
#define INSTR_THREADS_CLASS "heapfs/Threads"
#define INSTR_THREADS_ENTER "e"
#define INSTR_THREADS_JDK "j"
#define INSTR_THREADS_CALLER "c"
#define INSTR_THREADS_SLOTS 256 /* heapfs.Threads.s's length (a power of 2) */
#define INSTR_CALLER_SLOTS 1024 /* heapfs.Threads.pk's and pc's length (a power of 2) */

/* Where the counters' meaning goes.  Strings are not NUL-terminated. */
struct instr_sink {
	void *ctx;
	/* Reserves n consecutive counter indexes; UINT32_MAX if exhausted. */
	uint32_t (*reserve)(void *ctx, uint32_t n);
	/* A method about to be instrumented; returns its id or UINT32_MAX.
	 * code_hash, nblocks, nnormal: as freq() gets them. */
	uint32_t (*method)(void *ctx, const char *cls, size_t cl, const char *name, size_t nl, const char *desc,
			   size_t dl, uint32_t nsites, uint64_t code_hash, uint32_t nblocks, uint32_t nnormal);
	/* Site k (0..nsites-1) of the method: bytecode offset, line and the
	 * type it allocates, named as in traces ("java.lang.String",
	 * "int[]", "java.lang.Object[][]"; NUL-terminated). */
	int (*site)(void *ctx, uint32_t method, uint32_t k, uint32_t pc, uint32_t line, const char *type);
	/* Counter `counter` adds coef[i] to site k[i] of the method per increment. */
	int (*counter)(void *ctx, uint32_t method, uint32_t counter, const uint32_t *k, const int32_t *coef,
		       uint32_t n);
	/* Optional (NULL: none).  Measured frequencies of the method's
	 * edges, or NULL for the static heuristics: [0, nnormal) the normal
	 * CFG edges (cfg.e), [nnormal + b] the edge X -> block b (method
	 * entry, handler), [nnormal + nblocks + b] the edge b -> X (exit).
	 * With them, a method whose path counters would execute more
	 * increments than one counter per site gets one counter per site;
	 * *sites = 1 asks for one counter per site outright (a version with
	 * path counters executed more increments than it counted).
	 * code_hash: instr_code_hash of the method (a profile's frequencies,
	 * profile.h, apply to the code they were measured on only). */
	const double *(*freq)(void *ctx, const char *cls, size_t cl, const char *name, size_t nl, const char *desc,
			      size_t dl, uint64_t code_hash, uint32_t nblocks, uint32_t nnormal, int *sites);
	/* Optional.  The method's CFG (its calls of clones among the sites),
	 * init (a constructor planned with bytecode corrections: its super()
	 * or this() call's instruction index, else UINT32_MAX), its
	 * path graph (paths.h) and the counter of each edge (UINT32_MAX: none),
	 * so that edge frequencies can be solved from the counters later (flow
	 * conservation over the spanning tree) and the plan they would give
	 * compared with this one (instr_plan_unchanged).  latch[0 .. 2 *
	 * nlatch): the (latch, head) blocks of the counted loops whose back
	 * edges the plan forced counters onto (loops), in order. */
	int (*graph)(void *ctx, uint32_t method, const struct cfg *g, uint32_t init, uint32_t nedges,
		     const struct pedge *e, const uint32_t *counter, const uint32_t *latch, uint32_t nlatch);
	/* Optional (path counters only).  Exception corrections: when an
	 * exception leaves a frame of the method at a bytecode offset in
	 * [start, end) of the rewritten code (the throwing instruction, or the
	 * invoke a callee's exception came out of), site k[i] must get
	 * coef[i] added: the allocations made on the path so far that its
	 * counters have not counted, less those they counted ahead (paths.h,
	 * phi).  Ranges come in code order and do not overlap; offsets in no
	 * range need nothing.  Called after the counters. */
	int (*correction)(void *ctx, uint32_t method, uint32_t start, uint32_t end, const uint32_t *k,
			  const int32_t *coef, uint32_t n);
	/* Optional.  The rewritten exception table (start, end, handler per
	 * entry), to tell which frame of a recursion catches. */
	int (*handlers)(void *ctx, uint32_t method, const uint16_t *seh, uint32_t n);
	/* Optional, all three or none: counter inlining into callers (the
	 * paper's §5).  A method only one instruction can call (a constructor;
	 * a static, private or final method, or one of a final class; not in
	 * an interface) with no exception table, whose every normal
	 * completion made the same allocations E (none on a branch or in a
	 * loop; a constructor's all after its super() or this() call) gets a
	 * synthetic clone: the same name, access and code, and one more
	 * parameter, Lheapfs/Inl; (callers pass null), that counts nothing
	 * when it returns (its caller counts E) and, with bytecode
	 * corrections, counts what it made when an exception leaves it.
	 * With loops, a clone whose counted loops call clones (a recursion
	 * through such a loop, once the class was relinked) counts those
	 * calls itself: they are redirected as in its original (the same
	 * sites), and its path counters over them, counted loops' adds and
	 * correction handlers are counters of the original.
	 * clone() registers E (per site k of the original, whose method id is
	 * given) once the clone is ready.  A caller's invokespecial,
	 * invokestatic or invokevirtual of a Methodref C.m(...) for which
	 * callee() returns a handle becomes `aconst_null; invoke
	 * C.m(..., Lheapfs/Inl;)`, and the call a site of the caller
	 * (numbered after its allocation sites; inlined() names its handle)
	 * that counts once per completed call: one count of it stands for the
	 * clone's E.  Whether a class gets clones depends on its bytes only,
	 * so that a retransformation adds or drops no method.  callee() must
	 * only answer for a clone the caller's class resolves to (the same
	 * defining loader). */
	int (*clone)(void *ctx, uint32_t method, const uint32_t *k, const int32_t *coef, uint32_t n);
	uint32_t (*callee)(void *ctx, const char *cls, size_t cl, const char *name, size_t nl, const char *desc,
			   size_t dl);
	int (*inlined)(void *ctx, uint32_t method, uint32_t k, uint32_t handle);
	/* Optional (with the three above; profile=FILE, profile.h).
	 * linked(): 1 if callers may call the method's clone already, before
	 * its class was seen (a link the profile kept): the class must get
	 * the clone however its bytes changed.  A method so linked that gets
	 * no counting clone (not eligible, or instrumenting it failed) gets a
	 * trampoline clone, which calls the original (that counts what it
	 * makes itself), and clone_none() says so: its callers count nothing
	 * for a call of it. */
	int (*linked)(void *ctx, const char *cls, size_t cl, const char *name, size_t nl, const char *desc,
		      size_t dl);
	int (*clone_none)(void *ctx, const char *cls, size_t cl, const char *name, size_t nl, const char *desc,
			  size_t dl);
	/* Optional (path counters; used with loops): counter `counter` of
	 * the method stands for a counted loop's back edge (agent/loops.h)
	 * and is not incremented per iteration.  Instead, at the start of
	 * each of the loop's exit targets, when the loop variable v is not 0,
	 *     c[counter] += (1L << 32) + v
	 * so that the high 32 bits count these adds (the increments
	 * executed) and the low 32 bits the iterations, which are what the
	 * counter means per unit, as any counter's value.  Called after
	 * method(). */
	int (*trip)(void *ctx, uint32_t method, uint32_t counter);
	/* Optional, for diagnostics: method (an id method() returned) has one
	 * counter per site although the mode was paths: freq() asked for it,
	 * the frequencies freq() gave made paths dearer, or it is a
	 * constructor whose counters could not all come after super(). */
	void (*sites_chosen)(void *ctx, uint32_t method);
	int loops;                 /* 1: counted loops (agent/loops.h) counted at their
				    * exits (trip must be set).  With bytecode
				    * corrections the handlers covering such a loop
				    * make its add before their correction; the
				    * ranges reported to correction() do not include
				    * it: no loops where those are applied. */
	int atomic;                /* 1: atomic increments (see above) */
	int threads;               /* 1: every method that gets counters calls
				    * `invokestatic heapfs/Threads.e()V` (3 bytes)
				    * at offset 0, before anything else (branches
				    * to instruction 0 land after it), so that the
				    * agent learns which threads run counted code
				    * (instr_threads_class) */
	int jdk;                   /* 1: the class is the JDK's own (agent/counting.c,
				    * "JDK sites"): every increment is
				    * `getstatic c; INDEX; invokestatic
				    * heapfs/Threads.j([JI)V` (as atomic's), which
				    * counts plain on the thread heapfs.Threads let
				    * through last and, on it, per caller as well,
				    * and through a native atomic add on any other
				    * thread; no Threads.e() call (a JDK thread that
				    * only runs JDK code is not one that counts),
				    * no clones (a retransformation cannot add
				    * methods), no counted loops (their adds are
				    * plain) */
	/* Optional (NULL none; not with jdk): the application's calls into
	 * the JDK (an invokedynamic, or an invoke of a method of a class
	 * named java/, javax/, jdk/, sun/ or com/sun/ other than Object's
	 * constructor) at bytecode offset pc of the method named name, desc
	 * (of the class being instrumented), line its line (0 none).  Returns
	 * its caller id, 1..2^31-1 (0: leave the call alone).  Such a call
	 * becomes
	 *     getstatic heapfs/Threads.c:I; istore T; sipush|ldc_w ID;
	 *     putstatic c; <the call>; iload T; putstatic c
	 * (T a local added to the method): while it runs, JDK code counting
	 * on this thread knows its application caller.  A method without
	 * allocations that has such calls is rewritten for them alone, and
	 * registered with method() (nsites 0) after them; the calls of any
	 * method are reported before its method() call (the sink attaches
	 * them by name and descriptor: a method left alone after its calls
	 * were reported never calls method()). */
	uint32_t (*caller)(void *ctx, const char *name, size_t nl, const char *desc, size_t dl, uint32_t pc,
			   uint32_t line);
	int bytecode;              /* 1: exception corrections in the bytecode, not
				    * reported (correction and handlers unused):
				    * every run of instructions with a correction
				    * is covered by a catch-all handler, after the
				    * method's own, that increments a counter
				    * meaning the correction and rethrows; a
				    * method's own handler is reached through a
				    * stub that does the same first.  No handler
				    * may cover a constructor's super() call:
				    * its counters go after the call, or one per
				    * site (instrument.c, plan_ctor_paths). */
	int frames_first;          /* 1: a class of version 50 on with a method to
				    * rewrite whose code has branch targets (a
				    * jump, a switch, a handler) but no
				    * StackMapTable (a JDK class the JVM rebuilt
				    * without, agent/jimage.h) is not instrumented:
				    * instr_class returns INSTR_NO_FRAMES before
				    * telling the sink anything, so that the caller
				    * can instrument a class file with the frames
				    * instead.  0: such a method is left alone
				    * (instr_stats.skipped) or fails the class. */
};

/* FNV-1a (64 bits) of a method's code and exception table. */
uint64_t instr_code_hash(const struct cf_code *k);

/* Edge frequencies from counter values (a counted loop's: its turns, the
 * low 32 bits, see trip above): flow[i] for every edge of the
 * graph (paths.h), from the counted edges (value[i] for i with counted[i])
 * by flow conservation at every block and at X; edges the conservation
 * cannot determine get 0.  Returns the flow of the entry edge X -> 0. */
double instr_solve_flow(uint32_t nblocks, uint32_t nedges, const struct pedge *e, const uint8_t *counted,
			const double *value, double *flow);

/* Whether planning method g's path counters from the measured edge
 * frequencies freq (sink->freq's layout) would give the counters of the
 * version whose path graph is e[0..nedges) with counter[] (sink->graph):
 * the same edges carry counters, and one counter per site would not
 * execute fewer increments.  Then retransforming the method would change
 * nothing it executes.  init: for a constructor planned with bytecode
 * corrections, its super() or this() call's instruction (graph()'s),
 * else UINT32_MAX; latch, nlatch: graph()'s (the new plan forces the
 * same back edges).  1 unchanged, 0 changed, -ENOMEM. */
int instr_plan_unchanged(const struct cfg *g, uint32_t init, const double *freq, uint32_t nedges,
			 const struct pedge *e, const uint32_t *counter, const uint32_t *latch, uint32_t nlatch);

struct instr_stats {
	uint64_t methods;          /* methods with code */
	uint64_t instrumented;     /* methods rewritten */
	uint64_t no_allocs;        /* no allocating instruction: left alone */
	uint64_t calls_only;       /* no allocating instruction, rewritten for their
				    * calls into the JDK alone (sink->caller) */
	uint64_t skipped;          /* left alone: jsr/ret, too large, frames missing */
	uint64_t uncounted;        /* of them, methods with an allocating instruction
				    * (or code that does not scan): their sites
				    * count nothing, so counts are not exact */
	uint64_t counters;         /* counters placed */
	uint64_t sites;            /* allocation sites in instrumented methods */
	uint64_t stubs;            /* critical-edge stubs */
	uint64_t per_site;         /* measured methods given one counter per
				    * site (fewer increments than paths) */
	uint64_t ctor_sites;       /* constructors given one counter per site
				    * (bytecode corrections: a counter or a
				    * correction would lie before super()) */
	uint64_t corr_handlers;    /* correction handlers (bytecode corrections) */
	uint64_t corr_stubs;       /* stubs before the method's own handlers: a
				    * second snippet of a correction counter */
	uint64_t clones;           /* clones registered (sink->clone) */
	uint64_t counting_clones;  /* of them, clones counting the calls of their
				    * counted loops (loops) */
	uint64_t inlined;          /* calls redirected to a clone */
	uint64_t trampolines;      /* clones that call their original (sink->linked) */
	uint64_t trip_loops;       /* counted loops counted at their exits (loops) */
};

enum instr_mode {
	INSTR_PATHS = 0,   /* DuckTracks path counters */
	INSTR_SITES,       /* one counter right after each allocating instruction:
			    * the classic scheme, exact even when exceptions unwind */
	INSTR_RELAYOUT,    /* insert nothing, rewrite every method through the
			    * relocation machinery (tests: output = input) */
};

/* instr_class's answer to sink->frames_first: the class lacks the frames. */
#define INSTR_NO_FRAMES 2

/* Instruments one class.  Returns 1 and appends the new class to out, 0 if
 * nothing was changed (out untouched), INSTR_NO_FRAMES (sink->frames_first
 * only; out untouched, nothing told to the sink), or a negative errno
 * (class not parseable, out of memory; out untouched). */
int instr_class(const uint8_t *data, size_t n, const struct instr_sink *sink, enum instr_mode mode, struct buf *out,
		struct instr_stats *st);

/* The helper class holding the counters:
 *   public final class heapfs.Counters { public static long[] c = new long[ncounters]; }
 * (class-file version 49, no stack maps needed); with atomic, also
 *   static final VarHandle h = MethodHandles.arrayElementVarHandle(long[].class);
 *   public static void inc(long[] a, int i) { h.getAndAdd(a, i, 1L); }
 * (version 52, no branches: no stack maps either).  c is not final: the
 * agent replaces it by a larger array when classes need more counters
 * (agent/counting.c); code still holding the old array increments it, and
 * the agent adds up all arrays.  Appended to out. */
int instr_counters_class(uint32_t ncounters, int atomic, struct buf *out);

/* The helper class that tells the agent which threads run counted code:
 *   public final class heapfs.Threads {
 *     private static final Thread[] s = new Thread[INSTR_THREADS_SLOTS];
 *     private static Thread t;    // the last thread f() let through
 *     private static boolean m;   // set by the agent: two such threads alive at once
 *     public static void e() { if (Thread.currentThread() != t) f(); }
 *     private static void f() {
 *       Thread c = Thread.currentThread();
 *       int i = (int) c.getId() & (INSTR_THREADS_SLOTS - 1);
 *       if (s[i] != c) { n(); s[i] = c; }
 *       if (!m) t = c;
 *     }
 *     private static native void n();   // bound by the agent
 *   }
 * (version 49: no stack maps).  A thread is in s, or t, only after its
 * n() returned, so it calls n() before anything it counts.  Compiled, e()
 * is a load and a compare (C1 and C2 inline it, and f() stays out of the
 * way while one thread runs counted code).  Once two threads that ran
 * counted code are alive at once, n() sets m: t stops changing, so that
 * threads taking turns do not write it back and forth, and every other
 * thread finds itself in s, a cache indexed by thread id (consecutive: up
 * to INSTR_THREADS_SLOTS threads alive at once share no slot, and call
 * n() once each; threads sharing one call it again).
 * The JDK's counting (sink->jdk) and its callers (sink->caller):
 *     public static int c;              // the current application call into the JDK, 0 none
 *     private static final long[] pk = new long[INSTR_CALLER_SLOTS], pc = ...;
 *     public static void j(long[] a, int i) {
 *       if (Thread.currentThread() != t) { k(i); return; }
 *       a[i]++;
 *       if (c == 0) return;
 *       long key = (long) c << 32 | i;        // (caller, counter)
 *       int h = c * 0x9e3779b1 + i; h = (h ^ h >>> 16) & (INSTR_CALLER_SLOTS - 1);
 *       if (pk[h] == key) { pc[h]++; return; }
 *       q(pk[h], pc[h], key); pk[h] = key; pc[h] = 1;
 *     }
 *     private static native void k(int i);    // counter i += 1, atomically, on the side
 *     private static native void q(long key, long n, long next); // the pair key counted n more
 * (a direct-mapped cache of (caller, counter) pairs; the agent adds the
 * evicted ones up and reads the cache at each write).  t is the thread
 * whose plain increments are exact; any other thread counts through k(),
 * into the agent's own atomic array, and with no caller (c is
 * written by every thread).  Appended to out. */
int instr_threads_class(struct buf *out);

/* The marker class of clones' last parameter:
 *   public final class heapfs.Inl {}
 * (version 49; never instantiated: callers pass null).  Reflection resolves
 * the clones' parameter types, so it must be loadable (the boot class
 * path, next to heapfs.Counters).  Appended to out. */
int instr_marker_class(struct buf *out);

#endif
