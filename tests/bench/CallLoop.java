// For agent/bench_ab.sh: the worst case for a per-call cost of mode=count's
// instrumented methods: a tiny allocating method called from a hot loop,
// one counter increment per call (make), one check per counted method
// entered (main, pair, make twice).
public class CallLoop {
	static Object sink;
	static Object make(int i) { return (i & 1) == 0 ? new int[1] : new long[1]; }
	static Object pair(int i) { Object a = make(i); Object b = make(i + 1); return a == b ? null : a; }
	public static void main(String[] args) {
		int n = Integer.parseInt(args[0]);
		long s = 0;
		for (int i = 0; i < n; i++) {
			Object o = pair(i);
			if ((i & 1023) == 0)
				sink = o;
			s += o == null ? 1 : 0;
		}
		System.out.println(s);
	}
}
