/*
 * check.c: `pplan exec --check`.  The parallel run must compute the same
 * training step as one rank does: rank 0 builds the same seeded model on
 * a communicator of its own (MPI_COMM_SELF) with tp = pp = dp = 1 and the
 * same micro-batch size (so the same global batch), runs the same steps
 * on the same batches, and compares step 1's gradients element by element
 * (gradcheck.c, with rounding's bound) and the loss of every step with
 * the parallel run's; the norm of every tensor's gradient is reported.
 * The other ranks wait at a barrier meanwhile.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "exec_internal.h"

static double rel_err(double a, double b)
{
	double d = fabs(a - b), s = fabs(b) > 1e-30 ? fabs(b) : 1e-30;
	return d / s;
}

/* The losses: step s (from 1) within s times the tolerance (a rounding
 * difference in step 1's gradients moves the weights, and each step adds
 * its own); the gradient norms are reported, not judged (Adam amplifies
 * rounding in them past any fixed bound within a few steps, and step 1's
 * gradients are compared element by element instead). */
static void compare_steps(const struct run_measured *run, const struct run_measured *ref,
			  struct run_check *out, double *loss_ratio)
{
	*loss_ratio = 0;
	for (long s = 0; s < out->steps; s++) {
		double le = rel_err(run->losses[s], ref->losses[s]);
		if (!(le <= out->max_loss_rel_err))
			out->max_loss_rel_err = le;
		if (!(le / (double)(s + 1) <= *loss_ratio)) {
			*loss_ratio = le / (double)(s + 1);
			snprintf(out->worst, sizeof out->worst, "loss of step %ld: %.9g vs %.9g (bound %.3g)",
				 s + 1, run->losses[s], ref->losses[s], out->tolerance_rel * (double)(s + 1));
		}
		for (int i = 0; i < ref->ntensor_ids; i++) {
			double a = run->grad_norms[s * run->ntensor_ids + i];
			double b = ref->grad_norms[s * ref->ntensor_ids + i];
			double ge;
			if (isnan(a) && isnan(b))
				continue;
			ge = (isnan(a) || isnan(b)) ? INFINITY : rel_err(a, b);
			if (!(ge <= out->max_grad_rel_err))
				out->max_grad_rel_err = ge;
		}
	}
}

static enum pplan_status reference(exec_t *x, const struct run_measured *run,
				   struct run_check *out, struct perr *e)
{
	struct exec_opts ro = x->opt;
	struct run_measured ref;
	exec_t *rx = NULL;
	enum pplan_status st;
	double loss_ratio;

	ro.layout.tp = ro.layout.pp = ro.layout.dp = ro.layout.cp = ro.layout.ep = 1;
	ro.layout.vp = 1;
	ro.layout.sp = 0;
	ro.layout.zero = 0;
	ro.layout.recompute = RECOMPUTE_NONE;
	ro.layout.schedule = SCHED_1F1B;
	ro.fault.kind = FAULT_NONE;
	st = exec_open_comm(&ro, MPI_COMM_SELF, &rx, e);
	if (st == PPLAN_OK)
		st = exec_run(rx, &ref, e);
	if (st != PPLAN_OK) {
		perr_prefix(e, "the single-rank reference");
		exec_close(rx);
		return st;
	}
	out->steps = x->opt.warmup + x->opt.steps;
	snprintf(out->worst, sizeof out->worst, "-");
	compare_steps(run, &ref, out, &loss_ratio);
	gradcheck_compare(&x->snap, &rx->snap, gradcheck_bound(&x->opt), out);
	out->gemms_recomputed = x->integ.gemms;
	out->messages_hashed = x->integ.messages;
	snprintf(out->integrity, sizeof out->integrity, "%s", x->integ.ok ? "" : x->integ.verdict);
	out->passed = loss_ratio <= out->tolerance_rel && out->max_elem_err <= out->elem_bound &&
		      x->integ.ok;
	/* the worst: a wrong value where it was made, else the check's
	 * largest excess over its bound */
	if (!x->integ.ok)
		snprintf(out->worst, sizeof out->worst, "%s", x->integ.verdict);
	else if (out->elem_bound > 0 &&
		 out->max_elem_err / out->elem_bound > loss_ratio / out->tolerance_rel)
		snprintf(out->worst, sizeof out->worst, "%s (bound %.3g)", out->elem_worst,
			 out->elem_bound);
	run_measured_free(&ref);
	exec_close(rx);
	return PPLAN_OK;
}

enum pplan_status exec_check_run(exec_t *x, const struct run_measured *run,
				 struct run_check *out, struct perr *e)
{
	enum pplan_status st = PPLAN_OK;
	double saved = x->opt.timeout_s;

	memset(out, 0, sizeof *out);
	out->tolerance_rel = x->opt.precision == PREC_FP32 ? 1e-5 : 1e-2;
	if (x->rank == 0)
		st = reference(x, run, out, e);
	/* one rank now does the work of all: wait for it generously */
	x->opt.timeout_s = saved + 2.0 * x->size * (run ? run->step_time_s : 1.0) *
				   (double)(x->opt.steps + x->opt.warmup) + 60.0;
	{
		enum pplan_status b = exec_barrier(x, e);
		if (st == PPLAN_OK)
			st = b;
	}
	x->opt.timeout_s = saved;
	return st;
}
