/*
 * cases.c: reading pplan.cases/1 (validation/README.md).  Each case's
 * `framework` (name, version, year) picks a row of the frameworks table;
 * that row fills the null layout fields (SP, ZeRO, recomputation) and
 * decides the behaviour the cost model prices (attention kernel, overlap,
 * gradient dtype, pipeline engine).  Nothing here reads the `source` text
 * for behaviour: it only names the publication that cross-validation
 * leaves out.  Missing architecture fields come from the zoo model of the
 * same MLP kind nearest in size; missing fabrics from the GPU's usual
 * node preset.  A case that cannot be modelled keeps its reason.
 */
#include "cases.h"
#include "cases_internal.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "defaults.h"
#include "job.h"
#include "jsonio.h"
#include "memory.h"
#include "predict.h"
#include "search.h"
#include "suggest.h"

void vcase_note(struct vcase *vc, const char *fmt, ...)
{
	char buf[320];
	size_t len = strlen(vc->assumed);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	snprintf(vc->assumed + len, sizeof vc->assumed - len, "%s%s",
		 len ? "; " : "", buf);
}

void vcase_skip(struct vcase *vc, const char *fmt, ...)
{
	va_list ap;
	if (!vc->predictable)
		return; /* the first reason stands */
	vc->predictable = 0;
	va_start(ap, fmt);
	vsnprintf(vc->skip_reason, sizeof vc->skip_reason, fmt, ap);
	va_end(ap);
}

/* The publication: the source text before " -- " (the table after it is
 * part of the same publication); the label: its first words, up to a
 * comma, colon or parenthesis. */
static void publication_of(struct vcase *vc, const char *text)
{
	size_t n = 0, k = 0;
	while (text[n] && !(text[n] == ' ' && text[n + 1] == '-' &&
			    text[n + 2] == '-' && text[n + 3] == ' '))
		n++;
	snprintf(vc->publication, sizeof vc->publication, "%.*s", (int)n, text);
	while (k < n && !strchr(",:(", text[k]))
		k++;
	while (k > 0 && text[k - 1] == ' ')
		k--;
	if (k == 0)
		snprintf(vc->label, sizeof vc->label, "(no source)");
	else if (k < sizeof vc->label)
		snprintf(vc->label, sizeof vc->label, "%.*s", (int)k, text);
	else
		snprintf(vc->label, sizeof vc->label, "%.*s...",
			 (int)(sizeof vc->label - 4), text);
}

/* A number a table's cell gives as text: "n/a", "-", "none" or "" is
 * no value (0); a whole decimal string ("2", " 8 ") its number (1);
 * anything else -1, for the reader's own sentence. */
static int table_cell(const cJSON *o, const char *key, double *x)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);
	const char *t;
	char *end;
	if (!cJSON_IsString(it) || !it->valuestring)
		return -1;
	t = it->valuestring;
	while (*t == ' ')
		t++;
	if (!*t || !strcasecmp(t, "n/a") || !strcasecmp(t, "na") || !strcmp(t, "-") ||
	    !strcasecmp(t, "none") || !strcasecmp(t, "null"))
		return 0;
	*x = strtod(t, &end);
	while (*end == ' ')
		end++;
	return end != t && !*end && isfinite(*x) ? 1 : -1;
}

int vcase_opt_long(const cJSON *o, const char *key, long min, long max,
		    long *v, const char *where, enum pplan_status *st,
		    struct perr *e)
{
	enum pplan_status s;
	double x;
	int cell;
	if (*st != PPLAN_OK)
		return 0;
	if ((cell = table_cell(o, key, &x)) == 0)
		return 0;
	if (cell == 1 && x == floor(x) && x >= (double)min && x <= (double)max) {
		*v = (long)x;
		return 1;
	}
	s = json_get_long_in(o, key, min, max, v, where, e);
	if (s == PPLAN_EINPUT)
		*st = s;
	return s == PPLAN_OK;
}

int vcase_opt_positive(const cJSON *o, const char *key, double max, const char *unit,
			double *v, const char *where, enum pplan_status *st,
			struct perr *e)
{
	enum pplan_status s;
	double x;
	int cell;
	if (*st != PPLAN_OK)
		return 0;
	if ((cell = table_cell(o, key, &x)) == 0)
		return 0;
	if (cell == 1 && x > 0 && x <= max) {
		*v = x;
		return 1;
	}
	s = json_get_number_in(o, key, 0, max, unit, v, where, e);
	if (s == PPLAN_EINPUT)
		*st = s;
	return s == PPLAN_OK;
}

/* ZeRO as tables name it: "ddp" 0, "zero-1" or a distributed optimizer
 * 1, "zero2" 2, "fsdp" or "zero3" 3; -1 for anything else. */
static int zero_named(const char *s)
{
	char k[32];
	if (!name_squeeze(s, NULL, k, sizeof k))
		return -1;
	if (!strcmp(k, "ddp") || !strcmp(k, "zero0") || !strcmp(k, "none"))
		return 0;
	if (!strcmp(k, "zero1") || !strcmp(k, "distributedoptimizer") || !strcmp(k, "distopt"))
		return 1;
	if (!strcmp(k, "zero2"))
		return 2;
	if (!strcmp(k, "zero3") || !strcmp(k, "fsdp") || !strcmp(k, "fsdp2") ||
	    !strcmp(k, "megatronfsdp"))
		return 3;
	return -1;
}

/* ---- the framework ----------------------------------------------------- */

/* The row for the case's framework object (or a "name version" string).
 * A name written loosely takes the table's ("NeMo Framework": nemo); an
 * unknown name is predicted as `other` of the same year (said); a
 * version as users write it
 * (a container, a release candidate, a patch, one newer than every row)
 * takes its row or the nearest earlier one (said); only a string that is
 * no version makes the case unpredictable. */
