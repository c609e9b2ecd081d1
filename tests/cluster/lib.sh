# lib.sh -- shared settings of the emulated cluster (sourced by the other
# scripts; not run by itself).
#
# Topology made by up.sh N (every name below can be overridden from the
# environment before calling any script, e.g. CLUSTER_PREFIX=foo):
#
#   namespace agora-sw     the "switch": bridge br0, no address
#   namespace agora-head   the login node: mpirun runs here   10.77.0.10
#   namespace agora-h1..N  the compute hosts, one eth0 each   10.77.0.11 ...
#
# Every namespace has its own network stack (loopback, routes, firewall,
# queueing disciplines) and nothing else: the file system, the PID space and
# the CPUs are the machine's. The agent (agent.sh) also gives each launched
# process its own UTS namespace, so gethostname() returns the emulated host's
# name (agora-hI), as on a real cluster.
#
# /etc/netns/<namespace>/{hosts,nsswitch.conf,resolv.conf} are bind-mounted
# over /etc/ by `ip netns exec`: the cluster's names resolve from a private
# hosts file and no DNS query is ever sent from inside the cluster. No
# namespace has a default route, so nothing inside can reach any address
# outside 10.77.0.0/24 (or its own loopback).
#
# Copied from the Agora team's emulated-cluster harness (kept outside this
# repository), trimmed to what tests/cluster/cluster_test.sh needs.

CLUSTER_PREFIX=${CLUSTER_PREFIX:-agora}
CLUSTER_SUBNET=${CLUSTER_SUBNET:-10.77.0}          # /24, private, only inside our namespaces
CLUSTER_STATE=${CLUSTER_STATE:-/run/${CLUSTER_PREFIX}-cluster}
CLUSTER_SW=${CLUSTER_PREFIX}-sw
CLUSTER_HEAD=${CLUSTER_PREFIX}-head
CLUSTER_HEAD_IP=${CLUSTER_SUBNET}.10
CLUSTER_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

cluster_host_ns() { echo "${CLUSTER_PREFIX}-h$1"; }           # host index (1..N) -> namespace/host name
cluster_host_ip() { echo "${CLUSTER_SUBNET}.$((10 + $1))"; }  # host index -> address

# Number of hosts of the cluster that is up (0 if none).
cluster_size() { cat "$CLUSTER_STATE/size" 2>/dev/null || echo 0; }

cluster_die() { echo "cluster: $*" >&2; exit 1; }

cluster_need_root() { [ "$(id -u)" = 0 ] || cluster_die "must run as root (network namespaces)"; }

# The MPI settings that make mpirun use the emulated cluster. Exported by
# exec.sh; listed here so that other launchers can reuse them. All are plain
# Open MPI MCA variables, so they also reach mpirun when it is started by
# another script (agorarun, bench/run, ctest).
cluster_mpi_env() {
  export OMPI_MCA_plm_rsh_agent="$CLUSTER_DIR/agent.sh"   # "ssh" = ip netns exec
  export OMPI_MCA_plm_rsh_no_tree_spawn=1                 # all daemons started from the head
  export OMPI_MCA_orte_default_hostfile="$CLUSTER_STATE/hostfile"
  export OMPI_MCA_pml=ob1                                 # no UCX (it would pick its own transports)
  export OMPI_MCA_btl=tcp,self                            # no shared memory between ranks
  export OMPI_MCA_btl_tcp_if_include="$CLUSTER_SUBNET.0/24"
  export OMPI_MCA_oob_tcp_if_include="$CLUSTER_SUBNET.0/24"
  export OMPI_MCA_osc='^ucx'
  # As root: mpirun refuses to run otherwise (agorarun sets these too).
  if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
}
