/*
 * host.h: one host's GPUs, NICs and links, as discovered.  This is the
 * common result of the three discovery sources (hwloc in discover.c, NVML
 * in nvml.c, a saved `nvidia-smi topo -m` in smitopo.c) and the input of
 * host_to_cluster(), which turns it into the struct cluster the cost model
 * reads.  It is plain data (no pointers): copy it, compare it, send it
 * over MPI as bytes.
 *
 * Distances between a GPU and a NIC use nvidia-smi's words, nearest first:
 * PIX (at most one PCIe switch), PXB (several PCIe bridges, no host
 * bridge), PHB (through a host bridge), NODE (between host bridges of one
 * NUMA node), SYS (across the CPU interconnect).
 */
#ifndef PPLAN_HOST_H
#define PPLAN_HOST_H

#include <stdio.h>

#include "cluster.h"
#include "status.h"

#define HOST_MAX_GPUS CLUSTER_MAX_NODE_GPUS
#define HOST_MAX_NICS 32

enum pci_path {
	PATH_PIX = 0,
	PATH_PXB,
	PATH_PHB,
	PATH_NODE,
	PATH_SYS,
	PATH_UNKNOWN,
	PATH_COUNT
};

const char *pci_path_name(enum pci_path path);
/* "PIX", "PXB", ... (case-insensitive); -1 if not a PCI path word. */
int pci_path_parse(const char *s, enum pci_path *out);

enum nic_kind { NIC_IB = 0, NIC_ROCE, NIC_ETHERNET, NIC_OTHER };
const char *nic_kind_name(enum nic_kind kind);

struct host_gpu {
	char bus_id[20];        /* "0000:34:00.0"; "" when the source lacks it */
	char model[64];         /* as the source names it; "" if unknown */
	int numa;               /* NUMA node os index; -1 unknown */
	char cpu_affinity[64];  /* "48-63,176-191"; "" unknown */
	int nic;                /* nearest NIC (index into nic[]); -1 none */
	enum pci_path nic_path; /* how far that NIC is */
	int switch_links;       /* NVLinks to NVSwitches (all switches) */
	double switch_gbps;     /* GB/s one direction to the NVSwitch fabric */
	int nvlink_version;     /* NVML's NVLink version enum; 0 unknown */
};

struct host_nic {
	char name[32];          /* "mlx5_0" (RDMA device) or "eth0" */
	char netdev[32];        /* network interface if known, else "" */
	char bus_id[20];
	enum nic_kind kind;
	int numa;               /* -1 unknown */
	int compute;            /* PIX/PXB to at least one GPU (a GPU's rail) */
	double gbits;           /* link rate, Gbit/s; 0 unknown (files, VMs) */
};

struct host_topo {
	char source[256];       /* what described this host, for the user */
	char hostname[64];
	/* CPU side; -1 when the source does not say. */
	int packages, numa_nodes, cores, pus;
	int numa_inferred;      /* numa_nodes counted from CPU affinity sets */
	int ngpus, nnics;
	struct host_gpu gpu[HOST_MAX_GPUS];
	struct host_nic nic[HOST_MAX_NICS];
	enum pci_path gpu_nic[HOST_MAX_GPUS][HOST_MAX_NICS];
	/* Direct GPU-GPU NVLinks (count) and their bandwidth, GB/s one
	 * direction.  Through an NVSwitch every pair shows the GPU's links
	 * to the fabric (as nvidia-smi prints NV12 / NV18). */
	int nvlinks[HOST_MAX_GPUS][HOST_MAX_GPUS];
	double nvlink_gbps[HOST_MAX_GPUS][HOST_MAX_GPUS];
	double link_gbps;       /* one NVLink, GB/s one direction; 0 unknown */
	int nvswitch;           /* GPUs reach each other through NVSwitch(es) */
	int nvswitch_count;     /* switch chips seen (0 when unknown) */
	/* Where each part came from, and what was missing ("" = nothing). */
	char nvlink_source[64];
	char notes[512];
};

