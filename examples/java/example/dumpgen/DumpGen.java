package example.dumpgen;

import com.sun.management.HotSpotDiagnosticMXBean;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Makes heap dumps for the HPROF importer's tests (tests/integration/test_hprof.sh).
 *
 * Usage: java -cp DIR example.dumpgen.DumpGen OUT_PREFIX PRODUCTS DUMPS
 * Writes OUT_PREFIX-0.hprof ... OUT_PREFIX-(DUMPS-1).hprof; before each dump the
 * cache grows by PRODUCTS products (a growing cache: a leak).  Every product,
 * its name and its tags live until the end, so the program knows exactly how
 * many of its own objects each dump holds and prints that as
 * "dump K CLASS COUNT" lines (the independent histogram of the test).
 */
public final class DumpGen {
    /** Holds every primitive field kind, an object field and an array field. */
    static class Product {
        final long id;
        final int stock;
        final short shelf;
        final byte grade;
        final char code;
        final boolean active;
        final float weight;
        final double price;
        final String name;
        final int[] tags;
        Product next;

        Product(long id) {
            this.id = id;
            this.stock = (int) (id % 100);
            this.shelf = (short) (id % 7);
            this.grade = (byte) (id % 3);
            this.code = (char) ('A' + id % 26);
            this.active = id % 2 == 0;
            this.weight = id * 0.5f;
            this.price = id * 1.25;
            this.name = "product-" + id;
            this.tags = new int[(int) (id % 5)];
        }
    }

    /** A subclass adds fields after the inherited ones. */
    static final class PerishableProduct extends Product {
        final long expires;
        final byte zone;

        PerishableProduct(long id) {
            super(id);
            expires = id * 1000;
            zone = (byte) id;
        }
    }

    static final Map<Long, Product> CACHE = new HashMap<>();
    static final List<Object> KEEP = new ArrayList<>();
    static Product chain;
    static long made, perishable;

    public static void main(String[] args) throws Exception {
        if (args.length != 3) {
            System.err.println("usage: DumpGen OUT_PREFIX PRODUCTS DUMPS");
            System.exit(2);
        }
        String prefix = args[0];
        int products = Integer.parseInt(args[1]);
        int dumps = Integer.parseInt(args[2]);
        keepOneOfEachArray();
        Thread worker = new Thread(() -> { }, "heapfs-dumpgen-worker");
        HotSpotDiagnosticMXBean bean = ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class);
        for (int d = 0; d < dumps; d++) {
            grow(products);
            String file = prefix + "-" + d + ".hprof";
            new java.io.File(file).delete();
            bean.dumpHeap(file, true);
            System.out.println("dump " + d + " example.dumpgen.DumpGen$Product " + (made - perishable));
            System.out.println("dump " + d + " example.dumpgen.DumpGen$PerishableProduct " + perishable);
        }
        System.out.println("kept " + KEEP.size() + " " + worker.getName());
    }

    static void grow(int n) {
        for (int i = 0; i < n; i++) {
            long id = made++;
            Product p = id % 10 == 9 ? new PerishableProduct(id) : new Product(id);
            if (p instanceof PerishableProduct)
                perishable++;
            p.next = chain;
            chain = p;
            CACHE.put(id, p);
        }
    }

    static void keepOneOfEachArray() {
        KEEP.add(new boolean[] { true, false, true });
        KEEP.add(new byte[] { 1, 2, 3, 4, 5 });
        KEEP.add(new char[] { 'h', 'e', 'a', 'p' });
        KEEP.add(new short[] { 1, 2 });
        KEEP.add(new int[] { 1, 2, 3 });
        KEEP.add(new long[] { 1, 2, 3, 4 });
        KEEP.add(new float[] { 1f });
        KEEP.add(new double[] { 1.0, 2.0 });
        KEEP.add(new Object[] { "x", null, KEEP });
        KEEP.add(new String[][] { { "a" }, { "b", "c" } });
        KEEP.add("\u00e9t\u00e9 \u2603"); // a UTF-16 string
    }
}
