/*
 * pcap_wire.c - the controller's and agents' messages as bytes (the
 * layout is pcap_wire.h's, field by field in the order declared).
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <errno.h>
#include <stddef.h>
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

/*
 * A message's layout: its fields in wire order.  A field with a name
 * (what) is a string of its full size, NUL-padded; the others are
 * integers of their size (4 or 8 bytes).  Encoder and decoder both walk
 * this one list, so they cannot disagree on the order.
 */
typedef struct {
	size_t off, size;
	const char *what;	/* a string field, as a decoder names it */
} wire_field_t;

typedef struct {
	uint16_t type;
	size_t len;		/* PCAP_WIRE_*_LEN */
	const wire_field_t *fields;
	size_t n_fields;
} wire_layout_t;

#define WIRE_NUM(T, f)	{ offsetof(T, f), sizeof(((T *)0)->f), NULL }
#define WIRE_STR(T, f, what) \
	{ offsetof(T, f), sizeof(((T *)0)->f), what }
#define WIRE_LAYOUT(type, len, fields) \
	{ type, len, fields, sizeof(fields) / sizeof(fields[0]) }

static const wire_field_t cap_fields[] = {
	WIRE_NUM(pcap_cap_msg_t, seq),
	WIRE_NUM(pcap_cap_msg_t, cap_mw),
	WIRE_NUM(pcap_cap_msg_t, lease_ms),
	WIRE_NUM(pcap_cap_msg_t, flags),
	WIRE_STR(pcap_cap_msg_t, node, "node name"),
};
static const wire_layout_t cap_layout =
	WIRE_LAYOUT(PCAP_WIRE_CAP, PCAP_WIRE_CAP_LEN, cap_fields);

static const wire_field_t report_fields[] = {
	WIRE_NUM(pcap_report_msg_t, seq),
	WIRE_NUM(pcap_report_msg_t, power_mw),
	WIRE_NUM(pcap_report_msg_t, window_ms),
	WIRE_NUM(pcap_report_msg_t, cap_mw),
	WIRE_NUM(pcap_report_msg_t, flags),
	WIRE_STR(pcap_report_msg_t, node, "node name"),
	WIRE_STR(pcap_report_msg_t, error, "error text"),
};
static const wire_layout_t report_layout =
	WIRE_LAYOUT(PCAP_WIRE_REPORT, PCAP_WIRE_REPORT_LEN, report_fields);

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

/* m (a struct of w's type) into buf: its length, -ENOSPC, or -EINVAL for
 * a string that would not decode (no room for its NUL). */
static int _encode(const wire_layout_t *w, const void *m, uint8_t *buf,
		   size_t len)
{
	uint8_t *p = buf;

	if (len < w->len)
		return -ENOSPC;
	p = _header(p, w->type, w->len);
	for (size_t i = 0; i < w->n_fields; i++) {
		const wire_field_t *f = &w->fields[i];
		const char *src = (const char *)m + f->off;
		uint64_t v64;
		uint32_t v32;

		if (f->what) {
			if (_put_str(&p, src, f->size))
				return -EINVAL;
		} else if (f->size == sizeof(v64)) {
			memcpy(&v64, src, sizeof(v64));
			p = _put64(p, v64);
		} else {
			memcpy(&v32, src, sizeof(v32));
			p = _put32(p, v32);
		}
	}
	return (int)(p - buf);
}

/* buf, a whole message of w's type, into m: 0 or -EBADMSG with err. */
static int _decode(const wire_layout_t *w, const uint8_t *buf, size_t len,
		   void *m, char *err, size_t err_len)
{
	const uint8_t *p = buf + PCAP_WIRE_HDR_LEN;
	int ret = _check(buf, len, w->type, w->len, err, err_len);

	for (size_t i = 0; !ret && i < w->n_fields; i++) {
		const wire_field_t *f = &w->fields[i];
		char *dst = (char *)m + f->off;
		uint64_t v64;
		uint32_t v32;

		if (f->what) {
			ret = _get_str(&p, dst, f->size, f->what, err,
				       err_len);
		} else if (f->size == sizeof(v64)) {
			v64 = _get64(&p);
			memcpy(dst, &v64, sizeof(v64));
		} else {
			v32 = _get32(&p);
			memcpy(dst, &v32, sizeof(v32));
		}
	}
	return ret;
}

/* ----------------------------------------------------- public functions */

int pcap_wire_cap(const pcap_cap_msg_t *m, uint8_t *buf, size_t len)
{
	return _encode(&cap_layout, m, buf, len);
}

int pcap_wire_report(const pcap_report_msg_t *m, uint8_t *buf, size_t len)
{
	return _encode(&report_layout, m, buf, len);
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
	return _decode(&cap_layout, buf, len, m, err, err_len);
}

int pcap_wire_read_report(const uint8_t *buf, size_t len,
			  pcap_report_msg_t *m, char *err, size_t err_len)
{
	return _decode(&report_layout, buf, len, m, err, err_len);
}
