package example.dumpgen;

import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.sql.Timestamp;

/**
 * A real application's heap for tests/bench/bench_vvm.sh: the H2 database
 * (Debian package libh2-java, /usr/share/java/h2.jar) holding an in-memory
 * shop: ROWS orders, ROWS / 20 customers, a secondary index on the orders'
 * customer and a status column, then a few queries, so that the heap holds
 * H2's MVStore B-tree pages, rows, values, its caches and the JDBC session
 * as an application using H2 would.
 *
 * Usage: java -cp DIR:/usr/share/java/h2.jar example.dumpgen.H2Rows ROWS
 * (run under example.dumpgen.Hold to keep the JVM for jcmd GC.heap_dump).
 * The connection stays open in CONN, which keeps the database alive.
 */
public final class H2Rows {
    static Connection CONN;

    public static void main(String[] args) throws Exception {
        int rows = args.length > 0 ? Integer.parseInt(args[0]) : 1000000;
        int customers = Math.max(1, rows / 20);
        CONN = DriverManager.getConnection("jdbc:h2:mem:shop;DB_CLOSE_DELAY=-1", "sa", "");
        String[] cities = { "Linz", "Wien", "Graz", "Salzburg", "Innsbruck", "Bregenz", "Klagenfurt" };
        String[] states = { "new", "paid", "shipped", "delivered", "returned" };
        try (Statement s = CONN.createStatement()) {
            s.execute("CREATE TABLE customer(id INT PRIMARY KEY, name VARCHAR(64), city VARCHAR(32), since DATE)");
            s.execute("CREATE TABLE orders(id BIGINT PRIMARY KEY, customer_id INT, amount DECIMAL(12,2), "
                      + "created TIMESTAMP, status VARCHAR(16), note VARCHAR(80))");
            s.execute("CREATE INDEX orders_customer ON orders(customer_id)");
            s.execute("CREATE INDEX orders_status ON orders(status)");
        }
        CONN.setAutoCommit(false);
        try (PreparedStatement p = CONN.prepareStatement("INSERT INTO customer VALUES (?, ?, ?, ?)")) {
            for (int c = 0; c < customers; c++) {
                p.setInt(1, c);
                p.setString(2, "customer-" + c);
                p.setString(3, cities[c % cities.length]);
                p.setDate(4, new java.sql.Date(1500000000000L + c * 86400000L % 2000000000L));
                p.addBatch();
                if (c % 1000 == 999)
                    p.executeBatch();
            }
            p.executeBatch();
        }
        long t = 1700000000000L;
        try (PreparedStatement p = CONN.prepareStatement("INSERT INTO orders VALUES (?, ?, ?, ?, ?, ?)")) {
            for (int o = 0; o < rows; o++) {
                p.setLong(1, o);
                p.setInt(2, (int) ((o * 2654435761L) % customers));
                p.setBigDecimal(3, BigDecimal.valueOf((o * 7919L) % 100000, 2));
                p.setTimestamp(4, new Timestamp(t + o * 1000L));
                p.setString(5, states[o % states.length]);
                p.setString(6, o % 3 == 0 ? "gift wrap, deliver after 18:00, order " + o : null);
                p.addBatch();
                if (o % 1000 == 999) {
                    p.executeBatch();
                    CONN.commit();
                }
            }
            p.executeBatch();
            CONN.commit();
        }
        try (Statement s = CONN.createStatement();
             ResultSet r = s.executeQuery("SELECT c.city, COUNT(*), SUM(o.amount) FROM orders o "
                                          + "JOIN customer c ON c.id = o.customer_id GROUP BY c.city ORDER BY c.city")) {
            while (r.next())
                System.out.println("city " + r.getString(1) + " " + r.getLong(2) + " " + r.getBigDecimal(3));
        }
        try (Statement s = CONN.createStatement();
             ResultSet r = s.executeQuery("SELECT COUNT(*) FROM orders WHERE status = 'returned'")) {
            r.next();
            System.out.println("returned " + r.getLong(1));
        }
        System.out.println("orders " + rows + " customers " + customers);
    }
}
