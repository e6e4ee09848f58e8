/*
 * test_snmp_poller.c - the PDU poller (issue #44) without a network: its
 * messages (src/common/pdu_poll_wire.c) round-trip and refuse what they do
 * not understand; its core (snmp_poller.c) against a fake agent sends one
 * GET per PDU a round for every node on it, makes each node the reading
 * its own meter would make, splits a GET on tooBig, and fails the nodes
 * of a PDU down with the PDU's reason; the node's meter
 * (src/common/pdu_poll_meter.c) against a fake poller on loopback (a
 * clear sealer in place of MUNGE) stamps a reading at receipt - age, says
 * -EALREADY for a round already taken, skips a late answer to an earlier
 * ask, and fails by its deadline, naming the poller, when the poller
 * refuses, is silent, down, or answers for another uid.  The daemon with MUNGE and a real
 * agent is in tests/integration/test_snmp_poller.py.
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tmp_file.h"
#include "se_time.h"
#include "snmp_conf.h"
#include "snmp_meter.h"
#include "pdu_poll_meter.h"
#include "pdu_poll_wire.h"
#include "snmp_poller.h"
#include "comma_hostlist.h"

#define MS	1000000ULL

/* ------------------------------------------------------------ the wire */

START_TEST(test_wire_roundtrip)
{
	pdu_poll_ask_t a = { .node = "n01", .nonce = 0x1122334455667788ULL };
	pdu_poll_ask_t a2;
	pdu_poll_reading_t r = {
		.node = "n01", .nonce = 7, .seq = 42, .age_ns = 123456789,
		.power_mw = 987654, .counter_raw = 1ULL << 40,
		.mj_per_unit = 360000000.0 * 0.55, .width_bits = 64,
		.registers = 2, .flags = PDU_POLL_POWER | PDU_POLL_COUNTER,
		.status = -ETIMEDOUT, .error = "node n01: PDU a (h): late" };
	pdu_poll_reading_t r2;
	uint8_t buf[PDU_POLL_MAX_LEN];
	char err[256];

	ck_assert_int_eq(pdu_poll_wire_ask(&a, buf, sizeof(buf)),
			 PDU_POLL_ASK_LEN);
	ck_assert_int_eq(memcmp(buf, "SEPP", 4), 0);
	ck_assert_int_eq(pdu_poll_wire_read_ask(buf, PDU_POLL_ASK_LEN, &a2,
						err, sizeof(err)), 0);
	ck_assert_str_eq(a2.node, "n01");
	ck_assert(a2.nonce == a.nonce);
	ck_assert_int_eq(pdu_poll_wire_reading(&r, buf, sizeof(buf)),
			 PDU_POLL_READING_LEN);
	ck_assert_int_eq(pdu_poll_wire_read_reading(
		buf, PDU_POLL_READING_LEN, &r2, err, sizeof(err)), 0);
	ck_assert(r2.seq == 42 && r2.age_ns == 123456789 &&
		  r2.power_mw == 987654 && r2.counter_raw == 1ULL << 40);
	ck_assert(r2.mj_per_unit == r.mj_per_unit);	/* bit for bit */
	ck_assert_uint_eq(r2.width_bits, 64);
	ck_assert_uint_eq(r2.registers, 2);
	ck_assert_uint_eq(r2.flags, r.flags);
	ck_assert_int_eq(r2.status, -ETIMEDOUT);
	ck_assert_str_eq(r2.error, r.error);
}
END_TEST

