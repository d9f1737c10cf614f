import com.google.common.cache.Cache;
import com.google.common.cache.CacheBuilder;
import java.io.*;
import java.nio.file.*;
import java.util.concurrent.locks.ReentrantLock;

// For tests/integration/test_agent_fields.sh: classes whose JVMTI field
// indexes count fields of JDK superclasses and of interfaces (with static
// fields, some of object type) at several levels, so that a field name
// taken from the wrong slot shows.  Every field of interest points at an
// object of a type of its own (or a known JDK type), so the test can check
// a field by the type of its target.  All of it hangs off static fields,
// for the recording's last graph and for a heap dump of the same process.
//
// Holds the objects, System.gc()s (a recorded graph), writes READY_FILE and
// waits until DONE_FILE exists (the test takes a jcmd heap dump meanwhile).
public class FieldNames {
  // ---- interfaces with static fields, superinterfaces of superinterfaces ----
  interface Base { Object BASE_TOKEN = new BaseToken(); long BASE_N = System.nanoTime(); Object BASE_TOKEN2 = new BaseToken2(); }
  interface Mid extends Base { Object MID_TOKEN = new MidToken(); int MID_N = Integer.parseInt("7"); }
  interface Side extends Serializable { Object SIDE_TOKEN = new SideToken(); }
  interface Empty {}
  interface Top extends Mid, Empty { Object TOP_TOKEN = new TopToken(); }

  static class BaseToken {} static class BaseToken2 {} static class MidToken {} static class SideToken {}
  static class TopToken {}
  static class GuardPayload {} static class GuardOther {} static class GuardStatic {} static class GuardStatic2 {}
  static class Guard2Payload {} static class Guard2Static {} static class OutPayload {} static class OutStatic {}
  static class Value { final int v; Value(int v) { this.v = v; } }

  // a JDK superclass (ReentrantLock: Lock, Serializable; fields
  // serialVersionUID, sync) under interfaces with fields on two levels
  static class Guard extends ReentrantLock implements Top {
    static final Object GUARD_STATIC = new GuardStatic();
    int n = 3;
    final GuardPayload payload = new GuardPayload();
    long m = 4;
    static Object guardStatic2 = new GuardStatic2();
    final GuardOther other = new GuardOther();
  }
  // one more level, with an interface of its own that has fields
  static class Guard2 extends Guard implements Side, Comparable<Guard2> {
    static Object G2_STATIC = new Guard2Static();
    final Guard2Payload p2 = new Guard2Payload();
    public int compareTo(Guard2 o) { return 0; }
  }
  // a JDK superclass whose own interface (ObjectStreamConstants) declares
  // 40-odd static fields, two of them objects
  static class Out extends ObjectOutputStream implements Side {
    static Object OUT_STATIC = new OutStatic();
    final OutPayload mine = new OutPayload();
    Out() throws IOException { super(new ByteArrayOutputStream()); }
  }

  static Cache<String, Value> CACHE;
  static Guard GUARD;
  static Guard2 GUARD2;
  static Out OUT;
  static Object[] TOKENS;

  public static void main(String[] args) throws Exception {
    CACHE = CacheBuilder.newBuilder().build();
    for (int i = 0; i < 64; i++)
      CACHE.put("k" + i, new Value(i));
    GUARD = new Guard();
    GUARD2 = new Guard2();
    OUT = new Out();
    // interface statics exist once the interface is initialized, which
    // initializing an implementing class does not do
    TOKENS = new Object[] { Base.BASE_TOKEN, Mid.MID_TOKEN, Side.SIDE_TOKEN, Top.TOP_TOKEN,
                            ObjectStreamConstants.SUBSTITUTION_PERMISSION };
    System.gc();
    Files.write(Paths.get(args[0]), "ready\n".getBytes());
    Path done = Paths.get(args[1]);
    for (int i = 0; i < 3000 && !Files.exists(done); i++)
      Thread.sleep(20);
    System.out.println("segments held: " + CACHE.size());
  }
}
