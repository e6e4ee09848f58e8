/*
 * test_exporter.c - slurm-energy-exporter's Slurm-free parts: the
 * exposition of a snapshot in both formats, the meter's state, the
 * command line and the listener rule, Prometheus' web configuration and
 * its TLS files, basic auth against bcrypt, the job label cache, and one
 * HTTP scrape on loopback (libmicrohttpd, a fake snapshot source: slurmd
 * itself is in tests/integration/test_exporter.py).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <check.h>
#include <crypt.h>
#include <errno.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cg_cpu.h"
#include "exp_http.h"
#include "exporter.h"
#include "se_time.h"
#include "tmp_file.h"

static char dir[] = "/tmp/test_exporter.XXXXXX";

/* ------------------------------------------------------------ helpers */

static energy_snapshot_t *_snap(void)
{
	energy_snapshot_t *s = calloc(1, sizeof(*s));

	ck_assert_ptr_nonnull(s);
	s->flags = ENERGY_SNAPSHOT_TOTAL | ENERGY_SNAPSHOT_SHARE;
	s->meter_state = ENERGY_SNAPSHOT_METER_OK;
	s->total_id = 42;
	s->total_mj = 123456789;		/* 123456.789 J */
	s->total_start_wall_ns = 1700000000123000000ULL;
	s->power_mw = 250500;			/* 250.5 W */
	s->period_ns = SE_NS_PER_SEC;
	s->deadline_ns = 500 * SE_NS_PER_MS;
	s->now_ns = 100 * SE_NS_PER_SEC;
	s->last_sample_ns = s->now_ns - 300 * SE_NS_PER_MS;
	s->n_gpus = 2;
	s->gpus[0] = (energy_snapshot_gpu_t) { 0, ENERGY_SNAPSHOT_GPU_VALID,
					       70000, 5000 };
	s->gpus[1] = (energy_snapshot_gpu_t) { 3, 0, 0, 0 };	/* unread */
	s->n_steps = 3;
	s->steps[0] = (energy_snapshot_step_t) { 17, 0, 0, 0, 1001 };
	s->steps[1] = (energy_snapshot_step_t) { 17, CG_STEP_EXTERN, 0, 0,
						 2002 };
	s->steps[2] = (energy_snapshot_step_t) { 18, CG_STEP_BATCH, 0, 0, 7 };
	return s;
}

/* Job 17 is alice's in acct "phys\"x" (a quote to escape); 18 unknown. */
static bool _labels(void *arg, uint32_t job_id, exp_job_labels_t *out)
{
	(void) arg;
	if (job_id != 17)
		return false;
	out->user = "alice";
	out->account = "phys\"x";
	out->partition = "batch";
	return true;
}

static char *_render(const energy_snapshot_t *s, exp_format_t f,
		     size_t *left_out)
{
	exp_scrape_t sc = { .node = "n1", .snap = s, .labels = _labels,
			    .scrape_seconds = 0.0015, .format = f };
	exp_text_t t = { 0 };
	size_t lo = exp_render(&sc, &t);

	ck_assert(!t.failed);
	if (left_out)
		*left_out = lo;
	return t.buf;
}

static void _has(const char *text, const char *line)
{
	ck_assert_msg(strstr(text, line) != NULL, "missing: %s\nin:\n%s",
		      line, text);
}

static void _lacks(const char *text, const char *what)
{
	ck_assert_msg(strstr(text, what) == NULL, "unexpected: %s\nin:\n%s",
		      what, text);
}

/* ---------------------------------------------------------- rendering */

