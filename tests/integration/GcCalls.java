import java.util.ArrayList;
import java.util.List;

/* Threads that call System.gc() at the same time, for gcwait's test
 * (test_agent.sh).  Usage: GcCalls THREADS CALLS.  Each thread keeps a few
 * hundred small objects and calls System.gc() CALLS times; far too little
 * is allocated for a GC of its own, so every GC is a System.gc() call's. */
public class GcCalls {
    static final List<int[]> kept = new ArrayList<>();

    public static void main(String[] args) throws InterruptedException {
        int threads = Integer.parseInt(args[0]), calls = Integer.parseInt(args[1]);
        Thread[] ts = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            ts[t] = new Thread(() -> {
                for (int i = 0; i < calls; i++) {
                    synchronized (kept) {
                        for (int j = 0; j < 100; j++)
                            kept.add(new int[j % 8]);
                    }
                    System.gc();
                }
            });
            ts[t].start();
        }
        for (Thread t : ts)
            t.join();
        System.out.println("calls=" + threads * calls);
    }
}
