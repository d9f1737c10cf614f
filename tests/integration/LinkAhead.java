/* Clone links kept by the profile (mode=count, inline=on, profile=FILE).
 * LinkAhead is loaded before its nested class Maker, so its calls of
 * Maker's methods cannot call their clones when it is instrumented; nor
 * can Maker.more call the clone of pair, declared after it (a class's
 * clones are registered after its methods).  The first run writes a
 * clone link for each of the 4 (Maker.make, Maker.<init>, Maker.more,
 * Maker.pair); the next run links those calls to the clones at once.
 *
 * Lines marked V1 are the program; test_agent_count.sh swaps them for
 * the V2 lines, which put each allocation on a branch: none of the 4
 * methods then gets a clone of its own, and the linked callers must find
 * a clone all the same (a trampoline that calls the original; more's
 * call of pair is then on no allocating block and stays as it is).
 * Arguments: rounds.  Prints a checksum. */
public class LinkAhead {
	public static void main(String[] a) {
		int n = Integer.parseInt(a[0]);
		long sum = 0;
		for (int i = 0; i < n; i++) {
			Object[] box = new Object[2];
			box[0] = Maker.make(i);
			Maker m = new Maker(i);
			box[1] = m.more(i * 3L, i * 0.5);
			sum += ((int[]) box[0]).length + m.size + ((long[]) box[1]).length;
		}
		System.out.println(sum);
	}

	static final class Maker {
		static final int[] NONE = new int[0];
		final int size;
		final Object[] held;

		Maker(int i) {
			size = i & 3;
			held = new Object[size + 1]; //V1
			//V2 held = (i & 1) == 0 ? new Object[size + 1] : null;
		}

		static int[] make(int i) {
			return new int[i & 7]; //V1
			//V2 return (i & 1) == 0 ? new int[i & 7] : NONE;
		}

		final long[] more(long x, double d) {
			long[] r = new long[(int) (x & 3) + 1]; //V1
			//V2 long[] r = (x & 2) == 0 ? new long[(int) (x & 3) + 1] : new long[1];
			r[0] = pair(x).length + (long) d;
			return r;
		}

		private Object[] pair(long x) {
			return new Object[] { x, size }; //V1
			//V2 return (x & 4) == 0 ? new Object[] { x, size } : new Object[1];
		}
	}
}
