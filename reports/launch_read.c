/*
 * launch_read.c: launch configurations read back (launch_read.h), Megatron-LM's
 * arguments in launch_megatron.c.  The flag and key names and the defaults are
 * the frameworks' own: Megatron-LM's megatron/training/arguments.py, torchtitan 0.3's
 * config/configs.py and distributed/pipeline_parallel.py (the stage
 * count), NeMo 2.0's recipes and MegatronStrategy, DeepSpeed's config
 * reference.  The shell-word splitter knows quotes, backslashes, comments
 * and bash arrays, enough for launch scripts; it expands nothing.
 */
#include "launch_read.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "jsonio.h"
#include "launch_read_internal.h"

#define LAUNCH_MAX_BYTES (4L << 20)

/* ---- words ------------------------------------------------------------------- */

static void words_free(struct words *w)
{
	free(w->buf);
	free(w->start);
	free(w->var);
}

const char *lr_word(const struct words *w, size_t i)
{
	return w->buf + w->start[i];
}

static int words_push(struct words *w, size_t start, int var)
{
	if (w->n == w->cap) {
		size_t cap = w->cap ? 2 * w->cap : 64;
		size_t *s = realloc(w->start, cap * sizeof *s);
		unsigned char *v;
		if (!s)
			return -1;
		w->start = s;
		if (!(v = realloc(w->var, cap)))
			return -1;
		w->var = v;
		w->cap = cap;
	}
	w->start[w->n] = start;
	w->var[w->n++] = (unsigned char)var;
	return 0;
}

/* Splits text as bash would split a command line, without expansions:
 * '#' at a word's start comments to the line's end, backslash-newline
 * continues, quotes group, and ( ) ; | & end words (bash arrays,
 * command lists). */
static enum pplan_status split_words(const char *text, const char *where,
				     struct words *w, struct perr *e)
{
	size_t n = strlen(text), o = 0, start = 0;
	int in = 0, var = 0;

	memset(w, 0, sizeof *w);
	if (!(w->buf = malloc(n + 1)))
		return perr_set(e, PPLAN_ENOMEM, "out of memory reading %s", where);
	for (size_t i = 0; i <= n; i++) {
		char c = text[i];
		if (c == '\0' || strchr(" \t\r\n();|&", c)) {
			if (in) {
				w->buf[o++] = '\0';
				if (words_push(w, start, var) != 0)
					return perr_set(e, PPLAN_ENOMEM, "out of memory reading %s", where);
				in = 0;
			}
			continue;
		}
		if (!in && c == '#') {
			while (text[i + 1] && text[i + 1] != '\n')
				i++;
			continue;
		}
		if (c == '\\' && text[i + 1] == '\n') {
			i++;
			if (in) { /* a continuation inside a word ends it */
				w->buf[o++] = '\0';
				if (words_push(w, start, var) != 0)
					return perr_set(e, PPLAN_ENOMEM, "out of memory reading %s", where);
				in = 0;
			}
			continue;
		}
		if (!in) {
			in = 1;
			var = 0;
			start = o;
		}
		if (c == '\\' && text[i + 1]) {
			w->buf[o++] = text[++i];
		} else if (c == '\'' || c == '"') {
			size_t j = i + 1;
			for (; text[j] && text[j] != c; j++) {
				if (c == '"' && text[j] == '\\' && text[j + 1] &&
				    strchr("\"\\$`", text[j + 1]))
					j++;
				else if (c == '"' && text[j] == '$')
					var = 1;
				w->buf[o++] = text[j];
			}
			if (!text[j])
				return perr_set(e, PPLAN_EINPUT, "%s: a %s quote is not closed",
						where, c == '"' ? "double" : "single");
			i = j;
		} else {
			if (c == '$' || c == '`')
				var = 1;
			w->buf[o++] = c;
		}
	}
	return PPLAN_OK;
}

/* ---- values ------------------------------------------------------------------- */

void lr_say(struct reader *r, const char *fmt, ...)
{
	struct launch_job *o = r->out;
	va_list ap;
	if (o->n_notes >= LAUNCH_MAX_NOTES)
		return;
	va_start(ap, fmt);
	vsnprintf(o->notes[o->n_notes++], sizeof o->notes[0], fmt, ap);
	va_end(ap);
}

enum pplan_status lr_bad_value(struct reader *r, const char *flag, const char *v,
				   int var, const char *want)
{
	if (!v)
		return perr_set(r->e, PPLAN_EINPUT, "%s: %s must be %s, got nothing", r->where,
				flag, want);
	if (var)
		return perr_set(r->e, PPLAN_EINPUT,
				"%s: %s is '%s', a shell expression: pplan reads the arguments as written, not expanded; put the value in its place",
				r->where, flag, v);
	return perr_set(r->e, PPLAN_EINPUT, "%s: %s must be %s, got '%s'", r->where, flag,
			want, v);
}

