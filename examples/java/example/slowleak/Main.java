package example.slowleak;

import java.util.ArrayList;

/* A slow leak hidden behind noise and an initial peak (windows paper
 * §3.2.4): a big temporary structure at start-up, then requests that make
 * garbage and leave one Session in a static registry every few requests.
 * Usage: Main [requests [leak-every]]; prints what it constructed. */
public class Main {
    static Object sink;

    public static void main(String[] args) {
        int requests = args.length > 0 ? Integer.parseInt(args[0]) : 400000;
        int every = args.length > 1 ? Integer.parseInt(args[1]) : 20;
        ArrayList<byte[]> startup = new ArrayList<>();
        for (int i = 0; i < 20000; i++)
            startup.add(new byte[1024]);            // the initial peak
        sink = startup;
        startup = null;
        sink = null;
        long leaked = 0;
        for (int r = 0; r < requests; r++) {
            byte[] noise = new byte[256 + (r % 7) * 64];
            noise[0] = (byte) r;
            sink = noise;
            if (r % every == 0) {
                Registry.open(r);
                leaked++;
            }
        }
        System.gc();
        System.out.println("sessions=" + leaked);
        System.out.println("registry=" + Registry.size());
        System.out.println("requests=" + requests);
    }
}
