/*
 * cases.h: published training runs in the pplan.cases/1 format
 * (validation/README.md), read as they are, with every null field filled
 * by the default the source's framework used at the time and the
 * assumption recorded, so `pplan validate` can say what it assumed.
 */
#ifndef PPLAN_CASES_H
#define PPLAN_CASES_H

#include "cost.h"

struct vcase {
	char id[128];
	char source_key[32];     /* narayanan21, bigscience, dgxc, nemo, megatron-readme */
	struct model_spec model;
	struct cluster cluster;
	struct layout layout;
	struct train_opts opts;
	double measured_step_s;  /* NAN when the source gives none */
	double measured_mem_gib; /* NAN when not measured */
	char memory_kind[32];
	int measured_oom;
	int predictable;         /* 0: a field pplan cannot assume is missing */
	char skip_reason[160];
	char assumed[768];       /* "mbs=1 (Megatron default); ..." */
};

/* Reads path; *out (caller frees with free()) receives *n cases.  A
 * malformed file or case gives one sentence naming the file and case. */
enum pplan_status cases_load(const char *path, struct vcase **out, int *n,
			     struct perr *e);

#endif