int lr_parse_long(const char *s, long lo, long hi, long *out)
{
	char *end;
	long v;
	if (!s || !*s)
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

static int parse_double(const char *s, double *out)
{
	char *end;
	double v;
	if (!s || !*s)
		return -1;
	v = strtod(s, &end);
	if (*end || !isfinite(v) || v < 0)
		return -1;
	*out = v;
	return 0;
}

/* Is v one of the '|'-separated names? */
int lr_one_of(const char *v, const char *names)
{
	size_t n = v ? strlen(v) : 0;
	for (const char *p = names; v && *p; p += strcspn(p, "|"), p += *p == '|')
		if (strcspn(p, "|") == n && !strncmp(p, v, n))
			return 1;
	return 0;
}

/* A flag's value: the next word, unless it is the next flag. */
struct flag lr_flag_at(const struct words *w, size_t i, char *name, size_t len)
{
	struct flag f = { name, NULL, 0, i + 1 };
	const char *s = lr_word(w, i), *eq = strchr(s, '=');
	size_t k = eq ? (size_t)(eq - s) : strlen(s);
	if (k >= len)
		k = len - 1;
	memcpy(name, s, k);
	name[k] = '\0';
	if (eq) {
		f.value = eq + 1;
		f.var = w->var[i];
	} else if (i + 1 < w->n && strncmp(lr_word(w, i + 1), "--", 2) != 0) {
		f.value = lr_word(w, i + 1);
		f.var = w->var[i + 1];
	}
	return f;
}

enum pplan_status lr_get_long(struct reader *r, const struct flag *f, long lo, long *out)
{
	if (lr_parse_long(f->value, lo, LAYOUT_MAX_GBS, out) != 0)
		return lr_bad_value(r, f->name, f->value, f->var,
				 lo > 0 ? "a positive whole number" : "a whole number of 0 or more");
	return PPLAN_OK;
}

enum pplan_status lr_get_int(struct reader *r, const struct flag *f, long lo, int *out)
{
	long v;
	if (lr_parse_long(f->value, lo, LAYOUT_MAX_DEGREE, &v) != 0)
		return lr_bad_value(r, f->name, f->value, f->var,
				 lo > 0 ? "a positive whole number" : "a whole number of 0 or more");
	*out = (int)v;
	return PPLAN_OK;
}

enum pplan_status lr_get_double(struct reader *r, const struct flag *f, double *out)
{
	if (parse_double(f->value, out) != 0)
		return lr_bad_value(r, f->name, f->value, f->var, "a number");
	return PPLAN_OK;
}

/* torchrun's (and the launchers') world: --nnodes and --nproc-per-node. */
enum pplan_status lr_launcher_flag(struct reader *r, const struct flag *f, int *used)
{
	long v;
	*used = 1;
	if (!strcmp(f->name, "--nnodes")) {
		if (lr_parse_long(f->value, 1, LAYOUT_MAX_DEGREE, &v) != 0)
			return lr_bad_value(r, f->name, f->value, f->var,
					 "a number of nodes (pplan prices a fixed size, not a range)");
		r->out->nodes = v;
	} else if (!strcmp(f->name, "--nproc-per-node") || !strcmp(f->name, "--nproc_per_node")) {
		if (lr_parse_long(f->value, 1, 1024, &v) != 0)
			return lr_bad_value(r, f->name, f->value, f->var, "a number of processes per node");
		r->out->gpus_per_node = v;
	} else {
		*used = 0;
	}
	return PPLAN_OK;
}

void lr_precision_aware(struct reader *r, int on, const char *avg, const char *avg_sq)
{
	const char *names = "bf16|fp16|torch.bfloat16|torch.float16";
	if (!on)
		return;
	if (lr_one_of(avg, names) && lr_one_of(avg_sq, names)) {
		r->out->switches.precision_aware_opt = 1;
		return;
	}
	lr_say(r, "the precision-aware optimizer keeps Adam's moments in fp32 here (exp_avg %s, exp_avg_sq %s): pplan prices fp32 moments and an fp32 master",
	       avg ? avg : "fp32", avg_sq ? avg_sq : "fp32");
}

/* ---- the model a file names, against --model ------------------------------------ */

enum pplan_status lr_same_shape(struct reader *r, const struct model_spec *file,
				    const struct model_spec *given)
{
	const struct { const char *what; long a, b; } k[] = {
		{ "layers", file->layers, given->layers },
		{ "hidden size", file->hidden, given->hidden },
		{ "attention heads", file->heads, given->heads },
		{ "routed experts", file->num_experts, given->num_experts },
	};
	for (size_t i = 0; i < sizeof k / sizeof k[0]; i++)
		if (k[i].a != k[i].b)
			return perr_set(r->e, PPLAN_EINPUT,
					"%s: the file's model has %ld %s, --model %s has %ld: leave out --model, or give the model the file trains",
					r->where, k[i].a, k[i].what, given->name, k[i].b);
	return PPLAN_OK;
}

/* The zoo model `zoo` (named by the file as `config`), or --model. */
static enum pplan_status named_model(struct reader *r, const char *zoo, const char *config,
				     const struct model_spec *given)
{
	const struct model_spec *z = zoo ? model_find(zoo) : NULL;
	if (z && given) {
		enum pplan_status st = lr_same_shape(r, z, given);
		if (st != PPLAN_OK)
			return st;
	}
	if (given) {
		r->out->model = *given;
		snprintf(r->out->model_note, sizeof r->out->model_note, "--model");
		return PPLAN_OK;
	}
	if (!z)
		return perr_set(r->e, PPLAN_EINPUT,
				"%s: %s names no model pplan knows: give it with --model NAME|FILE",
				r->where, config);
	r->out->model = *z;
	snprintf(r->out->model_note, sizeof r->out->model_note, "the zoo model %s, which %s names",
		 z->name, config);
	return PPLAN_OK;
}

/* ---- torchtitan 0.3 ------------------------------------------------------------ */

struct titan {
	char module[32], config[64], sched[32], reshard[16], ac[24];
	long local, global, seq, replicate, shard, tp, pp, cp, ep, first, last, lps, pmbs;
	int sp, async_tp;
};

static enum pplan_status titan_key(struct reader *r, struct titan *t, const struct flag *f)
{
	const char *n = f->name + 2;
	struct { const char *key; long *dst; long lo; } longs[] = {
		{ "training.local_batch_size", &t->local, 1 },
		{ "training.global_batch_size", &t->global, -1 },
		{ "training.seq_len", &t->seq, 1 },
		{ "parallelism.data_parallel_replicate_degree", &t->replicate, 1 },
		{ "parallelism.data_parallel_shard_degree", &t->shard, -1 },
		{ "parallelism.tensor_parallel_degree", &t->tp, 1 },
		{ "parallelism.pipeline_parallel_degree", &t->pp, 1 },
		{ "parallelism.context_parallel_degree", &t->cp, 1 },
		{ "parallelism.expert_parallel_degree", &t->ep, 1 },
		{ "parallelism.pipeline_parallel_first_stage_less_layers", &t->first, 0 },
		{ "parallelism.pipeline_parallel_last_stage_less_layers", &t->last, 0 },
		{ "parallelism.pipeline_parallel_layers_per_stage", &t->lps, 1 },
		{ "parallelism.pipeline_parallel_microbatch_size", &t->pmbs, 1 },
	};
	struct { const char *key; char *dst; size_t len; } strs[] = {
		{ "module", t->module, sizeof t->module },
		{ "config", t->config, sizeof t->config },
		{ "parallelism.pipeline_parallel_schedule", t->sched, sizeof t->sched },
		{ "parallelism.fsdp_reshard_after_forward", t->reshard, sizeof t->reshard },
		{ "activation_checkpoint.mode", t->ac, sizeof t->ac },
	};
	for (size_t k = 0; k < sizeof longs / sizeof longs[0]; k++)
		if (!strcmp(n, longs[k].key)) {
			if (lr_parse_long(f->value, longs[k].lo, LAYOUT_MAX_GBS, longs[k].dst) != 0 ||
			    (longs[k].lo < 0 && *longs[k].dst == 0))
				return lr_bad_value(r, f->name, f->value, f->var,
						 longs[k].lo < 0 ? "a positive whole number, or -1"
								 : "a whole number");
			return PPLAN_OK;
		}
	for (size_t k = 0; k < sizeof strs / sizeof strs[0]; k++)
		if (!strcmp(n, strs[k].key)) {
			if (!f->value || f->var)
				return lr_bad_value(r, f->name, f->value, f->var, "a name");
			snprintf(strs[k].dst, strs[k].len, "%s", f->value);
			return PPLAN_OK;
		}
	if (!strcmp(n, "parallelism.enable_sequence_parallel"))
		t->sp = 1;
	else if (!strcmp(n, "parallelism.no_enable_sequence_parallel"))
		t->sp = 0;
	else if (!strcmp(n, "compile.enable_async_tensor_parallel"))
		t->async_tp = 1;
	else if (!strcmp(n, "compile.no_enable_async_tensor_parallel"))
		t->async_tp = 0;
	else if (!strcmp(n, "training.mixed_precision_param") && f->value &&
		 !strcmp(f->value, "float32"))
		return perr_set(r->e, PPLAN_EINPUT,
				"%s: --training.mixed_precision_param float32 trains in fp32, which pplan does not price on GPUs",
				r->where);
	return PPLAN_OK;
}

/* Single-stage schedules take one stage per rank (torchtitan's default
 * stage count is 1 a rank for them, 2 for the others). */
static enum pplan_status titan_schedule_read(struct reader *r, const struct titan *t,
					     enum schedule *s, int *single)
{
	*single = 1;
	if (!strcmp(t->sched, "1F1B"))
		*s = SCHED_1F1B;
	else if (!strcmp(t->sched, "GPipe"))
		*s = SCHED_GPIPE;
	else if (!strcmp(t->sched, "Interleaved1F1B") || !strcmp(t->sched, "LoopedBFS") ||
		 !strcmp(t->sched, "InterleavedZeroBubble") || !strcmp(t->sched, "ZBVZeroBubble") ||
		 !strcmp(t->sched, "DualPipeV")) {
		*s = SCHED_INTERLEAVED;
		*single = 0;
		if (strcmp(t->sched, "Interleaved1F1B") != 0)
			lr_say(r, "torchtitan's %s schedule is priced as interleaved 1F1B over the same stages (pplan's zero-bubble schedule is ZB-H1, one stage per rank)",
			    t->sched);
	} else {
		return perr_set(r->e, PPLAN_EINPUT,
				"%s: --parallelism.pipeline_parallel_schedule must be one of torchtitan's schedules (1F1B, GPipe, Interleaved1F1B, LoopedBFS, InterleavedZeroBubble, ZBVZeroBubble, DualPipeV), got '%s'",
				r->where, t->sched);
	}
	return PPLAN_OK;
}

static enum pplan_status titan_pipeline(struct reader *r, const struct titan *t)
{
	struct launch_job *o = r->out;
	struct layout *l = &o->l;
	long layers = o->model.layers, units = layers + t->first + t->last, stages;
	int single;
	enum pplan_status st = titan_schedule_read(r, t, &l->schedule, &single);

	if (st != PPLAN_OK || l->pp == 1) {
		l->schedule = SCHED_1F1B;
		return st;
	}
	stages = t->lps > 0 ? (units + t->lps - 1) / t->lps : (long)l->pp * (single ? 1 : 2);
	if (stages % l->pp != 0)
		return perr_set(r->e, PPLAN_EINPUT,
				"%s: --parallelism.pipeline_parallel_layers_per_stage %ld makes %ld stages, which the %d pipeline ranks do not share evenly",
				r->where, t->lps, stages, l->pp);
	l->vp = (int)(stages / l->pp);
	if (single && l->vp != 1)
		return perr_set(r->e, PPLAN_EINPUT,
				"%s: the %s schedule runs one stage per rank, but the layers per stage make %d",
				r->where, t->sched, l->vp);
	o->set |= LK_VP | LK_SCHEDULE | LK_PP_EMBED | LK_PP_LOSS;
	l->pp_embed = t->first > 0;
	l->pp_loss = t->last > 0;
	if (t->first > 1 || t->last > 1)
		lr_say(r, "the first or last stage is more than one layer short; pplan prices the embedding and the loss as one layer each");
	if (!layout_edge_split_ok(l, (int)layers) && layers % stages == 0) {
		l->pp_embed = l->pp_loss = 0;
		lr_say(r, "torchtitan splits the layers with the embedding and the loss unevenly over the stages; pplan prices an even split of the layers alone");
	}
	return PPLAN_OK;
}

static enum pplan_status read_torchtitan(struct reader *r, const struct words *w,
					 const struct model_spec *given)
{
	struct launch_job *o = r->out;
	struct layout *l = &o->l;
	struct titan t = { .sched = "1F1B", .reshard = "default", .local = 8, .global = -1,
			   .seq = 2048, .replicate = 1, .shard = -1, .tp = 1, .pp = 1, .cp = 1,
			   .ep = 1, .first = 1, .last = 1, .pmbs = 1, .sp = 1 };
	const char *zoo = NULL;
	int fp8 = 0, used;
	long dp = 0, gpus;
	enum pplan_status st;
	char name[96], what[128];

	for (size_t i = 0; i < w->n; i++) {
		struct flag f;
		if (!strncmp(lr_word(w, i), "activation_checkpoint:", 22)) {
			snprintf(t.ac, sizeof t.ac, "%s", lr_word(w, i) + 22);
			continue;
		}
		if (strncmp(lr_word(w, i), "--", 2) != 0)
			continue;
		f = lr_flag_at(w, i, name, sizeof name);
		if ((st = lr_launcher_flag(r, &f, &used)) != PPLAN_OK)
			return st;
		for (char *c = name + 2; !used && *c; c++)
			if (*c == '-')
				*c = '_';
		if (!used && (st = titan_key(r, &t, &f)) != PPLAN_OK)
			return st;
	}
	if (!t.module[0] || !t.config[0])
		return perr_set(r->e, PPLAN_EINPUT,
				"%s: no --module and --config: torchtitan 0.3 launches a model by them",
				r->where);
	snprintf(what, sizeof what, "--module %s --config %s", t.module, t.config);
	if (emit_titan_config(t.module, t.config, &zoo, &fp8) != 0)
		zoo = NULL;
	if ((st = named_model(r, zoo, what, given)) != PPLAN_OK)
		return st;
	snprintf(o->framework, sizeof o->framework, "torchtitan");
	snprintf(o->precision, sizeof o->precision, "%s", fp8 ? "fp8" : "bf16");
	o->seq = t.seq;
	l->tp = (int)t.tp;
	l->pp = (int)t.pp;
	l->cp = (int)t.cp;
	l->ep = (int)t.ep;
	o->set |= LK_TP | LK_PP | LK_CP | LK_EP | LK_SP | LK_MBS;
	if (l->ep > 1 && l->tp > 1) { /* torchtitan's experts are not tensor-parallel */
		l->etp = 1;
		o->set |= LK_ETP;
	}
	l->sp = t.sp && l->tp > 1;
	gpus = o->nodes && o->gpus_per_node ? o->nodes * o->gpus_per_node : 0;
	if (t.shard > 0)
		dp = t.replicate * t.shard;
	else if (gpus && gpus % (t.replicate * t.tp * t.pp * t.cp) == 0)
		dp = gpus / (t.tp * t.pp * t.cp); /* shard -1: the ranks left over */
	if (dp > 0) {
		l->dp = (int)dp;
		o->set |= LK_DP;
	}
	o->zero = t.shard == 1 ? 0 : !strcmp(t.reshard, "always") ? 3
		  : !strcmp(t.reshard, "never") ? 2 : t.pp > 1 ? 2 : 3;
	if (t.replicate > 1 && t.shard != 1)
		lr_say(r, "HSDP (replicate and shard degrees both above 1) is priced as sharding over all data-parallel ranks");
	l->mbs = (int)(t.pp > 1 ? t.pmbs : t.local);
	if (t.global > 0) {
		l->gbs = t.global;
		o->set |= LK_GBS;
	} else if (dp > 0) {
		l->gbs = t.local * dp;
		o->set |= LK_GBS;
	}
	if (!t.ac[0]) {
		lr_say(r, "no activation_checkpoint:MODE: the config function's recomputation applies; pplan prices the framework's default");
	} else {
		o->set |= LK_RECOMPUTE;
		if (recompute_parse(t.ac, &l->recompute) != 0)
			return perr_set(r->e, PPLAN_EINPUT,
					"%s: activation_checkpoint:%s must be none, selective or full",
					r->where, t.ac);
	}
	o->switches.tp_overlap = t.async_tp ? FW_TPO_PIPELINED : FW_TPO_NONE;
	return titan_pipeline(r, &t);
}

/* ---- NeMo 2.0 ------------------------------------------------------------------- */

/* A Python value as the emitter writes them: True, False, None, a number,
 * a quoted string, a list of quoted strings (joined by '+'), X(). */
static void py_value(const char *v, char *buf, size_t len)
{
	size_t o = 0;
	for (; *v && o + 1 < len; v++)
		if (*v == '[' || *v == ']' || *v == '"' || *v == '\'' || *v == ' ')
			continue;
		else
			buf[o++] = *v == ',' ? '+' : *v;
	buf[o] = '\0';
	if (o > 2 && !strcmp(buf + o - 2, "()"))
		buf[o - 2] = '\0';
}

static enum pplan_status nemo_bool(struct reader *r, const char *key, const char *v, int *out)
{
	if (!strcmp(v, "True") || !strcmp(v, "False")) {
		*out = !strcmp(v, "True");
		return PPLAN_OK;
	}
	return perr_set(r->e, PPLAN_EINPUT, "%s: recipe.%s must be True or False, got '%s'",
			r->where, key, v);
}

struct nemo {
	char recipe[64], plugin[32], granularity[16], fsdp[16], shard[24], method[16];
	int dist_opt;       /* -1 not said */
	int recompute_layers, cpu_offloading;
	int precision_aware;             /* optim.config.use_precision_aware_optimizer */
	char exp_avg[24], exp_avg_sq[24]; /* their dtypes ("" fp32) */
};

static enum pplan_status nemo_assign(struct reader *r, struct nemo *nm, const char *key,
				     const char *v)
{
	struct launch_job *o = r->out;
	struct layout *l = &o->l;
	struct flag f = { key, v, 0, 0 };
	char bad[64];
	struct { const char *key; int *dst; unsigned set; } ints[] = {
		{ "trainer.strategy.tensor_model_parallel_size", &l->tp, LK_TP },
		{ "trainer.strategy.pipeline_model_parallel_size", &l->pp, LK_PP },
		{ "trainer.strategy.context_parallel_size", &l->cp, LK_CP },
		{ "trainer.strategy.expert_model_parallel_size", &l->ep, LK_EP },
		{ "trainer.strategy.expert_tensor_parallel_size", &l->etp, LK_ETP },
		{ "trainer.strategy.num_layers_in_first_pipeline_stage", &l->pp_first, LK_PP_FIRST },
		{ "trainer.strategy.num_layers_in_last_pipeline_stage", &l->pp_last, LK_PP_LAST },
		{ "data.micro_batch_size", &l->mbs, LK_MBS },
	};
	struct { const char *key; int *dst; unsigned set; } bools[] = {
		{ "trainer.strategy.sequence_parallel", &l->sp, LK_SP },
		{ "trainer.strategy.account_for_embedding_in_pipeline_split", &l->pp_embed, LK_PP_EMBED },
		{ "trainer.strategy.account_for_loss_in_pipeline_split", &l->pp_loss, LK_PP_LOSS },
		{ "trainer.strategy.ddp.overlap_grad_reduce", &o->switches.overlap_grad_reduce, 0 },
		{ "trainer.strategy.ddp.overlap_param_gather", &o->switches.overlap_param_gather, 0 },
		{ "optim.config.use_distributed_optimizer", &nm->dist_opt, 0 },
	};
	for (size_t k = 0; k < sizeof ints / sizeof ints[0]; k++)
		if (!strcmp(key, ints[k].key)) {
			o->set |= ints[k].set;
			return lr_get_int(r, &f, 1, ints[k].dst);
		}
	for (size_t k = 0; k < sizeof bools / sizeof bools[0]; k++)
		if (!strcmp(key, bools[k].key)) {
			o->set |= bools[k].set;
			return nemo_bool(r, key, v, bools[k].dst);
		}
	if (!strcmp(key, "trainer.strategy.virtual_pipeline_model_parallel_size")) {
		o->set |= LK_VP;
		if (!strcmp(v, "None"))
			return l->vp = 1, PPLAN_OK;
		return lr_get_int(r, &f, 1, &l->vp);
	}
	if (!strcmp(key, "data.global_batch_size")) {
		o->set |= LK_GBS;
		return lr_get_long(r, &f, 1, &l->gbs);
	}
	if (!strcmp(key, "data.seq_length") || !strcmp(key, "model.config.seq_length"))
		return lr_get_long(r, &f, 1, &o->seq);
	if (!strcmp(key, "trainer.strategy.use_tp_pp_dp_mapping")) {
		if (!strcmp(v, "True"))
			snprintf(o->order, sizeof o->order, "tp-cp-pp-dp");
		return PPLAN_OK;
	}
	if (!strcmp(key, "model.config.recompute_granularity"))
		return snprintf(nm->granularity, sizeof nm->granularity, "%s", v), PPLAN_OK;
	if (!strcmp(key, "model.config.recompute_method"))
		return snprintf(nm->method, sizeof nm->method, "%s", v), PPLAN_OK;
	if (!strcmp(key, "model.config.recompute_num_layers"))
		return lr_get_int(r, &f, 1, &nm->recompute_layers);
	if (!strcmp(key, "model.config.cpu_offloading"))
		return nemo_bool(r, key, v, &nm->cpu_offloading);
	if (!strcmp(key, "model.config.cpu_offloading_num_layers")) {
		o->set |= LK_OFFLOAD_LAYERS;
		return lr_get_int(r, &f, 1, &l->offload_layers);
	}
	if (!strcmp(key, "model.config.recompute_modules")) {
		o->set |= LK_RECOMPUTE_MODULES;
		if (recompute_modules_parse(v, &l->recompute_modules, bad, sizeof bad) != 0)
			return perr_set(r->e, PPLAN_EINPUT, "%s: recipe.%s does not know the module '%s'",
					r->where, key, bad);
		return PPLAN_OK;
	}
	if (!strcmp(key, "model.config.overlap_moe_expert_parallel_comm"))
		return nemo_bool(r, key, v, &o->switches.moe_a2a_overlap);
	if (!strcmp(key, "model.config.moe_shared_expert_overlap"))
		return nemo_bool(r, key, v, &o->switches.moe_shared_overlap);
	if (!strcmp(key, "optim.config.use_precision_aware_optimizer"))
		return nemo_bool(r, key, v, &nm->precision_aware);
	if (!strcmp(key, "optim.config.exp_avg_dtype"))
		return snprintf(nm->exp_avg, sizeof nm->exp_avg, "%s", v), PPLAN_OK;
	if (!strcmp(key, "optim.config.exp_avg_sq_dtype"))
		return snprintf(nm->exp_avg_sq, sizeof nm->exp_avg_sq, "%s", v), PPLAN_OK;
	if (!strcmp(key, "model.config.moe_token_dispatcher_type"))
		return o->switches.moe_dispatcher = fw_moe_dispatcher_parse(v), PPLAN_OK;
	if (!strcmp(key, "trainer.strategy.fsdp"))
		return snprintf(nm->fsdp, sizeof nm->fsdp, "%s", v), PPLAN_OK;
	if (!strcmp(key, "trainer.strategy.ddp.data_parallel_sharding_strategy"))
		return snprintf(nm->shard, sizeof nm->shard, "%s", v), PPLAN_OK;
	if (!strcmp(key, "trainer.plugins"))
		return snprintf(nm->plugin, sizeof nm->plugin, "%s", v), PPLAN_OK;
	return PPLAN_OK;
}

static enum pplan_status nemo_line(struct reader *r, struct nemo *nm, const char *line)
{
	char key[128], val[128];
	const char *p, *eq;
	long v;

	while (*line == ' ' || *line == '\t')
		line++;
	if ((p = strstr(line, ".pretrain_recipe(")) && !strncmp(line, "recipe = llm.", 13)) {
		size_t n = (size_t)(p - (line + 13));
		snprintf(nm->recipe, sizeof nm->recipe, "%.*s", (int)(n < 63 ? n : 63), line + 13);
		if ((p = strstr(line, "num_nodes=")) && sscanf(p + 10, "%ld", &v) == 1 && v > 0)
			r->out->nodes = v;
		if ((p = strstr(line, "num_gpus_per_node=")) && sscanf(p + 18, "%ld", &v) == 1 && v > 0)
			r->out->gpus_per_node = v;
		return PPLAN_OK;
	}
	if (strstr(line, "MegatronCommOverlapCallback") && (p = strstr(line, "tp_comm_overlap="))) {
		r->out->switches.tp_overlap = !strncmp(p + 16, "True", 4) ? FW_TPO_PIPELINED : FW_TPO_NONE;
		return PPLAN_OK;
	}
	if (strncmp(line, "recipe.", 7) != 0 || !(eq = strstr(line, " = ")))
		return PPLAN_OK;
	snprintf(key, sizeof key, "%.*s", (int)(eq - line - 7), line + 7);
	py_value(eq + 3, val, sizeof val);
	return nemo_assign(r, nm, key, val);
}

static enum pplan_status read_nemo(struct reader *r, const char *text,
				   const struct model_spec *given)
{
	struct launch_job *o = r->out;
	struct layout *l = &o->l;
	struct nemo nm = { .dist_opt = -1 };
	enum pplan_status st;
	char what[96];

	for (const char *s = text; *s;) {
		const char *nl = strchr(s, '\n');
		size_t n = nl ? (size_t)(nl - s) : strlen(s);
		char line[512];
		snprintf(line, sizeof line, "%.*s", (int)(n < sizeof line - 1 ? n : sizeof line - 1), s);
		if ((st = nemo_line(r, &nm, line)) != PPLAN_OK)
			return st;
		s += n + (nl != NULL);
	}
	if (!nm.recipe[0])
		return perr_set(r->e, PPLAN_EINPUT,
				"%s: no 'recipe = llm.NAME.pretrain_recipe(...)' line: pplan reads the recipe the override starts from",
				r->where);
	snprintf(what, sizeof what, "the recipe llm.%s", nm.recipe);
	if ((st = named_model(r, emit_nemo_zoo(nm.recipe), what, given)) != PPLAN_OK)
		return st;
	snprintf(o->framework, sizeof o->framework, "nemo");
	snprintf(o->precision, sizeof o->precision, "%s",
		 !strcmp(nm.plugin, "bf16_with_fp8_mixed") ? "fp8"
		 : !strcmp(nm.plugin, "fp16_mixed") ? "fp16" : "bf16");
	if (nm.granularity[0]) {
		o->set |= LK_RECOMPUTE;
		l->recompute = !strcmp(nm.granularity, "selective") ? RECOMPUTE_SELECTIVE
			       : !strcmp(nm.granularity, "full") ? RECOMPUTE_FULL : RECOMPUTE_NONE;
	}
	if (l->recompute != RECOMPUTE_SELECTIVE)
		o->set &= ~LK_RECOMPUTE_MODULES;
	if (l->recompute == RECOMPUTE_FULL && !strcmp(nm.method, "block")) {
		l->recompute_layers = nm.recompute_layers > 0 ? nm.recompute_layers : 1;
		o->set |= LK_RECOMPUTE_LAYERS;
	}
	if (!nm.cpu_offloading) {
		l->offload_layers = 0;
		o->set &= ~LK_OFFLOAD_LAYERS;
	}
	lr_precision_aware(r, nm.precision_aware, nm.exp_avg[0] ? nm.exp_avg : NULL,
			   nm.exp_avg_sq[0] ? nm.exp_avg_sq : NULL);
	if (!strcmp(nm.fsdp, "megatron"))
		o->zero = !strcmp(nm.shard, "optim_grads") ? 2 : 3;
	else if (nm.dist_opt >= 0)
		o->zero = nm.dist_opt;
	if (l->pp > 1) {
		l->schedule = l->vp > 1 ? SCHED_INTERLEAVED : SCHED_1F1B;
		o->set |= LK_SCHEDULE;
	}
	return PPLAN_OK;
}

/* ---- DeepSpeed ------------------------------------------------------------------ */

static enum pplan_status ds_long(struct reader *r, const cJSON *obj, const char *path,
				 const char *key, long lo, long *out, int *had)
{
	const cJSON *v = obj ? cJSON_GetObjectItemCaseSensitive(obj, key) : NULL;
	*had = v != NULL;
	if (!v)
		return PPLAN_OK;
	if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) ||
	    v->valuedouble < lo || v->valuedouble > (double)LAYOUT_MAX_GBS)
		return perr_set(r->e, PPLAN_EINPUT, "%s: %s%s must be a whole number of at least %ld",
				r->where, path, key, lo);
	*out = (long)v->valuedouble;
	return PPLAN_OK;
}

