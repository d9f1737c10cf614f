/* gen_alloc_methods.c - writes a Java class of random methods that allocate
 * under nested branches, loops (with break/continue), dense and sparse
 * switches, early returns and try/finally, for the mode=count exactness
 * test (tests/integration/test_agent_count.sh): the same program is run
 * with mode=count and mode=full and the per-site counts must agree.
 *
 *   gen_alloc_methods SEED NMETHODS CLASSNAME [exc] > CLASSNAME.java
 *   java CLASSNAME [ROUNDS]     (ROUNDS times over the argument grid, default 1)
 *
 * No allocation is a multianewarray (mode=full counts each of its arrays,
 * mode=count the instruction).  Without `exc` nothing throws; with it the
 * methods also throw mid-path (throw statements, a throwing callee, array
 * indexes out of bounds, division by zero, a negative array size), catch
 * (try/catch around blocks) and call later methods, so that exceptions
 * cut paths short in the throwing frame, in frames they unwind and in the
 * catching frame; main catches what gets out.  The generator recurses over
 * its own small statement tree (depth <= 4), not over data. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "tests/xorshift.h"

static uint64_t rng;
static uint32_t rnd(uint32_t n)
{
	return xorshift_below(&rng, n);
}

static int loopvar;
static int exc_mode, cur_method, nmethods;

static void indent(int d)
{
	for (int i = 0; i < d + 2; i++)
		fputs("    ", stdout);
}

static const char *cond(void)
{
	static char buf[8][96];
	static int k;
	char *b = buf[k++ % 8];
	const char *v[] = { "a", "b", "acc", "(a + b)" };
	switch (rnd(3)) {
	case 0:
		snprintf(b, 96, "%s %% %u == %u", v[rnd(4)], 2 + rnd(3), rnd(2));
		break;
	case 1:
		snprintf(b, 96, "%s > %u", v[rnd(4)], rnd(12));
		break;
	default:
		snprintf(b, 96, "(%s & %u) != 0", v[rnd(4)], 1u << rnd(3));
		break;
	}
	return b;
}

static void alloc(int d)
{
	indent(d);
	switch (rnd(5)) {
	case 0: puts("sink = new Object();"); break;
	case 1: puts("sink = new int[(a & 3) + 1];"); break;
	case 2: puts("sink = new Object[2];"); break;
	case 3: puts("sink = new StringBuilder(4);"); break;
	default: puts("sink = new Gen_Box(acc);"); break;
	}
}

static void block(int d, int in_loop);

/* Statements that throw, catch or call (exc mode). */
static void exc_stmt(int d, int in_loop, uint32_t k)
{
	indent(d);
	switch (k) {
	case 0:
		printf("if (%s) throw new Gen_Exc(acc);\n", cond());
		break;
	case 1:
		printf("acc += Gen_Exc.maybe(%s, acc);\n", cond());
		break;
	case 2:
		puts("acc += Gen_Exc.ARR[((a + acc) & 0x7fffffff) % 5];");
		break;
	case 3:
		puts("acc += 12 / ((b + acc) % 4);");
		break;
	case 4:
		puts("sink = new long[(a + acc) % 7 - 1];");
		break;
	case 5:
		if (cur_method + 1 < nmethods) {
			printf("acc += m%d(b, a);\n", cur_method + 1 + (int)rnd((uint32_t)(nmethods - cur_method - 1)));
			break;
		}
		puts("acc += 1;");
		break;
	default:
		puts("try {");
		block(d + 1, in_loop);
		indent(d);
		puts("} catch (RuntimeException e) {");
		alloc(d + 1);
		indent(d + 1);
		puts("acc += 3;");
		indent(d);
		puts("}");
		break;
	}
}

