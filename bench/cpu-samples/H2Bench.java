/* cpu=samples overhead workload: an H2 in-memory database, single-threaded. Usage: H2Bench <rows> */
import java.sql.*;
public class H2Bench {
    public static void main(String[] a) throws Exception {
        int rows = Integer.parseInt(a[0]);
        try (Connection c = DriverManager.getConnection("jdbc:h2:mem:bench", "sa", "")) {
            Statement s = c.createStatement();
            s.execute("create table item(id int primary key, grp int, name varchar(40), price decimal(10,2))");
            s.execute("create table grp(id int primary key, label varchar(40))");
            try (PreparedStatement p = c.prepareStatement("insert into grp values(?, ?)")) {
                for (int i = 0; i < 100; i++) { p.setInt(1, i); p.setString(2, "group-" + i); p.executeUpdate(); }
            }
            try (PreparedStatement p = c.prepareStatement("insert into item values(?, ?, ?, ?)")) {
                for (int i = 0; i < rows; i++) {
                    p.setInt(1, i); p.setInt(2, i % 100); p.setString(3, "item-" + i);
                    p.setBigDecimal(4, java.math.BigDecimal.valueOf(i % 997, 2)); p.executeUpdate();
                }
            }
            s.execute("create index item_grp on item(grp)");
            long sum = 0;
            for (int q = 0; q < 30; q++) {
                try (ResultSet r = s.executeQuery("select g.label, count(*), sum(i.price), max(i.name) from item i join grp g on i.grp = g.id where i.id % 7 <> " + q % 7 + " group by g.label order by 3 desc")) {
                    while (r.next()) sum += r.getLong(2);
                }
                try (PreparedStatement p = c.prepareStatement("select name from item where grp = ? and price > ?")) {
                    for (int k = 0; k < 100; k++) { p.setInt(1, k); p.setBigDecimal(2, java.math.BigDecimal.valueOf(q * 30, 2));
                        try (ResultSet r = p.executeQuery()) { while (r.next()) sum += r.getString(1).length(); } }
                }
            }
            System.out.println("h2 " + sum);
        }
    }
}
