/*
 * cli_print.c: what search, predict and simulate print from the resolved
 * inputs (cli_common.h): the '#' provenance and configuration lines with
 * each value's origin, the shared usage text (lists from the tables,
 * defaults from sim/defaults.h and the framework table), the `predict
 * it:` command line, time to train, counts with decimal suffixes, and
 * JSON to a file or to stdout alone.
 */
#include "cli_common.h"
#include "emit.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "accuracy.h"
#include "defaults.h"
#include "search.h"
#include "jsonio.h"
#include "version.h"
#include "units.h"



static const char *plural(long n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

static const char *rc_short(enum recompute r)
{
	return r == RECOMPUTE_NONE ? "rc-none" : r == RECOMPUTE_SELECTIVE ? "rc-sel" : "rc-full";
}

/* The table's layout cell: degrees, then the inner choices; cp and ep
 * only when used, the expert TP degree when it is not tp (else two rows
 * of an MoE model would read alike), the stage split when not even
 * ("emb+loss": the embedding and the loss as layers; "f4/l2": Megatron's
 * first/last stage layers), the rank order only when not the default. */
void cli_short_layout(const struct layout *l, const struct rank_order *o,
			 char *buf, size_t len)
{
	struct rank_order d;
	char ord[32] = "", cpep[32] = "", split[24] = "";
	rank_order_default(&d);
	if (o && !rank_order_eq(o, &d)) {
		char s[24];
		rank_order_format(o, s, sizeof s);
		snprintf(ord, sizeof ord, " %s", s);
	}
	if (l->cp > 1 || l->ep > 1)
		snprintf(cpep, sizeof cpep, " cp%d ep%d", l->cp, l->ep);
	if (layout_etp(l) != l->tp) {
		size_t n = strlen(cpep);
		snprintf(cpep + n, sizeof cpep - n, " etp%d", layout_etp(l));
	}
	if (l->pp_table)
		snprintf(split, sizeof split, " layout");
	else if (l->pp_embed || l->pp_loss)
		snprintf(split, sizeof split, " %s%s%s", l->pp_embed ? "emb" : "",
			 l->pp_embed && l->pp_loss ? "+" : "", l->pp_loss ? "loss" : "");
	else if (l->pp_first > 0 || l->pp_last > 0)
		snprintf(split, sizeof split, " f%d/l%d", l->pp_first, l->pp_last);
	snprintf(buf, len, "tp%d pp%d dp%d%s vp%d%s mbs%d sp%s %s z%d%s %s%s", l->tp,
		 l->pp, l->dp, cpep, l->vp, split, l->mbs, l->sp ? "+" : "-",
		 rc_short(l->recompute), l->zero, l->optimizer_offload ? " opt-cpu" : "",
		 schedule_name(l->schedule), ord);
}

void cli_print_provenance(FILE *f, const char *cmd)
{
	fprintf(f, "# pplan %s %s (git %s)\n", cmd, PPLAN_VERSION, PPLAN_GIT_HASH);
}

/* Constants no measured run fitted that this job's time rests on, said
 * with the error the fitted ones carry on sources they did not see. */
static void print_unfitted(FILE *f, const struct job *in)
{
	const struct cost_params *p = in->opts.params ? in->opts.params : cost_params_default();
	char names[256];
	if (in->profile_arg ||
	    cost_params_unfitted(p, in->cluster.gpu.arch, in->opts.precision,
				 (in->model.num_experts > 1 ? UNFIT_MOE : 0) |
				 (in->model.num_experts > 1 && in->opts.b.moe_a2a_overlap ? UNFIT_EP_OVERLAP : 0) |
				 (in->opts.b.fp8_recipe == FP8_NVFP4 ? UNFIT_FP4 : 0),
				 names, sizeof names) == 0)
		return;
	fprintf(f, "# caution   no measured run fitted %s: read the times as less certain than the calibrated %.1f %% (leave-one-source-out; worst source %.1f %%)\n",
		names, CAL_LOSO_MAPE_PCT, CAL_LOSO_WORST_SOURCE_PCT);
}

void cli_print_config(FILE *f, const char *cmd, const struct job *in)
{
	const struct model_spec *m = &in->model;
	const struct cluster *c = &in->cluster;
	char tok[32], par[32], act[32], dom[48] = "";

	cli_print_provenance(f, cmd);
	units_format_count(par, sizeof par, model_params_total(m));
	units_format_count(act, sizeof act, model_params_active(m));
	fprintf(f, "# model     %s%s%s%s: %s parameters (%s active), %d layers, hidden %ld, ffn %ld, %d heads (%d kv), vocab %ld, %s, %s\n",
		m->name, in->model_note[0] ? " (" : "", in->model_note,
		in->model_note[0] ? ")" : "", par, act, m->layers, m->hidden,
		m->ffn, m->heads, m->kv_heads, m->vocab, mlp_kind_name(m->mlp),
		m->no_dropout ? "no dropout" : "dropout masks kept");
	if (in->pp_layout_arg)
		fprintf(f, "# pipeline  --pipeline-layout '%s'%s%s\n", in->pp_layout_arg,
			in->pp_layout_note[0] ? ": " : "", in->pp_layout_note);
	if (m->num_experts > 1) {
		fprintf(f, "# experts   %d, top-%d", m->num_experts, m->top_k);
		if (m->moe_ffn > 0)
			fprintf(f, ", ffn %ld each", m->moe_ffn);
		if (m->shared_experts > 0)
			fprintf(f, ", %d shared (ffn %ld)", m->shared_experts, model_shared_ffn(m));
		if (model_moe_layers(m) < m->layers)
			fprintf(f, ", %d of %d layers MoE", model_moe_layers(m), m->layers);
		if (m->route_groups > 1)
			fprintf(f, ", a token's experts in %d of %d groups", m->route_topk_groups,
				m->route_groups);
		fputc('\n', f);
	}
	if (model_is_hybrid(m)) {
		int n = (int)strlen(m->mixers), cnt[5] = { 0 };
		for (int i = 0; i < n; i++) {
			cnt[0] += m->mixers[i] == 'A';
			cnt[1] += m->mixers[i] == 'M';
			cnt[2] += m->mixers[i] == 'G';
			cnt[3] += m->ffns[i] == 'D';
			cnt[4] += m->ffns[i] == 'E';
		}
		fprintf(f, "# hybrid    mixers: %d attention", cnt[0]);
		if (cnt[1])
			fprintf(f, ", %d Mamba-2 (%ld heads of %ld, state %ld)", cnt[1],
				m->mamba_heads, m->mamba_head_dim, m->mamba_state);
		if (cnt[2])
			fprintf(f, ", %d Gated DeltaNet (%ld key and %ld value heads of %ld and %ld)",
				cnt[2], m->gdn_k_heads, m->gdn_v_heads, m->gdn_k_dim, m->gdn_v_dim);
		if (n - cnt[0] - cnt[1] - cnt[2])
			fprintf(f, ", %d layers without", n - cnt[0] - cnt[1] - cnt[2]);
		fprintf(f, "; FFNs: %d MLP, %d MoE", cnt[3], cnt[4]);
		if (n - cnt[3] - cnt[4])
			fprintf(f, ", %d layers without", n - cnt[3] - cnt[4]);
		fprintf(f, "; the scans priced at the attention kernels' rate, fitted on no hybrid run (sim/MODEL.md 4.6)\n");
	}
	if (model_is_mla(m))
		fprintf(f, "# attention multi-head latent: q rank %ld, kv rank %ld, head %ld + %ld rope, v %ld\n",
			m->q_lora_rank, m->kv_lora_rank, m->qk_nope_dim, m->qk_rope_dim, m->v_head_dim);
	if (m->window_layers > 0)
		fprintf(f, "# attention sliding window of %ld tokens on %d of %d layers: %.0f %% of full causal attention's work at %ld tokens (a fused kernel skips the rest, an unfused one computes the whole square)\n",
			m->sliding_window, m->window_layers, m->layers,
			100 * cost_window_share(m, (double)in->opts.seq), in->opts.seq);
	if (m->note[0])
		fprintf(f, "# note      %s\n", m->note);
	if (c->nvlink_domain > c->gpus_per_node)
		snprintf(dom, sizeof dom, c->nvlink_domain >= cluster_gpus(c) ? " in one NVLink domain" : " in NVLink domains of %d GPUs", c->nvlink_domain);
	fprintf(f, "# cluster   %s: %ld x %s (%d %s of %d%s%s), NVLink %.0f GB/s%s, network %.1f GB/s per GPU (%s)\n",
		c->name, cluster_gpus(c), c->gpu.name, c->num_nodes,
		plural(c->num_nodes, "node", "nodes"), c->gpus_per_node,
		in->cluster_note[0] ? ": " : "", in->cluster_note,
		c->nvlink.bw_gbps, dom, c->net.bw_gbps, c->source);
	units_format_count(tok, sizeof tok, (double)in->global_batch * in->opts.seq);
	fprintf(f, "# training  seq %ld tokens (%s), global batch %ld %s = %s tokens (%s), %s (%s)",
		in->opts.seq, in->seq_note, in->global_batch,
		plural(in->global_batch, "sequence", "sequences"), tok, in->gbs_note,
		precision_recipe_name(in->opts.precision, in->switches.fp8_recipe), in->precision_note);
	if (in->opts.bf16_first > 0 && in->opts.bf16_last > 0)
		fprintf(f, ", the first %d and the last %d layers in bf16", in->opts.bf16_first,
			in->opts.bf16_last);
	else if (in->opts.bf16_first > 0 || in->opts.bf16_last > 0)
		fprintf(f, ", the %s %d layers in bf16", in->opts.bf16_first > 0 ? "first" : "last",
			in->opts.bf16_first + in->opts.bf16_last);
	if (in->opts.bf16_first > 0 || in->opts.bf16_last > 0)
		fprintf(f, " (%s)", in->bf16_where ? in->bf16_where : "--bf16-layers");
	fputc('\n', f);
	if (in->opts.lora_rank > 0) {
		char fro[32], tr[32], names[192];
		unsigned t = in->opts.lora_targets; /* those the model has (job_resolve) */
		units_format_count(fro, sizeof fro, model_params_total(&in->model));
		units_format_count(tr, sizeof tr, model_lora_params(&in->model, in->opts.lora_rank, t));
		fprintf(f, "# peft      LoRA rank %d (%s) beside %s (%s): %s adapter parameters train, the model's %s are frozen (no weight gradients, master copy or optimizer states); priced on no measured LoRA run (sim/MODEL.md 4.7)\n",
			in->opts.lora_rank, in->lora_where ? in->lora_where : "--peft",
			lora_targets_format(t, ", ", names, sizeof names),
			in->lora_targets ? (in->targets_where ? in->targets_where : "--lora-targets")
					 : "LoRA's default", tr, fro);
	}
	fprintf(f, "# memory    cap %.1f GiB per GPU (%s)\n", in->opts.max_memory_gib,
		in->mem_note);
	{
		char what[320];
		framework_describe(&in->opts.b, what, sizeof what);
		fprintf(f, "# framework %s%s: %s%s\n", in->opts.fw->label,
			in->framework_arg ? "" : " (default)", what, in->attention_note);
	}
	fprintf(f, "# constants %s\n", in->profile_arg ? in->profile_arg
						      : "embedded (the fit on validation/calibration.json)");
	cli_print_trust(f, in);
	cli_print_goodput(f, in);
}

void cli_print_trust(FILE *f, const struct job *in)
{
	print_unfitted(f, in);
	cli_print_accuracy(f, in);
}

/* Did the calibration runs use this framework's family? */
static int calibrated_framework(const struct framework *fw)
{
	return !strncmp(fw->name, "megatron", 8) || !strncmp(fw->name, "nemo", 4);
}

void cli_print_accuracy(FILE *f, const struct job *in)
{
	struct accuracy a;
	accuracy_for(in->cluster.gpu.arch, in->opts.precision, &a);
	if (a.n == 0)
		return;
	fprintf(f, "# accuracy  step time off by %+.1f..%+.1f %% in 80 %% of %d %s %s runs left out of the fit (leave-one-source-out)",
		a.lo_pct, a.hi_pct, a.n, gpu_arch_name(a.arch), a.fp8 ? "fp8" : "bf16/fp16");
	if (a.nearest)
		fprintf(f, ", the nearest to %s %s, which has none: read it as the least of its error",
			gpu_arch_name(in->cluster.gpu.arch), precision_name(in->opts.precision));
	if (!calibrated_framework(in->opts.fw))
		fprintf(f, "; no calibration run used %s", in->opts.fw->label);
	if (in->profile_arg)
		fprintf(f, "; measured with the embedded constants, not --profile");
	fprintf(f, "; memory %+.1f..%+.1f %% (%d measured peaks); ", a.mem_lo_pct, a.mem_hi_pct, a.mem_n);
	if (a.published_mfu > 0)
		fprintf(f, "best published MFU %.1f %% (%s): an MFU above it is marked !\n",
			100 * a.published_mfu, a.published_run);
	else
		fprintf(f, "no published MFU on %s %s to check against\n",
			gpu_arch_name(in->cluster.gpu.arch), precision_name(in->opts.precision));
}

void cli_mfu_cell(char *buf, size_t len, const struct job *in, double mfu)
{
	struct accuracy a;
	accuracy_for(in->cluster.gpu.arch, in->opts.precision, &a);
	snprintf(buf, len, "%.1f%s", 100 * mfu, accuracy_above_published(&a, mfu) ? "!" : "");
}

void cli_common_usage(FILE *f)
{
	const char *const *presets = cluster_preset_names();
	char list[512] = "";

	fprintf(f,
		"  --model NAME|FILE      zoo model, pplan.model/1 JSON or HF config.json\n"
		"  --params N             or: the dense zoo model nearest N parameters, within %.0f %% (70B, 405B)\n"
		"  --gpus N               number of GPUs: whole nodes, or fewer than one node\n"
		"  --nodes N              or: number of nodes\n"
		"  --gpus-per-node G      GPUs used per node (default: all of the node's)\n",
		100 * (PARAMS_MAX_RATIO - 1));
	for (int i = 0; presets[i]; i++)
		snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s%s",
			 i ? ", " : "", presets[i], i == 1 ? " (default)" : "");
	fprintf(f, "  --cluster NAME|FILE    %s, or a pplan.cluster/1 file\n", list);
	gpu_list_names(list, sizeof list, " ");
	fprintf(f, "  --gpu TYPE             %s (on its node preset)\n", list);
	fprintf(f,
		"  --seq N                tokens per sequence (default: the model's)\n"
		"  --global-batch N       sequences per step (default: the model's published batch, else\n"
		"                         %ld tokens per GPU and at least %.2f M tokens, in sequences the GPUs divide)\n"
		"  --tokens-per-step N    or: tokens per step (4M decimal, 4Mi binary; rounded to whole sequences)\n"
		"  --precision P          bf16 (default), fp16, fp8 (the framework's recipe), fp8-delayed, fp8-cs,\n"
		"                         fp8-blockwise, mxfp8, nvfp4 (fp4 GEMMs; mxfp8 and nvfp4 on Blackwell)\n"
		"  --max-memory-gib X     usable memory per GPU (default: %.0f %% of the GPU's)\n"
		"  --rank-order ORDER     rank placement, innermost first (default tp-cp-dp-pp)\n"
		"  --train-tokens N       tokens to train on: print days and GPU-hours (e.g. 15T)\n"
		"  --gpu-hour-cost USD    price per GPU-hour: the cost of training (with --train-tokens)\n"
		"  --goodput F            share of wall-clock time that trains (default: derived from\n"
		"                         the next four, sim/MODEL.md \"Goodput\")\n"
		"  --gpu-mtbi-hours H     GPU-hours between interruptions per GPU (default %.0f: Llama 3's\n"
		"                         466 in 54 days on 16,384 GPUs)\n"
		"  --restart-min M        minutes to restart after one (default %.0f)\n"
		"  --checkpoint-interval-min M  minutes of training between checkpoints (default: Daly's optimum)\n"
		"  --storage-gbs G        checkpoint write bandwidth, GB/s (default %.3f per GPU: Llama 3's 2 TB/s)\n"
		"  --json FILE            write the JSON report ('-': stdout, and nothing else there)\n",
		DEFAULT_TOKENS_PER_GPU, DEFAULT_MIN_BATCH_TOKENS / 1e6,
		100 * DEFAULT_MEMORY_FRACTION, GOODPUT_GPU_MTBI_HOURS, GOODPUT_RESTART_S / 60,
		GOODPUT_STORAGE_BPS_PER_GPU / 1e9);
	framework_names(list, sizeof list);
	fprintf(f,
		"  --framework NAME[:V]   the training software (default %s); known: %s\n"
		"  --tp-comm-overlap on|off|bulk|pipelined   TP communication overlap, any precision\n"
		"                         (default: the framework's)\n"
		"  --no-flash-attention   unfused attention (the s x s scores in memory)\n"
		"  --moe-dispatcher alltoall|allgather|flex   MoE token dispatch: the all-to-all (default), the\n"
		"                         allgather over the TP x EP group (Megatron-LM's argparse default), or the\n"
		"                         flex dispatcher (DeepEP, HybridEP: a token once per remote node)\n"
		"  --moe-a2a-overlap on|off   MoE all-to-alls under the other microbatch's compute\n"
		"                         (Megatron-Core's 1F1B A2A overlap; default off)\n"
		"  --moe-shared-expert-overlap on|off   shared experts under the dispatch (default off)\n"
		"  --precision-aware-optimizer on|off   Adam's moments in bf16, the master as its 16-bit\n"
		"                         remainder (Megatron-Core, zero >= 1; default off)\n"
		"  --grad-reduce-dtype fp32|bf16|fp16        gradient dtype, reduced and stored (default: the framework's)\n"
		"  --overlap-grad-reduce on|off   DP reduction during the backward (default: the framework's)\n"
		"  --overlap-param-gather on|off  ZeRO parameter gather during the forward (default: the framework's)\n"
		"  --profile FILE         the cost model's constants from a pplan.profile/1 file (default: embedded)\n"
		"  --peft none|lora[:R]   LoRA fine-tuning: rank-R adapters (default %d) beside the targeted linears\n"
		"                         train, the model's weights are frozen (default none: every weight trains)\n"
		"  --lora-targets LIST    the linears LoRA adapts, by Megatron-Core's names, comma-separated:\n"
		"                         linear_qkv, linear_proj, linear_fc1, linear_fc2, MLA's linear_q_down_proj,\n"
		"                         linear_q_up_proj, linear_kv_down_proj, linear_kv_up_proj, the mixers'\n"
		"                         in_proj, out_proj; or all (default LoRA's: the first four)\n"
		"  --bf16-layers F,L      an fp8, mxfp8 or nvfp4 run's first F and last L transformer layers in bf16\n"
		"                         (Megatron-Core's first_last_layers_bf16; N: N of each; default 0,0)\n",
		framework_default()->label, list, LORA_DEFAULT_RANK);
}

