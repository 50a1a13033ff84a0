/*
 * des.h: the pipeline event simulator.  Times a schedule's op lists (see
 * schedule.h) with durations from the cost model and yields the step
 * time, per-stage busy and idle time, bubble fractions and peak in-flight
 * activations.  The closed forms of the papers are here too, for
 * comparison.
 *
 * What it models, per pipeline stage (one TP rank and one DP replica stand
 * for all, by symmetry):
 *  - one compute stream that runs the stage's F/B/W ops in program order;
 *    TP/CP/EP collectives are inside the op durations;
 *  - sends do not occupy the compute stream: a transfer starts when the
 *    producing op has finished and the stage's link in that direction
 *    (towards the next, or the previous stage) is free, lasts p2p_s, and
 *    the consumer on the peer cannot start before it arrives;
 *  - the data-parallel gradient reduction of each model chunk in
 *    dp_buckets equal buckets, bucket k (from 0) ready (k+1)/dp_buckets
 *    of the way through the chunk's last backward (or W) op, as the
 *    backward walks the layers; buckets run one after another on one DP
 *    stream; with dp_overlap = 0 they start after the stage's last op;
 *  - then the optimizer step; the step ends when the last stage finishes.
 *
 * How: every resource (compute stream, link, DP stream) serves its ops in
 * a fixed order, so instead of a time-ordered event queue the simulator
 * sweeps the stages, advancing each one as far as its received messages
 * allow; each op's start is the maximum of its resource's free time and
 * its input's arrival.  That gives the same times as an event queue in
 * O(ops) and detects a deadlocking schedule.
 *
 * Bubble fraction (sim/MODEL.md section 1): over the pipeline span, from the first
 * forward to the last backward of the step, the share of time in which a
 * stage computes nothing: 1 - busy / span.  With uniform durations and
 * free communication every stage's value equals the closed form
 * (p-1)/(m+p-1) of 1F1B.  `own_window_bubble_fraction` measures instead
 * from the stage's own first forward to its own last backward.
 */
#ifndef PPLAN_DES_H
#define PPLAN_DES_H

#include "cost.h"
#include "schedule.h"
#include "status.h"

/* How a pipeline's stages differ in layers: the chunk durations below
 * are for a stage of `ref` layers, and stage i's are scaled by its
 * layers (layout_stage_layers) over ref.  ref = 0: all stages alike. */
struct des_split {
	int layers, ref;
	enum stage_partition partition;
	int pp_first, pp_last;
	int vp, pp_embed, pp_loss;  /* the embedding/loss split (layout.h) */
	const struct pp_table *pp_table; /* a free-form split (layout.h) */
};

struct des_costs {
	double fwd_s, bwd_s;     /* one microbatch on one model chunk */
	struct des_split split;  /* stages of other sizes */
	double op_fixed_s;       /* added to every F and B (Bi) op, not scaled:
				  * the blocking transfer each waits for */
	double bwd_w_s;          /* the weight-gradient part of bwd_s (W) */
	double first_extra_fwd_s, first_extra_bwd_s; /* embedding: virtual stage 0 */
	double last_extra_fwd_s, last_extra_bwd_s;   /* LM head + loss: last virtual stage */
	double p2p_s;            /* one activation (or gradient) transfer */
	double dp_reduce_s;      /* one stage's whole gradient reduction */
	int dp_buckets;          /* buckets per model chunk, >= 1 */
	int dp_overlap;          /* buckets start during the backward */
	double optimizer_s;
	double dp_after_s;       /* DP work after the optimizer step that nothing hides
				  * (the parameter all-gather's exposed part) */
	double dp_emb_s;         /* the first and last stage's tied-embedding
				  * all-reduce, after the reduction */
};

/* Copies the durations of pred (cost.h) into out; dp_buckets = 4 and
 * dp_overlap = 1 (Megatron-LM's --overlap-grad-reduce) unless the caller
 * changes them afterwards. */
void des_costs_from_prediction(const struct prediction *pred,
			       struct des_costs *out);

struct des_stage {
	double busy_s;                 /* F, B, W compute */
	double idle_s;                 /* pipeline span - busy */
	double bubble_fraction;        /* idle_s / pipeline span */
	double first_fwd_start_s;      /* this stage's own window ... */
	double last_bwd_end_s;
	double own_window_bubble_fraction; /* idle share inside it */
	double dp_end_s;               /* its gradient reduction done (and the tied
					* embedding's all-reduce on the end stages) */
	double dp_exposed_s;           /* DP time after its last op: the reduction's
					* rest, the embedding's, the exposed gather */
	double end_s;                  /* after its optimizer step */
	long peak_inflight_chunks;     /* (mb, chunk) activations held at peak */
	double peak_inflight;          /* the same in full-stage microbatches (/vp) */
};

struct des_result {
	double step_time_s;
	double pipeline_span_s;        /* first forward to last backward */
	double bubble_fraction;        /* mean over stages */
	double bubble_s;               /* mean idle time over stages */
	double dp_exposed_s;           /* max over stages */
	double optimizer_s;
	long ops;                      /* ops simulated */
	int stages;
	struct des_stage *stage;       /* [stages] */
	/* With DES_TIMES: per op of the schedule (same index as ops[]), when
	 * it started and ended; for a RECV, when the stream reached it and
	 * when the data was there; for a SEND, the transfer.  Else NULL. */
	double *op_start_s, *op_end_s;
	/* With DES_TIMES: per stage, when each DP bucket ran. */
	int dp_buckets_per_stage;
	double *dp_start_s, *dp_end_s; /* [stages * dp_buckets_per_stage] */
};

enum des_flags { DES_TIMES = 1 };

/* Simulates schedule s with costs.  result's arrays are owned by the caller
 * (des_result_free); on failure nothing is left to free.  A schedule that
 * deadlocks gives PPLAN_EINPUT and names the stage. */
enum pplan_status des_run(const struct pipe_schedule *sched,
			  const struct des_costs *costs, unsigned flags,
			  struct des_result *result, struct perr *err);

void des_result_free(struct des_result *result);

/* Builds the schedule of layout for m microbatches, simulates it, frees it:
 * what the cost model and search call.  Durations come from costs; byte
 * counts are not needed for timing. */
enum pplan_status des_simulate(const struct layout *layout, long m,
			       const struct des_costs *costs,
			       struct des_result *result, struct perr *err);

/* Folds a simulation of pred's layout into a copy q of pred: step time,
 * bubble (time and fraction), exposed DP and p2p, and the throughput
 * figures scaled to the simulated step.  q may be pred. */
void des_apply(const struct prediction *pred, const struct des_result *result,
	       struct prediction *q);

/* The papers' bubble share of the step with uniform op durations and
 * free communication: (p-1)/(m+p-1) for GPipe and 1F1B, (p-1)/(v*m+p-1)
 * for interleaved 1F1B (Megatron-LM's (p-1)/v of the ideal time), and
 * for ZB-H1 with T_F = T_B = T_W (Qi et al.: bubble (p-1)(T_F+T_B-T_W))
 * (p-1)/(3m+p-1).  v is ignored except for interleaved. */
double des_bubble_closed_form(enum schedule kind, int p, long m, int v);

#endif