START_TEST(test_wire_refuses)
{
	pdu_poll_ask_t a = { .node = "n01", .nonce = 1 };
	pdu_poll_reading_t r;
	uint8_t buf[PDU_POLL_MAX_LEN], bad[PDU_POLL_MAX_LEN];
	char err[256];

	pdu_poll_wire_ask(&a, buf, sizeof(buf));
	/* an ask is not a reading */
	ck_assert_int_eq(pdu_poll_wire_read_reading(buf, PDU_POLL_ASK_LEN,
						    &r, err, sizeof(err)),
			 -EBADMSG);
	ck_assert_msg(strstr(err, "expected type 2"), "%s", err);
	/* short, magic, version, no NUL */
	ck_assert_int_eq(pdu_poll_wire_read_ask(buf, 5, &a, err,
						sizeof(err)), -EBADMSG);
	memcpy(bad, buf, PDU_POLL_ASK_LEN);
	bad[0] = 'X';
	ck_assert_int_eq(pdu_poll_wire_read_ask(bad, PDU_POLL_ASK_LEN, &a,
						err, sizeof(err)), -EBADMSG);
	ck_assert_msg(strstr(err, "not a PDU poller"), "%s", err);
	memcpy(bad, buf, PDU_POLL_ASK_LEN);
	bad[4] = 9;
	ck_assert_int_eq(pdu_poll_wire_read_ask(bad, PDU_POLL_ASK_LEN, &a,
						err, sizeof(err)),
			 -EPROTONOSUPPORT);
	memcpy(bad, buf, PDU_POLL_ASK_LEN);
	memset(bad + 20, 'x', PDU_POLL_NAME_MAX);
	ck_assert_int_eq(pdu_poll_wire_read_ask(bad, PDU_POLL_ASK_LEN, &a,
						err, sizeof(err)), -EBADMSG);
	ck_assert_msg(strstr(err, "node name without its end"), "%s", err);
	/* a name that would not decode is not encoded */
	memset(a.node, 'y', sizeof(a.node));
	ck_assert_int_eq(pdu_poll_wire_ask(&a, buf, sizeof(buf)), -EINVAL);
	ck_assert_int_eq(pdu_poll_wire_ask(&a, buf, 10), -ENOSPC);
}
END_TEST

/* ------------------------------------------------------ the fake agent */

#define MAX_VARS	64

typedef struct {
	const char *name;
	char oid[MAX_VARS][128];
	uint64_t value[MAX_VARS];
	size_t n;
	int fail;
	size_t max_vars;	/* tooBig above this; 0: none */
	unsigned long gets;
	size_t last_n;
} fake_agent_t;

static fake_agent_t agents[2];

static uint64_t *_val(fake_agent_t *a, const char *oid)
{
	for (size_t i = 0; i < a->n; i++)
		if (!strcmp(a->oid[i], oid))
			return &a->value[i];
	ck_assert_uint_lt(a->n, MAX_VARS);
	snprintf(a->oid[a->n], sizeof(a->oid[0]), "%s", oid);
	a->value[a->n] = 0;
	return &a->value[a->n++];
}

static int _f_open(const snmp_peer_t *peer, void **ctx, uint64_t dl,
		   char *err, size_t len)
{
	(void)dl, (void)err, (void)len;
	for (size_t i = 0; i < 2; i++)
		if (!strcmp(agents[i].name, peer->name)) {
			*ctx = &agents[i];
			return 0;
		}
	return -ENOENT;
}

static int _f_get(void *ctx, const snmp_oid_t *oids, size_t n,
		  snmp_value_t *out, uint64_t dl, char *msg, size_t len)
{
	fake_agent_t *a = ctx;
	char oid[1024];

	(void)dl;
	a->gets++;
	a->last_n = n;
	if (a->fail) {
		snprintf(msg, len, "GET: no answer by the deadline");
		return a->fail;
	}
	if (a->max_vars && n > a->max_vars) {
		snprintf(msg, len, "GET: tooBig");
		return -E2BIG;
	}
	for (size_t i = 0; i < n; i++) {
		snmp_oid_format(&oids[i], oid, sizeof(oid));
		memset(&out[i], 0, sizeof(out[i]));
		out[i].value = *_val(a, oid);
	}
	return 0;
}

static void _f_close(void *ctx)
{
	(void)ctx;
}

static const snmp_transport_t fake_tp = {
	.name = "fake", .open = _f_open, .get = _f_get, .close = _f_close,
};

#define APC_P	"1.3.6.1.4.1.318.1.1.26.9.4.3.1.7."
#define APC_E	"1.3.6.1.4.1.318.1.1.26.9.4.3.1.11."

/* n1, n2 on both PDUs; n3 on pdua only; c1, c2 share pdua:4. */
#define MAP \
	"PDU=pdua Host=10.0.0.5 Model=apc-rpdu2\n" \
	"PDU=pdub Host=10.0.0.6 Model=apc-rpdu2\n" \
	"Nodes=n1 Outlets=pdua:1,pdub:1\n" \
	"Nodes=n2 Outlets=pdua:2,pdub:2\n" \
	"Nodes=n3 Outlets=pdua:3\n" \
	"Nodes=c1,c2 Outlets=pdua:4\n"

