/*
 * tune_out.c: pplan.tune/1, what `pplan tune` ran, measured and refitted
 * (tune_out.h).
 */
#include "tune_out.h"

#include <math.h>
#include <stdio.h>

#include "jsonio.h"
#include "version.h"

double tune_err_pct(double predicted, double measured)
{
	return predicted > 0 && measured > 0 ? 100.0 * (predicted / measured - 1.0) : NAN;
}

static cJSON *run_json(const struct tune_run *r, int i)
{
	cJSON *o = cJSON_CreateObject();
	char lb[256];
	layout_format(&r->layout, lb, sizeof lb);
	cJSON_AddNumberToObject(o, "run", i + 1);
	cJSON_AddStringToObject(o, "family", family_name(r->fam));
	cJSON_AddStringToObject(o, "layout", lb);
	cJSON_AddStringToObject(o, "status", r->ok ? "ok" : "failed");
	if (!r->ok)
		cJSON_AddStringToObject(o, "failure", r->why);
	cJSON_AddNumberToObject(o, "predicted_rank", r->rank_before);
	if (r->rank_after > 0)
		cJSON_AddNumberToObject(o, "measured_rank", r->rank_after);
	else
		cJSON_AddNullToObject(o, "measured_rank");
	json_add_number_or_null(o, "predicted_step_time_s", r->pred.step_time_s);
	json_add_number_or_null(o, "measured_step_time_s", r->ok ? r->measured_s : NAN);
	json_add_number_or_null(o, "error_pct", r->ok ? tune_err_pct(r->pred.step_time_s, r->measured_s) : NAN);
	json_add_number_or_null(o, "refit_step_time_s", r->refit_s);
	json_add_number_or_null(o, "refit_error_pct", r->ok ? tune_err_pct(r->refit_s, r->measured_s) : NAN);
	cJSON_AddStringToObject(o, "report", r->report);
	cJSON_AddStringToObject(o, "log", r->log);
	return o;
}

cJSON *tune_out_json(const struct tune_doc *d)
{
	const struct job *in = d->job;
	const struct tune_run *runs = d->runs;
	const struct tune_outcome *t = d->outcome;
	cJSON *doc = cJSON_CreateObject(), *arr, *fit, *cs, *b;
	int nt;
	const struct cost_param_info *tab = cost_param_table(&nt);
	cJSON_AddStringToObject(doc, "schema", "pplan.tune/1");
	cJSON_AddStringToObject(doc, "command", d->command);
	cJSON_AddStringToObject(doc, "version", PPLAN_VERSION);
	cJSON_AddStringToObject(doc, "git", PPLAN_GIT_HASH);
	cJSON_AddStringToObject(doc, "model", in->model.name);
	cJSON_AddStringToObject(doc, "gpu", in->cluster.gpu.name);
	cJSON_AddNumberToObject(doc, "gpus", (double)cluster_gpus(&in->cluster));
	cJSON_AddNumberToObject(doc, "seq", (double)in->opts.seq);
	cJSON_AddNumberToObject(doc, "global_batch", (double)in->global_batch);
	cJSON_AddStringToObject(doc, "mode", d->families ? "families" : "best");
	cJSON_AddStringToObject(doc, "launcher", d->launcher);
	cJSON_AddNumberToObject(doc, "steps", (double)d->steps);
	cJSON_AddNumberToObject(doc, "warmup", (double)d->warmup);
	if (in->profile_arg)
		cJSON_AddStringToObject(doc, "profile", in->profile_arg);
	else
		cJSON_AddNullToObject(doc, "profile");
	arr = cJSON_AddArrayToObject(doc, "runs");
	for (int i = 0; i < t->n; i++)
		cJSON_AddItemToArray(arr, run_json(&runs[i], i));
	fit = cJSON_AddObjectToObject(doc, "refit");
	cJSON_AddNumberToObject(fit, "runs", t->after.n_time);
	cJSON_AddNumberToObject(fit, "mean_abs_log_error_before", t->before.time_error);
	cJSON_AddNumberToObject(fit, "mean_abs_log_error_after", t->after.time_error);
	cs = cJSON_AddObjectToObject(fit, "constants");
	for (int i = 0; i < nt; i++) {
		cJSON *c;
		if (!t->mask[i])
			continue;
		c = cJSON_AddObjectToObject(cs, tab[i].name);
		cJSON_AddNumberToObject(c, "before", cost_param_get(t->start, &tab[i]));
		cJSON_AddNumberToObject(c, "after", cost_param_get(&t->after.params, &tab[i]));
	}
	b = cJSON_AddObjectToObject(doc, "booked");
	if (t->booked >= 0) {
		char lb[256];
		layout_format(&runs[t->booked].layout, lb, sizeof lb);
		cJSON_AddStringToObject(b, "layout", lb);
		cJSON_AddNumberToObject(b, "measured_step_time_s", runs[t->booked].measured_s);
		cJSON_AddNumberToObject(b, "predicted_rank", runs[t->booked].rank_before);
	}
	cJSON_AddNumberToObject(doc, "runs_that_moved", t->moved);
	cJSON_AddNumberToObject(doc, "predicted_best_measured_rank", t->best_pred_rank);
	b = cJSON_AddObjectToObject(doc, "refit_best");
	cJSON_AddStringToObject(b, "layout", t->refit_best);
	json_add_number_or_null(b, "predicted_step_time_s", t->refit_best_s);
	cJSON_AddBoolToObject(b, "measured", t->refit_best_run >= 0);
	return doc;
}

