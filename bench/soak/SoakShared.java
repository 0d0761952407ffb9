/* What every generated class shares: the locks its methods contend for and a sink that keeps
 * the JIT from removing their allocations. Loaded once, by the application class loader. */
public final class SoakShared {
    public static final Object[] LOCKS = {new Object(), new Object(), new Object(), new Object()};
    public static volatile long sink;
    public static Object last;

    public static void keep(Object o) {
        last = o;
    }
}
