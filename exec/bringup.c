/*
 * bringup.c: the executor's bring-up, in one function and a fixed order
 * (exec_open): world rank and size; the node-local rank
 * (MPI_Comm_split_type); the backend and its device, chosen by local
 * rank; this rank's coordinates from sim's one rank map; the layout's
 * groups (TP, DP, the pipeline, and the embedding group of the first and
 * last stage when they share the word embedding) by MPI_Comm_split with
 * colours from that map, each handed to the backend (which splits its
 * NCCL communicator the same way); the schedule's op list for this
 * stage; the parameter arena and the activation slots.
 *
 * What the executor does not run yet is refused here, before anything
 * is allocated, with the same sentence on every rank.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exec_internal.h"

void exec_opts_default(struct exec_opts *o)
{
	memset(o, 0, sizeof *o);
	rank_order_default(&o->order);
	o->steps = 10;
	o->warmup = 2;
	o->seed = 1234;
	o->backend = EXEC_BACKEND_AUTO;
	o->precision = PREC_FP32;
	o->timeout_s = 300;
	o->lr = 3e-4;
	o->weight_decay = 0.1;
	o->clip = 1.0;
	o->fused_attention = 0;
}

/*
 * Open MPI's choice of all-reduce algorithm, made before MPI starts.
 * Its non-blocking all-reduce (libnbc), which the executor posts for the
 * data-parallel buckets and the CPU backend for every all-reduce, picks
 * by default an algorithm that on 4 ranks of one host from 1 to 8 MiB
 * took 1.3-1.5x the time of the blocking one (bench/bench_calibrate.sh,
 * BENCHMARKS.md).  Both forms take the ring instead: bandwidth-optimal,
 * what NCCL runs and what the cost model's 2(n-1)/n bus factor assumes,
 * so that what calibrate measures is what exec runs and what a plain
 * MPI_Allreduce in the same job does.  A value the user set in the
 * environment wins; other MPIs ignore these names.
 */
void exec_mpi_defaults(void)
{
	setenv("OMPI_MCA_coll_libnbc_iallreduce_algorithm", "1", 0);
	if (!getenv("OMPI_MCA_coll_tuned_allreduce_algorithm") &&
	    !getenv("OMPI_MCA_coll_tuned_use_dynamic_rules")) {
		setenv("OMPI_MCA_coll_tuned_use_dynamic_rules", "1", 1);
		setenv("OMPI_MCA_coll_tuned_allreduce_algorithm", "4", 1);
	}
}

enum pplan_status exec_mpi_init(int *argc, char ***argv, int *rank, int *size,
				struct perr *e)
{
	int provided = 0, done = 0;
	MPI_Initialized(&done);
	if (!done)
		exec_mpi_defaults();
	if (!done && MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
		return perr_set(e, PPLAN_ESYSTEM, "MPI_Init_thread failed");
	MPI_Comm_rank(MPI_COMM_WORLD, rank);
	MPI_Comm_size(MPI_COMM_WORLD, size);
	return PPLAN_OK;
}

void exec_mpi_finalize(void)
{
	int done = 0;
	MPI_Finalized(&done);
	if (!done)
		MPI_Finalize();
}

enum pplan_status exec_agree(enum pplan_status st, struct perr *e)
{
	return exec_agree_comm(MPI_COMM_WORLD, st, e);
}

enum pplan_status exec_agree_comm(MPI_Comm comm, enum pplan_status st,
				  struct perr *e)
{
	int mine = (int)st, worst = 0, first = 0, rank = 0;
	char msg[sizeof e->msg];
	MPI_Comm_rank(comm, &rank);
	MPI_Allreduce(&mine, &worst, 1, MPI_INT, MPI_MAX, comm);
	if (worst == PPLAN_OK)
		return PPLAN_OK;
	/* the message of the lowest rank that failed */
	{
		int me = st != PPLAN_OK ? rank : 1 << 30;
		MPI_Allreduce(&me, &first, 1, MPI_INT, MPI_MIN, comm);
	}
	if (rank == first)
		snprintf(msg, sizeof msg, "%s", e->msg);
	MPI_Bcast(msg, (int)sizeof msg, MPI_CHAR, first, comm);
	snprintf(e->msg, sizeof e->msg, "%s", msg);
	return (enum pplan_status)worst;
}

void exec_abort(const char *msg, int code)
{
	char host[64] = "?";
	gethostname(host, sizeof host - 1);
	fprintf(stderr, "pplan exec: %s\n", msg);
	fflush(stderr);
	MPI_Abort(MPI_COMM_WORLD, code);
}

double exec_rank_memory_bytes(const struct exec_opts *o)
{
	MPI_Comm node;
	int local = 1;
	long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
	if (o->backend != EXEC_BACKEND_CPU || pages <= 0 || psz <= 0)
		return NAN;
	MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
	MPI_Comm_size(node, &local);
	MPI_Comm_free(&node);
	return (double)pages * (double)psz / local;
}

int exec_ranks_per_host(const exec_t *x)
{
	return x->local_size;
}

const char *exec_backend_note(const exec_t *x)
{
	return x->backend_note;
}

enum pplan_status exec_supported(const struct exec_opts *o, int size,
				 struct perr *e)
{
	const struct layout *l = &o->layout;
	const struct model_spec *m = &o->model;
	long gpus = layout_gpus(l);

