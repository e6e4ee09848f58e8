/*
 * pcap_core.h - one round of the cluster power cap (issue #45): given each
 * node's measured power, floor, maximum and cap in force, the caps that
 * hold the cluster's (or a partition's) cap with the least slowdown.
 * Slurm-free, no I/O, no clock: the daemon feeds it and applies its
 * answer; unit tests and bench/powercap drive it alone.
 *
 * Where this sits (design; doc/design-powercap.md says more):
 *
 *  controller  slurm-energy-powercapd, a daemon of its own beside
 *              slurmctld, not inside slurmctld: ext_sensors (the only
 *              controller-side plugin that runs periodically) is gone
 *              from 24.05 on and is starved by the node-energy agent on
 *              22.05 (DESIGN.md §6); a daemon cannot block or crash
 *              slurmctld, and its death is handled by the nodes' leases
 *              below.  It learns jobs and nodes from slurmctld through
 *              libslurm (slurm_load_jobs/slurm_load_node) and records
 *              caps in the job's AdminComment.
 *  power in    each node's agent (slurm-energy-powercap-agent) reads the
 *              node's power from the suite's own meter through slurmd's
 *              query socket (src/common/energy_query.h: AF_UNIX, so only
 *              on the node) and sends it with its reply to each cap
 *              message, averaged over the round, together with whether
 *              its knobs applied the last cap.  Not slurmctld's node
 *              energy: that arrives every AcctGatherNodeFreq at best and
 *              late when pings are in flight, carries no "at cap" or
 *              "knob failed" state, and costs slurmctld an RPC per node.
 *              Nodes without an agent (a BMC-only cap over the network)
 *              may be fed from slurmctld's node energy instead.
 *  caps out    the agent applies the node's cap through the knobs its
 *              configuration names (pcap_knob.h: RAPL sysfs package and
 *              DRAM, NVML GPU limits, DCMI, Redfish PowerLimit, cpufreq
 *              ceiling as the fallback), splitting the node's cap over
 *              them by what each draws when all can tell (pcap_node.h),
 *              else linearly between each knob's own bounds.
 *  safety      every cap is a lease: the agent keeps its last cap for
 *              PowerCapHoldSeconds after the controller's last message,
 *              then restores its knobs' defaults (a dead controller never
 *              leaves a cluster capped for good; the cap was held while
 *              the lease ran).  The agent restores defaults at its start
 *              (a rebooted node comes back uncapped until told) and when
 *              the round releases it (no job runs there: step 0 below).
 *              No cap below a node's floor is ever computed or applied.
 *
 * The round (pcap_round), in words:
 *   0. Released first: a measured, enforced node on which no job runs
 *      (PCAP_IDLE) is uncapped, its cap its maximum (the daemon sends it
 *      RESTORE: its knobs' defaults), and charged its draw plus
 *      headroom_mw (at least its floor), what a donor would want: an idle
 *      node is not left capped after its jobs end (issue #45).  A job
 *      starting on it may draw more until the round after its agent sees
 *      the job (the reaction time below).  When the charges and the busy
 *      nodes' floors would not fit the cap with them released, no node is
 *      released that round (idle nodes are then donors like the others).
 *      With keep_idle_capped (PowerCapIdleNodes=cap) no node is released:
 *      a site that must never see a starting job above the cap, even for
 *      the reaction time, keeps idle nodes capped as donors.
 *   1. Each node is charged what it may draw until the next round:
 *      a node whose knobs did not apply its cap (or whose agent is silent)
 *      its maximum; a node with no reading its cap in force; the others
 *      get a new cap.
 *   2. A node drawing within at_cap_mw of its cap is greedy: it wants its
 *      maximum.  Any other node is a donor: it wants its draw plus
 *      headroom_mw (its share beyond that goes to the greedy ones).  The
 *      cap its draw is judged against is the one in force over the
 *      reading's window (window_cap_mw, from the agent): a node raised
 *      during the window, at its cap all along, read its old cap for
 *      part of it and is no donor.
 *   3. The budget left after step 1 is water-filled: each node gets
 *      max(floor, min(want, floor + L * (max - floor))) with one level L
 *      in [0, 1] for all, the largest that fits.  Donors, whose want is
 *      low, are served first in full; greedy nodes share what remains in
 *      the same fraction of their own range (a GPU node and a CPU node are
 *      slowed alike).  Budget left once every want is met is spread over
 *      all nodes in proportion to their room below max, so a donor whose
 *      job speeds up has headroom before the next round.
 *   4. Hysteresis: a change smaller than hysteresis_mw is not made, unless
 *      the sum needs it (then the kept caps above their target go down).
 *      Greedy/donor cannot flap: a donor's new cap is its draw plus
 *      headroom_mw > at_cap_mw, so it is not at cap next round unless its
 *      draw grew (pcap_params_check refuses headroom <= at_cap).
 *   5. Order: caps that go down are marked PCAP_LOWER; the daemon applies
 *      them and waits for the agents' answers before it raises any, so the
 *      sum of caps in force never exceeds the budget in between.
 *
 * Invariants (tests/unit/test_powercap_core.c): the caps computed plus what
 * step 1 charges never sum above cap_mw; no cap below a node's floor or
 * above its maximum; a round changes nothing when nothing moved more than
 * the hysteresis.  Reaction: a node whose demand rises is greedy in the
 * round after its reading shows it, and gets its share in that round: the
 * reaction time is at most one period plus the reading's averaging window
 * plus the knob's settling time.
 *
 * Units: milliwatts (uint32_t per node, uint64_t for sums).
 */
