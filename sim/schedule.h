/*
 * schedule.h: pipeline schedules as per-stage op lists.
 *
 * For a layout (pp stages, vp model chunks per stage, a schedule kind) and
 * a number of microbatches m, schedule_build writes down, for every
 * pipeline stage, the exact ordered list of what that stage does in one
 * step: forward and backward of microbatch i on its local model chunk j,
 * and the point-to-point sends and receives of activations (forward) and
 * activation gradients (backward) with their peer stage and byte count.
 * This op list is the single definition of a schedule: the event
 * simulator (des.h) times it, the executor replays it.
 *
 * Model chunks: stage s holds local chunks j = 0..vp-1; local chunk j of
 * stage s is virtual stage (model chunk) j*pp + s, Megatron-LM's
 * placement.  Activations flow from virtual stage k to k+1, i.e. from
 * stage s to s+1, and from the last stage back to stage 0 between chunks.
 *
 * Schedules (orders as the frameworks run them):
 *  - GPipe: all m forwards, then all m backwards (microbatch 0 first).
 *  - 1F1B (PipeDream-Flush, Megatron-LM forward_backward_pipelining_
 *    without_interleaving): stage s runs min(pp-s-1, m) warm-up forwards,
 *    then pairs (forward, backward), then the remaining backwards.
 *  - interleaved 1F1B (Megatron-LM forward_backward_pipelining_with_
 *    interleaving): m*vp virtual microbatches; warm-up 2*(pp-s-1) +
 *    (vp-1)*pp of them (all of them when m == pp), the chunk of virtual
 *    microbatch k is (k mod pp*vp) / pp (reversed for backward) and its
 *    microbatch (k / (pp*vp))*pp + k mod pp.  Needs vp >= 2, pp >= 2 and m
 *    a multiple of pp, as Megatron-LM does.
 *  - ZB-H1 (Qi et al. 2023, "Zero Bubble Pipeline Parallelism", the
 *    handcrafted schedule with 1F1B's memory): backward split into B (input
 *    gradient) and W (weight gradient); stage s runs pp-s-1 warm-up
 *    forwards, s pairs (F, B) with W deferred, then triples (F, B, W),
 *    then (B, W), then the s deferred W: the W ops fill the cool-down.
 *
 * Program order of the communication ops: a RECV sits right before the
 * compute op that consumes it (the stage must have the data by then), a
 * SEND right after the op that produced it.  Neither occupies the
 * compute stream; an executor posts receives early (non-blocking).
 */
#ifndef PPLAN_SCHEDULE_H
#define PPLAN_SCHEDULE_H

#include "layout.h"
#include "status.h"

enum op_kind {
	OP_FWD = 0,     /* forward of (mb, chunk) */
	OP_BWD,         /* whole backward (input and weight gradients) */
	OP_BWD_INPUT,   /* zero-bubble "B": input gradient only */
	OP_BWD_WEIGHT,  /* zero-bubble "W": weight gradient only */
	OP_SEND_ACT,    /* activation of (mb, chunk) to peer (next stage) */
	OP_RECV_ACT,    /* activation for (mb, chunk) from peer */
	OP_SEND_GRAD,   /* input gradient of (mb, chunk) to peer (previous) */
	OP_RECV_GRAD,   /* output gradient for (mb, chunk) from peer */
	OP_KIND_COUNT
};

const char *op_kind_name(enum op_kind kind);   /* "F", "B", "Bi", "W", ... */
int op_is_compute(enum op_kind kind);

struct sched_op {
	int kind;    /* enum op_kind */
	int mb;      /* microbatch, 0..m-1 */
	int chunk;   /* local model chunk on this stage, 0..vp-1 */
	int peer;    /* stage sent to / received from; -1 for compute ops */
	long bytes;  /* bytes moved by a SEND/RECV; 0 for compute ops */
};

/* Plain data in one allocation; free with schedule_free.  Stage s's ops
 * are ops[first[s]] .. ops[first[s+1]-1], in program order. */
struct pipe_schedule {
	enum schedule kind;
	int pp, vp;
	long microbatches;     /* m, per pipeline per step */
	long act_bytes;        /* one activation (or its gradient) transfer */
	long nops;             /* all stages */
	long *first;           /* [pp + 1] */
	struct sched_op *ops;  /* [nops] */
};

/* The most chunk-microbatches (pp * vp * m) a schedule is built for
 * (docs/limits.md): about 32 MB of ops and 40 ms of simulation.  Past it
 * predict, search and validate price the pipeline with the closed forms
 * (the simulated and closed-form bubbles agree within a fraction of a
 * percent once m is that large) and simulate refuses. */
#define SCHEDULE_MAX_CHUNK_MBS (1L << 18)

/* pp * vp * m, saturating (no overflow for any long m). */
long schedule_chunk_microbatches(const struct layout *layout, long microbatches);

/* Builds the op lists of layout's schedule (layout->pp, layout->vp, layout->schedule)
 * for `microbatches` microbatches; act_bytes is the size of one
 * activation transfer (see schedule_act_bytes), recorded on the comm ops.
 * Invalid combinations (interleaved with vp < 2 or m not a multiple of pp,
 * gpipe/1f1b/zb-h1 with vp > 1, m < 1 ...) give PPLAN_EINPUT and one
 * sentence.  *out is owned by the caller (schedule_free). */
enum pplan_status schedule_build(const struct layout *layout, long microbatches,
				 long act_bytes, struct pipe_schedule **out,
				 struct perr *err);

void schedule_free(struct pipe_schedule *sched);

/* Bytes of one activation passed between stages: mbs * seq / cp / (tp if
 * sequence parallel) * hidden * bytes_per_elem (2 for bf16). */
long schedule_act_bytes(const struct layout *layout, long hidden, long seq,
			int bytes_per_elem);

/* Virtual stage (global model chunk index) of local chunk j on stage s. */
int schedule_vstage(const struct pipe_schedule *sched, int stage, int chunk);

/* Peak number of (microbatch, chunk) activations stage s holds: forwards
 * done whose backward (W for zero-bubble) is not.  Depends on the order
 * only, not on durations.  Divide by vp for full-stage microbatches. */
long schedule_peak_inflight(const struct pipe_schedule *sched, int stage);

/* Checks the invariants every schedule must satisfy: each stage runs
 * every (mb, chunk) forward and backward (B and W) exactly once, no
 * backward before its forward, no W before its B, every RECV has its
 * SEND on the peer, communication only between neighbouring virtual
 * stages.  A sentence names the first violation.  Used by tests. */
enum pplan_status schedule_check(const struct pipe_schedule *sched,
				 struct perr *err);

#endif