static enum pplan_status load_framework(const cJSON *jc, struct vcase *vc,
					const char *where, struct perr *e)
{
	const cJSON *jf = cJSON_GetObjectItemCaseSensitive(jc, "framework");
	const char *name = NULL, *version = NULL;
	long year = 0;
	struct perr fe = { "" };
	const struct framework *fw = NULL;
	char vnote[256], text[64], vnum[32];

	if (cJSON_IsString(jf) && jf->valuestring) {
		/* "megatron-bridge 25.09", "nemo:25.07": a name and a version */
		char *cut;
		snprintf(text, sizeof text, "%s", jf->valuestring);
		cut = strrchr(text, ':');
		if (!cut)
			cut = strrchr(text, ' ');
		if (cut && isdigit((unsigned char)cut[1 + (cut[1] == 'v')])) {
			*cut = '\0';
			version = cut + 1;
		}
		name = text;
	} else if (jf && !cJSON_IsNull(jf) && !cJSON_IsObject(jf)) {
		return perr_set(e, PPLAN_EINPUT, "%s: framework must be an object or a name", where);
	}
	if (cJSON_IsObject(jf)) {
		const cJSON *jv = cJSON_GetObjectItemCaseSensitive(jf, "version");
		if (cJSON_IsNumber(jv)) { /* 25.09 or 0.14 as a JSON number */
			snprintf(vnum, sizeof vnum, "%.15g", jv->valuedouble);
			version = vnum;
		} else if (json_get_string(jf, "version", &version, where, e) == PPLAN_EINPUT) {
			return PPLAN_EINPUT;
		}
		if (json_get_string(jf, "name", &name, where, e) == PPLAN_EINPUT ||
		    json_get_long(jf, "year", &year, 1900, where, e) == PPLAN_EINPUT)
			return PPLAN_EINPUT;
	}
	snprintf(vc->framework_given, sizeof vc->framework_given, "%s%s%s",
		 name ? name : "(none)", version ? " " : "", version ? version : "");
	if (!name) {
		vcase_note(vc, "framework not given: other");
		name = "other";
	} else if (!framework_known(name) && framework_canonical(name)) {
		vcase_note(vc, "framework '%s' read as %s", name, framework_canonical(name));
		name = framework_canonical(name);
	} else if (!framework_known(name)) {
		char known[512];
		framework_names(known, sizeof known);
		vcase_note(vc, "framework '%s' is not known (known: %s): predicted as other", name, known);
		name = "other";
		version = NULL;
	}
	if (framework_lookup(name, version, (int)year, &fw, vnote, sizeof vnote, &fe) != PPLAN_OK) {
		vcase_skip(vc, "%s", fe.msg);
		framework_find(name, NULL, (int)year, &fw, NULL);
	} else if (vnote[0]) {
		vcase_note(vc, "%s", vnote);
	}
	vc->opts.fw = fw;
	return PPLAN_OK;
}

/* ---- hardware ---------------------------------------------------------- */

/* The GPUs a layout's degrees multiply to (tp x pp x dp x cp, each 1
 * where not given but dp); 0 when the layout does not say. */
static long gpus_of_layout(const cJSON *jl)
{
	static const char *const keys[] = { "tp", "pp", "dp", "cp" };
	long n = 1;
	for (int i = 0; i < 4; i++) {
		const cJSON *it = cJSON_GetObjectItemCaseSensitive(jl, keys[i]);
		if (cJSON_IsNumber(it) && it->valuedouble >= 1 && it->valuedouble <= 1e6 &&
		    it->valuedouble == floor(it->valuedouble))
			n *= (long)it->valuedouble;
		else if (i == 2)
			return 0;
		if (n > CLUSTER_MAX_GPUS)
			return 0;
	}
	return n;
}

static enum pplan_status load_hardware(const cJSON *jh, const cJSON *jl, struct vcase *vc,
				       const char *where, struct perr *e)
{
	const struct gpu_spec *g;
	int approx = 0;
	const char *preset, *s = NULL;
	long gpus = 0, per_node = 8, nodes = 0;
	double gbps = 0;
	enum pplan_status st = PPLAN_OK;
	char w[300];

	if (json_get_string(jh, "gpu", &s, where, e) != PPLAN_OK || !(g = gpu_find_loose(s, &approx)))
	{
		char list[256];
		gpu_list_names(list, sizeof list, ", ");
		return perr_set(e, PPLAN_EINPUT, "%s: unknown GPU '%s' (pplan knows %s)",
				where, s ? s : "(missing)", list);
	}
	if (approx)
		vcase_note(vc, "GPU %s priced as the SXM %s (pplan has no PCIe or NVL parts)", s, g->name);
	snprintf(w, sizeof w, "%s: hardware", where);
	if (!vcase_opt_long(jh, "num_gpus", 1, CLUSTER_MAX_GPUS, &gpus, w, &st, e)) {
		if (st != PPLAN_OK)
			return st;
		gpus = 0; /* from num_nodes once the node is known, else the layout */
		if (!vcase_opt_long(jh, "num_nodes", 1, CLUSTER_MAX_GPUS, &nodes, w, &st, e)) {
			if (st != PPLAN_OK)
				return st;
			if ((gpus = gpus_of_layout(jl)) == 0)
				return perr_set(e, PPLAN_EINPUT, "%s: hardware.num_gpus is missing (and neither num_nodes nor the layout's tp x pp x dp x cp says)", where);
			vcase_note(vc, "num_gpus=%ld (tp x pp x dp x cp)", gpus);
		}
	}
	/* The usual fabric for the GPU: its preset, else its generation's
	 * node (as --gpu takes it: an A100 40GB on the DGX A100's). */
	if (cluster_for_gpu(g, &vc->cluster, e) != PPLAN_OK)
		return PPLAN_EINPUT;
	preset = vc->cluster.name;
	if (!vcase_opt_long(jh, "gpus_per_node", 1, CLUSTER_MAX_NODE_GPUS, &per_node, w, &st, e)) {
		if (st != PPLAN_OK)
			return st;
		/* the preset's node: an NVL72 tray holds 4 GPUs of a 72-GPU
		 * NVLink domain, a DGX or HGX board 8 */
		per_node = vc->cluster.gpus_per_node > 0 ? vc->cluster.gpus_per_node : 8;
		vcase_note(vc, "gpus_per_node=%ld (%s)", per_node, preset);
	}
	if (per_node != vc->cluster.gpus_per_node || vc->cluster.nvlink_domain < per_node)
		vc->cluster.nvlink_domain = (int)per_node; /* not the preset's nodes */
	if (gpus == 0) {
		if ((double)nodes * (double)per_node > (double)CLUSTER_MAX_GPUS)
			return perr_set(e, PPLAN_EINPUT, "%s: hardware: %ld nodes of %ld GPUs is more than %ld GPUs",
					where, nodes, per_node, (long)CLUSTER_MAX_GPUS);
		gpus = nodes * per_node;
		vcase_note(vc, "num_gpus=%ld (num_nodes x gpus_per_node)", gpus);
	}
	vc->cluster.gpus_per_node = (int)per_node;
	vc->cluster.num_nodes = (int)((gpus + per_node - 1) / per_node);
	if (gpus % per_node != 0) {
		vc->cluster.gpus_per_node = (int)gpus;
		vc->cluster.nvlink_domain = (int)gpus;
		vc->cluster.num_nodes = 1;
	}
	cluster_fit_domain(&vc->cluster);
	if (vcase_opt_positive(jh, "inter_node_gbps_per_gpu", 1e6, "Gb/s", &gbps, w, &st, e))
		cluster_set_net_gbps(&vc->cluster, gbps / 8.0);
	else if (st != PPLAN_OK)
		return st;
	else
		vcase_note(vc, "network %ld Gb/s per GPU (%s)",
		     (long)(vc->cluster.net.bw_gbps * 8 + 0.5), preset);
	snprintf(vc->cluster.name, sizeof vc->cluster.name, "%ld x %s", gpus, g->name);
	return PPLAN_OK;
}

/* ---- layout -------------------------------------------------------------- */

