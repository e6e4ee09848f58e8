/*
 * pcap_wire.c - the controller's and agents' messages as bytes (the
 * layout is pcap_wire.h's, field by field in the order declared; the
 * integers, strings and header as every fixed message of ours writes
 * them, src/common/se_wire.h).
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "pcap_wire.h"
#include "se_wire.h"

_Static_assert(PCAP_WIRE_HDR_LEN == SE_WIRE_HDR_LEN,
	       "pcap_wire.h's header is se_wire.h's");

/* ---------------------------------------------------- private functions */

static uint8_t *_header(uint8_t *p, uint16_t type, uint32_t len)
{
	return se_wire_header(p, PCAP_WIRE_MAGIC, PCAP_WIRE_VERSION, type,
			      len);
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
	WIRE_NUM(pcap_report_msg_t, window_cap_mw),
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
			if (se_wire_put_str(&p, src, f->size))
				return -EINVAL;
		} else if (f->size == sizeof(v64)) {
			memcpy(&v64, src, sizeof(v64));
			p = se_wire_put64(p, v64);
		} else {
			memcpy(&v32, src, sizeof(v32));
			p = se_wire_put32(p, v32);
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
			ret = se_wire_get_str(&p, dst, f->size,
					      "powercap message", f->what,
					      err, err_len);
		} else if (f->size == sizeof(v64)) {
			v64 = se_wire_get64(&p);
			memcpy(dst, &v64, sizeof(v64));
		} else {
			v32 = se_wire_get32(&p);
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
	uint32_t magic, total;
	unsigned version, type;

	if (len < PCAP_WIRE_HDR_LEN) {
		snprintf(err, err_len, "powercap message: %zu bytes, shorter "
			 "than its header (%d)", len, PCAP_WIRE_HDR_LEN);
		return -EBADMSG;
	}
	se_wire_read_header(buf, &magic, &version, &type, &total);
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
