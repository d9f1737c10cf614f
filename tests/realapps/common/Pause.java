package realapps;

import java.io.IOException;

/**
 * The pause points of the real-application suite (tests/realapps/run.sh).
 * A program prints "ready LABEL" (after its own counts) and blocks reading
 * one line from standard input, which the suite feeds through a FIFO once
 * it has taken its jcmd heap dump and class histograms.  The blocked read
 * allocates nothing, so the heap stays the same between the histograms
 * and the dump.  A program run without the suite (stdin at end of file)
 * goes straight on.
 */
public final class Pause {
    private Pause() { }

    public static void point(String label) throws IOException {
        System.out.println("ready " + label);
        System.out.flush();
        int c;
        do {
            c = System.in.read();
        } while (c != -1 && c != '\n');
    }
}
