/*
 * exp_conf.c - slurm-energy-exporter's command line, and the rule that a
 * listener reachable from other hosts runs only behind TLS or basic auth
 * (or with --web.allow-insecure-listen, said on purpose).
 *
 * The option names follow Prometheus' exporters (--web.listen-address,
 * --web.config.file), so that a site's habits and its configuration
 * management carry over.
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "exporter.h"
#include "se_time.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "?"
#endif

enum {
	OPT_LISTEN = 256,
	OPT_WEBCONF,
	OPT_INSECURE,
	OPT_NODE,
	OPT_SPOOL,
	OPT_SOCKET,
	OPT_NO_LABELS,
	OPT_TIMEOUT,
	OPT_CHECK,
	OPT_MAX_WATTS,
	OPT_HELP,
	OPT_VERSION,
};

static const struct option options[] = {
	{ "web.listen-address", required_argument, NULL, OPT_LISTEN },
	{ "web.config.file", required_argument, NULL, OPT_WEBCONF },
	{ "web.allow-insecure-listen", no_argument, NULL, OPT_INSECURE },
	{ "node", required_argument, NULL, OPT_NODE },
	{ "spool-dir", required_argument, NULL, OPT_SPOOL },
	{ "socket", required_argument, NULL, OPT_SOCKET },
	{ "no-slurm-labels", no_argument, NULL, OPT_NO_LABELS },
	{ "query-timeout-ms", required_argument, NULL, OPT_TIMEOUT },
	{ "check-config", no_argument, NULL, OPT_CHECK },
	{ "max-watts", required_argument, NULL, OPT_MAX_WATTS },
	{ "help", no_argument, NULL, OPT_HELP },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ NULL, 0, NULL, 0 },
};

static const char usage[] =
"Usage: slurm-energy-exporter [OPTION]...\n"
"Serve slurmd's node and job energy (its energy query socket) as OpenMetrics.\n"
"\n"
"  --web.listen-address=HOST:PORT  where to listen (default " EXP_DEFAULT_LISTEN ";\n"
"                                  [::1]:PORT for IPv6)\n"
"  --web.config.file=FILE          Prometheus' web configuration: TLS, basic auth\n"
"  --web.allow-insecure-listen     listen beyond loopback without TLS or auth\n"
"  --node=NAME                     slurmd's NodeName (default: short host name)\n"
"  --spool-dir=DIR                 slurmd's SlurmdSpoolDir (default " EXP_DEFAULT_SPOOL ")\n"
"  --socket=PATH                   the energy query socket (default:\n"
"                                  DIR/slurm-energy-NAME.sock)\n"
"  --no-slurm-labels               no libslurm lookup: no job series\n"
"  --query-timeout-ms=N            longest wait for slurmd per scrape (default 20)\n"
"  --max-watts=W                   the node's rated maximum power, served as\n"
"                                  slurm_energy_node_max_watts\n"
"  --check-config                  check the configuration and exit\n"
"  --help, --version\n"
"See slurm-energy-exporter(8).\n";

static char *_dup(const char *s)
{
	char *d = strdup(s ? s : "");

	if (!d) {
		perror("slurm-energy-exporter");
		exit(1);
	}
	return d;
}

static void _replace(char **dst, const char *v)
{
	free(*dst);
	*dst = _dup(v);
}

/* "host:port", "[v6]:port" or ":port" (every address). */
static int _split_listen(exp_conf_t *c, const char *v, char *err,
			 size_t err_len)
{
	const char *colon = strrchr(v, ':');
	char *end;
	unsigned long port;
	size_t hlen;

	if (!colon)
		goto bad;
	port = strtoul(colon + 1, &end, 10);
	if (!colon[1] || *end || port == 0 || port > 65535)
		goto bad;
	hlen = colon - v;
	if (hlen >= 2 && v[0] == '[' && v[hlen - 1] == ']') {
		v++;
		hlen -= 2;
	}
	free(c->listen_host);
	c->listen_host = strndup(v, hlen);
	if (!c->listen_host)
		return -ENOMEM;
	if (!*c->listen_host)
		_replace(&c->listen_host, "0.0.0.0");
	c->listen_port = (unsigned) port;
	return 0;
bad:
	snprintf(err, err_len, "--web.listen-address=%s: not HOST:PORT with a port 1-65535",
		 v);
	return -EINVAL;
}

/* --max-watts: a power in W (decimals allowed), kept in mW. */
static int _max_watts(exp_conf_t *c, const char *arg, char *err,
		      size_t err_len)
{
	char *end;
	double w = strtod(arg, &end);

	if (!*arg || *end || !(w > 0.0) || w > 1e7) {
		snprintf(err, err_len, "--max-watts=%s: not a power in W above 0 (at most 10 MW)",
			 arg);
		return -EINVAL;
	}
	c->max_power_mw = (uint64_t) (w * 1000.0 + 0.5);
	return 0;
}