static enum pplan_status load_degrees(const cJSON *jl, struct vcase *vc,
				      const char *where, struct perr *e)
{
	struct layout *l = &vc->layout;
	enum pplan_status st = PPLAN_OK;
	const long D = LAYOUT_MAX_DEGREE;
	long v;
	int has_tp, has_pp, has_dp, has_cp, has_mbs;
	char w[300];

	snprintf(w, sizeof w, "%s: layout", where);
	layout_default(l);
	has_tp = vcase_opt_long(jl, "tp", 1, D, &v, w, &st, e); if (has_tp) l->tp = (int)v;
	has_pp = vcase_opt_long(jl, "pp", 1, D, &v, w, &st, e); if (has_pp) l->pp = (int)v;
	has_dp = vcase_opt_long(jl, "dp", 1, D, &v, w, &st, e); if (has_dp) l->dp = (int)v;
	has_cp = vcase_opt_long(jl, "cp", 1, D, &v, w, &st, e); if (has_cp) l->cp = (int)v;
	if (vcase_opt_long(jl, "ep", 1, D, &v, w, &st, e)) l->ep = (int)v;
	else if (st == PPLAN_OK && vc->model.num_experts > 1) vcase_note(vc, "ep=1");
	if (vcase_opt_long(jl, "vp", 1, D, &v, w, &st, e)) l->vp = (int)v;
	if (vcase_opt_long(jl, "etp", 1, D, &v, w, &st, e)) l->etp = (int)v;
	has_mbs = vcase_opt_long(jl, "micro_batch_size", 1, D, &v, w, &st, e);
	if (has_mbs)
		l->mbs = (int)v;
	if (vcase_opt_long(jl, "global_batch_size", 1, LAYOUT_MAX_GBS, &v, w, &st, e))
		l->gbs = v;
	if (st != PPLAN_OK)
		return st;
	if ((double)l->tp * l->pp * l->dp * l->cp > (double)CLUSTER_MAX_GPUS)
		return perr_set(e, PPLAN_EINPUT, "%s: tp*pp*dp*cp = %.0f GPUs is more than %ld",
				w, (double)l->tp * l->pp * l->dp * l->cp,
				(long)CLUSTER_MAX_GPUS);
	if (has_tp && has_pp && !has_dp) {
		/* dp is what the other degrees leave of the GPUs */
		long gpus = cluster_gpus(&vc->cluster), rest = (long)l->tp * l->pp * l->cp;
		if (gpus > 0 && gpus % rest == 0) {
			l->dp = (int)(gpus / rest);
			has_dp = 1;
			vcase_note(vc, "dp=%d (num_gpus / (tp x pp x cp))", l->dp);
		}
	}
	if (!has_tp && !has_pp && !has_dp && !has_cp)
		vc->layout_searched = 1; /* none at all: pplan's best, once the batch is known */
	else if (!has_tp || !has_pp || !has_dp)
		vcase_skip(vc, "the source gives no tp/pp/dp");
	if (!has_mbs && !vc->layout_searched)
		vcase_note(vc, "mbs=1 (%s default)", vc->opts.fw->name);
	l->schedule = l->vp > 1 ? SCHED_INTERLEAVED : SCHED_1F1B;
	return PPLAN_OK;
}

/* layout.recompute_modules (Megatron's --recompute-modules: core_attn,
 * layernorm, mlp, moe, moe_act, shared_experts, mla_up_proj) or
 * layout.offload_modules (--offload-modules: attn_norm, qkv_linear,
 * core_attn, attn_proj, mlp_norm, expert_fc1, moe_act): a list of names
 * or null, into *bits. */
static enum pplan_status load_modules(const cJSON *jl, const char *key,
				      int (*parse)(const char *, unsigned *, char *, size_t),
				      unsigned *bits, const char *where, struct perr *e)
{
	const cJSON *jm = cJSON_GetObjectItemCaseSensitive(jl, key), *it;
	*bits = 0;
	if (!jm || cJSON_IsNull(jm))
		return PPLAN_OK;
	if (!cJSON_IsArray(jm))
		return perr_set(e, PPLAN_EINPUT, "%s: layout.%s must be a list of names", where,
				key);
	cJSON_ArrayForEach(it, jm) {
		unsigned bit = 0;
		char bad[80];
		if (!cJSON_IsString(it) || parse(it->valuestring, &bit, bad, sizeof bad) != 0 || !bit)
			return perr_set(e, PPLAN_EINPUT, "%s: layout.%s: '%s' is not a module pplan knows",
					where, key,
					cJSON_IsString(it) ? it->valuestring : "(not a string)");
		*bits |= bit;
	}
	return PPLAN_OK;
}

/* The fine-tuning method a squeezed text k names: 2 LoRA (its rank in
 * *rank: "lora:16", else LoRA's default; "PEFT" alone is LoRA, NeMo's and
 * Megatron-Bridge's default scheme), 0 every weight trains (SFT, full
 * fine-tuning, pretraining), 1 a method pplan does not price (QLoRA,
 * DoRA, p-tuning, adapters), -1 none of these.  A model's name (cell 0)
 * is searched for LoRA, PEFT, SFT and the unpriced ones alone: its
 * "Instruct" is the model's, not the run's. */
static int task_words(const char *k, int cell, int *rank)
{
	static const char *const unpriced[] = { "qlora", "dora", "ptuning", "adapter", "prefixtuning", NULL };
	static const char *const full[] = { "sft", "full", "pretrain", "finetun", "instruct", "supervised", NULL };
	for (int i = 0; unpriced[i]; i++)
		if (strstr(k, unpriced[i]))
			return 1;
	const char *l = strstr(k, "lora");
	if (l) {
		*rank = LORA_DEFAULT_RANK;
		if (l[4] == ':' && train_opts_peft_parse(l, rank) != 0)
			return -1;
		return 2;
	}
	if (strstr(k, "peft")) {
		*rank = LORA_DEFAULT_RANK;
		return 2;
	}
	for (int i = 0; full[i] && (cell || i == 0); i++)
		if (strstr(k, full[i]))
			return *rank = 0, 0;
	if (cell && !strcmp(k, "none"))
		return *rank = 0, 0;
	return -1;
}

/* Fine-tuning: layout.peft as --peft takes it, or a LoRA rank as the
 * recipes name it (lora_rank, lora_dim: NeMo's and Megatron-Bridge's dim)
 * and the linears it adapts (layout.lora_target_modules, their
 * target_modules; else LoRA's default);
 * else the method where tables keep it (a case's "peft", "finetuning" or
 * "task" cell), or a LoRA, PEFT or SFT word in the model's name, said.  A
 * method pplan does not price, or a cell it cannot read, leaves the case
 * unpredicted. */
static enum pplan_status load_task(const cJSON *jc, const cJSON *jl, const cJSON *jm,
				   struct vcase *vc, const char *where, struct perr *e)
{
	static const char *const keys[] = { "peft", "finetuning", "fine_tuning", "task", NULL };
	const char *s = NULL, *key = "layout.peft";
	enum pplan_status st = PPLAN_OK;
	char w[300], k[96];
	long v;
	int r = 0, cell = 1;

