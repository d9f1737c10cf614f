/* synth_windows.c - the three scenarios of the suspicious-time-windows paper:
 *
 *   churn     (§3.4) calm phases around a phase in which java.lang.Integer
 *             temporaries are allocated in great numbers and die at the
 *             next GC, with frequent GCs;
 *   gcstress  (§3.3) a phase of frequent, long GC pauses while a queue of
 *             tasks survives every collection;
 *   leakdrops (§3.2, Fig. 2) reachable memory grows, drops by half once,
 *             then grows again with two small (10 %) drops.
 *
 * Their point is the timeline, so GC start times and pauses follow a fixed
 * schedule (docs/scenarios.md); allocations advance the clock by 10 ns each.
 * Phases: a = floor(G/3), b = floor(2G/3); GCs a+1..b form the middle phase.
 */
#include "synth_world.h"

#include <stdio.h>

#define NF(a) (uint32_t)(sizeof(a) / sizeof((a)[0]))
#define REF HTR_FIELD_REF
#define STA HTR_FIELD_STATIC
#define MS 1000000ull
#define ALLOC_STEP_NS 10
#define TIMELINE_START_NS (100 * MS)

/* -------------------------------------------------------------- shared */

struct timeline {
	uint64_t prev_end;     /* end of the previous GC (or of the setup) */
};

/* The schedule starts at 100 ms (setup, JVM start); GC k starts
 * interval_k after the end of GC k-1, unless its allocations (10 ns each)
 * need longer. */
static void timeline_start(struct sw *w, struct timeline *tl)
{
	w->alloc_step_ns = ALLOC_STEP_NS;
	if (w->clock_ns < TIMELINE_START_NS)
		w->clock_ns = TIMELINE_START_NS;
	tl->prev_end = w->clock_ns;
}

static void timeline_gc(struct sw *w, struct timeline *tl, uint64_t interval_ms, uint64_t pause_ms,
			const char *cause)
{
	struct sw_gc_spec gc = { .cause = cause, .start_ns = tl->prev_end + interval_ms * MS,
				 .pause_ns = pause_ms * MS };
	struct sw_gc_result r;
	if (sw_gc(w, &gc, &r) == 0)
		tl->prev_end = r.end_ns;
}

static void temporaries(struct sw *w, uint64_t count, uint32_t t_bytes, uint32_t len, uint32_t site,
			const uint64_t *threads, uint32_t nthreads)
{
	for (uint64_t i = 0; i < count && !sw_failed(w); i++)
		sw_new_array(w, t_bytes, len, site, threads[sw_rng_below(&w->rng, nthreads)]);
}

/* --------------------------------------------------------------- churn */

static const struct sw_field_decl f_server[] = {
	{ "registry", "Ljava/util/ArrayList;", STA | REF },
};
static const struct sw_field_decl f_worker[] = {
	{ "id", "I", 0 }, { "total", "J", 0 },
};
static const struct sw_type_decl churn_decls[] = {
	{ "example.churn.Server", "java.lang.Object", HTR_TYPE_INSTANCE, 0, NF(f_server), f_server, 0 },
	{ "example.churn.Worker", "java.lang.Object", HTR_TYPE_INSTANCE, 0, NF(f_worker), f_worker, 0 },
};
#define CH_MAIN(l) { "example.churn.Server", "main", "([Ljava/lang/String;)V", "Server.java", l }
#define CH_RUN(l) { "example.churn.Worker", "run", "()V", "Worker.java", l }
static const struct sw_frame ch_main = CH_MAIN(20);
static const struct sw_frame ch_registry[] = {
	{ "example.churn.Server", "<clinit>", "()V", "Server.java", 12 }, CH_MAIN(20),
};
static const struct sw_frame ch_register[] = {
	{ "example.churn.Server", "register", "(I)V", "Server.java", 25 }, CH_MAIN(21),
};
static const struct sw_frame ch_buffer[] = {
	{ "example.churn.Server", "handle", "()V", "Server.java", 31 }, CH_RUN(15), SWF_THREAD_RUN,
};
static const struct sw_frame ch_integer[] = {
	SWF_INTEGER_VALUEOF, { "example.churn.Worker", "sum", "(I)J", "Worker.java", 27 }, CH_RUN(16),
	SWF_THREAD_RUN,
};
static const struct sw_frame ch_worker[] = { CH_MAIN(22) };