static int ds_enabled(const cJSON *doc, const char *key)
{
	const cJSON *o = cJSON_GetObjectItemCaseSensitive(doc, key);
	const cJSON *en = o ? cJSON_GetObjectItemCaseSensitive(o, "enabled") : NULL;
	return o && (!en || cJSON_IsTrue(en) || (cJSON_IsString(en) && !strcmp(en->valuestring, "auto")));
}

static enum pplan_status read_deepspeed(struct reader *r, const char *text,
					const struct model_spec *given)
{
	struct launch_job *o = r->out;
	struct layout *l = &o->l;
	cJSON *doc = cJSON_Parse(text);
	const cJSON *zo, *tpo, *ppo, *oc;
	long gbs = 0, mbs = 1, gas = 0, stage = 0, tp = 1, pp = 1, cp = 1;
	int h_gbs, h_mbs, h_gas, had;
	enum pplan_status st = PPLAN_OK;

	if (!doc) {
		const char *at = cJSON_GetErrorPtr();
		return perr_set(r->e, PPLAN_EINPUT, "%s: malformed JSON near byte %ld", r->where,
				at && at >= text ? (long)(at - text) : 0L);
	}
	if (!cJSON_IsObject(doc)) {
		cJSON_Delete(doc);
		return perr_set(r->e, PPLAN_EINPUT, "%s: a DeepSpeed config is a JSON object", r->where);
	}
	zo = cJSON_GetObjectItemCaseSensitive(doc, "zero_optimization");
	tpo = cJSON_GetObjectItemCaseSensitive(doc, "tensor_parallel");
	ppo = cJSON_GetObjectItemCaseSensitive(doc, "pipeline");
	if ((st = ds_long(r, doc, "", "train_batch_size", 1, &gbs, &h_gbs)) != PPLAN_OK ||
	    (st = ds_long(r, doc, "", "train_micro_batch_size_per_gpu", 1, &mbs, &h_mbs)) != PPLAN_OK ||
	    (st = ds_long(r, doc, "", "gradient_accumulation_steps", 1, &gas, &h_gas)) != PPLAN_OK ||
	    (st = ds_long(r, zo, "zero_optimization.", "stage", 0, &stage, &had)) != PPLAN_OK ||
	    (st = ds_long(r, tpo, "tensor_parallel.", "autotp_size", 1, &tp, &had)) != PPLAN_OK ||
	    (st = ds_long(r, ppo, "pipeline.", "stages", 1, &pp, &had)) != PPLAN_OK ||
	    (st = ds_long(r, doc, "", "sequence_parallel_size", 1, &cp, &had)) != PPLAN_OK)
		goto out;
	if (!h_gbs || !h_mbs) {
		st = perr_set(r->e, PPLAN_EINPUT,
			      "%s: pplan needs train_batch_size and train_micro_batch_size_per_gpu to know the batch",
			      r->where);
		goto out;
	}
	if (stage > 3) {
		st = perr_set(r->e, PPLAN_EINPUT, "%s: zero_optimization.stage must be 0 to 3, got %ld",
			      r->where, stage);
		goto out;
	}
	if (h_gas) {
		if (gbs % (mbs * gas) != 0) {
			st = perr_set(r->e, PPLAN_EINPUT,
				      "%s: train_batch_size %ld is not train_micro_batch_size_per_gpu %ld x gradient_accumulation_steps %ld x the data-parallel ranks",
				      r->where, gbs, mbs, gas);
			goto out;
		}
		l->dp = (int)(gbs / (mbs * gas));
		o->set |= LK_DP;
		o->gpus = (long)l->dp * tp * pp * cp;
	}
	if (!ds_enabled(doc, "bf16") && !ds_enabled(doc, "fp16")) {
		st = perr_set(r->e, PPLAN_EINPUT,
			      "%s: neither bf16 nor fp16 is enabled: DeepSpeed then trains in fp32, which pplan does not price on GPUs",
			      r->where);
		goto out;
	}
	if ((st = named_model(r, NULL, "a DeepSpeed config", given)) != PPLAN_OK)
		goto out;
	snprintf(o->framework, sizeof o->framework, "deepspeed");
	snprintf(o->precision, sizeof o->precision, "%s", ds_enabled(doc, "fp16") ? "fp16" : "bf16");
	l->tp = (int)tp;
	l->pp = (int)pp;
	l->cp = (int)cp;
	l->mbs = (int)mbs;
	l->gbs = gbs;
	l->sp = 0;
	l->recompute = cJSON_HasObjectItem(doc, "activation_checkpointing") ? RECOMPUTE_FULL
									 : RECOMPUTE_NONE;
	o->set |= LK_TP | LK_PP | LK_CP | LK_MBS | LK_GBS | LK_SP | LK_RECOMPUTE;
	o->zero = (int)stage;
	oc = zo ? cJSON_GetObjectItemCaseSensitive(zo, "overlap_comm") : NULL;
	o->switches.overlap_grad_reduce = cJSON_IsTrue(oc);
out:
	cJSON_Delete(doc);
	return st;
}

