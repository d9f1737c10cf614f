// For tests/integration/test_agent_count.sh: allocations made inside the
// JDK's own methods (mode=count, jdk=on).  By construction, single-threaded:
// Long.valueOf(v) with v outside -128..127 allocates one java.lang.Long each
// call: a() calls it A times, b() B times (A, B from the arguments), and no
// other code of the program calls it; main allocates one int[] itself,
// so that the thread runs counted code (threads_max 1).  Prints the sum so that the boxes
// are used.
public class JdkMix {
	static Object sink;
	static long total;
	static void a(int n) {
		for (int i = 0; i < n; i++)
			total += Long.valueOf(1000L + i);
	}
	static void b(int n) {
		for (int i = 0; i < n; i++)
			sink = Long.valueOf(-5000L - i);
	}
	public static void main(String[] args) {
		sink = new int[1]; // an allocation of the program's own: main runs counted code
		a(Integer.parseInt(args[0]));
		b(Integer.parseInt(args[1]));
		System.out.println(total + " " + sink);
	}
}
