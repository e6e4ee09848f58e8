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
#include <stddef.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "energy_query_fixture.h"
#include "energy_query_steps.h"
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

/* ------------------------------------------------ node mode's steps */

#define S_NS	SE_NS_PER_SEC

/* A meter at 250 W since t = 0 (mJ = 250 * ms), its history kept from
 * 1 s on (earlier: -ERANGE). */
static int _linear_at(void *arg, uint64_t t_ns, uint64_t *mj)
{
	(void) arg;
	if (t_ns < S_NS)
		return -ERANGE;
	*mj = t_ns / SE_NS_PER_MS * 250;
	return 0;
}

static energy_query_step_t _step(uint32_t job, bool begin, bool end)
{
	energy_query_step_t q = { .job_id = job, .step_id = 0,
				  .begin = begin, .end = end };
	return q;
}

/* The figure of step job in out, or UINT64_MAX when not listed. */
static uint64_t _listed_mj(const energy_snapshot_t *out, uint32_t job,
			   uint32_t *flags)
{
	for (uint32_t i = 0; i < out->n_steps; i++)
		if (out->steps[i].job_id == job) {
			if (flags)
				*flags = out->steps[i].flags;
			return out->steps[i].energy_mj;
		}
	return UINT64_MAX;
}

static void _snap(energy_query_steps_t *t, uint64_t now, uint64_t last,
		  energy_snapshot_t *out)
{
	memset(out, 0, offsetof(energy_snapshot_t, steps));
	energy_query_steps_snapshot(t, now, last, 2 * S_NS, _linear_at, NULL,
				    NULL, NULL, out);
	ck_assert(out->flags & ENERGY_SNAPSHOT_NODE_STEPS);
}

/* E(newest sample) - E(t0) while it runs, E(t1) - E(t0) once the reading
 * after its end is in (what the live settle gives sacct), listed for the
 * linger after and then gone; never lowered by a later t0. */
START_TEST(test_node_steps_figures)
{
	energy_query_steps_t *t = energy_query_steps_new();
	energy_snapshot_t *out = malloc(sizeof(*out));
	energy_query_step_t q;
	uint32_t flags = 0;

	/* a question that names no beginning (not a step's own) adds none */
	q = _step(7, false, false);
	energy_query_steps_heard(t, &q, 2 * S_NS, 3 * S_NS, 3 * S_NS,
				 _linear_at, NULL, 3 * S_NS);
	ck_assert_uint_eq(energy_query_steps_count(t), 0);

	q = _step(42, true, false);
	energy_query_steps_heard(t, &q, 2 * S_NS, 2 * S_NS, 2 * S_NS,
				 _linear_at, NULL, 1 * S_NS);
	/* no sample since its start yet: 0 so far */
	_snap(t, 2 * S_NS, 1 * S_NS, out);
	ck_assert_uint_eq(_listed_mj(out, 42, &flags), 0);
	ck_assert_uint_eq(flags, 0);
	_snap(t, 5 * S_NS, 5 * S_NS, out);
	ck_assert_uint_eq(_listed_mj(out, 42, NULL), 3 * 250000);
	/* the step's first poll moves t0 later: the counter holds */
	q = _step(42, true, false);
	energy_query_steps_heard(t, &q, 2 * S_NS + 500 * SE_NS_PER_MS,
				 5 * S_NS, 5 * S_NS, _linear_at, NULL,
				 5 * S_NS);
	_snap(t, 5 * S_NS, 5 * S_NS, out);
	ck_assert_uint_eq(_listed_mj(out, 42, NULL), 3 * 250000);
	/* its end at 6 s; the reading after it not in yet */
	q = _step(42, true, true);
	energy_query_steps_heard(t, &q, 2 * S_NS + 500 * SE_NS_PER_MS,
				 6 * S_NS, 6 * S_NS, _linear_at, NULL,
				 5 * S_NS + 500 * SE_NS_PER_MS);
	_snap(t, 6 * S_NS, 5 * S_NS + 500 * SE_NS_PER_MS, out);
	ck_assert_uint_eq(_listed_mj(out, 42, &flags), 3 * 250000);
	ck_assert_uint_eq(flags, ENERGY_SNAPSHOT_STEP_ENDED);
	/* in: E(6 s) - E(2.5 s), not past it */
	_snap(t, 7 * S_NS, 7 * S_NS, out);
	ck_assert_uint_eq(_listed_mj(out, 42, &flags), 3500 * 250);
	ck_assert_uint_eq(flags, ENERGY_SNAPSHOT_STEP_ENDED |
				 ENERGY_SNAPSHOT_STEP_FINAL);
	_snap(t, 8 * S_NS, 8 * S_NS, out);
	ck_assert_uint_eq(_listed_mj(out, 42, NULL), 3500 * 250);
	/* the linger (2 s) after it was first listed final: gone */
	_snap(t, 9 * S_NS + 1, 9 * S_NS, out);
	ck_assert_uint_eq(_listed_mj(out, 42, NULL), UINT64_MAX);
	ck_assert_uint_eq(energy_query_steps_count(t), 0);
	energy_query_steps_free(t);
	free(out);
}
END_TEST

