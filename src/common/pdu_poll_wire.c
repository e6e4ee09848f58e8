/*
 * pdu_poll_wire.c - the poller's and nodes' messages as bytes (the layout
 * is pdu_poll_wire.h's, field by field in the order declared).
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "se_wire.h"
#include "pdu_poll_wire.h"

#define WHO	"PDU poller message"

/* ---------------------------------------------------- private functions */

static int _check(const uint8_t *buf, size_t len, unsigned want,
		  size_t want_len, char *err, size_t err_len)
{
	uint32_t magic, total;
	unsigned version, type;

	if (len < SE_WIRE_HDR_LEN) {
		snprintf(err, err_len, WHO ": %zu bytes, shorter than its "
			 "header (%d)", len, SE_WIRE_HDR_LEN);
		return -EBADMSG;
	}
	se_wire_read_header(buf, &magic, &version, &type, &total);
	if (magic != PDU_POLL_MAGIC) {
		snprintf(err, err_len, WHO ": magic 0x%08x, not 0x%08x (not "
			 "a PDU poller)", magic, PDU_POLL_MAGIC);
		return -EBADMSG;
	}
	if (version != PDU_POLL_VERSION) {
		snprintf(err, err_len, WHO ": version %u, this build speaks "
			 "%d", version, PDU_POLL_VERSION);
		return -EPROTONOSUPPORT;
	}
	if (type != want || total != len || len != want_len) {
		snprintf(err, err_len, WHO ": type %u of %u bytes (%zu "
			 "received); expected type %u of %zu bytes", type,
			 total, len, want, want_len);
		return -EBADMSG;
	}
	return 0;
}

/* ----------------------------------------------------- public functions */

int pdu_poll_wire_ask(const pdu_poll_ask_t *m, uint8_t *buf, size_t len)
{
	uint8_t *p = buf;

	if (len < PDU_POLL_ASK_LEN)
		return -ENOSPC;
	p = se_wire_header(p, PDU_POLL_MAGIC, PDU_POLL_VERSION,
			   PDU_POLL_ASK, PDU_POLL_ASK_LEN);
	p = se_wire_put64(p, m->nonce);
	if (se_wire_put_str(&p, m->node, PDU_POLL_NAME_MAX))
		return -EINVAL;
	return (int)(p - buf);
}

int pdu_poll_wire_reading(const pdu_poll_reading_t *m, uint8_t *buf,
			  size_t len)
{
	uint8_t *p = buf;
	uint64_t mj;

	if (len < PDU_POLL_READING_LEN)
		return -ENOSPC;
	memcpy(&mj, &m->mj_per_unit, sizeof(mj));	/* IEEE 754 binary64 */
	p = se_wire_header(p, PDU_POLL_MAGIC, PDU_POLL_VERSION,
			   PDU_POLL_READING, PDU_POLL_READING_LEN);
	p = se_wire_put64(p, m->nonce);
	p = se_wire_put64(p, m->seq);
	p = se_wire_put64(p, m->age_ns);
	p = se_wire_put64(p, m->power_mw);
	p = se_wire_put64(p, m->counter_raw);
	p = se_wire_put64(p, mj);
	p = se_wire_put32(p, m->width_bits);
	p = se_wire_put32(p, m->registers);
	p = se_wire_put32(p, m->flags);
	p = se_wire_put32(p, (uint32_t)m->status);
	if (se_wire_put_str(&p, m->node, PDU_POLL_NAME_MAX) ||
	    se_wire_put_str(&p, m->error, PDU_POLL_ERR_MAX))
		return -EINVAL;
	return (int)(p - buf);
}

