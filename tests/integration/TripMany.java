/* TripMany: a counted loop (loops=on) that turns more than 2^32 times over
 * the run.  Its counter packs the adds made at the loop's exit over its
 * turns (agent/loops.h), so the agent takes the growth apart at every read
 * (at least every 100 ms) for the turns not to carry into the adds.  The
 * objects do not escape: C2 removes the loop (the count is of `new`
 * executed), so ROUNDS x N turns take no time, and the program sleeps
 * 500 ms after each call for the agent to read between them: the limit
 * is 2^32 turns between two reads, not over the run.  counts= must give
 * spin's site ROUNDS x N allocations and one add per call.  Run
 * `java TripMany ROUNDS N`. */
public class TripMany {
	static void spin(int n) {
		for (int i = 0; i < n; i++)
			new Object();
	}

	public static void main(String[] args) throws InterruptedException {
		int rounds = Integer.parseInt(args[0]), n = Integer.parseInt(args[1]);
		for (int r = 0; r < rounds; r++) {
			spin(n);
			Thread.sleep(500);
		}
		System.out.println(rounds + " x " + n);
	}
}
