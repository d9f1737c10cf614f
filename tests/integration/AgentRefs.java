import java.io.File;
import java.lang.ref.SoftReference;
import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.function.Supplier;

/* Objects that only a Reference or a java.lang.Class field keeps alive
 * (tests/integration/test_agent_refs.sh).  TRUTH, with args N M:
 *   - N AgentRefs$SoftHeld, each with one AgentRefs$SoftLeaf (and its
 *     long[3]), reachable only through the N SoftReferences of SOFTS
 *     (-Xmx large, no memory pressure: never cleared);
 *   - M AgentRefs$WeakHeld held by STRONG and by the M WeakReferences of
 *     WEAKS (never cleared: strongly reachable);
 *   - AgentRefs$Color[]: $VALUES and the clone EnumSet.allOf caches in
 *     Class.enumConstants (only that field holds it);
 *   - java.lang.Class$ReflectionData of AgentRefs$Probe, held only by the
 *     SoftReference in Class.reflectionData;
 *   - a lambda: a hidden class, AgentRefs$$Lambda$N+0x... in a dump. */
public class AgentRefs {
	static class SoftHeld { SoftLeaf leaf = new SoftLeaf(); }
	static class SoftLeaf { long[] data = new long[3]; }
	static class WeakHeld { }
	static class Probe { public void m() { } public void n() { } }
	enum Color { RED, GREEN, BLUE }

	static final List<SoftReference<SoftHeld>> SOFTS = new ArrayList<>();
	static final List<WeakReference<WeakHeld>> WEAKS = new ArrayList<>();
	static final List<WeakHeld> STRONG = new ArrayList<>();
	static Supplier<String> LAMBDA;

	public static void main(String[] a) throws Exception {
		int n = Integer.parseInt(a[2]), m = Integer.parseInt(a[3]);
		for (int i = 0; i < n; i++)
			SOFTS.add(new SoftReference<>(new SoftHeld()));
		for (int i = 0; i < m; i++) {
			WeakHeld w = new WeakHeld();
			STRONG.add(w);
			WEAKS.add(new WeakReference<>(w));
		}
		System.out.println(EnumSet.allOf(Color.class).size());
		System.out.println(Probe.class.getDeclaredMethods().length);
		LAMBDA = () -> "x";
		System.gc();
		new File(a[0]).createNewFile();
		File done = new File(a[1]);
		while (!done.exists())
			Thread.sleep(20);
		System.out.println(SOFTS.size() + WEAKS.size() + STRONG.size() + LAMBDA.get());
	}
}
