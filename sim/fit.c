/* fit.c: the bounded pattern search of fit.h. */
#include "fit.h"
#include "units.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_ROUNDS 400
#define DEFAULT_PRIOR_WEIGHT 0.02
/* Starting step and smallest step, as shares of a constant's range. */
#define FIRST_STEP 0.125
#define LAST_STEP 1e-3
/* An improvement smaller than this is not one (floating-point noise). */
#define MIN_GAIN 1e-9

void fit_options_default(struct fit_options *fo)
{
	fo->max_rounds = DEFAULT_ROUNDS;
	fo->prior_weight = DEFAULT_PRIOR_WEIGHT;
	fo->per_case_weights = 0;
	fo->moves = NULL;
}

enum pplan_status fit_mask_parse(const char *list, unsigned char mask[FIT_MAX_CONSTANTS],
				 struct perr *e)
{
	int any = 0;
	const struct cost_param_info *t = cost_param_table(NULL);
	const char *p = list ? list : "";
	memset(mask, 0, FIT_MAX_CONSTANTS);
	while (*p) {
		char name[64];
		size_t len = strcspn(p, ",");
		const struct cost_param_info *info;
		if (len == 0 || len >= sizeof name)
			return perr_set(e, PPLAN_EINPUT,
					"--constants: '%s' is not a comma-separated list of constants",
					list);
		memcpy(name, p, len);
		name[len] = 0;
		info = cost_param_find(name);
		if (!info) {
			struct cost_params scratch = *cost_params_default();
			/* cost_param_set words the unknown name, with the list */
			return cost_param_set(&scratch, name, 0, "--constants", e);
		}
		mask[info - t] = 1;
		any = 1;
		p += len;
		if (*p == ',')
			p++;
	}
	if (!any)
		return perr_set(e, PPLAN_EINPUT, "--constants: name at least one constant");
	return PPLAN_OK;
}

static int moves(const unsigned char *mask, const struct cost_param_info *t, int i)
{
	return mask ? mask[i] != 0 : t[i].fitted;
}

static int used(const unsigned char *use, int i)
{
	return !use || use[i];
}

/* Per case: the weight that makes every source count the same. */
static void source_weights(const struct vcase *cases, int n, const unsigned char *use,
			   int per_case, double *w, int *n_sources)
{
	*n_sources = 0;
	for (int i = 0; i < n; i++) {
		int count = 0, first = 1;
		w[i] = 0;
		if (!used(use, i))
			continue;
		for (int j = 0; j < n; j++) {
			if (!used(use, j) || strcmp(cases[i].publication, cases[j].publication))
				continue;
			count++;
			if (j < i)
				first = 0;
		}
		*n_sources += first;
		w[i] = per_case ? 1.0 : 1.0 / count;
	}
}

static void errors(struct vcase *cases, int n, const unsigned char *use,
		   const double *w, const struct cost_params *params, struct fit_result *r)
{
	double wt = 0, wm = 0, st = 0, sm = 0;
	r->n_time = r->n_memory = 0;
	for (int i = 0; i < n; i++) {
		struct vcase *vc = &cases[i];
		struct prediction p;
		int has_t = isfinite(vc->measured_step_s), has_m = isfinite(vc->measured_mem_gib);
		if (!used(use, i) || !vc->predictable || vc->layout_searched || (!has_t && !has_m))
			continue;
		vc->opts.params = params;
		if (vcase_predict(vc, &p, NULL) != PPLAN_OK) {
			vc->opts.params = NULL;
			continue;
		}
		vc->opts.params = NULL;
		if (has_t && p.step_time_s > 0 && isfinite(p.step_time_s)) {
			st += w[i] * fabs(log(p.step_time_s / vc->measured_step_s));
			wt += w[i];
			r->n_time++;
		}
		if (has_m && p.mem.total > 0) {
			sm += w[i] * fabs(log(p.mem.total / GIB / vc->measured_mem_gib));
			wm += w[i];
			r->n_memory++;
		}
	}
	r->time_error = wt > 0 ? st / wt : 0;
	r->memory_error = wm > 0 ? sm / wm : 0;
}

