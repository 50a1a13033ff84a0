/*
 * fault.c: `pplan exec --fault RANK:STEP:KIND`, the failures the executor
 * must survive and the wrong results --check must catch, on purpose.
 * KIND is one of
 *   exit         the rank exits with status 1 at the start of step STEP
 *   crash        the rank crashes there (SIGSEGV, as a bad pointer would)
 *   kill         the rank is killed there (SIGKILL, as the OOM killer does)
 *   hang         the rank stops there and never answers again
 *   slow:MS      the rank sleeps MS ms at the start of step STEP and of
 *                every later one (pplan tune's layout slowed on purpose)
 *   gemm:REL     the first forward GEMM of step STEP on that rank has one
 *                output element (the middle one) multiplied by 1 + REL
 *   message:REL  the first pipeline message the rank sends in step STEP
 *                has its middle element multiplied by 1 + REL (pp > 1)
 * Steps count from 1, warm-up included.  PPLAN_EXEC_FAULT takes the same
 * text where a launcher cannot pass the option.  --check's single-rank
 * reference never has a fault.
 */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "exec_internal.h"

static const struct {
	const char *name;
	enum exec_fault_kind kind;
	int valued;              /* takes :VALUE */
} kinds[] = {
	{ "exit", FAULT_EXIT, 0 },   { "crash", FAULT_CRASH, 0 },
	{ "kill", FAULT_KILL, 0 },   { "hang", FAULT_HANG, 0 },   { "slow", FAULT_SLOW, 1 },
	{ "gemm", FAULT_GEMM, 1 },   { "message", FAULT_MESSAGE, 1 },
	/* the names the test hook had before --fault */
	{ "sleep", FAULT_HANG, 0 },  { "delay", FAULT_SLOW, 1 },
};

#define FAULT_USAGE "--fault must be RANK:STEP:KIND with KIND exit, crash, kill, hang, slow:MS, gemm:REL or message:REL"

enum pplan_status exec_fault_parse(const char *spec, struct exec_fault *f, struct perr *e)
{
	char name[16] = "", *end;
	const char *p = spec, *colon;
	long rank, step;
	double value = 0;

	memset(f, 0, sizeof *f);
	if (!spec || !*spec)
		return PPLAN_OK;
	rank = strtol(p, &end, 10);
	if (end == p || *end != ':' || rank < 0 || rank > 1000000)
		return perr_set(e, PPLAN_EINPUT, FAULT_USAGE " (RANK from 0), got '%.80s'", spec);
	p = end + 1;
	step = strtol(p, &end, 10);
	if (end == p || *end != ':' || step < 1 || step > 1000000)
		return perr_set(e, PPLAN_EINPUT, FAULT_USAGE " (STEP from 1), got '%.80s'", spec);
	p = end + 1;
	colon = strchr(p, ':');
	snprintf(name, sizeof name, "%.*s", colon ? (int)(colon - p) : (int)strlen(p), p);
	for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
		if (strcmp(name, kinds[i].name) != 0)
			continue;
		if (kinds[i].valued != (colon != NULL))
			return perr_set(e, PPLAN_EINPUT, FAULT_USAGE " (%s %s value), got '%.80s'", name,
					kinds[i].valued ? "needs a" : "takes no", spec);
		if (colon) {
			value = strtod(colon + 1, &end);
			if (end == colon + 1 || *end || !isfinite(value) ||
			    (kinds[i].kind == FAULT_SLOW ? !(value >= 1 && value <= 3600000) : value == 0))
				return perr_set(e, PPLAN_EINPUT, "%s",
						kinds[i].kind == FAULT_SLOW
						? "--fault slow:MS needs 1 to 3600000 milliseconds"
						: "--fault gemm:REL and message:REL need a non-zero finite relative change");
		}
		f->kind = kinds[i].kind;
		f->rank = (int)rank;
		f->step = step;
		f->value = value;
		return PPLAN_OK;
	}
	return perr_set(e, PPLAN_EINPUT, FAULT_USAGE ", got '%.80s'", spec);
}

enum pplan_status exec_fault_supported(const struct exec_fault *f, int size, int pp,
				       long steps, struct perr *e)
{
	if (f->kind == FAULT_NONE)
		return PPLAN_OK;
	if (f->rank >= size)
		return perr_set(e, PPLAN_EINPUT, "--fault names rank %d, but the run has %d ranks (0 to %d)",
				f->rank, size, size - 1);
	if (f->step > steps)
		return perr_set(e, PPLAN_EINPUT, "--fault names step %ld, but the run has %ld steps (warm-up included)",
				f->step, steps);
	if (f->kind == FAULT_MESSAGE && pp < 2)
		return perr_set(e, PPLAN_EINPUT, "--fault message:REL changes a pipeline message, and pp=1 sends none");
	return PPLAN_OK;
}

/* At the start of every step: the process faults, or arms a wrong value. */
void exec_fault_step(struct exec *x)
{
	const struct exec_fault *f = &x->opt.fault;
	long step = x->step + 1;
	x->fault_armed = FAULT_NONE;
	if (f->kind == FAULT_NONE || f->rank != x->rank)
		return;
	if (f->kind == FAULT_SLOW) {
		long ms = (long)f->value;
		struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
		if (step >= f->step)
			nanosleep(&ts, NULL);
		return;
	}
	if (step != f->step)
		return;
	switch (f->kind) {
	case FAULT_EXIT:
		fprintf(stderr, "pplan exec: rank %d: exiting early on purpose in step %ld (--fault)\n",
			x->rank, step);
		_exit(1);
	case FAULT_CRASH:
		raise(SIGSEGV);
		break;
	case FAULT_KILL:
		raise(SIGKILL);
		break;
	case FAULT_HANG:
		for (;;)
			pause();
	case FAULT_GEMM:
	case FAULT_MESSAGE:
		x->fault_armed = f->kind;
		break;
	default:
		break;
	}
}

/* The middle element of buf (count elements of the backend's dtype:
 * the first token's would not do, as causal attention lets nothing of it
 * but its value reach the loss) times 1 + REL, once. */
void exec_fault_apply(struct exec *x, enum exec_fault_kind kind, void *buf, long count)
{
	long at = count / 2;
	char *elem = (char *)buf + (size_t)at * x->esize;
	struct backend *b = x->be;
	unsigned char raw[4];
	float v, w;
	if (x->fault_armed != kind)
		return;
	x->fault_armed = FAULT_NONE;
	b->ops->to_host(b, raw, elem, x->esize);
	if (x->esize == 4) {
		memcpy(&v, raw, 4);
	} else {
		uint16_t h;
		memcpy(&h, raw, 2);
		v = kern_bf16_to_f32(h);
	}
	w = v != 0 ? v * (float)(1 + x->opt.fault.value) : (float)x->opt.fault.value;
	if (x->esize == 4) {
		memcpy(raw, &w, 4);
	} else {
		uint16_t h = kern_f32_to_bf16(w);
		memcpy(raw, &h, 2);
		w = kern_bf16_to_f32(h);
	}
	b->ops->to_device(b, elem, raw, x->esize);
	fprintf(stderr, "pplan exec: rank %d: step %ld: element %ld of %s changed from %.9g to %.9g (--fault)\n",
		x->rank, x->step + 1, at,
		kind == FAULT_GEMM ? "the first forward GEMM's output" : "the first pipeline message", v, w);
}