static const char *const nodes[] = { "n1", "n2", "n3", "c1", "c2" };
static const snmp_hostlist_ops_t hl = { comma_hostlist_contains,
					comma_hostlist_count, NULL };
static snmp_conf_t conf;

static char *_write(const char *text, mode_t mode)
{
	char *path = strdup("/tmp/test_snmp_poller_XXXXXX"); /* mkstemp's */
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	close(fd);
	tmp_file_write_mode(path, text, mode);
	return path;
}

static void _agents(void)
{
	char oid[128];

	memset(agents, 0, sizeof(agents));
	agents[0].name = "pdua";
	agents[1].name = "pdub";
	for (int i = 1; i <= 4; i++) {
		snprintf(oid, sizeof(oid), APC_P "%d", i);
		*_val(&agents[0], oid) = 100 * i;	/* W */
		*_val(&agents[1], oid) = 10 * i;
		snprintf(oid, sizeof(oid), APC_E "%d", i);
		*_val(&agents[0], oid) = 1000 + i;	/* 0.1 kWh */
		*_val(&agents[1], oid) = 2000 + i;
	}
}

static void _conf(void)
{
	char err[512] = "";

	_agents();
	snmp_conf_init(&conf);
	conf.map_path = _write(MAP, 0644);
	conf.secrets_path = _write("PDU=* Community=public\n", 0600);
	ck_assert_msg(snmp_conf_read_files(&conf, err, sizeof(err)) == 0,
		      "%s", err);
	unlink(conf.map_path);
	unlink(conf.secrets_path);
}

static void _unconf(void)
{
	snmp_conf_free(&conf);
}

static snmp_poller_t *_poller(size_t max_oids)
{
	snmp_poller_config_t pc = {
		.conf = &conf, .nodes = nodes,
		.n_nodes = sizeof(nodes) / sizeof(nodes[0]), .hl = &hl,
		.transport = &fake_tp, .max_oids = max_oids };
	snmp_poller_t *p;
	char err[512] = "";

	ck_assert_msg(snmp_poller_create(&pc, &p, err, sizeof(err)) == 0,
		      "%s", err);
	return p;
}

/* Node's reading by its own meter over the same fake agent. */
static meter_reading_t _own(const char *node)
{
	snmp_target_t *t = calloc(1, sizeof(*t));
	snmp_meter_config_t mc;
	snmp_meter_t *m;
	meter_reading_t r = { 0 };
	char err[512];

	ck_assert_int_eq(snmp_conf_resolve(&conf, node, &hl, t, err,
					   sizeof(err)), 0);
	mc = (snmp_meter_config_t){ .node = node, .pdus = t->pdus,
				    .n_pdus = t->n_pdus,
				    .outlets = t->outlets,
				    .n_outlets = t->n_outlets,
				    .transport = &fake_tp,
				    .timeout_ns = 100 * MS };
	ck_assert_int_eq(snmp_meter_create(&mc, &m, err, sizeof(err)), 0);
	ck_assert_int_eq(snmp_meter_ops.read(m, &r, se_mono_ns() + 100 * MS,
					     err, sizeof(err)), 0);
	snmp_meter_destroy(m);
	free(t);
	return r;
}

