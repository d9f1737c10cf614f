package example.churn;

public class Worker {
    final int id;
    long integers, requests, checksum;
    private final Object[] recent = new Object[1024];

    Worker(int id) { this.id = id; }

    /* A request: a few small objects, kept briefly. */
    void calm(int n) {
        for (int i = 0; i < n; i++) {
            recent[i & 1023] = new StringBuilder(32).append("request ").append(i);
            requests++;
        }
    }

    /* The churn: every value boxed; the ring keeps the box from being
     * scalar-replaced, so every Integer is a real allocation. */
    void sum(long n) {
        for (long i = 0; i < n; i++) {
            Integer v = Integer.valueOf((int) (i % 1000000) + 1000);
            recent[(int) i & 1023] = v;
            checksum += v;
            integers++;
        }
    }
}
