/*
 * exporter.h - slurm-energy-exporter(8): slurmd's energy snapshot
 * (energy_snapshot.h, asked through the node's energy query socket) served
 * as OpenMetrics text over HTTP(S), in a daemon of its own so that slurmd
 * never holds an HTTP listener.
 *
 * The parts, each in its own file and all but two free of Slurm and of
 * the network, so that unit tests reach every decision:
 *   exp_render.c   the exposition: one snapshot -> OpenMetrics or
 *                  Prometheus text (the metric names are fixed: the rules
 *                  and the dashboard in contribs/prometheus use them)
 *   exp_conf.c     the command line, and whether a listener may run
 *   exp_webconf.c  Prometheus' web configuration file (TLS, basic auth)
 *   exp_auth.c     basic auth against bcrypt hashes (crypt(3)), cached
 *   exp_jobs.c     the labels of a job (user, account, partition), looked
 *                  up once per job and kept while the job runs
 *   exp_http.c     the listener (libmicrohttpd), TLS, one scrape
 *   exp_slurm.c    the one lookup Slurm answers (libslurm)
 */
#ifndef SE_EXPORTER_H
#define SE_EXPORTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "energy_snapshot.h"

/* ------------------------------------------------------------ rendering */

typedef enum {
	EXP_FORMAT_PROMETHEUS = 0,	/* text/plain; version=0.0.4 */
	EXP_FORMAT_OPENMETRICS,		/* application/openmetrics-text */
} exp_format_t;

/* The format an Accept header asks for (NULL: none given). */
exp_format_t exp_format_for_accept(const char *accept);
/* The Content-Type of format. */
const char *exp_content_type(exp_format_t f);

typedef enum {
	EXP_METER_OK = 0,
	EXP_METER_STALE,	/* no sample for longer than two periods and a
				 * deadline, or none yet */
	EXP_METER_FAILED,	/* reads fail (slurmd gap-fills its energy) */
} exp_meter_state_t;

/* The meter's state as the exposition says it, from a snapshot. */
exp_meter_state_t exp_meter_state(const energy_snapshot_t *s);

/* A job's labels (exp_jobs.c); strings owned by the caller. */
typedef struct {
	const char *user;
	const char *account;
	const char *partition;
} exp_job_labels_t;

/* The labels of job_id: true with *out filled, false to leave the job's
 * series out of this scrape (not known yet). */
typedef bool (*exp_labels_fn)(void *arg, uint32_t job_id,
			      exp_job_labels_t *out);

/* A growing text buffer. */
typedef struct {
	char *buf;
	size_t len, cap;
	bool failed;		/* out of memory: the text is incomplete */
} exp_text_t;

