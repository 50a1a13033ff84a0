/*
 * params.c: the parameters of one pipeline stage.  Builds the table of
 * tensors this rank holds (local shapes under tensor parallelism, where
 * each local block sits in the global tensor), lays them out in one arena
 * in the order the backward pass finishes them, groups them into
 * data-parallel buckets (padded to a multiple of dp, so the distributed
 * optimizer's shard of a bucket is a plain slice), and initialises them
 * from the seed.
 *
 * Initialisation is a function of (seed, global tensor id, global element
 * index) only: every layout of the same model gets the same weights, so
 * `--check` can compare a parallel run with a single-rank one.  Values
 * follow Megatron-LM: normal(0, 0.02) for matrices and embeddings, 0.02 /
 * sqrt(2 * layers) for the two output projections of a layer, norms 1,
 * biases 0.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec_internal.h"

#define INIT_STD 0.02

/* ---- a counter-based normal generator ---- */

static uint64_t mix64(uint64_t z)
{
	z += 0x9e3779b97f4a7c15ULL;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* A standard normal value for (seed, a, b), Box-Muller on two hashes. */
double exec_gauss(uint64_t seed, uint64_t a, uint64_t b)
{
	uint64_t h1 = mix64(seed ^ mix64(a * 0x632be59bd9b4e019ULL + b));
	uint64_t h2 = mix64(h1 ^ 0xd6e8feb86659fd93ULL);
	double u1 = ((double)(h1 >> 11) + 0.5) / 9007199254740992.0;
	double u2 = (double)(h2 >> 11) / 9007199254740992.0;
	return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

/* ---- the tensor table ---- */

struct tensor_table {
	struct exec *x;
	int cap;
};

static struct xtensor *add(struct tensor_table *bd, int chunk, int id,
			   const char *name, long rows, long cols,
			   enum shard sh)
{
	struct exec *x = bd->x;
	struct xtensor *t;
	if (x->ntensors == bd->cap) {
		int cap = bd->cap ? 2 * bd->cap : 64;
		struct xtensor *n = realloc(x->tensors, (size_t)cap * sizeof *n);
		if (!n)
			return NULL;
		x->tensors = n;
		bd->cap = cap;
	}
	t = &x->tensors[x->ntensors++];
	memset(t, 0, sizeof *t);
	t->id = id;
	snprintf(t->name, sizeof t->name, "%s", name);
	t->chunk = chunk;
	t->rows = t->grows = rows;
	t->cols = t->gcols = cols;
	t->shard = sh;
	t->col_groups = 1;
	t->gcol_group[0] = 0;
	t->lcol_group[0] = 0;
	t->norm_owner = 1;
	t->bucket = -1;
	return t;
}

/* Splits columns in groups of global widths gw[i] over the TP group:
 * each rank holds a contiguous 1/tp of every group. */
static void split_columns(struct xtensor *t, int tp, int tr, int n,
			  const long *gw)
{
	long gsum = 0, lsum = 0;
	t->col_groups = n;
	for (int i = 0; i < n; i++) {
		long lw = gw[i] / tp;
		t->gcol_group[i] = gsum;
		t->lcol_group[i] = lsum;
		t->col0_group[i] = (long)tr * lw;
		gsum += gw[i];
		lsum += lw;
	}
	t->gcols = gsum;
	t->cols = lsum;
}

static void replicated(struct xtensor *t, const struct exec *x, int sp_partial)
{
	t->shard = SH_REPLICATED;
	t->sp_partial = sp_partial;
	/* Every TP rank holds the same values: one of them counts it. */
	t->norm_owner = x->rc.c[DIM_TP] == 0;
}

static int add_layer(struct tensor_table *bd, int chunk, int layer)
{
	struct exec *x = bd->x;
	const struct dims *d = &x->d;
	int tp = x->l.tp, tr = x->rc.c[DIM_TP], sp = x->l.sp;
	double out_std = INIT_STD / sqrt(2.0 * x->m.layers);
	char nm[40];
	struct xtensor *t;
	long gw[3];

#define NAME(s) (snprintf(nm, sizeof nm, "layer%d.%s", layer, (s)), nm)
	/* input norm */
	if (!(t = add(bd, chunk, tensor_layer_id(layer, PT_LN1_W), NAME("ln1.weight"), 1, d->C, SH_REPLICATED)))
		return -1;
	replicated(t, x, sp);
	t->init_val = 1.0f;
	if (!d->rms) {
		if (!(t = add(bd, chunk, tensor_layer_id(layer, PT_LN1_B), NAME("ln1.bias"), 1, d->C, SH_REPLICATED)))
			return -1;
		replicated(t, x, sp);
	}
	/* QKV: column-parallel over heads, [q | k | v] */
	gw[0] = d->Hf * d->D;
	gw[1] = gw[2] = d->Gf * d->D;
	if (!(t = add(bd, chunk, tensor_layer_id(layer, PT_QKV_W), NAME("attn.qkv.weight"), d->C, 0, SH_COLUMN)))
		return -1;
	split_columns(t, tp, tr, 3, gw);
	t->decay = 1;
	t->init_std = INIT_STD;
	if (d->bias) {
		if (!(t = add(bd, chunk, tensor_layer_id(layer, PT_QKV_B), NAME("attn.qkv.bias"), 1, 0, SH_COLUMN)))
			return -1;
		split_columns(t, tp, tr, 3, gw);
	}
	/* output projection: row-parallel */
	if (!(t = add(bd, chunk, tensor_layer_id(layer, PT_PROJ_W), NAME("attn.proj.weight"), d->H * d->D, d->C, SH_ROW)))
		return -1;
	t->grows = d->Hf * d->D;
	t->row0 = (long)tr * d->H * d->D;
	t->decay = 1;
	t->init_std = (float)out_std;
	if (d->bias) {
		if (!(t = add(bd, chunk, tensor_layer_id(layer, PT_PROJ_B), NAME("attn.proj.bias"), 1, d->C, SH_REPLICATED)))
			return -1;
		replicated(t, x, sp);
	}
	/* MLP norm */
	if (!(t = add(bd, chunk, tensor_layer_id(layer, PT_LN2_W), NAME("ln2.weight"), 1, d->C, SH_REPLICATED)))
		return -1;
	replicated(t, x, sp);
	t->init_val = 1.0f;
	if (!d->rms) {
		if (!(t = add(bd, chunk, tensor_layer_id(layer, PT_LN2_B), NAME("ln2.bias"), 1, d->C, SH_REPLICATED)))
			return -1;
		replicated(t, x, sp);
	}
	/* MLP up (gate and up for gated MLPs): column-parallel */
	gw[0] = gw[1] = d->Ff;
	if (!(t = add(bd, chunk, tensor_layer_id(layer, PT_FC1_W), NAME("mlp.fc1.weight"), d->C, 0, SH_COLUMN)))
		return -1;
	split_columns(t, tp, tr, d->gated ? 2 : 1, gw);
	t->decay = 1;
	t->init_std = INIT_STD;
	if (d->bias) {
		if (!(t = add(bd, chunk, tensor_layer_id(layer, PT_FC1_B), NAME("mlp.fc1.bias"), 1, 0, SH_COLUMN)))
			return -1;
		split_columns(t, tp, tr, d->gated ? 2 : 1, gw);
	}
	/* MLP down: row-parallel */
	if (!(t = add(bd, chunk, tensor_layer_id(layer, PT_FC2_W), NAME("mlp.fc2.weight"), d->F, d->C, SH_ROW)))
		return -1;
	t->grows = d->Ff;
	t->row0 = (long)tr * d->F;
	t->decay = 1;
	t->init_std = (float)out_std;
	if (d->bias) {
		if (!(t = add(bd, chunk, tensor_layer_id(layer, PT_FC2_B), NAME("mlp.fc2.bias"), 1, d->C, SH_REPLICATED)))
			return -1;
		replicated(t, x, sp);
	}
#undef NAME
	return 0;
}

/* The word embedding: vocabulary rows split over TP. */
static struct xtensor *add_wte(struct tensor_table *bd, int chunk, const char *name,
			       int norm_owner)
{
	struct exec *x = bd->x;
	struct xtensor *t = add(bd, chunk, tensor_global_id(x->m.layers, GT_WTE),
				name, x->d.Vl, x->d.C, SH_VOCAB);
	if (!t)
		return NULL;
	t->grows = x->d.V;
	t->row0 = x->d.v0;
	t->decay = 1;
	t->init_std = INIT_STD;
	t->norm_owner = norm_owner;
	return t;
}

/* Tensors of local chunk j in the order its backward finishes them: the
 * head first, then the layers from the last, then the embeddings. */
static int add_chunk(struct tensor_table *bd, int j)
{
	struct exec *x = bd->x;
	int L = x->m.layers;
	struct xtensor *t;

	if (exec_last_vstage(x, j)) {
		if (!x->d.tied) {
			if (!(t = add(bd, j, tensor_global_id(L, GT_HEAD_W), "lm_head.weight",
				      x->d.Vl, x->d.C, SH_VOCAB)))
				return -1;
			t->grows = x->d.V;
			t->row0 = x->d.v0;
			t->decay = 1;
			t->init_std = INIT_STD;
		} else if (x->stage != 0) {
			/* The tied embedding's copy on the last stage: its
			 * gradient joins stage 0's (embedding group); stage 0
			 * counts it. */
			if (!add_wte(bd, j, "lm_head.weight (tied copy)", 0))
				return -1;
		}
		if (!(t = add(bd, j, tensor_global_id(L, GT_LNF_W), "final_norm.weight", 1, x->d.C, SH_REPLICATED)))
			return -1;
		replicated(t, x, x->l.sp);
		t->init_val = 1.0f;
		if (!x->d.rms) {
			if (!(t = add(bd, j, tensor_global_id(L, GT_LNF_B), "final_norm.bias", 1, x->d.C, SH_REPLICATED)))
				return -1;
			replicated(t, x, x->l.sp);
		}
	}
	for (int i = x->chunk_layers - 1; i >= 0; i--)
		if (add_layer(bd, j, x->first_layer[j] + i) != 0)
			return -1;
	if (exec_first_vstage(x, j)) {
		if (x->d.P > 0) {
			if (!(t = add(bd, j, tensor_global_id(L, GT_WPE), "position_embedding",
				      x->d.P, x->d.C, SH_REPLICATED)))
				return -1;
			replicated(t, x, x->l.sp);
			t->init_std = INIT_STD;
		}
		if (!add_wte(bd, j, "word_embedding", 1))
			return -1;
	}
	return 0;
}

static long round_up(long v, long q)
{
	return (v + q - 1) / q * q;
}

/* Buckets per chunk: the tied embedding alone; the rest in `nb` runs of
 * whole tensors of about equal size, in backward order. */
static int make_buckets(struct exec *x, int nb)
{
	long off = 0;
	int cap = x->ntensors + 1;
	int dp = x->l.zero >= 1 ? x->dpn : 1;

	x->buckets = calloc((size_t)cap, sizeof *x->buckets);
	if (!x->buckets)
		return -1;
	x->nbuckets = 0;
	for (int i = 0; i < x->ntensors;) {
		struct xtensor *t = &x->tensors[i];
		int chunk = t->chunk;
		long total = 0, target, sum = 0;
		int end = i;
		while (end < x->ntensors && x->tensors[end].chunk == chunk)
			total += x->tensors[end].rows * x->tensors[end].cols, end++;
		target = (total + nb - 1) / nb;
		while (i < end) {
			struct bucket *b = &x->buckets[x->nbuckets++];
			int emb = x->has_emb_group &&
				  x->tensors[i].id == tensor_global_id(x->m.layers, GT_WTE);
			b->chunk = chunk;
			b->off = off;
			b->embedding = emb;
			sum = 0;
			do {
				struct xtensor *u = &x->tensors[i];
				u->off = off + sum;
				u->bucket = x->nbuckets - 1;
				sum += u->rows * u->cols;
				i++;
				if (emb)
					break;
			} while (i < end && sum < target &&
				 !(x->has_emb_group &&
				   x->tensors[i].id == tensor_global_id(x->m.layers, GT_WTE)));
			b->last_tensor = i - 1;
			b->len = round_up(sum, dp);
			off += b->len;
		}
	}
	x->nparam = off;
	return 0;
}

/* The optimizer's shard: all of every bucket without the distributed
 * optimizer, else slice dp_rank of each. */
long params_shard_begin(const struct exec *x, const struct bucket *b)
{
	if (x->l.zero < 1)
		return b->off;
	return b->off + (long)x->dpr * (b->len / x->dpn);
}

long params_shard_len(const struct exec *x, const struct bucket *b)
{
	return x->l.zero < 1 ? b->len : b->len / x->dpn;
}

static void set_pointers(struct exec *x)
{
	char *w = x->w;
	for (int i = 0; i < x->ntensors; i++) {
		struct xtensor *t = &x->tensors[i];
		void *pw = w + (size_t)t->off * x->esize;
		float *pg = x->grad + t->off;
		int L = x->m.layers;
		if (t->id < L * TENSOR_IDS_PER_LAYER) {
			int layer = t->id / TENSOR_IDS_PER_LAYER;
			int kind = t->id % TENSOR_IDS_PER_LAYER;
			int local = t->chunk * x->chunk_layers + (layer - x->first_layer[t->chunk]);
			x->lp[local].w[kind] = pw;
			x->lp[local].g[kind] = pg;
			continue;
		}
		switch (t->id - L * TENSOR_IDS_PER_LAYER) {
		case GT_WTE:
			if (exec_first_vstage(x, t->chunk)) {
				x->wte = pw;
				x->g_wte = pg;
			} else { /* the head's tied copy on the last stage */
				x->head = pw;
				x->g_head = pg;
			}
			break;
		case GT_WPE: x->wpe = pw; x->g_wpe = pg; break;
		case GT_LNF_W: x->lnf_w = pw; x->g_lnf_w = pg; break;
		case GT_LNF_B: x->lnf_b = pw; x->g_lnf_b = pg; break;
		case GT_HEAD_W: x->head = pw; x->g_head = pg; break;
		default: break;
		}
	}
	/* A tied embedding on one rank serves both ends. */
	if (x->d.tied && x->wte && !x->head && x->l.pp == 1) {
		x->head = x->wte;
		x->g_head = x->g_wte;
	}
}

enum pplan_status params_build(struct exec *x, struct perr *e)
{
	struct tensor_table bd = { x, 0 };
	long nlp = (long)x->l.vp * x->chunk_layers;

	x->lp = calloc((size_t)nlp, sizeof *x->lp);
	if (!x->lp)
		return perr_set(e, PPLAN_ENOMEM, "out of host memory for the parameter table");
	for (int j = x->l.vp - 1; j >= 0; j--)
		if (add_chunk(&bd, j) != 0)
			return perr_set(e, PPLAN_ENOMEM, "out of host memory for the parameter table");
	if (make_buckets(x, 4) != 0)
		return perr_set(e, PPLAN_ENOMEM, "out of host memory for the buckets");
	x->shard_len = 0;
	for (int i = 0; i < x->nbuckets; i++)
		x->shard_len += params_shard_len(x, &x->buckets[i]);

	x->w = x->be->ops->alloc(x->be, (size_t)x->nparam * x->esize);
	x->grad = x->be->ops->alloc(x->be, (size_t)x->nparam * sizeof(float));
	x->master = x->be->ops->alloc(x->be, (size_t)x->shard_len * sizeof(float));
	x->adam_m = x->be->ops->alloc(x->be, (size_t)x->shard_len * sizeof(float));
	x->adam_v = x->be->ops->alloc(x->be, (size_t)x->shard_len * sizeof(float));
	if (!x->w || !x->grad || !x->master || !x->adam_m || !x->adam_v)
		return perr_set(e, PPLAN_ENOMEM,
				"the stage's parameters (%ld elements) do not fit in %s memory",
				x->nparam, x->be->ops->name);
	set_pointers(x);
	return PPLAN_OK;
}

uint64_t exec_global_index(const struct xtensor *t, long r, long c)
{
	long gc = c;
	for (int g = t->col_groups - 1; g >= 0; g--)
		if (c >= t->lcol_group[g]) {
			gc = t->gcol_group[g] + t->col0_group[g] + (c - t->lcol_group[g]);
			break;
		}
	return (uint64_t)(t->row0 + r) * (uint64_t)t->gcols + (uint64_t)gc;
}

static float value(const struct exec *x, const struct xtensor *t, long r, long c)
{
	if (t->init_std <= 0)
		return t->init_val;
	return (float)(t->init_std *
		       exec_gauss(x->opt.seed, (uint64_t)t->id, exec_global_index(t, r, c)));
}

/* Writes every tensor's initial values: the compute copy, and the fp32
 * master copy of the rank's shard. */
void params_init(struct exec *x)
{
	long n = x->nparam;
	float *host = calloc((size_t)(n > 0 ? n : 1), sizeof *host);
	if (!host)
		return; /* params_build checked far larger allocations */
	for (int i = 0; i < x->ntensors; i++) {
		const struct xtensor *t = &x->tensors[i];
		for (long r = 0; r < t->rows; r++)
			for (long c = 0; c < t->cols; c++)
				host[t->off + r * t->cols + c] = value(x, t, r, c);
	}
	if (x->esize == sizeof(float)) {
		x->be->ops->to_device(x->be, x->w, host, (size_t)n * sizeof(float));
	} else {
		uint16_t *h16 = malloc((size_t)(n > 0 ? n : 1) * sizeof *h16);
		if (h16) {
			for (long i = 0; i < n; i++)
				h16[i] = kern_f32_to_bf16(host[i]);
			x->be->ops->to_device(x->be, x->w, h16, (size_t)n * sizeof *h16);
			free(h16);
		}
	}
	{
		long s = 0;
		for (int i = 0; i < x->nbuckets; i++) {
			long b0 = params_shard_begin(x, &x->buckets[i]);
			long bl = params_shard_len(x, &x->buckets[i]);
			x->be->ops->to_device(x->be, x->master + s, host + b0,
					      (size_t)bl * sizeof(float));
			s += bl;
		}
	}
	free(host);
}

void params_free(struct exec *x)
{
	if (x->be) {
		x->be->ops->free(x->be, x->w);
		x->be->ops->free(x->be, x->grad);
		x->be->ops->free(x->be, x->master);
		x->be->ops->free(x->be, x->adam_m);
		x->be->ops->free(x->be, x->adam_v);
	}
	free(x->tensors);
	free(x->buckets);
	free(x->lp);
	x->tensors = NULL;
	x->buckets = NULL;
	x->lp = NULL;
}

/* The name of global tensor id `id` of model m ("layer3.mlp.fc1.weight"),
 * or "" for an id no model uses. */
void exec_tensor_name(const struct model_spec *m, int id, char *buf, size_t len)
{
	static const char *const layer_names[PT_LAYER_COUNT] = {
		"ln1.weight", "ln1.bias", "attn.qkv.weight", "attn.qkv.bias",
		"attn.proj.weight", "attn.proj.bias", "ln2.weight", "ln2.bias",
		"mlp.fc1.weight", "mlp.fc1.bias", "mlp.fc2.weight", "mlp.fc2.bias",
	};
	static const char *const global_names[GT_COUNT] = {
		"word_embedding", "position_embedding", "final_norm.weight",
		"final_norm.bias", "lm_head.weight",
	};
	int layer = id / TENSOR_IDS_PER_LAYER, kind = id % TENSOR_IDS_PER_LAYER;
	buf[0] = '\0';
	if (layer < m->layers && kind < PT_LAYER_COUNT)
		snprintf(buf, len, "layer%d.%s", layer, layer_names[kind]);
	else if (layer == m->layers && kind < GT_COUNT)
		snprintf(buf, len, "%s", global_names[kind]);
}
