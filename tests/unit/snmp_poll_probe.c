/*
 * snmp_poll_probe.c - one node's meter reading through the PDU poller
 * (pdu_poll_meter.c, MUNGE as slurmd seals), for bench/snmp: reads a
 * period apart, one line a read:
 *   read RC POWER_MW MS ASKS | MSG
 * (RC -EALREADY: the poller had nothing newer; MS: the read's duration).
 * Usage: snmp_poll_probe POLLER NODE READS TIMEOUT_MS PERIOD_MS
 *        MUNGE_SOCKET
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "se_munge.h"
#include "se_time.h"
#include "pdu_poll_meter.h"

int main(int argc, char **argv)
{
	pdu_poll_meter_config_t c;
	pdu_poll_meter_t *m;
	uint64_t period_ns, timeout_ns, next;
	char err[512];
	void *munge;
	int reads;

	if (argc < 7) {
		fprintf(stderr, "usage: %s POLLER NODE READS TIMEOUT_MS "
			"PERIOD_MS MUNGE_SOCKET\n", argv[0]);
		return 2;
	}
	reads = atoi(argv[3]);
	timeout_ns = strtoull(argv[4], NULL, 10) * SE_NS_PER_MS;
	period_ns = strtoull(argv[5], NULL, 10) * SE_NS_PER_MS;
	if (!(munge = se_munge_new(argv[6], err, sizeof(err)))) {
		printf("config-error %s\n", err);
		return 1;
	}
	c = (pdu_poll_meter_config_t){
		.node = argv[2], .poller = argv[1],
		.sealer = se_munge_sealer(munge),
		.sealer_free = se_munge_free, .poller_uid = getuid(),
		.timeout_ns = timeout_ns,
		.max_age_ns = 2 * period_ns + timeout_ns };
	if (pdu_poll_meter_create(&c, &m, err, sizeof(err))) {
		printf("config-error %s\n", err);
		return 1;
	}
	next = se_mono_ns();
	for (int i = 0; i < reads; i++) {
		meter_reading_t r;
		uint64_t t0 = se_mono_ns();
		char msg[1024] = "";
		int rc;

		if (next > t0)
			se_sleep_ns(next - t0);
		next += period_ns;
		memset(&r, 0, sizeof(r));
		t0 = se_mono_ns();
		rc = pdu_poll_meter_ops.read(m, &r, t0 + timeout_ns, msg,
					     sizeof(msg));
		printf("read %d %llu %.3f %lu | %s\n", rc,
		       (unsigned long long)r.power_mw,
		       (se_mono_ns() - t0) / 1e6, pdu_poll_meter_asks(m),
		       msg);
		fflush(stdout);
	}
	pdu_poll_meter_destroy(m);	/* with munge */
	return 0;
}
