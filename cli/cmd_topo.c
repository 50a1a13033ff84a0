/*
 * cmd_topo.c: `pplan topo`: discover a host (hwloc, NVML, or saved hwloc
 * XML / `nvidia-smi topo -m` files), print it as nccl-tests-style '#'
 * lines, and write the pplan.cluster/1 file that --cluster takes and a
 * pplan.topo/1 JSON document.  With --gather (under mpirun, one rank per
 * node) rank 0 collects every host, checks they agree, and writes one
 * cluster file for all of them.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cli_common.h"
#include "cluster.h"
#include "discover.h"
#include "gpu.h"
#include "host.h"
#include "jsonio.h"
#include "cudap2p.h"
#include "nvml.h"
#include "smitopo.h"
#include "topo_gather.h"
#include "topo_out.h"

struct topo_args {
	const char *xml, *smi, *gpu, *out, *json;
	double nic_gbits;
	long nodes, domain;
	int gather, no_nvml;
};

static void usage(FILE *f)
{
	char gpus[256];
	gpu_list_names(gpus, sizeof gpus, ", ");
	fprintf(f,
		"usage: pplan topo [options]\n\n"
		"Discovers this host (hwloc, NVML) or reads saved descriptions of one,\n"
		"prints GPUs, NICs and NVLinks, and writes a cluster file for --cluster.\n\n"
		"  --xml FILE              an hwloc XML export (lstopo --of xml) instead of this host\n"
		"  --nvidia-smi-topo FILE  a saved `nvidia-smi topo -m` output: GPUs, NICs, NVLinks\n"
		"                          (default: NVML if the driver is present, else none)\n"
		"  --gpu TYPE              GPU model (%s);\n"
		"                          default: guessed from the GPU's name, which a\n"
		"                          topo -m output does not record\n"
		"  --nic-gbits N           speed of one NIC, Gbit/s (default: the GPU's preset node,\n"
		"                          e.g. 200 for a100, 400 for h100)\n"
		"  --nodes N               nodes like this one in the cluster file (default 1)\n"
		"  --nvlink-domain N       GPUs per NVLink domain, e.g. 72 for GB200 NVL72\n"
		"                          (default: the node)\n"
		"  --out FILE              write the pplan.cluster/1 file\n"
		"  --json FILE             write the pplan.topo/1 document (\"-\" for stdout)\n"
		"  --gather                under mpirun, one rank per node: collect every host,\n"
		"                          check they agree, rank 0 writes --out for all of them\n"
		"  --no-nvml               do not load NVML\n"
		"  --help                  this text\n", gpus);
}

/* ---- printing ------------------------------------------------------------ */

/* "?" for a count the source does not record. */
static const char *count(int v, char *buf)
{
	if (v < 0)
		return "?";
	snprintf(buf, 16, "%d", v);
	return buf;
}