/* A step whose start is older than the history (or the sampler's first
 * sample) is never listed (no figure but a wrong one); one that stops asking is forgotten after
 * ENERGY_QUERY_STEPS_IDLE_NS; past the table's size the step heard
 * longest ago makes room. */
START_TEST(test_node_steps_lost_idle_full)
{
	energy_query_steps_t *t = energy_query_steps_new();
	energy_snapshot_t *out = malloc(sizeof(*out));
	energy_query_step_t q;
	uint64_t idle_end = 10 * S_NS + ENERGY_QUERY_STEPS_IDLE_NS;

	q = _step(1, true, false);	/* began at 0.5 s: before history */
	energy_query_steps_heard(t, &q, S_NS / 2, 10 * S_NS, 10 * S_NS,
				 _linear_at, NULL, 10 * S_NS);
	q = _step(2, true, false);
	energy_query_steps_heard(t, &q, 4 * S_NS, 10 * S_NS, 10 * S_NS,
				 _linear_at, NULL, 10 * S_NS);
	_snap(t, 10 * S_NS, 10 * S_NS, out);
	ck_assert_uint_eq(out->n_steps, 1);
	ck_assert_uint_eq(_listed_mj(out, 2, NULL), 6 * 250000);
	ck_assert_uint_eq(energy_query_steps_count(t), 2);
	/* the unlisted one ends: forgotten at once */
	q = _step(1, true, true);
	energy_query_steps_heard(t, &q, S_NS / 2, 11 * S_NS, 11 * S_NS,
				 _linear_at, NULL, 10 * S_NS);
	_snap(t, 11 * S_NS, 10 * S_NS, out);
	ck_assert_uint_eq(energy_query_steps_count(t), 1);
	_snap(t, idle_end, idle_end, out);
	ck_assert_uint_eq(out->n_steps, 1);
	_snap(t, idle_end + 1, idle_end, out);
	ck_assert_uint_eq(out->n_steps, 0);
	ck_assert_uint_eq(energy_query_steps_count(t), 0);

	for (uint32_t j = 0; j < ENERGY_SNAPSHOT_STEPS_MAX + 3; j++) {
		q = _step(1000 + j, true, false);
		energy_query_steps_heard(t, &q, 2 * S_NS, 3 * S_NS,
					 2 * S_NS + j, _linear_at, NULL,
					 3 * S_NS);
	}
	ck_assert_uint_eq(energy_query_steps_count(t),
			  ENERGY_SNAPSHOT_STEPS_MAX);
	_snap(t, 3 * S_NS + 2000, 3 * S_NS, out);
	ck_assert_uint_eq(out->n_steps, ENERGY_SNAPSHOT_STEPS_MAX);
	ck_assert_uint_eq(_listed_mj(out, 1000, NULL), UINT64_MAX);
	ck_assert_uint_eq(_listed_mj(out, 1002, NULL), UINT64_MAX);
	ck_assert_uint_eq(_listed_mj(out, 1003, NULL), 250000);
	energy_query_steps_free(t);
	free(out);
}
END_TEST

