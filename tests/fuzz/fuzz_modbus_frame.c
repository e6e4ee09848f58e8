/*
 * fuzz_modbus_frame - a Modbus meter's answers on the wire, through the
 * whole read path of acct_gather_energy/modbus: libmodbus' framing (TCP
 * MBAP header, or RTU with its CRC), then src/meters/modbus/modbus_meter.c
 * (requests, error classes, register decoding, share).
 *
 * Built twice: fuzz_modbus_tcp (the meter connects to a responder on
 * 127.0.0.1) and fuzz_modbus_rtu (-DFUZZ_RTU: the meter opens the slave
 * side of a pseudo-terminal, the responder holds the master).  The
 * responder answers each request with the next chunk of the input.
 *
 * Input: 4 configuration bytes
 *   c0  power register type (% 7); bit 7: no power register
 *   c1  energy register type (% 7); bit 7: no energy register
 *   c2  bits 0-1 power word order, 2-3 energy word order, 4 holding
 *       registers, 5 "echo": the responder copies the request's header
 *       (TCP: transaction, protocol, unit; RTU: unit, function, and the CRC
 *       is recomputed) so the fuzzer works on the rest, 6 share 0.5
 *   c3  energy address - power address (beyond 125: two requests)
 * then chunks: a length byte and that many bytes, one per request.
 *
 * Invariants: the read ends by its deadline; it succeeds only with
 * readings equal to what the registers on the wire hold (the answer to
 * each request as answer_frame() finds it; power decoded x
 * scale x share, never negative, and never from a register more than
 * MODBUS_NEGATIVE_NOISE_W below 0; the energy counter as
 * mb_decode_energy reads it); a failure is a negative errno.
 */
#include "fuzz_common.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>

#include "meter.h"
#include "modbus_codec.h"
#include "modbus_meter.h"
#include "se_time.h"

#define MAX_CHUNKS	2
#define POWER_ADDR	100
#define POWER_SCALE	0.1
#define ENERGY_SCALE	3600.0
#ifdef FUZZ_RTU
#define DEADLINE_NS	(30 * SE_NS_PER_MS)
#define DATA_OFFSET	3	/* unit, function, byte count */
#else
#define DEADLINE_NS	(100 * SE_NS_PER_MS)
#define DATA_OFFSET	9	/* MBAP (7), function, byte count */
#endif
/* What a loaded machine adds to a read (130 ms seen under nice 15 with a
 * load of 9): still below libmodbus' own 500 ms default, so a read that
 * ignored its deadline would be caught. */
#define SLACK_NS	(350 * SE_NS_PER_MS)

/* What the responder answers, set by the fuzzer for one read. */
static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool armed;		/* a read is under way */
	bool busy;		/* the responder is in a conversation */
	bool echo;
	uint8_t chunk[MAX_CHUNKS][256];
	size_t len[MAX_CHUNKS];
	size_t n, next;
	/* the bytes that went out, as the meter read them (TCP: a stream) */
	uint8_t sent[MAX_CHUNKS * 256];
	size_t sent_len;
} rs = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER };

static char device[128];
static int pty_master = -1;

#ifdef FUZZ_RTU
static uint16_t crc16(const uint8_t *p, size_t n)
{
	uint16_t crc = 0xffff;

	while (n--) {
		crc ^= *p++;
		for (int i = 0; i < 8; i++)
			crc = crc & 1 ? (crc >> 1) ^ 0xa001 : crc >> 1;
	}
	return crc;
}
#endif

/* The answer to request rq: the next chunk, with its header echoed. */
static size_t answer(const uint8_t *rq, size_t rq_len, uint8_t *out)
{
	size_t len;

	if (rs.next >= rs.n)
		return 0;
	len = rs.len[rs.next];
	memcpy(out, rs.chunk[rs.next++], len);
	if (!rs.echo)
		return len;
#ifdef FUZZ_RTU
	if (len >= 4 && rq_len >= 2) {
		uint16_t crc;

		out[0] = rq[0];
		out[1] = rq[1];
		crc = crc16(out, len - 2);
		out[len - 2] = (uint8_t) crc;
		out[len - 1] = (uint8_t) (crc >> 8);
	}
#else
	if (len >= 7 && rq_len >= 7) {
		memcpy(out, rq, 4);		/* transaction, protocol */
		out[6] = rq[6];			/* unit */
	}
#endif
	return len;
}

