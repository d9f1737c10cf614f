// For tests/integration/test_agent_count.sh: count.threads_max is the most
// threads alive at once that ran instrumented code (mode=count), not every
// thread of the program.  `single`: main only.  `idle`: main allocates
// while a second thread of the program (main thread group) sleeps in JDK
// code, a java.util.Timer thread runs a JDK method, and a shutdown hook
// runs at exit: none of them runs a method of this class that allocates,
// so threads_max is 1.  `two`: main and a second thread both allocate here
// while both are alive (main first, then the thread, joined): 2.
import java.util.*;
public class ThreadsMax {
	static Object sink;
	static long work(int n) {
		long s = 0;
		for (int i = 0; i < n; i++) {
			Object o = (i & 1) == 0 ? new int[i % 5 + 1] : new StringBuilder();
			s += o.hashCode() & 1;
			if (i % 1000 == 0)
				sink = o;
		}
		return s;
	}
	static void nap() {
		try {
			Thread.sleep(300);
		} catch (InterruptedException e) {
			Thread.currentThread().interrupt();
		}
	}
	public static void main(String[] args) throws Exception {
		String mode = args.length > 0 ? args[0] : "single";
		long s = work(1000);
		if (mode.equals("idle")) {
			Thread sleeper = new Thread(ThreadsMax::nap, "sleeper");
			sleeper.start();
			Timer timer = new Timer("jdk-timer", true);
			timer.schedule(new TimerTask() {
				public void run() { Thread.yield(); }
			}, 0);
			Runtime.getRuntime().addShutdownHook(new Thread(System.out::flush, "hook"));
			s += work(200000);
			sleeper.join();
			timer.cancel();
		} else if (mode.equals("two")) {
			long[] other = new long[1];
			Thread t = new Thread(() -> other[0] = work(200000), "worker");
			t.start();
			s += work(200000);
			t.join();
			s += other[0];
		} else {
			s += work(200000);
		}
		System.out.println(mode + " " + (s > 0));
	}
}
