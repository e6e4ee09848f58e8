/*
 * comma_hostlist.h - hostlist callbacks for programs without Slurm (unit
 * tests, probes): an expression is a comma list of exact names, no ranges.
 * The shape of se_hostlist_ops_t's contains() and count() (conf_map.h).
 */
#ifndef SE_TEST_COMMA_HOSTLIST_H
#define SE_TEST_COMMA_HOSTLIST_H

#include <stdio.h>
#include <string.h>

/* 1 when node is one of the comma list expr, else 0. */
static inline int comma_hostlist_contains(void *arg, const char *expr,
					  const char *node)
{
	char buf[1024], *save = NULL, *tok;

	(void) arg;
	snprintf(buf, sizeof(buf), "%s", expr);
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save))
		if (!strcmp(tok, node))
			return 1;
	return 0;
}

/* The names in n comma lists. */
static inline long comma_hostlist_count(void *arg, const char *const *exprs,
					size_t n)
{
	long k = 0;

	(void) arg;
	for (size_t i = 0; i < n; i++) {
		k++;
		for (const char *p = exprs[i]; *p; p++)
			k += *p == ',';
	}
	return k;
}

#endif
