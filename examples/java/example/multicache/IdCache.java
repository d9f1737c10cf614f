package example.multicache;

import java.util.HashMap;

public class IdCache {
    static HashMap<Long, Product> byId = new HashMap<>();

    static void init() { }

    static synchronized void put(Product p) { byId.put(p.id, p); }

    static synchronized int size() { return byId.size(); }
}
