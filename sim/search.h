/*
 * search.h: the layout search.  Enumerates every layout that divides the
 * GPUs and the model (tp, pp, dp, cp, ep, vp, micro-batch, SP,
 * recomputation, ZeRO stage, schedule), predicts each with cost_predict,
 * counts rejections by reason (enum reject, layout.h), keeps the best K by
 * step time, and the best member of each strategy family (DP only, TP
 * only, ...), or the constraint that rules the whole family out.  The
 * result owns its arrays: search_free.
 */
#ifndef PPLAN_SEARCH_H
#define PPLAN_SEARCH_H

#include "cost.h"

enum family {
	FAM_DP = 0, FAM_TP, FAM_PP, FAM_TP_DP, FAM_PP_DP, FAM_TP_PP, FAM_3D,
	FAM_CP, FAM_COUNT
};

const char *family_name(enum family family);
enum family family_of(const struct layout *layout);

struct search_params {
	long gbs;            /* global batch, sequences */
	int top_k;           /* how many layouts to keep (1..1000) */
	int max_mbs;         /* largest micro-batch tried */
	int max_vp;          /* largest number of virtual stages tried */
	int max_cp;          /* largest context-parallel degree tried */
	/* Context parallelism is tried only while each CP rank keeps at
	 * least this many tokens of the sequence, unless no layout fits
	 * without it (0: always tried).  See sim/MODEL.md, "Search". */
	long cp_min_tokens;
	/* Keep every priced layout's step time and memory (search_point), for
	 * the plot of `pplan report html`; 0: only the best K are kept. */
	int keep_points;
	/* Rank orders tried (1 or 2): by default Megatron-LM's two,
	 * tp-cp-dp-pp and, with --use-tp-pp-dp-mapping, tp-cp-pp-dp (which
	 * Megatron-LM allows without CP and EP only). */
	int n_orders;
	struct rank_order orders[2];
	/* The practitioner's ranking (sim/MODEL.md 10, "Ranking"): layouts
	 * within this fraction of the fastest step time rank by memory
	 * headroom, in steps of SEARCH_HEADROOM_STEP of the cap, then by
	 * simplicity (fewer parallel dimensions, TP inside a node, no
	 * virtual stages), then by speed.  0: by speed alone. */
	double tolerance;
};

#define SEARCH_TOLERANCE_DEFAULT 0.01
#define SEARCH_HEADROOM_STEP 0.05

void search_params_default(struct search_params *sp);

/* A strategy family's outcome: its best member, or why it has none. */
struct search_family_result {
	int found;
	struct layout layout;
	struct rank_order order;
	struct prediction pred;
	long rejected[REJECT_COUNT];  /* members rejected, by reason */
	struct layout witness[REJECT_COUNT]; /* the first member each reason
						rejected (out of memory: the
						one closest to fitting) */
	double min_oom_bytes;         /* smallest memory need among OOM members */
	int any_oom;
	/* Without a member: the binding constraint (REJECT_OOM when some
	 * members were valid but none fit, else the reason that rejected
	 * the most members) and its sentence about its witness
	 * (reject_describe). */
	enum reject why;
	char why_msg[256];
};

/* A priced layout: what the step-time-against-memory plot draws. */
struct search_point {
	float step_time_s;       /* closed form (the survivors are re-simulated) */
	float mem_gib;           /* most-loaded GPU */
	unsigned char feasible;  /* 0: out of memory */
	unsigned char family;    /* enum family */
};

struct search_result {
	long evaluated;          /* layouts enumerated */
	long predicted;          /* layouts priced by the cost model */
	long feasible;
	long rejected[REJECT_COUNT];  /* layouts rejected, by reason */
	int cp_widened;          /* nothing fit without short-sequence CP: it was tried too */
	struct layout *top_layouts;
	struct rank_order *top_orders;   /* the rank order each was priced with */
	struct prediction *top_preds;
	int n_top;
	int fastest;             /* index in top of the fastest step (0 unless the
				    tolerance re-ranked) */
	int n_band;              /* top layouts within the tolerance of the fastest */
	struct search_family_result family[FAM_COUNT];
	double seconds;
	struct search_point *points;  /* with keep_points: every priced layout */
	long n_points;
	int points_incomplete;        /* memory ran out: points is a prefix */
};

/* opts->order is ignored: sp->orders are tried.  Fails with PPLAN_EINPUT
 * for parameters out of range (gbs < 1, top_k not in 1..1000), and with
 * PPLAN_EINTERNAL (nothing kept) at the first prediction predict_check
 * finds impossible. */
enum pplan_status search_run(const struct model_spec *model,
			     const struct cluster *cluster,
			     const struct train_opts *opts,
			     const struct search_params *sp,
			     struct search_result *out, struct perr *err);

void search_free(struct search_result *result);

/* The simplicity rank of layout on nodes of gpus_per_node GPUs: 4 x its
 * parallel dimensions above 1 (tp, pp, cp, dp, ep), + 2 when TP leaves a
 * node, + 1 with virtual stages; smaller is simpler. */
int search_simplicity(const struct layout *layout, int gpus_per_node);

/* The least memory per GPU that any out-of-memory layout of result needed, in
 * bytes; -1 when none was out of memory. */
double search_min_oom_bytes(const struct search_result *result);

/* The reasons result rejected layouts for, into out[0..n), most frequent first
 * (ties: the earlier check); returns n.  out holds REJECT_COUNT. */
int search_rejects_sorted(const struct search_result *result, enum reject *out);

#endif
