import java.lang.reflect.*;
import java.util.*;
// For tests/integration/test_agent_count.sh: exceptions the generated
// programs do not make, each cutting allocation paths short: through
// reflection (the first calls go through a native frame), out of a static
// initializer, out of a super constructor and a constructor's own code,
// out of a thread's run
// (uncaught), through library code (a comparator throwing inside
// List.sort) and a recursion whose middle frame catches.  mode=count must
// count what mode=full records.  No catch block allocates a type the VM
// makes while throwing (byte[], String, Object[] of stack traces).
public class ExcMix {
  static Object sink;
  public static int target(int i) { sink = new int[1]; if (i % 2 == 0) throw new IllegalStateException(); sink = new long[1]; return i; }
  static int viaReflection(Method m, int i) throws Exception {
    sink = new Object();
    try { Object r = m.invoke(null, i); sink = new StringBuilder(); return (Integer) r; }
    catch (InvocationTargetException e) { sink = new Object[1]; return -1; }
  }
  static class Bad { static int v; static { sink = new char[2]; if (Boolean.getBoolean("never") == false) { v = 1 / (v - v); } } }
  static int clinit() { sink = new short[1]; try { return Bad.v; } catch (ExceptionInInitializerError e) { sink = new BitSet(); return 1; } catch (NoClassDefFoundError e) { sink = new ArrayDeque<Object>(); return 2; } }
  static class Base { Base(int i) { sink = new float[1]; if (i % 3 == 0) throw new IllegalArgumentException(); sink = new double[1]; } }
  static class Sub extends Base { Sub(int i) { super(i); sink = new ArrayList<Object>(); } }
  static int ctor(int i) { sink = new HashMap<Object, Object>(); try { sink = new Sub(i); sink = new TreeMap<Object, Object>(); return 0; } catch (IllegalArgumentException e) { sink = new LinkedList<Object>(); return 1; } }
  // constructors: an allocation in super()'s arguments (one counter per
  // site), and path counters after super() with the constructor's own
  // handler and an exception leaving it mid-path
  static class Mid extends Base { Mid(int i) { super(new int[1].length + i); try { sink = new long[2]; if (i % 5 == 0) throw new IllegalStateException(); sink = new float[2]; } catch (IllegalStateException e) { sink = new char[2]; } } }
  static class Own { Own(int i) { try { sink = new int[2]; if (i % 4 == 0) throw new IllegalStateException(); sink = new int[3]; } catch (IllegalStateException e) { sink = new Object[2]; } if (i % 7 == 0) throw new UnsupportedOperationException(); sink = new double[2]; } }
  static int ctors(int i) { try { sink = new Own(i); sink = new Mid(i); return 0; } catch (RuntimeException e) { sink = new Vector<Object>(); return 1; } }
  static int sorted(int i) {
    List<Integer> l = new ArrayList<>(List.of(3, 1, 2, i));
    try { l.sort((a, b) -> { sink = new int[3]; if (a == 7 || b == 7) throw new UnsupportedOperationException(); return a - b; }); sink = new long[3]; return 0; }
    catch (UnsupportedOperationException e) { sink = new Object[3]; return 1; }
  }
  static int rec(int d, int i) {
    sink = new int[4];
    if (d == 0) { if (i % 2 == 1) throw new RuntimeException(); return 0; }
    if (d == 2) { try { int r = rec(d - 1, i); sink = new long[4]; return r; } catch (RuntimeException e) { sink = new Object[4]; return 1; } }
    int r = rec(d - 1, i); sink = new char[4]; return r;
  }
  public static void main(String[] a) throws Exception {
    Method m = ExcMix.class.getMethod("target", int.class);
    long s = 0;
    for (int i = 0; i < 40; i++) s += viaReflection(m, i);
    for (int i = 0; i < 3; i++) s += clinit();
    for (int i = 0; i < 30; i++) s += ctor(i);
    for (int i = 0; i < 30; i++) s += ctors(i);
    for (int i = 0; i < 20; i++) s += sorted(i % 9);
    for (int i = 0; i < 30; i++) s += rec(5, i);
    Thread t = new Thread(() -> { sink = new int[5]; if (sink != null) throw new IllegalStateException("thread dies"); sink = new long[5]; });
    t.setUncaughtExceptionHandler((th, e) -> { });
    t.start(); t.join();
    System.out.println(s);
  }
}
