import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;

/**
 * A small JDBC program on H2 (in memory), for cpu=times with -Xverify:all: a real library with
 * its own class loading, reflection and exceptions. Needs h2.jar on the class path. Prints
 * "rows 500 sum 125250 groups 7".
 */
public class CpuTimesJdbc {
    public static void main(String[] args) throws Exception {
        try (Connection c = DriverManager.getConnection("jdbc:h2:mem:cputimes", "sa", "")) {
            try (Statement s = c.createStatement()) {
                s.execute("CREATE TABLE item(id INT PRIMARY KEY, name VARCHAR(40), grp INT)");
            }
            try (PreparedStatement p = c.prepareStatement("INSERT INTO item VALUES (?, ?, ?)")) {
                for (int i = 1; i <= 500; i++) {
                    p.setInt(1, i);
                    p.setString(2, "item-" + i);
                    p.setInt(3, i % 7);
                    p.executeUpdate();
                }
            }
            long rows = 0, sum = 0, groups = 0;
            try (Statement s = c.createStatement();
                 ResultSet r = s.executeQuery("SELECT COUNT(*), SUM(id) FROM item")) {
                r.next();
                rows = r.getLong(1);
                sum = r.getLong(2);
            }
            try (Statement s = c.createStatement();
                 ResultSet r = s.executeQuery("SELECT grp, COUNT(*) FROM item GROUP BY grp ORDER BY grp")) {
                while (r.next())
                    groups++;
            }
            try (Statement s = c.createStatement()) {
                s.executeQuery("SELECT * FROM no_such_table");
            } catch (java.sql.SQLException expected) {
                // an error path through the library
            }
            System.out.println("rows " + rows + " sum " + sum + " groups " + groups);
        }
    }
}