/* Empties host: no GPUs, no NICs, counts unknown, paths unknown. */
void host_init(struct host_topo *host);

/* Appends a sentence to host->notes ("; " separated). */
void host_note(struct host_topo *host, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Marks compute NICs and gives each GPU its nearest NIC, preferring a NIC
 * no other GPU uses at the same distance (so a rail-aligned DGX maps
 * GPUi -> its own NIC).  Call after gpu_nic is filled. */
void host_assign_nics(struct host_topo *host);

int host_compute_nics(const struct host_topo *host);
/* 1 if every GPU has its own compute NIC at PIX/PXB distance. */
int host_rail_aligned(const struct host_topo *host);
/* Decides nvswitch from the link counts when the source does not say:
 * a GPU whose peers' link counts sum to more than `max_links` must reach
 * them through a switch.  Sets link_gbps-based bandwidths if missing. */
void host_classify_nvlink(struct host_topo *host, int max_links);
/* 1 if the two PCI addresses are the same device, compared numerically
 * ("00000000:34:00.0" equals "0000:34:00.0"). */
int host_same_bus(const char *a, const char *b);

/* The index of host's GPU at PCI address bus_id, adding a GPU with that
 * address (NUMA and NIC unknown) when host has none; -1 when host is full.
 * For sources (NVML, CUDA) that see GPUs hwloc did not. */
int host_gpu_by_bus(struct host_topo *host, const char *bus_id);

/* Total NVLinks of GPU i to its peers (direct) or to the fabric. */
int host_gpu_links(const struct host_topo *host, int i);

/* Per-link NVLink bandwidth (GB/s one direction) for NVML's NVLink
 * version enum: 1 -> 20, 2..6 -> 25, 7 and later -> 50. */
double host_nvlink_version_gbps(int version);

struct host_cluster_opts {
	const struct gpu_spec *gpu; /* NULL: guess from the GPU model names */
	double nic_gbits;           /* one NIC, Gbit/s; 0: the compute NICs'
				       discovered rate, else the GPU's preset */
	int num_nodes;              /* 0: 1 */
	int nvlink_domain;          /* GPUs per NVLink domain; 0: the node */
};

/* Builds the cluster a cost model needs from host: the GPU's preset (link
 * efficiencies and latencies), then this host's GPUs per node, NVLink
 * class and bandwidth, link matrix, compute NICs and rail alignment.
 * Fails with a sentence when host has no GPU or the GPU model is unknown. */
enum pplan_status host_to_cluster(const struct host_topo *host,
				  const struct host_cluster_opts *opts,
				  struct cluster *cluster, struct perr *err);

/* 0 if a and b describe the same kind of node (GPU count and models,
 * NVLink matrix or switch links, compute NICs, rail alignment); else 1
 * with the first difference, as "4 GPUs, not 8", in why. */
int host_differs(const struct host_topo *a, const struct host_topo *b,
		 char *why, size_t len);

/* Checks that n hosts (one per node, hosts[i] from rank i) agree.  *ref
 * receives the index of a host of the largest group of equal ones.  On
 * disagreement: PPLAN_EINPUT naming every odd one out by rank, host
 * name and difference. */
enum pplan_status host_check_agree(const struct host_topo *hosts, int n,
				   int *ref, struct perr *err);

/* What this host is doing now: the 1-minute load average and the first
 * CPU's clock in MHz (/proc/cpuinfo's "cpu MHz"); NAN where unknown. */
void host_load_and_clock(double *load_1m, double *cpu_mhz);

/* Guesses the pplan GPU from a model string ("NVIDIA H100 80GB HBM3",
 * "Tesla V100-SXM3-32GB-H"); NULL if unknown. */
const struct gpu_spec *host_guess_gpu(const char *model);

#endif
