/*
 * validation.c: what `pplan validate` computes over a file of published
 * runs (validation.h); cli/cmd_validate.c prints it and
 * reports/validation_out.c writes it as pplan.validation/1.
 */
#include "validation.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fit.h"
#include "units.h"

void err_tally_add(struct err_tally *a, double err)
{
	a->sum_abs += fabs(err);
	a->n++;
	if (fabs(err) > fabs(a->worst))
		a->worst = err;
}

double err_tally_mape(const struct err_tally *a)
{
	return a->n ? a->sum_abs / a->n : NAN;
}


void validation_predict(struct vcase *cases, int n, const struct cost_params *constants,
			int closed_form, struct case_outcome *out)
{
	for (int i = 0; i < n; i++) {
		struct vcase *vc = &cases[i];
		struct case_outcome *r = &out[i];
		struct perr e = { "" };
		memset(r, 0, sizeof *r);
		r->pred.step_time_s = r->err = r->merr = r->pmem = NAN;
		r->base_step = r->base_err = r->cv_step = r->cv_err = NAN;
		vc->opts.use_des = !closed_form;
		if (!vc->predictable)
			continue;
		vc->opts.params = constants;
		if (vcase_predict(vc, &r->pred, &e) != PPLAN_OK) {
			vc->predictable = 0;
			snprintf(vc->skip_reason, sizeof vc->skip_reason, "%s", e.msg);
			r->pred.step_time_s = NAN;
			continue;
		}
		vc->opts.params = NULL;
		r->pmem = r->pred.mem.total / GIB;
		r->compared = isfinite(vc->measured_step_s);
		if (r->compared)
			r->err = 100.0 * (r->pred.step_time_s - vc->measured_step_s) / vc->measured_step_s;
		if (isfinite(vc->measured_mem_gib))
			r->merr = 100.0 * (r->pmem - vc->measured_mem_gib) / vc->measured_mem_gib;
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The rule of thumb: step = model FLOPs / (GPUs x peak x MFU), with the
 * MFU that minimises the mean absolute log error over the file: the
 * geometric median of the runs' own MFUs. */
double validation_constant_mfu(struct vcase *cases, int n, struct case_outcome *out)
{
	double *lg = calloc((size_t)n, sizeof *lg), mfu;
	int k = 0;
	if (!lg)
		return NAN;
	for (int i = 0; i < n; i++) {
		const struct vcase *vc = &cases[i];
		if (!out[i].compared || vc->layout_searched)
			continue;
		lg[k++] = log(out[i].pred.model_flops /
			      ((double)cluster_gpus(&vc->cluster) *
			       vc->cluster.gpu.peak_tflops[vc->opts.precision] * 1e12 *
			       vc->measured_step_s));
	}
	if (k == 0) {
		free(lg);
		return NAN;
	}
	qsort(lg, (size_t)k, sizeof *lg, cmp_double);
	mfu = exp(k % 2 ? lg[k / 2] : 0.5 * (lg[k / 2 - 1] + lg[k / 2]));
	for (int i = 0; i < n; i++) {
		const struct vcase *vc = &cases[i];
		if (!out[i].compared)
			continue;
		out[i].base_step = out[i].pred.model_flops /
				   ((double)cluster_gpus(&vc->cluster) *
				    vc->cluster.gpu.peak_tflops[vc->opts.precision] * 1e12 * mfu);
		out[i].base_err = 100.0 * (out[i].base_step - vc->measured_step_s) /
				  vc->measured_step_s;
	}
	free(lg);
	return mfu;
}

/* Leave one source out: fit on the rest from the priors, predict it. */
enum pplan_status validation_cross_validate(struct vcase *cases, int n, int closed_form,
					struct case_outcome *out, struct perr *e)
{
	unsigned char *train = calloc((size_t)n, 1), *done = calloc((size_t)n, 1);
	struct fit_options fo;
	enum pplan_status st = PPLAN_OK;

	if (!train || !done) {
		free(train);
		free(done);
		return perr_set(e, PPLAN_ENOMEM, "cross-validation: out of memory");
	}
	fit_options_default(&fo);
	for (int s = 0; s < n && st == PPLAN_OK; s++) {
		struct fit_result fr;
		if (done[s])
			continue;
		for (int i = 0; i < n; i++)
			train[i] = strcmp(cases[i].publication, cases[s].publication) != 0;
		st = fit_run(cases, n, train, NULL, &fo, &fr, e);
		if (st != PPLAN_OK)
			break;
		for (int i = 0; i < n; i++) {
			struct prediction p;
			struct vcase *vc = &cases[i];
			if (train[i])
				continue;
			done[i] = 1;
			if (!vc->predictable || !out[i].compared || vc->layout_searched)
				continue;
			vc->opts.use_des = !closed_form;
			vc->opts.params = &fr.params;
			if (vcase_predict(vc, &p, NULL) == PPLAN_OK) {
				out[i].cv_step = p.step_time_s;
				out[i].cv_err = 100.0 * (p.step_time_s - vc->measured_step_s) /
						vc->measured_step_s;
			}
			vc->opts.params = NULL;
		}
	}
	free(train);
	free(done);
	return st;
}

static int source_index(struct validation_summary *s, const char *label)
{
	for (int i = 0; i < s->nsrc; i++)
		if (!strcmp(s->src[i].key, label))
			return i;
	if (s->nsrc == VALIDATION_MAX_SOURCES)
		return VALIDATION_MAX_SOURCES - 1;
	snprintf(s->src[s->nsrc].key, sizeof s->src[0].key, "%s", label);
	snprintf(s->base[s->nsrc].key, sizeof s->base[0].key, "%s", label);
	snprintf(s->cv[s->nsrc].key, sizeof s->cv[0].key, "%s", label);
	return s->nsrc++;
}

void validation_summarise(const struct vcase *cases, int n, const struct case_outcome *out,
		      struct validation_summary *s)
{
	snprintf(s->all.key, sizeof s->all.key, "overall");
	snprintf(s->half.key, sizeof s->half.key, "bf16/fp16");
	snprintf(s->fp8.key, sizeof s->fp8.key, "fp8");
	snprintf(s->searched.key, sizeof s->searched.key, "layout not given");
	for (int i = 0; i < n; i++) {
		const struct vcase *vc = &cases[i];
		const struct case_outcome *r = &out[i];
		if (!vc->predictable) {
			int k;
			for (k = 0; k < s->nreason; k++)
				if (!strcmp(s->reason[k], vc->skip_reason))
					break;
			if (k == s->nreason && k < VALIDATION_MAX_REASONS) {
				snprintf(s->reason[k], sizeof s->reason[k], "%s", vc->skip_reason);
				s->nreason++;
			}
			if (k < VALIDATION_MAX_REASONS)
				s->reason_n[k]++;
			continue;
		}
		s->npred++;
		if (r->compared && vc->layout_searched) {
			err_tally_add(&s->searched, r->err);
		} else if (r->compared) {
			int k = source_index(s, vc->label);
			err_tally_add(&s->all, r->err);
			err_tally_add(&s->src[k], r->err);
			int fp8 = vc->opts.precision == PREC_FP8;
			err_tally_add(fp8 ? &s->fp8 : &s->half, r->err);
			if (isfinite(r->base_err)) {
				err_tally_add(&s->base_all, r->base_err);
				err_tally_add(&s->base[k], r->base_err);
				err_tally_add(fp8 ? &s->base_fp8 : &s->base_half, r->base_err);
			}
			if (isfinite(r->cv_err)) {
				err_tally_add(&s->cv_all, r->cv_err);
				err_tally_add(&s->cv[k], r->cv_err);
				err_tally_add(fp8 ? &s->cv_fp8 : &s->cv_half, r->cv_err);
			}
		}
		if (isfinite(r->merr))
			err_tally_add(&s->mem, r->merr);
		if (!vc->layout_searched && /* search picks a layout that fits */
		    (vc->measured_oom || isfinite(vc->measured_mem_gib) || r->compared)) {
			s->oom_total++;
			if (!r->pred.feasible == !!vc->measured_oom)
				s->oom_agree++;
		}
	}
}

