/*
 * se-powercap-node - cap one node by hand through the power cap's knobs
 * (src/powercap/pcap_node.h), as the node agent of issue #45 will: for the
 * test cluster's rigs (capping every node alike, the baseline the greedy
 * controller is measured against) and for trying a node's knobs.
 *
 *   se-powercap-node --knobs SPECS --floor W --max W apply W
 *   se-powercap-node --knobs SPECS --floor W --max W read
 *   se-powercap-node --knobs SPECS --floor W --max W restore
 *
 * SPECS is PowerCapKnobs' comma list (pcap_knob.h), e.g.
 * 'rapl:root=/tmp/n1/powercap,cpufreq:root=/tmp/n1/cpu:min_w=90:max_w=300'.
 * Prints the node cap the knobs hold after the action; exit 0, 1 on a
 * knob's error (told on stderr), 2 on bad usage.  Not installed: the
 * agent is the administrator's tool, this one is the rig's.
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pcap_node.h"

static int _usage(void)
{
	fprintf(stderr, "usage: se-powercap-node --knobs SPECS --floor W "
		"--max W (apply W | read | restore)\n");
	return 2;
}

static int _watts(const char *s, uint32_t *mw)
{
	char *end;
	double w = strtod(s, &end);

	if (end == s || *end || !(w >= 0) || w > 4e6)
		return -1;
	*mw = (uint32_t)(w * 1000 + 0.5);
	return 0;
}

int main(int argc, char **argv)
{
	const char *knobs = NULL, *verb = NULL, *arg = NULL;
	uint32_t floor_mw = 0, max_mw = 0, cap_mw = 0;
	pcap_node_knobs_t nk;
	char err[512] = "";
	int i, ret;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--knobs") && i + 1 < argc)
			knobs = argv[++i];
		else if (!strcmp(argv[i], "--floor") && i + 1 < argc) {
			if (_watts(argv[++i], &floor_mw))
				return _usage();
		} else if (!strcmp(argv[i], "--max") && i + 1 < argc) {
			if (_watts(argv[++i], &max_mw))
				return _usage();
		} else if (!verb)
			verb = argv[i];
		else if (!arg)
			arg = argv[i];
		else
			return _usage();
	}
	if (!knobs || !verb || !max_mw)
		return _usage();
	if (!strcmp(verb, "apply") && (!arg || _watts(arg, &cap_mw)))
		return _usage();
	if (strcmp(verb, "apply") && (arg || (strcmp(verb, "read") &&
					      strcmp(verb, "restore"))))
		return _usage();
	if (pcap_node_open(&nk, knobs, floor_mw, max_mw, err, sizeof(err))) {
		fprintf(stderr, "se-powercap-node: %s\n", err);
		return 1;
	}
	if (!strcmp(verb, "apply"))
		ret = pcap_node_apply(&nk, cap_mw, err, sizeof(err));
	else if (!strcmp(verb, "restore"))
		ret = pcap_node_restore(&nk, err, sizeof(err));
	else
		ret = 0;
	if (ret)
		fprintf(stderr, "se-powercap-node: %s\n", err);
	else if (pcap_node_read(&nk, &cap_mw, err, sizeof(err)))
		fprintf(stderr, "se-powercap-node: %s\n", err), ret = -1;
	else
		printf("%.3f W\n", cap_mw / 1e3);
	pcap_node_close(&nk);
	return ret ? 1 : 0;
}