/*
 * Send an answer.  TCP: send() with MSG_NOSIGNAL: once the meter has
 * closed its end, a write() raises SIGPIPE, which libFuzzer does not
 * catch: the fuzzer died with no report, no input kept and no stats.
 */
static ssize_t say(int fd, const uint8_t *out, size_t len)
{
#ifdef FUZZ_RTU
	return write(fd, out, len);
#else
	return send(fd, out, len, MSG_NOSIGNAL);
#endif
}

/* Answer requests on fd while the read is armed; false on EOF. */
static bool converse(int fd)
{
	uint8_t rq[300], out[300];
	uint64_t said_ns = 0;	/* when the last answer went out */
	bool shut = false;	/* our end shut for writing: say no more */

	for (;;) {
		struct pollfd p = { fd, POLLIN, 0 };
		ssize_t n;
		size_t len;
		bool armed, done;

		pthread_mutex_lock(&rs.lock);
		armed = rs.armed;
		pthread_mutex_unlock(&rs.lock);
		if (!armed)
			return true;
		if (poll(&p, 1, 2) <= 0) {
#ifndef FUZZ_RTU
			/* no next request: the meter waits for more of an
			 * answer than the chunk held; end the stream rather
			 * than have every such input wait out the deadline */
			if (said_ns && se_mono_ns() - said_ns > 5 * SE_NS_PER_MS) {
				shutdown(fd, SHUT_WR);
				shut = true;
				said_ns = 0;
			}
#endif
			continue;
		}
		n = read(fd, rq, sizeof(rq));
		if (n <= 0)
			return n < 0 && (errno == EAGAIN || errno == EINTR);
		pthread_mutex_lock(&rs.lock);
		len = answer(rq, (size_t) n, out);
		done = rs.next >= rs.n;
		/* recorded before it goes out: the meter may have read it and
		 * be checked before this thread runs again */
		if (len && !shut) {
			memcpy(rs.sent + rs.sent_len, out, len);
			rs.sent_len += len;
		}
		pthread_mutex_unlock(&rs.lock);
		if (len && !shut && say(fd, out, len) != (ssize_t) len)
			return false;
		said_ns = se_mono_ns();
#ifndef FUZZ_RTU
		/* nothing more to say: end the stream, so a short answer
		 * fails at once rather than by the byte timeout */
		if (done) {
			shutdown(fd, SHUT_WR);
			shut = true;
		}
#else
		(void) done;
		(void) shut;
#endif
	}
}

static void set_busy(bool busy)
{
	pthread_mutex_lock(&rs.lock);
	rs.busy = busy;
	pthread_cond_broadcast(&rs.cond);
	pthread_mutex_unlock(&rs.lock);
}

static void *responder(void *arg)
{
	int fd = (int) (intptr_t) arg;

	for (;;) {
#ifdef FUZZ_RTU
		struct pollfd p = { fd, POLLIN, 0 };

		if (poll(&p, 1, 10) <= 0 || !(p.revents & POLLIN)) {
			/* no slave open: POLLHUP; wait for the next read */
			if (p.revents & POLLHUP)
				se_sleep_ns(SE_NS_PER_MS / 10);
			continue;
		}
		set_busy(true);
		converse(fd);
		set_busy(false);
#else
		int c = accept(fd, NULL, NULL);

		if (c < 0)
			continue;
		set_busy(true);
		converse(c);
		close(c);
		set_busy(false);
#endif
	}
	return NULL;
}

