/*
 * cluster.h: a cluster as data.  Nodes of one GPU type, the links inside a
 * node (or a larger NVLink domain such as GB200 NVL72) and the network
 * between them.  Presets (dgx-a100, dgx-h100, dgx-h800, dgx-h200, hgx-b200,
 * gb200-nvl72, gb300-nvl72, hgx-b300, gh200-x4) and
 * pplan.cluster/1 files give the same struct; so does host discovery
 * (topology/discover.c).  A cluster is plain data: copy it freely.
 */
#ifndef PPLAN_CLUSTER_H
#define PPLAN_CLUSTER_H

#include "gpu.h"
#include "status.h"

#define CLUSTER_MAX_NODE_GPUS 16
#define CLUSTER_MAX_GPUS (1L << 20) /* the largest cluster pplan plans for */

enum link_class {
	LINK_NVSWITCH = 0, /* every GPU pair at full NVLink bandwidth */
	LINK_NVLINK,       /* direct NVLinks between some pairs (DGX-1 mesh) */
	LINK_PCIE,         /* through PCIe switches / host bridges */
	LINK_NET,          /* the NICs between nodes or NVLink domains */
	LINK_CLASS_COUNT
};

const char *link_class_name(enum link_class cls);
int link_class_parse(const char *s, enum link_class *out);

/* A link as a collective sees it: per-GPU bandwidth in one direction. */
struct link {
	enum link_class cls;
	double bw_gbps;   /* GB/s per GPU, one direction */
	double latency_s; /* per ring step */
	double eff;       /* achieved bus bandwidth / bw_gbps for large messages */
};

struct cluster {
	char name[64];            /* preset name or the file's "name" */
	struct gpu_spec gpu;
	int gpus_per_node;
	int num_nodes;
	int nvlink_domain;        /* GPUs sharing one NVLink fabric (>= node) */
	struct link nvlink;       /* inside the NVLink domain */
	struct link pcie;         /* inside a node without NVLink */
	struct link net;          /* between domains, per GPU (node NICs / GPUs) */
	int nics_per_node;        /* compute NICs */
	double nic_gbps;          /* one NIC, GB/s one direction */
	int rail_aligned;         /* each GPU has its own NIC on its own rail */
	/* NVLinks between GPU pairs of one node; all zero when the node has an
	 * NVSwitch (has_link_matrix = 0).  With a matrix (DGX-1 hybrid
	 * cube-mesh) nvlink.bw_gbps is a GPU's total NVLink bandwidth and
	 * cluster_group_link() prices a group by the NVLink rings its
	 * members can form, each link carrying nvlink_link_gbps. */
	int has_link_matrix;
	int nvlinks[CLUSTER_MAX_NODE_GPUS][CLUSTER_MAX_NODE_GPUS];
	double nvlink_link_gbps;  /* one NVLink, GB/s one direction */
	double host_gbps;         /* one GPU's link to host memory, GB/s one direction
				   * (PCIe; NVLink-C2C on Grace-Blackwell); 0 = pcie's */
	double host_mem_gib;      /* one node's host memory, GiB; 0 = CLUSTER_HOST_MEM_GIB */
	double host_mem_gbps;     /* one node's host memory bandwidth (all sockets), GB/s;
				   * 0 = CLUSTER_HOST_MEM_GBPS */
	char source[128];         /* where the description came from */
};

/* A GPU's bandwidth to host memory (activation offloading), GB/s. */
double cluster_host_gbps(const struct cluster *cluster);

/* A node's host memory (GiB) and its bandwidth (GB/s), for optimizer
 * offload; a cluster file without them gets a two-socket server's. */
#define CLUSTER_HOST_MEM_GIB 1024.0
#define CLUSTER_HOST_MEM_GBPS 400.0
double cluster_host_mem_gib(const struct cluster *cluster);
double cluster_host_mem_gbps(const struct cluster *cluster);

/* The node a GPU without a preset of its own is planned on (--gpu):
 * its generation's.  An Ampere GPU: the dgx-a100 node (DGX A100 320GB's
 * 1 TiB of host memory for the 40 GB A100).  Volta and Pascal: 8 GPUs on
 * NVSwitch as half an HGX-2 (DGX-2: 8 x 100 Gb/s EDR NICs per 16 GPUs,
 * PCIe 3.0 host links, 1.5 TB of DDR4-2666 on two 6-channel sockets).
 * Newer: the dgx-h100 node.  cluster->source says which. */
