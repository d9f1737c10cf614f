import java.io.*;
import java.util.*;
// For tests/integration/test_agent_count.sh, counter inlining (inline=on):
// the clones it adds are methods Java serialization would hash into the
// default serialVersionUID of a Serializable class that declares none; the
// agent declares the original value instead.  This program prints the
// serialVersionUID of Serializable classes that get clones (a public
// constructor, a static and a final method; a nested class whose
// modifiers come from InnerClasses; interfaces, fields of every kind, a
// static initializer; an enum; a subclass of a JDK Serializable class, an
// exception) and of one that declares its own: the same with and without
// the agent.  Then a round trip through a stream written before.
public class SerialIds {
  static Object sink;
  public static class Plain implements Serializable, Comparable<Plain> {
    public int a; protected transient Object b; private static Object c; private transient int d; static final long e = 3;
    volatile String f; private String g;
    static { sink = new int[1]; }
    public Plain() { b = new Object(); }
    public Plain(int x) { this(); a = x; sink = new long[1]; }
    public static Plain make(int x) { Plain p = new Plain(x); sink = new char[1]; return p; }
    public final List<Object> list() { List<Object> l = new ArrayList<>(); l.add(new Object()); return l; }
    private Object hidden() { return new Object(); }
    public int compareTo(Plain o) { return a - o.a; }
  }
  static final class Nested extends ArrayList<Object> implements Cloneable {
    Nested(int n) { super(n); sink = new byte[1]; }
    static Nested of() { return new Nested(3); }
  }
  public static class Failure extends RuntimeException {
    public Failure(String m) { super(m); sink = new StringBuilder(m); }
  }
  enum Kind { A, B; final Object o = new Object(); }
  public static class Declared implements Serializable {
    private static final long serialVersionUID = 42L;
    public Declared() { sink = new Object[1]; }
  }
  public static void main(String[] args) throws Exception {
    Class<?>[] cs = { Plain.class, Nested.class, Failure.class, Kind.class, Declared.class };
    for (Class<?> c : cs)
      System.out.println(c.getName() + " " + ObjectStreamClass.lookup(c).getSerialVersionUID());
    for (int i = 0; i < 3; i++) { sink = Plain.make(i).list(); sink = Nested.of(); sink = new Failure("x"); }
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (ObjectOutputStream out = new ObjectOutputStream(bytes)) { out.writeObject(Plain.make(7)); }
    try (ObjectInputStream in = new ObjectInputStream(new ByteArrayInputStream(bytes.toByteArray()))) {
      System.out.println("round trip " + ((Plain) in.readObject()).a);
    }
  }
}
