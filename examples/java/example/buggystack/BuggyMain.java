package example.buggystack;

/* The classification paper's leak (§5.3.1): N pushes, N pops, M = N/10
 * pushes, M pops.  Popped objects stay reachable from the stack's array.
 * Usage: BuggyMain [N]; prints what it constructed. */
public class BuggyMain {
    public static void main(String[] args) {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 10000;
        int m = Math.max(1, n / 10);
        BuggyStack stack = new BuggyStack();
        for (int i = 0; i < n; i++)
            stack.push(new TestObject(i));
        for (int i = 0; i < n; i++)
            stack.pop();
        System.gc();
        for (int i = 0; i < m; i++)
            stack.push(new TestObject(i));
        for (int i = 0; i < m; i++)
            stack.pop();
        System.gc();
        pause(); // the recorder walks the heap after the GC: keep main's frame a moment
        System.out.println("testobjects=" + (n + m));
        System.out.println("first_round=" + n);
        System.out.println("second_round=" + m);
        System.out.println("leaked=" + n);
        System.out.println("size=" + stack.size());
    }

    static void pause() {
        try { Thread.sleep(300); } catch (InterruptedException e) { }
    }
}
