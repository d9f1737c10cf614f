/* AllocBursts THREADS ARRAYS: each thread allocates ARRAYS byte[256 K] in a
 * row, keeping the last 4, so that with a small young generation the
 * allocations themselves start GC after GC, milliseconds apart (no
 * System.gc()). */
public class AllocBursts {
    public static void main(String[] args) throws Exception {
        int threads = Integer.parseInt(args[0]), arrays = Integer.parseInt(args[1]);
        Thread[] t = new Thread[threads];
        long[] sums = new long[threads];
        for (int k = 0; k < threads; k++) {
            final int id = k;
            t[k] = new Thread(() -> {
                byte[][] keep = new byte[4][];
                for (int i = 0; i < arrays; i++) {
                    keep[i % 4] = new byte[256 * 1024];
                    keep[i % 4][i % 1024] = (byte) i;
                    sums[id] += keep[(i + 1) % 4] == null ? 0 : keep[(i + 1) % 4][0];
                }
            });
            t[k].start();
        }
        for (Thread x : t)
            x.join();
        long s = 0;
        for (long v : sums)
            s += v;
        System.out.println("arrays=" + (long) threads * arrays + " sum=" + s);
    }
}