static void _defaults(exp_conf_t *c)
{
	char host[256] = "";
	char *dot;

	memset(c, 0, sizeof(*c));
	c->slurm_labels = true;
	c->query_timeout_ns = 20 * SE_NS_PER_MS;
	c->spool_dir = _dup(EXP_DEFAULT_SPOOL);
	if (gethostname(host, sizeof(host) - 1) == 0 &&
	    (dot = strchr(host, '.')))
		*dot = '\0';
	c->node = _dup(host);
}

static int _option(exp_conf_t *c, int opt, const char *arg, char *err,
		   size_t err_len)
{
	char *end;
	unsigned long ms;

	switch (opt) {
	case OPT_LISTEN:
		return _split_listen(c, arg, err, err_len);
	case OPT_WEBCONF:
		_replace(&c->web_config_file, arg);
		return 0;
	case OPT_INSECURE:
		c->allow_insecure = true;
		return 0;
	case OPT_NODE:
		_replace(&c->node, arg);
		return 0;
	case OPT_SPOOL:
		_replace(&c->spool_dir, arg);
		return 0;
	case OPT_SOCKET:
		_replace(&c->socket_path, arg);
		return 0;
	case OPT_NO_LABELS:
		c->slurm_labels = false;
		return 0;
	case OPT_TIMEOUT:
		ms = strtoul(arg, &end, 10);
		if (!*arg || *end || ms == 0 || ms > 10000) {
			snprintf(err, err_len, "--query-timeout-ms=%s: not a number of ms from 1 to 10000",
				 arg);
			return -EINVAL;
		}
		c->query_timeout_ns = ms * SE_NS_PER_MS;
		return 0;
	case OPT_CHECK:
		c->check_only = true;
		return 0;
	case OPT_MAX_WATTS:
		return _max_watts(c, arg, err, err_len);
	case OPT_HELP:
		fputs(usage, stdout);
		return 1;
	case OPT_VERSION:
		printf("slurm-energy-exporter %s\n", PACKAGE_VERSION);
		return 1;
	default:
		snprintf(err, err_len, "unknown option (see --help)");
		return -EINVAL;
	}
}

int exp_conf_parse(exp_conf_t *c, int argc, char **argv, char *err,
		   size_t err_len)
{
	int opt, rc;

	_defaults(c);
	rc = _split_listen(c, EXP_DEFAULT_LISTEN, err, err_len);
	optind = 1;
	opterr = 0;
	while (!rc && (opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
		if (opt == '?') {
			snprintf(err, err_len, "unknown option or missing value: %s (see --help)",
				 argv[optind - 1]);
			return -EINVAL;
		}
		rc = _option(c, opt, optarg, err, err_len);
	}
	if (rc)
		return rc;
	if (optind < argc) {
		snprintf(err, err_len, "unexpected argument: %s", argv[optind]);
		return -EINVAL;
	}
	if (!*c->node) {
		snprintf(err, err_len, "no --node given and no host name to default to");
		return -EINVAL;
	}
	return 0;
}

void exp_conf_free(exp_conf_t *c)
{
	free(c->listen_host);
	free(c->web_config_file);
	free(c->node);
	free(c->spool_dir);
	free(c->socket_path);
	exp_webconf_free(&c->web);
	memset(c, 0, sizeof(*c));
}

static bool _addr_is_loopback(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const void *) sa;

		return (ntohl(in->sin_addr.s_addr) >> 24) == 127;
	}
	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const void *) sa;

		return IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr);
	}
	return false;
}

int exp_host_is_loopback(const char *host)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE };
	struct addrinfo *res, *ai;
	int rc, loop = 1;

	rc = getaddrinfo(host, NULL, &hints, &res);
	if (rc)
		return rc == EAI_SYSTEM ? -errno : -ENOENT;
	for (ai = res; ai; ai = ai->ai_next)
		if (!_addr_is_loopback(ai->ai_addr))
			loop = 0;	/* one address beyond is enough */
	freeaddrinfo(res);
	return loop;
}

int exp_conf_check_listener(const exp_conf_t *c, int loopback, char *err,
			    size_t err_len)
{
	bool tls = c->web.cert_file != NULL, auth = c->web.n_users > 0;

	if (loopback == 1 || tls || auth || c->allow_insecure)
		return 0;
	snprintf(err, err_len, "--web.listen-address=%s:%u is reachable from other hosts, and no TLS (tls_server_config) or basic auth (basic_auth_users) is configured%s%s: refusing to serve node and job energy to anyone; give --web.config.file, listen on 127.0.0.1, or say --web.allow-insecure-listen",
		 c->listen_host, c->listen_port,
		 c->web_config_file ? " in " : "",
		 c->web_config_file ? c->web_config_file : "");
	return -EPERM;
}