	if (gpus != size)
		return perr_set(e, PPLAN_EINPUT,
				"the layout uses %ld ranks (tp %d x pp %d x dp %d x cp %d) but %d were started: run it with mpirun -np %ld",
				gpus, l->tp, l->pp, l->dp, l->cp, size, gpus);
	if (exec_fault_supported(&o->fault, size, l->pp, o->warmup + o->steps, e) != PPLAN_OK)
		return PPLAN_EINPUT;
	if (l->cp > 1 && o->model.seq % (2L * l->cp) != 0)
		return perr_set(e, PPLAN_EINPUT,
				"with cp=%d the sequence of %ld tokens must split into %d equal chunks (2 per rank)",
				l->cp, o->model.seq, 2 * l->cp);
	if (l->ep > 1 || m->num_experts > 1)
		return perr_set(e, PPLAN_EINPUT, "the executor does not run mixture-of-experts models or expert parallelism yet");
	if (l->zero > 1)
		return perr_set(e, PPLAN_EINPUT, "the executor runs zero=0 and zero=1 (the distributed optimizer), not zero=%d", l->zero);
	if (o->precision == PREC_FP16 || o->precision == PREC_FP8)
		return perr_set(e, PPLAN_EINPUT, "the executor runs fp32 and bf16, not %s (fp16 needs loss scaling, which it does not implement)",
				precision_name(o->precision));
	if (m->heads % l->tp != 0 || m->kv_heads % l->tp != 0)
		return perr_set(e, PPLAN_EINPUT,
				"tp=%d must divide the %d attention heads and the %d key/value heads of %s",
				l->tp, m->heads, m->kv_heads, m->name);
	if (m->heads % m->kv_heads != 0)
		return perr_set(e, PPLAN_EINPUT, "%s: %d key/value heads do not divide %d heads",
				m->name, m->kv_heads, m->heads);
	if (m->ffn % l->tp != 0 || m->vocab % l->tp != 0)
		return perr_set(e, PPLAN_EINPUT,
				"tp=%d must divide the MLP width %ld and the vocabulary %ld of %s",
				l->tp, m->ffn, m->vocab, m->name);
	if (m->layers % (l->pp * l->vp) != 0)
		return perr_set(e, PPLAN_EINPUT,
				"pp x vp = %d must divide the %d layers of %s (the executor runs even stages)",
				l->pp * l->vp, m->layers, m->name);
	if (l->pp_first > 0 || l->pp_last > 0 || l->pp_embed || l->pp_loss || l->pp_table)
		return perr_set(e, PPLAN_EINPUT,
				"the executor runs even pipeline stages; it does not take pp_first/pp_last, pp_embed/pp_loss or a pipeline layout string (uneven stages) yet");
	if (m->pos_embedding > 0 && m->seq > m->pos_embedding)
		return perr_set(e, PPLAN_EINPUT,
				"%s has %ld learned positions, fewer than the sequence of %ld tokens",
				m->name, m->pos_embedding, m->seq);
	if (l->vp > 64)
		return perr_set(e, PPLAN_EINPUT, "the executor runs at most 64 model chunks per rank (vp=%d)", l->vp);
	if (l->sp && l->tp > 1 && ((long)l->mbs * o->model.seq / l->cp) % l->tp != 0)
		return perr_set(e, PPLAN_EINPUT, "with sequence parallelism tp=%d must divide the %ld tokens of a microbatch on a rank",
				l->tp, (long)l->mbs * o->model.seq / l->cp);
	if (l->schedule == SCHED_ZB_H1 && l->recompute == RECOMPUTE_FULL)
		return perr_set(e, PPLAN_EINPUT, "the executor does not combine schedule=zb-h1 with recompute=full");
	if (l->gbs % ((long)l->mbs * l->dp) != 0)
		return perr_set(e, PPLAN_EINPUT, "gbs=%ld is not a multiple of mbs x dp = %ld",
				l->gbs, (long)l->mbs * l->dp);
	if (o->steps < 1 || o->warmup < 0)
		return perr_set(e, PPLAN_EINPUT, "--steps must be at least 1 and --warmup at least 0");
	return PPLAN_OK;
}

static void dims_fill(struct exec *x)
{
	const struct model_spec *m = &x->m;
	const struct layout *l = &x->l;
	struct dims *d = &x->d;
	int tp = l->tp, tr = x->rc.c[DIM_TP];
	memset(d, 0, sizeof *d);
	d->B = l->mbs;
	d->S = m->seq;
	d->T = d->B * d->S / l->cp;  /* a rank's tokens: 2 chunks of S / 2cp per sequence */
	d->Tl = tp > 1 && l->sp ? d->T / tp : d->T;
	d->C = m->hidden;
	d->Hf = m->heads;
	d->Gf = m->kv_heads;
	d->H = m->heads / tp;
	d->G = m->kv_heads / tp;
	d->D = m->head_dim;
	d->gated = mlp_is_gated(m->mlp);
	d->Ff = m->ffn;
	d->F = m->ffn / tp;
	d->F2 = d->gated ? 2 * d->F : d->F;
	d->V = m->vocab;
	d->Vl = m->vocab / tp;
	d->v0 = (long)tr * d->Vl;
	d->rms = m->norm == NORM_RMSNORM;
	d->bias = m->linear_bias;
	d->tied = m->tied_embeddings;
	d->eps = 1e-5f;
	d->P = m->pos_embedding;  /* learned absolute positions (GPT-2, OPT) */
}

/* Colour of a group along dimension `dim`: the rank with that coordinate
 * set to 0 (every member agrees on it). */
static int colour(const struct exec *x, enum dim dim)
{
	struct rank_coords rc = x->rc;
	rc.c[dim] = 0;
	return (int)layout_coords_rank(&x->l, &x->opt.order, &rc);
}

static enum pplan_status split(struct exec *x, int col, int key, MPI_Comm *comm,
			       struct be_group **g, const char *what,
			       struct perr *e)
{
	*comm = MPI_COMM_NULL;
	*g = NULL;
	if (MPI_Comm_split(x->world, col < 0 ? MPI_UNDEFINED : col, key, comm) != MPI_SUCCESS)
		return perr_set(e, PPLAN_ESYSTEM, "MPI_Comm_split failed for the %s group", what);
	/* Non-members too: NCCL splits the world collectively (backend.h);
	 * they get no group. */
	return x->be->ops->group_create(x->be, *comm, col, key, g, e);
}

static enum pplan_status groups(struct exec *x, struct perr *e)
{
	enum pplan_status st;
	int first_or_last = x->stage == 0 || x->stage == x->l.pp - 1;
	x->has_emb_group = x->d.tied && x->l.pp > 1 && first_or_last;
	if ((st = split(x, colour(x, DIM_TP), x->rc.c[DIM_TP], &x->tp_comm, &x->tp, "tensor-parallel", e)) != PPLAN_OK)
		return st;
	/* the weights' replicas: dp x cp ranks */
	{
		struct rank_coords rc = x->rc;
		int col;
		rc.c[DIM_DP] = rc.c[DIM_CP] = 0;
		col = (int)layout_coords_rank(&x->l, &x->opt.order, &rc);
		x->dpn = x->l.dp * x->l.cp;
		x->dpr = x->rc.c[DIM_DP] * x->l.cp + x->rc.c[DIM_CP];
		if ((st = split(x, col, x->dpr, &x->dp_comm, &x->dp, "data-parallel", e)) != PPLAN_OK)
			return st;
	}
	if ((st = split(x, colour(x, DIM_CP), x->rc.c[DIM_CP], &x->cp_comm, &x->cp, "context-parallel", e)) != PPLAN_OK)
		return st;
	if ((st = split(x, colour(x, DIM_PP), x->rc.c[DIM_PP], &x->pp_comm, &x->pp, "pipeline", e)) != PPLAN_OK)
		return st;
	/* every rank takes part in the split; only the two ends join */
	return split(x, x->has_emb_group ? colour(x, DIM_PP) : -1, x->stage,
		     &x->emb_comm, &x->emb, "embedding", e);
}

static enum pplan_status open_backend(struct exec *x, struct perr *e)
{
	enum pplan_status st;
	struct perr why;
	int want = x->opt.backend;
	if (want != EXEC_BACKEND_CPU) {
		enum kern_dtype dt = x->opt.precision == PREC_FP32 ? KD_F32 : KD_BF16;
		st = be_cuda_open(x->node, dt, x->world, &x->be, &why);
		if (st == PPLAN_OK) {
			snprintf(x->backend_note, sizeof x->backend_note,
				 "cuda: %s", x->be->device);
			return PPLAN_OK;
		}
		if (want == EXEC_BACKEND_CUDA)
			return perr_set(e, st == PPLAN_ENOTFOUND ? PPLAN_EINPUT : st,
					"--backend cuda: %s", why.msg);
		snprintf(x->backend_note, sizeof x->backend_note,
			 "cpu: no GPU answered (%s)", why.msg);
	} else {
		snprintf(x->backend_note, sizeof x->backend_note, "cpu: as asked (--backend cpu)");
	}
	if (x->opt.precision != PREC_FP32)
		x->opt.precision = PREC_FP32; /* the CPU backend computes in fp32 */
	return be_cpu_open(x->local_rank, &x->be, e);
}

static enum pplan_status bookkeeping(struct exec *x, struct perr *e)
{
	int n = x->chunk_layers;
	int last = -1;
	x->bwd_done = calloc((size_t)x->l.vp, sizeof *x->bwd_done);
	x->shard_off = calloc((size_t)x->nbuckets + 1, sizeof *x->shard_off);
	x->layer_last_tensor = calloc((size_t)x->l.vp * (size_t)n, sizeof(int));
	x->chunk_last_tensor = calloc((size_t)x->l.vp, sizeof(int));
	x->head_last_tensor = calloc((size_t)x->l.vp, sizeof(int));
	x->ntensor_ids = (x->m.layers + 1) * TENSOR_IDS_PER_LAYER;
	x->norms = calloc((size_t)x->ntensor_ids, sizeof *x->norms);
	if (!x->bwd_done || !x->shard_off || !x->layer_last_tensor ||
	    !x->chunk_last_tensor || !x->head_last_tensor || !x->norms)
		return perr_set(e, PPLAN_ENOMEM, "out of host memory for the executor's tables");
	for (int i = 0, s = 0; i < x->nbuckets; i++) {
		x->shard_off[i] = s;
		s += (int)params_shard_len(x, &x->buckets[i]);
	}
	for (int j = 0; j < x->l.vp; j++)
		x->head_last_tensor[j] = -1;
	/* tensors are in backward order, chunk by chunk */
	for (int i = 0; i < x->ntensors; i++) {
		const struct xtensor *t = &x->tensors[i];
		int L = x->m.layers;
		x->chunk_last_tensor[t->chunk] = i;
		if (t->id < L * TENSOR_IDS_PER_LAYER) {
			int layer = t->id / TENSOR_IDS_PER_LAYER;
			x->layer_last_tensor[t->chunk * n + layer - x->first_layer[t->chunk]] = i;
		} else if (t->id == tensor_global_id(L, GT_LNF_W) ||
			   t->id == tensor_global_id(L, GT_LNF_B) ||
			   t->id == tensor_global_id(L, GT_HEAD_W) ||
			   (t->id == tensor_global_id(L, GT_WTE) && t->chunk == x->l.vp - 1 &&
			    x->stage == x->l.pp - 1 && x->stage != 0)) {
			if (i > x->head_last_tensor[t->chunk])
				x->head_last_tensor[t->chunk] = i;
		}
		(void)last;
	}
	if (x->l.zero >= 1) {
		x->grad_shard = x->be->ops->alloc(x->be, (size_t)x->shard_len * sizeof(float));
		if (!x->grad_shard)
			return perr_set(e, PPLAN_ENOMEM, "the gradient shard does not fit");
	}
	x->norms_dev = x->be->ops->alloc(x->be, (size_t)x->ntensor_ids * sizeof(double));
	x->pack_len = 0;
	for (int i = 0; i < x->ntensors; i++)
		if (x->tensors[i].sp_partial)
			x->pack_len += x->tensors[i].rows * x->tensors[i].cols;
	if (x->pack_len > 0 && x->l.tp > 1)
		x->pack = x->be->ops->alloc(x->be, (size_t)x->pack_len * sizeof(float));
	else
		x->pack_len = 0;
	if (!x->norms_dev || (x->pack_len > 0 && !x->pack))
		return perr_set(e, PPLAN_ENOMEM, "out of memory for the gradient reductions");
	return PPLAN_OK;
}

enum pplan_status exec_open_comm(const struct exec_opts *o, MPI_Comm world,
				 exec_t **out, struct perr *e)
{
	struct exec *x = calloc(1, sizeof *x);
	enum pplan_status st;
	int *ub = NULL, flag = 0;

	*out = NULL;
	if (!x)
		return perr_set(e, PPLAN_ENOMEM, "out of host memory for the executor");
	x->opt = *o;
	x->m = o->model;
	x->l = o->layout;
	x->world = world;
	x->board_win = MPI_WIN_NULL;
	MPI_Comm_rank(world, &x->rank);
	MPI_Comm_size(world, &x->size);
	if ((st = exec_supported(o, x->size, e)) != PPLAN_OK)
		goto fail;
	MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, x->rank, MPI_INFO_NULL, &x->node);
	MPI_Comm_rank(x->node, &x->local_rank);
	MPI_Comm_size(x->node, &x->local_size);
	MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
	x->tag_ub = flag && ub && *ub > 0 ? *ub : 32767;

