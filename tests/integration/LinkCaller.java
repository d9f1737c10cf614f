/* Calls LinkLoaders.Target.make from a block that allocates (LinkLoaders.java). */
public class LinkCaller {
	public static long run(int n) {
		long sum = 0;
		for (int i = 0; i < n; i++) {
			Object[] box = new Object[1];
			box[0] = LinkLoaders.Target.make(i);
			sum += ((int[]) box[0]).length;
		}
		return sum;
	}
}
