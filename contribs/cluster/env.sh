# Source this file to use the test cluster from a shell:
#     . contribs/cluster/env.sh
# It sets SLURM_CONF (and SE_CLUSTER_*) for srun, sbatch, sacct, scontrol.
_se_state=${SE_CLUSTER_STATE:-/var/tmp/slurm-energy-cluster}
if [ -r "$_se_state/env.sh" ]; then
	. "$_se_state/env.sh"
else
	echo "env.sh: no cluster state in $_se_state (run contribs/cluster/cluster up)" >&2
fi
unset _se_state
