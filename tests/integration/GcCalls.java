import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.util.ArrayList;
import java.util.List;

/* Threads that ask for GCs at the same time, for gcwait's test
 * (test_agent.sh).  Usage: GcCalls THREADS CALLS [system|runtime|mxbean|mixed]:
 * each thread keeps a few hundred small objects and asks CALLS times, with
 * System.gc(), Runtime.getRuntime().gc(), MemoryMXBean.gc() or (mixed) the
 * three by turns; far too little is allocated for a GC of its own, so every
 * GC is a call's. */
public class GcCalls {
    static final List<int[]> kept = new ArrayList<>();
    /* looked up before the threads start: the first lookup loads classes
     * and allocates, which must not make a GC while a thread is in its call */
    static MemoryMXBean bean;

    static void gc(String how, int turn) {
        switch (how.equals("mixed") ? new String[] { "system", "runtime", "mxbean" }[turn % 3] : how) {
        case "system": System.gc(); break;
        case "runtime": Runtime.getRuntime().gc(); break;
        case "mxbean": bean.gc(); break;
        default: throw new IllegalArgumentException(how);
        }
    }

    public static void main(String[] args) throws InterruptedException {
        int threads = Integer.parseInt(args[0]), calls = Integer.parseInt(args[1]);
        String how = args.length > 2 ? args[2] : "system";
        bean = ManagementFactory.getMemoryMXBean();
        Thread[] ts = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            final int first = t;
            ts[t] = new Thread(() -> {
                for (int i = 0; i < calls; i++) {
                    synchronized (kept) {
                        for (int j = 0; j < 100; j++)
                            kept.add(new int[j % 8]);
                    }
                    gc(how, first + i);
                }
            });
            ts[t].start();
        }
        for (Thread t : ts)
            t.join();
        System.out.println("calls=" + threads * calls);
    }
}
