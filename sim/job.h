/*
 * job.h: the one job resolver.  What a user asks (a model or a parameter
 * count, a cluster or a GPU and its size, a framework and its switches, a
 * sequence, a batch, a precision, a memory cap, a profile, a layout
 * string) becomes one priced job: a model, a cluster, training options
 * and a complete layout, every value not given filled in the same way for
 * every command (search, predict, simulate, exec and the emitters), each
 * with a note saying where it came from.  job_price is the one
 * prediction pipeline from it: the cost model, the pipeline schedule
 * played by the event simulator, its timeline and the memory per stage.
 *
 * The caller fills the "as given" fields (strings it owns, which must
 * outlive the job) and calls job_resolve or job_resolve_layout; the
 * resolved fields are the job's own.  Nothing here prints or exits.
 */
#ifndef PPLAN_JOB_H
#define PPLAN_JOB_H

#include "cost.h"
#include "curves.h"
#include "goodput.h"
#include "memory.h"
#include "profile.h"
#include "run.h"

/* Who runs the job.  pplan exec runs it itself, so its job is priced with
 * the executor's framework row (sim/framework.c, "pplan-exec") on the
 * ranks it has; a plan is priced for a framework on a cluster. */
enum job_ranks {
	JOB_PLANNED = 0, /* search, predict, simulate: a cluster's GPUs (or a CPU profile's ranks) */
	JOB_EXEC_CPU,    /* pplan exec --backend cpu: this host's CPU cores */
	JOB_EXEC_GPU,    /* pplan exec on GPUs */
};

struct job {
	/* as given */
	const char *model_arg, *params_arg, *cluster_arg, *gpu_arg;
	const char *precision_arg, *json_path, *order_arg, *framework_arg;
	const char *tp_overlap_arg;   /* --tp-comm-overlap as given (for the hint) */
	struct fw_switches switches;  /* --tp-comm-overlap ... as given */
	const char *profile_arg;      /* --profile FILE */
	const char *pp_layout_arg;    /* --pipeline-layout STRING: Megatron-Core's
				       * --pipeline-model-parallel-layout (layout.h) */
	const struct model_spec *model_given; /* the model itself (read from a launch config) */
	const char *model_given_note; /* where it came from */
	const struct cluster *cluster_given;     /* the machine itself (a validation
						  * case's hardware), sized */
	const struct framework *framework_given; /* the framework row itself (a case's
						  * name, version and year) */
	const char *from_where;       /* the launch configuration read (NULL: none): the
				       * origin of what it gave in the notes */
	enum job_ranks ranks;         /* who runs it: a framework (a plan) or pplan exec */
	struct cost_params profile_constants; /* its constants (opts.params points here) */
	struct curve_set curves;      /* its measured curves (opts.curves points here) */
	struct run_conditions profile_cond; /* what it was measured under (unknown: -1, NAN) */
	long profile_cores;           /* its host's cores, 0 unknown */
	struct cluster machine;       /* pplan exec's measured CPU ranks (have_machine) */
	int have_machine;
	char gpu_found[32];           /* the GPU pplan exec found (gpu_arg points here) */
	int layout_cp;                /* the layout's cp, once known (0 before) */
	long gpus, nodes, gpus_per_node, seq, gbs, tokens_per_step;
	double train_tokens;     /* tokens to train on; 0 = not asked */
	struct goodput_opts goodput_opts; /* checkpoints, interruptions, price */
	double max_memory_gib;
	int lora_rank;           /* --peft lora[:R]: LoRA adapters of rank R; 0 none */
	const char *lora_where;  /* the launch configuration that gave it (NULL: --peft) */
	unsigned lora_targets;   /* --lora-targets (enum lora_target); 0 LoRA's default */
	const char *targets_where; /* what gave them (NULL: --lora-targets) */
	int bf16_first, bf16_last; /* --bf16-layers: end layers of an fp8-class run in bf16 */
	int bf16_given;          /* --bf16-layers (or a launch configuration) said so */
	const char *bf16_where;  /* the launch configuration that said it (NULL: --bf16-layers) */
	/* resolved */
	struct model_spec model;
	struct cluster cluster;
	struct train_opts opts;
	int cpu_ranks;           /* the machine is CPU ranks (a CPU profile's, or pplan exec's) */
	long global_batch;       /* sequences */
	struct goodput goodput;  /* of this many GPUs (sim/goodput.h) */
	char model_note[192];    /* "the zoo model nearest --params 70B" */
	char gbs_note[256];      /* where the global batch comes from */
	char seq_note[64];
	char precision_note[160]; /* "--precision", "default", or why the default is fp16 */
	char mem_note[192];
	char cluster_note[128];
	char attention_note[224];  /* why the framework's attention or TP overlap changed */
	char unpriced[192];        /* why pplan exec's run cannot be priced ("" if it can) */
	const char *pp_layout;     /* the pipeline layout string the split comes from
				    * (--pipeline-layout, or the launch configuration's),
				    * for the emitters; NULL none */
	int mtp_layers;            /* MTP layers that layout counts as layers: in
				    * model.layers, after the model's own */
	char pp_layout_note[224];  /* what --pipeline-layout gave ("" none) */
};

