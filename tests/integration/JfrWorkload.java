import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/* A small program for JDK Flight Recorder recordings that the JFR reader's
 * tests compare with the JDK's own `jfr print` (test_jfr_reader.sh,
 * test_jfr.c): it allocates in three shapes at two sites of its own (a
 * growing map of Product records that it keeps: old-object samples with a
 * path to a GC root; short-lived byte arrays: allocation samples and
 * young GCs; a few large arrays outside TLABs), asks for a few full GCs
 * (System.gc), and gives its threads names of its own.
 * Usage: JfrWorkload ROUNDS [THREADS [rotate]]: ROUNDS rounds of about
 * 8 MB each; with "rotate", a second recording is started before the
 * rounds and stopped after them, and each start and stop makes the JVM
 * begin a new chunk of the recording on disk: three chunks in all. */
public class JfrWorkload {
    static final class Product {
        final long id;
        final String name;
        final int[] prices;
        Product(long id) {
            this.id = id;
            this.name = "product-" + id;
            this.prices = new int[4];
        }
    }

    static final Map<Long, Product> cache = new HashMap<>();
    static volatile Object sink;

    static void keep(long id) {
        cache.put(id, new Product(id));
    }

    static void churn(int n) {
        for (int i = 0; i < n; i++)
            sink = new byte[64 + (i & 255)];
    }

    static void big() {
        sink = new long[64 * 1024];
    }

    static void round(int r) {
        for (int i = 0; i < 2000; i++)
            keep((long) r * 2000 + i);
        churn(40000);
        big();
        if (r % 4 == 3)
            System.gc();
    }

    public static void main(String[] args) throws InterruptedException {
        int rounds = Integer.parseInt(args[0]);
        int threads = args.length > 1 ? Integer.parseInt(args[1]) : 1;
        jdk.jfr.Recording second = null;
        if (args.length > 2 && args[2].equals("rotate")) {
            second = new jdk.jfr.Recording();
            second.start();
        }
        List<Thread> ts = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            final int first = t;
            Thread th = new Thread(() -> {
                for (int r = first; r < rounds; r += threads)
                    round(r);
            }, "jfr-worker-" + t);
            ts.add(th);
            th.start();
        }
        for (Thread th : ts)
            th.join();
        if (second != null) {
            second.stop();
            second.close();
        }
        System.out.println("products " + cache.size());
    }
}