	snprintf(w, sizeof w, "%s: layout", where);
	if ((st = load_modules(jl, "lora_target_modules", lora_targets_parse,
			       &vc->opts.lora_targets, where, e)) != PPLAN_OK)
		return st;
	if (vcase_opt_long(jl, "lora_rank", 1, 65536, &v, w, &st, e) ||
	    vcase_opt_long(jl, "lora_dim", 1, 65536, &v, w, &st, e)) {
		vc->opts.lora_rank = (int)v;
		return PPLAN_OK;
	}
	if (st != PPLAN_OK)
		return st;
	if (json_get_string(jl, "peft", &s, where, e) != PPLAN_OK || !s)
		for (int i = 0; keys[i] && !s; i++)
			if (json_get_string(jc, keys[i], &s, where, e) == PPLAN_OK && s)
				key = keys[i];
	if (!s && json_get_string(jm, "name", &s, where, e) == PPLAN_OK && s) {
		key = "model.name";
		cell = 0;
	}
	if (!s || !name_squeeze(s, ":", k, sizeof k))
		return PPLAN_OK;
	switch (task_words(k, cell, &r)) {
	case 2:
		vc->opts.lora_rank = r;
		if (!strstr(k, "lora:"))
			vcase_note(vc, "LoRA from %s '%s', at rank %d (LoRA's default dim)", key, s, r);
		return PPLAN_OK;
	case 0:
		vc->opts.lora_rank = 0;
		return PPLAN_OK;
	case 1:
		vcase_skip(vc, "%s '%s' is a fine-tuning method pplan does not price (it prices LoRA and full training)",
			   key, s);
		return PPLAN_OK;
	default:
		if (cell)
			vcase_skip(vc, "%s '%s' is not a method pplan reads (none, full, SFT, pretraining, LoRA, lora:RANK or PEFT)",
				   key, s);
		return PPLAN_OK;
	}
}

/* SP, recomputation, ZeRO and precision: the framework's defaults where
 * the source gives none. */
static enum pplan_status load_settings(const cJSON *jl, struct vcase *vc, const char **precision,
				       const char *where, struct perr *e)
{
	struct layout *l = &vc->layout;
	const struct framework *fw = vc->opts.fw;
	enum pplan_status st = PPLAN_OK;
	const char *s = NULL;
	unsigned given = 0;  /* LK_ keys the source gives */
	long v;
	int b;
	char w[300];

	snprintf(w, sizeof w, "%s: layout", where);
	if (json_get_bool(jl, "account_for_embedding_in_pipeline_split", &b, where, e) == PPLAN_OK)
		l->pp_embed = b;
	if (json_get_bool(jl, "account_for_loss_in_pipeline_split", &b, where, e) == PPLAN_OK)
		l->pp_loss = b;
	/* Megatron-Core's layout string: the split (check_layout) */
	if (json_get_string(jl, "pipeline_model_parallel_layout", &s, where, e) == PPLAN_OK && s) {
		if (strlen(s) >= sizeof vc->pp_layout)
			vcase_skip(vc, "layout.pipeline_model_parallel_layout is longer than the %zu characters pplan reads",
				   sizeof vc->pp_layout - 1);
		else
			snprintf(vc->pp_layout, sizeof vc->pp_layout, "%s", s);
		s = NULL;
	}
	if (json_get_bool(jl, "sequence_parallel", &b, where, e) == PPLAN_OK) {
		l->sp = b && l->tp > 1;
		given |= LK_SP;
	}
	if ((st = load_modules(jl, "recompute_modules", recompute_modules_parse,
			       &l->recompute_modules, where, e)) != PPLAN_OK ||
	    (st = load_modules(jl, "offload_modules", offload_modules_parse,
			       &l->offload_modules, where, e)) != PPLAN_OK)
		return st;
	/* Megatron-Core's MoE overlaps, as its flags name them. */
	if (json_get_bool(jl, "moe_a2a_overlap", &b, where, e) == PPLAN_OK ||
	    json_get_bool(jl, "overlap_moe_expert_parallel_comm", &b, where, e) == PPLAN_OK)
		vc->opts.switches.moe_a2a_overlap = b;
	if (json_get_bool(jl, "moe_shared_expert_overlap", &b, where, e) == PPLAN_OK)
		vc->opts.switches.moe_shared_overlap = b;
	/* the gradients' reduction dtype (Megatron's --grad-reduce-in-bf16;
	 * the mixed-precision configs' grad_reduce_in_fp32) */
	if (json_get_bool(jl, "grad_reduce_in_fp32", &b, where, e) == PPLAN_OK)
		vc->opts.switches.grad_bytes = b ? 4 : 2;
	/* Megatron-Core's precision-aware optimizer with bf16 moments */
	if (json_get_bool(jl, "use_precision_aware_optimizer", &b, where, e) == PPLAN_OK)
		vc->opts.switches.precision_aware_opt = b;
	if (json_get_string(jl, "moe_dispatcher", &s, where, e) == PPLAN_OK &&
	    (vc->opts.switches.moe_dispatcher = fw_moe_dispatcher_parse(s)) < 0) {
		return perr_set(e, PPLAN_EINPUT,
				"%s: layout.moe_dispatcher '%s' is not alltoall, allgather, flex, deepep or hybridep",
				where, s);
	}
	/* Megatron's --recompute-num-layers (the block method) and
	 * --cpu-offloading-num-layers, as the recipes name them. */
	if (vcase_opt_long(jl, "recompute_num_layers", 1, LAYOUT_MAX_DEGREE, &v, w, &st, e)) {
		l->recompute_layers = (int)v;
		given |= LK_RECOMPUTE_LAYERS;
	}
	if (vcase_opt_long(jl, "cpu_offloading_num_layers", 1, LAYOUT_MAX_DEGREE, &v, w, &st, e)) {
		l->offload_layers = (int)v;
		given |= LK_OFFLOAD_LAYERS;
	}
	/* an fp8-class run's end layers in bf16 (Megatron-Core's
	 * first_last_layers_bf16 counts; the job resolver checks them) */
	if (vcase_opt_long(jl, "num_layers_at_start_in_bf16", 0, 1024, &v, w, &st, e)) {
		vc->opts.bf16_first = (int)v;
		vc->bf16_given = 1;
	}
	if (vcase_opt_long(jl, "num_layers_at_end_in_bf16", 0, 1024, &v, w, &st, e)) {
		vc->opts.bf16_last = (int)v;
		vc->bf16_given = 1;
	}
	if (st != PPLAN_OK)
		return st;
	if (l->recompute_modules)
		given |= LK_RECOMPUTE_MODULES;
	if (json_get_string(jl, "recompute", &s, where, e) == PPLAN_OK) {
		if (recompute_parse(s, &l->recompute) != 0)
			return perr_set(e, PPLAN_EINPUT, "%s: layout.recompute '%s' is unknown",
					where, s);
		given |= LK_RECOMPUTE;
	}
	/* The pipeline schedule where the source names one (pplan's names:
	 * gpipe, 1f1b, interleaved, zb-h1, dualpipe); else interleaved with
	 * virtual stages and 1F1B without. */
	if (json_get_string(jl, "schedule", &s, where, e) == PPLAN_OK &&
	    schedule_parse(s, &l->schedule) != 0)
		return perr_set(e, PPLAN_EINPUT,
				"%s: layout.schedule '%s' is not " SCHEDULE_NAMES,
				where, s);
	if (json_get_string(jl, "zero", &s, where, NULL) == PPLAN_OK && s && zero_named(s) >= 0) {
		l->zero = zero_named(s);
		given |= LK_ZERO;
	} else if (vcase_opt_long(jl, "zero", 0, 3, &v, w, &st, e)) {
		l->zero = (int)v;
		given |= LK_ZERO;
	}
	if (st != PPLAN_OK)
		return st;
	/* what the source leaves out: the framework's, as for any job */
	framework_fill_layout(fw, given, l);
	if (vc->layout_searched) /* search sets these with the degrees */
		given |= LK_SP | LK_RECOMPUTE | LK_ZERO;
	if (!(given & LK_SP))
		vcase_note(vc, "sp=%s", l->sp ? "on" : "off");
	if (!(given & (LK_RECOMPUTE | LK_RECOMPUTE_MODULES | LK_RECOMPUTE_LAYERS |
		       LK_OFFLOAD_LAYERS))) {
		vc->recompute_unknown = 1;
		vcase_note(vc, "recompute=%s", recompute_name(l->recompute));
	}
	if (!(given & LK_ZERO))
		vcase_note(vc, "zero=%d", l->zero);
	if (json_get_string(jl, "precision", &s, where, e) == PPLAN_OK) {
		const char *pnote = NULL;
		if (precision_parse_recipe(s, &vc->opts.precision, &pnote) != 0)
			return perr_set(e, PPLAN_EINPUT,
					"%s: layout.precision '%s' is unknown (bf16, fp16, fp8 and its recipes, nvfp4)",
					where, s);
		if (pnote)
			vcase_note(vc, "%s", pnote);
		vc->opts.switches.fp8_recipe = fp8_recipe_of(s);
		*precision = s;
	} else {
		vcase_note(vc, "precision=bf16");
	}
	return PPLAN_OK;
}

