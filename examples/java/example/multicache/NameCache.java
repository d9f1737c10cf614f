package example.multicache;

import java.util.HashMap;

public class NameCache {
    static HashMap<String, Product> byName = new HashMap<>();

    static void init() { }

    static synchronized void put(Product p) { byName.put(p.name, p); }

    static synchronized int size() { return byName.size(); }
}
