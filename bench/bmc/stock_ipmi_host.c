/*
 * stock_ipmi_host.c - point Slurm's stock acct_gather_energy/ipmi at a BMC
 * on the LAN, for the side-by-side benchmark (bench/bmc/run.py).
 *
 * The stock plugin (22.05) reads its BMC through a global variable
 *     char *hostname = NULL;   (NULL: in-band)
 * that no acct_gather.conf key sets: out of the box it can only talk to the
 * local BMC's driver (/dev/ipmi0, KCS, SSIF), none of which exists here.
 * The plugin is built with -fPIC and refers to that variable through its
 * GOT (R_X86_64_GLOB_DAT), so the definition in an object loaded before it
 * wins (ELF symbol interposition).  Preloaded into slurmd and slurmstepd
 * (LD_PRELOAD), this file supplies that definition, set from the
 * environment:
 *     SE_STOCK_IPMI_HOSTS="node1=10.199.0.1:19608 node2=..."
 * the entry for this node's hostname (the cluster's nodes have their own
 * UTS namespace), so every node reads its own BMC.  Nothing else of the
 * stock plugin changes: its sampling, integration, timeouts and locking are
 * what the benchmark measures.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* the stock plugin's variable (interposed; see above) */
char *hostname;

static char _host[256];

__attribute__((constructor)) static void _set_hostname(void)
{
	const char *list = getenv("SE_STOCK_IPMI_HOSTS");
	char node[128], key[136];
	const char *p;
	size_t n;

	if (!list || gethostname(node, sizeof(node)))
		return;
	node[sizeof(node) - 1] = '\0';
	n = (size_t) snprintf(key, sizeof(key), "%s=", node);
	for (p = list; (p = strstr(p, key)); p += n) {
		if (p != list && p[-1] != ' ')
			continue;	/* "xnode1=" is not "node1=" */
		p += n;
		n = strcspn(p, " ");
		if (n >= sizeof(_host))
			return;
		memcpy(_host, p, n);
		_host[n] = '\0';
		hostname = _host;
		return;
	}
}
