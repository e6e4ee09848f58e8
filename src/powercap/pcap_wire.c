/*
 * pcap_wire.c - the controller's and agents' messages as bytes (the
 * layout is pcap_wire.h's, field by field in the order declared).
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "pcap_wire.h"

/* ---------------------------------------------------- private functions */

static uint8_t *_put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		*p++ = (uint8_t)(v >> (8 * i));
	return p;
}

static uint8_t *_put64(uint8_t *p, uint64_t v)
{
	return _put32(_put32(p, (uint32_t)v), (uint32_t)(v >> 32));
}

static uint32_t _get32(const uint8_t **p)
{
	uint32_t v = 0;

	for (int i = 0; i < 4; i++)
		v |= (uint32_t)(*p)[i] << (8 * i);
	*p += 4;
	return v;
}

static uint64_t _get64(const uint8_t **p)
{
	uint64_t lo = _get32(p);

	return lo | (uint64_t)_get32(p) << 32;
}

static uint8_t *_header(uint8_t *p, uint16_t type, uint32_t len)
{
	p = _put32(p, PCAP_WIRE_MAGIC);
	*p++ = PCAP_WIRE_VERSION & 0xff;
	*p++ = PCAP_WIRE_VERSION >> 8;
	*p++ = type & 0xff;
	*p++ = type >> 8;
	return _put32(p, len);
}

/* A string field of n bytes: its text then NULs; -1 if it does not fit. */
static int _put_str(uint8_t **p, const char *s, size_t n)
{
	size_t l = strnlen(s, n);

	if (l == n)
		return -1;
	memcpy(*p, s, l);
	memset(*p + l, 0, n - l);
	*p += n;
	return 0;
}

static int _get_str(const uint8_t **p, char *out, size_t n, const char *what,
		    char *err, size_t err_len)
{
	if (!memchr(*p, '\0', n)) {
		snprintf(err, err_len, "powercap message: %s without its end "
			 "(%zu bytes, no NUL)", what, n);
		return -EBADMSG;
	}
	memcpy(out, *p, n);
	*p += n;
	return 0;
}

static int _check(const uint8_t *buf, size_t len, uint16_t want,
		  size_t want_len, char *err, size_t err_len)
{
	int type = pcap_wire_type(buf, len, err, err_len);

	if (type < 0)
		return type;
	if (type != want || len != want_len) {
		snprintf(err, err_len, "powercap message: type %d, %zu bytes; "
			 "expected type %u, %zu bytes", type, len, want,
			 want_len);
		return -EBADMSG;
	}
	return 0;
}

/* ----------------------------------------------------- public functions */

int pcap_wire_cap(const pcap_cap_msg_t *m, uint8_t *buf, size_t len)
{
	uint8_t *p = buf;

	if (len < PCAP_WIRE_CAP_LEN)
		return -ENOSPC;
	p = _header(p, PCAP_WIRE_CAP, PCAP_WIRE_CAP_LEN);
	p = _put64(p, m->seq);
	p = _put32(p, m->cap_mw);
	p = _put32(p, m->lease_ms);
	p = _put32(p, m->flags);
	if (_put_str(&p, m->node, PCAP_WIRE_NAME_MAX))
		return -EINVAL;
	return (int)(p - buf);
}

int pcap_wire_report(const pcap_report_msg_t *m, uint8_t *buf, size_t len)
{
	uint8_t *p = buf;

	if (len < PCAP_WIRE_REPORT_LEN)
		return -ENOSPC;
	p = _header(p, PCAP_WIRE_REPORT, PCAP_WIRE_REPORT_LEN);
	p = _put64(p, m->seq);
	p = _put32(p, m->power_mw);
	p = _put32(p, m->window_ms);
	p = _put32(p, m->cap_mw);
	p = _put32(p, m->flags);
	if (_put_str(&p, m->node, PCAP_WIRE_NAME_MAX) ||
	    _put_str(&p, m->error, PCAP_WIRE_ERR_MAX))
		return -EINVAL;
	return (int)(p - buf);
}

int pcap_wire_type(const uint8_t *buf, size_t len, char *err,
		   size_t err_len)
{
	const uint8_t *p = buf;
	uint32_t magic, total;
	unsigned version, type;

	if (len < PCAP_WIRE_HDR_LEN) {
		snprintf(err, err_len, "powercap message: %zu bytes, shorter "
			 "than its header (%d)", len, PCAP_WIRE_HDR_LEN);
		return -EBADMSG;
	}
	magic = _get32(&p);
	version = p[0] | p[1] << 8;
	type = p[2] | p[3] << 8;
	p += 4;
	total = _get32(&p);
	if (magic != PCAP_WIRE_MAGIC) {
		snprintf(err, err_len, "powercap message: magic 0x%08x, not "
			 "0x%08x (not a powercap peer)", magic,
			 PCAP_WIRE_MAGIC);
		return -EBADMSG;
	}
	if (version != PCAP_WIRE_VERSION) {
		snprintf(err, err_len, "powercap message: version %u, this "
			 "build speaks %d", version, PCAP_WIRE_VERSION);
		return -EPROTONOSUPPORT;
	}
	if (type != PCAP_WIRE_CAP && type != PCAP_WIRE_REPORT) {
		snprintf(err, err_len, "powercap message: unknown type %u",
			 type);
		return -EBADMSG;
	}
	if (total != len || total != (type == PCAP_WIRE_CAP ?
				      PCAP_WIRE_CAP_LEN :
				      PCAP_WIRE_REPORT_LEN)) {
		snprintf(err, err_len, "powercap message: type %u says %u "
			 "bytes, %zu received (its size is %d)", type, total,
			 len, type == PCAP_WIRE_CAP ? PCAP_WIRE_CAP_LEN :
			 PCAP_WIRE_REPORT_LEN);
		return -EBADMSG;
	}
	return (int)type;
}

int pcap_wire_read_cap(const uint8_t *buf, size_t len, pcap_cap_msg_t *m,
		       char *err, size_t err_len)
{
	const uint8_t *p = buf + PCAP_WIRE_HDR_LEN;
	int ret = _check(buf, len, PCAP_WIRE_CAP, PCAP_WIRE_CAP_LEN, err,
			 err_len);

	if (ret)
		return ret;
	m->seq = _get64(&p);
	m->cap_mw = _get32(&p);
	m->lease_ms = _get32(&p);
	m->flags = _get32(&p);
	return _get_str(&p, m->node, PCAP_WIRE_NAME_MAX, "node name", err,
			err_len);
}

int pcap_wire_read_report(const uint8_t *buf, size_t len,
			  pcap_report_msg_t *m, char *err, size_t err_len)
{
	const uint8_t *p = buf + PCAP_WIRE_HDR_LEN;
	int ret = _check(buf, len, PCAP_WIRE_REPORT, PCAP_WIRE_REPORT_LEN, err,
			 err_len);

	if (ret)
		return ret;
	m->seq = _get64(&p);
	m->power_mw = _get32(&p);
	m->window_ms = _get32(&p);
	m->cap_mw = _get32(&p);
	m->flags = _get32(&p);
	ret = _get_str(&p, m->node, PCAP_WIRE_NAME_MAX, "node name", err,
		       err_len);
	if (!ret)
		ret = _get_str(&p, m->error, PCAP_WIRE_ERR_MAX, "error text",
			       err, err_len);
	return ret;
}