static void print_host(FILE *f, const struct host_topo *h, const char *nvml_note)
{
	char b[4][16];

	cli_print_provenance(f, "topo");
	fprintf(f, "# source    %s\n", h->source);
	fprintf(f, "# host %s: packages %s, NUMA nodes %s%s, cores %s, PUs %s\n",
		h->hostname[0] ? h->hostname : "?", count(h->packages, b[0]),
		count(h->numa_nodes, b[1]),
		h->numa_inferred ? " (from CPU affinity)" : "",
		count(h->cores, b[2]), count(h->pus, b[3]));
	fprintf(f, "# NVLink source: %s", h->nvlink_source);
	if (nvml_note && *nvml_note)
		fprintf(f, "; NVML: %s", nvml_note);
	fprintf(f, "\n");
	if (h->notes[0])
		fprintf(f, "# notes: %s\n", h->notes);
	fprintf(f, "# %d GPU%s, %d NIC%s (%d compute), NVSwitch: %s",
		h->ngpus, h->ngpus == 1 ? "" : "s", h->nnics,
		h->nnics == 1 ? "" : "s", host_compute_nics(h),
		h->nvswitch ? "yes" : "no");
	if (h->nvswitch_count > 0)
		fprintf(f, " (%d chips)", h->nvswitch_count);
	fprintf(f, "\n");
	if (h->ngpus == 0)
		fprintf(f, "# no NVIDIA GPU (PCI vendor 0x10de) on %s\n",
			h->hostname[0] ? h->hostname : "this host");
	if (h->ngpus > 0) {
		fprintf(f, "#\n# %4s  %-13s %5s  %-28s %-10s %-5s  %s\n", "GPU",
			"bus_id", "NUMA", "model", "NIC", "path", "NVLink peers (links) / switch");
		for (int i = 0; i < h->ngpus; i++) {
			const struct host_gpu *g = &h->gpu[i];
			char peers[256] = "";
			size_t len = 0;
			if (h->nvswitch)
				len += (size_t)snprintf(peers, sizeof peers,
							"switch: %d links, %.0f GB/s",
							g->switch_links, g->switch_gbps);
			else
				for (int j = 0; j < h->ngpus && len < sizeof peers; j++)
					if (h->nvlinks[i][j] > 0)
						len += (size_t)snprintf(peers + len,
									sizeof peers - len,
									"%s%d(%d)", len ? " " : "",
									j, h->nvlinks[i][j]);
			if (!peers[0])
				snprintf(peers, sizeof peers, "none");
			fprintf(f, "# %4d  %-13s %5d  %-28.28s %-10s %-5s  %s\n", i,
				g->bus_id[0] ? g->bus_id : "-", g->numa,
				g->model[0] ? g->model : "-",
				g->nic >= 0 ? h->nic[g->nic].name : "-",
				pci_path_name(g->nic_path), peers);
		}
	}
	if (h->nnics > 0) {
		fprintf(f, "#\n# %-10s %-10s %-13s %5s %7s %9s\n", "NIC", "kind", "bus_id",
			"NUMA", "compute", "rate");
		fprintf(f, "# %-10s %-10s %-13s %5s %7s %9s\n", "", "", "", "", "",
			"(Gb/s)");
		for (int n = 0; n < h->nnics; n++) {
			char rate[16];
			if (h->nic[n].gbits > 0)
				snprintf(rate, sizeof rate, "%.0f", h->nic[n].gbits);
			else
				snprintf(rate, sizeof rate, "-");
			fprintf(f, "# %-10s %-10s %-13s %5d %7s %9s\n", h->nic[n].name,
				nic_kind_name(h->nic[n].kind),
				h->nic[n].bus_id[0] ? h->nic[n].bus_id : "-",
				h->nic[n].numa, h->nic[n].compute ? "yes" : "no", rate);
		}
	}
}

static void print_cluster(FILE *f, const struct cluster *c)
{
	fprintf(f, "#\n# cluster: %d node%s x %d %s; NVLink domain %d GPUs, %s %.0f GB/s per GPU",
		c->num_nodes, c->num_nodes == 1 ? "" : "s", c->gpus_per_node,
		c->gpu.name, c->nvlink_domain, link_class_name(c->nvlink.cls),
		c->nvlink.bw_gbps);
	if (c->has_link_matrix)
		fprintf(f, " (link matrix, %.0f GB/s per link)", c->nvlink_link_gbps);
	if (c->nics_per_node == 0)
		fprintf(f, "\n# network: no NIC found in the source; the cluster file assumes %.1f GB/s per GPU between nodes (give --nic-gbits N to set it)\n",
			c->net.bw_gbps);
	else
		fprintf(f, "\n# network: %d NIC%s x %.1f GB/s per node, %.1f GB/s per GPU, %s\n",
			c->nics_per_node, c->nics_per_node == 1 ? "" : "s", c->nic_gbps,
			c->net.bw_gbps, c->rail_aligned ? "rail-aligned" : "not rail-aligned");
}