START_TEST(test_openmetrics)
{
	energy_snapshot_t *s = _snap();
	size_t left_out;
	char *t = _render(s, EXP_FORMAT_OPENMETRICS, &left_out);
	size_t len = strlen(t);

	_has(t, "# TYPE slurm_energy_node_power_watts gauge\n# UNIT slurm_energy_node_power_watts watts\n");
	_has(t, "\nslurm_energy_node_power_watts{node=\"n1\"} 250.500\n");
	_has(t, "# TYPE slurm_energy_node_energy_joules counter\n# UNIT slurm_energy_node_energy_joules joules\n");
	_has(t, "\nslurm_energy_node_energy_joules_total{node=\"n1\"} 123456.789\n");
	_has(t, "\nslurm_energy_node_energy_joules_created{node=\"n1\"} 1700000000.123\n");
	_has(t, "slurm_energy_meter_state{node=\"n1\",state=\"ok\"} 1\n");
	_has(t, "slurm_energy_meter_state{node=\"n1\",state=\"stale\"} 0\n");
	_has(t, "slurm_energy_meter_state{node=\"n1\",state=\"failed\"} 0\n");
	_has(t, "slurm_energy_meter_last_sample_age_seconds{node=\"n1\"} 0.300\n");
	_has(t, "slurm_energy_gpu_power_watts{node=\"n1\",gpu=\"0\"} 70.000\n");
	_has(t, "slurm_energy_gpu_energy_joules_total{node=\"n1\",gpu=\"0\"} 5.000\n");
	_lacks(t, "gpu=\"3\"");		/* not read: not shown */
	_has(t, "slurm_energy_job_energy_joules_total{node=\"n1\",jobid=\"17\",step=\"0\",user=\"alice\",account=\"phys\\\"x\",partition=\"batch\"} 1.001\n");
	_has(t, "slurm_energy_job_energy_joules_total{node=\"n1\",jobid=\"17\",step=\"extern\",user=\"alice\",account=\"phys\\\"x\",partition=\"batch\"} 2.002\n");
	_lacks(t, "jobid=\"18\"");	/* no labels yet: left out */
	ck_assert_uint_eq(left_out, 1);
	_lacks(t, "slurm_energy_node_max_watts");	/* not configured */
	_has(t, "slurm_energy_exporter_slurmd_up{node=\"n1\"} 1\n");
	_has(t, "slurm_energy_exporter_scrape_duration_seconds{node=\"n1\"} 0.001500\n");
	ck_assert_str_eq(t + len - 6, "# EOF\n");
	free(t);
	s->flags |= ENERGY_SNAPSHOT_MAX;
	s->max_power_mw = 800000;
	t = _render(s, EXP_FORMAT_OPENMETRICS, NULL);
	_has(t, "\nslurm_energy_node_max_watts{node=\"n1\"} 800.000\n");
	free(t);
	free(s);
}
END_TEST

START_TEST(test_prometheus_text)
{
	energy_snapshot_t *s = _snap();
	char *t = _render(s, EXP_FORMAT_PROMETHEUS, NULL);

	_has(t, "# TYPE slurm_energy_node_energy_joules_total counter\n");
	_has(t, "# HELP slurm_energy_node_energy_joules_total ");
	_lacks(t, "# UNIT");
	_lacks(t, "# EOF");
	_lacks(t, "_created");
	_has(t, "# TYPE slurm_energy_meter_state gauge\n");
	free(t);
	free(s);
}
END_TEST

START_TEST(test_slurmd_down)
{
	char *t = _render(NULL, EXP_FORMAT_OPENMETRICS, NULL);

	/* nothing of a slurmd that did not answer: no stale series */
	_lacks(t, "slurm_energy_node_");
	_lacks(t, "slurm_energy_job_");
	_lacks(t, "slurm_energy_meter_");
	_has(t, "slurm_energy_exporter_slurmd_up{node=\"n1\"} 0\n");
	_has(t, "# EOF\n");
	free(t);
}
END_TEST

START_TEST(test_node_mode_and_no_meter)
{
	energy_snapshot_t *s = _snap();
	char *t;

	s->flags &= ~ENERGY_SNAPSHOT_SHARE;	/* node mode: no split */
	t = _render(s, EXP_FORMAT_PROMETHEUS, NULL);
	_lacks(t, "slurm_energy_job_energy_joules");
	_has(t, "slurm_energy_node_energy_joules_total{node=\"n1\"}");
	free(t);
	s->meter_state = ENERGY_SNAPSHOT_METER_NONE;
	t = _render(s, EXP_FORMAT_PROMETHEUS, NULL);
	_lacks(t, "slurm_energy_node_");
	_lacks(t, "slurm_energy_meter_state");
	free(t);
	free(s);
}
END_TEST

