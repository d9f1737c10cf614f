package realapps.gcpressure;

import java.io.IOException;
import org.apache.commons.collections4.map.LRUMap;
import realapps.Pause;

/*
 * TRUTH (written before heapfs was run on this program).
 *
 * Planted problem: GC overhead, a heap nearly full of live data.  A
 * document store keeps its blocks in a commons-collections4 LRUMap whose
 * limit (1,000,000) is far above what the heap holds, in the static field
 * realapps.gcpressure.GcPressure.BLOCKS; with -Xmx48m (the suite's
 * setting) B blocks of 8 KB fill most of the heap, and the requests that
 * follow allocate short- and medium-lived buffers (a ring of 64 recent
 * ones), so the collector runs again and again over the same live blocks.
 *
 * Usage: GcPressure PHASES B REQUESTS.  Pause "base" with the map built
 * and empty; then, for k = 1..PHASES: B/PHASES more blocks, REQUESTS
 * requests, and pause "k".  At pause k exactly:
 *   - k*B/PHASES instances of realapps.gcpressure.GcPressure$Block, each
 *     holding one byte[8192] that nothing else references: Block = 12 +
 *     long + reference = 24 bytes, byte[8192] = 8208: 8232 bytes retained
 *     per block;
 *   - the only path to them: static GcPressure.BLOCKS (LRUMap) ->
 *     LRUMap's AbstractHashedMap$HashEntry[] table (the accumulation
 *     point) -> AbstractLinkedMap$LinkEntry -> Block, the entries also
 *     linked to each other (a doubly linked list through the header);
 *   - the request buffers die: no block is ever freed.
 * suspects must name: a GC-overhead window (recording with the agent,
 * which has the GC times) and, as the biggest retainer, GcPressure$Block
 * (k*B/PHASES of them, k*B/PHASES*8232 bytes) under static
 * realapps.gcpressure.GcPressure.BLOCKS.
 */
public final class GcPressure {
    static final class Block {
        final long id;
        final byte[] data = new byte[8192];

        Block(long id) {
            this.id = id;
            data[0] = (byte) id;
        }
    }

    static final LRUMap<Long, Block> BLOCKS = new LRUMap<>(1_000_000);
    static final Object[] RECENT = new Object[64];
    static long checksum;

    public static void main(String[] args) throws IOException {
        int phases = Integer.parseInt(args[0]);
        int blocks = Integer.parseInt(args[1]);
        int requests = Integer.parseInt(args[2]);
        Pause.point("base");
        long id = 0;
        for (int k = 1; k <= phases; k++) {
            for (int i = 0; i < blocks / phases; i++) {
                Block b = new Block(id++);
                BLOCKS.put(b.id, b);
            }
            for (int r = 0; r < requests; r++) {
                byte[] buf = new byte[16384 + (r % 7) * 1024];
                buf[r % buf.length] = (byte) r;
                RECENT[r % RECENT.length] = buf;
                checksum += buf[0];
            }
            java.util.Arrays.fill(RECENT, null);
            System.out.println("planted " + k + " realapps.gcpressure.GcPressure$Block " + BLOCKS.size() + " checksum " + checksum);
            Pause.point(Integer.toString(k));
        }
    }
}