/* The case as a job of the one resolver (job.h): its model, its hardware
 * and the framework row its source names, as given; its precision and
 * switches; priced on the whole memory of the GPU (the run ran).  The
 * training options are resolved as for any command, and what the
 * framework does in this precision is said once.  A job the resolver
 * refuses (a precision the GPU has no rate for, switches the framework
 * cannot run) makes the case unpredictable, with the resolver's sentence. */
static void resolve_job(struct vcase *vc, const char *precision, struct job *j)
{
	struct perr je = { "" };
	char what[320];

	job_init(j);
	j->model_given = &vc->model;
	j->cluster_given = &vc->cluster;
	j->framework_given = vc->opts.fw;
	j->switches = vc->opts.switches;
	j->lora_rank = vc->opts.lora_rank;
	j->lora_targets = vc->opts.lora_targets;
	j->targets_where = "layout.lora_target_modules";
	j->bf16_given = vc->bf16_given;
	j->bf16_first = vc->opts.bf16_first;
	j->bf16_last = vc->opts.bf16_last;
	j->bf16_where = "layout.num_layers_at_start/end_in_bf16";
	j->precision_arg = precision ? precision : "bf16";
	j->max_memory_gib = vc->cluster.gpu.mem_gib;
	if (job_resolve(j, 0, &je) != PPLAN_OK) {
		vcase_skip(vc, "%s", je.msg);
		return;
	}
	vc->opts = j->opts;
	if (vc->opts.lora_rank > 0) {
		char t[192];
		vcase_note(vc, "LoRA fine-tuning at rank %d beside %s (%s; sim/MODEL.md 4.7, fitted on no LoRA run)",
			   vc->opts.lora_rank,
			   lora_targets_format(vc->opts.lora_targets, ", ", t, sizeof t),
			   j->lora_targets ? "layout.lora_target_modules" : "LoRA's default");
	}
	if (j->attention_note[0])
		vcase_note(vc, "%s", j->attention_note + 2); /* after its "; " */
	framework_describe(&vc->opts.b, what, sizeof what);
	vcase_note(vc, "%s: %s", vc->opts.fw->label, what);
}

/* ---- measurements -------------------------------------------------------- */

/* The FLOP convention as the case words it: model FLOPs (Megatron's and
 * NeMo's reporting formula, sim/MODEL.md section 2) or hardware FLOPs
 * (the recomputed forward counted too). */
static enum flops_convention convention_of(const char *text)
{
	static const char *const hardware[] = { "hardware", "recompute factor",
						"counts the extra forward", NULL };
	static const char *const model[] = { "model FLOPs", "Model TFLOP",
					     "model-FLOPs", "num_floating_point_operations",
					     "no credit for recompute", NULL };
	if (!text)
		return FLOPS_UNKNOWN;
	for (int i = 0; hardware[i]; i++)
		if (strstr(text, hardware[i]))
			return FLOPS_HARDWARE;
	for (int i = 0; model[i]; i++)
		if (strstr(text, model[i]))
			return FLOPS_MODEL;
	return FLOPS_UNKNOWN;
}

static double convention_flops(const struct vcase *vc)
{
	double f = cost_train_flops(&vc->model, &vc->opts, vc->layout.gbs);
	if (vc->convention == FLOPS_HARDWARE && vc->layout.recompute == RECOMPUTE_FULL)
		f *= 4.0 / 3.0;
	return f;
}

static enum pplan_status load_measured(const cJSON *jme, struct vcase *vc,
					const char *where, struct perr *e)
{
	double x;
	const char *s = NULL;
	int oom = 0;
	enum pplan_status st = PPLAN_OK;
	char w[300];

	snprintf(w, sizeof w, "%s: measured", where);
	if (vcase_opt_positive(jme, "step_time_s", 1e9, "s", &x, w, &st, e))
		vc->measured_step_s = x;
	if (vcase_opt_positive(jme, "tflops_per_gpu", 1e6, "TFLOP/s", &x, w, &st, e))
		vc->measured_tflops = x;
	if (vcase_opt_positive(jme, "tokens_per_sec_per_gpu", 1e9, "tokens/s", &x, w, &st, e))
		vc->measured_tokens = x;
	else if (st == PPLAN_OK && vcase_opt_positive(jme, "tokens_per_sec", 1e12, "tokens/s", &x, w, &st, e))
		vc->measured_tokens = x / (double)cluster_gpus(&vc->cluster);
	if (vcase_opt_positive(jme, "memory_gib", 1e6, "GiB", &x, w, &st, e))
		vc->measured_mem_gib = x;
	if (!isfinite(vc->measured_tflops) && !isfinite(vc->measured_step_s) &&
	    !isfinite(vc->measured_tokens) &&
	    vcase_opt_positive(jme, "mfu_pct", 100, "%", &x, w, &st, e)) {
		/* MFU alone: model FLOPs over the dense bf16 peak (fp16 where
		 * the GPU has no bf16), as Llama 3, MegaScale and torchtitan
		 * report it, fp8 runs included */
		const struct gpu_spec *g = &vc->cluster.gpu;
		double peak = g->peak_tflops[PREC_BF16] > 0 ? g->peak_tflops[PREC_BF16]
							     : g->peak_tflops[PREC_FP16];
		if (peak > 0) {
			vc->measured_tflops = x / 100.0 * peak;
			if (vc->convention == FLOPS_UNKNOWN)
				vc->convention = FLOPS_MODEL;
			vcase_note(vc, "MFU %.1f %% read as %.1f TFLOP/s per GPU (model FLOPs over the dense %s peak)",
				   x, vc->measured_tflops, g->peak_tflops[PREC_BF16] > 0 ? "bf16" : "fp16");
		}
	}
	if (st != PPLAN_OK)
		return st;
	if (json_get_string(jme, "flops_convention", &s, where, e) == PPLAN_OK)
		vc->convention = convention_of(s);
	if (json_get_string(jme, "memory_kind", &s, where, e) == PPLAN_OK)
		snprintf(vc->memory_kind, sizeof vc->memory_kind, "%s", s);
	if (json_get_bool(jme, "oom", &oom, where, e) == PPLAN_OK)
		vc->measured_oom = oom;
	return PPLAN_OK;
}

