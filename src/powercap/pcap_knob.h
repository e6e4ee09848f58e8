/*
 * pcap_knob.h - the per-node knobs that enforce a node's power cap, behind
 * one small interface (issue #45; the model is meter.h's open/read/close).
 *
 * A node's agent holds the knobs its configuration names
 * (PowerCapKnobs=rapl:dram=yes,nvml,cpufreq:min_w=120:max_w=350), each
 * opened over a root that tests point at fake trees:
 *
 *   rapl     Linux powercap sysfs (root /sys/class/powercap): every
 *            intel-rapl:N package zone, and with dram=yes every DRAM
 *            subzone, through its "long_term" constraint's
 *            constraint_K_power_limit_uw (RAPL PL1).  A zone's range is
 *            [min_pct % of its max, its max], its max being
 *            constraint_K_max_power_uw (max_w= where the file is absent
 *            or 0, as it often is for DRAM); its default, restored, is
 *            its max.
 *   cpufreq  the fallback for a node with no power knob (root
 *            /sys/devices/system/cpu): scaling_max_freq of every cpuN with
 *            a cpufreq/ directory, a cap mapped linearly from the power
 *            range [min_w, max_w] (both required: no power model here) to
 *            [cpuinfo_min_freq, cpuinfo_max_freq]; default: the maximum.
 *   nvml     each GPU's power management limit through NVML, opened at
 *            run time (lib= a path; tests: the fake NVML), in [the
 *            constraint's min (or min_w), the default limit]; default:
 *            the default limit.
 *   dcmi     the BMC's DCMI power limit through libfreeipmi (in-band, or
 *            host= over LAN; tests: contribs/bmc-sim), range given by
 *            min_w/max_w; default: no limit active.  Built with the BMC
 *            plugin (libfreeipmi).
 *   redfish  a Redfish Control of ControlType Power (Controls/PowerLimit:
 *            SetPoint and ControlMode PATCHed, read back), range
 *            AllowableMin..AllowableMax; default: ControlMode Disabled.
 *            Built with the Redfish meter (libcurl, json-c); tests:
 *            contribs/redfish-sim.
 * A knob this build lacks is refused by name ("not available in this
 * build"): a node the admin thinks capped is never left uncapped in
 * silence.
 *
 * A knob's cap is in its own range [min_mw, max_mw] (filled by open); the
 * node's cap is split over its knobs linearly (pcap_split: at the node's
 * floor every knob is at its min, at the node's max every knob at its
 * max), which keeps every knob's share monotone in the node's cap, or by
 * what each draws when every knob has an energy counter (energy op,
 * pcap_split_drawn; pcap_node.h).
 *
 * Every call returns 0 or a negative errno with err naming the knob, the
 * file and the value: "rapl: cannot write 120000000 to
 * /sys/class/powercap/intel-rapl:0/constraint_0_power_limit_uw: Permission
 * denied".  apply() writes and reads back (the kernel rounds to the
 * hardware's unit): a read-back further than 1 % or 1 W from what was
 * written is -EIO.  A knob never writes outside its range.
 */
#ifndef SE_PCAP_KNOB_H
#define SE_PCAP_KNOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct pcap_knob pcap_knob_t;

typedef struct {
	const char *name;
	const char *keys;	/* its options, space-separated */
	int (*open)(pcap_knob_t *k, char *err, size_t err_len);
	int (*apply)(pcap_knob_t *k, uint32_t cap_mw, char *err,
		     size_t err_len);
	int (*read)(pcap_knob_t *k, uint32_t *cap_mw, char *err,
		    size_t err_len);
	/* NULL: apply at max_mw, the range's top (the knob's default) */
	int (*restore)(pcap_knob_t *k, char *err, size_t err_len);
	/* The energy its domain used, mJ, counting up (wraps taken care
	 * of): for the split by draw (pcap_node.h).  NULL, or -ENOENT: the
	 * knob cannot tell (cpufreq, dcmi, redfish; a RAPL zone without
	 * energy_uj). */
	int (*energy)(pcap_knob_t *k, uint64_t *mj, char *err,
		      size_t err_len);
	void (*close)(pcap_knob_t *k);	/* frees priv; may be NULL */
} pcap_knob_ops_t;