START_TEST(test_poller_one_get_per_pdu)
{
	snmp_poller_t *p = _poller(0);
	pdu_poll_reading_t a;
	snmp_poller_stats_t st;

	for (int round = 0; round < 3; round++)
		ck_assert_uint_eq(snmp_poller_round(p), 0);
	/* 5 nodes, 7 outlets: one GET per PDU a round, each OID once */
	ck_assert_uint_eq(agents[0].gets, 3);
	ck_assert_uint_eq(agents[1].gets, 3);
	ck_assert_uint_eq(agents[0].last_n, 8);	/* outlets 1-4, P + E */
	ck_assert_uint_eq(agents[1].last_n, 4);
	snmp_poller_stats(p, &st);
	ck_assert_uint_eq(st.gets, 6);
	ck_assert_uint_eq(st.oids, 12);
	ck_assert_uint_eq(st.nodes, 5);
	/* each node's reading is its own meter's */
	for (size_t i = 0; i < sizeof(nodes) / sizeof(nodes[0]); i++) {
		meter_reading_t own = _own(nodes[i]);

		ck_assert_int_eq(snmp_poller_answer(p, nodes[i], se_mono_ns(),
						    &a), 0);
		ck_assert_int_eq(a.status, 0);
		ck_assert(a.seq == 3);
		ck_assert_uint_eq(a.power_mw, own.power_mw);
		ck_assert_uint_eq(a.flags, PDU_POLL_POWER |
					   PDU_POLL_COUNTER);
		ck_assert_uint_eq(a.counter_raw, own.counter_raw);
		ck_assert_uint_eq(a.width_bits, 64);
	}
	snmp_poller_answer(p, "n1", se_mono_ns(), &a);
	ck_assert_uint_eq(a.power_mw, 110000);	/* 100 W + 10 W */
	ck_assert_uint_eq(a.counter_raw, 1001 + 2001);
	ck_assert_uint_eq(a.registers, 2);
	ck_assert(a.age_ns < 1000 * MS);
	snmp_poller_answer(p, "c2", se_mono_ns(), &a);
	ck_assert_uint_eq(a.power_mw, 200000);	/* half of 400 W */
	ck_assert_double_eq_tol(a.mj_per_unit, 360000000.0 / 2, 1e-3);
	snmp_poller_destroy(p);
}
END_TEST

START_TEST(test_poller_counter_steps)
{
	snmp_poller_t *p = _poller(0);
	pdu_poll_reading_t a;

	snmp_poller_round(p);
	*_val(&agents[0], APC_E "1") += 3;
	*_val(&agents[1], APC_E "1") += 2;
	snmp_poller_round(p);
	snmp_poller_answer(p, "n1", se_mono_ns(), &a);
	ck_assert_uint_eq(a.counter_raw, 1001 + 2001 + 5);
	snmp_poller_destroy(p);
}
END_TEST

START_TEST(test_poller_pdu_down)
{
	snmp_poller_t *p = _poller(0);
	pdu_poll_reading_t a;

	agents[1].fail = -ETIMEDOUT;
	ck_assert_uint_eq(snmp_poller_round(p), 1);
	snmp_poller_answer(p, "n1", se_mono_ns(), &a);
	ck_assert_int_eq(a.status, -ETIMEDOUT);
	ck_assert_str_eq(a.error, "node n1: PDU pdub (10.0.0.6): GET: no "
			 "answer by the deadline");
	/* n3 is on pdua alone */
	snmp_poller_answer(p, "n3", se_mono_ns(), &a);
	ck_assert_int_eq(a.status, 0);
	ck_assert_uint_eq(a.power_mw, 300000);
	/* back */
	agents[1].fail = 0;
	ck_assert_uint_eq(snmp_poller_round(p), 0);
	snmp_poller_answer(p, "n1", se_mono_ns(), &a);
	ck_assert_int_eq(a.status, 0);
	ck_assert(a.seq == 2);
	/* a node the map has not */
	ck_assert_int_eq(snmp_poller_answer(p, "zz", se_mono_ns(), &a),
			 -ENOENT);
	ck_assert_int_eq(a.status, -ENOENT);
	ck_assert_msg(strstr(a.error, "node zz: no Nodes= line"), "%s",
		      a.error);
	snmp_poller_destroy(p);
}
END_TEST

START_TEST(test_poller_toobig_splits)
{
	snmp_poller_t *p = _poller(0);
	pdu_poll_reading_t a;

	agents[0].max_vars = 3;		/* pdua's 8 OIDs: 4 GETs of 2 */
	ck_assert_uint_eq(snmp_poller_round(p), 0);
	agents[0].gets = 0;
	ck_assert_uint_eq(snmp_poller_round(p), 0);
	ck_assert_uint_eq(agents[0].gets, 4);
	ck_assert_uint_eq(agents[1].gets, 2);	/* one a round, untouched */
	snmp_poller_answer(p, "c1", se_mono_ns(), &a);
	ck_assert_int_eq(a.status, 0);
	ck_assert_uint_eq(a.power_mw, 200000);
	snmp_poller_destroy(p);
}
END_TEST

