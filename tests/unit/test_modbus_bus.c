/*
 * test_modbus_bus.c - a shared Modbus TCP bus against a live libmodbus
 * server in this process: a close() that cannot take the bus (another
 * meter's transaction holds it) still counts, so the last close really
 * disconnects; and the host name of a device is looked up by the open's
 * deadline (a resolver that never answers: hung_dns.h, root only).  And
 * how power registers decode (negative, NaN), on the meter's decoder.
 *
 * modbus_meter.c is included to see the bus's user count.
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include "hung_dns.h"

#include "../../src/meters/modbus/modbus_meter.c"

#include <check.h>

#define READ_NS		(3 * SE_NS_PER_SEC)
/* The peer holds the first answer longer than close() waits */
#define STALL_MS	1500
#define OPEN_NS		(300 * SE_NS_PER_MS)
#define SLACK_NS	(150 * SE_NS_PER_MS)

/* ------------------------------------------- a one-client Modbus server */

typedef struct {
	modbus_t *ctx;
	modbus_mapping_t *map;
	int listen_fd;
	unsigned port;
	unsigned stall_ms;	/* before the first answer */
	atomic_bool gone;	/* the client closed its connection */
	pthread_t tid;
} server_t;

static server_t srv;

static void *_serve(void *arg)
{
	server_t *s = arg;
	uint8_t q[MODBUS_TCP_MAX_ADU_LENGTH];
	unsigned answered = 0;
	int n;

	if (modbus_tcp_accept(s->ctx, &s->listen_fd) < 0)
		return NULL;
	while ((n = modbus_receive(s->ctx, q)) >= 0) {
		if (!n)
			continue;
		if (!answered++ && s->stall_ms)
			se_sleep_ns(s->stall_ms * SE_NS_PER_MS);
		modbus_reply(s->ctx, q, n, s->map);
	}
	atomic_store(&s->gone, true);
	return NULL;
}

static void _server_start(unsigned stall_ms)
{
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);

	memset(&srv, 0, sizeof(srv));
	srv.stall_ms = stall_ms;
	srv.ctx = modbus_new_tcp("127.0.0.1", 0);
	srv.map = modbus_mapping_new(0, 0, 16, 16);
	ck_assert(srv.ctx && srv.map);
	srv.map->tab_registers[0] = 1234;	/* W */
	srv.listen_fd = modbus_tcp_listen(srv.ctx, 1);
	ck_assert_int_ge(srv.listen_fd, 0);
	ck_assert(!getsockname(srv.listen_fd, (struct sockaddr *) &sa, &len));
	srv.port = ntohs(sa.sin_port);
	ck_assert(!pthread_create(&srv.tid, NULL, _serve, &srv));
}

/* Has the client gone, within limit_ns? (polling) */
static bool _server_gone(uint64_t limit_ns)
{
	uint64_t end = se_mono_ns() + limit_ns;

	while (!atomic_load(&srv.gone) && se_mono_ns() < end)
		se_sleep_ns(5 * SE_NS_PER_MS);
	return atomic_load(&srv.gone);
}

/*
 * Wake the server out of accept() or receive by shutting its sockets, not
 * by pthread_cancel(): a thread cancelled inside instrumented frames
 * leaves their AddressSanitizer redzones poisoned on its stack, glibc
 * hands that stack to the next thread (here se_resolve's helper), and
 * ASan then reports a stack-buffer-overflow at that thread's exit.
 */
static void _server_stop(void)
{
	int fd = modbus_get_socket(srv.ctx);

	shutdown(srv.listen_fd, SHUT_RDWR);
	if (fd >= 0 && fd != srv.listen_fd)
		shutdown(fd, SHUT_RDWR);
	pthread_join(srv.tid, NULL);
	close(srv.listen_fd);
	modbus_close(srv.ctx);
	modbus_free(srv.ctx);
	modbus_mapping_free(srv.map);
}

/* ------------------------------------------------------------- meters */

static modbus_meter_t *_meter(const char *host, unsigned unit)
{
	modbus_meter_config_t cfg = {
		.unit = unit,
		.kind = MB_KIND_HOLDING,
		.power = { .present = true, .address = 0, .type = MB_UINT16,
			   .order = MB_ORDER_ABCD, .scale = 1.0 },
		.max_regs_per_read = 125,
		.share = 1.0,
	};
	char dev[300], err[256];
	modbus_meter_t *m = NULL;

	snprintf(dev, sizeof(dev), "tcp://%s:%u", host, srv.port);
	cfg.device = dev;
	ck_assert_msg(!modbus_meter_create(&cfg, &m, err, sizeof(err)), "%s",
		      err);
	return m;
}

