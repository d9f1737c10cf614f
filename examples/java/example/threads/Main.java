package example.threads;

/**
 * Threads allocating at the same sites at once: THREADS threads each call
 * {@link #step} ROUNDS times.  The program prints how many objects each
 * site allocated, computed from its own loop counts (not measured), so a
 * recorder's per-site counts can be checked exactly.
 *
 * <pre>java example.threads.Main [THREADS [ROUNDS]]   (default 4 x 500000)</pre>
 *
 * All threads run the same allocating code, so the allocation counters an
 * instrumenting agent keeps are hit by every thread: plain (non-atomic)
 * increments lose counts there, atomic ones do not.
 */
public final class Main {
	static final class Item {
		final int v;

		Item(int v) {
			this.v = v;
		}
	}

	static volatile Object sink;

	/** Allocates an Item always, an int[] for even i, a long[] for odd i and a StringBuilder every third i. */
	static int step(int i) {
		Item a = new Item(i);
		if ((i & 1) == 0)
			sink = new int[2];
		else
			sink = new long[1];
		if (i % 3 == 0)
			sink = new StringBuilder(8);
		sink = a;
		return a.v & 1;
	}

	static final class Worker extends Thread {
		final int rounds;
		long sum;

		Worker(int rounds) {
			this.rounds = rounds;
		}

		@Override
		public void run() {
			long s = 0;
			for (int i = 0; i < rounds; i++)
				s += step(i);
			sum = s;
		}
	}

	public static void main(String[] args) throws InterruptedException {
		int threads = args.length > 0 ? Integer.parseInt(args[0]) : 4;
		int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 500000;
		Worker[] w = new Worker[threads];
		for (int k = 0; k < threads; k++)
			w[k] = new Worker(rounds);
		for (Worker t : w)
			t.start();
		long sum = 0;
		for (Worker t : w) {
			t.join();
			sum += t.sum;
		}
		long n = (long) threads * rounds;
		long even = (long) threads * ((rounds + 1) / 2);
		long third = (long) threads * ((rounds + 2) / 3);
		System.out.println("checksum " + sum);
		System.out.println("site\tcount (from the loop counts)");
		System.out.println("Item\t" + n);
		System.out.println("int[]\t" + even);
		System.out.println("long[]\t" + (n - even));
		System.out.println("StringBuilder\t" + third);
	}
}