START_TEST(test_poller_first_get_bounded)
{
	snmp_poller_t *p = _poller(5);	/* at most 5 OIDs from the start */

	snmp_poller_round(p);
	ck_assert_uint_eq(agents[0].gets, 2);	/* 8 OIDs: 5 + 3 */
	ck_assert_uint_eq(agents[1].gets, 1);
	snmp_poller_destroy(p);
}
END_TEST

/* ------------------------------------------------- the fake poller */

/* The clear sealer: "UID:HEX" (the tests' stand-in for MUNGE). */
static int _c_seal(void *ctx, const uint8_t *buf, size_t len, char **text,
		   char *err, size_t err_len)
{
	char *t = malloc(2 * len + 32);
	size_t n;

	(void)err, (void)err_len;
	n = (size_t)sprintf(t, "%u:", *(unsigned *)ctx);
	for (size_t i = 0; i < len; i++)
		n += (size_t)sprintf(t + n, "%02x", buf[i]);
	*text = t;
	return 0;
}

static int _c_open(void *ctx, const char *text, uint8_t *buf, size_t *len,
		   uid_t *uid, char *err, size_t err_len)
{
	const char *hex = strchr(text, ':');
	size_t n;

	(void)ctx;
	if (!hex || strlen(hex + 1) / 2 > *len) {
		snprintf(err, err_len, "not a clear credential");
		return -EACCES;
	}
	*uid = (uid_t)strtoul(text, NULL, 10);
	n = strlen(++hex) / 2;
	for (size_t i = 0; i < n; i++)
		sscanf(hex + 2 * i, "%2hhx", &buf[i]);
	*len = n;
	return 0;
}

typedef struct {
	pdu_poll_reading_t r;	/* answered (nonce and node set) */
	unsigned uid;		/* sealed as */
	unsigned delay_ms;
	bool stale_first;	/* an answer to an earlier ask first */
} script_t;

static script_t script;
static int lfd = -1;
static unsigned short lport;
static pthread_t poller_th;
static unsigned node_uid;	/* the node's sealer's ctx */

static void _send_line(int fd, const pdu_poll_reading_t *r, unsigned uid)
{
	uint8_t buf[PDU_POLL_MAX_LEN];
	int n = pdu_poll_wire_reading(r, buf, sizeof(buf));
	char *text, err[64];

	if (n <= 0)
		return;
	_c_seal(&uid, buf, (size_t)n, &text, err, sizeof(err));
	/* the node may be gone (its deadline): not this thread's failure */
	if (write(fd, text, strlen(text)) >= 0 && write(fd, "\n", 1) < 0)
		n = 0;
	free(text);
}

static void *_fake_poller(void *arg)
{
	int fd;

	(void)arg;
	while ((fd = accept(lfd, NULL, NULL)) >= 0) {
		se_lines_t l = { .len = 0 };
		char line[SE_LINE_MAX], err[256];

		while (se_lines_fill(&l, fd) > 0)
			while (se_lines_next(&l, line, sizeof(line)) > 0) {
				uint8_t buf[PDU_POLL_MAX_LEN];
				size_t len = sizeof(buf);
				pdu_poll_ask_t ask;
				pdu_poll_reading_t r = script.r;
				uid_t uid;

				if (_c_open(NULL, line, buf, &len, &uid, err,
					    sizeof(err)) ||
				    pdu_poll_wire_read_ask(buf, len, &ask,
							   err, sizeof(err)))
					break;
				snprintf(r.node, sizeof(r.node), "%s",
					 ask.node);
				r.nonce = ask.nonce - 1;
				if (script.stale_first)
					_send_line(fd, &r, script.uid);
				usleep(script.delay_ms * 1000);
				r.nonce = ask.nonce;
				_send_line(fd, &r, script.uid);
			}
		close(fd);
	}
	return NULL;
}

static void _poller_up(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t sl = sizeof(a);

	memset(&script, 0, sizeof(script));
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert_int_eq(bind(lfd, (struct sockaddr *)&a, sizeof(a)), 0);
	ck_assert_int_eq(listen(lfd, 4), 0);
	getsockname(lfd, (struct sockaddr *)&a, &sl);
	lport = ntohs(a.sin_port);
	pthread_create(&poller_th, NULL, _fake_poller, NULL);
}

static void _poller_down(void)
{
	shutdown(lfd, SHUT_RDWR);
	close(lfd);
	pthread_join(poller_th, NULL);
}

