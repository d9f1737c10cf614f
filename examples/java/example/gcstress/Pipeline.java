package example.gcstress;

import java.util.ArrayDeque;

/* The windows paper's GC-overhead scenario (§3.3): a queue of tasks that
 * survives every collection while garbage forces frequent GCs, so each GC
 * copies more and more.
 * Usage: Pipeline [tasks [garbage-per-task]]; prints what it constructed. */
public class Pipeline {
    static final ArrayDeque<Task> queue = new ArrayDeque<>();
    static long garbage;

    static void submit(long id, int junk) {
        queue.add(new Task(id));
        for (int i = 0; i < junk; i++) {
            byte[] b = new byte[512];
            b[0] = (byte) i;
            sink = b;
            garbage++;
        }
    }

    static Object sink;

    public static void main(String[] args) {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 200000;
        int junk = args.length > 1 ? Integer.parseInt(args[1]) : 8;
        for (long i = 0; i < n; i++)
            submit(i, junk);
        long polled = 0;
        while (queue.poll() != null)
            polled++;
        System.out.println("tasks=" + n);
        System.out.println("garbage=" + garbage);
        System.out.println("polled=" + polled);
    }
}