/* Without a step time, a throughput on a stated FLOP convention gives one
 * (the same derivation the calibration file's "derived" step times use). */
static void step_from_throughput(struct vcase *vc)
{
	double gpus = (double)cluster_gpus(&vc->cluster);
	if (isfinite(vc->measured_step_s) || !vc->predictable || vc->measured_oom)
		return;
	if (isfinite(vc->measured_tokens)) {
		/* tokens need no FLOP convention */
		vc->measured_step_s = (double)vc->layout.gbs * (double)vc->opts.seq /
				      (vc->measured_tokens * gpus);
		vc->step_from_throughput = 1;
		vcase_note(vc, "step time from throughput (%.0f tokens/s per GPU)", vc->measured_tokens);
		return;
	}
	if (!isfinite(vc->measured_tflops))
		return;
	if (vc->convention == FLOPS_UNKNOWN) {
		/* the frameworks' tables print model FLOPs (Megatron's and NeMo's
		 * formula, sim/MODEL.md section 2) */
		vc->convention = FLOPS_MODEL;
		vcase_note(vc, "no FLOP convention given: read as model FLOPs");
	}
	vc->measured_step_s = convention_flops(vc) / (vc->measured_tflops * 1e12 * gpus);
	vc->step_from_throughput = 1;
	vcase_note(vc, "compared by throughput (%.1f TFLOP/s per GPU, %s FLOPs)",
	     vc->measured_tflops, vc->convention == FLOPS_MODEL ? "model" : "hardware");
}

/* A source that prints a throughput but no global batch: the rate per GPU
 * of a steady run barely depends on it, so the batch a user of pplan gets
 * by default (sim/defaults.h) stands in, and the case says so.  A step
 * time without its batch says nothing: skipped. */
static void batch_of(struct vcase *vc)
{
	struct layout *l = &vc->layout;
	struct batch_default bd;
	long gpus = cluster_gpus(&vc->cluster), per = (long)l->dp * l->mbs;

	if (l->gbs > 0 || !vc->predictable)
		return;
	if (!isfinite(vc->measured_step_s) &&
	    (isfinite(vc->measured_tflops) || isfinite(vc->measured_tokens))) {
		defaults_global_batch(&vc->model, vc->opts.seq, gpus, &bd);
		l->gbs = bd.sequences;
		if (per > 0 && l->gbs % per)
			l->gbs = (l->gbs / per + 1) * per;
		if (l->gbs > 0 && l->gbs <= LAYOUT_MAX_GBS) {
			vcase_note(vc, "gbs=%ld (none given; pplan's %s)", l->gbs, bd.origin);
			return;
		}
		l->gbs = 0;
	}
	vcase_skip(vc, "the source gives no global batch size");
}

/* ---- one case -------------------------------------------------------------- */

/* pp x vp does not divide the layers and the source says no more: the
 * embedding and the loss counted as layers of the split where that
 * divides (NVIDIA's recipes for 94 and 126 layers), else Megatron's
 * uneven edge stages. */
static void megatron_split(struct vcase *vc)
{
	struct layout *l = &vc->layout;
	int L = vc->model.layers;
	enum megatron_split how = layout_split_megatron(l, L);
	struct perr why = { "" }; /* a hybrid stack: no MTP split */
	char note[320];
	if (how == SPLIT_EDGES) {
		vcase_note(vc, "embedding and loss as pipeline layers: %d layers + 2 over pp x vp = %d chunks (--account-for-embedding/loss-in-pipeline-split)",
		     L, l->pp * l->vp);
		return;
	}
	if (how == SPLIT_UNEVEN) {
		vcase_note(vc, "uneven stages: %d layers over pp=%d as Megatron splits them, first %d, last %d",
		     L, l->pp, l->pp_first, l->pp_last);
		return;
	}
	/* Neither: the run's pipeline layout held the model's MTP layers too
	 * (Megatron places them with the loss on the last stage). */
	l->pp_embed = l->pp_loss = 1;
	if (vc->mtp_layers > 0 && layout_edge_split_ok(l, L + vc->mtp_layers) &&
	    model_add_mtp_layers(&vc->model, vc->mtp_layers, note, sizeof note, &why) == PPLAN_OK) {
		vcase_note(vc, "the %s: %d + %d + 2 units over pp x vp = %d chunks", note, L,
			   vc->mtp_layers, l->pp * l->vp);
		return;
	}
	l->pp_embed = l->pp_loss = 0;
	/* Megatron-Core 0.13 on: a layout string, as NVIDIA's recipes give
	 * DeepSeek-V3 and Kimi K2 where nothing even exists */
	if (vc->opts.fw->can_pp_layout && (l->pp_table = pp_table_balanced(L, l->pp, l->vp)))
		vcase_note(vc, "no even split of %d layers over pp x vp = %d chunks: priced at the balanced pipeline layout '%s' (the source gives none)",
			   L, l->pp * l->vp, l->pp_table->text);
}

/* A case's pipeline layout string: the split it gives (vp from it, its
 * MTP layers as layers where only that splits, as --pipeline-layout
 * reads it); 0, the case not predicted, where it does not apply. */
static int case_pp_layout(struct vcase *vc)
{
	struct layout *l = &vc->layout;
	struct pp_layout pl;
	struct perr me = { "" };
	char why[400], note[200] = "";
	int vp = l->vp;

	l->pp_first = l->pp_last = l->pp_embed = l->pp_loss = 0;
	if (layout_apply_pp_layout(vc->pp_layout, vc->model.layers, l, &pl, why, sizeof why) != 0) {
		vcase_skip(vc, "layout.pipeline_model_parallel_layout %s", why);
		return 0;
	}
	if (vp > 1 && vp != l->vp) {
		vcase_skip(vc, "layout.vp=%d and the %d virtual stages per rank of its pipeline_model_parallel_layout conflict",
			   vp, l->vp);
		return 0;
	}
	if (pl.mtp_as_layers &&
	    model_add_mtp_layers(&vc->model, pl.mtp, note, sizeof note, &me) != PPLAN_OK) {
		vcase_skip(vc, "layout.pipeline_model_parallel_layout: %s", me.msg);
		return 0;
	}
	vcase_note(vc, "the split of its pipeline layout '%s'%s%s", vc->pp_layout,
		   note[0] ? ", its " : "", note);
	return 1;
}

/* Expert TP not given: the framework's (tp), unless only etp = 1 folds
 * ep x etp into tp x dp x cp, as the run must then have had. */
