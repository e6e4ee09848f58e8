/*
 * test_hostlist.c - Slurm's hostlist expressions expanded without Slurm
 * (src/common/se_hostlist.c): ranges, widths, lists in brackets, several
 * groups in a name, the cap on names, and each malformed expression named.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "se_hostlist.h"

static void _is(const char *expr, const char *want)
{
	char err[256] = "", *out = NULL;

	ck_assert_msg(se_hostlist_expand(expr, 100, &out, err,
					 sizeof(err)) == 0, "%s: %s", expr,
		      err);
	ck_assert_msg(!strcmp(out, want), "%s: '%s', not '%s'", expr, out,
		      want);
	free(out);
}

static void _bad(const char *expr, size_t max, const char *says)
{
	char err[256] = "", *out = (char *)"x";

	ck_assert_int_eq(se_hostlist_expand(expr, max, &out, err,
					    sizeof(err)), -EINVAL);
	ck_assert_ptr_null(out);
	ck_assert_msg(strstr(err, says), "%s: '%s'", expr, err);
}

START_TEST(test_expand)
{
	_is("node1", "node1");
	_is("a,b,c", "a,b,c");
	_is("node[1-3]", "node1,node2,node3");
	/* as wide as the low bound is written */
	_is("n[08-11]", "n08,n09,n10,n11");
	_is("n[8-11]", "n8,n9,n10,n11");
	_is("n[001-002,7]", "n001,n002,n7");
	_is("gpu[1-2]-ib,login", "gpu1-ib,gpu2-ib,login");
	_is("r[1-2]n[1-2]", "r1n1,r1n2,r2n1,r2n2");
	_is("node[1-2],gpu[3,5]", "node1,node2,gpu3,gpu5");
	_is("[1-2]x", "1x,2x");
}
END_TEST

START_TEST(test_bad)
{
	_bad("node[1-3", 100, "node[1-3: unbalanced bracket");
	_bad("node1-3]", 100, "unbalanced bracket");
	_bad("n]1[2]", 100, "unbalanced bracket");
	_bad("n[[1]]", 100, "unbalanced bracket");
	_bad("node[]", 100, "node[]: empty brackets");
	_bad("node[3-1]", 100, "range 3-1 goes down");
	_bad("node[a-3]", 100, "a-3: not a number in a range");
	_bad("node[1-b]", 100, "b: not a number in a range");
	_bad("node[1x]", 100, "x: not a number or range");
	_bad("node[00000000000000000001]", 100, "too wide");
	_bad("node[1-99999999999]", 100, "too large");
	_bad("a,,b", 100, "an empty name");
	_bad("", 100, "no name");
	_bad("node[1-101]", 100, "more than 100 names");
	_bad("a,b,c", 2, "more than 2 names");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("hostlist");
	TCase *tc = tcase_create("hostlist");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_expand);
	tcase_add_test(tc, test_bad);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
