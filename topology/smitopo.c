/*
 * smitopo.c: the `nvidia-smi topo -m` parser (see smitopo.h for the
 * formats it takes).  Two passes over the lines: the header names the
 * columns, each row is checked against it; then the NIC legend renames
 * NIC0.. columns.  Cells are split on tabs when the line has any, else on
 * runs of two or more spaces (column names such as "CPU Affinity" contain
 * single spaces).
 */
#include "smitopo.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "jsonio.h"

#define MAX_CELLS (HOST_MAX_GPUS + HOST_MAX_NICS + 8)
#define CELL_LEN 64

enum col_kind { COL_GPU, COL_NIC, COL_CPU_AFF, COL_NUMA_AFF, COL_GPU_NUMA };

struct row {
	int n;
	char cell[MAX_CELLS][CELL_LEN];
};

static void trim(char *s)
{
	size_t a = 0, b = strlen(s);
	while (s[a] && isspace((unsigned char)s[a]))
		a++;
	while (b > a && isspace((unsigned char)s[b - 1]))
		b--;
	memmove(s, s + a, b - a);
	s[b - a] = '\0';
}

/* Splits one line into cells; returns -1 if there are too many. */
static int split(const char *line, struct row *r)
{
	int tabs = strchr(line, '\t') != NULL;
	const char *p = line;

	r->n = 0;
	while (*p) {
		const char *q = p;
		size_t len;
		if (tabs) {
			while (*q && *q != '\t')
				q++;
		} else {
			while (*q && !(q[0] == ' ' && q[1] == ' '))
				q++;
		}
		if (r->n >= MAX_CELLS)
			return -1;
		len = (size_t)(q - p) < CELL_LEN - 1 ? (size_t)(q - p) : CELL_LEN - 1;
		memcpy(r->cell[r->n], p, len);
		r->cell[r->n][len] = '\0';
		trim(r->cell[r->n]);
		r->n++;
		if (!*q)
			break;
		p = q + 1;
		if (!tabs) /* swallow the rest of the run of spaces */
			while (*p == ' ')
				p++;
	}
	/* Space-separated rows start with their label; a header's leading
	 * run of spaces yields an empty first cell, as the tab format does. */
	return 0;
}

static int is_gpu_label(const char *s, int *idx)
{
	char *end;
	long v;
	if (strncmp(s, "GPU", 3) != 0 || !isdigit((unsigned char)s[3]))
		return 0;
	/* GPU numbers past what a host holds would overflow the column
	 * arithmetic below; such a label is no GPU column. */
	errno = 0;
	v = strtol(s + 3, &end, 10);
	if (*end || errno || v > 9999)
		return 0;
	*idx = (int)v;
	return 1;
}

static enum nic_kind nic_kind_guess(const char *name)
{
	if (!strncmp(name, "mlx", 3) || !strncmp(name, "ib", 2) ||
	    !strncmp(name, "hfi", 3))
		return NIC_IB;
	if (!strncmp(name, "bnxt_re", 7) || !strncmp(name, "irdma", 5) ||
	    !strncmp(name, "qedr", 4) || !strncmp(name, "erdma", 5))
		return NIC_ROCE;
	if (!strncmp(name, "eth", 3) || !strncmp(name, "en", 2))
		return NIC_ETHERNET;
	return NIC_OTHER;
}

/* A cell between two devices: X, NV#, or a PCI path word.  Sets *nv to
 * the NVLink count (0 if none), *path to the PCI path (UNKNOWN for NV#
 * and X).  Returns -1 for anything else. */
static int parse_link(const char *s, int *self, int *nv, enum pci_path *path)
{
	*self = 0;
	*nv = 0;
	*path = PATH_UNKNOWN;
	if (strcmp(s, "X") == 0) {
		*self = 1;
		return 0;
	}
	if (strncmp(s, "NV", 2) == 0 && isdigit((unsigned char)s[2])) {
		char *end;
		long v = strtol(s + 2, &end, 10);
		if (*end || v < 1 || v > 64)
			return -1;
		*nv = (int)v;
		return 0;
	}
	if (strcmp(s, "SOC") == 0) { /* drivers before 384 said SOC for SYS */
		*path = PATH_SYS;
		return 0;
	}
	return pci_path_parse(s, path);
}

