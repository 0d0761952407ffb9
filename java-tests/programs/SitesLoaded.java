/* Loaded again and again by throw-away class loaders in SitesStress; never by the application
 * class loader. */
public class SitesLoaded {
    long payload;

    public static Object[] make(int n) {
        Object[] objects = new Object[n];
        for (int i = 0; i < n; i++)
            objects[i] = new SitesLoaded();
        return objects;
    }
}
