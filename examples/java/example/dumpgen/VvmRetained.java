package example.dumpgen;

import java.io.File;
import org.graalvm.visualvm.lib.jfluid.heap.Heap;
import org.graalvm.visualvm.lib.jfluid.heap.HeapFactory;
import org.graalvm.visualvm.lib.jfluid.heap.Instance;
import org.graalvm.visualvm.lib.jfluid.heap.JavaClass;

/**
 * Retained sizes as VisualVM's heap library computes them
 * (Instance.getRetainedSize; Debian package visualvm,
 * org-graalvm-visualvm-lib-jfluid-heap.jar), the reference for heapfs's
 * gc/N/objects/<id>/retained_size on HPROF dumps.
 *
 * Usage: java -cp DIR:JAR example.dumpgen.VvmRetained DUMP SELECTOR...
 *   CLASS.FIELD  the object in a static field (example.multicache.IdCache.byId)
 *   CLASS.FIELD.FIELD...  then instance fields of it
 *   all          every object: id TAB class TAB retained size
 *   top N        the N objects of largest retained size
 * Prints per selector: selector TAB id (decimal) TAB class TAB retained size.
 * On stderr: the time taken to compute all retained sizes.
 */
public final class VvmRetained {
    public static void main(String[] args) throws Exception {
        long t0 = System.nanoTime();
        Heap heap = HeapFactory.createHeap(new File(args[0]));
        long t1 = System.nanoTime();
        StringBuilder out = new StringBuilder();
        for (int a = 1; a < args.length; a++) {
            String sel = args[a];
            if (sel.equals("all")) {
                for (java.util.Iterator<Instance> it = heap.getAllInstancesIterator(); it.hasNext();) {
                    Instance i = it.next();
                    line(out, "all", i);
                }
            } else if (sel.equals("top")) {
                int n = Integer.parseInt(args[++a]);
                for (Instance i : heap.getBiggestObjectsByRetainedSize(n))
                    line(out, "top", i);
            } else {
                line(out, sel, resolve(heap, sel));
            }
        }
        long t2 = System.nanoTime();
        System.out.print(out);
        Runtime rt = Runtime.getRuntime();
        System.err.printf("vvm: open %.2f s, retained sizes %.2f s, heap used %d MB%n",
                          (t1 - t0) / 1e9, (t2 - t1) / 1e9, (rt.totalMemory() - rt.freeMemory()) >> 20);
    }

    static void line(StringBuilder out, String sel, Instance i) {
        out.append(sel).append('\t');
        if (i == null) {
            out.append("-\t-\t-\n");
            return;
        }
        out.append(Long.toUnsignedString(i.getInstanceId())).append('\t')
           .append(i.getJavaClass().getName()).append('\t').append(i.getRetainedSize()).append('\n');
    }

    /** CLASS.FIELD[.FIELD...]: the longest prefix that names a class, then fields. */
    static Instance resolve(Heap heap, String sel) {
        String[] parts = sel.split("\\.");
        for (int k = parts.length - 1; k > 0; k--) {
            String cls = String.join(".", java.util.Arrays.copyOfRange(parts, 0, k));
            JavaClass c = heap.getJavaClassByName(cls);
            if (c == null)
                continue;
            Object v = c.getValueOfStaticField(parts[k]);
            for (int f = k + 1; f < parts.length && v instanceof Instance; f++)
                v = ((Instance) v).getValueOfField(parts[f]);
            return v instanceof Instance ? (Instance) v : null;
        }
        return null;
    }
}
