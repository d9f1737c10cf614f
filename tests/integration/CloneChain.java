import java.util.ArrayList;

/* Counter inlining through clones (inline=on with loops=on): a clone
 * whose counted loop calls clones counts those calls itself, so that a
 * recursion through such a loop stays in clones.  Its own allocations
 * are still counted by its callers.  Exceptions thrown deep in a
 * recursion of clones (Leaf.check) are caught by the round's caller;
 * walk's loop is also left by break; gather's second loop leaves at a
 * block the other branch enters too (its variable is set to 0 there).
 * Prints a checksum.
 *
 * By construction, counting clones (agent/instrument.c, do_counted_clone):
 * Work.fill, whose loop calls Leaf.pair (Leaf is loaded first, so its
 * clone is known when Work is instrumented), at once; Work.build,
 * collect, gather and walk, whose loops call themselves, once Work was
 * relinked (hot=N: a class's own clones are registered after its methods
 * were instrumented).  Leaf.pair and Node's constructor get plain clones
 * (no loop). */
public class CloneChain {
	static Object keep;
	static long sum;

	static final class Node {
		final Node[] kids;
		final int v;

		Node(int v, int n) {
			this.v = v;
			this.kids = new Node[n];
		}
	}

	static final class Leaf {
		static Object pair(int i) {
			return new Object[2];
		}

		static void check(int v) {
			if (v % 13 == 5)
				throw new IllegalStateException();
		}
	}

	static final class Work {
		static Node build(int depth, int seed) {
			int n = depth == 0 ? 0 : 1 + (seed & 3) % 3;
			Node t = new Node(seed, n);
			for (int i = 0; i < n; i++)
				t.kids[i] = build(depth - 1, seed * 7 + i + 1);
			return t;
		}

		static ArrayList<Node> collect(Node t) {
			ArrayList<Node> out = new ArrayList<>();
			out.add(t);
			for (int i = 0; i < t.kids.length; i++)
				out.addAll(collect(t.kids[i]));
			return out;
		}

		/* GrammarAST.descendants' shape (ANTLR 3): the else branch's loop
		 * leaves at the block the then branch's goto enters too. */
		static ArrayList<Node> gather(Node t, boolean pre) {
			ArrayList<Node> out = new ArrayList<>();
			if (pre) {
				out.add(t);
				for (int i = 0; i < t.kids.length; i++)
					out.addAll(gather(t.kids[i], true));
				out.add(null);
			} else {
				out.add(t);
				for (int i = 0; i < t.kids.length; i++)
					out.addAll(gather(t.kids[i], false));
			}
			return out;
		}

		static int walk(Node t) {
			int[] box = new int[1];
			Leaf.check(t.v);
			for (int i = 0; i < t.kids.length; i++) {
				if (t.kids[i].v % 5 == 0)
					break;
				box[0] += walk(t.kids[i]);
			}
			return box[0] + 1;
		}

		static int fill(int n) {
			int[] made = new int[1];
			for (int i = 0; i < n; i++) {
				keep = Leaf.pair(i);
				made[0]++;
			}
			return made[0];
		}

		static void run(int rounds) {
			for (int r = 0; r < rounds; r++) {
				Node t = build(2 + r % 4, r);
				sum += collect(t).size();
				sum += gather(t, (r & 1) == 0).size();
				try {
					sum += walk(t);
				} catch (IllegalStateException e) {
					sum += 1000;
				}
				sum += fill(r % 4);
			}
		}
	}

	public static void main(String[] args) {
		keep = Leaf.pair(0);
		Work.run(Integer.parseInt(args[0]));
		System.out.println(sum);
	}
}
