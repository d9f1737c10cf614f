package example.churn;

import java.util.ArrayList;

/* The windows paper's churn scenario (§3.4): calm phases around a phase in
 * which a worker allocates java.lang.Integer temporaries in great numbers.
 * The allocation-heavy example of `make bench-agent`.
 * Usage: Server [temporaries [calm-requests]]; prints what it constructed. */
public class Server {
    static final ArrayList<Worker> workers = new ArrayList<>();

    static void register(int i) {
        workers.add(new Worker(i));
    }

    public static void main(String[] args) throws Exception {
        long churn = args.length > 0 ? Long.parseLong(args[0]) : 3000000;
        int calm = args.length > 1 ? Integer.parseInt(args[1]) : 20000;
        register(1);
        Worker w = workers.get(0);
        Thread t = new Thread(() -> {
            w.calm(calm);
            w.sum(churn);
            w.calm(calm);
        }, "worker-1");
        t.start();
        t.join();
        System.out.println("integers=" + w.integers);
        System.out.println("requests=" + w.requests);
        System.out.println("checksum=" + w.checksum);
    }
}