START_TEST(test_escaping_node)
{
	exp_scrape_t sc = { .node = "a\\b\"c\nd", .format = EXP_FORMAT_PROMETHEUS };
	exp_text_t t = { 0 };

	exp_render(&sc, &t);
	_has(t.buf, "slurm_energy_exporter_slurmd_up{node=\"a\\\\b\\\"c\\nd\"} 0\n");
	exp_text_free(&t);
}
END_TEST

START_TEST(test_meter_state)
{
	energy_snapshot_t *s = _snap();
	uint64_t stale_after = 2 * s->period_ns + s->deadline_ns;

	ck_assert_int_eq(exp_meter_state(s), EXP_METER_OK);
	s->last_sample_ns = s->now_ns - stale_after;
	ck_assert_int_eq(exp_meter_state(s), EXP_METER_OK);	/* at the bound */
	s->last_sample_ns = s->now_ns - stale_after - 1;
	ck_assert_int_eq(exp_meter_state(s), EXP_METER_STALE);
	s->last_sample_ns = 0;
	ck_assert_int_eq(exp_meter_state(s), EXP_METER_STALE);
	s->meter_state = ENERGY_SNAPSHOT_METER_STARTING;
	s->last_sample_ns = s->now_ns;
	ck_assert_int_eq(exp_meter_state(s), EXP_METER_STALE);
	s->meter_state = ENERGY_SNAPSHOT_METER_FAILING;
	ck_assert_int_eq(exp_meter_state(s), EXP_METER_FAILED);
	free(s);
}
END_TEST

START_TEST(test_accept)
{
	ck_assert_int_eq(exp_format_for_accept(NULL), EXP_FORMAT_PROMETHEUS);
	ck_assert_int_eq(exp_format_for_accept("text/plain"),
			 EXP_FORMAT_PROMETHEUS);
	/* what Prometheus 2.42 sends */
	ck_assert_int_eq(exp_format_for_accept("application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"),
			 EXP_FORMAT_OPENMETRICS);
	ck_assert_int_eq(exp_format_for_accept("application/openmetrics-text;q=0"),
			 EXP_FORMAT_PROMETHEUS);
}
END_TEST

START_TEST(test_step_names)
{
	char b[16];

	ck_assert_str_eq(exp_step_name(CG_STEP_BATCH, b, sizeof(b)), "batch");
	ck_assert_str_eq(exp_step_name(CG_STEP_EXTERN, b, sizeof(b)), "extern");
	ck_assert_str_eq(exp_step_name(CG_STEP_INTERACTIVE, b, sizeof(b)),
			 "interactive");
	ck_assert_str_eq(exp_step_name(12, b, sizeof(b)), "12");
}
END_TEST

/* ---------------------------------------------------------------- conf */

static int _parse(exp_conf_t *c, char *err, const char *a1, const char *a2)
{
	char *argv[] = { "slurm-energy-exporter", (char *) a1, (char *) a2,
			 NULL };
	int argc = 1 + (a1 != NULL) + (a2 != NULL);

	return exp_conf_parse(c, argc, argv, err, 512);
}