	if ((st = open_backend(x, e)) != PPLAN_OK)
		goto fail;
	x->esize = (size_t)kern_dtype_size(x->be->dtype);
	/* CUDA runs the fused kernel; ring attention needs it everywhere */
	if (x->be->kind == BE_CUDA || x->l.cp > 1)
		x->opt.fused_attention = 1;
	if ((st = watch_open(x, e)) != PPLAN_OK || (st = exec_clock_sync(x, e)) != PPLAN_OK)
		goto fail;

	layout_rank_coords(&x->l, &x->opt.order, x->rank, &x->rc);
	x->stage = x->rc.c[DIM_PP];
	dims_fill(x);
	x->chunk_layers = x->m.layers / (x->l.pp * x->l.vp);
	for (int j = 0; j < x->l.vp; j++)
		x->first_layer[j] = (j * x->l.pp + x->stage) * x->chunk_layers;
	x->microbatches = layout_microbatches(&x->l);
	x->opt_overlap_grad = 1;
	if ((st = groups(x, e)) != PPLAN_OK)
		goto fail;

	{
		long act = schedule_act_bytes(&x->l, x->m.hidden, x->m.seq, (int)x->esize);
		struct pipe_schedule *s;
		if ((st = schedule_build(&x->l, x->microbatches, act, &s, e)) != PPLAN_OK)
			goto fail;
		x->sched.s = s;
		x->sched.first = s->first[x->stage];
		x->sched.count = s->first[x->stage + 1] - s->first[x->stage];
	}
	if ((st = params_build(x, e)) != PPLAN_OK)
		goto fail;
	params_init(x);
	if ((st = bookkeeping(x, e)) != PPLAN_OK)
		goto fail;
	if ((st = acts_build(x, e)) != PPLAN_OK)
		goto fail;
	if (x->be->kind == BE_CPU)
		probe_cpu(x);
	*out = x;
	return PPLAN_OK;
fail:
	exec_close(x);
	return st;
}

