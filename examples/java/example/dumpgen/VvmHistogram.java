package example.dumpgen;

import java.io.File;
import java.util.Iterator;
import org.graalvm.visualvm.lib.jfluid.heap.Heap;
import org.graalvm.visualvm.lib.jfluid.heap.HeapFactory;
import org.graalvm.visualvm.lib.jfluid.heap.Instance;
import org.graalvm.visualvm.lib.jfluid.heap.JavaClass;

/**
 * The reference numbers for the HPROF importer, from VisualVM's heap library
 * (Debian package visualvm: org-graalvm-visualvm-lib-jfluid-heap.jar).
 *
 * Usage: java -cp DIR:JAR example.dumpgen.VvmHistogram DUMP [histogram|objects]
 *   histogram  one line per class: name TAB instances TAB shallow bytes
 *              (JavaClass.getInstancesCount / getAllInstancesSize)
 *   objects    one line per object: id (hex) TAB class name TAB Instance.getSize
 * Compiled and run by tests/integration/test_hprof.sh.
 */
public final class VvmHistogram {
    public static void main(String[] args) throws Exception {
        Heap heap = HeapFactory.createHeap(new File(args[0]));
        String mode = args.length > 1 ? args[1] : "histogram";
        StringBuilder out = new StringBuilder();
        if (mode.equals("objects")) {
            for (Iterator<Instance> it = heap.getAllInstancesIterator(); it.hasNext();) {
                Instance i = it.next();
                out.append(Long.toHexString(i.getInstanceId())).append('\t')
                   .append(i.getJavaClass().getName()).append('\t').append(i.getSize()).append('\n');
            }
        } else {
            for (JavaClass c : heap.getAllClasses()) {
                if (c.getInstancesCount() == 0)
                    continue;
                out.append(c.getName()).append('\t').append(c.getInstancesCount()).append('\t')
                   .append(c.getAllInstancesSize()).append('\n');
            }
        }
        System.out.print(out);
    }
}