typedef struct {
	modbus_meter_t *m;
	int rc;
	meter_reading_t r;
} read_job_t;

static void *_read(void *arg)
{
	read_job_t *j = arg;

	j->rc = modbus_meter_ops.read(j->m, &j->r, se_mono_ns() + READ_NS,
				      NULL, 0);
	return NULL;
}

/*
 * A reads; the peer stalls its answer past close()'s bound; B closes
 * meanwhile and gives up waiting for the bus.  The count still comes
 * right (A's transaction takes B off), and A's close, the last, closes
 * the connection: the peer sees it go.
 */
START_TEST(test_close_while_bus_busy)
{
	modbus_meter_t *a, *b;
	read_job_t job;
	pthread_t tid;
	uint64_t t0, dt;

	_server_start(STALL_MS);
	a = _meter("127.0.0.1", 1);
	b = _meter("127.0.0.1", 2);
	ck_assert_ptr_eq(a->bus, b->bus);
	ck_assert_int_eq(modbus_meter_ops.open(a, se_mono_ns() + OPEN_NS), 0);
	ck_assert_int_eq(modbus_meter_ops.open(b, se_mono_ns() + OPEN_NS), 0);
	ck_assert_uint_eq(a->bus->users, 2);

	job.m = a;
	ck_assert(!pthread_create(&tid, NULL, _read, &job));
	se_sleep_ns(200 * SE_NS_PER_MS);	/* A's request is out */
	t0 = se_mono_ns();
	modbus_meter_ops.close(b);
	dt = se_mono_ns() - t0;
	/* close() stayed within its bound, and did give up */
	ck_assert_uint_ge(dt, CLOSE_WAIT_NS - SE_NS_PER_MS);
	ck_assert_uint_le(dt, CLOSE_WAIT_NS + SLACK_NS);
	pthread_join(tid, NULL);
	ck_assert_int_eq(job.rc, 0);
	ck_assert_uint_eq(job.r.power_mw, 1234000);
	/* A's transaction applied B's close */
	ck_assert_uint_eq(a->bus->users, 1);
	ck_assert_uint_eq(atomic_load(&a->bus->released), 0);
	ck_assert_ptr_nonnull(a->bus->ctx);
	ck_assert(!atomic_load(&srv.gone));

	modbus_meter_ops.close(a);
	ck_assert_uint_eq(a->bus->users, 0);
	ck_assert_ptr_null(a->bus->ctx);
	ck_assert(_server_gone(SE_NS_PER_SEC));

	modbus_meter_destroy(a);
	modbus_meter_destroy(b);
	_server_stop();
}
END_TEST

/* An idle bus: close() takes it at once and the last one disconnects. */
START_TEST(test_close_idle)
{
	modbus_meter_t *a, *b;
	meter_reading_t r;

	_server_start(0);
	a = _meter("127.0.0.1", 1);
	b = _meter("127.0.0.1", 2);
	ck_assert_int_eq(modbus_meter_ops.read(a, &r, se_mono_ns() + READ_NS,
					       NULL, 0), 0);
	ck_assert_int_eq(modbus_meter_ops.read(b, &r, se_mono_ns() + READ_NS,
					       NULL, 0), 0);
	ck_assert_uint_eq(a->bus->users, 2);
	modbus_meter_ops.close(a);
	ck_assert_uint_eq(a->bus->users, 1);
	ck_assert(!_server_gone(50 * SE_NS_PER_MS));
	modbus_meter_ops.close(b);
	ck_assert_uint_eq(b->bus->users, 0);
	ck_assert(_server_gone(SE_NS_PER_SEC));
	modbus_meter_destroy(a);
	modbus_meter_destroy(b);
	_server_stop();
}
END_TEST

/* The device's name does not resolve in time: open fails by its deadline. */
START_TEST(test_open_hung_resolver)
{
	modbus_meter_t *m;
	uint64_t t0, dt;
	int rc;

	_server_start(0);
	m = _meter(HUNG_DNS_HUNG_NAME, 1);
	t0 = se_mono_ns();
	rc = modbus_meter_ops.open(m, t0 + OPEN_NS);
	dt = se_mono_ns() - t0;
	ck_assert_int_eq(rc, -ETIMEDOUT);
	ck_assert_uint_le(dt, OPEN_NS + SLACK_NS);
	ck_assert_uint_eq(m->bus->users, 0);
	ck_assert_ptr_null(m->bus->ctx);
	modbus_meter_destroy(m);
	_server_stop();
	/* the abandoned lookup ends with the resolver's own timeout */
	t0 = se_mono_ns();
	while (se_resolve_pending() &&
	       se_mono_ns() - t0 < (HUNG_DNS_RESOLVER_S * 2 + 3) * SE_NS_PER_SEC)
		se_sleep_ns(10 * SE_NS_PER_MS);
	ck_assert_uint_eq(se_resolve_pending(), 0);
}
END_TEST

