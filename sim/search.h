/*
 * search.h: the layout search.  Enumerates every layout that divides the
 * GPUs and the model (tp, pp, dp, cp, ep, vp, micro-batch, SP,
 * recomputation, ZeRO stage, schedule), predicts each with cost_predict,
 * counts rejections by reason, keeps the best K by step time, and the
 * best member of each strategy family (DP only, TP only, ...), or why
 * none of the family works.  The result owns its arrays: search_free.
 */
#ifndef PPLAN_SEARCH_H
#define PPLAN_SEARCH_H

#include "cost.h"

enum family {
	FAM_DP = 0, FAM_TP, FAM_PP, FAM_TP_DP, FAM_PP_DP, FAM_TP_PP, FAM_3D,
	FAM_CP, FAM_COUNT
};

const char *family_name(enum family f);
enum family family_of(const struct layout *l);

struct search_params {
	long gbs;            /* global batch, sequences */
	int top_k;           /* how many layouts to keep (1..1000) */
	int max_mbs;         /* largest micro-batch tried */
	int max_vp;          /* largest number of virtual stages tried */
	int max_cp;          /* largest context-parallel degree tried */
};

void search_params_default(struct search_params *sp);

struct search_reject {
	const char *reason;  /* stable key */
	long count;
};

struct search_family_result {
	int found;
	struct layout layout;
	struct prediction pred;
	double min_oom_bytes;    /* smallest memory need among OOM members */
	int any_oom;
	char why[200];           /* first structural reason, if nothing else */
};

struct search_result {
	long evaluated;          /* layouts enumerated */
	long predicted;          /* layouts priced by the cost model */
	long feasible;
	struct search_reject rejected[32];
	int n_rejected;
	struct layout *top_layouts;
	struct prediction *top_preds;
	int n_top;
	struct search_family_result family[FAM_COUNT];
	double seconds;
};

enum pplan_status search_run(const struct model_spec *m,
			     const struct cluster *c,
			     const struct train_opts *o,
			     const struct search_params *sp,
			     struct search_result *out, struct perr *e);

void search_free(struct search_result *r);

#endif
