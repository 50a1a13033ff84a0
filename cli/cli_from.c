/*
 * cli_from.c: `--from FORMAT SOURCE`: a launch configuration read back
 * (reports/launch_read.h) becomes the job, through the one job resolver.
 * What the file says and what the command line says must agree: a value
 * given twice, differently, is a conflict.
 */
#include "cli_from.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static enum pplan_status conflict(struct perr *e, const char *where, const char *what,
				  const char *cmd, const char *file)
{
	return perr_set(e, PPLAN_EINPUT, "%s conflicts with %s's %s (%s): give it once",
			cmd, where, what, file);
}

/* One switch: the file's value, unless the command line set another. */
static enum pplan_status merge_switch(int *cmd, int file, int unset, const char *opt,
				      const char *where, struct perr *e)
{
	if (file == unset)
		return PPLAN_OK;
	if (*cmd != unset && *cmd != file)
		return perr_set(e, PPLAN_EINPUT, "%s conflicts with what %s says of it: give it once",
				opt, where);
	*cmd = file;
	return PPLAN_OK;
}

static enum pplan_status merge_switches(struct fw_switches *c, const struct fw_switches *f,
					const char *where, struct perr *e)
{
	enum pplan_status st;
	if ((st = merge_switch(&c->tp_overlap, f->tp_overlap, -1, "--tp-comm-overlap", where, e)) ||
	    (st = merge_switch(&c->flash, f->flash, -1, "--no-flash-attention", where, e)) ||
	    (st = merge_switch(&c->grad_bytes, f->grad_bytes, 0, "--grad-reduce-dtype", where, e)) ||
	    (st = merge_switch(&c->overlap_grad_reduce, f->overlap_grad_reduce, -1,
			       "--overlap-grad-reduce", where, e)) ||
	    (st = merge_switch(&c->overlap_param_gather, f->overlap_param_gather, -1,
			       "--overlap-param-gather", where, e)) ||
	    (st = merge_switch(&c->moe_dispatcher, f->moe_dispatcher, -1, "--moe-dispatcher",
			       where, e)) ||
	    (st = merge_switch(&c->moe_a2a_overlap, f->moe_a2a_overlap, -1, "--moe-a2a-overlap",
			       where, e)) ||
	    (st = merge_switch(&c->moe_shared_overlap, f->moe_shared_overlap, -1,
			       "--moe-shared-expert-overlap", where, e)) ||
	    (st = merge_switch(&c->precision_aware_opt, f->precision_aware_opt, -1,
			       "--precision-aware-optimizer", where, e)))
		return st;
	return PPLAN_OK;
}

/* The framework --framework names must be the one the format is for. */
static enum pplan_status merge_framework(struct job *in, const struct launch_job *lj,
					 const char *where, struct perr *e)
{
	size_t n;
	if (!lj->framework[0])
		return PPLAN_OK;
	if (!in->framework_arg) {
		in->framework_arg = lj->framework;
		return PPLAN_OK;
	}
	n = strcspn(in->framework_arg, ":@ ");
	if (strlen(lj->framework) != n || strncmp(in->framework_arg, lj->framework, n) != 0)
		return perr_set(e, PPLAN_EINPUT,
				"--framework %s conflicts with %s, %s's launch configuration",
				in->framework_arg, where, lj->framework);
	return PPLAN_OK;
}

static enum pplan_status merge_size(struct job *in, const struct launch_job *lj,
				    const char *where, struct perr *e)
{
	long world = lj->nodes && lj->gpus_per_node ? lj->nodes * lj->gpus_per_node : lj->gpus;
	if (!world)
		return PPLAN_OK;
	if (in->gpus || in->nodes) {
		long asked = in->gpus ? in->gpus
				      : in->nodes * (in->gpus_per_node ? in->gpus_per_node
								       : lj->gpus_per_node);
		if (asked && asked != world)
			return perr_set(e, PPLAN_EINPUT,
					"--gpus/--nodes (%ld GPUs) conflict with the %ld processes %s launches: give the size once",
					asked, world, where);
		return PPLAN_OK;
	}
	if (lj->nodes && lj->gpus_per_node) {
		in->nodes = lj->nodes;
		in->gpus_per_node = lj->gpus_per_node;
	} else {
		in->gpus = lj->gpus;
	}
	return PPLAN_OK;
}

enum pplan_status cli_from_job(struct job *in, const char *where, struct launch_job *lj,
			       struct perr *e)
{
	enum pplan_status st;
	char v[32];