static unsigned sealer_frees;

static void _c_free(void *ctx)
{
	ck_assert_ptr_eq(ctx, &node_uid);
	sealer_frees++;
}

static pdu_poll_meter_t *_node_meter(unsigned short port, char *addr,
				     size_t len)
{
	pdu_poll_meter_config_t c = {
		.node = "n1", .poller = addr, .poller_uid = 999,
		.timeout_ns = 300 * MS, .max_age_ns = 3000 * MS,
		.sealer = { _c_seal, _c_open, &node_uid },
		.sealer_free = _c_free };
	pdu_poll_meter_t *m;
	char err[256];

	snprintf(addr, len, "127.0.0.1:%u", port);
	ck_assert_int_eq(pdu_poll_meter_create(&c, &m, err, sizeof(err)),
			 0);
	return m;
}

static int _read(pdu_poll_meter_t *m, meter_reading_t *r, char *msg,
		 size_t len, uint64_t *took)
{
	uint64_t t0 = se_mono_ns();
	int rc;

	memset(r, 0, sizeof(*r));
	msg[0] = '\0';
	rc = pdu_poll_meter_ops.read(m, r, t0 + 1000 * MS, msg, len);
	if (took)
		*took = se_mono_ns() - t0;
	return rc;
}

START_TEST(test_node_reading_stamped)
{
	char addr[64], msg[512];
	pdu_poll_meter_t *m = _node_meter(lport, addr, sizeof(addr));
	meter_reading_t r;
	uint64_t now;

	script.r = (pdu_poll_reading_t){
		.seq = 5, .age_ns = 400 * MS, .power_mw = 123456,
		.counter_raw = 777, .mj_per_unit = 1800000.0,
		.width_bits = 64, .registers = 2,
		.flags = PDU_POLL_POWER | PDU_POLL_COUNTER };
	script.uid = 999;		/* the poller's user */
	ck_assert_int_eq(_read(m, &r, msg, sizeof(msg), NULL), 0);
	now = se_mono_ns();
	ck_assert(r.has_power && r.power_mw == 123456);
	ck_assert(r.has_counter && r.counter_raw == 777);
	ck_assert_uint_eq(r.counter_spec.width_bits, 64);
	ck_assert_uint_eq(r.counter_spec.registers, 2);
	ck_assert(r.counter_spec.mj_per_unit == 1800000.0);
	/* at receipt - age: 400 ms before now, within the exchange */
	ck_assert_msg(r.t_ns <= now - 400 * MS &&
		      r.t_ns > now - 450 * MS, "%llu ms ago",
		      (unsigned long long)((now - r.t_ns) / MS));
	/* the same round again: nothing newer */
	ck_assert_int_eq(_read(m, &r, msg, sizeof(msg), NULL), -EALREADY);
	/* the next round, behind a late answer to an earlier ask (root) */
	script.r.seq = 6;
	script.uid = 0;
	script.stale_first = true;
	ck_assert_int_eq(_read(m, &r, msg, sizeof(msg), NULL), 0);
	ck_assert_uint_eq(pdu_poll_meter_asks(m), 3);
	sealer_frees = 0;
	pdu_poll_meter_destroy(m);	/* the sealer's context with it */
	ck_assert_uint_eq(sealer_frees, 1);
}
END_TEST

START_TEST(test_node_poller_failed_round)
{
	char addr[64], msg[512], want[512];
	pdu_poll_meter_t *m = _node_meter(lport, addr, sizeof(addr));
	meter_reading_t r;

	script.r = (pdu_poll_reading_t){
		.seq = 3, .status = -ETIMEDOUT,
		.error = "node n1: PDU pdub (10.0.0.6): GET: no answer by "
			 "the deadline" };
	ck_assert_int_eq(_read(m, &r, msg, sizeof(msg), NULL), -EAGAIN);
	snprintf(want, sizeof(want), "poller %s: %s", addr, script.r.error);
	ck_assert_str_eq(msg, want);
	/* too old a reading (the poller's rounds stuck) */
	script.r = (pdu_poll_reading_t){ .seq = 4, .age_ns = 9000 * MS,
					  .flags = PDU_POLL_POWER };
	ck_assert_int_eq(_read(m, &r, msg, sizeof(msg), NULL), -EAGAIN);
	ck_assert_msg(strstr(msg, "reading: 9.0 s old"), "%s", msg);
	pdu_poll_meter_destroy(m);
}
END_TEST