/* Empty: nothing given, every switch the framework's. */
void job_init(struct job *job);

/* --params picks the nearest dense zoo model only within this ratio. */
#define PARAMS_MAX_RATIO 1.2

/* Resolves model, cluster and options; `need_gpus` demands a size
 * (--gpus, --nodes, or a cluster file that sizes itself). */
enum pplan_status job_resolve(struct job *job, int need_gpus, struct perr *err);

/* The job says how many GPUs it has: --gpus, --nodes, a cluster file
 * (which sizes itself) or a profile (its ranks). */
int job_names_size(const struct job *job);

/* Parses the layout string, sizes the cluster from it when no size is
 * given, resolves the job (job_resolve), applies --pipeline-layout (its
 * vp and split; MTP layers it counts as layers added to the model),
 * completes the layout with the framework's defaults (sp, zero,
 * recompute, and the global batch: the framework's rule, or the batch
 * options; both is a conflict) and checks it against the model. */
enum pplan_status job_resolve_layout(struct job *job, const char *layout_arg,
				     struct layout *layout, struct perr *err);
/* The same for a layout already parsed, `set` its LK_ keys (layout.h). */
enum pplan_status job_resolve_parsed(struct job *job, struct layout *layout, unsigned set,
				     struct perr *err);

/* The layout half of job_resolve_parsed, for a job job_resolve resolved:
 * completes what `set` leaves out of l (dp from the GPUs, the framework's
 * sp, ZeRO and recomputation, the global batch) and checks l against the
 * model and the cluster.  Validation cases (cases.c) call it after their
 * own pipeline split. */
enum pplan_status job_complete_layout(struct job *job, struct layout *layout, unsigned set,
				      struct perr *err);

/* The machine the job runs on, once it is known: pplan exec's measured
 * CPU ranks (when no profile describes them) or the GPU it found (when
 * --gpu did not name one).  The training options are resolved again for
 * it.  PPLAN_EINPUT when the device is not a known GPU. */
enum pplan_status job_set_cpu_machine(struct job *job, const struct cluster *measured,
				      struct perr *err);
enum pplan_status job_set_gpu_found(struct job *job, const char *device, long ranks,
				    struct perr *err);

/* One priced layout: the prediction, and for the report the predicted
 * timeline of one step and each pipeline stage's memory. */
struct job_price {
	struct prediction p;
	struct run_timeline tl;        /* the event simulation's step, per op class */
	struct mem_breakdown *stage_mem; /* [pp], the job's own */
};

/* Prices layout for job: predict_layout (the event simulation folded in unless
 * job->opts.use_des is 0), then the timeline and the stages' memory when
 * `timeline`.  job_price_free releases what it holds. */
enum pplan_status job_price(const struct job *job, const struct layout *layout, int timeline,
			    struct job_price *out, struct perr *err);
void job_price_free(struct job_price *pr);

/* What training job->train_tokens tokens at pred's throughput takes: wall-clock
 * seconds with the job's goodput, GPU-hours of wall-clock time, and their
 * cost when a price was given (else 0). */
struct job_train_time {
	double seconds, gpu_hours, cost;
};
struct job_train_time job_train_time(const struct job *job, const struct prediction *pred);

#endif
