/*
 * test_energy_query_snapshot.c - the node's snapshot over the energy query
 * socket (wire version 5): a real server and sampler (the fixture's fake
 * meter), the client energy_query_snapshot(), and the exporter's scrape
 * over them; an old server's refusal; version 3 and 4 questions still
 * answered beside it.
 */
#define EQF_POWER_MW	250000
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "energy_query_fixture.h"
#include "energy_query_wire.h"
#include "exp_http.h"
#include "exporter.h"

static unsigned hook_steps = 3;

/* The owner's part, as slurmd's glue gives it: a total, steps, a GPU. */
static int _snapshot_hook(void *arg, energy_snapshot_t *out)
{
	(void) arg;
	out->flags |= ENERGY_SNAPSHOT_TOTAL | ENERGY_SNAPSHOT_SHARE;
	out->total_id = 77;
	out->total_mj = 5000;
	out->n_steps = hook_steps;
	for (unsigned i = 0; i < hook_steps && i < ENERGY_SNAPSHOT_STEPS_MAX;
	     i++)
		out->steps[i] = (energy_snapshot_step_t) {
			.job_id = 100 + i, .step_id = 0, .energy_mj = 10 * i };
	out->n_gpus = 1;
	out->gpus[0] = (energy_snapshot_gpu_t) { 2, ENERGY_SNAPSHOT_GPU_VALID,
						 60000, 9000 };
	return 0;
}

static int _total_hook(void *arg, uint64_t *total_mj, uint64_t *power_mw,
		       uint64_t *sample_ns)
{
	(void) arg;
	*total_mj = 4242;
	*power_mw = 1;
	*sample_ns = 1;
	return 0;
}

START_TEST(test_snapshot_roundtrip)
{
	energy_query_hooks_t hooks = { .snapshot = _snapshot_hook };
	energy_snapshot_t *s = malloc(sizeof(*s));
	fixture_t f;

	eqf_up(&f, "/tmp/se-eqs-XXXXXX");
	eqf_serve(&f, &hooks);
	memset(s, 0xff, sizeof(*s));
	ck_assert_int_eq(energy_query_snapshot(f.path, SE_NS_PER_SEC, s), 0);
	/* the sampler's part, by the server */
	ck_assert_uint_eq(s->meter_state, ENERGY_SNAPSHOT_METER_OK);
	ck_assert_uint_eq(s->power_mw, EQF_POWER_MW);
	ck_assert_uint_ne(s->last_sample_ns, 0);
	ck_assert_uint_ge(s->now_ns, s->last_sample_ns);
	ck_assert_uint_eq(s->period_ns, EQF_PERIOD_NS);
	ck_assert_uint_ne(s->generation, 0);
	/* the owner's, by its hook */
	ck_assert_uint_eq(s->total_mj, 5000);
	ck_assert_uint_eq(s->n_steps, 3);
	ck_assert_uint_eq(s->steps[2].job_id, 102);
	ck_assert_uint_eq(s->steps[2].energy_mj, 20);
	ck_assert_uint_eq(s->steps[3].job_id, 0);	/* not sent: zero */
	ck_assert_uint_eq(s->gpus[0].minor, 2);
	/* a full node: 1024 steps, one reply (the most the wire carries) */
	hook_steps = ENERGY_SNAPSHOT_STEPS_MAX + 5;
	ck_assert_int_eq(energy_query_snapshot(f.path, SE_NS_PER_SEC, s), 0);
	ck_assert_uint_eq(s->n_steps, ENERGY_SNAPSHOT_STEPS_MAX);
	ck_assert(s->flags & ENERGY_SNAPSHOT_TRUNCATED);
	ck_assert_uint_eq(s->steps[1023].job_id, 1123);
	hook_steps = 3;
	eqf_down(&f);
	free(s);
}
END_TEST

/* Without a snapshot hook: the sampler's part, and the total hook's. */
START_TEST(test_snapshot_total_only)
{
	energy_query_hooks_t hooks = { .total = _total_hook, .total_id = 9 };
	energy_snapshot_t *s = malloc(sizeof(*s));
	energy_query_answer_t a;
	fixture_t f;

	eqf_up(&f, "/tmp/se-eqs-XXXXXX");
	eqf_serve(&f, &hooks);
	ck_assert_int_eq(energy_query_snapshot(f.path, SE_NS_PER_SEC, s), 0);
	ck_assert(s->flags & ENERGY_SNAPSHOT_TOTAL);
	ck_assert_uint_eq(s->total_mj, 4242);
	ck_assert_uint_eq(s->total_id, 9);
	ck_assert_uint_eq(s->n_steps, 0);
	/* a step's question beside it, unchanged */
	ck_assert_int_eq(energy_query_known(f.path, 0, 0, SE_NS_PER_SEC, &a),
			 0);
	ck_assert_uint_eq(a.version, ENERGY_QUERY_VERSION);
	ck_assert(a.total);
	ck_assert_uint_eq(a.total_mj, 4242);
	eqf_down(&f);
	free(s);
}
END_TEST

