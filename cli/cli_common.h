/*
 * cli_common.h: the options that search, predict and simulate share
 * (model, cluster and its size, sequence, batch, precision, memory cap,
 * framework switches, reports) and their resolution into a model, a
 * cluster and training options.  Every value not given takes a default
 * from sim/defaults.h or the tables, and the effective configuration is
 * echoed as '#' lines that say where each value came from.
 */
#ifndef PPLAN_CLI_COMMON_H
#define PPLAN_CLI_COMMON_H

#include <getopt.h>
#include <stdio.h>

#include "cost.h"
#include "curves.h"
#include "units.h"

struct cli_inputs {
	/* as given */
	const char *model_arg, *params_arg, *cluster_arg, *gpu_arg;
	const char *precision_arg, *json_path, *order_arg, *framework_arg;
	const char *tp_overlap_arg;   /* --tp-comm-overlap as given (for the hint) */
	struct fw_switches switches;  /* --tp-comm-overlap ... as given */
	const char *profile_arg;      /* --profile FILE */
	struct cost_params profile_constants; /* its constants (opts.params points here) */
	struct curve_set curves;      /* its measured curves (opts.curves points here) */
	int cpu_profile;              /* the profile describes CPU ranks: it is the machine */
	long gpus, nodes, gpus_per_node, seq, gbs, tokens_per_step;
	double train_tokens;     /* tokens to train on; 0 = not asked */
	double max_memory_gib;
	/* resolved */
	struct model_spec model;
	struct cluster cluster;
	struct train_opts opts;
	long global_batch;       /* sequences */
	char model_note[192];    /* "the zoo model nearest --params 70B" */
	char gbs_note[256];      /* where the global batch comes from */
	char seq_note[64];
	char mem_note[192];
	char cluster_note[128];
	char attention_note[128];  /* why the framework's attention changed */
};

void cli_inputs_init(struct cli_inputs *in);

/* --params picks the nearest dense zoo model only within this ratio. */
#define PARAMS_MAX_RATIO 1.2

/* Option ids of the shared options. */
enum cli_opt {
	OPT_MODEL = 1000, OPT_PARAMS, OPT_GPUS, OPT_NODES, OPT_GPUS_PER_NODE,
	OPT_CLUSTER, OPT_GPU, OPT_SEQ, OPT_GLOBAL_BATCH, OPT_TOKENS_PER_STEP,
	OPT_PRECISION, OPT_MAX_MEMORY, OPT_JSON, OPT_RANK_ORDER, OPT_TRAIN_TOKENS,
	OPT_FRAMEWORK, OPT_TP_COMM_OVERLAP, OPT_NO_FLASH, OPT_GRAD_REDUCE_DTYPE,
	OPT_OVERLAP_GRAD_REDUCE, OPT_OVERLAP_PARAM_GATHER, OPT_PROFILE,
};

/* Long options shared by the subcommands. */
#define CLI_COMMON_OPTIONS                                                   \
	{ "model", required_argument, NULL, OPT_MODEL },                     \
	{ "params", required_argument, NULL, OPT_PARAMS },                   \
	{ "gpus", required_argument, NULL, OPT_GPUS },                       \
	{ "nodes", required_argument, NULL, OPT_NODES },                     \
	{ "gpus-per-node", required_argument, NULL, OPT_GPUS_PER_NODE },     \
	{ "cluster", required_argument, NULL, OPT_CLUSTER },                 \
	{ "gpu", required_argument, NULL, OPT_GPU },                         \
	{ "seq", required_argument, NULL, OPT_SEQ },                         \
	{ "global-batch", required_argument, NULL, OPT_GLOBAL_BATCH },       \
	{ "tokens-per-step", required_argument, NULL, OPT_TOKENS_PER_STEP }, \
	{ "precision", required_argument, NULL, OPT_PRECISION },             \
	{ "max-memory-gib", required_argument, NULL, OPT_MAX_MEMORY },       \
	{ "json", required_argument, NULL, OPT_JSON },                       \
	{ "rank-order", required_argument, NULL, OPT_RANK_ORDER },           \
	{ "train-tokens", required_argument, NULL, OPT_TRAIN_TOKENS },       \
	{ "framework", required_argument, NULL, OPT_FRAMEWORK },             \
	{ "tp-comm-overlap", required_argument, NULL, OPT_TP_COMM_OVERLAP }, \
	{ "no-flash-attention", no_argument, NULL, OPT_NO_FLASH },           \
	{ "grad-reduce-dtype", required_argument, NULL, OPT_GRAD_REDUCE_DTYPE }, \
	{ "overlap-grad-reduce", required_argument, NULL, OPT_OVERLAP_GRAD_REDUCE }, \
	{ "overlap-param-gather", required_argument, NULL, OPT_OVERLAP_PARAM_GATHER }, \
	{ "profile", required_argument, NULL, OPT_PROFILE }

/* Handles one shared option; returns 1 if it was one, 0 if not, and -1
 * (with e set) for a bad value. */
int cli_common_option(struct cli_inputs *in, int opt, const char *arg,
		      struct perr *e);

/* Resolves model, cluster and options; `need_gpus` demands a size
 * (--gpus, --nodes, or a cluster file that sizes itself). */
enum pplan_status cli_resolve(struct cli_inputs *in, int need_gpus,
			      struct perr *e);

/* For predict and simulate: parses the layout string, sizes the cluster
 * from it when no size is given, resolves the inputs (cli_resolve),
 * completes the layout, takes gbs from the layout or the batch options
 * (both is a conflict) and checks it against the model. */
enum pplan_status cli_resolve_layout(struct cli_inputs *in,
				     const char *layout_arg, struct layout *l,
				     struct perr *e);

/* "# pplan CMD VERSION (git HASH)": the first line of every report. */
void cli_print_provenance(FILE *f, const char *cmd);

/* Prints the effective configuration as '#' lines, each value with where
 * it came from. */
void cli_print_config(FILE *f, const char *cmd, const struct cli_inputs *in);

/* Shared usage lines for the options above; GPUs, presets and defaults
 * come from the tables and sim/defaults.h. */
void cli_common_usage(FILE *f);

/* The `pplan predict` command line that reproduces l as resolved from in
 * (every option that changes the answer), with `order` the rank order and
 * closed_form the --closed-form switch.  Shell-quoted where needed. */
void cli_predict_hint(FILE *f, const struct cli_inputs *in,
		      const struct layout *l, const struct rank_order *order,
		      int closed_form);

/* Time to train in->train_tokens tokens at p's throughput on in's GPUs:
 * "12.3 days, 4.83 M GPU-hours" into buf. */
void cli_train_time(char *buf, size_t len, const struct cli_inputs *in,
		    const struct prediction *p);

/* The GPU table's names, joined by sep ("a100-40gb, a100-80gb, ..."). */
void cli_gpu_list(char *buf, size_t len, const char *sep);

/* Writes doc as JSON to path, or to stdout when path is "-". */
struct cJSON;
enum pplan_status cli_write_json(const char *path, struct cJSON *doc,
				 struct perr *e);

/* The stream for text: stdout, or a sink when the JSON goes to stdout
 * (--json -) so that stdout carries only the JSON.  cli_text_close
 * closes a sink. */
FILE *cli_text_stream(const struct cli_inputs *in);
void cli_text_close(FILE *f);

#endif
