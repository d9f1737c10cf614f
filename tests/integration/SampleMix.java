import java.lang.management.ManagementFactory;

/* A heap whose contents are known, for mode=sample's test
 * (test_agent_sample.sh).  Usage: SampleMix [KEEP [CHURN_PER_KEEP]]:
 * keeps KEEP (200,000) SampleMix$Keep (an int and two longs: 32 bytes with
 * compressed class pointers), one int[256] (1,040 bytes) per 4 Keeps
 * (50,000) and one long[16384] (131,088 bytes) per 800 (250), and allocates
 * CHURN_PER_KEEP (20) SampleMix$Tmp (an int: 16 bytes) per Keep, stored in
 * a ring of 1,024 slots so that escape analysis cannot remove them: all but
 * the last 1,024 die.  Then System.gc() three times.  Prints what it keeps
 * and what the main thread allocated (ThreadMXBean) from its start to the
 * last GC. */
public class SampleMix {
    static final class Keep {
        int id;
        long a, b;
        Keep(int id) { this.id = id; this.a = id * 3L; this.b = id * 7L; }
    }

    static final class Tmp {
        int x;
        Tmp(int x) { this.x = x; }
    }

    static Keep[] keep;
    static int[][] arrays;
    static long[][] bigs;
    static final Tmp[] ring = new Tmp[1024];

    public static void main(String[] args) {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 200_000;
        int churn = args.length > 1 ? Integer.parseInt(args[1]) : 20;
        com.sun.management.ThreadMXBean tmx =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long id = Thread.currentThread().getId();
        long before = tmx.getThreadAllocatedBytes(id);
        keep = new Keep[n];
        arrays = new int[n / 4][];
        bigs = new long[n / 800][];
        long tmps = 0, sum = 0;
        for (int i = 0; i < n; i++) {
            keep[i] = new Keep(i);
            if (i % 4 == 0)
                arrays[i / 4] = new int[256];
            if (i % 800 == 0)
                bigs[i / 800] = new long[16384];
            for (int j = 0; j < churn; j++) {
                Tmp t = new Tmp(i + j);
                ring[(int) (tmps++ & 1023)] = t;
                sum += t.x;
            }
        }
        for (int g = 0; g < 3; g++)
            System.gc();
        long after = tmx.getThreadAllocatedBytes(id);
        System.out.println("keep=" + n);
        System.out.println("arrays=" + arrays.length);
        System.out.println("bigs=" + bigs.length);
        System.out.println("tmps=" + tmps);
        System.out.println("main_allocated=" + (after - before));
        System.out.println("sum=" + sum);
    }
}
