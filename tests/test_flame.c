/* tools/flame: the frame tree (merging, values up to the root, one and two values) and its
 * HTML (the data spliced into the template, names escaped so no frame name ends the script). */
#include "check_helpers.h"
#include "flame.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

static char *html_of(const struct flame_tree *t, const char *title)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    struct flame_html_info info = {
        .title = title, .subtitle = "sub", .unit = "samples", .value_name = {"before", "after"}};
    ck_assert_int_eq(flame_write_html(t, &info, f), 0);
    fclose(f);
    return buf;
}

START_TEST(test_tree)
{
    struct flame_tree *t = flame_tree_new(1);
    const char *a[] = {"Main.main", "A.run", "java.lang.String.<init>"};
    const char *b[] = {"Main.main", "A.run", "B.go"};
    uint64_t v3 = 3, v5 = 5;
    uint32_t n = FLAME_ROOT, leaf_a, leaf_b;
    for (int i = 0; i < 3; i++)
        n = flame_child(t, n, a[i], flame_kind_of_class(a[i]));
    leaf_a = n;
    flame_add(t, leaf_a, &v3);
    n = FLAME_ROOT;
    for (int i = 0; i < 3; i++)
        n = flame_child(t, n, b[i], flame_kind_of_class(b[i]));
    leaf_b = n;
    flame_add(t, leaf_b, &v5);
    flame_add(t, leaf_a, &v5); /* the same stack again */
    /* root + Main.main + A.run + two leaves: the shared prefix is merged */
    ck_assert_uint_eq(flame_nodes(t), 5);
    ck_assert_uint_eq(flame_value(t, FLAME_ROOT, 0), 13);
    ck_assert_uint_eq(flame_value(t, leaf_a, 0), 8);
    ck_assert_uint_eq(flame_value(t, leaf_b, 0), 5);
    uint32_t main_ = flame_child(t, FLAME_ROOT, "Main.main", FLAME_APP);
    ck_assert_uint_eq(flame_value(t, main_, 0), 13);
    /* the same name as another kind is another node */
    ck_assert_uint_ne(flame_child(t, FLAME_ROOT, "Main.main", FLAME_LEAF), main_);
    ck_assert_int_eq(flame_kind_of_class("java.util.HashMap"), FLAME_JDK);
    ck_assert_int_eq(flame_kind_of_class("com.sun.tools.javac.Main"), FLAME_JDK);
    ck_assert_int_eq(flame_kind_of_class("javaish.Thing"), FLAME_APP);
    ck_assert_ptr_null(flame_tree_new(3));
    flame_tree_free(t);
}
END_TEST

START_TEST(test_many_nodes)
{
    /* grows the hash tables: 20,000 distinct children under 100 parents */
    struct flame_tree *t = flame_tree_new(2);
    char name[32];
    uint64_t v[2] = {1, 2};
    for (int p = 0; p < 100; p++) {
        snprintf(name, sizeof name, "P.m%d", p);
        uint32_t parent = flame_child(t, FLAME_ROOT, name, FLAME_APP);
        for (int c = 0; c < 200; c++) {
            snprintf(name, sizeof name, "C.m%d", c);
            flame_add(t, flame_child(t, parent, name, FLAME_APP), v);
        }
    }
    ck_assert_uint_eq(flame_nodes(t), 1 + 100 + 100 * 200);
    ck_assert_uint_eq(flame_value(t, FLAME_ROOT, 0), 20000);
    ck_assert_uint_eq(flame_value(t, FLAME_ROOT, 1), 40000);
    flame_tree_free(t);
}
END_TEST

START_TEST(test_html)
{
    struct flame_tree *t = flame_tree_new(2);
    uint64_t v[2] = {4, 6};
    uint32_t n = flame_child(t, FLAME_ROOT, "x</script><b>\"q\"&", FLAME_APP);
    flame_add(t, n, v);
    char *h = html_of(t, "T <1>");
    /* the title in <title> and <h1>, escaped; no mark left */
    ck_assert_ptr_nonnull(strstr(h, "<title>T &lt;1&gt;</title>"));
    ck_assert_ptr_nonnull(strstr(h, "<h1 id=\"title\">T &lt;1&gt;</h1>"));
    ck_assert_ptr_null(strstr(h, "@TITLE@"));
    ck_assert_ptr_null(strstr(h, "@DATA@"));
    ck_assert_ptr_null(strstr(h, "@SUBTITLE@"));
    /* the name cannot close the data's <script> */
    ck_assert_ptr_null(strstr(h, "x</script>"));
    ck_assert_ptr_nonnull(strstr(h, "\"x\\u003c/script\\u003e\\u003cb\\u003e\\\"q\\\"\\u0026\""));
    /* preorder nodes: [name, kind, children, before, after]: the root, then the frame */
    ck_assert_ptr_nonnull(strstr(h, "\"nvalues\":2,\"value_names\":[\"before\",\"after\"]"));
    ck_assert_ptr_nonnull(strstr(h, "\"nodes\":[0,0,1,4,6,1,2,0,4,6]"));
    free(h);
    flame_tree_free(t);
}
END_TEST

int main(void)
{
    return run_tests("flame", "flame", 0, TESTS(test_tree, test_many_nodes, test_html));
}