static void stmt(int d, int in_loop)
{
	uint32_t k = d >= 4 ? rnd(3) : rnd(exc_mode ? 18 : 11);
	if (k >= 11) {
		exc_stmt(d, in_loop, k - 11);
		return;
	}
	switch (k) {
	case 0:
	case 1:
		alloc(d);
		break;
	case 2:
		indent(d);
		printf("acc += %u;\n", 1 + rnd(5));
		break;
	case 3:
	case 4:
		indent(d);
		printf("if (%s) {\n", cond());
		block(d + 1, in_loop);
		if (rnd(2)) {
			indent(d);
			puts("} else {");
			block(d + 1, in_loop);
		}
		indent(d);
		puts("}");
		break;
	case 5: {
		int v = loopvar++;
		indent(d);
		printf("for (int i%d = 0; i%d < (a %% 4) + %u; i%d++) {\n", v, v, rnd(3), v);
		indent(d + 1);
		printf("acc += i%d;\n", v);
		block(d + 1, 1);
		indent(d);
		puts("}");
		break;
	}
	case 6: {
		int v = loopvar++;
		indent(d);
		printf("int w%d = b %% 3;\n", v);
		indent(d);
		printf("while (w%d-- > 0) {\n", v);
		block(d + 1, 1);
		indent(d);
		puts("}");
		break;
	}
	case 7: {
		int sparse = rnd(2);
		indent(d);
		printf("switch ((a + b + acc) %% %u) {\n", sparse ? 200u : 4u);
		uint32_t ncase = 1 + rnd(3);
		for (uint32_t c = 0; c < ncase; c++) {
			indent(d);
			printf("case %u:\n", sparse ? c * 37 : c);
			block(d + 1, in_loop);
			if (rnd(3)) {
				indent(d + 1);
				puts("break;");
			}
		}
		indent(d);
		puts("default:");
		block(d + 1, in_loop);
		indent(d);
		puts("}");
		break;
	}
	case 8:
		indent(d);
		printf("if (%s) return acc;\n", cond());
		break;
	case 9:
		indent(d);
		if (in_loop)
			printf("if (%s) %s;\n", cond(), rnd(2) ? "continue" : "break");
		else
			printf("acc ^= %u;\n", rnd(7));
		break;
	default:
		indent(d);
		puts("try {");
		block(d + 1, in_loop);
		indent(d);
		puts("} finally {");
		alloc(d + 1);
		indent(d);
		puts("}");
		break;
	}
}

static void block(int d, int in_loop)
{
	uint32_t n = 1 + rnd(3);
	for (uint32_t i = 0; i < n; i++)
		stmt(d, in_loop);
}

int main(int argc, char **argv)
{
	if (argc != 4 && argc != 5) {
		fprintf(stderr, "usage: gen_alloc_methods SEED NMETHODS CLASSNAME [exc]\n");
		return 2;
	}
	exc_mode = argc == 5;
	rng = 0x9E3779B97F4A7C15ull ^ strtoull(argv[1], NULL, 10);
	int n = atoi(argv[2]);
	nmethods = n;
	const char *cls = argv[3];
	printf("// generated by tests/integration/gen_alloc_methods.c %s %s %s%s\n", argv[1], argv[2], cls,
	       exc_mode ? " exc" : "");
	printf("class Gen_Box { int v; Gen_Box(int v) { this.v = v; } }\n");
	if (exc_mode) /* no stack trace: the VM allocates none for it */
		printf("class Gen_Exc extends RuntimeException {\n    final int v;\n"
		       "    Gen_Exc(int v) { super(null, null, false, false); this.v = v; }\n"
		       "    static final int[] ARR = new int[4];\n"
		       "    static int maybe(boolean t, int v) { if (t) throw new Gen_Exc(v); return v & 1; }\n}\n");
	printf("public class %s {\n    static Object sink;\n", cls);
	for (int m = 0; m < n; m++) {
		cur_method = m;
		printf("    static int m%d(int a, int b) {\n        int acc = 0;\n", m);
		block(0, 0);
		printf("        return acc;\n    }\n");
	}
	printf("    public static void main(String[] args) {\n        long total = 0;\n");
	printf("        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 1;\n");
	printf("        for (int r = 0; r < rounds; r++)\n");
	printf("        for (int a = 0; a < 24; a++)\n            for (int b = 0; b < 9; b++) {\n");
	for (int m = 0; m < n; m++)
		printf(exc_mode ? "                try { total += m%d(a, b); } catch (RuntimeException e) { total += 7; }\n"
				: "                total += m%d(a, b);\n",
		       m);
	printf("            }\n        System.out.println(\"total=\" + total);\n    }\n}\n");
	return 0;
}
