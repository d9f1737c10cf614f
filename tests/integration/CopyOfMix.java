import java.util.Arrays;

// For tests/integration/test_agent_count.sh: arrays made by the JDK's
// allocating intrinsics (mode=count, jdk=on).  Where C2 compiles a call of
// Arrays.copyOf(T[], int, Class) or Arrays.copyOfRange(T[], int, int,
// Class), it allocates the copy itself and their bytecode does not run, so
// a counter inside them misses that copy.  By construction,
// single-threaded, every copy an Object[] kept in a static slot (it
// escapes: no scalar replacement):
//   grow() calls Arrays.copyOf(Object[], int) A times: A copies made by
//     the 3-argument copyOf that Arrays.copyOf(T[], int) calls;
//   direct() calls the 3-argument copyOf itself B times;
//   range() calls copyOfRange(Object[], int, int, Class) C times.
// A, B, C from the arguments (10^5 each in the test: C2 compiles the
// loops).  main allocates the three source arrays itself.
public class CopyOfMix {
	static final Object[] keep = new Object[3];

	static void grow(Object[] a, int n) {
		for (int i = 0; i < n; i++)
			keep[0] = Arrays.copyOf(a, 4 + (i & 3));
	}

	static void direct(Object[] a, int n) {
		for (int i = 0; i < n; i++)
			keep[1] = Arrays.copyOf(a, 2 + (i & 1), Object[].class);
	}

	static void range(Object[] a, int n) {
		for (int i = 0; i < n; i++)
			keep[2] = Arrays.copyOfRange(a, 1, 3 + (i & 1), Object[].class);
	}

	public static void main(String[] args) {
		grow(new Object[3], Integer.parseInt(args[0]));
		direct(new Object[2], Integer.parseInt(args[1]));
		range(new Object[5], Integer.parseInt(args[2]));
		System.out.println(((Object[]) keep[0]).length + " " + ((Object[]) keep[1]).length + " "
				   + ((Object[]) keep[2]).length);
	}
}
