/*
 * predict.h: one layout's prediction as predict and search report it:
 * the cost model's terms, with the pipeline (pp > 1) played by the event
 * simulator (sim/des.c) for step time, bubble and exposed communication.
 */
#ifndef PPLAN_PREDICT_H
#define PPLAN_PREDICT_H

#include "cost.h"

/* cost_predict, then, when opts->use_des and layout->pp > 1, des_simulate folded
 * in with des_apply.  Same contract as cost_predict. */
enum pplan_status predict_layout(const struct model_spec *model,
				 const struct cluster *cluster,
				 const struct layout *layout,
				 const struct train_opts *opts,
				 struct prediction *pred, struct perr *err);

/* The simulator's durations for pred's layout: pred's chunk costs, with each
 * chunk's forward and backward also waiting for one blocking transfer,
 * the DP reduction overlapped as opts says (none separate for ZeRO-3). */
struct des_costs;
void predict_des_costs(const struct layout *layout, const struct train_opts *opts,
		       const struct prediction *pred, struct des_costs *costs);

/* Re-prices an existing closed-form prediction pred of layout with the simulator
 * (no-op for pp = 1). */
enum pplan_status predict_simulate(const struct layout *layout,
				   const struct train_opts *opts,
				   struct prediction *pred, struct perr *err);

/* Every number of pred is possible: times finite and not negative (the step
 * and compute above zero), MFU, HFU and the bubble fraction in 0..1,
 * throughput finite and positive, memory terms finite and not negative
 * with the total at least the weights.  Anything else is a bug in the
 * model, not in the input: PPLAN_EINTERNAL with a sentence naming the
 * term, its value and the layout. */
enum pplan_status predict_check(const struct layout *layout,
				const struct prediction *pred, struct perr *err);

#endif