enum pplan_status exec_open(const struct exec_opts *o, exec_t **out,
			    struct perr *e)
{
	return exec_open_comm(o, MPI_COMM_WORLD, out, e);
}

void exec_close(exec_t *x)
{
	if (!x)
		return;
	acts_free(x);
	params_free(x);
	integrity_free(x);
	if (x->be) {
		x->be->ops->free(x->be, x->grad_shard);
		x->be->ops->free(x->be, x->norms_dev);
		x->be->ops->free(x->be, x->pack);
		x->be->ops->group_free(x->be, x->tp);
		x->be->ops->group_free(x->be, x->dp);
		x->be->ops->group_free(x->be, x->pp);
		x->be->ops->group_free(x->be, x->emb);
		x->be->ops->group_free(x->be, x->cp);
	}
	watch_close(x);
	if (x->node != MPI_COMM_NULL && x->node)
		MPI_Comm_free(&x->node);
	schedule_free(x->sched.s);
	free(x->bwd_done);
	free(x->shard_off);
	free(x->layer_last_tensor);
	free(x->chunk_last_tensor);
	free(x->head_last_tensor);
	free(x->norms);
	gradcheck_free(&x->snap);
	free(x->tl.seg);
	free(x->tl.op);
	free(x->tl.post);
	free(x->tl.sync);
	if (x->be)
		x->be->ops->close(x->be);
	free(x);
}