static int parse_numa(const char *s)
{
	char *end;
	long v;
	if (!isdigit((unsigned char)s[0]))
		return -1;
	v = strtol(s, &end, 10);
	return (*end == '\0' && v < 4096) ? (int)v : -1;
}

/* Line-based reader over the text; lines are copied into buf. */
struct lines {
	const char *p;
	int no;
};

static int next_line(struct lines *L, char *buf, size_t len)
{
	size_t n = 0;
	if (!*L->p)
		return 0;
	while (*L->p && *L->p != '\n') {
		if (*L->p != '\r' && n + 1 < len)
			buf[n++] = *L->p;
		L->p++;
	}
	if (*L->p == '\n')
		L->p++;
	buf[n] = '\0';
	L->no++;
	return 1;
}

static int is_blank(const char *s)
{
	while (*s && isspace((unsigned char)*s))
		s++;
	return *s == '\0';
}

enum pplan_status smitopo_parse(const char *text, const char *name,
				struct host_topo *h, struct perr *e)
{
	struct row hdr, r; /* 3.5 KiB each */
	enum col_kind kind[MAX_CELLS];
	int gpu_col[MAX_CELLS], nic_col[MAX_CELLS];
	int ndev = 0, seen_row[MAX_CELLS] = { 0 };
	int has_numa_col = 0, gpu_line[HOST_MAX_GPUS] = { 0 };
	char line[4096];
	struct lines L = { text, 0 };
	int hdr_line = 0;

	host_init(h);
	snprintf(h->source, sizeof h->source, "nvidia-smi topo -m output %s", name);

	/* The header: the first line with a GPU0 cell. */
	while (next_line(&L, line, sizeof line)) {
		if (split(line, &hdr) < 0)
			return perr_set(e, PPLAN_EINPUT, "%s:%d: more than %d columns",
					name, L.no, MAX_CELLS);
		for (int i = 0; i < hdr.n; i++)
			if (strcmp(hdr.cell[i], "GPU0") == 0) {
				hdr_line = L.no;
				break;
			}
		if (hdr_line)
			break;
	}
	if (!hdr_line)
		return perr_set(e, PPLAN_EINPUT,
				"%s: no header row naming GPU0; not an `nvidia-smi topo -m` output",
				name);
	if (hdr.cell[0][0] != '\0')
		return perr_set(e, PPLAN_EINPUT,
				"%s:%d: the header row must start with an empty cell, found '%s'",
				name, hdr_line, hdr.cell[0]);
	/* Columns 1..: devices first, then the known affinity columns. */
	for (int c = 1; c < hdr.n; c++) {
		const char *s = hdr.cell[c];
		int idx;
		if (s[0] == '\0' && c == hdr.n - 1) { /* trailing separator */
			hdr.n--;
			break;
		}
		if (is_gpu_label(s, &idx)) {
			if (c != 1 + idx || h->nnics > 0)
				return perr_set(e, PPLAN_EINPUT,
						"%s:%d: column %s is out of order (GPU columns come first, GPU0 upward)",
						name, hdr_line, s);
			if (h->ngpus >= HOST_MAX_GPUS)
				return perr_set(e, PPLAN_EINPUT,
						"%s:%d: more than %d GPUs", name,
						hdr_line, HOST_MAX_GPUS);
			kind[c] = COL_GPU;
			gpu_col[c] = h->ngpus++;
			ndev++;
		} else if (strcasecmp(s, "CPU Affinity") == 0) {
			kind[c] = COL_CPU_AFF;
		} else if (strcasecmp(s, "NUMA Affinity") == 0) {
			kind[c] = COL_NUMA_AFF;
			has_numa_col = 1;
		} else if (strcasecmp(s, "GPU NUMA ID") == 0) {
			kind[c] = COL_GPU_NUMA;
		} else if (!strchr(s, ' ') && s[0] && ndev == c - 1) {
			/* A NIC column; its cells must be PCI path words. */
			struct host_nic *n;
			if (h->nnics >= HOST_MAX_NICS)
				return perr_set(e, PPLAN_EINPUT,
						"%s:%d: more than %d NICs", name,
						hdr_line, HOST_MAX_NICS);
			kind[c] = COL_NIC;
			nic_col[c] = h->nnics;
			n = &h->nic[h->nnics++];
			snprintf(n->name, sizeof n->name, "%s", s);
			n->kind = nic_kind_guess(s);
			n->numa = -1;
			ndev++;
		} else {
			return perr_set(e, PPLAN_EINPUT,
					"%s:%d: unknown column '%s' (known: GPU<n>, NIC names, "
					"CPU Affinity, NUMA Affinity, GPU NUMA ID); an output "
					"from a newer nvidia-smi?",
					name, hdr_line, s);
		}
	}
	if (h->ngpus == 0)
		return perr_set(e, PPLAN_EINPUT, "%s:%d: no GPU columns", name,
				hdr_line);
	for (int g = 0; g < h->ngpus; g++) {
		h->gpu[g].numa = -1;
		h->gpu[g].nic = -1;
		h->gpu[g].nic_path = PATH_UNKNOWN;
	}

