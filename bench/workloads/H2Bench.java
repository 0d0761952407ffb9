/* An H2 database workload for heap=sites (bench/sites-overhead.sh), on Debian's libh2-java
 * (/usr/share/java/h2.jar): an in-memory database with customers and orders, batched inserts,
 * joins with grouping, point queries, updates and deletes. Argument: scale (default 1). */
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;

public class H2Bench {
    public static void main(String[] args) throws Exception {
        int scale = args.length > 0 ? Integer.parseInt(args[0]) : 1;
        int customers = 5_000 * scale, orders = 30_000 * scale;
        long t0 = System.nanoTime(), check = 0;
        try (Connection c = DriverManager.getConnection("jdbc:h2:mem:bench", "sa", "")) {
            try (Statement s = c.createStatement()) {
                s.execute("CREATE TABLE customer(id INT PRIMARY KEY, name VARCHAR(64), city VARCHAR(32))");
                s.execute("CREATE TABLE orders(id INT PRIMARY KEY, customer INT, amount DECIMAL(12,2), "
                        + "note VARCHAR(128))");
                s.execute("CREATE INDEX orders_customer ON orders(customer)");
            }
            try (PreparedStatement p = c.prepareStatement("INSERT INTO customer VALUES(?, ?, ?)")) {
                for (int i = 0; i < customers; i++) {
                    p.setInt(1, i);
                    p.setString(2, "customer " + i);
                    p.setString(3, "city" + (i % 97));
                    p.addBatch();
                    if (i % 500 == 499)
                        p.executeBatch();
                }
                p.executeBatch();
            }
            try (PreparedStatement p = c.prepareStatement("INSERT INTO orders VALUES(?, ?, ?, ?)")) {
                for (int i = 0; i < orders; i++) {
                    p.setInt(1, i);
                    p.setInt(2, (i * 7919) % customers);
                    p.setBigDecimal(3, java.math.BigDecimal.valueOf(i % 10_000, 2));
                    p.setString(4, "order " + i + " of " + (i % 13));
                    p.addBatch();
                    if (i % 500 == 499)
                        p.executeBatch();
                }
                p.executeBatch();
            }
            try (Statement s = c.createStatement()) {
                for (int round = 0; round < 6; round++) {
                    try (ResultSet r = s.executeQuery("SELECT c.city, COUNT(*), SUM(o.amount) FROM customer c "
                            + "JOIN orders o ON o.customer = c.id GROUP BY c.city ORDER BY 3 DESC")) {
                        while (r.next())
                            check += r.getLong(2);
                    }
                }
            }
            try (PreparedStatement p = c.prepareStatement(
                    "SELECT o.id, o.amount, c.name FROM orders o JOIN customer c ON c.id = o.customer WHERE c.id = ?")) {
                for (int i = 0; i < 5_000 * scale; i++) {
                    p.setInt(1, (i * 31) % customers);
                    try (ResultSet r = p.executeQuery()) {
                        while (r.next())
                            check += r.getString(3).length();
                    }
                }
            }
            try (Statement s = c.createStatement()) {
                check += s.executeUpdate("UPDATE orders SET note = CONCAT(note, ' updated') WHERE MOD(id, 3) = 0");
                check += s.executeUpdate("DELETE FROM orders WHERE MOD(id, 5) = 0");
                try (ResultSet r = s.executeQuery("SELECT COUNT(*), SUM(LENGTH(note)) FROM orders")) {
                    r.next();
                    check += r.getLong(1) + r.getLong(2);
                }
            }
        }
        System.out.println("ms " + (System.nanoTime() - t0) / 1_000_000 + " check " + check);
    }
}
