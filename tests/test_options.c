/* placeholder: being written */
#include <check.h>
#include <stdlib.h>
int main(void)
{
    Suite *s = suite_create("options");
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
