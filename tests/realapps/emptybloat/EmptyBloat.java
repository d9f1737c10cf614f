package realapps.emptybloat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import realapps.Pause;

/*
 * TRUTH (written before heapfs was run on this program).
 *
 * Planted problem: bloat from empty collections.  An order importer reads
 * JSON lines with Jackson into Order objects; every Order is born with a
 * HashMap of tags and an ArrayList of notes, which almost no order ever
 * fills.  Orders are kept in the static list
 * realapps.emptybloat.EmptyBloat.ORDERS (an ArrayList, sized in advance).
 * Each order also keeps the raw JSON as a Jackson ObjectNode with two
 * fields (a LinkedHashMap of 2 entries, TextNode and IntNode values):
 * value wrappers, not empty collections.
 *
 * Usage: EmptyBloat PHASES N.  Pause "base" after the ObjectMapper has
 * parsed one line (warm) and with no Order alive; then, for
 * k = 1..PHASES, N more orders and pause "k".  At pause k exactly:
 *   - k*N instances of realapps.emptybloat.EmptyBloat$Order;
 *   - k*N more empty java.util.HashMap (new HashMap<>(): size 0, table
 *     null, 48 bytes each) and k*N more empty java.util.ArrayList (new
 *     ArrayList<>(): size 0, the JDK's shared empty array, 24 bytes each)
 *     than at "base", all reachable (held by the orders);
 *   - k*N ObjectNodes, each a LinkedHashMap of 2 entries: never reported
 *     as an empty or one-element collection;
 *   - every order is reachable through static EmptyBloat.ORDERS only.
 * suspects must name: empty java.util.HashMap with a count that grows by
 * exactly N per phase (the JDK's own empty maps are the rest), the same
 * for java.util.ArrayList, and never ObjectNode, TextNode or IntNode as a
 * collection; the biggest retainer is static EmptyBloat.ORDERS.
 */
public final class EmptyBloat {
    /** One imported order, as Jackson binds it. */
    public static final class Order {
        public long id;
        public String customer;
        public Map<String, String> tags = new HashMap<>();
        public List<String> notes = new ArrayList<>();
        public ObjectNode raw;
    }

    static final List<Order> ORDERS = new ArrayList<>(1 << 20);

    public static void main(String[] args) throws IOException {
        int phases = Integer.parseInt(args[0]);
        int n = Integer.parseInt(args[1]);
        ObjectMapper mapper = new ObjectMapper();
        Order warm = mapper.readValue("{\"id\":0,\"customer\":\"warm\"}", Order.class);
        mapper.readTree("{\"id\":0,\"customer\":\"warm\"}");
        warm = null;
        Pause.point("base");
        long id = 0;
        for (int k = 1; k <= phases; k++) {
            for (int i = 0; i < n; i++) {
                String line = "{\"id\":" + id + ",\"customer\":\"c" + (id % 977) + "\"}";
                Order o = mapper.readValue(line, Order.class);
                o.raw = (ObjectNode) mapper.readTree(line);
                ORDERS.add(o);
                id++;
            }
            System.out.println("planted " + k + " realapps.emptybloat.EmptyBloat$Order " + ORDERS.size());
            Pause.point(Integer.toString(k));
        }
    }
}