static void start_responder(void)
{
	pthread_t th;
	int fd;

#ifdef FUZZ_RTU
	fd = posix_openpt(O_RDWR | O_NOCTTY);
	if (fd < 0 || grantpt(fd) || unlockpt(fd)) {
		perror("pty");
		abort();
	}
	snprintf(device, sizeof(device), "rtu:%s", ptsname(fd));
	(void) fcntl(fd, F_SETFL, O_NONBLOCK);
	pty_master = fd;
#else
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t alen = sizeof(a);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *) &a, sizeof(a)) ||
	    listen(fd, 8) || getsockname(fd, (struct sockaddr *) &a, &alen)) {
		perror("responder socket");
		abort();
	}
	snprintf(device, sizeof(device), "tcp://127.0.0.1:%u",
		 ntohs(a.sin_port));
#endif
	if (pthread_create(&th, NULL, responder, (void *) (intptr_t) fd))
		abort();
	pthread_detach(th);
}

/* The registers of a point as sent in a chunk (big-endian words). */
static void wire_regs(const uint8_t *chunk, unsigned first, unsigned addr,
		      unsigned words, uint16_t *regs)
{
	for (unsigned i = 0; i < words; i++) {
		const uint8_t *p = chunk + DATA_OFFSET + 2 * (addr - first + i);

		regs[i] = (uint16_t) (p[0] << 8 | p[1]);
	}
}

/*
 * The k-th answer the meter read, from its first byte.  TCP is a byte
 * stream: an answer is the next frame of what went out, which may be the
 * rest of an earlier chunk (a chunk holding two frames answers both
 * requests; the meter reads the second frame for its second request).
 * libmodbus sizes a register answer by its byte count, not by the MBAP
 * length field: MBAP (7), function, byte count, then that many bytes.
 * RTU: the chunk sent for that request.  NULL: no such frame went out.
 */
static const uint8_t *answer_frame(unsigned k)
{
#ifdef FUZZ_RTU
	return k < rs.n ? rs.chunk[k] : NULL;
#else
	size_t pos = 0;

	for (unsigned i = 0; i < k; i++) {
		if (pos + DATA_OFFSET > rs.sent_len)
			return NULL;
		pos += DATA_OFFSET + rs.sent[pos + DATA_OFFSET - 1];
	}
	return pos + DATA_OFFSET <= rs.sent_len ? rs.sent + pos : NULL;
#endif
}

