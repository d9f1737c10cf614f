package example.dumpgen;

/**
 * Runs another program's main, then holds the JVM so that jcmd can dump it
 * (tests/bench/bench_vvm.sh: jcmd PID GC.heap_dump).  What the program built
 * stays reachable from its own static fields; Hold keeps nothing itself.
 *
 * Usage: java -cp DIR... example.dumpgen.Hold MAIN_CLASS [ARGS...]
 * Prints "ready" on stdout once MAIN_CLASS.main has returned, then sleeps
 * until it is killed.
 */
public final class Hold {
    public static void main(String[] args) throws Exception {
        String[] rest = java.util.Arrays.copyOfRange(args, 1, args.length);
        Class.forName(args[0]).getMethod("main", String[].class).invoke(null, (Object) rest);
        System.out.println("ready");
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}
