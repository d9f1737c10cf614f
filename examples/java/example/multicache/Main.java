package example.multicache;

/* The gc-roots paper's multi-cache demo (§5.1): every Product is kept alive
 * by two static caches at once, IdCache.byId and NameCache.byName.
 * Usage: Main [products [gcs]]; prints what it constructed. */
public class Main {
    public static void main(String[] args) throws Exception {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 20000;
        int gcs = args.length > 1 ? Integer.parseInt(args[1]) : 8;
        IdCache.init(); NameCache.init();
        Loader[] loaders = { new Loader(1), new Loader(2) };
        long next = 1000000;
        for (int k = 1; k <= gcs; k++) {
            long until = 1000000 + (long) n * k / gcs;
            long half = next + (until - next) / 2;
            Thread a = new Thread(loaders[0].range(next, half), "loader-1");
            Thread b = new Thread(loaders[1].range(half, until), "loader-2");
            a.start(); b.start(); a.join(); b.join();
            next = until;
            System.gc();
        }
        System.out.println("products=" + IdCache.size());
        System.out.println("names=" + NameCache.size());
        System.out.println("loaded=" + (loaders[0].loaded + loaders[1].loaded));
        System.out.println("gcs=" + gcs);
    }
}