/* Appends " --opt value" to buf, single-quoting the value for the shell
 * when it holds anything but safe characters. */
static void hint_arg(char *buf, size_t len, const char *opt, const char *v)
{
	int safe = v[0] != '\0';
	size_t n = strlen(buf);
	for (const char *p = v; *p; p++)
		if (!isalnum((unsigned char)*p) && !strchr("-_./=,:+@%", *p))
			safe = 0;
	if (safe) {
		snprintf(buf + n, len - n, " %s %s", opt, v);
		return;
	}
	snprintf(buf + n, len - n, " %s '", opt);
	for (const char *p = v; *p; p++) {
		n = strlen(buf);
		if (*p == '\'')
			snprintf(buf + n, len - n, "'\\''");
		else
			snprintf(buf + n, len - n, "%c", *p);
	}
	n = strlen(buf);
	snprintf(buf + n, len - n, "'");
}

/* CPU ranks (a CPU profile's) are run by pplan exec itself, not by a
 * framework: its command line, with the predict line's model, profile
 * and layout. */
static void exec_launch(FILE *f, const struct job *in, const struct emit_input *ei)
{
	char buf[2048], v[256];
	snprintf(buf, sizeof buf, "mpirun -np %ld pplan exec", layout_gpus(ei->l));
	hint_arg(buf, sizeof buf, "--model", in->model_arg ? in->model_arg : in->model.name);
	layout_format(ei->l, v, sizeof v);
	hint_arg(buf, sizeof buf, "--layout", v);
	hint_arg(buf, sizeof buf, "--backend", "cpu");
	if (in->profile_arg)
		hint_arg(buf, sizeof buf, "--profile", in->profile_arg);
	fprintf(f, "pplan exec runs it on these CPU ranks:\n  %s\n", buf);
}