#ifndef SE_PCAP_CORE_H
#define SE_PCAP_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* pcap_node_t.flags, set by the caller */
#define PCAP_MEASURED	0x1	/* power_mw is this round's reading */
#define PCAP_ENFORCED	0x2	/* the knobs applied cap_mw (agent answered) */
#define PCAP_IDLE	0x4	/* no job runs on the node (its agent says) */

/* pcap_node_t.out, set by pcap_round */
#define PCAP_GREEDY	0x01	/* at its cap: wanted its maximum */
#define PCAP_DONOR	0x02	/* under its cap: wanted draw + headroom */
#define PCAP_HELD	0x04	/* no reading: cap kept, charged at cap */
#define PCAP_UNENFORCED	0x08	/* knobs failed / silent: charged at max */
#define PCAP_LOWER	0x10	/* new_cap_mw < cap_mw: apply first */
#define PCAP_CHANGED	0x20	/* new_cap_mw != cap_mw */
#define PCAP_RELEASED	0x40	/* idle: uncapped (new_cap_mw = max_mw, its
				 * knobs' defaults), charged draw + headroom
				 * (at least its floor) */

typedef struct {
	const char *name;	/* for messages; may be NULL */
	uint32_t floor_mw;	/* never capped below (PowerCapFloorWatts) */
	uint32_t max_mw;	/* the cap meaning "uncapped" (PowerCapMaxWatts) */
	uint32_t power_mw;	/* average over the last round */
	uint32_t cap_mw;	/* the cap in force */
	uint32_t window_cap_mw;	/* the cap in force over power_mw's window,
				 * its time mean (0: unknown, cap_mw) */
	unsigned flags;		/* PCAP_MEASURED | PCAP_ENFORCED */
	/* out */
	uint32_t new_cap_mw;
	unsigned out;		/* PCAP_GREEDY ... PCAP_CHANGED */
} pcap_node_t;

typedef struct {
	uint64_t cap_mw;	/* the cluster's or partition's cap */
	uint32_t headroom_mw;	/* a donor keeps draw + this */
	uint32_t at_cap_mw;	/* within this of its cap, a node is greedy */
	uint32_t hysteresis_mw;	/* smaller changes are not made */
	bool keep_idle_capped;	/* PowerCapIdleNodes=cap: no step 0 */
} pcap_params_t;

typedef struct {
	uint64_t budget_mw;	/* cap_mw minus what held/unenforced nodes take */
	uint64_t sum_caps_mw;	/* sum of new caps + charges: <= cap_mw */
	uint64_t sum_power_mw;	/* measured */
	double level;		/* the water level L (1: every want met) */
	size_t n_greedy, n_donor, n_held, n_unenforced, n_changed, n_lower,
	       n_released;
	bool infeasible;	/* what held and unenforced nodes take, or
				 * that plus the controlled nodes' floors,
				 * exceeds the cap: all at floor, cap not
				 * held */
} pcap_stats_t;

/* Default parameters (the man page's defaults). */
#define PCAP_DEFAULT_HEADROOM_MW	15000u
#define PCAP_DEFAULT_AT_CAP_MW		5000u
#define PCAP_DEFAULT_HYSTERESIS_MW	5000u

/*
 * Check a configuration: every node's floor <= max, the floors' sum <= the
 * cap, headroom > at_cap.  Returns 0, or -EINVAL with err naming the key
 * and value (PowerCapWatts, PowerCapFloorWatts, PowerCapMaxWatts,
 * PowerCapHeadroomWatts, PowerCapAtCapWatts) and, for a node, its name.
 */
int pcap_params_check(const pcap_params_t *p, const pcap_node_t *nodes,
		      size_t n, char *err, size_t err_len);

/*
 * One round: fills every node's new_cap_mw and out, and st (may be NULL).
 * Returns 0, or -EINVAL when p fails pcap_params_check (nothing written).
 * When the floors of the controlled nodes exceed the budget left by held
 * and unenforced nodes, every controlled node gets its floor and
 * st->infeasible is set (the cap cannot be guaranteed; the daemon logs it).
 * O(n) per bisection step, 48 steps.
 */
int pcap_round(const pcap_params_t *p, pcap_node_t *nodes, size_t n,
	       pcap_stats_t *st);

#endif /* SE_PCAP_CORE_H */