static void expert_tp(struct vcase *vc)
{
	struct layout *l = &vc->layout;
	long room = (long)l->tp * l->dp * l->cp;
	if (l->etp > 0 || l->ep <= 1 || l->tp <= 1 || vc->model.num_experts < 2)
		return;
	if (room % ((long)l->ep * l->tp) != 0 && room % l->ep == 0) {
		l->etp = 1;
		vcase_note(vc, "etp=1 (ep x tp = %ld does not fit in tp x dp x cp = %ld; etp 1 does)",
		     (long)l->ep * l->tp, room);
	}
}

/* A published ep that no stage can hold (more expert ranks than a
 * stage's tp x dp x cp GPUs: a table's misprint or a layout this reader
 * cannot place) is priced at the largest ep that fits and divides the
 * experts, said; the run is still compared. */
static void expert_fit(struct vcase *vc)
{
	struct layout *l = &vc->layout;
	long room = (long)l->tp * l->dp * l->cp, etp = l->etp > 0 ? l->etp : 1;
	int ep = l->ep;
	if (l->ep <= 1 || vc->model.num_experts < 2 || room % (etp * l->ep) == 0 ||
	    (long)l->ep * etp <= room)
		return;
	while (ep > 1 && (room % (etp * ep) != 0 || vc->model.num_experts % ep != 0))
		ep--;
	vcase_note(vc, "ep=%d: the source's ep=%d is more than a pipeline stage's %ld GPUs (tp x dp x cp) can hold",
		   ep, l->ep, room);
	l->ep = ep;
}

/* A source that gives no parallel degrees at all: the layout pplan's
 * search ranks first for the model, the GPUs, the framework and the
 * batch (what a team planning the run would start from), said. */
static void layout_from_search(struct vcase *vc)
{
	struct search_params sp;
	struct search_result r;
	struct perr se = { "" };
	char text[256];

	if (!vc->layout_searched || !vc->predictable)
		return;
	search_params_default(&sp);
	sp.gbs = vc->layout.gbs;
	sp.top_k = 1;
	memset(&r, 0, sizeof r);
	if (search_run(&vc->model, &vc->cluster, &vc->opts, &sp, &r, &se) != PPLAN_OK ||
	    r.n_top < 1) {
		vcase_skip(vc, "the source gives no tp/pp/dp, and no layout pplan's search tried fits%s%s",
			   se.msg[0] ? ": " : "", se.msg);
		search_free(&r);
		return;
	}
	vc->layout = r.top_layouts[0];
	layout_format(&vc->layout, text, sizeof text);
	vcase_note(vc, "no tp/pp/dp given: pplan search's best layout, %s", text);
	search_free(&r);
}

/* The case's own pipeline split and expert TP, then the resolver's check
 * of the layout against the model and the cluster (every key the case
 * gives or its reader defaulted counts as set). */
static void check_layout(struct vcase *vc, struct job *j)
{
	struct perr le = { "" };
	enum reject why = REJECT_NONE;
	const struct layout *l = &vc->layout;

	if (!vc->predictable)
		return;
	if (vc->pp_layout[0] && !case_pp_layout(vc))
		return;
	if (vc->model.layers % ((long)l->pp * l->vp) && vc->opts.b.partition == PART_FIRST_LAST &&
	    l->pp_first == 0 && l->pp_last == 0 && !l->pp_embed && !l->pp_loss && !l->pp_table)
		megatron_split(vc);
	expert_tp(vc);
	expert_fit(vc);
	j->model = vc->model; /* with the MTP layers its split counts */
	if (job_complete_layout(j, &vc->layout, ~0u, &le) != PPLAN_OK) {
		vcase_skip(vc, "%s", le.msg);
		return;
	}
	why = framework_check_layout(vc->opts.fw, vc->opts.precision, l);
	if (why != REJECT_NONE)
		vcase_skip(vc, "%s cannot run this layout: %s", vc->opts.fw->label,
		     reject_key(why));
	if (vc->model.layers % l->pp && vc->opts.b.partition == PART_DEEPSPEED)
		vcase_note(vc, "uneven stages: DeepSpeed partitions %d layers + 2 embeddings over pp=%d",
		     vc->model.layers, l->pp);
}

static enum pplan_status load_case(const cJSON *jc, struct vcase *vc,
				   const char *path, int idx, struct perr *e)
{
	char where[256];
	const char *s = NULL;
	const cJSON *jm, *jh, *jl, *jme;
	const char *precision = NULL;
	struct job job;
	enum pplan_status st;

	memset(vc, 0, sizeof *vc);
	vc->measured_step_s = NAN;
	vc->measured_tflops = NAN;
	vc->measured_tokens = NAN;
	vc->measured_mem_gib = NAN;
	vc->predictable = 1;
	if (json_get_string(jc, "id", &s, path, e) != PPLAN_OK)
		return perr_set(e, PPLAN_EINPUT, "%s: case %d has no id (a string)", path, idx);
	snprintf(vc->id, sizeof vc->id, "%s", s);
	snprintf(where, sizeof where, "%s: case %s", path, vc->id);
	if (json_get_string(jc, "source", &s, where, e) != PPLAN_OK)
		s = "";
	publication_of(vc, s);

	jm = cJSON_GetObjectItemCaseSensitive(jc, "model");
	jh = cJSON_GetObjectItemCaseSensitive(jc, "hardware");
	jl = cJSON_GetObjectItemCaseSensitive(jc, "layout");
	jme = cJSON_GetObjectItemCaseSensitive(jc, "measured");
	if (!cJSON_IsObject(jm) || !cJSON_IsObject(jh) || !cJSON_IsObject(jl) ||
	    !cJSON_IsObject(jme))
		return perr_set(e, PPLAN_EINPUT,
				"%s: model, hardware, layout and measured must be objects",
				where);
	train_opts_default(&vc->opts, &vc->model);
	if ((st = load_framework(jc, vc, where, e)) != PPLAN_OK ||
	    (st = vcase_load_model(jm, vc, path, where, e)) != PPLAN_OK ||
	    (st = load_hardware(jh, jl, vc, where, e)) != PPLAN_OK ||
	    (st = load_degrees(jl, vc, where, e)) != PPLAN_OK ||
	    (st = load_settings(jl, vc, &precision, where, e)) != PPLAN_OK ||
	    (st = load_task(jc, jl, jm, vc, where, e)) != PPLAN_OK)
		return st;
	resolve_job(vc, precision, &job);
	if ((st = load_measured(jme, vc, where, e)) != PPLAN_OK)
		return st;
	batch_of(vc);
	layout_from_search(vc);
	check_layout(vc, &job);
	step_from_throughput(vc);
	return PPLAN_OK;
}

/* A case that cannot be read stays in the file's list, not predicted:
 * the reason is the sentence, less the file and case it names. */
static void unreadable(struct vcase *vc, const char *path, int idx, const char *msg)
{
	char prefix[400];
	size_t n;
	if (!vc->id[0])
		snprintf(vc->id, sizeof vc->id, "case-%d", idx);
	if (!vc->publication[0])
		publication_of(vc, "");
	vc->measured_step_s = vc->measured_tflops = vc->measured_tokens = vc->measured_mem_gib = NAN;
	snprintf(prefix, sizeof prefix, "%s: case %s: ", path, vc->id);
	n = strlen(prefix);
	if (strncmp(msg, prefix, n) != 0)
		n = 0;
	vc->predictable = 1; /* so that this reason stands */
	vcase_skip(vc, "%s", msg + n);
}