void cli_launch_config(FILE *f, const struct job *in, const struct emit_input *ei)
{
	enum emit_format fmt = emit_format_for(ei->o->fw);
	if (in->cpu_ranks) {
		exec_launch(f, in, ei);
		return;
	}
	if (in->opts.lora_rank > 0 && emit_peft_unsupported(fmt)) {
		fprintf(f, "launch configuration: none for a LoRA job in %s (%s); --emit nemo or --emit bridge on the predict line above writes a LoRA fine-tuning recipe\n",
			ei->o->fw->label, emit_peft_unsupported(fmt));
		return;
	}
	if (in->opts.lora_rank > 0) { /* no Megatron-LM flags: they would train every weight */
		fprintf(f, "%s LoRA fine-tuning recipe: add --emit %s to the predict line above\n",
			ei->o->fw->label, emit_format_name(fmt));
		return;
	}
	if (fmt == EMIT_NEMO || fmt == EMIT_BRIDGE) /* a recipe override first */
		fprintf(f, "%s recipe override: add --emit %s to the predict line above; the Megatron-Core settings it makes, as Megatron-LM flags:\n",
			ei->o->fw->label, emit_format_name(fmt));
	if (fmt == EMIT_MEGATRON || fmt == EMIT_NEMO || fmt == EMIT_BRIDGE) {
		if (fmt == EMIT_MEGATRON)
			fprintf(f, "Megatron-LM flags:\n");
		emit_megatron_flags(f, ei, "  ");
		return;
	}
	fprintf(f, "%s launch configuration: add --emit %s to the predict line above\n",
		ei->o->fw->label, emit_format_name(fmt));
}