/* A server of version 4 (before the snapshot): it refuses version 5 in
 * its own layout, which the client tells as -EPROTONOSUPPORT. */
typedef struct {
	int lfd;
	char path[108];
} old_server_t;

static void *_old_server(void *arg)
{
	old_server_t *o = arg;
	energy_query_wire_rep_t rep = { 0 };
	char buf[256];
	int fd = accept(o->lfd, NULL, NULL);

	if (fd < 0)
		return NULL;
	(void) !recv(fd, buf, sizeof(buf), 0);
	rep.v3.magic = ENERGY_QUERY_MAGIC_REP;
	rep.v3.version = ENERGY_QUERY_VERSION;
	rep.v3.size = sizeof(rep);
	rep.v3.status = -EPROTO;
	(void) !send(fd, &rep, sizeof(rep), MSG_NOSIGNAL);
	close(fd);
	return NULL;
}

START_TEST(test_old_server_refuses)
{
	old_server_t o;
	struct sockaddr_un sa;
	energy_snapshot_t *s = malloc(sizeof(*s));
	char dir[] = "/tmp/se-eqs-XXXXXX";
	pthread_t t;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(o.path, sizeof(o.path), "%s/old.sock", dir);
	ck_assert_int_eq(energy_query_fill_addr(o.path, &sa), 0);
	o.lfd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	ck_assert_int_eq(bind(o.lfd, (struct sockaddr *) &sa, sizeof(sa)), 0);
	ck_assert_int_eq(listen(o.lfd, 4), 0);
	ck_assert_int_eq(pthread_create(&t, NULL, _old_server, &o), 0);
	ck_assert_int_eq(energy_query_snapshot(o.path, SE_NS_PER_SEC, s),
			 -EPROTONOSUPPORT);
	pthread_join(t, NULL);
	close(o.lfd);
	unlink(o.path);
	rmdir(dir);
	/* nobody there */
	ck_assert_int_eq(energy_query_snapshot(o.path, SE_NS_PER_SEC, s),
			 -ENOENT);
	free(s);
}
END_TEST

static bool _labels(void *arg, uint32_t job_id, exp_job_labels_t *out)
{
	(void) arg;
	(void) job_id;
	out->user = "u";
	out->account = "a";
	out->partition = "p";
	return true;
}

/* The exporter's scrape over the real socket: what slurmd answered, and
 * slurmd_up 0 once the server is gone. */
START_TEST(test_exporter_scrape_over_socket)
{
	energy_query_hooks_t hooks = { .snapshot = _snapshot_hook };
	energy_snapshot_t *s = malloc(sizeof(*s));
	exp_scrape_t sc = { .node = "n1", .snap = s, .labels = _labels,
			    .format = EXP_FORMAT_PROMETHEUS };
	exp_text_t t = { 0 };
	fixture_t f;

	eqf_up(&f, "/tmp/se-eqs-XXXXXX");
	eqf_serve(&f, &hooks);
	ck_assert_int_eq(energy_query_snapshot(f.path, SE_NS_PER_SEC, s), 0);
	exp_render(&sc, &t);
	ck_assert_ptr_nonnull(strstr(t.buf, "slurm_energy_node_power_watts{node=\"n1\"} 250.000\n"));
	ck_assert_ptr_nonnull(strstr(t.buf, "slurm_energy_node_energy_joules_total{node=\"n1\"} 5.000\n"));
	ck_assert_ptr_nonnull(strstr(t.buf, "slurm_energy_job_energy_joules_total{node=\"n1\",jobid=\"102\",step=\"0\",user=\"u\",account=\"a\",partition=\"p\"} 0.020\n"));
	ck_assert_ptr_nonnull(strstr(t.buf, "slurm_energy_gpu_power_watts{node=\"n1\",gpu=\"2\"} 60.000\n"));
	exp_text_free(&t);
	eqf_down(&f);
	ck_assert_int_lt(energy_query_snapshot(f.path, SE_NS_PER_SEC, s), 0);
	free(s);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("energy_query_snapshot");
	TCase *tc = tcase_create("all");
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_snapshot_roundtrip);
	tcase_add_test(tc, test_snapshot_total_only);
	tcase_add_test(tc, test_old_server_refuses);
	tcase_add_test(tc, test_exporter_scrape_over_socket);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
