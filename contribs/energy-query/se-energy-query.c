/*
 * se-energy-query - slurmd's node energy total at an instant, read through
 * the node's energy query socket (src/common/energy_query.h), the socket
 * the steps ask.
 *
 *   se-energy-query [--spool-dir DIR] [--fresh] [--timeout SECONDS] [NODE]
 *   se-energy-query --socket PATH [--fresh] [--timeout SECONDS]
 *
 * Prints one line of key=value pairs:
 *
 *   total_mj=N total_id=N sample_ns=N power_mw=N at_ns=N
 *
 * total_mj is slurmd's running node energy (what it gives Slurm's energy
 * RPC, in mJ) at at_ns, the CLOCK_MONOTONIC instant slurmd answered (the
 * total runs on past its newest sample at that sample's power);
 * total_id the id of its continuity (another id: slurmd restarted and the
 * total counts from zero again); sample_ns the instant of the newest
 * sample, power_mw its power.  The socket is
 * SPOOL_DIR/slurm-energy-NODE.sock (SlurmdSpoolDir, "%n" in it replaced by
 * NODE; NODE defaults to this host's short name).  Without --fresh the
 * question kicks no meter reading (the newest sample is at most a sampler
 * period old); with it, a reading is kicked and the answer is the first
 * total whose sample was taken after the call.
 *
 * Exit 0 when a total was printed, 1 when slurmd gave none (no server
 * there, refused, no answer in time, or an answer without a total), 2 on
 * bad usage.  The wire format is energy_query_wire.h's: this tool is only a
 * client of it.
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "energy_query.h"
#include "se_time.h"

/* Slurm's own default SlurmdSpoolDir. */
#define DEFAULT_SPOOL_DIR	"/var/spool/slurmd"
/* Between two questions while waiting for a fresh sample. */
#define FRESH_POLL_NS		(5 * SE_NS_PER_MS)

static int _usage(void)
{
	fprintf(stderr,
		"usage: se-energy-query [--spool-dir DIR] [--fresh] [--timeout SECONDS] [NODE]\n"
		"       se-energy-query --socket PATH [--fresh] [--timeout SECONDS]\n");
	return 2;
}

/* dir with every "%n" replaced by node, into buf: 0, or -ENAMETOOLONG. */
static int _expand(const char *dir, const char *node, char *buf, size_t len)
{
	size_t used = 0, nlen = strlen(node);

	for (const char *p = dir; *p; p++) {
		const char *add = p;
		size_t n = 1;

		if (p[0] == '%' && p[1] == 'n') {
			add = node;
			n = nlen;
			p++;
		}
		if (used + n >= len)
			return -ENAMETOOLONG;
		memcpy(buf + used, add, n);
		used += n;
	}
	buf[used] = '\0';
	return 0;
}

/* This host's name up to its first dot, into buf: 0, or -errno. */
static int _short_hostname(char *buf, size_t len)
{
	char *dot;

	if (gethostname(buf, len))
		return -errno;
	buf[len - 1] = '\0';
	if ((dot = strchr(buf, '.')))
		*dot = '\0';
	return buf[0] ? 0 : -EINVAL;
}

/* One question about now, without a kick; *at_ns: when it was answered
 * (the middle of the round trip, which takes microseconds). */
static int _ask_known(const char *path, uint64_t timeout_ns,
		      energy_query_answer_t *a, uint64_t *at_ns)
{
	uint64_t t0 = se_mono_ns();
	int rc = energy_query_known(path, t0, t0, timeout_ns, a);

	*at_ns = t0 + (se_mono_ns() - t0) / 2;
	return rc;
}

/*
 * Ask the server at path for its total.  fresh: kick a reading and wait
 * (at most the sampler's period and read deadline, plus timeout_ns) for a
 * total at a sample after the call.  0 with *a filled (a->total tells
 * whether a total came) and *at_ns the instant of the answer, or a
 * negative errno of energy_query(); -ETIME when no total at a sample after
 * the call came in time.
 */
