import com.google.common.cache.Cache;
import com.google.common.cache.CacheBuilder;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;

/**
 * Bloat from empty collections, planted (tests/integration/test_bloat.sh).
 * The truth, by construction: 20,000 empty HashMaps, 10,000 empty
 * ArrayLists and 5,000 empty HashSets (each with its own empty HashMap,
 * so 25,000 empty HashMaps in all), 2,000 HashMaps of one entry, 3,000
 * ArrayLists made with room for 100 that hold one element (sparse: 99 of
 * 100 slots unused, 297,000 unused slots), and a
 * Guava cache of 20,000 entries whose value references (one reference
 * each) are value wrappers, not collections.  Usage: EmptyCollections
 * READY_FILE DONE_FILE (creates READY when built, exits once DONE exists).
 */
public final class EmptyCollections {
    static final List<Object> KEEP = new ArrayList<>();

    public static void main(String[] args) throws Exception {
        Cache<Integer, String> cache = CacheBuilder.newBuilder().build();
        for (int i = 0; i < 20000; i++) {
            KEEP.add(new HashMap<String, String>());
            if (i % 2 == 0) KEEP.add(new ArrayList<String>());
            if (i % 4 == 0) KEEP.add(new HashSet<String>());
            if (i % 10 == 0) {
                Map<String, String> m = new HashMap<>();
                m.put("k", "v" + i);
                KEEP.add(m);
            }
            if (i % 20 == 0) {
                for (int k = 0; k < 3; k++) {
                    List<String> l = new ArrayList<>(100);
                    l.add("x");
                    KEEP.add(l);
                }
            }
            cache.put(i, "value-" + i);
        }
        KEEP.add(cache);
        Files.createFile(Paths.get(args[0]));
        while (!Files.exists(Paths.get(args[1]))) Thread.sleep(50);
    }
}