static int _share_hook(void *arg, const energy_query_step_t *st,
		       uint64_t t0_ns, uint64_t t1_ns, uint64_t *share_mj,
		       uint64_t *last_ns, energy_query_gpu_t *gpu)
{
	(void) arg, (void) st, (void) t0_ns, (void) t1_ns, (void) gpu;
	*share_mj = 0;
	*last_ns = t1_ns;
	return -ENOENT;
}

/* Over the socket, a node-mode server (no share hook): a step's question
 * lists it in the snapshot with the meter's increase since its start; its
 * end question makes it final, with the settle's figure.  A share-mode
 * server leaves the steps to its snapshot hook. */
START_TEST(test_node_steps_over_socket)
{
	energy_query_hooks_t node_hooks = { .total = _total_hook,
					    .total_id = 9 };
	energy_query_hooks_t share_hooks = { .share = _share_hook };
	energy_snapshot_t *s = malloc(sizeof(*s));
	energy_query_step_t q = _step(55, true, false);
	energy_query_answer_t a;
	uint64_t t0, t1, e;
	uint32_t flags = 0;
	fixture_t f;

	eqf_up(&f, "/tmp/se-eqs-XXXXXX");
	eqf_serve(&f, &node_hooks);
	t0 = se_mono_ns();
	/* the step's start kicks a reading after it */
	ck_assert_int_eq(energy_query_step(f.path, t0, t0, &q, SE_NS_PER_SEC,
					   &a), 0);
	eqf_wait_reads(2);
	ck_assert_int_eq(energy_query_snapshot(f.path, SE_NS_PER_SEC, s), 0);
	ck_assert(s->flags & ENERGY_SNAPSHOT_NODE_STEPS);
	e = _listed_mj(s, 55, &flags);
	ck_assert_uint_ne(e, UINT64_MAX);
	ck_assert_uint_eq(flags, 0);
	se_sleep_ns(20 * SE_NS_PER_MS);
	t1 = se_mono_ns();
	q.end = true;
	ck_assert_int_eq(energy_query_step(f.path, t0, t1, &q, SE_NS_PER_SEC,
					   &a), 0);
	eqf_wait_reads(3);
	ck_assert_int_eq(energy_query_snapshot(f.path, SE_NS_PER_SEC, s), 0);
	e = _listed_mj(s, 55, &flags);
	ck_assert_uint_eq(flags, ENERGY_SNAPSHOT_STEP_ENDED |
				 ENERGY_SNAPSHOT_STEP_FINAL);
	/* the settle's figure: E(t1) - E(t0), the same sampler's */
	ck_assert_int_eq(energy_query_step(f.path, t0, t1, &q, SE_NS_PER_SEC,
					   &a), 0);
	ck_assert(a.complete0 && a.complete1);
	ck_assert_uint_eq(e, a.e1_mj - a.e0_mj);
	ck_assert_uint_ge(e, 20 * 250);

	/* share mode, or a source settling from its own history: none */
	node_hooks.steps_unlisted = true;
	for (unsigned i = 0; i < 2; i++) {
		eqf_serve(&f, i ? &share_hooks : &node_hooks);
		ck_assert_int_eq(energy_query_step(f.path, t0, t1, &q,
						   SE_NS_PER_SEC, &a), 0);
		ck_assert_int_eq(energy_query_snapshot(f.path, SE_NS_PER_SEC,
						       s), 0);
		ck_assert(!(s->flags & ENERGY_SNAPSHOT_NODE_STEPS));
		ck_assert_uint_eq(s->n_steps, 0);
	}
	eqf_down(&f);
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
	tcase_add_test(tc, test_node_steps_figures);
	tcase_add_test(tc, test_node_steps_lost_idle_full);
	tcase_add_test(tc, test_node_steps_over_socket);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
