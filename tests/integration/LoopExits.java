/* Counted loops (agent/loops.h: an int from 0, one iinc per turn) left
 * every way: by the loop's test, by break (and continue), with no turn at
 * all, and by exceptions thrown mid-way from a callee or by the JVM and
 * caught by the caller; nested; calling an allocating static method
 * (counted by the loop with inline=on).  main's own loop has handlers in
 * it: not counted at its exits.  Prints a checksum.
 *
 * Counted at their exits with loops=on, by construction: the loops of
 * throwsFromCallee, throwsByVm and breaks (each allocates every turn);
 * with inline=on also those of calls and of nested's inner loop (their
 * only allocation is make's, which its clone leaves to them).  nested's
 * outer loop is not (of nested loops only the inner one is). */
public class LoopExits {
	static Object keep;
	static long sum;

	static void check(int k) {
		if (k % 7 == 3)
			throw new IllegalStateException();
	}

	static Object make(int i) {
		return new int[i & 3];
	}

	static int throwsFromCallee(int n, int k) {
		int made = 0;
		for (int i = 0; i < n; i++) {
			keep = new Object();
			check(k + i);
			made++;
		}
		return made;
	}

	static int throwsByVm(int[] a, int n) {
		int s = 0;
		for (int i = 0; i < n; i++) {
			keep = new long[1];
			s += a[i];
		}
		return s;
	}

	static int breaks(int n) {
		int s = 0;
		for (int i = 0; i < n; i++) {
			keep = new StringBuilder();
			if (i == 5)
				break;
			if ((i & 1) == 0)
				continue;
			s++;
		}
		return s;
	}

	static int nested(int n) {
		int s = 0;
		for (int i = 0; i < n; i++) {
			keep = new Object[1];
			for (int j = 0; j < i; j++) {
				keep = make(j);
				s++;
			}
		}
		return s;
	}

	static int calls(int n) {
		int s = 0;
		for (int i = 0; i < n; i++) {
			keep = make(i);
			s += i;
		}
		return s;
	}

	public static void main(String[] args) {
		int rounds = Integer.parseInt(args[0]);
		int[] small = new int[4];
		for (int r = 0; r < rounds; r++) {
			try {
				sum += throwsFromCallee(r % 11, r);
			} catch (IllegalStateException e) {
				sum += 1000;
			}
			try {
				sum += throwsByVm(small, r % 7);
			} catch (ArrayIndexOutOfBoundsException e) {
				sum += 2000;
			}
			sum += breaks(r % 9);
			sum += nested(r % 6);
			sum += calls(r % 5);
		}
		System.out.println(sum);
	}
}
