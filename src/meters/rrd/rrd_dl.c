/*
 * rrd_dl.c - the librrd entry points rrd_read.c uses, opened on first call
 * (rrd_dl.h).  Before a successful load, the calls fail as librrd's own
 * failures do (-1, rrd_test_error() true), and rrd_get_error() says why
 * the library did not load: rrd_read.c's messages carry it unchanged.
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif


#include <rrd.h>
#include <rrd_client.h>

#include "rrd_dl.h"
#include "se_dynlib.h"

static struct {
	int (*fetch_r)(const char *, const char *, time_t *, time_t *,
		       unsigned long *, unsigned long *, char ***,
		       rrd_value_t **);
	void (*clear_error)(void);
	int (*test_error)(void);
	char *(*get_error)(void);
	int (*flush_if_daemon)(const char *, const char *);
} fn;

static const se_dynlib_sym_t syms[] = {
	{ "rrd_fetch_r", &fn.fetch_r },
	{ "rrd_clear_error", &fn.clear_error },
	{ "rrd_test_error", &fn.test_error },
	{ "rrd_get_error", &fn.get_error },
	{ "rrdc_flush_if_daemon", &fn.flush_if_daemon },
};

static se_dynlib_t lib = SE_DYNLIB_INIT(SE_LIBRRD_SONAME, syms);

int rrd_dl_load(char *err, size_t err_len)
{
	return se_dynlib_require(&lib, err, err_len);
}

int rrd_fetch_r(const char *filename, const char *cf, time_t *start,
		time_t *end, unsigned long *step, unsigned long *ds_cnt,
		char ***ds_namv, rrd_value_t **data)
{
	return se_dynlib_ready(&lib) ? fn.fetch_r(filename, cf, start, end,
						  step, ds_cnt, ds_namv,
						  data) : -1;
}

int rrdc_flush_if_daemon(const char *opt_daemon, const char *filename)
{
	return se_dynlib_ready(&lib) ?
	       fn.flush_if_daemon(opt_daemon, filename) : -1;
}

void rrd_clear_error(void)
{
	if (se_dynlib_ready(&lib))
		fn.clear_error();
}

/* Not loaded: an error stands, and it is the load's. */
int rrd_test_error(void)
{
	return se_dynlib_ready(&lib) ? fn.test_error() : 1;
}

char *rrd_get_error(void)
{
	return se_dynlib_ready(&lib) ? fn.get_error() :
	       (char *) se_dynlib_error(&lib);
}
