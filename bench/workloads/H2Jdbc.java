/* Benchmark workload: the H2 database engine (Debian's libh2-java, /usr/share/java/h2.jar)
 * driven through JDBC on an in-memory database.
 *
 *   java -cp <classes>:/usr/share/java/h2.jar H2Jdbc <orders> [<jdbc url>]
 *
 * Creates customers and orders, inserts <orders> orders in batches, builds an index, then runs
 * point queries by key, a grouped join, range scans over days and single-row updates, and
 * deletes a slice. Every value comes from a fixed-seed generator, so the one output line
 *   result: orders=<n> checksum=<hex>
 * is the same in every run; the bench harness compares it with the run without an agent. */
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.SplittableRandom;

public class H2Jdbc {
    static final String[] CITIES = {"Aarhus", "Bergen", "Cork", "Dresden", "Evora", "Faro", "Graz",
                                    "Haarlem", "Izmir", "Jena", "Kaunas", "Lyon", "Malaga", "Nantes"};

    static long checksum = 17;

    static void mix(long v) { checksum = checksum * 1_000_003L + v; }

    public static void main(String[] args) throws Exception {
        int orders = args.length > 0 ? Integer.parseInt(args[0]) : 200_000;
        String url = args.length > 1 ? args[1] : "jdbc:h2:mem:bench;DB_CLOSE_DELAY=0";
        int customers = Math.max(100, orders / 20);
        SplittableRandom rnd = new SplittableRandom(42);
        try (Connection c = DriverManager.getConnection(url, "sa", "")) {
            c.setAutoCommit(false);
            try (Statement s = c.createStatement()) {
                s.execute("CREATE TABLE customer(id INT PRIMARY KEY, name VARCHAR(40), city VARCHAR(20),"
                          + " balance BIGINT)");
                s.execute("CREATE TABLE orders(id INT PRIMARY KEY, customer_id INT, order_day INT,"
                          + " amount BIGINT, status VARCHAR(10), note VARCHAR(80))");
            }
            try (PreparedStatement p = c.prepareStatement("INSERT INTO customer VALUES (?, ?, ?, ?)")) {
                for (int i = 0; i < customers; i++) {
                    p.setInt(1, i);
                    p.setString(2, "customer-" + i + "-" + Integer.toHexString(rnd.nextInt()));
                    p.setString(3, CITIES[rnd.nextInt(CITIES.length)]);
                    p.setLong(4, rnd.nextInt(1_000_000));
                    p.addBatch();
                    if (i % 500 == 499)
                        p.executeBatch();
                }
                p.executeBatch();
            }
            try (PreparedStatement p = c.prepareStatement("INSERT INTO orders VALUES (?, ?, ?, ?, ?, ?)")) {
                for (int i = 0; i < orders; i++) {
                    p.setInt(1, i);
                    p.setInt(2, rnd.nextInt(customers));
                    p.setInt(3, rnd.nextInt(365));
                    p.setLong(4, 100 + rnd.nextInt(100_000));
                    p.setString(5, i % 7 == 0 ? "returned" : i % 3 == 0 ? "open" : "shipped");
                    p.setString(6, "order " + i + " for " + (i * 31 % 997) + " items");
                    p.addBatch();
                    if (i % 1000 == 999) {
                        p.executeBatch();
                        c.commit();
                    }
                }
                p.executeBatch();
                c.commit();
            }
            try (Statement s = c.createStatement()) {
                s.execute("CREATE INDEX orders_customer ON orders(customer_id)");
                s.execute("CREATE INDEX orders_day ON orders(order_day)");
            }
            c.commit();

            // Point queries through the primary key and the customer index.
            try (PreparedStatement byId = c.prepareStatement("SELECT amount, status FROM orders WHERE id = ?");
                 PreparedStatement byCustomer = c.prepareStatement(
                     "SELECT COUNT(*), COALESCE(SUM(amount), 0) FROM orders WHERE customer_id = ?")) {
                for (int i = 0; i < orders / 4; i++) {
                    byId.setInt(1, rnd.nextInt(orders));
                    try (ResultSet r = byId.executeQuery()) {
                        while (r.next())
                            mix(r.getLong(1) + r.getString(2).length());
                    }
                    if (i % 8 == 0) {
                        byCustomer.setInt(1, rnd.nextInt(customers));
                        try (ResultSet r = byCustomer.executeQuery()) {
                            r.next();
                            mix(r.getLong(1) * 31 + r.getLong(2));
                        }
                    }
                }
            }
            // Grouped joins over the whole table.
            try (Statement s = c.createStatement()) {
                for (int round = 0; round < 4; round++) {
                    try (ResultSet r = s.executeQuery(
                             "SELECT c.city, o.status, COUNT(*), SUM(o.amount), MAX(o.order_day) FROM orders o"
                             + " JOIN customer c ON c.id = o.customer_id WHERE o.order_day >= " + (round * 30)
                             + " GROUP BY c.city, o.status ORDER BY c.city, o.status")) {
                        while (r.next())
                            mix(r.getString(1).hashCode() + r.getString(2).hashCode() + r.getLong(3) * 7
                                + r.getLong(4) + r.getInt(5));
                    }
                }
            }
            // Range scans through the day index, sorted.
            try (PreparedStatement p = c.prepareStatement(
                     "SELECT id, amount FROM orders WHERE order_day BETWEEN ? AND ? ORDER BY amount DESC, id LIMIT 50")) {
                for (int i = 0; i < 400; i++) {
                    int from = rnd.nextInt(360);
                    p.setInt(1, from);
                    p.setInt(2, from + 3);
                    try (ResultSet r = p.executeQuery()) {
                        while (r.next())
                            mix(r.getInt(1) ^ r.getLong(2));
                    }
                }
            }
            // Single-row updates, committed in groups, and a delete.
            try (PreparedStatement p = c.prepareStatement("UPDATE customer SET balance = balance + ? WHERE id = ?")) {
                for (int i = 0; i < orders / 4; i++) {
                    p.setLong(1, rnd.nextInt(1000) - 500);
                    p.setInt(2, rnd.nextInt(customers));
                    mix(p.executeUpdate());
                    if (i % 200 == 199)
                        c.commit();
                }
                c.commit();
            }
            try (Statement s = c.createStatement()) {
                mix(s.executeUpdate("DELETE FROM orders WHERE status = 'returned' AND order_day < 100"));
                c.commit();
                try (ResultSet r = s.executeQuery("SELECT COUNT(*), SUM(balance) FROM customer")) {
                    r.next();
                    mix(r.getLong(1) + r.getLong(2));
                }
                try (ResultSet r = s.executeQuery("SELECT COUNT(*) FROM orders")) {
                    r.next();
                    mix(r.getLong(1));
                }
            }
        }
        System.out.println("result: orders=" + orders + " checksum=" + Long.toHexString(checksum));
    }
}