enum pplan_status cases_load(const char *path, struct vcase **out, int *n,
			     struct perr *e)
{
	cJSON *root = NULL;
	const cJSON *arr, *it;
	const char *schema = NULL;
	struct vcase *cases = NULL;
	int i = 0, count;
	enum pplan_status st =
		json_read_limited(path, JSON_MAX_BYTES, "a cases file", &root, e);

	*out = NULL;
	*n = 0;
	if (st != PPLAN_OK)
		return st;
	if (json_get_string(root, "schema", &schema, path, e) != PPLAN_OK ||
	    strcmp(schema, "pplan.cases/1") != 0) {
		st = perr_set(e, PPLAN_EINPUT, "%s: schema must be \"pplan.cases/1\"",
			      path);
		goto out;
	}
	arr = cJSON_GetObjectItemCaseSensitive(root, "cases");
	if (!cJSON_IsArray(arr) || (count = cJSON_GetArraySize(arr)) == 0) {
		st = perr_set(e, PPLAN_EINPUT, "%s: cases must be a non-empty array",
			      path);
		goto out;
	}
	cases = calloc((size_t)count, sizeof *cases);
	if (!cases) {
		st = perr_set(e, PPLAN_ENOMEM, "%s: out of memory", path);
		goto out;
	}
	cJSON_ArrayForEach(it, arr) {
		struct perr ce = { "" };
		if (!cJSON_IsObject(it)) {
			memset(&cases[i], 0, sizeof cases[i]);
			unreadable(&cases[i], path, i, "the case is not an object");
		} else if ((st = load_case(it, &cases[i], path, i, &ce)) == PPLAN_EINPUT) {
			unreadable(&cases[i], path, i, ce.msg);
		} else if (st != PPLAN_OK) {
			perr_set(e, st, "%s", ce.msg);
			goto out;
		}
		i++;
	}
	st = PPLAN_OK;
	*out = cases;
	*n = i;
	cases = NULL;
out:
	free(cases);
	cJSON_Delete(root);
	return st;
}

/* ---- prediction -------------------------------------------------------------- */

/* The fewest layers (1..hi) of `key` (&l->recompute_layers or
 * &l->offload_layers) with which l fits; 0 when none does.  Memory falls
 * as the count grows, so a bisection finds it. */
static enum pplan_status fewest_layers_that_fit(struct vcase *vc, struct layout *l, int *key,
						int hi, struct prediction *q, struct perr *e)
{
	int lo = 1, found = 0;
	enum pplan_status st;
	while (lo <= hi) {
		int mid = lo + (hi - lo) / 2;
		*key = mid;
		if ((st = predict_layout(&vc->model, &vc->cluster, l, &vc->opts, q, e)) != PPLAN_OK)
			return st;
		if (q->feasible) {
			found = mid;
			hi = mid - 1;
		} else {
			lo = mid + 1;
		}
	}
	*key = found;
	if (found)
		return predict_layout(&vc->model, &vc->cluster, l, &vc->opts, q, e);
	return PPLAN_OK;
}

/* The run fitted where the source's layout, with the framework's default
 * recomputation, does not: it must have saved more activation memory
 * than the default.  The candidates are the framework's knobs for it,
 * each at its least setting that fits: Megatron's selective
 * recomputation, activation CPU offloading of the fewest layers (pp 1),
 * block recomputation of the fewest layers of each chunk, and full
 * recomputation; the recipes that ran were tuned for speed, so the
 * fastest of those that fit is the one priced (sim/MODEL.md 9). */
enum pplan_status vcase_predict(struct vcase *vc, struct prediction *p,
				struct perr *e)
{
	enum { C_SELECTIVE, C_OFFLOAD, C_BLOCK, C_FULL, C_COUNT };
	const struct framework *fw = vc->opts.fw;
	enum pplan_status st = predict_layout(&vc->model, &vc->cluster, &vc->layout,
					      &vc->opts, p, e);
	struct layout best_l;
	struct prediction best;
	int have = 0, per_chunk;
	if (st != PPLAN_OK || p->feasible || p->reject != REJECT_OOM ||
	    !vc->recompute_unknown || vc->measured_oom)
		return st;
	per_chunk = memory_stage_layers(&vc->model, &vc->layout, &vc->opts, 0) /
		    (vc->layout.vp > 0 ? vc->layout.vp : 1);
	for (int c = 0; c < C_COUNT; c++) {
		struct layout l = vc->layout;
		struct prediction q;
		l.recompute_layers = l.offload_layers = 0;
		if (c == C_SELECTIVE) {
			if (l.recompute >= RECOMPUTE_SELECTIVE)
				continue;
			l.recompute = RECOMPUTE_SELECTIVE;
			st = predict_layout(&vc->model, &vc->cluster, &l, &vc->opts, &q, e);
		} else if (c == C_OFFLOAD) {
			if (!fw->can_offload_layers || l.pp > 1 || l.offload_modules ||
			    l.recompute != RECOMPUTE_NONE)
				continue;
			st = fewest_layers_that_fit(vc, &l, &l.offload_layers, vc->model.layers - 1, &q, e);
			if (st == PPLAN_OK && !l.offload_layers)
				continue;
		} else if (c == C_BLOCK) {
			if (!fw->can_recompute_layers || l.recompute == RECOMPUTE_FULL || per_chunk < 2)
				continue;
			l.recompute = RECOMPUTE_FULL;
			st = fewest_layers_that_fit(vc, &l, &l.recompute_layers, per_chunk - 1, &q, e);
			if (st == PPLAN_OK && !l.recompute_layers)
				continue;
		} else {
			if (l.recompute == RECOMPUTE_FULL)
				continue;
			l.recompute = RECOMPUTE_FULL;
			st = predict_layout(&vc->model, &vc->cluster, &l, &vc->opts, &q, e);
		}
		if (st != PPLAN_OK)
			return st;
		if (q.feasible && (!have || q.step_time_s < best.step_time_s)) {
			best = q;
			best_l = l;
			have = 1;
		}
	}
	if (have) {
		char what[96];
		if (best_l.offload_layers > 0)
			snprintf(what, sizeof what, "offload_layers=%d", best_l.offload_layers);
		else if (best_l.recompute_layers > 0)
			snprintf(what, sizeof what, "recompute=full, recompute_layers=%d",
				 best_l.recompute_layers);
		else
			snprintf(what, sizeof what, "recompute=%s", recompute_name(best_l.recompute));
		vcase_note(vc, "%s instead (recompute=%s does not fit; the run did; the fastest of the framework's knobs that fits)",
		     what, recompute_name(vc->layout.recompute));
		vc->layout = best_l;
		vc->recompute_unknown = 0;
		*p = best;
	}
	return PPLAN_OK;
}

double vcase_predicted_tflops(const struct vcase *vc, const struct prediction *p)
{
	double gpus = (double)cluster_gpus(&vc->cluster);
	if (!(p->step_time_s > 0))
		return NAN;
	return convention_flops(vc) / (p->step_time_s * gpus * 1e12);
}