/* ---- the entry points ----------------------------------------------------------- */

enum pplan_status launch_read_text(enum emit_format fmt, const char *text,
				   const char *where, const struct model_spec *given,
				   struct launch_job *out, struct perr *e)
{
	struct reader r = { where, out, e };
	struct words w;
	enum pplan_status st;

	memset(out, 0, sizeof *out);
	out->fmt = fmt;
	out->zero = -1;
	fw_switches_none(&out->switches);
	layout_default(&out->l);
	if (fmt == EMIT_DEEPSPEED)
		return read_deepspeed(&r, text, given);
	if (fmt == EMIT_NEMO)
		return read_nemo(&r, text, given);
	if ((st = split_words(text, where, &w, e)) == PPLAN_OK)
		st = fmt == EMIT_TORCHTITAN ? read_torchtitan(&r, &w, given)
					    : lr_read_megatron(&r, &w, given);
	words_free(&w);
	return st;
}

static const char *format_what(enum emit_format fmt)
{
	switch (fmt) {
	case EMIT_MEGATRON: return "a Megatron-LM launch script";
	case EMIT_NEMO: return "a NeMo recipe override";
	case EMIT_TORCHTITAN: return "a torchtitan launch line";
	case EMIT_DEEPSPEED: return "a DeepSpeed config";
	case EMIT_COUNT: break;
	}
	return "a launch configuration";
}