int pdu_poll_wire_read_ask(const uint8_t *buf, size_t len,
			   pdu_poll_ask_t *m, char *err, size_t err_len)
{
	const uint8_t *p = buf + SE_WIRE_HDR_LEN;
	int ret = _check(buf, len, PDU_POLL_ASK, PDU_POLL_ASK_LEN, err,
			 err_len);

	if (ret)
		return ret;
	m->nonce = se_wire_get64(&p);
	return se_wire_get_str(&p, m->node, PDU_POLL_NAME_MAX, WHO,
			       "node name", err, err_len);
}

int pdu_poll_wire_read_reading(const uint8_t *buf, size_t len,
			       pdu_poll_reading_t *m, char *err,
			       size_t err_len)
{
	const uint8_t *p = buf + SE_WIRE_HDR_LEN;
	int ret = _check(buf, len, PDU_POLL_READING, PDU_POLL_READING_LEN,
			 err, err_len);
	uint64_t mj;

	if (ret)
		return ret;
	m->nonce = se_wire_get64(&p);
	m->seq = se_wire_get64(&p);
	m->age_ns = se_wire_get64(&p);
	m->power_mw = se_wire_get64(&p);
	m->counter_raw = se_wire_get64(&p);
	mj = se_wire_get64(&p);
	memcpy(&m->mj_per_unit, &mj, sizeof(mj));
	m->width_bits = se_wire_get32(&p);
	m->registers = se_wire_get32(&p);
	m->flags = se_wire_get32(&p);
	m->status = (int32_t)se_wire_get32(&p);
	ret = se_wire_get_str(&p, m->node, PDU_POLL_NAME_MAX, WHO,
			      "node name", err, err_len);
	if (!ret)
		ret = se_wire_get_str(&p, m->error, PDU_POLL_ERR_MAX, WHO,
				      "error text", err, err_len);
	return ret;
}

/* ------------------------------------------------- a node's latest reading */

/* src into dst, cut to fit (a message longer than the wire's room). */
static void _cut(char *dst, size_t len, const char *src)
{
	size_t n = strnlen(src, len - 1);

	memcpy(dst, src, n);
	dst[n] = '\0';
}

void pdu_poll_latest_set(pdu_poll_latest_t *l, uint64_t seq, int rc,
			 const meter_reading_t *r, const char *why)
{
	l->seq = seq;
	l->rc = rc;
	l->reading = *r;
	_cut(l->why, sizeof(l->why), why);
}

void pdu_poll_answer_from(pdu_poll_reading_t *out,
			  const pdu_poll_latest_t *l,
			  const counter_spec_t *spec, uint64_t now_ns)
{
	const meter_reading_t *r = &l->reading;

	out->seq = l->seq;
	out->status = l->rc;
	_cut(out->error, sizeof(out->error), l->rc ? l->why : "");
	out->flags = 0;
	if (l->rc)
		return;
	if (!spec)
		spec = &r->counter_spec;
	out->age_ns = now_ns > r->t_ns ? now_ns - r->t_ns : 0;
	out->flags |= r->has_power ? PDU_POLL_POWER : 0;
	out->power_mw = r->power_mw;
	if (r->has_counter && spec->mj_per_unit > 0) {
		out->flags |= PDU_POLL_COUNTER;
		out->counter_raw = r->counter_raw;
		out->mj_per_unit = spec->mj_per_unit;
		out->width_bits = spec->width_bits;
		out->registers = spec->registers;
	}
}

bool pdu_poll_asked_again(const pdu_poll_latest_t *latest,
			  uint64_t *answered)
{
	bool again = latest->seq && *answered == latest->seq;

	*answered = latest->seq;
	return again;
}

bool pdu_poll_wanted(pthread_mutex_t *lock, const bool *wanted)
{
	bool w;

	pthread_mutex_lock(lock);
	w = *wanted;
	pthread_mutex_unlock(lock);
	return w;
}

bool pdu_poll_take(bool *node_wanted, bool due, bool *poller_wanted)
{
	if (*node_wanted && !due)
		*poller_wanted = true;	/* not yet: next time */
	*node_wanted = *node_wanted && !due;
	return due;
}
