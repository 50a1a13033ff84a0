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

#include "job.h"
#include "units.h"


/* Option ids of the shared options. */
enum cli_opt {
	OPT_MODEL = 1000, OPT_PARAMS, OPT_GPUS, OPT_NODES, OPT_GPUS_PER_NODE,
	OPT_CLUSTER, OPT_GPU, OPT_SEQ, OPT_GLOBAL_BATCH, OPT_TOKENS_PER_STEP,
	OPT_PRECISION, OPT_MAX_MEMORY, OPT_JSON, OPT_RANK_ORDER, OPT_TRAIN_TOKENS,
	OPT_FRAMEWORK, OPT_TP_COMM_OVERLAP, OPT_NO_FLASH, OPT_GRAD_REDUCE_DTYPE,
	OPT_OVERLAP_GRAD_REDUCE, OPT_OVERLAP_PARAM_GATHER, OPT_PROFILE,
	OPT_MOE_DISPATCHER, OPT_MOE_A2A_OVERLAP, OPT_MOE_SHARED_OVERLAP, OPT_PRECISION_AWARE_OPT, OPT_GOODPUT, OPT_GPU_MTBI, OPT_RESTART_MIN,
	OPT_CKPT_INTERVAL_MIN, OPT_STORAGE_GBS, OPT_GPU_HOUR_COST, OPT_PEFT, OPT_LORA_TARGETS,
	OPT_BF16_LAYERS,
};

/* Long options shared by the subcommands. */
#define CLI_RANK_TOLERANCE_USAGE \
	"  --rank-tolerance PCT   layouts within PCT %% of the fastest step rank by memory headroom,\n" \
	"                         then simplicity (default %.0f; 0: by step time alone)\n"

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
	{ "profile", required_argument, NULL, OPT_PROFILE },                 \
	{ "moe-dispatcher", required_argument, NULL, OPT_MOE_DISPATCHER },    \
	{ "moe-a2a-overlap", required_argument, NULL, OPT_MOE_A2A_OVERLAP },  \
	{ "moe-shared-expert-overlap", required_argument, NULL, OPT_MOE_SHARED_OVERLAP }, \
	{ "precision-aware-optimizer", required_argument, NULL, OPT_PRECISION_AWARE_OPT }, \
	{ "goodput", required_argument, NULL, OPT_GOODPUT },                 \
	{ "gpu-mtbi-hours", required_argument, NULL, OPT_GPU_MTBI },         \
	{ "restart-min", required_argument, NULL, OPT_RESTART_MIN },         \
	{ "checkpoint-interval-min", required_argument, NULL, OPT_CKPT_INTERVAL_MIN }, \
	{ "storage-gbs", required_argument, NULL, OPT_STORAGE_GBS },         \
	{ "gpu-hour-cost", required_argument, NULL, OPT_GPU_HOUR_COST },     \
	{ "peft", required_argument, NULL, OPT_PEFT },                       \
	{ "lora-targets", required_argument, NULL, OPT_LORA_TARGETS },       \
	{ "bf16-layers", required_argument, NULL, OPT_BF16_LAYERS }

/* Handles one shared option; returns 1 if it was one, 0 if not, and -1
 * (with e set) for a bad value. */
int cli_common_option(struct job *in, int opt, const char *arg,
		      struct perr *err);


/* "# pplan CMD VERSION (git HASH)": the first line of every report. */
void cli_print_provenance(FILE *f, const char *cmd);

/* Prints the effective configuration as '#' lines, each value with where
 * it came from. */
void cli_print_config(FILE *f, const char *cmd, const struct job *in);

/* A table's layout cell: "tp8 pp16 dp64 vp8 emb+loss mbs1 sp+ rc-none z1
 * interleaved" (cp, ep and etp only when used, the rank order only when
 * not the default). */
void cli_short_layout(const struct layout *layout, const struct rank_order *order, char *buf,
		      size_t len);

/* Shared usage lines for the options above; GPUs, presets and defaults
 * come from the tables and sim/defaults.h. */
void cli_common_usage(FILE *f);

/* "# accuracy ...": the band of the job's GPU generation and precision
 * (sim/accuracy.h), whether it is the nearest one's, and the best
 * published MFU a prediction is flagged above. */
void cli_print_accuracy(FILE *f, const struct job *in);

/* The "# caution" (constants no run fitted) and "# accuracy" lines of the
 * header, for a job whose header was not printed (plan's other clusters). */
void cli_print_trust(FILE *f, const struct job *in);

/* A table's MFU cell, in %: "56.0", or "56.0!" above the best published
 * MFU for the job's GPU and precision. */
void cli_mfu_cell(char *buf, size_t len, const struct job *in, double mfu);

/* --rank-tolerance PCT (a percentage from 0 to 100) as a fraction into
 * *out; -1 with one sentence on stderr, naming cmd, for anything else. */
int cli_parse_rank_tolerance(const char *cmd, const char *arg, double *out);

/* "# ranking ...": how the table is ordered (search_params.tolerance),
 * with the fastest layout's rank when the tolerance moved it. */
struct search_result;
void cli_print_ranking(FILE *f, const struct job *in, double tolerance,
		       const struct search_result *result);

/* "# goodput ..." (the share of wall-clock time that trains and its
 * terms) when a time to train is asked. */
void cli_print_goodput(FILE *f, const struct job *in);

/* The `pplan predict` command line that reproduces l as resolved from in
 * (every option that changes the answer), with `order` the rank order and
 * closed_form the --closed-form switch.  Shell-quoted where needed. */
/* The launch configuration of the job's framework, after the tables:
 * the Megatron-LM flags for the Megatron family, else the --emit FORMAT
 * that writes the framework's own file. */
struct emit_input;
void cli_launch_config(FILE *f, const struct job *in, const struct emit_input *ei);

void cli_predict_hint(FILE *f, const struct job *in,
		      const struct layout *layout, const struct rank_order *order,
		      int closed_form);

/* Time to train in->train_tokens tokens at pred's throughput on in's GPUs,
 * with the job's goodput: "66.1 days, 26.0 M GPU-hours" into buf, and
 * ", $65.0 M" when --gpu-hour-cost gave a price. */
void cli_train_time(char *buf, size_t len, const struct job *in,
		    const struct prediction *pred);

/* Writes doc as JSON to path, or to stdout when path is "-". */
struct cJSON;
enum pplan_status cli_write_json(const char *path, struct cJSON *doc,
				 struct perr *err);

/* The stream for text: stdout, or a sink when the JSON goes to stdout
 * (--json -) so that stdout carries only the JSON.  cli_text_close
 * closes a sink. */
FILE *cli_text_stream(const struct job *in);
void cli_text_close(FILE *f);

#endif