void cli_predict_hint(FILE *f, const struct job *in,
		      const struct layout *l, const struct rank_order *order,
		      int closed_form)
{
	char buf[2048] = "pplan predict", v[256];
	const struct cluster *c = &in->cluster;
	struct rank_order def;

	hint_arg(buf, sizeof buf, "--model", in->model_arg ? in->model_arg : in->model.name);
	if (in->cluster_arg)
		hint_arg(buf, sizeof buf, "--cluster", in->cluster_arg);
	if (in->gpu_arg)
		hint_arg(buf, sizeof buf, "--gpu", in->gpu_arg);
	if (in->cluster_note[0]) { /* part of each node */
		snprintf(v, sizeof v, "%d", c->num_nodes);
		hint_arg(buf, sizeof buf, "--nodes", v);
		snprintf(v, sizeof v, "%d", c->gpus_per_node);
		hint_arg(buf, sizeof buf, "--gpus-per-node", v);
	} else {
		snprintf(v, sizeof v, "%ld", cluster_gpus(c));
		hint_arg(buf, sizeof buf, "--gpus", v);
	}
	if (in->seq) {
		snprintf(v, sizeof v, "%ld", in->seq);
		hint_arg(buf, sizeof buf, "--seq", v);
	}
	if (in->precision_arg)
		hint_arg(buf, sizeof buf, "--precision",
			 precision_recipe_name(in->opts.precision, in->switches.fp8_recipe));
	if (in->max_memory_gib > 0) {
		snprintf(v, sizeof v, "%g", in->max_memory_gib);
		hint_arg(buf, sizeof buf, "--max-memory-gib", v);
	}
	if (in->lora_rank > 0) {
		snprintf(v, sizeof v, "lora:%d", in->lora_rank);
		hint_arg(buf, sizeof buf, "--peft", v);
		if (in->lora_targets && in->lora_targets != LORA_TARGETS_DEFAULT) {
			char t[192];
			hint_arg(buf, sizeof buf, "--lora-targets",
				 lora_targets_format(in->lora_targets, ",", t, sizeof t));
		}
	}
	if (in->opts.bf16_first > 0 || in->opts.bf16_last > 0) {
		snprintf(v, sizeof v, "%d,%d", in->opts.bf16_first, in->opts.bf16_last);
		hint_arg(buf, sizeof buf, "--bf16-layers", v);
	}
	if (in->framework_arg)
		hint_arg(buf, sizeof buf, "--framework", in->framework_arg);
	if (in->profile_arg)
		hint_arg(buf, sizeof buf, "--profile", in->profile_arg);
	if (in->tp_overlap_arg)
		hint_arg(buf, sizeof buf, "--tp-comm-overlap", in->tp_overlap_arg);
	if (in->pp_layout_arg)
		hint_arg(buf, sizeof buf, "--pipeline-layout", in->pp_layout_arg);
	else if (l->pp_table) /* a split the search built */
		hint_arg(buf, sizeof buf, "--pipeline-layout", l->pp_table->text);
	if (in->switches.flash == 0)
		snprintf(buf + strlen(buf), sizeof buf - strlen(buf), " --no-flash-attention");
	if (in->switches.moe_dispatcher >= 0)
		hint_arg(buf, sizeof buf, "--moe-dispatcher",
			 fw_moe_dispatcher_name(in->switches.moe_dispatcher));
	if (in->switches.moe_a2a_overlap >= 0)
		hint_arg(buf, sizeof buf, "--moe-a2a-overlap", in->switches.moe_a2a_overlap ? "on" : "off");
	if (in->switches.moe_shared_overlap >= 0)
		hint_arg(buf, sizeof buf, "--moe-shared-expert-overlap",
			 in->switches.moe_shared_overlap ? "on" : "off");
	if (in->switches.precision_aware_opt >= 0)
		hint_arg(buf, sizeof buf, "--precision-aware-optimizer",
			 in->switches.precision_aware_opt ? "on" : "off");
	if (in->switches.grad_bytes)
		hint_arg(buf, sizeof buf, "--grad-reduce-dtype",
			 in->switches.grad_bytes == 4 ? "fp32"
			 : in->opts.precision == PREC_FP16 ? "fp16" : "bf16");
	if (in->switches.overlap_grad_reduce >= 0)
		hint_arg(buf, sizeof buf, "--overlap-grad-reduce",
			 in->switches.overlap_grad_reduce ? "on" : "off");
	if (in->switches.overlap_param_gather >= 0)
		hint_arg(buf, sizeof buf, "--overlap-param-gather",
			 in->switches.overlap_param_gather ? "on" : "off");
	rank_order_default(&def);
	if (in->order_arg || !rank_order_eq(order, &def)) {
		rank_order_format(order, v, sizeof v);
		hint_arg(buf, sizeof buf, "--rank-order", v);
	}
	if (closed_form)
		snprintf(buf + strlen(buf), sizeof buf - strlen(buf), " --closed-form");
	layout_format(l, v, sizeof v);
	hint_arg(buf, sizeof buf, "--layout", v);
	fprintf(f, "%s\n", buf);
}

