// A method whose first calls all take its allocating branches and whose
// later calls almost never do: paths planned from the first calls' measured
// frequencies (hot=N) make the later calls pay correction counters, so the
// agent demotes the method to one counter per site.  Prints a checksum.
public class PhaseShift {
	static Object sink;

	static int work(int i, boolean allocate) {
		int r = i & 7;
		sink = new Object(); /* every call: the static plan's path counts it */
		if (allocate) {
			sink = new int[2];
			r++;
		}
		if (allocate) {
			sink = new StringBuilder();
			r++;
		}
		if (allocate) {
			sink = new Integer[1];
			r++;
		}
		return r;
	}

	public static void main(String[] args) throws InterruptedException {
		int n = Integer.parseInt(args[0]);
		long sum = 0;
		for (int i = 0; i < 500; i++)
			sum += work(i, true);
		Thread.sleep(1000); /* the agent's polls find work hot */
		for (int round = 0; round < 2; round++) {
			for (int i = 0; i < n; i++)
				sum += work(i, i % 1000 == 0);
			Thread.sleep(1000); /* ... and demote it */
		}
		System.out.println(sum);
	}
}