static int _ask(const char *path, bool fresh, uint64_t timeout_ns,
		energy_query_answer_t *a, uint64_t *at_ns)
{
	uint64_t t = se_mono_ns(), until;
	int rc;

	if (!fresh)
		return _ask_known(path, timeout_ns, a, at_ns);
	/* kicks the sampler when no sample at or after t exists yet */
	if ((rc = energy_query(path, t, t, timeout_ns, a)))
		return rc;
	until = se_mono_ns() + a->period_ns + a->deadline_ns + timeout_ns;
	do {
		if (se_mono_ns() >= until)
			return a->total ? -ETIME : 0;
		if (!a->total || a->total_sample_ns < t)
			se_sleep_ns(FRESH_POLL_NS);
		/* the total runs on past its sample: ask once more, so
		 * that the instant of the answer is known */
		if ((rc = _ask_known(path, timeout_ns, a, at_ns)))
			return rc;
	} while (!a->total || a->total_sample_ns < t);
	return 0;
}

static const char *_hint(int rc)
{
	switch (rc) {
	case -ENOENT:
	case -ECONNREFUSED:
		return " (no slurmd serves this node's energy there: is slurmd up with acct_gather_energy/modbus or bmc, and is this its SlurmdSpoolDir?)";
	case -EACCES:
		return " (slurmd answers root and its own user only)";
	case -ETIMEDOUT:
		return " (no answer in time)";
	case -ETIME:
		return " (--fresh: no total at a sample taken after the call, within the sampler's period and read deadline)";
	default:
		return "";
	}
}

int main(int argc, char **argv)
{
	const char *spool = DEFAULT_SPOOL_DIR, *sock = NULL, *node = NULL;
	char host[256], dir[PATH_MAX], path[PATH_MAX];
	double timeout_s = 1.0;
	bool fresh = false;
	energy_query_answer_t a;
	uint64_t at_ns = 0;
	int rc;

	for (int i = 1; i < argc; i++) {
		char *end;

		if (!strcmp(argv[i], "--spool-dir") && i + 1 < argc) {
			spool = argv[++i];
		} else if (!strcmp(argv[i], "--socket") && i + 1 < argc) {
			sock = argv[++i];
		} else if (!strcmp(argv[i], "--fresh")) {
			fresh = true;
		} else if (!strcmp(argv[i], "--timeout") && i + 1 < argc) {
			timeout_s = strtod(argv[++i], &end);
			if (*end || !(timeout_s > 0 && timeout_s <= 60)) {
				fprintf(stderr, "se-energy-query: --timeout %s: must be a number of seconds, above 0 and at most 60\n",
					argv[i]);
				return 2;
			}
		} else if (argv[i][0] != '-' && !node) {
			node = argv[i];
		} else {
			return _usage();
		}
	}
	if (sock && node)
		return _usage();
	if (!sock) {
		if (!node) {
			if ((rc = _short_hostname(host, sizeof(host)))) {
				fprintf(stderr, "se-energy-query: cannot tell this host's name (%s): name the node\n",
					strerror(-rc));
				return 2;
			}
			node = host;
		}
		rc = _expand(spool, node, dir, sizeof(dir));
		if (!rc)
			rc = energy_query_socket_path(dir, node, path,
						      sizeof(path));
		if (rc) {
			fprintf(stderr, "se-energy-query: node %s: socket path in %s: %s\n",
				node, spool, strerror(-rc));
			return 2;
		}
		sock = path;
	}

	rc = _ask(sock, fresh, (uint64_t) (timeout_s * SE_NS_PER_SEC), &a,
		  &at_ns);
	if (rc) {
		fprintf(stderr, "se-energy-query: %s: %s%s\n", sock,
			strerror(-rc), _hint(rc));
		return 1;
	}
	if (!a.total) {
		fprintf(stderr, "se-energy-query: %s: slurmd answered without its node total (EnergyAttribution=share serves none; or no sample yet)\n",
			sock);
		return 1;
	}
	printf("total_mj=%" PRIu64 " total_id=%" PRIu64 " sample_ns=%" PRIu64
	       " power_mw=%" PRIu64 " at_ns=%" PRIu64 "\n",
	       a.total_mj, a.total_id, a.total_sample_ns,
	       a.total_power_mw, at_ns);
	return 0;
}
