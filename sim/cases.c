/*
 * cases.c: reading pplan.cases/1 and filling null fields with the
 * defaults of the framework each source used (validation/README.md asks
 * for exactly that).  The defaults, by source:
 *   Narayanan et al. 2021 (Megatron-LM, A100, 2021): mbs 1, no
 *     interleaving, plain DP (no distributed optimizer), no overlap of the
 *     gradient all-reduce, unfused attention, TP without SP.
 *   BigScience (Megatron-DeepSpeed, 2022): as given; ZeRO-1 over DP,
 *     DeepSpeed's pipeline engine, unfused attention (fused softmax).
 *   NVIDIA DGX Cloud recipes and NeMo 24.x performance tables, Megatron-LM
 *     README (Megatron-Core): distributed optimizer, SP with TP,
 *     overlapped gradient reduction and TP communication, flash attention,
 *     selective recomputation off (flash attention already drops scores).
 * Missing architecture fields come from the zoo model of the same MLP
 * kind nearest in size; missing fabrics from the GPU's usual node preset.
 */
#include "cases.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonio.h"

static void note(struct vcase *vc, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void note(struct vcase *vc, const char *fmt, ...)
{
	char buf[160];
	size_t len = strlen(vc->assumed);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	snprintf(vc->assumed + len, sizeof vc->assumed - len, "%s%s",
		 len ? "; " : "", buf);
}

static void classify(struct vcase *vc, const char *source)
{
	const char *k = "other";
	if (strstr(source, "Narayanan"))
		k = "narayanan21";
	else if (strstr(source, "BigScience"))
		k = "bigscience";
	else if (strstr(source, "DGX Cloud"))
		k = "dgxc";
	else if (strstr(source, "NeMo"))
		k = "nemo";
	else if (strstr(source, "Megatron-LM README"))
		k = "megatron-readme";
	snprintf(vc->source_key, sizeof vc->source_key, "%s", k);
}

/* Reads a whole number in [min, max] that may be null; returns 1 if
 * present.  A value out of range sets *st (the first error is kept) with
 * a sentence naming where, the key and the bound. */
static int opt_long(const cJSON *o, const char *key, long min, long max,
		    long *v, const char *where, enum pplan_status *st,
		    struct perr *e)
{
	long x = 0;
	enum pplan_status s;

	if (*st != PPLAN_OK)
		return 0;
	s = json_get_long(o, key, &x, min, where, e);
	if (s == PPLAN_OK && x > max)
		s = perr_set(e, PPLAN_EINPUT, "%s: %s must be at most %ld, got %ld",
			     where, key, max, x);
	if (s == PPLAN_EINPUT)
		*st = s;
	if (s != PPLAN_OK)
		return 0;
	*v = x;
	return 1;
}

static enum pplan_status load_model(const cJSON *jm, struct vcase *vc,
				    const char *where, struct perr *e)
{
	struct model_spec *m = &vc->model;
	enum pplan_status st = PPLAN_OK;
	const char *s = NULL;
	long layers = 0, hidden = 0, ffn = 0, heads = 0, kv = 0, vocab = 0, seq = 0;
	double pb = 0;
	int have_l, have_h, have_f, have_a, have_g, have_v;
	const cJSON *moe;
	char mwhere[300];

	if (!cJSON_IsObject(jm))
		return perr_set(e, PPLAN_EINPUT, "%s: model must be an object", where);
	memset(m, 0, sizeof *m);
	m->mlp = MLP_GELU;
	if (json_get_string(jm, "mlp", &s, where, e) == PPLAN_OK &&
	    mlp_kind_parse(s, &m->mlp) != 0)
		return perr_set(e, PPLAN_EINPUT, "%s: model.mlp '%s' is unknown",
				where, s);
	snprintf(mwhere, sizeof mwhere, "%s: model", where);
	have_l = opt_long(jm, "num_layers", 1, MODEL_MAX_COUNT, &layers, mwhere, &st, e);
	have_h = opt_long(jm, "hidden_size", 1, MODEL_MAX_DIM, &hidden, mwhere, &st, e);
	have_f = opt_long(jm, "ffn_hidden_size", 1, MODEL_MAX_DIM, &ffn, mwhere, &st, e);
	have_a = opt_long(jm, "num_attention_heads", 1, MODEL_MAX_COUNT, &heads, mwhere, &st, e);
	have_g = opt_long(jm, "num_kv_heads", 1, MODEL_MAX_COUNT, &kv, mwhere, &st, e);
	have_v = opt_long(jm, "vocab_size", 1, MODEL_MAX_DIM, &vocab, mwhere, &st, e);
	if (!opt_long(jm, "seq_length", 1, MODEL_MAX_DIM, &seq, mwhere, &st, e) &&
	    st == PPLAN_OK) {
		seq = 2048;
		note(vc, "seq_length=2048");
	}
	if (st != PPLAN_OK)
		return st;
	if (json_get_number(jm, "params_billion", &pb, mwhere, e) == PPLAN_EINPUT)
		return PPLAN_EINPUT;

	/* Fill what the source left out from the nearest zoo model of the
	 * same MLP kind. */
	if (!have_l || !have_h || !have_a || !have_v ||
	    (!have_f && mlp_is_gated(m->mlp))) {
		const struct model_spec *best = NULL;
		int nz;
		const struct model_spec *zoo = model_zoo(&nz);
		double target = pb > 0 ? pb * 1e9 : 0;
		for (int i = 0; i < nz; i++) {
			if (zoo[i].mlp != m->mlp || (zoo[i].num_experts > 1) !=
			    (cJSON_IsObject(cJSON_GetObjectItem(jm, "moe"))))
				continue;
			if (have_h && zoo[i].hidden != hidden)
				continue;
			if (!best || fabs(model_params_total(&zoo[i]) - target) <
				     fabs(model_params_total(best) - target))
				best = &zoo[i];
		}
		if (!best)
			return perr_set(e, PPLAN_EINPUT,
					"%s: the model's architecture is incomplete and no zoo model matches it",
					where);
		if (!have_l) { layers = best->layers; note(vc, "num_layers=%ld (zoo %s)", layers, best->name); }
		if (!have_h) { hidden = best->hidden; note(vc, "hidden_size=%ld (zoo %s)", hidden, best->name); }
		if (!have_a) { heads = best->heads; note(vc, "heads=%ld (zoo %s)", heads, best->name); }
		if (!have_g && !have_a) { kv = best->kv_heads; have_g = 1; note(vc, "kv_heads=%ld (zoo %s)", kv, best->name); }
		if (!have_v) { vocab = best->vocab; note(vc, "vocab_size=%ld (zoo %s)", vocab, best->name); }
		if (!have_f) { ffn = best->ffn; have_f = 1; note(vc, "ffn_hidden_size=%ld (zoo %s)", ffn, best->name); }
		m->norm = best->norm;
		m->tied_embeddings = best->tied_embeddings;
		m->linear_bias = best->linear_bias;
	} else {
		m->norm = (m->mlp == MLP_SWIGLU) ? NORM_RMSNORM : NORM_LAYERNORM;
		m->tied_embeddings = m->mlp == MLP_GELU;
		m->linear_bias = m->mlp == MLP_GELU;
	}
	if (!have_f) {
		ffn = 4 * hidden;
		note(vc, "ffn_hidden_size=4h=%ld", ffn);
	}
	if (!have_g)
		kv = heads;
	snprintf(m->name, sizeof m->name, "%s", vc->id);
	if (json_get_string(jm, "name", &s, where, e) == PPLAN_OK)
		snprintf(m->name, sizeof m->name, "%s", s);
	m->layers = (int)layers;
	m->hidden = hidden;
	m->ffn = ffn;
	m->heads = (int)heads;
	m->kv_heads = (int)kv;
	m->head_dim = heads > 0 ? hidden / heads : 0;
	m->vocab = vocab;
	m->seq = seq;
	moe = cJSON_GetObjectItemCaseSensitive(jm, "moe");
	if (cJSON_IsObject(moe)) {
		long ne = 0, k = 0;
		snprintf(mwhere, sizeof mwhere, "%s: model.moe", where);
		opt_long(moe, "num_experts", 1, MODEL_MAX_COUNT, &ne, mwhere, &st, e);
		opt_long(moe, "top_k", 1, MODEL_MAX_COUNT, &k, mwhere, &st, e);
		if (st != PPLAN_OK)
			return st;
		m->num_experts = (int)ne;
		m->top_k = (int)k;
	}
	return model_check(m, where, e);
}

static enum pplan_status load_case(const cJSON *jc, struct vcase *vc,
				   const char *path, int idx, struct perr *e)
{
	char where[256];
	const char *s = NULL;
	const cJSON *jm, *jh, *jl, *jme;
	enum pplan_status st = PPLAN_OK;
	long v;
	int has_tp, has_pp, has_dp;
	int modern;

	memset(vc, 0, sizeof *vc);
	vc->measured_step_s = NAN;
	vc->measured_mem_gib = NAN;
	vc->predictable = 1;
	if (json_get_string(jc, "id", &s, path, e) != PPLAN_OK)
		return perr_set(e, PPLAN_EINPUT, "%s: case %d has no id", path, idx);
	snprintf(vc->id, sizeof vc->id, "%s", s);
	snprintf(where, sizeof where, "%s: case %s", path, vc->id);
	if (json_get_string(jc, "source", &s, where, e) != PPLAN_OK)
		s = "";
	classify(vc, s);
	modern = !strcmp(vc->source_key, "dgxc") || !strcmp(vc->source_key, "nemo") ||
		 !strcmp(vc->source_key, "megatron-readme");

	jm = cJSON_GetObjectItemCaseSensitive(jc, "model");
	jh = cJSON_GetObjectItemCaseSensitive(jc, "hardware");
	jl = cJSON_GetObjectItemCaseSensitive(jc, "layout");
	jme = cJSON_GetObjectItemCaseSensitive(jc, "measured");
	if (!cJSON_IsObject(jm) || !cJSON_IsObject(jh) || !cJSON_IsObject(jl) ||
	    !cJSON_IsObject(jme))
		return perr_set(e, PPLAN_EINPUT,
				"%s: model, hardware, layout and measured must be objects",
				where);
	if ((st = load_model(jm, vc, where, e)) != PPLAN_OK)
		return st;

	/* Hardware. */
	{
		const struct gpu_spec *g;
		const char *preset;
		long gpus = 0, per_node = 8;
		double gbps = 0;
		char hwhere[300];
		s = NULL;
		if (json_get_string(jh, "gpu", &s, where, e) != PPLAN_OK ||
		    !(g = gpu_find(s)))
			return perr_set(e, PPLAN_EINPUT, "%s: unknown GPU '%s'", where,
					s ? s : "(missing)");
		snprintf(hwhere, sizeof hwhere, "%s: hardware", where);
		if (!opt_long(jh, "num_gpus", 1, CLUSTER_MAX_GPUS, &gpus, hwhere,
			      &st, e)) {
			if (st != PPLAN_OK)
				return st;
			return perr_set(e, PPLAN_EINPUT, "%s: hardware.num_gpus is missing",
					where);
		}
		if (!opt_long(jh, "gpus_per_node", 1, CLUSTER_MAX_NODE_GPUS,
			      &per_node, hwhere, &st, e)) {
			if (st != PPLAN_OK)
				return st;
			per_node = 8;
			note(vc, "gpus_per_node=8");
		}
		preset = cluster_preset_for_gpu(g->name);
		if (cluster_preset(preset ? preset : "dgx-h100", 0, &vc->cluster, e) !=
		    PPLAN_OK)
			return PPLAN_EINPUT;
		vc->cluster.gpu = *g;
		vc->cluster.nvlink.bw_gbps = g->nvlink_gbps;
		vc->cluster.gpus_per_node = (int)per_node;
		vc->cluster.nvlink_domain = (int)per_node;
		vc->cluster.num_nodes = (int)((gpus + per_node - 1) / per_node);
		if (gpus % per_node != 0) {
			vc->cluster.gpus_per_node = (int)gpus;
			vc->cluster.nvlink_domain = (int)gpus;
			vc->cluster.num_nodes = 1;
		}
		st = json_get_number(jh, "inter_node_gbps_per_gpu", &gbps, hwhere, e);
		if (st == PPLAN_OK && !(gbps > 0 && gbps <= 1e6))
			st = perr_set(e, PPLAN_EINPUT,
				      "%s: inter_node_gbps_per_gpu must be more than 0 and at most 1000000 Gb/s, got %g",
				      hwhere, gbps);
		if (st == PPLAN_EINPUT)
			return st;
		st = PPLAN_OK;
		if (gbps > 0)
			cluster_set_net_gbps(&vc->cluster, gbps / 8.0);
		else
			note(vc, "network %ld Gb/s per GPU (%s)",
			     (long)(vc->cluster.net.bw_gbps * 8 + 0.5), preset);
		snprintf(vc->cluster.name, sizeof vc->cluster.name, "%ld x %s", gpus,
			 g->name);
	}

	/* Layout. */
	{
		struct layout *l = &vc->layout;
		int b;
		const long D = LAYOUT_MAX_DEGREE;
		char lwhere[300];
		snprintf(lwhere, sizeof lwhere, "%s: layout", where);
		layout_default(l);
		has_tp = opt_long(jl, "tp", 1, D, &v, lwhere, &st, e); if (has_tp) l->tp = (int)v;
		has_pp = opt_long(jl, "pp", 1, D, &v, lwhere, &st, e); if (has_pp) l->pp = (int)v;
		has_dp = opt_long(jl, "dp", 1, D, &v, lwhere, &st, e); if (has_dp) l->dp = (int)v;
		if (opt_long(jl, "cp", 1, D, &v, lwhere, &st, e)) l->cp = (int)v;
		if (opt_long(jl, "ep", 1, D, &v, lwhere, &st, e)) l->ep = (int)v;
		else if (vc->model.num_experts > 1) note(vc, "ep=1");
		if (opt_long(jl, "vp", 1, D, &v, lwhere, &st, e)) l->vp = (int)v;
		if (opt_long(jl, "micro_batch_size", 1, D, &v, lwhere, &st, e))
			l->mbs = (int)v;
		else if (st == PPLAN_OK)
			note(vc, "mbs=1 (Megatron default)");
		if (opt_long(jl, "global_batch_size", 1, LAYOUT_MAX_GBS, &v, lwhere, &st, e))
			l->gbs = v;
		if (st != PPLAN_OK)
			return st;
		if ((double)l->tp * l->pp * l->dp * l->cp > (double)CLUSTER_MAX_GPUS)
			return perr_set(e, PPLAN_EINPUT,
					"%s: tp*pp*dp*cp = %.0f GPUs is more than %ld",
					lwhere, (double)l->tp * l->pp * l->dp * l->cp,
					(long)CLUSTER_MAX_GPUS);
		if (!has_tp || !has_pp || !has_dp) {
			vc->predictable = 0;
			snprintf(vc->skip_reason, sizeof vc->skip_reason,
				 "the source gives no tp/pp/dp");
		} else if (l->gbs <= 0) {
			vc->predictable = 0;
			snprintf(vc->skip_reason, sizeof vc->skip_reason,
				 "the source gives no global batch size");
		}
		l->schedule = l->vp > 1 ? SCHED_INTERLEAVED : SCHED_1F1B;
		if (json_get_bool(jl, "sequence_parallel", &b, where, e) == PPLAN_OK)
			l->sp = b && l->tp > 1;
		else {
			l->sp = modern && l->tp > 1;
			note(vc, "sp=%s", l->sp ? "on" : "off");
		}
		if (json_get_string(jl, "recompute", &s, where, e) == PPLAN_OK) {
			if (recompute_parse(s, &l->recompute) != 0)
				return perr_set(e, PPLAN_EINPUT,
						"%s: layout.recompute '%s' is unknown",
						where, s);
		} else {
			l->recompute = RECOMPUTE_NONE;
			note(vc, "recompute=none");
		}
		if (opt_long(jl, "zero", 0, 3, &v, lwhere, &st, e))
			l->zero = (int)v;
		else if (st == PPLAN_OK) {
			l->zero = modern && l->dp * l->cp > 1 ? 1 : 0;
			note(vc, "zero=%d", l->zero);
		}
		if (st != PPLAN_OK)
			return st;
		train_opts_default(&vc->opts, &vc->model);
		if (json_get_string(jl, "precision", &s, where, e) == PPLAN_OK) {
			if (precision_parse(s, &vc->opts.precision) != 0)
				return perr_set(e, PPLAN_EINPUT,
						"%s: layout.precision '%s' is unknown",
						where, s);
		} else {
			note(vc, "precision=bf16");
		}
	}

	/* Framework behaviour of the source's era. */
	{
		struct train_opts *o = &vc->opts;
		o->seq = vc->model.seq;
		/* BigScience ran Megatron-DeepSpeed; Narayanan et al.'s ZeRO-3
		 * baseline (Table 2) is DeepSpeed's ZeRO-3. */
		if (!strcmp(vc->source_key, "bigscience") || vc->layout.zero >= 3)
			o->framework = FW_MEGATRON_DEEPSPEED;
		o->flash_attention = modern;
		o->tp_comm_overlap = modern;
		o->overlap_grad_reduce = modern;
		o->overlap_param_gather = modern;
		if (!modern)
			note(vc, "%s-era framework: unfused attention, no comm overlap",
			     vc->source_key);
	}

	/* Measurements. */
	{
		double x;
		int oom = 0;
		char xwhere[300];
		snprintf(xwhere, sizeof xwhere, "%s: measured", where);
		if ((st = json_get_number(jme, "step_time_s", &x, xwhere, e)) == PPLAN_OK) {
			if (!(x > 0))
				return perr_set(e, PPLAN_EINPUT,
						"%s: step_time_s must be more than 0 s, got %g",
						xwhere, x);
			vc->measured_step_s = x;
		} else if (st == PPLAN_EINPUT) {
			return st;
		}
		if ((st = json_get_number(jme, "memory_gib", &x, xwhere, e)) == PPLAN_OK) {
			if (!(x > 0))
				return perr_set(e, PPLAN_EINPUT,
						"%s: memory_gib must be more than 0 GiB, got %g",
						xwhere, x);
			vc->measured_mem_gib = x;
		} else if (st == PPLAN_EINPUT) {
			return st;
		}
		st = PPLAN_OK;
		if (json_get_string(jme, "memory_kind", &s, where, e) == PPLAN_OK)
			snprintf(vc->memory_kind, sizeof vc->memory_kind, "%s", s);
		if (json_get_bool(jme, "oom", &oom, where, e) == PPLAN_OK)
			vc->measured_oom = oom;
	}
	if (vc->model.layers % vc->layout.pp && vc->opts.framework == FW_MEGATRON_DEEPSPEED)
		note(vc, "uneven stages: DeepSpeed partitions %d layers + 2 embeddings over pp=%d",
		     vc->model.layers, vc->layout.pp);
	if (vc->predictable) {
		enum reject why = REJECT_NONE;
		struct perr le;
		if (layout_check(&vc->layout, &vc->model, cluster_gpus(&vc->cluster),
				 &why, &le) != PPLAN_OK &&
		    !(vc->opts.framework == FW_MEGATRON_DEEPSPEED &&
		      why == REJECT_PP_LAYERS)) {
			vc->predictable = 0;
			snprintf(vc->skip_reason, sizeof vc->skip_reason, "%s", le.msg);
		}
	}
	return PPLAN_OK;
}

enum pplan_status cases_load(const char *path, struct vcase **out, int *n,
			     struct perr *e)
{
	cJSON *root = NULL;
	const cJSON *arr, *it;
	const char *schema = NULL;
	struct vcase *cases = NULL;
	int i = 0, count;
	enum pplan_status st = json_read_file(path, &root, e);

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
		if (!cJSON_IsObject(it)) {
			st = perr_set(e, PPLAN_EINPUT, "%s: case %d is not an object",
				      path, i);
			goto out;
		}
		st = load_case(it, &cases[i], path, i, e);
		if (st != PPLAN_OK)
			goto out;
		i++;
	}
	*out = cases;
	*n = i;
	cases = NULL;
out:
	free(cases);
	cJSON_Delete(root);
	return st;
}