START_TEST(test_node_refuses_other_uid)
{
	char addr[64], msg[512];
	pdu_poll_meter_t *m = _node_meter(lport, addr, sizeof(addr));
	meter_reading_t r;

	script.r = (pdu_poll_reading_t){ .seq = 1, .power_mw = 1,
					  .flags = PDU_POLL_POWER };
	script.uid = 1234;
	ck_assert_int_eq(_read(m, &r, msg, sizeof(msg), NULL), -EACCES);
	ck_assert_msg(strstr(msg, "sealed by uid 1234, not root or the "
			     "poller's uid 999"), "%s", msg);
	pdu_poll_meter_destroy(m);
}
END_TEST

START_TEST(test_node_poller_silent)
{
	char addr[64], msg[512];
	pdu_poll_meter_t *m = _node_meter(lport, addr, sizeof(addr));
	meter_reading_t r;
	uint64_t took;

	script.r = (pdu_poll_reading_t){ .seq = 1,
					  .flags = PDU_POLL_POWER };
	script.delay_ms = 700;
	/* the timeout (300 ms) before the read's deadline (1 s) */
	ck_assert_int_eq(_read(m, &r, msg, sizeof(msg), &took), -ETIMEDOUT);
	ck_assert_msg(took >= 290 * MS && took < 400 * MS, "%llu ms",
		      (unsigned long long)(took / MS));
	ck_assert_msg(strstr(msg, "answer: no answer by the deadline") &&
		      strstr(msg, addr), "%s", msg);
	pdu_poll_meter_destroy(m);
}
END_TEST

START_TEST(test_node_poller_down)
{
	char addr[64], msg[512], want[512];
	pdu_poll_meter_t *m;
	meter_reading_t r;

	_poller_down();			/* nobody at lport now */
	m = _node_meter(lport, addr, sizeof(addr));
	ck_assert_int_eq(_read(m, &r, msg, sizeof(msg), NULL),
			 -ECONNREFUSED);
	snprintf(want, sizeof(want), "poller %s: connect: Connection "
		 "refused", addr);
	ck_assert_str_eq(msg, want);
	pdu_poll_meter_destroy(m);
	_poller_up();			/* for the teardown */
}
END_TEST

START_TEST(test_node_bad_address)
{
	pdu_poll_meter_config_t c = { .node = "n1", .poller = "pollerhost",
				      .key = "EnergySNMPPoller",
				      .timeout_ns = MS };
	pdu_poll_meter_t *m;
	char err[256];

	ck_assert_int_eq(pdu_poll_meter_create(&c, &m, err, sizeof(err)),
			 -EINVAL);
	ck_assert_str_eq(err, "EnergySNMPPoller=pollerhost: not HOST:PORT");
}
END_TEST

static Suite *_suite(void)
{
	Suite *s = suite_create("snmp_poller");
	TCase *w = tcase_create("wire");
	TCase *p = tcase_create("poller");
	TCase *n = tcase_create("node");

	tcase_add_test(w, test_wire_roundtrip);
	tcase_add_test(w, test_wire_refuses);
	suite_add_tcase(s, w);
	tcase_add_checked_fixture(p, _conf, _unconf);
	tcase_add_test(p, test_poller_one_get_per_pdu);
	tcase_add_test(p, test_poller_counter_steps);
	tcase_add_test(p, test_poller_pdu_down);
	tcase_add_test(p, test_poller_toobig_splits);
	tcase_add_test(p, test_poller_first_get_bounded);
	suite_add_tcase(s, p);
	tcase_add_checked_fixture(n, _poller_up, _poller_down);
	tcase_add_test(n, test_node_reading_stamped);
	tcase_add_test(n, test_node_poller_failed_round);
	tcase_add_test(n, test_node_refuses_other_uid);
	tcase_add_test(n, test_node_poller_silent);
	tcase_add_test(n, test_node_poller_down);
	tcase_add_test(n, test_node_bad_address);
	suite_add_tcase(s, n);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(_suite());
	int failed;

	signal(SIGPIPE, SIG_IGN);	/* the fake poller writes to a node
					 * gone at its deadline */
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
