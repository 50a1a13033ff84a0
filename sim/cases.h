/*
 * cases.h: published training runs in the pplan.cases/1 format
 * (validation/README.md), read as they are.  Each case names the
 * framework that ran it; every null layout field is filled with that
 * framework's default (sim/framework.c) and the assumption recorded, so
 * `pplan validate` can say what it assumed.  A case pplan cannot read or
 * model (an unknown GPU, an incomplete model, a field out of range) is
 * kept, not predicted, with the reason; only a file that is not a cases
 * file fails the whole load.
 */
#ifndef PPLAN_CASES_H
#define PPLAN_CASES_H

#include "cost.h"

/* How the source counted the FLOPs of a TFLOP/s figure. */
enum flops_convention {
	FLOPS_UNKNOWN = 0,
	FLOPS_MODEL,      /* forward + backward, no recomputation (sim/MODEL.md 2) */
	FLOPS_HARDWARE,   /* with the extra forward of full recomputation */
};

struct vcase {
	char id[128];
	/* The source text up to " -- " (the publication, without the table):
	 * the unit of leave-one-source-out cross-validation; label is its
	 * first words, for tables. */
	char publication[256];
	char label[48];
	char framework_given[64];  /* "megatron-core 0.8", as the case says */
	struct model_spec model;
	struct cluster cluster;
	struct layout layout;
	struct train_opts opts;
	double measured_step_s;    /* NAN when neither given nor derivable */
	int step_from_throughput;  /* measured_step_s derived here from TFLOP/s */
	int layout_searched;       /* no degrees given: search's best layout priced */
	double measured_tflops;    /* per GPU as printed; NAN if none */
	double measured_tokens;    /* tokens/s per GPU as printed; NAN if none */
	enum flops_convention convention;
	double measured_mem_gib;   /* NAN when not measured */
	char memory_kind[32];
	int measured_oom;
	int recompute_unknown;     /* the source gave no recomputation */
	int bf16_given;            /* layout.num_layers_at_start/end_in_bf16 said (opts.bf16_*) */
	char pp_layout[512];       /* layout.pipeline_model_parallel_layout ("" none) */
	int mtp_layers;            /* multi-token-prediction layers the model has (DeepSeek's
				    * num_nextn_predict_layers); counted as layers only where
				    * the pipeline split needs them (sim/MODEL.md 9) */
	int predictable;           /* 0: pplan cannot model it; skip_reason says why */
	char skip_reason[256];
	char warning[192];         /* what the case says against itself ("") */
	char assumed[1536];        /* "mbs=1 (megatron-core default); ..." */
};

/* Reads path; *out (caller frees with free()) receives *n cases.  A file
 * that is not JSON, has no "pplan.cases/1" schema or no cases array gives
 * one sentence naming the file; every case, whatever it holds, is
 * returned, those pplan cannot read or model with predictable = 0 and
 * the reason. */
enum pplan_status cases_load(const char *path, struct vcase **out, int *n,
			     struct perr *err);

/* Predicts vc.  When the source gives no recomputation and the
 * framework's default does not fit although the run did, the next
 * recomputation that fits is taken and noted in vc->assumed (at most
 * once per case).  vc->opts.use_des decides the pipeline model. */
enum pplan_status vcase_predict(struct vcase *vc, struct prediction *pred,
				struct perr *err);

/* The predicted step time to compare with measured_step_s, on the
 * source's FLOP convention when the measurement was a throughput. */
double vcase_predicted_tflops(const struct vcase *vc, const struct prediction *pred);

#endif