/* A name from /etc/hosts still reaches the meter. */
START_TEST(test_open_hosts_name)
{
	modbus_meter_t *m;
	meter_reading_t r;

	_server_start(0);
	m = _meter(HUNG_DNS_HOSTS_NAME, 1);
	ck_assert_int_eq(modbus_meter_ops.open(m, se_mono_ns() + OPEN_NS), 0);
	ck_assert_int_eq(modbus_meter_ops.read(m, &r, se_mono_ns() + READ_NS,
					       NULL, 0), 0);
	ck_assert_uint_eq(r.power_mw, 1234000);
	/* the label keeps the name */
	ck_assert_ptr_nonnull(strstr(modbus_meter_label(m),
				     HUNG_DNS_HOSTS_NAME));
	modbus_meter_ops.close(m);
	ck_assert(_server_gone(SE_NS_PER_SEC));
	modbus_meter_destroy(m);
	_server_stop();
}
END_TEST

/*
 * Power readings (issue #14): below 0 W within the meter's noise reads
 * 0 W; a large negative or a NaN fails the reading (-EAGAIN, gap-filled)
 * rather than counting 0 W; the node's share applies.  No I/O: the
 * registers go straight to the decoder.
 */
START_TEST(test_decode_power_values)
{
	modbus_meter_config_t cfg = {
		.device = "tcp://127.0.0.1:1",
		.unit = 1,
		.kind = MB_KIND_HOLDING,
		.power = { .present = true, .address = 0, .type = MB_FLOAT32,
			   .order = MB_ORDER_ABCD, .scale = 1.0 },
		.max_regs_per_read = 125,
		.share = 0.5,
	};
	modbus_meter_t *m = NULL;
	meter_reading_t r;
	uint16_t regs[2];
	char msg[256], err[256];

	ck_assert_msg(!modbus_meter_create(&cfg, &m, err, sizeof(err)), "%s",
		      err);
	mb_encode(400.0, MB_FLOAT32, MB_ORDER_ABCD, regs);
	ck_assert_int_eq(_decode(m, regs, &r, msg, sizeof(msg)), 0);
	ck_assert_uint_eq(r.power_mw, 200000);		/* half of 400 W */

	mb_encode(-20.0, MB_FLOAT32, MB_ORDER_ABCD, regs);
	ck_assert_int_eq(_decode(m, regs, &r, msg, sizeof(msg)), 0);
	ck_assert_uint_eq(r.power_mw, 0);		/* idle noise */

	mb_encode(-3000.0, MB_FLOAT32, MB_ORDER_ABCD, regs);
	ck_assert_int_eq(_decode(m, regs, &r, msg, sizeof(msg)), -EAGAIN);
	ck_assert_msg(strstr(msg, "power register 0: -3000.0 W"), "%s", msg);

	mb_encode(NAN, MB_FLOAT32, MB_ORDER_ABCD, regs);
	ck_assert_int_eq(_decode(m, regs, &r, msg, sizeof(msg)), -EAGAIN);
	ck_assert_msg(strstr(msg, "not a number"), "%s", msg);
	modbus_meter_destroy(m);
}
END_TEST

static Suite *_suite(bool hung_dns)
{
	Suite *s = suite_create("modbus_bus");
	TCase *tc = tcase_create("close");

	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, test_close_while_bus_busy);
	tcase_add_test(tc, test_close_idle);
	suite_add_tcase(s, tc);
	tc = tcase_create("values");
	tcase_add_test(tc, test_decode_power_values);
	suite_add_tcase(s, tc);
	if (hung_dns) {
		tc = tcase_create("resolve");
		tcase_set_timeout(tc, 20);
		tcase_add_test(tc, test_open_hung_resolver);
		tcase_add_test(tc, test_open_hosts_name);
		suite_add_tcase(s, tc);
	}
	return s;
}

int main(void)
{
	char why[256] = "";
	bool hung = hung_dns_setup(why, sizeof(why));
	SRunner *sr;
	int failed;

	if (!hung)
		fprintf(stderr, "SKIP resolver tests: %s\n", why);
	sr = srunner_create(_suite(hung));
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	hung_dns_cleanup();
	return failed ? 1 : 0;
}