enum pplan_status launch_read(enum emit_format fmt, const char *src,
			      const struct model_spec *given, struct launch_job *out,
			      struct perr *e)
{
	struct stat sb;
	char *text = NULL;
	enum pplan_status st;
	int words = fmt == EMIT_MEGATRON || fmt == EMIT_TORCHTITAN;

	if (!strcmp(src, "-")) {
		size_t cap = 1 << 16, n = 0, got;
		if (!(text = malloc(cap)))
			return perr_set(e, PPLAN_ENOMEM, "out of memory reading standard input");
		while ((got = fread(text + n, 1, cap - n - 1, stdin)) > 0) {
			n += got;
			if (n + 1 == cap) {
				char *t = cap >= (size_t)LAUNCH_MAX_BYTES ? NULL : realloc(text, 2 * cap);
				if (!t) {
					free(text);
					return perr_set(e, PPLAN_EINPUT,
							"standard input: more than %ld bytes, too large for %s",
							LAUNCH_MAX_BYTES, format_what(fmt));
				}
				text = t;
				cap *= 2;
			}
		}
		text[n] = '\0';
		st = launch_read_text(fmt, text, "standard input", given, out, e);
	} else if (stat(src, &sb) != 0 && words && (src[0] == '-' || strstr(src, " --"))) {
		return launch_read_text(fmt, src, "the arguments", given, out, e);
	} else if ((st = file_read(src, LAUNCH_MAX_BYTES, format_what(fmt), &text, NULL, e)) == PPLAN_OK) {
		st = launch_read_text(fmt, text, src, given, out, e);
	}
	free(text);
	return st;
}
