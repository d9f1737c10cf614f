import java.lang.reflect.*;
import java.util.*;
// For tests/integration/test_agent_count.sh, counter inlining (inline=on):
// constructors and static, private or final methods whose allocations are
// the same on every normal completion get a clone that counts nothing,
// and callers loaded after them call the clone and count its allocations
// with their own.  The callee classes are loaded first (Class.forName) so
// that Calls, loaded last, sees every clone.  Cases: a clone called from another class, from a subclass's
// super() and from a this(); an exception leaving a clone after it
// allocated (its handler counts what it made), before it allocated, and
// out of a super() clone; constructors that get no clone (an allocation
// on a branch, in a loop, before super(), with a handler of their own);
// a nestmate's private constructor; reflection on a class with a clone
// (getDeclaredConstructors resolves heapfs.Inl, newInstance calls the
// original, which counts itself); a clone called in a loop; a static and a
// final method.  Calls are redirected only where an allocation of the
// caller is in the same block.  mode=count must count what mode=full
// records.
public class InlineMix {
  static Object sink;
  public static class Node {
    List<Object> kids; Object tag; int v;
    public Node(int v) { this.v = v; kids = new ArrayList<>(2); tag = new Object(); }
    public Node(int v, boolean b) { this(v); }
    public Node() { this(7); sink = new int[1]; }
    public final List<Object> copy() { List<Object> c = new ArrayList<>(kids); c.add(new StringBuilder()); return c; }
    public static Object[] pair(int i) { Object[] a = new Object[2]; a[i & 1] = new Object(); return a; }
  }
  public static class Leaf extends Node { int[] data; public Leaf(int v) { super(v); data = new int[4]; } }
  public static class Thrower {
    Object a, b;
    public Thrower(int x) { a = new Object(); if (x % 7 == 0) throw new IllegalStateException(); b = new StringBuilder(); }
  }
  public static class Early { Object a; public Early(int x) { if (x % 5 == 0) throw new IllegalArgumentException(); a = new long[2]; } }
  public static class SubThrower extends Thrower { Object c; public SubThrower(int x) { super(x); c = new char[3]; } }
  public static class Branchy { Object o; public Branchy(int x) { if (x > 0) o = new Object(); } }
  public static class Loopy { Object[] o = new Object[3]; public Loopy(int n) { for (int i = 0; i < n % 3; i++) o[i] = new Object(); } }
  public static class ArgAlloc extends Node { public ArgAlloc(int v) { super(new int[v % 3 + 1].length); sink = new short[1]; } }
  public static class OwnHandler { Object o; public OwnHandler(int x) { try { o = new byte[1]; if (x % 4 == 0) throw new RuntimeException(); } catch (RuntimeException e) { o = new float[1]; } } }
  private static class Priv { Object o; private Priv() { o = new double[1]; } }

  public static void main(String[] args) throws Exception {
    for (String n : new String[] { "Node", "Leaf", "Thrower", "Early", "SubThrower", "Branchy", "Loopy", "ArgAlloc",
                                   "OwnHandler", "Priv" })
      Class.forName("InlineMix$" + n);
    Class.forName("InlineMix$Calls").getMethod("run").invoke(null);
  }

  public static class Calls {
    static int nest(int i) { Priv p = new Priv(); return p.o == null ? 0 : i & 1; }
    public static void run() throws Exception {
      long s = 0;
      int caught = 0;
      for (int i = 0; i < 1000; i++) {
        Node n = new Node(i); s += n.v;
        Leaf l = new Leaf(i); s += l.data.length;
        Node m = new Node(i, true); s += m.v;
        s += new Node().v;
        try { Thrower t = new Thrower(i); s += t.b == null ? 0 : 1; } catch (IllegalStateException e) { caught++; }
        try { SubThrower t = new SubThrower(i); s += t.c == null ? 0 : 1; } catch (IllegalStateException e) { caught++; }
        try { Early e = new Early(i); s += e.a == null ? 0 : 1; } catch (IllegalArgumentException e) { caught++; }
        s += new Branchy(i % 3).o == null ? 0 : 1;
        s += new Loopy(i).o.length;
        s += new ArgAlloc(i).v;
        s += new OwnHandler(i).o == null ? 0 : 1;
        s += nest(i);
        for (int k = 0; k < i % 4; k++)
          s += new Node(k).kids.size();
        Object[] p = Node.pair(i); sink = new short[2]; s += p.length;
        List<Object> c = n.copy(); sink = new byte[2]; s += c.size();
        if (i % 2 == 0)
          s += Node.pair(i).length; /* a block of its own, with no allocation: not redirected */
      }
      Constructor<?>[] cs = Node.class.getDeclaredConstructors();
      s += cs.length > 0 ? 1 : 0;
      for (int i = 0; i < 10; i++)
        s += ((Node) Node.class.getConstructor(int.class).newInstance(i)).v;
      System.out.println(s + " " + caught);
    }
  }
}
