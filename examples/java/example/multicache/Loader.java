package example.multicache;

/* Loads a range of products into both caches. */
public class Loader implements Runnable {
    long loaded;
    int index;
    private long from, to;

    Loader(int index) { this.index = index; }

    Loader range(long from, long to) { this.from = from; this.to = to; return this; }

    Product load(long id) {
        String name = new StringBuilder(24).append("product-").append(id).toString();
        Product p = new Product(id, name);
        IdCache.put(p);
        NameCache.put(p);
        loaded++;
        return p;
    }

    public void run() {
        for (long id = from; id < to; id++)
            load(id);
    }
}