int synth_churn(struct sw *w, const struct sw_scenario_params *p)
{
	static const char *const names[] = { "main", "worker-1", "worker-2" };
	struct sw_baseline base;
	sw_add_decls(w, churn_decls, NF(churn_decls));
	sw_baseline(w, &base, names, NF(names), &ch_main, 0);
	uint64_t main = base.thread_id[0];
	uint64_t workers[2] = { base.thread_id[1], base.thread_id[2] };
	uint32_t t_server = sw_type(w, "example.churn.Server");
	uint32_t t_worker = sw_type(w, "example.churn.Worker");
	uint32_t t_integer = sw_type(w, "java.lang.Integer");
	uint32_t t_bytes = sw_type(w, "byte[]");
	uint32_t s_target = sw_slot(w, sw_type(w, "java.lang.Thread"), "target");

	/* static ArrayList<String> registry with S session names */
	struct sw_arraylist_kind k_reg;
	struct sw_arraylist reg;
	struct sw_strings strings;
	sw_arraylist_kind_init(w, &k_reg, ch_register, NF(ch_register));
	sw_strings_init(w, &strings, SW_STRING_CONCAT, ch_register, NF(ch_register));
	sw_arraylist_new(w, &reg, &k_reg, sw_site(w, ch_registry, NF(ch_registry), NULL, 0), main);
	struct htr_root r = { .kind = HTR_ROOT_STATIC, .object = reg.obj, .type = t_server,
			      .field = sw_field(w, t_server, "registry") };
	sw_root_add(w, &r);
	uint64_t s = p->n / 1000 ? p->n / 1000 : 1;
	for (uint64_t i = 0; i < s && !sw_failed(w); i++) {
		char name[40];
		snprintf(name, sizeof(name), "session-%llu", (unsigned long long)i);
		sw_arraylist_add(w, &reg, sw_string(w, &strings, name, main, NULL), main);
	}
	uint32_t site_worker = sw_site(w, ch_worker, NF(ch_worker), NULL, 0);
	for (uint32_t i = 1; i <= 2; i++)
		sw_put(w, base.thread_obj[i], s_target, sw_new(w, t_worker, site_worker, main));

	uint32_t site_buffer = sw_site(w, ch_buffer, NF(ch_buffer), NULL, 0);
	uint32_t site_integer = sw_site(w, ch_integer, NF(ch_integer), NULL, 0);
	uint64_t c = p->n / 100 ? p->n / 100 : 1;
	uint32_t a = p->g / 3, b = 2 * p->g / 3;
	struct timeline tl;
	timeline_start(w, &tl);
	for (uint32_t k = 1; k <= p->g && !sw_failed(w); k++) {
		int churn = k > a && k <= b;
		temporaries(w, c, t_bytes, 1024, site_buffer, workers, 2);
		for (uint64_t i = 0; churn && i < p->n && !sw_failed(w); i++)
			sw_new(w, t_integer, site_integer, workers[sw_rng_below(&w->rng, 2)]);
		timeline_gc(w, &tl, churn ? 50 : 1000, churn ? 2 : 5, "G1 Evacuation Pause");
	}
	return sw_status(w);
}

/* ------------------------------------------------------------ gcstress */

