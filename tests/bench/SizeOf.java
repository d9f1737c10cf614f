import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.io.BufferedReader;
import java.io.InputStreamReader;

/*
 * The instance size HotSpot gives each class named on standard input (one
 * binary name a line, e.g. java.lang.Long, example.churn.Worker,
 * realapps.cacheleak.CacheLeak$Session), for tests/bench/bench_agent.sh:
 * mode=count gives exact allocation counts per site, and count x instance
 * size is the exact bytes of a site of a non-array type.  Prints
 * "name<TAB>bytes", or "name<TAB>-" for an array type, a class that does
 * not load, or one whose fields Unsafe will not place (hidden classes,
 * records).  The size is the end of the last instance field (sun.misc.Unsafe
 * objectFieldOffset over the class and its superclasses; plus HotSpot's
 * padding after a class's @Contended fields), at least the header, rounded
 * up to 8 (the object alignment); run it with the same heap
 * options as the program (compressed oops and class pointers decide the
 * header and the reference size).  Classes are loaded without being
 * initialised, from the class path this JVM runs with.
 */
public final class SizeOf {
    static sun.misc.Unsafe U;
    static int refSize;
    static long padding = 128;

    static int fieldSize(Class<?> t) {
        if (t == long.class || t == double.class) return 8;
        if (t == int.class || t == float.class) return 4;
        if (t == short.class || t == char.class) return 2;
        if (t == byte.class || t == boolean.class) return 1;
        return refSize;
    }

    static boolean contended(java.lang.reflect.AnnotatedElement e) {
        for (java.lang.annotation.Annotation a : e.getDeclaredAnnotations())
            if (a.annotationType().getName().equals("jdk.internal.vm.annotation.Contended")) return true;
        return false;
    }

    /*
     * The end of the last instance field of c and its superclasses; a class
     * with @Contended fields (or itself @Contended: the JDK's own, e.g.
     * java.lang.Thread, Striped64$Cell) ends with ContendedPaddingWidth
     * bytes of padding that no field offset shows (Thread: 240 by its
     * fields, 368 in HotSpot's class histogram), and a subclass's fields
     * start after that padding.
     */
    static long end(Class<?> k, long header) {
        if (k == null) return header;
        long end = end(k.getSuperclass(), header);
        boolean pad = contended(k);
        for (Field f : k.getDeclaredFields()) {
            if (Modifier.isStatic(f.getModifiers())) continue;
            long e = U.objectFieldOffset(f) + fieldSize(f.getType());
            if (e > end) end = e;
            if (contended(f)) pad = true;
        }
        return pad ? end + padding : end;
    }

    static long size(Class<?> c, long header) {
        return (end(c, header) + 7) & ~7L;
    }

    /** A class with one int field: where it lies is the header's size. */
    static final class Probe { int x; }

    public static void main(String[] args) throws Exception {
        Field f = sun.misc.Unsafe.class.getDeclaredField("theUnsafe");
        f.setAccessible(true);
        U = (sun.misc.Unsafe) f.get(null);
        refSize = U.arrayIndexScale(Object[].class);
        long header = U.objectFieldOffset(Probe.class.getDeclaredField("x"));
        try {
            com.sun.management.HotSpotDiagnosticMXBean hs = java.lang.management.ManagementFactory
                .getPlatformMXBean(com.sun.management.HotSpotDiagnosticMXBean.class);
            if (hs.getVMOption("EnableContended").getValue().equals("false")) padding = 0;
            else padding = Long.parseLong(hs.getVMOption("ContendedPaddingWidth").getValue());
        } catch (Throwable e) {
            // no management: HotSpot's default
        }
        ClassLoader cl = SizeOf.class.getClassLoader();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        String name;
        while ((name = in.readLine()) != null) {
            if (name.isEmpty()) continue;
            String out = "-";
            if (!name.endsWith("]")) {
                try {
                    out = Long.toString(size(Class.forName(name, false, cl), header));
                } catch (Throwable e) {
                    out = "-";
                }
            }
            System.out.println(name + "\t" + out);
        }
    }
}