START_TEST(test_conf_listen)
{
	exp_conf_t c;
	char err[512];

	ck_assert_int_eq(_parse(&c, err, NULL, NULL), 0);
	ck_assert_str_eq(c.listen_host, "127.0.0.1");
	ck_assert_uint_eq(c.listen_port, 9945);
	exp_conf_free(&c);
	ck_assert_int_eq(_parse(&c, err, "--web.listen-address=[::1]:9000",
				"--node=n7"), 0);
	ck_assert_str_eq(c.listen_host, "::1");
	ck_assert_uint_eq(c.listen_port, 9000);
	ck_assert_str_eq(c.node, "n7");
	exp_conf_free(&c);
	ck_assert_int_eq(_parse(&c, err, "--web.listen-address=:9001", NULL), 0);
	ck_assert_str_eq(c.listen_host, "0.0.0.0");
	exp_conf_free(&c);
	ck_assert_int_eq(_parse(&c, err, "--web.listen-address=host:99999",
				NULL), -EINVAL);
	_has(err, "--web.listen-address=host:99999");
	exp_conf_free(&c);
	ck_assert_int_eq(_parse(&c, err, "--query-timeout-ms=0", NULL),
			 -EINVAL);
	_has(err, "--query-timeout-ms=0");
	exp_conf_free(&c);
	ck_assert_int_eq(_parse(&c, err, "--max-watts=850.5", NULL), 0);
	ck_assert_uint_eq(c.max_power_mw, 850500);
	exp_conf_free(&c);
	ck_assert_int_eq(_parse(&c, err, "--max-watts=-3", NULL), -EINVAL);
	_has(err, "--max-watts=-3");
	exp_conf_free(&c);
	ck_assert_int_eq(_parse(&c, err, "--bogus", NULL), -EINVAL);
	_has(err, "--bogus");
	exp_conf_free(&c);
}
END_TEST

START_TEST(test_listener_rule)
{
	exp_conf_t c;
	char err[512];

	ck_assert_int_eq(exp_host_is_loopback("127.0.0.1"), 1);
	ck_assert_int_eq(exp_host_is_loopback("::1"), 1);
	ck_assert_int_eq(exp_host_is_loopback("0.0.0.0"), 0);
	ck_assert_int_eq(exp_host_is_loopback("10.1.2.3"), 0);
	ck_assert_int_eq(_parse(&c, err, "--web.listen-address=0.0.0.0:9945",
				NULL), 0);
	ck_assert_int_eq(exp_conf_check_listener(&c, 0, err, sizeof(err)),
			 -EPERM);
	_has(err, "0.0.0.0:9945 is reachable from other hosts");
	_has(err, "--web.allow-insecure-listen");
	ck_assert_int_eq(exp_conf_check_listener(&c, 1, err, sizeof(err)), 0);
	c.web.n_users = 1;	/* basic auth alone is enough */
	ck_assert_int_eq(exp_conf_check_listener(&c, 0, err, sizeof(err)), 0);
	c.web.n_users = 0;
	c.allow_insecure = true;
	ck_assert_int_eq(exp_conf_check_listener(&c, 0, err, sizeof(err)), 0);
	exp_conf_free(&c);
}
END_TEST

/* ------------------------------------------------------------- webconf */

/* A self-signed certificate and its key (and a second, unrelated key)
 * written as PEM into dir. */
static void _write_pem(const char *name, gnutls_datum_t *d)
{
	char path[256];
	char *text = strndup((const char *) d->data, d->size);

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	tmp_file_write(path, text);
	free(text);
	gnutls_free(d->data);
}

static void _make_tls_files(void)
{
	gnutls_x509_privkey_t key, other;
	gnutls_x509_crt_t crt;
	gnutls_datum_t d;
	time_t now = time(NULL);

	ck_assert_int_eq(gnutls_x509_privkey_init(&key), 0);
	ck_assert_int_eq(gnutls_x509_privkey_generate(key, GNUTLS_PK_ECDSA,
			 GNUTLS_CURVE_TO_BITS(GNUTLS_ECC_CURVE_SECP256R1), 0), 0);
	ck_assert_int_eq(gnutls_x509_privkey_init(&other), 0);
	ck_assert_int_eq(gnutls_x509_privkey_generate(other, GNUTLS_PK_ECDSA,
			 GNUTLS_CURVE_TO_BITS(GNUTLS_ECC_CURVE_SECP256R1), 0), 0);
	ck_assert_int_eq(gnutls_x509_crt_init(&crt), 0);
	gnutls_x509_crt_set_version(crt, 3);
	gnutls_x509_crt_set_serial(crt, "\x01", 1);
	gnutls_x509_crt_set_activation_time(crt, now - 60);
	gnutls_x509_crt_set_expiration_time(crt, now + 3600);
	gnutls_x509_crt_set_dn_by_oid(crt, GNUTLS_OID_X520_COMMON_NAME, 0,
				      "localhost", 9);
	gnutls_x509_crt_set_key(crt, key);
	ck_assert_int_eq(gnutls_x509_crt_sign2(crt, crt, key,
					       GNUTLS_DIG_SHA256, 0), 0);
	ck_assert_int_eq(gnutls_x509_crt_export2(crt, GNUTLS_X509_FMT_PEM, &d), 0);
	_write_pem("node.crt", &d);
	ck_assert_int_eq(gnutls_x509_privkey_export2(key, GNUTLS_X509_FMT_PEM,
						     &d), 0);
	_write_pem("node.key", &d);
	ck_assert_int_eq(gnutls_x509_privkey_export2(other, GNUTLS_X509_FMT_PEM,
						     &d), 0);
	_write_pem("other.key", &d);
	gnutls_x509_crt_deinit(crt);
	gnutls_x509_privkey_deinit(key);
	gnutls_x509_privkey_deinit(other);
}

