package realapps.cacheleak;

import com.google.common.cache.Cache;
import com.google.common.cache.CacheBuilder;
import java.io.IOException;
import realapps.Pause;

/*
 * TRUTH (written before heapfs was run on this program).
 *
 * Planted problem: a leak through a library's cache.  A session store puts
 * every session into a Guava cache built with CacheBuilder and no eviction
 * (no maximumSize, no expireAfter*), held in the static field
 * realapps.cacheleak.CacheLeak.SESSIONS, and never invalidates them.
 *
 * Usage: CacheLeak PHASES N.  Pause "base" after the cache is built and
 * before any session exists; then, for k = 1..PHASES, N more sessions and
 * pause "k".  At pause k exactly:
 *   - k*N instances of realapps.cacheleak.CacheLeak$Session (0 at "base");
 *   - each holds one String (user, 13 Latin-1 chars: its own String and
 *     byte[13]) and one int[8] that nothing else references, so the
 *     sessions' retained size is k*N * (Session + 24 + 32 + 48) bytes
 *     (Session: 12-byte header + long + 2 references = 28 -> 32; String 24;
 *     byte[13] align8(16+13) = 32; int[8] 16+32 = 48): 136 bytes each;
 *   - the only path to them: static CacheLeak.SESSIONS (LocalManualCache)
 *     -> LocalCache -> LocalCache$Segment[] (concurrencyLevel 4: 4 segments)
 *     -> Segment -> AtomicReferenceArray -> Object[] -> LocalCache$StrongEntry
 *     -> StrongValueReference -> Session.  The accumulation point is the
 *     Segment[] (the growth fans out below it into the 4 segments).
 *   - k*N LocalCache entries and k*N StrongValueReferences; no session is
 *     ever freed: between two pauses no planted object dies.
 * suspects must name: CacheLeak$Session (k*N instances, retained k*N*136
 * bytes), through the Guava cache, and the root static
 * realapps.cacheleak.CacheLeak.SESSIONS.
 */
public final class CacheLeak {
    static final class Session {
        final long id;
        final String user;
        final int[] scores = new int[8];

        Session(long id) {
            this.id = id;
            this.user = String.format("user-%08d", id);
        }
    }

    static final Cache<Long, Session> SESSIONS =
            CacheBuilder.newBuilder().concurrencyLevel(4).recordStats().build();

    public static void main(String[] args) throws IOException {
        int phases = Integer.parseInt(args[0]);
        int n = Integer.parseInt(args[1]);
        long id = 0;
        Pause.point("base");
        for (int k = 1; k <= phases; k++) {
            for (int i = 0; i < n; i++) {
                Session s = new Session(id++);
                SESSIONS.put(s.id, s);
                SESSIONS.getIfPresent(s.id);
            }
            System.out.println("planted " + k + " realapps.cacheleak.CacheLeak$Session " + SESSIONS.size());
            Pause.point(Integer.toString(k));
        }
    }
}