	in->from_where = where;
	in->model_given = &lj->model;
	in->model_given_note = lj->model_note;
	/* the split the file's layout string gives, its MTP layers in the model */
	in->pp_layout = lj->pp_layout[0] ? lj->pp_layout : NULL;
	in->mtp_layers = lj->mtp_layers;
	in->model_arg = NULL;
	if (lj->seq) {
		if (in->seq && in->seq != lj->seq) {
			snprintf(v, sizeof v, "%ld", lj->seq);
			return conflict(e, where, "--seq-length", "--seq", v);
		}
		in->seq = lj->seq;
	}
	if (lj->lora_rank) { /* a LoRA recipe: --peft may only say the same */
		if (in->lora_rank && in->lora_rank != lj->lora_rank) {
			snprintf(v, sizeof v, "lora:%d", lj->lora_rank);
			return conflict(e, where, "LoRA rank", "--peft", v);
		}
		in->lora_rank = lj->lora_rank;
		in->lora_where = where;
		if (lj->lora_targets) {
			if (in->lora_targets && in->lora_targets != lj->lora_targets) {
				char t[192];
				lora_targets_format(lj->lora_targets, ",", t, sizeof t);
				return conflict(e, where, "LoRA target modules", "--lora-targets", t);
			}
			in->lora_targets = lj->lora_targets;
			in->targets_where = where;
		}
	}
	if (lj->bf16_given) { /* first_last_layers_bf16: --bf16-layers may only say the same */
		if (in->bf16_given &&
		    (in->bf16_first != lj->bf16_first || in->bf16_last != lj->bf16_last)) {
			snprintf(v, sizeof v, "%d,%d", lj->bf16_first, lj->bf16_last);
			return conflict(e, where, "bf16 end layers", "--bf16-layers", v);
		}
		in->bf16_given = 1;
		in->bf16_first = lj->bf16_first;
		in->bf16_last = lj->bf16_last;
		in->bf16_where = where;
	}
	if (lj->precision[0]) {
		if (in->precision_arg && strcmp(in->precision_arg, lj->precision) != 0)
			return conflict(e, where, "precision", "--precision", lj->precision);
		in->precision_arg = lj->precision;
	}
	if (lj->order[0]) {
		if (in->order_arg && strcmp(in->order_arg, lj->order) != 0)
			return conflict(e, where, "rank order", "--rank-order", lj->order);
		in->order_arg = lj->order;
	}
	if ((st = merge_framework(in, lj, where, e)) != PPLAN_OK ||
	    (st = merge_switches(&in->switches, &lj->switches, where, e)) != PPLAN_OK ||
	    (st = merge_size(in, lj, where, e)) != PPLAN_OK)
		return st;
	if ((lj->set & LK_GBS) && (in->gbs || in->tokens_per_step))
		return perr_set(e, PPLAN_EINPUT,
				"--global-batch/--tokens-per-step conflict with the global batch %s says: give it once",
				where);
	if (!in->gpus && !in->nodes && !(lj->set & LK_DP) && !in->cluster_arg)
		return perr_set(e, PPLAN_EINPUT,
				"%s does not say how many GPUs run it: give --gpus N (or --nodes N)", where);
	return PPLAN_OK;
}

enum pplan_status cli_from_resolve(struct job *in, const char *where, struct launch_job *lj,
				   struct layout *l, struct perr *e)
{
	enum pplan_status st;
	enum reject why = REJECT_NONE;
	long gpus;

	*l = lj->l;
	/* Megatron-LM's global batch when the arguments give none: one
	 * microbatch per data-parallel replica */
	if (lj->fmt == EMIT_MEGATRON && !(lj->set & LK_GBS) && !in->gbs && !in->tokens_per_step) {
		gpus = in->gpus ? in->gpus : in->nodes * in->gpus_per_node;
		if (gpus > 0 && gpus % ((long)l->tp * l->pp * l->cp) == 0) {
			l->gbs = (long)l->mbs * (gpus / ((long)l->tp * l->pp * l->cp));
			lj->set |= LK_GBS;
			launch_job_note(lj, "no --global-batch-size: Megatron-LM's default, one microbatch of %d per data-parallel replica (%ld sequences)",
					l->mbs, l->gbs);
		}
	}
	if ((st = job_resolve_parsed(in, l, lj->set, e)) != PPLAN_OK)
		return st;
	/* the ZeRO stage the file runs; sharding over one replica is none */
	if (lj->zero >= 0) {
		l->zero = l->dp * l->cp > 1 ? lj->zero : 0;
		st = layout_check_part(l, &in->model, cluster_gpus(&in->cluster),
				       in->opts.b.partition, &why, e);
		if (st != PPLAN_OK)
			perr_prefix(e, where);
	}
	return st;
}

void cli_from_notes(FILE *f, const char *lead, const struct launch_job *lj)
{
	for (int i = 0; i < lj->n_notes; i++)
		fprintf(f, "%s%s\n", lead, lj->notes[i]);
}
