/* synth_buggystack.c - the classification paper's leak example (§5.3.1):
 * Effective Java's stack whose pop() does not null the popped slot, so
 * popped TestObjects stay reachable from the stack's Object[] until a later
 * push overwrites their slot.
 *
 *   public class BuggyStack {                                   // BuggyStack.java
 *     private Object[] elements; private int size;
 *     private static final int DEFAULT_INITIAL_CAPACITY = 16;
 *     public BuggyStack() { elements = new Object[DEFAULT_INITIAL_CAPACITY]; } // 12
 *     public void push(Object e) { ensureCapacity(); elements[size++] = e; }    // 16
 *     public Object pop() { ...; return elements[--size]; }   // the bug
 *     private void ensureCapacity() {
 *       if (elements.length == size) elements = Arrays.copyOf(elements, 2 * size + 1); } // 27
 *   }
 *   BuggyMain.main: stack = new BuggyStack();                   // 40
 *     N x stack.push(new TestObject(i));                        // 43
 *     N x stack.pop();
 *     M x stack.push(new TestObject(i));   (M = max(1, N/10))   // 137
 *     M x stack.pop();
 *
 * The 2N + 2M operations are spread over the GCs: GC k (1..G) happens after
 * operation floor(k * (2N+2M) / G).  GC G is System.gc() (full).
 */
#include "synth_world.h"

#define NF(a) (uint32_t)(sizeof(a) / sizeof((a)[0]))
#define REF HTR_FIELD_REF
#define STA HTR_FIELD_STATIC

static const struct sw_field_decl f_stack[] = {
	{ "elements", "[Ljava/lang/Object;", REF }, { "size", "I", 0 },
	{ "DEFAULT_INITIAL_CAPACITY", "I", STA },
};
static const struct sw_field_decl f_testobject[] = {
	{ "id", "I", 0 },
};
static const struct sw_type_decl decls[] = {
	{ "example.buggystack.BuggyStack", "java.lang.Object", HTR_TYPE_INSTANCE, 0, NF(f_stack), f_stack, 0 },
	{ "example.buggystack.TestObject", "java.lang.Object", HTR_TYPE_INSTANCE, 0, NF(f_testobject),
	  f_testobject, 0 },
};

#define MAIN(l) { "example.buggystack.BuggyMain", "main", "([Ljava/lang/String;)V", "BuggyMain.java", l }
static const struct sw_frame fr_main = MAIN(40);
static const struct sw_frame s_stack[] = { MAIN(40) };
static const struct sw_frame s_initial[] = {
	{ "example.buggystack.BuggyStack", "<init>", "()V", "BuggyStack.java", 12 }, MAIN(40),
};
static const struct sw_frame s_grow[] = {
	{ "java.util.Arrays", "copyOf", "([Ljava/lang/Object;ILjava/lang/Class;)[Ljava/lang/Object;",
	  "Arrays.java", 3513 },
	{ "java.util.Arrays", "copyOf", "([Ljava/lang/Object;I)[Ljava/lang/Object;", "Arrays.java", 3482 },
	{ "example.buggystack.BuggyStack", "ensureCapacity", "()V", "BuggyStack.java", 27 },
	{ "example.buggystack.BuggyStack", "push", "(Ljava/lang/Object;)V", "BuggyStack.java", 16 },
	MAIN(43),
};
static const struct sw_frame s_first_round[] = { MAIN(43) };
static const struct sw_frame s_second_round[] = { MAIN(137) };

struct bs {
	uint32_t t_test, t_array;
	uint32_t s_elements;
	uint32_t site_grow, site_first, site_second;
	uint32_t stack;
	uint32_t size, cap;
	uint64_t main;
};

static void push(struct sw *w, struct bs *b, uint32_t site, uint32_t id)
{
	uint32_t elements = sw_get(w, b->stack, b->s_elements);
	uint32_t obj = sw_new(w, b->t_test, site, b->main);
	(void)id; /* the int field is not part of the graph */
	if (b->size == b->cap) {
		uint32_t ncap = 2 * b->size + 1;
		uint32_t grown = sw_new_array(w, b->t_array, ncap, b->site_grow, b->main);
		for (uint32_t i = 0; i < b->size; i++)
			sw_aput(w, grown, i, sw_aget(w, elements, i));
		sw_put(w, b->stack, b->s_elements, grown);
		elements = grown;
		b->cap = ncap;
	}
	sw_aput(w, elements, b->size++, obj);
}

int synth_buggystack(struct sw *w, const struct sw_scenario_params *p)
{
	static const char *const threads[] = { "main" };
	struct sw_baseline base;
	struct bs b = { 0 };
	sw_add_decls(w, decls, NF(decls));
	sw_baseline(w, &base, threads, 1, &fr_main, 0);
	b.main = base.thread_id[0];
	uint32_t t_stack = sw_type(w, "example.buggystack.BuggyStack");
	b.t_test = sw_type(w, "example.buggystack.TestObject");
	b.t_array = sw_type(w, "java.lang.Object[]");
	b.s_elements = sw_slot(w, t_stack, "elements");
	b.site_grow = sw_site(w, s_grow, NF(s_grow), NULL, 0);
	b.site_first = sw_site(w, s_first_round, NF(s_first_round), NULL, 0);
	b.site_second = sw_site(w, s_second_round, NF(s_second_round), NULL, 0);

	b.stack = sw_new(w, t_stack, sw_site(w, s_stack, NF(s_stack), NULL, 0), b.main);
	b.cap = 16;
	uint32_t initial = sw_new_array(w, b.t_array, b.cap, sw_site(w, s_initial, NF(s_initial), NULL, 0),
					b.main);
	sw_put(w, b.stack, b.s_elements, initial);
	struct htr_root r = { .kind = HTR_ROOT_LOCAL, .object = b.stack, .thread = b.main,
			      .method = sw_method(w, &fr_main), .depth = 0, .slot = 1 };
	sw_root_add(w, &r);

	uint64_t n = p->n, m = n / 10 ? n / 10 : 1, total = 2 * n + 2 * m, op = 0;
	for (uint32_t k = 1; k <= p->g && !sw_failed(w); k++) {
		uint64_t until = total * k / p->g;
		for (; op < until && !sw_failed(w); op++) {
			if (op < n) {
				push(w, &b, b.site_first, (uint32_t)op);
			} else if (op < 2 * n || op >= 2 * n + m) {
				b.size--; /* pop: return elements[--size], the slot keeps its reference */
				sw_advance(w, 20);
			} else {
				push(w, &b, b.site_second, (uint32_t)(op - 2 * n));
			}
		}
		struct sw_gc_spec gc = { .cause = "G1 Evacuation Pause" };
		if (k == p->g) {
			gc.cause = "System.gc()";
			gc.flags = HTR_GC_FULL;
		}
		sw_gc(w, &gc, NULL);
	}
	return sw_status(w);
}