void exp_text_free(exp_text_t *t);
void exp_text_printf(exp_text_t *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* What one scrape renders. */
typedef struct {
	const char *node;		/* the node label's value */
	const energy_snapshot_t *snap;	/* NULL: slurmd did not answer */
	exp_labels_fn labels;		/* NULL: every job left out */
	void *labels_arg;
	double scrape_seconds;		/* the query and lookups so far */
	exp_format_t format;
} exp_scrape_t;

/* Render one scrape into t (appended).  Returns the number of job series
 * left out for want of labels. */
size_t exp_render(const exp_scrape_t *sc, exp_text_t *t);

/* Step step_id's label value: "batch", "extern", "interactive" or its
 * number, into buf. */
const char *exp_step_name(uint32_t step_id, char *buf, size_t len);

/* ------------------------------------------------------- configuration */

#define EXP_DEFAULT_LISTEN	"127.0.0.1:9945"
#define EXP_DEFAULT_SPOOL	"/var/spool/slurmd"

typedef struct {
	char *cert_file;	/* tls_server_config */
	char *key_file;
	char *client_ca_file;	/* with client_auth_type
				 * RequireAndVerifyClientCert */
	bool require_client_cert;
	char *cert_pem;		/* the files' contents, read at load */
	char *key_pem;
	char *client_ca_pem;
	size_t n_users;		/* basic_auth_users */
	char **users;
	char **hashes;		/* bcrypt ($2a$, $2b$, $2y$) */
} exp_webconf_t;

typedef struct {
	char *listen_host;	/* --web.listen-address, split */
	unsigned listen_port;
	char *web_config_file;	/* --web.config.file, NULL: none */
	bool allow_insecure;	/* --web.allow-insecure-listen */
	char *node;		/* --node (default: the short host name) */
	char *spool_dir;	/* --spool-dir */
	char *socket_path;	/* --socket (default: from the two above) */
	bool slurm_labels;	/* --no-slurm-labels clears it */
	uint64_t query_timeout_ns; /* --query-timeout-ms */
	bool check_only;	/* --check-config */
	uint64_t max_power_mw;	/* --max-watts, 0: slurmd's, if any */
	exp_webconf_t web;
} exp_conf_t;

/*
 * Parse argv into c (defaults first).  0; 1 for --help/--version (printed
 * to stdout); -EINVAL with a message naming the option and value in err.
 */
int exp_conf_parse(exp_conf_t *c, int argc, char **argv, char *err,
		   size_t err_len);
void exp_conf_free(exp_conf_t *c);

/* Whether host (a numeric address or a name) is a loopback address only:
 * 1 yes, 0 no (reachable from elsewhere), -errno unresolvable. */
int exp_host_is_loopback(const char *host);

/*
 * Whether the listener may run: a non-loopback listener needs TLS or
 * basic auth, unless allow_insecure.  0, or -EPERM with the reason in err.
 */
int exp_conf_check_listener(const exp_conf_t *c, int loopback, char *err,
			    size_t err_len);

/*
 * Load Prometheus' web configuration file path into w (also reading the
 * TLS files it names).  0, or -errno with a message naming the file, the
 * key and the value in err.
 */
int exp_webconf_load(const char *path, exp_webconf_t *w, char *err,
		     size_t err_len);
/* The same from text already read (name: for messages). */
int exp_webconf_parse(const char *name, const char *text, size_t len,
		      exp_webconf_t *w, char *err, size_t err_len);
void exp_webconf_free(exp_webconf_t *w);

/* ------------------------------------------------------------- auth */

typedef struct exp_auth exp_auth_t;

exp_auth_t *exp_auth_new(const exp_webconf_t *w);
void exp_auth_free(exp_auth_t *a);

/*
 * An Authorization header's verdict: true when it names a user of the
 * configuration with the right password.  A bcrypt check costs tens of
 * ms by design; a good pair is remembered (as a SHA-256 digest, never the
 * password) so that a scrape every second pays it once.
 */
bool exp_auth_check(exp_auth_t *a, const char *authorization);

/* ------------------------------------------------------------ job labels */

/* Slurm's answer for one job: 0 with the fields set (malloc'ed), -ENOENT
 * unknown job, other -errno: ask again later. */
typedef int (*exp_job_lookup_fn)(void *arg, uint32_t job_id, char **user,
				 char **account, char **partition);

typedef struct exp_jobs exp_jobs_t;

/*
 * A cache of jobs' labels, filled by lookup (once per job; a failed
 * lookup is retried after retry_ns) and emptied of jobs no longer running
 * by exp_jobs_keep_only().  Inline, a scrape spends at most budget_ns on
 * lookups (the rest wait for the next scrape); after exp_jobs_start(),
 * none.
 */
exp_jobs_t *exp_jobs_new(exp_job_lookup_fn lookup, void *arg,
			 uint64_t retry_ns, uint64_t budget_ns);
void exp_jobs_free(exp_jobs_t *j);
/* Look up in a thread of its own from now on: a scrape only queues new
 * jobs (exp_jobs.c says why).  0 or -errno. */
int exp_jobs_start(exp_jobs_t *j);
/* Start a scrape at monotonic now_ns (the budget counts from it). */
void exp_jobs_begin(exp_jobs_t *j, uint64_t now_ns);
/* exp_labels_fn over the cache. */
bool exp_jobs_labels(void *arg, uint32_t job_id, exp_job_labels_t *out);
/* Forget every job not among the snapshot's steps. */
void exp_jobs_keep_only(exp_jobs_t *j, const energy_snapshot_t *s);
/* Jobs held, lookups made so far. */
size_t exp_jobs_count(const exp_jobs_t *j);
unsigned long exp_jobs_lookups(const exp_jobs_t *j);

/* Slurm's lookup (exp_slurm.c): slurm_load_job() once, uid -> user name
 * locally. */
int exp_slurm_lookup(void *arg, uint32_t job_id, char **user,
		     char **account, char **partition);

#endif
