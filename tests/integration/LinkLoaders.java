import java.io.File;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;

/* Clone links across class loaders (mode=count, inline=on, profile=FILE).
 * LinkCaller (tests/integration/LinkCaller.java, compiled into its own
 * directory, the first argument) is defined by a URLClassLoader whose
 * parent, the application loader, defines LinkLoaders.Target: LinkCaller
 * is loaded first, so its calls of Target.make wait for a clone that
 * another loader registers.  With the profile's link the next run's
 * LinkCaller calls the clone at once, and the agent learns from the
 * JVM which Target LinkCaller's loader resolved (JVMTI
 * GetClassLoaderClasses) to count what that clone makes.
 * Arguments: directory, rounds.  Prints a checksum. */
public class LinkLoaders {
	public static void main(String[] a) throws Exception {
		URL dir = new File(a[0]).toURI().toURL();
		try (URLClassLoader child = new URLClassLoader(new URL[] { dir }, LinkLoaders.class.getClassLoader())) {
			Class<?> caller = child.loadClass("LinkCaller");
			if (caller.getClassLoader() != child)
				throw new IllegalStateException("LinkCaller is on the application class path");
			Method run = caller.getMethod("run", int.class);
			System.out.println(run.invoke(null, Integer.parseInt(a[1])));
		}
	}

	public static final class Target {
		public static int[] make(int i) {
			return new int[i & 7];
		}
	}
}