void cli_train_time(char *buf, size_t len, const struct job *in,
		    const struct prediction *p)
{
	struct job_train_time t = job_train_time(in, p);
	char h[32], c[32];
	units_format_count(h, sizeof h, t.gpu_hours);
	snprintf(buf, len, "%.1f days, %s GPU-hours", t.seconds / 86400.0, h);
	if (t.cost > 0) {
		units_format_count(c, sizeof c, t.cost);
		snprintf(buf + strlen(buf), len - strlen(buf), ", $%s", c);
	}
}

static void format_bytes(char *buf, size_t len, double b)
{
	if (b >= 1e12)
		snprintf(buf, len, "%.2f TB", b / 1e12);
	else
		snprintf(buf, len, "%.1f GB", b / 1e9);
}

static void format_minutes(char *buf, size_t len, double s)
{
	if (s >= 5400)
		snprintf(buf, len, "%.1f h", s / 3600);
	else if (s >= 90)
		snprintf(buf, len, "%.0f min", s / 60);
	else
		snprintf(buf, len, "%.1f s", s);
}

int cli_parse_rank_tolerance(const char *cmd, const char *arg, double *out)
{
	char *end;
	double v;
	errno = 0;
	v = strtod(arg, &end);
	if (errno || end == arg || *end || !(v >= 0) || v > 100) {
		fprintf(stderr, "pplan %s: --rank-tolerance must be a percentage of the fastest step time from 0 to 100, got '%s'\n",
			cmd, arg);
		return -1;
	}
	*out = v / 100;
	return 0;
}