/* ---- the command --------------------------------------------------------- */

static int parse_args(int argc, char **argv, struct topo_args *a, int *done)
{
	static const struct option opts[] = {
		{ "xml", required_argument, NULL, 'x' },
		{ "nvidia-smi-topo", required_argument, NULL, 's' },
		{ "gpu", required_argument, NULL, 'g' },
		{ "nic-gbits", required_argument, NULL, 'n' },
		{ "nodes", required_argument, NULL, 'N' },
		{ "nvlink-domain", required_argument, NULL, 'd' },
		{ "out", required_argument, NULL, 'o' },
		{ "json", required_argument, NULL, 'j' },
		{ "gather", no_argument, NULL, 'G' },
		{ "no-nvml", no_argument, NULL, 'M' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	char *end;

	memset(a, 0, sizeof *a);
	*done = 0;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'x': a->xml = optarg; break;
		case 's': a->smi = optarg; break;
		case 'g': a->gpu = optarg; break;
		case 'o': a->out = optarg; break;
		case 'j': a->json = optarg; break;
		case 'G': a->gather = 1; break;
		case 'M': a->no_nvml = 1; break;
		case 'h': usage(stdout); *done = 1; return 0;
		case 'n':
			a->nic_gbits = strtod(optarg, &end);
			if (*end || !(a->nic_gbits > 0) || a->nic_gbits > 1e5) {
				fprintf(stderr, "pplan topo: --nic-gbits must be a positive number of Gbit/s, got '%s'\n", optarg);
				return 2;
			}
			break;
		case 'N':
		case 'd': {
			long v = strtol(optarg, &end, 10);
			if (*end || v < 1 || v > 100000) {
				fprintf(stderr, "pplan topo: --%s must be a positive whole number, got '%s'\n",
					c == 'N' ? "nodes" : "nvlink-domain", optarg);
				return 2;
			}
			if (c == 'N')
				a->nodes = v;
			else
				a->domain = v;
			break;
		}
		default:
			fprintf(stderr, "pplan topo: unknown or incomplete option '%s' (see pplan topo --help)\n",
				argv[optind - 1]);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "pplan topo: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	{
		struct perr e;
		if ((a->out && output_check(a->out, "--out", &e) != PPLAN_OK) ||
		    (a->json && output_check(a->json, "--json", &e) != PPLAN_OK))
			return cli_fail(PPLAN_EINPUT, &e);
	}
	if (a->gather && a->nodes) {
		fprintf(stderr, "pplan topo: --gather counts the nodes itself; drop --nodes\n");
		return 2;
	}
	if (a->no_nvml && a->smi) {
		/* harmless: a topo -m file replaces NVML anyway */
	}
	return 0;
}

/* Fills h from the sources asked for; nvml_note says what NVML did. */
static enum pplan_status describe(const struct topo_args *a, struct host_topo *h,
				  char *nvml_note, size_t len, struct perr *e)
{
	enum pplan_status st;
	struct host_topo cpu;

	nvml_note[0] = '\0';
	if (a->smi) {
		st = smitopo_load(a->smi, h, e);
		if (st != PPLAN_OK)
			return st;
		snprintf(nvml_note, len, "not used (a topo -m file was given)");
		if (a->xml) {
			/* The XML supplies the CPU side only: topo -m outputs name
			 * GPUs by CUDA index, not bus id, so they cannot be merged. */
			st = discover_hwloc(a->xml, &cpu, e);
			if (st != PPLAN_OK)
				return st;
			h->packages = cpu.packages;
			h->numa_nodes = cpu.numa_nodes;
			h->numa_inferred = 0;
			h->cores = cpu.cores;
			h->pus = cpu.pus;
			snprintf(h->hostname, sizeof h->hostname, "%s", cpu.hostname);
			if (cpu.ngpus != h->ngpus)
				host_note(h, "%s has %d GPUs, the topo -m file %d; the file's are used",
					  a->xml, cpu.ngpus, h->ngpus);
		} else {
			const char *base = strrchr(a->smi, '/');
			snprintf(h->hostname, sizeof h->hostname, "%s",
				 base ? base + 1 : a->smi);
		}
		return PPLAN_OK;
	}
	st = discover_hwloc(a->xml, h, e);
	if (st != PPLAN_OK)
		return st;
	if (a->xml) {
		snprintf(nvml_note, len, "not used (an XML export was given)");
	} else if (a->no_nvml) {
		snprintf(nvml_note, len, "not used (--no-nvml)");
	} else {
		struct perr ne = { { 0 } }, ce = { { 0 } };
		if (nvml_probe(h, &ne) == PPLAN_OK) {
			snprintf(nvml_note, len, "used");
			host_assign_nics(h);
		} else if (cudap2p_probe(h, &ce) == PPLAN_OK) {
			snprintf(nvml_note, len, "unavailable, %s; CUDA peer-to-peer used instead",
				 ne.msg);
			host_assign_nics(h);
		} else {
			snprintf(nvml_note, len, "unavailable, %s; CUDA peer-to-peer: %s",
				 ne.msg, ce.msg);
		}
	}
	if (!a->xml && h->ngpus > 0 && strcmp(h->nvlink_source, "none") == 0)
		host_note(h, "no NVLink source: give --nvidia-smi-topo FILE (nvidia-smi topo -m > FILE) for NVLinks");
	return PPLAN_OK;
}

static enum pplan_status build_cluster(const struct topo_args *a,
				       const struct host_topo *h, int nodes,
				       struct cluster *c, struct perr *e)
{
	struct host_cluster_opts o = { NULL, a->nic_gbits, nodes, (int)a->domain };
	if (a->gpu) {
		o.gpu = gpu_find(a->gpu);
		if (!o.gpu) {
			char gpus[256];
			gpu_list_names(gpus, sizeof gpus, ", ");
			return perr_set(e, PPLAN_EINPUT, "--gpu %s: unknown GPU (%s)", a->gpu,
					gpus);
		}
	}
	return host_to_cluster(h, &o, c, e);
}

/* A topo -m file gives link counts only: the GPU named by --gpu gives
 * one link's bandwidth. */
static void apply_gpu_links(const struct topo_args *a, struct host_topo *h)
{
	const struct gpu_spec *g = a->gpu ? gpu_find(a->gpu) : NULL;
	if (!g || h->link_gbps > 0 || g->nvlink_links <= 0)
		return;
	h->link_gbps = g->nvlink_gbps / g->nvlink_links;
	host_classify_nvlink(h, g->nvlink_links);
}

static int run_gather(const struct topo_args *a, struct host_topo *mine,
		      enum pplan_status st, struct perr *e)
{
	struct topo_gather g;
	struct cluster c;
	int ref = 0, printed = 0;

	/* Hosts are told apart by their real names, whatever the source. */
	if (gethostname(mine->hostname, sizeof mine->hostname - 1) != 0)
		snprintf(mine->hostname, sizeof mine->hostname, "?");
	if (st != PPLAN_OK) {
		/* Still take part, so that rank 0 can name this rank. */
		mine->ngpus = -1;
		snprintf(mine->notes, sizeof mine->notes, "%s", e->msg);
	}
	st = topo_gather_hosts(mine, &g, e);
	if (st != PPLAN_OK)
		return cli_fail(st, e);
	if (g.rank == 0) {
		for (int i = 0; i < g.size && st == PPLAN_OK; i++)
			if (g.hosts[i].ngpus < 0)
				st = perr_set(e, PPLAN_EINPUT, "rank %d (%s): %s", i,
					      g.hosts[i].hostname, g.hosts[i].notes);
		for (int i = 0; i < g.size && st == PPLAN_OK; i++)
			for (int j = 0; j < i; j++)
				if (strcmp(g.hosts[i].hostname, g.hosts[j].hostname) == 0) {
					fprintf(stderr, "pplan topo: ranks %d and %d both run on %s; "
						"start one rank per node (mpirun --map-by ppr:1:node)\n",
						j, i, g.hosts[i].hostname);
					break;
				}
		if (st == PPLAN_OK)
			st = host_check_agree(g.hosts, g.size, &ref, e);
		if (st == PPLAN_OK)
			st = build_cluster(a, &g.hosts[ref], g.size, &c, e);
		if (st == PPLAN_OK) {
			print_host(stdout, &g.hosts[ref], NULL);
			printf("# gathered %d hosts; all agree\n", g.size);
			print_cluster(stdout, &c);
			if (a->out)
				st = cluster_save(&c, a->out, e);
		}
	}
	/* Rank 0 says what went wrong before the ranks leave together: once
	 * another rank exits non-zero, mpirun may end the job. */
	if (g.rank == 0 && st != PPLAN_OK) {
		cli_fail(st, e);
		fflush(stderr);
		printed = 1;
	}
	fflush(stdout);
	st = topo_gather_finish(&g, st, e);
	if (st != PPLAN_OK)
		return g.rank == 0 && !printed ? cli_fail(st, e) : status_exit_code(st);
	return 0;
}

int cmd_topo(int argc, char **argv)
{
	struct topo_args a;
	struct host_topo *h;
	struct perr e = { { 0 } };
	struct cluster c;
	enum pplan_status st;
	char nvml_note[sizeof e.msg + 32];
	int done, rc, have_cluster = 0;

	rc = parse_args(argc, argv, &a, &done);
	if (rc != 0 || done)
		return rc;
	h = malloc(sizeof *h);
	if (!h)
		return cli_fail(perr_set(&e, PPLAN_ENOMEM, "out of memory"), &e);
	st = describe(&a, h, nvml_note, sizeof nvml_note, &e);
	if (st == PPLAN_OK)
		apply_gpu_links(&a, h);
	if (a.gather) {
		rc = run_gather(&a, h, st, &e);
		free(h);
		return rc;
	}
	if (st != PPLAN_OK)
		goto fail;
	if (h->ngpus > 0) {
		struct perr ce = { { 0 } };
		enum pplan_status cst = build_cluster(&a, h, (int)a.nodes, &c, &ce);
		have_cluster = cst == PPLAN_OK;
		if (!have_cluster && (a.out || a.gpu)) {
			st = cst;
			e = ce;
			goto fail;
		}
		if (!have_cluster)
			host_note(h, "no cluster: %s", ce.msg);
	} else if (a.out) {
		st = perr_set(&e, PPLAN_EINPUT,
			      "%s: no GPU found, so there is no cluster to write to %s",
			      h->source, a.out);
		goto fail;
	}
	/* With --json - stdout carries the JSON alone; the summary goes to stderr. */
	{
		FILE *sf = a.json && strcmp(a.json, "-") == 0 ? stderr : stdout;
		print_host(sf, h, nvml_note);
		if (have_cluster)
			print_cluster(sf, &c);
	}
	if (a.out) {
		st = cluster_save(&c, a.out, &e);
		if (st != PPLAN_OK)
			goto fail;
		fprintf(a.json && strcmp(a.json, "-") == 0 ? stderr : stdout,
			"# wrote %s\n", a.out);
	}
	if (a.json) {
		cJSON *doc = topo_out_json(h, nvml_note, have_cluster ? &c : NULL);
		if (strcmp(a.json, "-") == 0) {
			char *s = cJSON_Print(doc);
			if (s)
				printf("%s\n", s);
			free(s);
			st = PPLAN_OK;
		} else {
			st = json_write_atomic(a.json, doc, &e);
		}
		cJSON_Delete(doc);
		if (st != PPLAN_OK)
			goto fail;
	}
	free(h);
	return 0;
fail:
	free(h);
	return cli_fail(st, &e);
}
