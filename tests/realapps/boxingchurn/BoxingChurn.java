package realapps.boxingchurn;

import java.io.IOException;
import org.apache.commons.collections4.queue.CircularFifoQueue;
import realapps.Pause;

/*
 * TRUTH (written before heapfs was run on this program).
 *
 * Planted problem: churn from boxing.  A latency monitor keeps the last
 * 256 samples in a commons-collections4 CircularFifoQueue<Long> (static
 * field realapps.boxingchurn.BoxingChurn.WINDOW) and sums them for an
 * average; every sample is boxed with Long.valueOf, always outside the
 * Long cache (values >= 1,000,000), so every sample allocates one
 * java.lang.Long that dies 256 samples later.
 *
 * Usage: BoxingChurn PHASES N.  Pause "base" with the queue built and
 * empty; then, for k = 1..PHASES, N samples recorded and pause "k".
 * Exactly:
 *   - N java.lang.Long allocated per phase at Long.valueOf called from
 *     realapps.boxingchurn.BoxingChurn.record (the line of the
 *     Long.valueOf call), k*N in all at pause k; no other Long is
 *     allocated by the program's own code (the average is a long);
 *   - at every pause k >= 1 exactly 256 of them are alive (min(N, 256)),
 *     held by WINDOW's Object[] (capacity 256); the rest died;
 *   - nothing planted accumulates: no leak.
 * suspects must name (on the recording with the agent): churn of
 * java.lang.Long allocated in BoxingChurn.record (via Long.valueOf), with
 * the allocation count k*N; it must not call java.lang.Long a leak.  A heap
 * dump shows only the 256 live Longs (a dump has no allocation sites and no
 * dead objects): the dumps are checked for the histogram, field names, no
 * false deaths and find only.
 */
public final class BoxingChurn {
    static final CircularFifoQueue<Long> WINDOW = new CircularFifoQueue<>(256);
    static long total;

    static void record(long micros) {
        WINDOW.add(Long.valueOf(micros));
        long sum = 0;
        int i = 0;
        for (Long v : WINDOW) {
            if (i++ == 8) break;
            sum += v;
        }
        total += sum / 8;
    }

    public static void main(String[] args) throws IOException {
        int phases = Integer.parseInt(args[0]);
        int n = Integer.parseInt(args[1]);
        Pause.point("base");
        long x = 1_000_000;
        for (int k = 1; k <= phases; k++) {
            for (int i = 0; i < n; i++) {
                record(x + (i * 7919L) % 100_000);
            }
            System.out.println("planted " + k + " java.lang.Long " + ((long) k * n) + " alive " + WINDOW.size() + " total " + total);
            Pause.point(Integer.toString(k));
        }
    }
}
