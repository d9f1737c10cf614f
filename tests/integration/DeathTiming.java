/*
 * DeathTiming: objects whose death GC follows from the program, for
 * test_agent_sample.sh (mode=sample's deaths: walk_flush_deaths).  Run it
 * with -XX:+UseSerialGC (no concurrent pauses between the GCs it counts on).
 *
 * Each round:
 *   - Junk: garbage as soon as made (stored in a static field and cleared
 *     at once, so that the JIT cannot leave it out): each dies at the first
 *     GC after its allocation, one of the young GCs the round's allocation
 *     makes;
 *   - Held: kept in an array through those young GCs, dropped just before
 *     System.gc(): each dies at the first System.gc() after it was made;
 *   - Kept: kept through one System.gc(), dropped, and System.gc() again
 *     with nothing allocated between the two, so that no sample made since
 *     the previous GC dies at the second: each dies at the second
 *     System.gc() after it was made.
 *
 * Usage: DeathTiming ROUNDS N (N of Held and of Kept a round, 8 N Junk).
 */
public final class DeathTiming {
    static final class Junk {
        long a, b;
    }

    static final class Held {
        long a, b, c, d, e;
    }

    static final class Kept {
        long a, b, c, d, e, f;
    }

    static volatile Object sink;
    /* a static field: the JIT would end a local's life at its last use */
    static Kept[] kept;

    public static void main(String[] args) {
        int rounds = Integer.parseInt(args[0]);
        int n = Integer.parseInt(args[1]);
        for (int r = 0; r < rounds; r++) {
            Held[] held = new Held[n];
            for (int i = 0; i < n; i++) {
                held[i] = new Held();
                for (int j = 0; j < 8; j++) {
                    sink = new Junk();
                    sink = null;
                }
            }
            held = null;
            System.gc();
            kept = new Kept[n];
            for (int i = 0; i < n; i++) {
                kept[i] = new Kept();
            }
            System.gc();
            kept = null;
            System.gc();
        }
        System.out.println("rounds " + rounds + " n " + n);
    }
}
