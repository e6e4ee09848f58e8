/*
 * se_wire.h - the bytes of our fixed-size binary messages (the power
 * cap's, src/powercap/pcap_wire.c; the PDU poller's,
 * src/common/pdu_poll_wire.c): little-endian integers, string fields
 * of a fixed size ended by a NUL, and a header (magic, version, type,
 * total length) checked before anything else is read.  Slurm-free, no I/O.
 */
#ifndef SE_WIRE_H
#define SE_WIRE_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define SE_WIRE_HDR_LEN	12	/* magic 4, version 2, type 2, length 4 */

static inline uint8_t *se_wire_put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		*p++ = (uint8_t)(v >> (8 * i));
	return p;
}

static inline uint8_t *se_wire_put64(uint8_t *p, uint64_t v)
{
	return se_wire_put32(se_wire_put32(p, (uint32_t)v),
			     (uint32_t)(v >> 32));
}

static inline uint32_t se_wire_get32(const uint8_t **p)
{
	uint32_t v = 0;

	for (int i = 0; i < 4; i++)
		v |= (uint32_t)(*p)[i] << (8 * i);
	*p += 4;
	return v;
}

static inline uint64_t se_wire_get64(const uint8_t **p)
{
	uint64_t lo = se_wire_get32(p);

	return lo | (uint64_t)se_wire_get32(p) << 32;
}

static inline uint8_t *se_wire_header(uint8_t *p, uint32_t magic,
				      uint16_t version, uint16_t type,
				      uint32_t len)
{
	p = se_wire_put32(p, magic);
	*p++ = version & 0xff;
	*p++ = version >> 8;
	*p++ = type & 0xff;
	*p++ = type >> 8;
	return se_wire_put32(p, len);
}

/* A header's fields (buf holds at least SE_WIRE_HDR_LEN bytes). */
static inline void se_wire_read_header(const uint8_t *buf, uint32_t *magic,
				       unsigned *version, unsigned *type,
				       uint32_t *len)
{
	const uint8_t *p = buf;

	*magic = se_wire_get32(&p);
	*version = p[0] | p[1] << 8;
	*type = p[2] | p[3] << 8;
	p += 4;
	*len = se_wire_get32(&p);
}

/* A string field of n bytes: its text then NULs; -1 if it does not fit. */
static inline int se_wire_put_str(uint8_t **p, const char *s, size_t n)
{
	size_t l = strnlen(s, n);

	if (l == n)
		return -1;
	memcpy(*p, s, l);
	memset(*p + l, 0, n - l);
	*p += n;
	return 0;
}

/* A string field of n bytes into out (n bytes): 0, or -EBADMSG with
 * "WHO: WHAT without its end" in err when it holds no NUL. */
static inline int se_wire_get_str(const uint8_t **p, char *out, size_t n,
				  const char *who, const char *what,
				  char *err, size_t err_len)
{
	if (!memchr(*p, '\0', n)) {
		snprintf(err, err_len, "%s: %s without its end (%zu bytes, "
			 "no NUL)", who, what, n);
		return -EBADMSG;
	}
	memcpy(out, *p, n);
	*p += n;
	return 0;
}

#endif /* SE_WIRE_H */