	/* Rows, up to the first blank line or "Legend:". */
	while (next_line(&L, line, sizeof line)) {
		int dev = -1, is_gpu = 0, idx;
		if (is_blank(line))
			break;
		if (strncmp(line, "Legend", 6) == 0)
			break;
		if (split(line, &r) < 0)
			return perr_set(e, PPLAN_EINPUT, "%s:%d: too many cells", name,
					L.no);
		for (int c = 1; c < 1 + ndev; c++)
			if (strcmp(hdr.cell[c], r.cell[0]) == 0)
				dev = c;
		if (dev < 0)
			return perr_set(e, PPLAN_EINPUT,
					"%s:%d: row '%s' names no device of the header",
					name, L.no, r.cell[0]);
		if (seen_row[dev]++)
			return perr_set(e, PPLAN_EINPUT, "%s:%d: second row for %s",
					name, L.no, r.cell[0]);
		is_gpu = is_gpu_label(r.cell[0], &idx);
		if (is_gpu)
			gpu_line[gpu_col[dev]] = L.no;
		/* GPU rows carry the affinity columns; NIC rows may stop
		 * after the devices (or leave the affinity cells empty). */
		while (r.n > 1 + ndev && r.cell[r.n - 1][0] == '\0' && !is_gpu)
			r.n--;
		if (r.n < 1 + ndev || r.n > hdr.n ||
		    (is_gpu && r.n != hdr.n && r.n != 1 + ndev))
			return perr_set(e, PPLAN_EINPUT,
					"%s:%d: row %s has %d cells, the header has %d columns",
					name, L.no, r.cell[0], r.n - 1, hdr.n - 1);
		for (int c = 1; c < r.n; c++) {
			const char *s = r.cell[c];
			int self, nv;
			enum pci_path p;
			if (kind[c] == COL_GPU || kind[c] == COL_NIC) {
				if (parse_link(s, &self, &nv, &p) != 0)
					return perr_set(e, PPLAN_EINPUT,
							"%s:%d: %s to %s is '%s', not X, NV<n>, PIX, PXB, PHB, NODE or SYS",
							name, L.no, r.cell[0], hdr.cell[c], s);
				if (self != (c == dev))
					return perr_set(e, PPLAN_EINPUT,
							"%s:%d: %s to %s is '%s'; X belongs on the diagonal only",
							name, L.no, r.cell[0], hdr.cell[c], s);
				if (!is_gpu)
					continue; /* NIC rows repeat what GPU rows say */
				if (kind[c] == COL_GPU)
					h->nvlinks[gpu_col[dev]][gpu_col[c]] = nv;
				else if (nv)
					return perr_set(e, PPLAN_EINPUT,
							"%s:%d: %s to NIC %s is '%s', an NVLink",
							name, L.no, r.cell[0], hdr.cell[c], s);
				else
					h->gpu_nic[gpu_col[dev]][nic_col[c]] = p;
			} else if (is_gpu) {
				struct host_gpu *g = &h->gpu[gpu_col[dev]];
				if (kind[c] == COL_CPU_AFF)
					snprintf(g->cpu_affinity, sizeof g->cpu_affinity,
						 "%s", s);
				else if (kind[c] == COL_NUMA_AFF)
					g->numa = parse_numa(s);
			}
		}
	}
	/* NIC rows are optional (some transcriptions keep GPU rows only);
	 * a NIC column is checked through the GPU rows' cells. */
	for (int c = 1; c < 1 + ndev; c++)
		if (!seen_row[c] && kind[c] == COL_GPU)
			return perr_set(e, PPLAN_EINPUT,
					"%s: the header names %s but no row does (truncated?)",
					name, hdr.cell[c]);
	for (int i = 0; i < h->ngpus; i++)
		for (int j = 0; j < i; j++)
			if (h->nvlinks[i][j] != h->nvlinks[j][i])
				return perr_set(e, PPLAN_EINPUT,
						"%s:%d: GPU%d to GPU%d has %d NVLinks but line %d says GPU%d to GPU%d has %d",
						name, gpu_line[i], i, j, h->nvlinks[i][j],
						gpu_line[j], j, i, h->nvlinks[j][i]);