static const struct sw_field_decl f_pipeline[] = {
	{ "pending", "Ljava/util/LinkedList;", STA | REF },
};
static const struct sw_field_decl f_task[] = {
	{ "id", "J", 0 }, { "payload", "[B", REF },
};
static const struct sw_type_decl stress_decls[] = {
	{ "example.gcstress.Pipeline", "java.lang.Object", HTR_TYPE_INSTANCE, 0, NF(f_pipeline), f_pipeline, 0 },
	{ "example.gcstress.Task", "java.lang.Object", HTR_TYPE_INSTANCE, 0, NF(f_task), f_task, 0 },
};
#define GS_MAIN(l) { "example.gcstress.Pipeline", "main", "([Ljava/lang/String;)V", "Pipeline.java", l }
#define GS_RUN(l) { "example.gcstress.Pipeline", "run", "()V", "Pipeline.java", l }
#define GS_SUBMIT(l) { "example.gcstress.Pipeline", "submit", "(J)V", "Pipeline.java", l }
static const struct sw_frame gs_main = GS_MAIN(30);
static const struct sw_frame gs_pending[] = {
	{ "example.gcstress.Pipeline", "<clinit>", "()V", "Pipeline.java", 9 }, GS_MAIN(30),
};
static const struct sw_frame gs_task[] = { GS_SUBMIT(22), GS_RUN(15), SWF_THREAD_RUN };
static const struct sw_frame gs_payload[] = {
	{ "example.gcstress.Task", "<init>", "(J)V", "Task.java", 11 }, GS_SUBMIT(22), GS_RUN(15),
	SWF_THREAD_RUN,
};
static const struct sw_frame gs_add[] = { GS_SUBMIT(23), GS_RUN(15), SWF_THREAD_RUN };
static const struct sw_frame gs_buffer[] = {
	{ "example.gcstress.Pipeline", "poll", "()V", "Pipeline.java", 40 }, GS_RUN(17), SWF_THREAD_RUN,
};

int synth_gcstress(struct sw *w, const struct sw_scenario_params *p)
{
	static const char *const names[] = { "main", "worker-1" };
	struct sw_baseline base;
	sw_add_decls(w, stress_decls, NF(stress_decls));
	sw_baseline(w, &base, names, NF(names), &gs_main, 0);
	uint64_t main = base.thread_id[0], worker = base.thread_id[1];
	uint32_t t_pipeline = sw_type(w, "example.gcstress.Pipeline");
	uint32_t t_task = sw_type(w, "example.gcstress.Task");
	uint32_t t_bytes = sw_type(w, "byte[]");
	uint32_t s_payload = sw_slot(w, t_task, "payload");
	struct sw_linkedlist_kind k_pending;
	struct sw_linkedlist pending;
	sw_linkedlist_kind_init(w, &k_pending, gs_add, NF(gs_add));
	sw_linkedlist_new(w, &pending, &k_pending, sw_site(w, gs_pending, NF(gs_pending), NULL, 0), main);
	struct htr_root r = { .kind = HTR_ROOT_STATIC, .object = pending.obj, .type = t_pipeline,
			      .field = sw_field(w, t_pipeline, "pending") };
	sw_root_add(w, &r);
	uint32_t site_task = sw_site(w, gs_task, NF(gs_task), NULL, 0);
	uint32_t site_payload = sw_site(w, gs_payload, NF(gs_payload), NULL, 0);
	uint32_t site_buffer = sw_site(w, gs_buffer, NF(gs_buffer), NULL, 0);

	uint64_t c = p->n / 100 ? p->n / 100 : 1;
	uint32_t a = p->g / 3, b = 2 * p->g / 3;
	struct timeline tl;
	timeline_start(w, &tl);
	for (uint32_t k = 1; k <= p->g && !sw_failed(w); k++) {
		int stress = k > a && k <= b;
		temporaries(w, c, t_bytes, 1024, site_buffer, &worker, 1);
		if (stress) {
			uint64_t j = k - a, span = b - a;
			uint64_t add = p->n * j / span - p->n * (j - 1) / span;
			for (uint64_t i = 0; i < add && !sw_failed(w); i++) {
				uint32_t task = sw_new(w, t_task, site_task, worker);
				sw_put(w, task, s_payload, sw_new_array(w, t_bytes, 48, site_payload, worker));
				sw_linkedlist_add(w, &pending, task, worker);
			}
		} else if (k == b + 1) {
			sw_linkedlist_clear(w, &pending);
		}
		timeline_gc(w, &tl, stress ? 20 : 1000, stress ? 80 : 10, "G1 Evacuation Pause");
	}
	return sw_status(w);
}

/* ----------------------------------------------------------- leakdrops */

static const struct sw_field_decl f_store[] = {
	{ "sessions", "Ljava/util/LinkedList;", STA | REF },
};
static const struct sw_field_decl f_session[] = {
	{ "id", "J", 0 }, { "payload", "[B", REF },
};
static const struct sw_type_decl leak_decls[] = {
	{ "example.leakdrops.SessionStore", "java.lang.Object", HTR_TYPE_INSTANCE, 0, NF(f_store), f_store, 0 },
	{ "example.leakdrops.Session", "java.lang.Object", HTR_TYPE_INSTANCE, 0, NF(f_session), f_session, 0 },
};
#define LD_MAIN(l) { "example.leakdrops.Main", "main", "([Ljava/lang/String;)V", "Main.java", l }
#define LD_HANDLE(l) { "example.leakdrops.Handler", "handle", "()V", "Handler.java", l }
#define LD_OPEN(l) { "example.leakdrops.SessionStore", "open", "(J)Lexample/leakdrops/Session;", \
		     "SessionStore.java", l }
