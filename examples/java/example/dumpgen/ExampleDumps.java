package example.dumpgen;

import com.sun.management.HotSpotDiagnosticMXBean;
import java.lang.management.ManagementFactory;
import java.lang.ref.SoftReference;
import java.lang.ref.WeakReference;
import java.lang.reflect.Constructor;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;

/**
 * One heap dump holding the key objects of three example programs, for
 * comparing retained sizes with VisualVM's (tests/integration/test_hprof.sh):
 *   - MultiCache: example.multicache.Main runs (its two caches stay in the
 *     static fields IdCache.byId and NameCache.byName);
 *   - BuggyStack: the pushes and pops of example.buggystack.BuggyMain,
 *     the stack kept in ExampleDumps.STACK;
 *   - Company: example.company.Main.generate(n), kept in ExampleDumps.COMPANY;
 *   - references: ExampleDumps.REFS holds a WeakReference and a
 *     SoftReference to objects that are also reachable otherwise, and a
 *     SoftReference to an object only it reaches, so that the treatment of
 *     referents shows in the retained sizes.
 * The examples' package-private members are reached by reflection, so that
 * the examples stay as they are.
 *
 * Usage: java -cp DIR example.dumpgen.ExampleDumps OUT.hprof [PRODUCTS [EMPLOYEES [PUSHES]]]
 */
public final class ExampleDumps {
    static Object STACK;
    static Object COMPANY;
    static final List<Object> REFS = new ArrayList<>();
    static final List<Object> STRONG = new ArrayList<>();

    public static void main(String[] args) throws Exception {
        String out = args[0];
        String products = args.length > 1 ? args[1] : "20000";
        int employees = args.length > 2 ? Integer.parseInt(args[2]) : 1000;
        int pushes = args.length > 3 ? Integer.parseInt(args[3]) : 10000;

        Class.forName("example.multicache.Main").getMethod("main", String[].class)
             .invoke(null, (Object) new String[] { products, "2" });
        STACK = buggyStack(pushes);
        COMPANY = company(employees);
        references();

        new java.io.File(out).delete();
        ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class).dumpHeap(out, true);
        System.out.println("dumped " + out);
    }

    /** BuggyMain's sequence: n pushes, n pops, n/10 pushes, n/10 pops. */
    static Object buggyStack(int n) throws Exception {
        Class<?> stackClass = Class.forName("example.buggystack.BuggyStack");
        Constructor<?> testObject = Class.forName("example.buggystack.TestObject")
                                         .getDeclaredConstructor(int.class);
        testObject.setAccessible(true);
        Object stack = stackClass.getConstructor().newInstance();
        Method push = stackClass.getMethod("push", Object.class);
        Method pop = stackClass.getMethod("pop");
        int m = Math.max(1, n / 10);
        for (int i = 0; i < n; i++) push.invoke(stack, testObject.newInstance(i));
        for (int i = 0; i < n; i++) pop.invoke(stack);
        for (int i = 0; i < m; i++) push.invoke(stack, testObject.newInstance(i));
        for (int i = 0; i < m; i++) pop.invoke(stack);
        return stack;
    }

    static Object company(int n) throws Exception {
        Method generate = Class.forName("example.company.Main").getDeclaredMethod("generate", int.class);
        generate.setAccessible(true);
        return generate.invoke(null, n);
    }

    static void references() {
        int[] shared = new int[100];
        StringBuilder soft = new StringBuilder("softly and strongly reachable");
        STRONG.add(shared);
        STRONG.add(soft);
        REFS.add(new WeakReference<>(shared));
        REFS.add(new SoftReference<>(soft));
        REFS.add(new WeakReference<>(new long[50]));   // only weakly reachable: the dump's GC clears it
        REFS.add(new SoftReference<>(new long[60]));   // only softly reachable: kept, but alive for no one
    }
}
