package example.dumpgen;

import java.io.File;
import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.List;
import org.graalvm.visualvm.lib.jfluid.heap.Heap;
import org.graalvm.visualvm.lib.jfluid.heap.HeapFactory;
import org.graalvm.visualvm.lib.jfluid.heap.Instance;
import org.graalvm.visualvm.lib.jfluid.heap.JavaClass;

/**
 * VisualVM's heap library (Debian package visualvm,
 * org-graalvm-visualvm-lib-jfluid-heap.jar) doing what tests/bench/bench_vvm.sh
 * times heapfs doing, from a cold start on a dump:
 *   histogram  the class histogram: JavaClass.getInstancesCount and
 *              getAllInstancesSize per class
 *   retained   every object's retained size (HprofHeap.computeRetainedSize,
 *              through Heap.getBiggestObjectsByRetainedSize(100), heapfs's
 *              dominators/top)
 *   bytype     the by-type table with retained sizes:
 *              JavaClass.getRetainedSizeByClass per class
 *
 * Usage: java -cp DIR:JAR example.dumpgen.VvmBench DUMP OUTDIR STAGE...
 * After each stage prints on stdout
 *   stage NAME TAB wall_s TAB cpu_s TAB peak_rss_kB
 * wall and CPU seconds counted from the JVM's start (JVM start-up included,
 * as heapfs's are from its process's start), CPU of every thread (GC and
 * JIT included), peak RSS the process's VmHWM so far.  Writes OUTDIR/NAME:
 * histogram: class TAB count TAB bytes; retained: id TAB class TAB retained size of
 * the 100 largest; bytype: class TAB count TAB retained size.
 */
public final class VvmBench {
    public static void main(String[] args) throws Exception {
        Heap heap = HeapFactory.createHeap(new File(args[0]));
        File dir = new File(args[1]);
        for (int a = 2; a < args.length; a++) {
            String stage = args[a];
            StringBuilder out = new StringBuilder();
            switch (stage) {
            case "histogram":
                for (JavaClass c : heap.getAllClasses())
                    if (c.getInstancesCount() > 0)
                        out.append(c.getName()).append('\t').append(c.getInstancesCount()).append('\t')
                           .append(c.getAllInstancesSize()).append('\n');
                break;
            case "retained":
                List<Instance> top = heap.getBiggestObjectsByRetainedSize(100);
                for (Instance i : top)
                    out.append(Long.toUnsignedString(i.getInstanceId())).append('\t')
                       .append(i.getJavaClass().getName()).append('\t').append(i.getRetainedSize()).append('\n');
                break;
            case "bytype":
                for (JavaClass c : heap.getAllClasses())
                    if (c.getInstancesCount() > 0)
                        out.append(c.getName()).append('\t').append(c.getInstancesCount()).append('\t')
                           .append(c.getRetainedSizeByClass()).append('\n');
                break;
            default:
                throw new IllegalArgumentException("unknown stage " + stage);
            }
            try (PrintWriter w = new PrintWriter(new File(dir, stage))) {
                w.print(out);
            }
            long wallMs = System.currentTimeMillis() - ManagementFactory.getRuntimeMXBean().getStartTime();
            long cpuNs = ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
                             .getProcessCpuTime();
            System.out.printf("stage %s\t%.2f\t%.2f\t%d%n", stage, wallMs / 1e3, cpuNs / 1e9, hwm());
            System.out.flush();
        }
    }

    /** VmHWM of this process, kB. */
    static long hwm() throws Exception {
        for (String l : Files.readAllLines(Paths.get("/proc/self/status")))
            if (l.startsWith("VmHWM:"))
                return Long.parseLong(l.replaceAll("[^0-9]", ""));
        return -1;
    }
}