static int _load(const char *text, exp_webconf_t *w, char *err)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/web.yml", dir);
	tmp_file_write(path, text);
	return exp_webconf_load(path, w, err, 1024);
}

static char *_bcrypt(const char *password)
{
	char salt[CRYPT_GENSALT_OUTPUT_SIZE];
	struct crypt_data cd;

	ck_assert_ptr_nonnull(crypt_gensalt_rn("$2b$", 5, NULL, 0, salt,
					       sizeof(salt)));
	memset(&cd, 0, sizeof(cd));
	ck_assert_ptr_nonnull(crypt_rn(password, salt, &cd, sizeof(cd)));
	return strdup(cd.output);
}

START_TEST(test_webconf_good)
{
	exp_webconf_t w;
	char err[1024], text[512];
	char *hash = _bcrypt("s3cret");

	_make_tls_files();
	/* paths relative to the file's directory, as the toolkit has them */
	snprintf(text, sizeof(text),
		 "tls_server_config:\n  cert_file: node.crt\n  key_file: %s/node.key\n"
		 "basic_auth_users:\n  prometheus: %s\n  other: '%s'\n",
		 dir, hash, hash);
	ck_assert_msg(_load(text, &w, err) == 0, "%s", err);
	ck_assert_uint_eq(w.n_users, 2);
	ck_assert_str_eq(w.users[0], "prometheus");
	_has(w.cert_file, "/node.crt");
	_has(w.cert_pem, "BEGIN CERTIFICATE");
	ck_assert_int_eq(exp_tls_check(&w, err, sizeof(err)), 0);
	exp_webconf_free(&w);
	free(hash);
}
END_TEST

START_TEST(test_webconf_bad)
{
	exp_webconf_t w;
	char err[1024];

	_make_tls_files();
	ck_assert_int_eq(_load("tls_server_config: [\n", &w, err), -EINVAL);
	_has(err, "web.yml:");
	_has(err, "not YAML");
	ck_assert_int_eq(_load("tls_server_config:\n  cert_file: node.crt\n  key_file: missing.key\n",
			       &w, err), -ENOENT);
	_has(err, "tls_server_config.key_file: cannot read ");
	_has(err, "missing.key: No such file or directory");
	ck_assert_int_eq(_load("tls_server_config:\n  cert_file: node.crt\n",
			       &w, err), -EINVAL);
	_has(err, "cert_file and key_file go together");
	ck_assert_int_eq(_load("tls_server_config:\n  min_version: TLS13\n",
			       &w, err), -EINVAL);
	_has(err, "web.yml:2: tls_server_config.min_version: not supported");
	ck_assert_int_eq(_load("http_server_config:\n  http2: false\n", &w,
			       err), -EINVAL);
	_has(err, "http_server_config: not supported");
	ck_assert_int_eq(_load("basic_auth_users:\n  bob: plaintext\n", &w,
			       err), -EINVAL);
	_has(err, "basic_auth_users.bob: not a bcrypt hash");
	_lacks(err, "plaintext");	/* never echo what may be a secret */
	/* a key that is not the certificate's: both paths said */
	ck_assert_int_eq(_load("tls_server_config:\n  cert_file: node.crt\n  key_file: other.key\n",
			       &w, err), 0);
	ck_assert_int_eq(exp_tls_check(&w, err, sizeof(err)), -EINVAL);
	_has(err, "node.crt with key_file ");
	_has(err, "other.key");
	exp_webconf_free(&w);
	ck_assert_int_eq(exp_webconf_load("/nonexistent/web.yml", &w, err,
					  sizeof(err)), -ENOENT);
	_has(err, "--web.config.file=/nonexistent/web.yml: cannot read it");
	ck_assert_int_eq(_load("", &w, err), 0);	/* empty: nothing */
	ck_assert_uint_eq(w.n_users, 0);
	ck_assert_ptr_null(w.cert_file);
}
END_TEST