void cli_print_ranking(FILE *f, const struct job *in, double tolerance,
		       const struct search_result *r)
{
	double cap = in->opts.max_memory_gib > 0 ? in->opts.max_memory_gib
						 : in->cluster.gpu.mem_gib;
	if (!(tolerance > 0)) {
		fprintf(f, "# ranking   by predicted step time (--rank-tolerance 0)\n");
		return;
	}
	fprintf(f, "# ranking   within %.3g %% of the fastest step: by memory headroom (steps of %.1f GiB, %.0f %% of the cap), then fewer parallel dimensions, TP in a node, no virtual stages; the rest by step time (--rank-tolerance)",
		100 * tolerance, SEARCH_HEADROOM_STEP * cap, 100 * SEARCH_HEADROOM_STEP);
	if (r->n_top > 0 && r->fastest > 0)
		fprintf(f, "; the fastest is rank %d, %.3f s", r->fastest + 1,
			r->top_preds[r->fastest].step_time_s);
	fprintf(f, "\n");
}

void cli_print_goodput(FILE *f, const struct job *in)
{
	const struct goodput *g = &in->goodput;
	char every[32], restart[32], save[32], interval[32], bytes[32];

	if (!(in->train_tokens > 0))
		return;
	if (g->fixed) {
		fprintf(f, "# goodput   %.1f %% of wall-clock time trains (--goodput)\n",
			100 * g->fraction);
	} else {
		format_minutes(every, sizeof every, g->mtbi_s);
		format_minutes(restart, sizeof restart, g->restart_s);
		format_minutes(save, sizeof save, g->save_s);
		format_minutes(interval, sizeof interval, g->interval_s);
		format_bytes(bytes, sizeof bytes, g->ckpt_bytes);
		fprintf(f, "# goodput   %.1f %% of wall-clock time trains: interrupted every %s (%s), %s to restart%s; a %s checkpoint saved in %s every %s of training (%s): %.1f %% lost to failures, %.1f %% to checkpoints\n",
			100 * g->fraction, every,
			in->goodput_opts.gpu_mtbi_hours > 0 ? "--gpu-mtbi-hours"
							    : "Llama 3's interruption rate",
			restart, in->goodput_opts.restart_s > 0 ? "" : " (assumed)", bytes, save,
			interval, g->interval_derived ? "Daly's optimum" : "--checkpoint-interval-min",
			100 * g->lost_failures, 100 * g->lost_checkpoint);
	}
	if (in->goodput_opts.gpu_hour_cost > 0)
		fprintf(f, "# price     $%.2f per GPU-hour of wall-clock time (--gpu-hour-cost)\n",
			in->goodput_opts.gpu_hour_cost);
}

enum pplan_status cli_write_json(const char *path, struct cJSON *doc,
				 struct perr *e)
{
	if (strcmp(path, "-") == 0) {
		char *s = cJSON_Print(doc);
		if (!s)
			return perr_set(e, PPLAN_ENOMEM, "out of memory for the JSON report");
		fputs(s, stdout);
		fputc('\n', stdout);
		free(s);
		return fflush(stdout) == 0 ? PPLAN_OK
					   : perr_set(e, PPLAN_ESYSTEM, "stdout: write failed");
	}
	return json_write_atomic(path, doc, e);
}

FILE *cli_text_stream(const struct job *in)
{
	if (in->json_path && strcmp(in->json_path, "-") == 0) {
		FILE *sink = fopen("/dev/null", "w");
		return sink ? sink : stderr;
	}
	return stdout;
}

void cli_text_close(FILE *f)
{
	if (f && f != stdout && f != stderr)
		fclose(f);
}