	/* The NIC legend, if any: "  NIC0: mlx5_0". */
	while (next_line(&L, line, sizeof line)) {
		char label[CELL_LEN], dev[CELL_LEN];
		if (strncmp(line, "NIC Legend", 10) != 0)
			continue;
		while (next_line(&L, line, sizeof line)) {
			if (is_blank(line))
				continue;
			if (sscanf(line, " %63[^: ]: %63s", label, dev) != 2)
				break;
			for (int n = 0; n < h->nnics; n++)
				if (strcmp(h->nic[n].name, label) == 0) {
					snprintf(h->nic[n].name, sizeof h->nic[n].name,
						 "%s", dev);
					h->nic[n].kind = nic_kind_guess(dev);
				}
		}
		break;
	}

	/* NUMA nodes: the distinct NUMA affinities, else the distinct CPU
	 * affinity sets (older drivers print no NUMA column). */
	{
		int count = 0, known = 0;
		for (int i = 0; i < h->ngpus; i++) {
			int dup = 0;
			if (has_numa_col && h->gpu[i].numa >= 0) {
				known = 1;
				for (int j = 0; j < i; j++)
					dup |= h->gpu[j].numa == h->gpu[i].numa;
			} else if (!has_numa_col && h->gpu[i].cpu_affinity[0]) {
				known = 1;
				for (int j = 0; j < i; j++)
					dup |= strcmp(h->gpu[j].cpu_affinity,
						      h->gpu[i].cpu_affinity) == 0;
			} else {
				dup = 1;
			}
			count += !dup;
		}
		if (known) {
			h->numa_nodes = count;
			h->numa_inferred = !has_numa_col;
		}
	}
	host_classify_nvlink(h, 0);
	host_assign_nics(h);
	snprintf(h->nvlink_source, sizeof h->nvlink_source, "nvidia-smi topo -m");
	return PPLAN_OK;
}

enum pplan_status smitopo_load(const char *path, struct host_topo *h,
			       struct perr *e)
{
	char *buf = NULL;
	enum pplan_status st = file_read(path, SMITOPO_MAX_BYTES,
					 "an nvidia-smi topo -m output", &buf,
					 NULL, e);

	if (st != PPLAN_OK)
		return st;
	st = smitopo_parse(buf, path, h, e);
	free(buf);
	return st;
}
