/*
 * cli_common.h: the options that search, predict and simulate share
 * (model, cluster, GPUs, sequence, batch, precision, memory cap) and their
 * resolution into a model, a cluster and training options, with the
 * effective configuration echoed as '#' lines.
 */
#ifndef PPLAN_CLI_COMMON_H
#define PPLAN_CLI_COMMON_H

#include <getopt.h>
#include <stdio.h>

#include "cost.h"

struct cli_inputs {
	/* as given */
	const char *model_arg, *params_arg, *cluster_arg, *gpu_arg;
	const char *precision_arg, *json_path, *order_arg, *framework_arg;
	struct fw_switches switches;  /* --tp-comm-overlap ... as given */
	long gpus, seq, gbs, tokens_per_step;
	double max_memory_gib;
	/* resolved */
	struct model_spec model;
	struct cluster cluster;
	struct train_opts opts;
	long global_batch;       /* sequences */
	char model_note[160];    /* "--params 70B: nearest zoo model llama3-70b (70.6 B)" */
	char gbs_note[96];
};

void cli_inputs_init(struct cli_inputs *in);

/* Long options shared by the subcommands (ids >= 1000). */
#define CLI_COMMON_OPTIONS                                           \
	{ "model", required_argument, NULL, 1000 },                  \
	{ "params", required_argument, NULL, 1001 },                 \
	{ "gpus", required_argument, NULL, 1002 },                   \
	{ "cluster", required_argument, NULL, 1003 },                \
	{ "gpu", required_argument, NULL, 1004 },                    \
	{ "seq", required_argument, NULL, 1005 },                    \
	{ "global-batch", required_argument, NULL, 1006 },           \
	{ "tokens-per-step", required_argument, NULL, 1007 },        \
	{ "precision", required_argument, NULL, 1008 },              \
	{ "max-memory-gib", required_argument, NULL, 1009 },         \
	{ "json", required_argument, NULL, 1010 },                   \
	{ "rank-order", required_argument, NULL, 1011 },             \
	{ "framework", required_argument, NULL, 1012 },              \
	{ "tp-comm-overlap", required_argument, NULL, 1013 },        \
	{ "no-flash-attention", no_argument, NULL, 1014 },           \
	{ "grad-reduce-dtype", required_argument, NULL, 1015 },      \
	{ "overlap-grad-reduce", required_argument, NULL, 1016 },    \
	{ "overlap-param-gather", required_argument, NULL, 1017 }

/* Handles one shared option; returns 1 if it was one, 0 if not, and -1
 * (with e set) for a bad value. */
int cli_common_option(struct cli_inputs *in, int opt, const char *arg,
		      struct perr *e);

/* Resolves model, cluster and options; `need_gpus` demands --gpus or a
 * cluster file that sizes itself. */
enum pplan_status cli_resolve(struct cli_inputs *in, int need_gpus,
			      struct perr *e);

/* For predict and simulate: parses the layout string, sizes the cluster
 * from it when --gpus is absent, resolves the inputs (cli_resolve),
 * completes the layout, takes gbs from the layout or the batch options
 * (both is a conflict) and checks it against the model. */
enum pplan_status cli_resolve_layout(struct cli_inputs *in,
				     const char *layout_arg, struct layout *l,
				     struct perr *e);

/* Prints the effective configuration as '#' lines. */
void cli_print_config(FILE *f, const char *cmd, const struct cli_inputs *in);

/* Shared usage lines for the options above. */
void cli_common_usage(FILE *f);

/* Parses a positive whole number ("512", "4M" for counts). */
int cli_parse_long(const char *s, long *out);

#endif
