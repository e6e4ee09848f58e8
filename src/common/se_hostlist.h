/*
 * se_hostlist.h - Slurm's hostlist expressions expanded without Slurm, for
 * the configuration files of programs that do not link it (the power
 * cap's daemon and agents): "node[01-03,7],gpu1" is
 * "node01,node02,node03,node07,gpu1".
 *
 * As Slurm writes them: names separated by commas outside brackets; in a
 * name, bracket groups of comma-separated numbers and ranges LO-HI, each
 * number printed as wide as LO is written ("[08-10]": 08, 09, 10;
 * "[8-10]": 8, 9, 10); several groups in one name expand as a product
 * ("r[1-2]n[1-2]": r1n1, r1n2, r2n1, r2n2).  No nesting, no "^" or "*".
 */
#ifndef SE_HOSTLIST_H
#define SE_HOSTLIST_H

#include <stddef.h>

/* The hostlist expr expanded into *out, a comma list (malloc'd; free it),
 * at most max_names names; 0, or -EINVAL with err saying what is wrong
 * ("unbalanced bracket", "range 9-1 goes down", "more than N names"),
 * -ENOMEM. */
int se_hostlist_expand(const char *expr, size_t max_names, char **out,
		       char *err, size_t err_len);

#endif /* SE_HOSTLIST_H */
