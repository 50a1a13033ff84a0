/*
 * topo_out.c: pplan.topo/1, the host `pplan topo --json` describes
 * (topo_out.h).
 */
#include "topo_out.h"

#include <math.h>

#include "jsonio.h"

cJSON *topo_out_json(const struct host_topo *h, const char *nvml_note,
		     const struct cluster *c)
{
	cJSON *root = cJSON_CreateObject(), *gpus, *nics, *mat;

	cJSON_AddStringToObject(root, "schema", "pplan.topo/1");
	cJSON_AddStringToObject(root, "source", h->source);
	cJSON_AddStringToObject(root, "hostname", h->hostname);
	cJSON_AddStringToObject(root, "nvlink_source", h->nvlink_source);
	if (nvml_note && *nvml_note)
		cJSON_AddStringToObject(root, "nvml", nvml_note);
	else
		cJSON_AddNullToObject(root, "nvml");
	cJSON_AddStringToObject(root, "notes", h->notes);
#define COUNT(key, v)                                            \
	do {                                                     \
		if ((v) >= 0)                                    \
			cJSON_AddNumberToObject(root, key, (v)); \
		else                                             \
			cJSON_AddNullToObject(root, key);        \
	} while (0)
	COUNT("packages", h->packages);
	COUNT("numa_nodes", h->numa_nodes);
	COUNT("cores", h->cores);
	COUNT("pus", h->pus);
#undef COUNT
	cJSON_AddBoolToObject(root, "numa_from_cpu_affinity", h->numa_inferred);
	cJSON_AddBoolToObject(root, "nvswitch", h->nvswitch);
	cJSON_AddNumberToObject(root, "nvswitch_chips", h->nvswitch_count);
	json_add_number_or_null(root, "nvlink_link_gbps",
				h->link_gbps > 0 ? h->link_gbps : NAN);
	gpus = cJSON_AddArrayToObject(root, "gpus");
	for (int i = 0; i < h->ngpus; i++) {
		const struct host_gpu *g = &h->gpu[i];
		cJSON *o = cJSON_CreateObject();
		cJSON_AddNumberToObject(o, "index", i);
		cJSON_AddStringToObject(o, "bus_id", g->bus_id);
		cJSON_AddStringToObject(o, "model", g->model);
		if (g->numa >= 0)
			cJSON_AddNumberToObject(o, "numa", g->numa);
		else
			cJSON_AddNullToObject(o, "numa");
		cJSON_AddStringToObject(o, "cpu_affinity", g->cpu_affinity);
		if (g->nic >= 0)
			cJSON_AddStringToObject(o, "nearest_nic", h->nic[g->nic].name);
		else
			cJSON_AddNullToObject(o, "nearest_nic");
		cJSON_AddStringToObject(o, "nic_path", pci_path_name(g->nic_path));
		cJSON_AddNumberToObject(o, "switch_links", g->switch_links);
		cJSON_AddNumberToObject(o, "switch_gbps", g->switch_gbps);
		cJSON_AddItemToArray(gpus, o);
	}
	nics = cJSON_AddArrayToObject(root, "nics");
	for (int n = 0; n < h->nnics; n++) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "name", h->nic[n].name);
		cJSON_AddStringToObject(o, "netdev", h->nic[n].netdev);
		cJSON_AddStringToObject(o, "kind", nic_kind_name(h->nic[n].kind));
		cJSON_AddStringToObject(o, "bus_id", h->nic[n].bus_id);
		if (h->nic[n].numa >= 0)
			cJSON_AddNumberToObject(o, "numa", h->nic[n].numa);
		else
			cJSON_AddNullToObject(o, "numa");
		cJSON_AddBoolToObject(o, "compute", h->nic[n].compute);
		json_add_number_or_null(o, "rate_gbits", h->nic[n].gbits > 0
								 ? h->nic[n].gbits : NAN);
		cJSON_AddItemToArray(nics, o);
	}
	mat = cJSON_AddArrayToObject(root, "nvlink_matrix");
	for (int i = 0; i < h->ngpus; i++)
		cJSON_AddItemToArray(mat, cJSON_CreateIntArray(h->nvlinks[i], h->ngpus));
	mat = cJSON_AddArrayToObject(root, "gpu_nic_path");
	for (int i = 0; i < h->ngpus; i++) {
		cJSON *row = cJSON_CreateArray();
		for (int n = 0; n < h->nnics; n++)
			cJSON_AddItemToArray(row, cJSON_CreateString(
							  pci_path_name(h->gpu_nic[i][n])));
		cJSON_AddItemToArray(mat, row);
	}
	if (c) {
		cJSON *o = cJSON_AddObjectToObject(root, "cluster");
		cJSON_AddStringToObject(o, "gpu", c->gpu.name);
		cJSON_AddNumberToObject(o, "gpus_per_node", c->gpus_per_node);
		cJSON_AddNumberToObject(o, "num_nodes", c->num_nodes);
		cJSON_AddNumberToObject(o, "nvlink_domain", c->nvlink_domain);
		cJSON_AddStringToObject(o, "nvlink_class", link_class_name(c->nvlink.cls));
		cJSON_AddNumberToObject(o, "nvlink_gbps", c->nvlink.bw_gbps);
		cJSON_AddNumberToObject(o, "nics_per_node", c->nics_per_node);
		cJSON_AddNumberToObject(o, "nic_gbps", c->nic_gbps);
		cJSON_AddNumberToObject(o, "net_gbps_per_gpu", c->net.bw_gbps);
		cJSON_AddBoolToObject(o, "rail_aligned", c->rail_aligned);
	} else {
		cJSON_AddNullToObject(root, "cluster");
	}
	return root;
}

