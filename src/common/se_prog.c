/*
 * se_prog.c - the daemons' log, signals and users (se_prog.h).
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "se_prog.h"
#include "se_log.h"

volatile sig_atomic_t se_prog_stop;
volatile sig_atomic_t se_prog_reload;

static const char *prog_name;

static void _sink(void *arg, se_log_level_t level, const char *msg)
{
	static const char *names[] = { "error", "info", "debug", "debug" };

	(void) arg;
	fprintf(stderr, "%s: %s: %s\n", prog_name, names[level], msg);
}

static bool _wants(void *arg, se_log_level_t level)
{
	return level <= SE_LOG_INFO || *(bool *) arg;
}

void se_prog_log(const char *prog, bool verbose)
{
	static bool debug;

	prog_name = prog;
	debug = verbose;
	setvbuf(stderr, NULL, _IOLBF, 0);
	se_log_set_sink_wants(_sink, _wants, &debug);
}

static void _on_stop(int sig)
{
	se_prog_stop = sig;
}

static void _on_hup(int sig)
{
	(void) sig;
	se_prog_reload = 1;
}

void se_prog_signals(void)
{
	struct sigaction sa = { .sa_handler = _on_stop };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sa.sa_handler = _on_hup;
	sigaction(SIGHUP, &sa, NULL);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
}

int se_prog_uid(const char *user, uid_t *uid, char *err, size_t err_len)
{
	struct passwd *pw = getpwnam(user);
	char *end;
	unsigned long n;

	if (pw) {
		*uid = pw->pw_uid;
		return 0;
	}
	errno = 0;
	n = strtoul(user, &end, 10);
	if (*user && !*end && !errno) {
		*uid = (uid_t)n;
		return 0;
	}
	snprintf(err, err_len, "--user %s: no such user", user);
	return -ENOENT;
}