#define PCAP_KNOB_MAX_OPTS	16
#define PCAP_KNOB_MAX_ZONES	64

/* One zone a knob writes (a RAPL zone, a CPU's cpufreq directory). */
typedef struct {
	char *path;		/* the file written (sysfs knobs) */
	void *handle;		/* the device (nvml) */
	uint32_t lo, hi;	/* its range: rapl and nvml mW, cpufreq kHz */
	uint64_t energy_last;	/* rapl: energy_uj last read (its wraps) */
	bool energy_seen;
} pcap_zone_t;

struct pcap_knob {
	const pcap_knob_ops_t *ops;
	char *spec;		/* as configured, for messages */
	char *root;
	/* options name=value, as configured (parsed by the knob's open) */
	size_t n_opts;
	char *opt_key[PCAP_KNOB_MAX_OPTS], *opt_val[PCAP_KNOB_MAX_OPTS];
	/* filled by open */
	uint32_t min_mw, max_mw;
	uint64_t energy_uj;	/* rapl: energy_uj summed over zones, unwrapped */
	size_t n_zones;
	pcap_zone_t zone[PCAP_KNOB_MAX_ZONES];
	void *priv;		/* the knob's own (nvml: the library) */
};

/*
 * Parse one knob's spec "name[:key=value...]" and open it.  Unknown names,
 * unknown or malformed options and missing files are errors naming the
 * spec (the configuration key is the caller's: PowerCapKnobs).  Returns a
 * knob or NULL with err set.
 */
pcap_knob_t *pcap_knob_open(const char *spec, char *err, size_t err_len);

/* The spec's syntax alone (knob of this build, options known, each once),
 * nothing opened: for a configuration checked away from the node.  0 or a
 * negative errno with err as pcap_knob_open's. */
int pcap_knob_check_spec(const char *spec, char *err, size_t err_len);

/* Close and free (NULL is fine).  Does not restore: the caller decides. */
void pcap_knob_close(pcap_knob_t *k);

int pcap_knob_apply(pcap_knob_t *k, uint32_t cap_mw, char *err,
		    size_t err_len);
int pcap_knob_read(pcap_knob_t *k, uint32_t *cap_mw, char *err,
		   size_t err_len);
int pcap_knob_restore(pcap_knob_t *k, char *err, size_t err_len);
/* The knob's energy counter (ops->energy), mJ; -ENOENT when it has none. */
int pcap_knob_energy(pcap_knob_t *k, uint64_t *mj, char *err,
		     size_t err_len);
/* The knob's kind has an energy counter (rapl, nvml; not cpufreq, dcmi,
 * redfish), whether or not it can be read now. */
bool pcap_knob_has_energy(const pcap_knob_t *k);

/* The cap of a knob whose range is [kmin, kmax] for a node cap in
 * [floor, max] (see the top); node caps outside are clamped. */
uint32_t pcap_split(uint32_t node_floor_mw, uint32_t node_max_mw,
		    uint32_t node_cap_mw, uint32_t kmin_mw, uint32_t kmax_mw);

/*
 * The node's cap over n knobs by what each draws (pcap_node.h): out[i]
 * starts at the linear share s_i (pcap_split).  A knob that does not use
 * its limit (draw + margin below both its last limit, last[i], 0 if none,
 * and s_i by 2 x margin) gets its draw plus 2 x margin (at least its min);
 * what that frees goes to the other knobs in proportion to their room
 * below their max, and what they cannot take goes back to the knobs it
 * came from.  The sum of out equals the sum of the linear shares, so the
 * node's cap holds; with every knob at its limit (or under it by less
 * than the margin) it is the linear split.
 */
void pcap_split_drawn(size_t n, uint32_t node_floor_mw, uint32_t node_max_mw,
		      uint32_t node_cap_mw, const uint32_t *kmin_mw,
		      const uint32_t *kmax_mw, const uint32_t *draw_mw,
		      const uint32_t *last_mw, uint32_t margin_mw,
		      uint32_t *out_mw);

/* The option's value, or NULL. */
const char *pcap_knob_opt(const pcap_knob_t *k, const char *key);

#endif /* SE_PCAP_KNOB_H */
