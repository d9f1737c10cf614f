import com.sun.management.HotSpotDiagnosticMXBean;
import java.lang.management.ManagementFactory;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * An application type that accumulates while the JDK containers holding its
 * data grow more bytes (tests/integration/test_leak_app.sh).  The truth, by
 * construction: 5,000 more app sessions per dump, never released, each
 * 40-odd bytes of its own holding a HashMap of 3 byte[100] values, an
 * ArrayList, a TreeMap and an ArrayDeque; more than six JDK types grow more
 * bytes than the sessions themselves.  Usage: SessionLeak OUT_PREFIX DUMPS.
 */
public final class SessionLeak {
    static final class Session {
        final Map<String, byte[]> attributes = new HashMap<>();
        final List<String> roles = new ArrayList<>();
        final TreeMap<String, String> prefs = new TreeMap<>();
        final ArrayDeque<Integer> recent = new ArrayDeque<>();
        final long id;

        Session(long id) {
            this.id = id;
            for (int k = 0; k < 3; k++) attributes.put("attr-" + id + "-" + k, new byte[100]);
            roles.add("role-" + id);
            roles.add("user");
            prefs.put("lang-" + id, "en");
            recent.add((int) id);
            recent.add((int) id + 100000);
        }
    }

    static final List<Session> SESSIONS = new ArrayList<>();

    public static void main(String[] args) throws Exception {
        HotSpotDiagnosticMXBean bean = ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class);
        int dumps = Integer.parseInt(args[1]);
        long id = 0;
        for (int d = 0; d < dumps; d++) {
            for (int i = 0; i < 5000; i++) SESSIONS.add(new Session(id++));
            bean.dumpHeap(args[0] + "-" + d + ".hprof", true);
        }
        System.out.println("sessions " + SESSIONS.size());
    }
}