enum pplan_status cluster_for_gpu(const struct gpu_spec *gpu, struct cluster *cluster,
				  struct perr *err);

/* Names of the embedded node presets, NULL-terminated. */
const char *const *cluster_preset_names(void);

/* Fills *cluster with `preset` (e.g. "dgx-h100") sized for `gpus` GPUs (0: one
 * node).  Fails with a sentence if the preset is unknown or `gpus` is not
 * a multiple of the node size. */
enum pplan_status cluster_preset(const char *preset, long gpus,
				 struct cluster *cluster, struct perr *err);

/* CPU ranks as a cluster (pplan exec's CPU backend, a CPU profile):
 * `per_host` ranks on each of `hosts` hosts, each a "GPU" named cpu with
 * the measured fp32 GEMM rate and streaming bandwidth; ranks of a host
 * talk over shared memory (shm_gbps, shm_latency_s), hosts over a 1 GB/s
 * network.  Every CPU cluster pplan builds is this one. */
struct cpu_ranks {
	int per_host, hosts;
	double tflops, gbps;          /* per rank: sgemm, streaming */
	double shm_gbps, shm_latency_s;
	double mem_gib;               /* per rank */
	const char *description;      /* "" or the device's words */
	const char *source;           /* where the rates come from */
};
void cluster_cpu_ranks(const struct cpu_ranks *ranks, struct cluster *cluster);

/* Resizes cluster to `nodes` nodes of `gpus_per_node` GPUs each (0 keeps the
 * current value).  Fewer GPUs per node than cluster has uses that many GPUs of
 * each node (e.g. 4 of a DGX H100's 8): the NVLink domain and the
 * rail-aligned NICs shrink with them, so the network rate per GPU stays.
 * More GPUs per node than cluster's nodes have is refused with a sentence. */
enum pplan_status cluster_size(struct cluster *cluster, long nodes, int gpus_per_node,
			       struct perr *err);

/* An NVLink domain larger than a node (an NVL72 rack) as a job of this
 * size gets it: at most the job's GPUs, and whole nodes that divide the
 * job (128 GPUs on NVL72 racks: two domains of 64, as jobs are placed). */
void cluster_fit_domain(struct cluster *cluster);

/* The preset whose GPU is `gpu` (e.g. a100-80gb -> dgx-a100), or NULL. */
const char *cluster_preset_for_gpu(const char *gpu);

/* Reads a pplan.cluster/1 file; `gpus` > 0 resizes it to that many GPUs
 * (whole nodes).  Errors name the file and the key. */
enum pplan_status cluster_load(const char *path, long gpus, struct cluster *cluster,
			       struct perr *err);

/* Writes cluster as pplan.cluster/1 to path (temporary file, then rename). */
enum pplan_status cluster_save(const struct cluster *cluster, const char *path,
			       struct perr *err);

/* Either a preset name or a file path (anything with '/' or ".json"). */
enum pplan_status cluster_resolve(const char *name_or_file, long gpus,
				  struct cluster *cluster, struct perr *err);

long cluster_gpus(const struct cluster *cluster);

/* Overrides the network bandwidth per GPU (GB/s), keeping latency and
 * efficiency; used when a source states its fabric. */
void cluster_set_net_gbps(struct cluster *cluster, double gbps_per_gpu);

/* The link that a group of `size` ranks with rank stride `stride` uses
 * under the default placement (consecutive ranks fill a node first): the
 * NVLink domain if every group stays inside one, else the network, whose
 * per-GPU bandwidth grows with the group members per node that share the
 * node's NICs.  On a node with a link matrix (no NVSwitch) the in-node
 * bandwidth is that of the NVLink rings the slowest group can form (as
 * NCCL builds them), or PCIe where they form none.  See sim/MODEL.md
 * "Collectives" and topology/placement.h for arbitrary rank sets. */
struct link cluster_group_link(const struct cluster *cluster, int size, int stride);

/* Ring bandwidth (GB/s per GPU, one direction, before efficiency) of the
 * GPUs `local` (n node-local indices) over the link matrix: the number
 * of link-disjoint NVLink Hamiltonian cycles through them, each run both
 * ways, times 2 x nvlink_link_gbps; for n = 2 the pair's links.  0 when
 * they form no NVLink ring.  Requires has_link_matrix. */
double cluster_ring_gbps(const struct cluster *cluster, const int *local, int n);

#endif
