/* Benchmark workload: Apache Xalan-J (Debian's libxalan2-java: /usr/share/java/xalan2.jar and
 * serializer.jar), its interpretive XSLT processor, transforming a generated XML document.
 *
 *   java -cp <classes>:/usr/share/java/xalan2.jar:/usr/share/java/serializer.jar \
 *       XalanTransform <orders> <rounds>
 *
 * Generates (in memory, from a fixed seed) an XML document of <orders> orders with their
 * lines, compiles one stylesheet (grouping with keys, sorting, sums, format-number, recursive
 * named templates, string functions) and runs <rounds> transformations of the document, each
 * parsing it again. Prints one line
 *   result: orders=<n> rounds=<r> bytes=<output bytes of one round> crc=<crc32 of all output>
 * which is the same in every run. */
import java.io.ByteArrayInputStream;
import java.io.OutputStream;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;
import java.util.zip.CRC32;
import javax.xml.transform.Templates;
import javax.xml.transform.Transformer;
import javax.xml.transform.TransformerFactory;
import javax.xml.transform.stream.StreamResult;
import javax.xml.transform.stream.StreamSource;

public class XalanTransform {
    static final String[] REGIONS = {"north", "south", "east", "west", "centre"};
    static final String[] PRODUCTS = {"anvil", "bolt", "cog", "drill", "engine", "flange", "gear", "hinge",
                                      "inlet", "jack", "knob", "lever", "magnet", "nozzle", "oiler", "piston"};

    static byte[] document(int orders) {
        SplittableRandom rnd = new SplittableRandom(7);
        StringBuilder s = new StringBuilder(orders * 400);
        s.append("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<orders>\n");
        for (int i = 0; i < orders; i++) {
            s.append("  <order id=\"o").append(i).append("\" region=\"").append(REGIONS[rnd.nextInt(REGIONS.length)])
                .append("\" day=\"").append(1 + rnd.nextInt(28)).append("\">\n");
            s.append("    <customer>Customer &amp; Co ").append(rnd.nextInt(500)).append("</customer>\n");
            int lines = 1 + rnd.nextInt(6);
            for (int l = 0; l < lines; l++)
                s.append("    <line product=\"").append(PRODUCTS[rnd.nextInt(PRODUCTS.length)]).append("\" qty=\"")
                    .append(1 + rnd.nextInt(20)).append("\" price=\"").append(rnd.nextInt(10000) / 100.0)
                    .append("\"/>\n");
            s.append("    <note>").append(i % 5 == 0 ? "urgent, call first" : "standard delivery").append("</note>\n");
            s.append("  </order>\n");
        }
        s.append("</orders>\n");
        return s.toString().getBytes(StandardCharsets.UTF_8);
    }

    static final String STYLESHEET = """
        <xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
          <xsl:output method="html" indent="yes"/>
          <xsl:key name="by-region" match="order" use="@region"/>
          <xsl:key name="by-product" match="line" use="@product"/>
          <xsl:template match="/">
            <html><body>
              <h1>Orders: <xsl:value-of select="count(orders/order)"/></h1>
              <xsl:for-each select="orders/order[generate-id() = generate-id(key('by-region', @region)[1])]">
                <xsl:sort select="@region"/>
                <xsl:variable name="mine" select="key('by-region', @region)"/>
                <h2><xsl:value-of select="translate(@region, 'abcdefghijklmnopqrstuvwxyz',
                                                    'ABCDEFGHIJKLMNOPQRSTUVWXYZ')"/></h2>
                <p>orders <xsl:value-of select="count($mine)"/>,
                   lines <xsl:value-of select="count($mine/line)"/>,
                   quantity <xsl:value-of select="sum($mine/line/@qty)"/></p>
                <table>
                  <xsl:for-each select="$mine[position() &lt;= 40]">
                    <xsl:sort select="@day" data-type="number" order="descending"/>
                    <xsl:sort select="@id"/>
                    <tr>
                      <td><xsl:value-of select="@id"/></td>
                      <td><xsl:value-of select="substring-after(customer, '&amp; ')"/></td>
                      <td><xsl:call-template name="total"><xsl:with-param name="lines" select="line"/></xsl:call-template></td>
                      <td><xsl:if test="contains(note, 'urgent')">!</xsl:if></td>
                    </tr>
                  </xsl:for-each>
                </table>
              </xsl:for-each>
              <h2>Products</h2>
              <ul>
                <xsl:for-each select="//line[generate-id() = generate-id(key('by-product', @product)[1])]">
                  <xsl:sort select="sum(key('by-product', @product)/@qty)" data-type="number" order="descending"/>
                  <li><xsl:value-of select="concat(@product, ': ', sum(key('by-product', @product)/@qty), ' units')"/></li>
                </xsl:for-each>
              </ul>
            </body></html>
          </xsl:template>
          <!-- Sum of qty * price over the lines, by recursion (XSLT 1.0 has no sum of products). -->
          <xsl:template name="total">
            <xsl:param name="lines"/>
            <xsl:param name="acc" select="0"/>
            <xsl:choose>
              <xsl:when test="$lines">
                <xsl:call-template name="total">
                  <xsl:with-param name="lines" select="$lines[position() &gt; 1]"/>
                  <xsl:with-param name="acc" select="$acc + $lines[1]/@qty * $lines[1]/@price"/>
                </xsl:call-template>
              </xsl:when>
              <xsl:otherwise><xsl:value-of select="format-number($acc, '#,##0.00')"/></xsl:otherwise>
            </xsl:choose>
          </xsl:template>
        </xsl:stylesheet>
        """;

    /** Counts and checksums what the transformation writes, keeping none of it. */
    static final class CrcSink extends OutputStream {
        final CRC32 crc = new CRC32();
        long bytes;

        @Override public void write(int b) {
            crc.update(b);
            bytes++;
        }

        @Override public void write(byte[] b, int off, int len) {
            crc.update(b, off, len);
            bytes += len;
        }
    }

    public static void main(String[] args) throws Exception {
        int orders = args.length > 0 ? Integer.parseInt(args[0]) : 20000;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 4;
        byte[] xml = document(orders);
        // Xalan's own factory, not the JDK's built-in XSLTC copy.
        TransformerFactory factory = new org.apache.xalan.processor.TransformerFactoryImpl();
        Templates templates = factory.newTemplates(new StreamSource(new StringReader(STYLESHEET)));
        CrcSink sink = new CrcSink();
        long perRound = 0;
        for (int r = 0; r < rounds; r++) {
            long before = sink.bytes;
            Transformer t = templates.newTransformer();
            t.transform(new StreamSource(new ByteArrayInputStream(xml)), new StreamResult(sink));
            perRound = sink.bytes - before;
        }
        System.out.println("result: orders=" + orders + " rounds=" + rounds + " bytes=" + perRound + " crc="
                           + Long.toHexString(sink.crc.getValue()));
    }
}