static void check_reading(const modbus_meter_config_t *cfg,
			  const meter_reading_t *r)
{
	const mb_point_t *pw = &cfg->power, *en = &cfg->energy;
	unsigned pw_end = pw->address + mb_type_words(pw->type);
	unsigned en_end = en->address + mb_type_words(en->type);
	bool two = pw->present && en->present &&
		   (en_end > pw_end ? en_end : pw_end) - pw->address >
		   cfg->max_regs_per_read;
	uint16_t regs[4];
	double v;
	uint64_t count;

	FUZZ_CHECK(r->has_power == pw->present &&
		   r->has_counter == en->present, "reading has %d/%d",
		   r->has_power, r->has_counter);
	if (pw->present) {
		double mw;

		const uint8_t *frame = answer_frame(0);

		FUZZ_CHECK(frame, "power read from no answer");
		wire_regs(frame, pw->address, pw->address,
			  mb_type_words(pw->type), regs);
		FUZZ_CHECK(!mb_decode(regs, pw->type, pw->order, &v),
			   "power accepted from a bad register");
		/* far below 0 W is a fault, never a reading; above, the
		 * node's share of it, idle noise read as 0 */
		FUZZ_CHECK(v * pw->scale >= -MODBUS_NEGATIVE_NOISE_W,
			   "a reading of %g W", v * pw->scale);
		mw = v * pw->scale * (cfg->share * 1000.0);
		FUZZ_CHECK(r->power_mw == (mw <= 0 ? 0 : mw >= 9.2e18 ?
					   (uint64_t) INT64_MAX :
					   (uint64_t) llround(mw)),
			   "power %llu mW from a register of %g",
			   (unsigned long long) r->power_mw, v);
	}
	if (en->present) {
		unsigned first = pw->present && !two ? pw->address : en->address;
		const uint8_t *frame = answer_frame(two ? 1 : 0);

		FUZZ_CHECK(frame, "counter read from no answer");
		wire_regs(frame, first, en->address,
			  mb_type_words(en->type), regs);
		FUZZ_CHECK(!mb_decode_energy(regs, en->type, en->order,
					     &count) &&
			   count == r->counter_raw,
			   "counter %llu, the wire says %llu",
			   (unsigned long long) r->counter_raw,
			   (unsigned long long) count);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool started;
	modbus_meter_config_t cfg = { 0 };
	modbus_meter_t *m = NULL;
	meter_reading_t r;
	char err[256], msg[512];
	uint64_t t0;
	size_t off = 4;
	int rc;

	if (size < 4)
		return 0;
	if (!started) {
		fuzz_quiet();
		start_responder();
		started = true;
	}
	cfg.device = device;
	cfg.serial = (modbus_serial_t) { 115200, 'N', 8, 1 };
	cfg.unit = 1;
	cfg.kind = data[2] & 0x10 ? MB_KIND_HOLDING : MB_KIND_INPUT;
	cfg.power = (mb_point_t) { !(data[0] & 0x80), POWER_ADDR,
				   (mb_type_t) (data[0] % 7),
				   (mb_order_t) (data[2] & 3), POWER_SCALE };
	cfg.energy = (mb_point_t) { !(data[1] & 0x80),
				    (uint16_t) (POWER_ADDR + data[3]),
				    (mb_type_t) (data[1] % 7),
				    (mb_order_t) (data[2] >> 2 & 3),
				    ENERGY_SCALE };
	cfg.max_regs_per_read = 125;
	cfg.share = data[2] & 0x40 ? 0.5 : 1.0;
	if (!cfg.power.present && !cfg.energy.present)
		return 0;

	pthread_mutex_lock(&rs.lock);
	rs.n = rs.next = 0;
	while (rs.n < MAX_CHUNKS && off < size) {
		size_t len = data[off++];

		if (len > size - off)
			len = size - off;
		memcpy(rs.chunk[rs.n], data + off, len);
		rs.len[rs.n++] = len;
		off += len;
	}
	rs.echo = data[2] & 0x20;
	rs.sent_len = 0;
	rs.armed = true;
	if (pty_master >= 0) {	/* what a timed-out read left unanswered */
		uint8_t junk[512];

		while (read(pty_master, junk, sizeof(junk)) > 0)
			;
	}
	pthread_mutex_unlock(&rs.lock);

	rc = modbus_meter_create(&cfg, &m, err, sizeof(err));
	FUZZ_CHECK(rc == 0, "create: %s", err);
	t0 = se_mono_ns();
	rc = modbus_meter_ops.read(m, &r, t0 + DEADLINE_NS, msg, sizeof(msg));
	FUZZ_CHECK(se_mono_ns() - t0 < DEADLINE_NS + SLACK_NS,
		   "read took %llu ms past a deadline of %llu ms",
		   (unsigned long long) ((se_mono_ns() - t0) / SE_NS_PER_MS),
		   (unsigned long long) (DEADLINE_NS / SE_NS_PER_MS));
	if (getenv("FUZZ_VERBOSE"))
		fprintf(stderr, "read: %d %s\n", rc, rc ? msg : "");
	if (rc)
		FUZZ_CHECK(rc < 0, "read rc %d", rc);
	else
		check_reading(&cfg, &r);
	modbus_meter_ops.close(m);
	modbus_meter_destroy(m);

	/* the responder has finished with this read before the next */
	pthread_mutex_lock(&rs.lock);
	rs.armed = false;
	while (rs.busy)
		pthread_cond_wait(&rs.cond, &rs.lock);
	pthread_mutex_unlock(&rs.lock);
	return 0;
}