/* ---------------------------------------------------------------- auth */

static char *_basic(const char *user_pass)
{
	static const char b64[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t n = strlen(user_pass), o = 6;
	char *out = calloc(1, 6 + 4 * (n / 3 + 1) + 1);
	const unsigned char *in = (const unsigned char *) user_pass;

	memcpy(out, "Basic ", 6);
	for (size_t i = 0; i < n; i += 3) {
		unsigned v = in[i] << 16 | (i + 1 < n ? in[i + 1] << 8 : 0) |
			     (i + 2 < n ? in[i + 2] : 0);

		out[o++] = b64[(v >> 18) & 63];
		out[o++] = b64[(v >> 12) & 63];
		out[o++] = i + 1 < n ? b64[(v >> 6) & 63] : '=';
		out[o++] = i + 2 < n ? b64[v & 63] : '=';
	}
	return out;
}

START_TEST(test_auth)
{
	char *hash = _bcrypt("s3cret");
	char *users[] = { "prometheus" }, *hashes[] = { hash };
	exp_webconf_t w = { .n_users = 1, .users = users, .hashes = hashes };
	exp_auth_t *a = exp_auth_new(&w);
	char *good = _basic("prometheus:s3cret");
	char *bad = _basic("prometheus:s3cre");
	char *nobody = _basic("root:s3cret");
	uint64_t t0, first, again;

	t0 = se_mono_ns();
	ck_assert(exp_auth_check(a, good));
	first = se_mono_ns() - t0;
	t0 = se_mono_ns();
	ck_assert(exp_auth_check(a, good));
	again = se_mono_ns() - t0;
	/* remembered: no second bcrypt (cost 5 here, ~1 ms; cached ~us) */
	ck_assert_msg(again * 5 < first, "cached %lu ns, first %lu ns",
		      (unsigned long) again, (unsigned long) first);
	ck_assert(!exp_auth_check(a, bad));
	ck_assert(!exp_auth_check(a, nobody));
	ck_assert(!exp_auth_check(a, NULL));
	ck_assert(!exp_auth_check(a, "Basic !!!"));
	ck_assert(!exp_auth_check(a, "Bearer abc"));
	exp_auth_free(a);
	free(good);
	free(bad);
	free(nobody);
	free(hash);
}
END_TEST

/* ---------------------------------------------------------------- jobs */

typedef struct {
	unsigned calls;
	int fail_rc;
} lookup_ctx_t;

static int _lookup(void *arg, uint32_t job_id, char **user, char **account,
		   char **partition)
{
	lookup_ctx_t *l = arg;

	l->calls++;
	if (l->fail_rc)
		return l->fail_rc;
	ck_assert_int_ne(asprintf(user, "u%u", job_id), -1);
	*account = strdup("acct");
	*partition = strdup("part");
	return 0;
}

START_TEST(test_jobs_cache)
{
	lookup_ctx_t l = { 0 };
	exp_jobs_t *j = exp_jobs_new(_lookup, &l, SE_NS_PER_SEC,
				     SE_NS_PER_SEC);
	energy_snapshot_t *s = _snap();
	exp_job_labels_t lab;

	exp_jobs_begin(j, se_mono_ns());
	ck_assert(exp_jobs_labels(j, 17, &lab));
	ck_assert_str_eq(lab.user, "u17");
	ck_assert(exp_jobs_labels(j, 17, &lab));
	ck_assert_uint_eq(l.calls, 1);		/* once per job */
	l.fail_rc = -EAGAIN;
	ck_assert(!exp_jobs_labels(j, 99, &lab));
	ck_assert(!exp_jobs_labels(j, 99, &lab));
	ck_assert_uint_eq(l.calls, 2);		/* retried only later */
	exp_jobs_keep_only(j, s);		/* 99 is not running */
	ck_assert_uint_eq(exp_jobs_count(j), 1);
	s->n_steps = 0;				/* job 17 ended */
	exp_jobs_keep_only(j, s);
	ck_assert_uint_eq(exp_jobs_count(j), 0);
	exp_jobs_free(j);
	/* a spent budget defers the lookup to the next scrape */
	l = (lookup_ctx_t) { 0 };
	j = exp_jobs_new(_lookup, &l, SE_NS_PER_SEC, 10 * SE_NS_PER_MS);
	exp_jobs_begin(j, se_mono_ns() - 20 * SE_NS_PER_MS);
	ck_assert(!exp_jobs_labels(j, 17, &lab));
	ck_assert_uint_eq(l.calls, 0);
	exp_jobs_begin(j, se_mono_ns());
	ck_assert(exp_jobs_labels(j, 17, &lab));
	exp_jobs_free(j);
	free(s);
}
END_TEST

/* A lookup that takes 300 ms (a slow slurmctld) in the jobs' thread: the
 * scrape's question returns at once, the labels come later. */
static int _slow_lookup(void *arg, uint32_t job_id, char **user,
			char **account, char **partition)
{
	se_sleep_ns(300 * SE_NS_PER_MS);
	return _lookup(arg, job_id, user, account, partition);
}

START_TEST(test_jobs_thread)
{
	lookup_ctx_t l = { 0 };
	exp_jobs_t *j = exp_jobs_new(_slow_lookup, &l, SE_NS_PER_SEC,
				     SE_NS_PER_SEC);
	exp_job_labels_t lab;
	uint64_t t0, limit;

	ck_assert_int_eq(exp_jobs_start(j), 0);
	exp_jobs_begin(j, se_mono_ns());
	t0 = se_mono_ns();
	ck_assert(!exp_jobs_labels(j, 17, &lab));	/* queued */
	ck_assert_uint_lt(se_mono_ns() - t0, 100 * SE_NS_PER_MS);
	limit = se_mono_ns() + 5 * SE_NS_PER_SEC;
	while (!exp_jobs_labels(j, 17, &lab) && se_mono_ns() < limit)
		se_sleep_ns(10 * SE_NS_PER_MS);
	ck_assert_str_eq(lab.user, "u17");
	ck_assert_uint_eq(l.calls, 1);
	/* freed with a lookup under way: it finishes, nothing leaks */
	ck_assert(!exp_jobs_labels(j, 18, &lab));
	exp_jobs_free(j);
}
END_TEST

/* ---------------------------------------------------------------- http */

static int snap_calls;

static int _fake_snapshot(void *arg, energy_snapshot_t *out)
{
	energy_snapshot_t *s = arg;

	snap_calls++;
	if (!s)
		return -ECONNREFUSED;
	memcpy(out, s, sizeof(*out));
	return 0;
}

/* One HTTP/1.0 request to 127.0.0.1:port; the whole answer (malloc'ed). */
static char *_http_get(unsigned port, const char *path, const char *headers)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons(port) };
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	char req[1024];
	exp_text_t t = { 0 };
	char buf[4096];
	ssize_t n;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(connect(fd, (struct sockaddr *) &sa, sizeof(sa)), 0);
	snprintf(req, sizeof(req), "GET %s HTTP/1.0\r\n%s\r\n", path, headers);
	ck_assert_int_eq(write(fd, req, strlen(req)), (ssize_t) strlen(req));
	while ((n = read(fd, buf, sizeof(buf) - 1)) > 0) {
		buf[n] = '\0';
		exp_text_printf(&t, "%s", buf);
	}
	close(fd);
	return t.buf;
}