static const struct sw_frame ld_main = LD_MAIN(15);
static const struct sw_frame ld_sessions[] = {
	{ "example.leakdrops.SessionStore", "<clinit>", "()V", "SessionStore.java", 10 }, LD_MAIN(15),
};
static const struct sw_frame ld_session[] = { LD_OPEN(25), LD_HANDLE(18), SWF_THREAD_RUN };
static const struct sw_frame ld_payload[] = {
	{ "example.leakdrops.Session", "<init>", "(J)V", "Session.java", 12 }, LD_OPEN(25),
	LD_HANDLE(18), SWF_THREAD_RUN,
};
static const struct sw_frame ld_add[] = { LD_OPEN(26), LD_HANDLE(18), SWF_THREAD_RUN };
static const struct sw_frame ld_buffer[] = { LD_HANDLE(20), SWF_THREAD_RUN };

int synth_leakdrops(struct sw *w, const struct sw_scenario_params *p)
{
	static const char *const names[] = { "main", "http-1", "http-2" };
	struct sw_baseline base;
	sw_add_decls(w, leak_decls, NF(leak_decls));
	sw_baseline(w, &base, names, NF(names), &ld_main, 0);
	uint64_t main = base.thread_id[0];
	uint64_t http[2] = { base.thread_id[1], base.thread_id[2] };
	uint32_t t_store = sw_type(w, "example.leakdrops.SessionStore");
	uint32_t t_session = sw_type(w, "example.leakdrops.Session");
	uint32_t t_bytes = sw_type(w, "byte[]");
	uint32_t s_payload = sw_slot(w, t_session, "payload");
	struct sw_linkedlist_kind k_sessions;
	struct sw_linkedlist sessions;
	sw_linkedlist_kind_init(w, &k_sessions, ld_add, NF(ld_add));
	sw_linkedlist_new(w, &sessions, &k_sessions, sw_site(w, ld_sessions, NF(ld_sessions), NULL, 0),
			  main);
	struct htr_root r = { .kind = HTR_ROOT_STATIC, .object = sessions.obj, .type = t_store,
			      .field = sw_field(w, t_store, "sessions") };
	sw_root_add(w, &r);
	uint32_t site_session = sw_site(w, ld_session, NF(ld_session), NULL, 0);
	uint32_t site_payload = sw_site(w, ld_payload, NF(ld_payload), NULL, 0);
	uint32_t site_buffer = sw_site(w, ld_buffer, NF(ld_buffer), NULL, 0);

	uint64_t c = p->n / 10 ? p->n / 10 : 1;
	uint32_t big = p->g / 4, small1 = p->g / 2, small2 = 3 * p->g / 4;
	struct timeline tl;
	timeline_start(w, &tl);
	for (uint32_t k = 1; k <= p->g && !sw_failed(w); k++) {
		temporaries(w, c, t_bytes, 1024, site_buffer, http, 2);
		uint64_t drop = 0;
		if (k == big)
			drop = sessions.size / 2;
		else if (k == small1 || k == small2)
			drop = sessions.size / 10;
		if (k == big || k == small1 || k == small2) {
			for (uint64_t i = 0; i < drop; i++)
				sw_linkedlist_remove_first(w, &sessions);
		} else {
			for (uint64_t i = 0; i < p->n && !sw_failed(w); i++) {
				uint64_t th = http[sw_rng_below(&w->rng, 2)];
				uint32_t s = sw_new(w, t_session, site_session, th);
				sw_put(w, s, s_payload, sw_new_array(w, t_bytes, 240, site_payload, th));
				sw_linkedlist_add(w, &sessions, s, th);
			}
		}
		timeline_gc(w, &tl, 500, 10, "G1 Evacuation Pause");
	}
	return sw_status(w);
}
