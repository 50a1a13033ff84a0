/*
 * launch_read.c: launch configurations read back (launch_read.h), Megatron-LM's
 * arguments in launch_megatron.c, NeMo's and Megatron-Bridge's recipe
 * overrides in launch_recipe.c.  The flag and key names and the defaults are
 * the frameworks' own: Megatron-LM's megatron/training/arguments.py, torchtitan 0.3's
 * config/configs.py and distributed/pipeline_parallel.py (the stage
 * count), DeepSpeed's config reference.  The shell-word splitter knows quotes, backslashes, comments
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

static void note_v(struct launch_job *o, const char *fmt, va_list ap)
{
	if (o->n_notes < LAUNCH_MAX_NOTES) {
		vsnprintf(o->notes[o->n_notes++], sizeof o->notes[0], fmt, ap);
		return;
	}
	o->dropped_notes += o->dropped_notes ? 1 : 2;
	snprintf(o->notes[LAUNCH_MAX_NOTES - 1], sizeof o->notes[0],
		 "%d further notes left out (pplan keeps %d)", o->dropped_notes, LAUNCH_MAX_NOTES - 1);
}

void launch_job_note(struct launch_job *o, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	note_v(o, fmt, ap);
	va_end(ap);
}

void lr_say(struct reader *r, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	note_v(r->out, fmt, ap);
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

enum pplan_status lr_pp_layout(struct reader *r, const char *what, const char *s, int layers,
			       int say_mtp, struct pp_layout *pl)
{
	char why[400];
	if (layout_apply_pp_layout(s, layers, &r->out->l, pl, why, sizeof why) != 0)
		return perr_set(r->e, PPLAN_EINPUT, "%s: %s %s", r->where, what, why);
	r->out->set |= LK_VP | LK_PP_FIRST | LK_PP_LAST | LK_PP_EMBED | LK_PP_LOSS;
	if (strlen(s) < sizeof r->out->pp_layout)
		snprintf(r->out->pp_layout, sizeof r->out->pp_layout, "%s", s);
	if (pl->mtp_as_layers)
		r->out->mtp_layers = pl->mtp; /* added to the model at the end (launch_read_text) */
	else if (say_mtp && pl->mtp > 0)
		lr_say(r, "the layout's %d multi-token-prediction layer%s (m) %s not priced", pl->mtp,
		       pl->mtp == 1 ? "" : "s", pl->mtp == 1 ? "is" : "are");
	return PPLAN_OK;
}

/* The zoo model `zoo` (named by the file as `config`), or --model. */
enum pplan_status lr_named_model(struct reader *r, const char *zoo, const char *config,
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
	if ((st = lr_named_model(r, zoo, what, given)) != PPLAN_OK)
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

/* ---- DeepSpeed ------------------------------------------------------------------ */

static enum pplan_status ds_long(struct reader *r, const cJSON *obj, const char *path,
				 const char *key, long lo, long *out, int *had)
{
	struct perr typed = { "" }; /* the sentence is ours: it names the path */
	enum pplan_status st = obj ? json_get_long_in(obj, key, lo, LAYOUT_MAX_GBS, out, r->where,
						      &typed)
				   : PPLAN_ENOTFOUND;
	*had = st != PPLAN_ENOTFOUND;
	if (st == PPLAN_EINPUT)
		return perr_set(r->e, PPLAN_EINPUT, "%s: %s%s must be a whole number of at least %ld",
				r->where, path, key, lo);
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
	if ((st = lr_named_model(r, NULL, "a DeepSpeed config", given)) != PPLAN_OK)
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

/* The pipeline layout put the model's MTP layers with the loss on the
 * last stage, counted as layers of the split (DeepSeek-V3's
 * "Et|(tt|)*30mL"): each is priced as one more transformer layer after
 * the model's (an MoE one where the model's last is), as the split
 * places it (sim/MODEL.md 9); its extra LM head and loss are not. */
static enum pplan_status mtp_as_layers(struct reader *r)
{
	char note[320];
	enum pplan_status st = model_add_mtp_layers(&r->out->model, r->out->mtp_layers, note,
						    sizeof note, r->e);
	if (st != PPLAN_OK) {
		perr_prefix(r->e, r->where);
		return st;
	}
	lr_say(r, "the layout's %s", note);
	return PPLAN_OK;
}

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
	if (fmt == EMIT_NEMO || fmt == EMIT_BRIDGE) {
		st = lr_read_recipe(&r, text, given);
	} else {
		if ((st = split_words(text, where, &w, e)) == PPLAN_OK)
			st = fmt == EMIT_TORCHTITAN ? read_torchtitan(&r, &w, given)
						    : lr_read_megatron(&r, &w, given);
		words_free(&w);
	}
	if (st == PPLAN_OK && out->mtp_layers > 0)
		st = mtp_as_layers(&r);
	return st;
}

static const char *format_what(enum emit_format fmt)
{
	switch (fmt) {
	case EMIT_MEGATRON: return "a Megatron-LM launch script";
	case EMIT_NEMO: return "a NeMo recipe override";
	case EMIT_TORCHTITAN: return "a torchtitan launch line";
	case EMIT_DEEPSPEED: return "a DeepSpeed config";
	case EMIT_BRIDGE: return "a Megatron-Bridge recipe override";
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