START_TEST(test_http_scrape)
{
	exp_conf_t c;
	char err[512], hdr[256];
	energy_snapshot_t *s = _snap();
	char *hash = _bcrypt("pw"), *users[] = { "prom" }, *hashes[] = { hash };
	char *auth = _basic("prom:pw");
	struct sockaddr_in sa;
	socklen_t sl = sizeof(sa);
	exp_http_t *h;
	int fd;
	char *r;

	ck_assert_int_eq(_parse(&c, err, "--node=n1", "--no-slurm-labels"), 0);
	ck_assert_int_eq(exp_listen("127.0.0.1", 0, &fd, err, sizeof(err)), 0);
	ck_assert_int_eq(getsockname(fd, (struct sockaddr *) &sa, &sl), 0);
	/* the port is ours now: a second listener is told so, by address */
	ck_assert_int_eq(exp_listen("127.0.0.1", ntohs(sa.sin_port), &(int) { 0 },
				    err, sizeof(err)), -EADDRINUSE);
	_has(err, "cannot listen there: Address already in use");
	c.web.n_users = 1;
	c.web.users = users;
	c.web.hashes = hashes;
	h = exp_http_new(&c, _fake_snapshot, s, NULL);
	ck_assert_int_eq(exp_http_start(h, fd, err, sizeof(err)), 0);
	r = _http_get(ntohs(sa.sin_port), "/metrics", "");
	_has(r, " 401 Unauthorized\r\n");
	_has(r, "WWW-Authenticate: Basic");
	ck_assert_int_eq(snap_calls, 0);	/* nothing asked of slurmd */
	free(r);
	snprintf(hdr, sizeof(hdr), "Authorization: %s\r\nAccept: application/openmetrics-text;version=1.0.0\r\n",
		 auth);
	r = _http_get(ntohs(sa.sin_port), "/metrics", hdr);
	_has(r, " 200 OK\r\n");
	_has(r, "Content-Type: application/openmetrics-text; version=1.0.0");
	_has(r, "slurm_energy_node_energy_joules_total{node=\"n1\"} 123456.789\n");
	_has(r, "# EOF\n");
	ck_assert_int_eq(snap_calls, 1);
	free(r);
	snprintf(hdr, sizeof(hdr), "Authorization: %s\r\n", auth);
	r = _http_get(ntohs(sa.sin_port), "/other", hdr);
	_has(r, " 404 Not Found\r\n");
	free(r);
	exp_http_free(h);
	c.web.n_users = 0;
	c.web.users = c.web.hashes = NULL;
	exp_conf_free(&c);
	free(hash);
	free(auth);
	free(s);
}
END_TEST

static Suite *_suite(void)
{
	Suite *s = suite_create("exporter");
	TCase *tc = tcase_create("all");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_openmetrics);
	tcase_add_test(tc, test_prometheus_text);
	tcase_add_test(tc, test_slurmd_down);
	tcase_add_test(tc, test_node_mode_and_no_meter);
	tcase_add_test(tc, test_escaping_node);
	tcase_add_test(tc, test_meter_state);
	tcase_add_test(tc, test_accept);
	tcase_add_test(tc, test_step_names);
	tcase_add_test(tc, test_conf_listen);
	tcase_add_test(tc, test_listener_rule);
	tcase_add_test(tc, test_webconf_good);
	tcase_add_test(tc, test_webconf_bad);
	tcase_add_test(tc, test_auth);
	tcase_add_test(tc, test_jobs_cache);
	tcase_add_test(tc, test_jobs_thread);
	tcase_add_test(tc, test_http_scrape);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr;
	int failed;

	if (!mkdtemp(dir)) {
		perror(dir);
		return 1;
	}
	sr = srunner_create(_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	{
		char cmd[300];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd))
			fprintf(stderr, "could not remove %s\n", dir);
	}
	return failed ? 1 : 0;
}