void fit_errors(struct vcase *cases, int n, const unsigned char *use,
		const struct cost_params *params, int per_case_weights,
		struct fit_result *out)
{
	double *w = calloc((size_t)n, sizeof *w);
	memset(out, 0, sizeof *out);
	out->params = *params;
	if (!w)
		return;
	source_weights(cases, n, use, per_case_weights, w, &out->n_sources);
	errors(cases, n, use, w, params, out);
	out->objective = out->time_error + out->memory_error;
	free(w);
}

/* The pull towards the priors: squared distance in shares of the range. */
static double prior_term(const struct cost_params *p, const struct cost_params *prior,
			 double weight, const unsigned char *mask)
{
	int nt;
	const struct cost_param_info *t = cost_param_table(&nt);
	double sum = 0;
	for (int i = 0; i < nt; i++) {
		double d;
		if (!moves(mask, t, i))
			continue;
		d = (cost_param_get(p, &t[i]) - cost_param_get(prior, &t[i])) /
		    (t[i].max - t[i].min);
		sum += d * d;
	}
	return weight * sum;
}

struct search {
	struct vcase *cases;
	int n;
	const unsigned char *use;
	const double *w;
	struct cost_params prior;
	double prior_weight;
	const unsigned char *moves;
	long evals;
};

static double objective(struct search *s, const struct cost_params *p, struct fit_result *r)
{
	errors(s->cases, s->n, s->use, s->w, p, r);
	s->evals++;
	return r->time_error + r->memory_error + prior_term(p, &s->prior, s->prior_weight, s->moves);
}

enum pplan_status fit_run(struct vcase *cases, int n, const unsigned char *use,
			  const struct cost_params *start, const struct fit_options *fo,
			  struct fit_result *out, struct perr *e)
{
	int nt, nsrc;
	const struct cost_param_info *t = cost_param_table(&nt);
	double step[64], best;
	struct cost_params cur;
	struct fit_result r;
	struct search s;
	double *w = calloc((size_t)(n > 0 ? n : 1), sizeof *w);
	int rounds = fo && fo->max_rounds > 0 ? fo->max_rounds : DEFAULT_ROUNDS;

	memset(out, 0, sizeof *out);
	if (!w)
		return perr_set(e, PPLAN_ENOMEM, "fit: out of memory");
	source_weights(cases, n, use, fo && fo->per_case_weights, w, &nsrc);
	memset(&s, 0, sizeof s);
	s.cases = cases;
	s.n = n;
	s.use = use;
	s.w = w;
	cost_params_prior(&s.prior);
	s.prior_weight = fo && fo->prior_weight >= 0 ? fo->prior_weight : DEFAULT_PRIOR_WEIGHT;
	s.moves = fo ? fo->moves : NULL;
	cur = start ? *start : s.prior;
	best = objective(&s, &cur, &r);
	if (r.n_time == 0 && r.n_memory == 0) {
		free(w);
		return perr_set(e, PPLAN_EINPUT,
				"fit: no run has a measured step time or memory peak that pplan can predict");
	}
	for (int i = 0; i < nt && i < 64; i++)
		step[i] = FIRST_STEP * (t[i].max - t[i].min);
	for (int round = 0; round < rounds; round++) {
		int moving = 0;
		for (int i = 0; i < nt && i < 64; i++) {
			double *v, base, tried[2];
			double f[2];
			if (!moves(s.moves, t, i) || step[i] < LAST_STEP * (t[i].max - t[i].min))
				continue;
			moving = 1;
			v = cost_param_ref(&cur, &t[i]);
			base = *v;
			tried[0] = fmin(t[i].max, base + step[i]);
			tried[1] = fmax(t[i].min, base - step[i]);
			for (int k = 0; k < 2; k++) {
				*v = tried[k];
				f[k] = tried[k] == base ? INFINITY : objective(&s, &cur, &r);
			}
			if (f[0] < best - MIN_GAIN && f[0] <= f[1]) {
				*v = tried[0];
				best = f[0];
			} else if (f[1] < best - MIN_GAIN) {
				*v = tried[1];
				best = f[1];
			} else {
				*v = base;
				step[i] *= 0.5;
			}
		}
		if (!moving)
			break;
	}
	errors(cases, n, use, w, &cur, &r);
	out->params = cur;
	out->time_error = r.time_error;
	out->memory_error = r.memory_error;
	out->n_time = r.n_time;
	out->n_memory = r.n_memory;
	out->n_sources = nsrc;
	out->objective = best;
	out->evaluations = s.evals;
	free(w);
	return PPLAN_OK;
}
