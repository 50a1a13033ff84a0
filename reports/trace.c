/*
 * trace.c: Chrome trace event JSON and the text timeline of a simulated
 * step (formats in trace.h).  The trace format is Google's "Trace Event
 * Format" document: complete events ("ph": "X") with "ts" and "dur" in
 * microseconds, metadata events ("ph": "M") naming processes and threads.
 */
#include "trace.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "jsonio.h"

enum { TID_COMPUTE = 0, TID_SEND = 1, TID_DP = 2 };

static cJSON *meta(cJSON *events, const char *what, int pid, int tid,
		   const char *key, cJSON *value)
{
	cJSON *ev = cJSON_CreateObject(), *args = cJSON_CreateObject();
	if (!ev || !args || !value) {
		cJSON_Delete(ev);
		cJSON_Delete(args);
		cJSON_Delete(value);
		return NULL;
	}
	cJSON_AddStringToObject(ev, "name", what);
	cJSON_AddStringToObject(ev, "ph", "M");
	cJSON_AddNumberToObject(ev, "pid", pid);
	cJSON_AddNumberToObject(ev, "tid", tid);
	cJSON_AddItemToObject(args, key, value);
	cJSON_AddItemToObject(ev, "args", args);
	cJSON_AddItemToArray(events, ev);
	return ev;
}

/* A complete event; returns its args object (for the caller to fill). */
static cJSON *span_event(cJSON *events, const char *name, const char *cat,
			 int pid, int tid, double start_s, double end_s)
{
	cJSON *ev = cJSON_CreateObject(), *args;
	if (!ev)
		return NULL;
	cJSON_AddStringToObject(ev, "name", name);
	cJSON_AddStringToObject(ev, "cat", cat);
	cJSON_AddStringToObject(ev, "ph", "X");
	cJSON_AddNumberToObject(ev, "ts", start_s * 1e6);
	cJSON_AddNumberToObject(ev, "dur", (end_s - start_s) * 1e6);
	cJSON_AddNumberToObject(ev, "pid", pid);
	cJSON_AddNumberToObject(ev, "tid", tid);
	args = cJSON_AddObjectToObject(ev, "args");
	cJSON_AddItemToArray(events, ev);
	return args;
}

static int add_stage_meta(cJSON *events, int stage)
{
	char name[32];
	snprintf(name, sizeof name, "stage %d", stage);
	return meta(events, "process_name", stage, 0, "name",
		    cJSON_CreateString(name)) &&
	       meta(events, "process_sort_index", stage, 0, "sort_index",
		    cJSON_CreateNumber(stage)) &&
	       meta(events, "thread_name", stage, TID_COMPUTE, "name",
		    cJSON_CreateString("compute")) &&
	       meta(events, "thread_name", stage, TID_SEND, "name",
		    cJSON_CreateString("p2p send")) &&
	       meta(events, "thread_name", stage, TID_DP, "name",
		    cJSON_CreateString("dp grad reduce"));
}

cJSON *trace_build(const struct pipe_schedule *s, const struct des_result *r,
		   struct perr *e)
{
	cJSON *doc, *events, *other;
	char name[48];

	if (!r->op_start_s) {
		perr_set(e, PPLAN_EINPUT,
			 "trace: the simulation kept no op times (DES_TIMES)");
		return NULL;
	}
	doc = cJSON_CreateObject();
	if (!doc)
		goto nomem;
	cJSON_AddStringToObject(doc, "schema", "pplan.trace/1");
	cJSON_AddStringToObject(doc, "displayTimeUnit", "ms");
	other = cJSON_AddObjectToObject(doc, "otherData");
	events = cJSON_AddArrayToObject(doc, "traceEvents");
	if (!other || !events)
		goto nomem;
	cJSON_AddStringToObject(other, "schedule", schedule_name(s->kind));
	cJSON_AddNumberToObject(other, "pp", s->pp);
	cJSON_AddNumberToObject(other, "vp", s->vp);
	cJSON_AddNumberToObject(other, "microbatches", (double)s->microbatches);
	cJSON_AddNumberToObject(other, "step_time_s", r->step_time_s);

	for (int st = 0; st < s->pp; st++) {
		const struct des_stage *o = &r->stage[st];
		if (!add_stage_meta(events, st))
			goto nomem;
		for (long i = s->first[st]; i < s->first[st + 1]; i++) {
			const struct sched_op *op = &s->ops[i];
			enum op_kind k = (enum op_kind)op->kind;
			int tid;
			cJSON *args;
			if (k == OP_RECV_ACT || k == OP_RECV_GRAD)
				continue; /* the wait shows as idle compute */
			tid = op_is_compute(k) ? TID_COMPUTE : TID_SEND;
			snprintf(name, sizeof name, "%s%d.%d", op_kind_name(k),
				 op->mb, op->chunk);
			args = span_event(events, name,
					  tid == TID_COMPUTE ? "compute" : "p2p",
					  st, tid, r->op_start_s[i],
					  r->op_end_s[i]);
			if (!args)
				goto nomem;
			cJSON_AddNumberToObject(args, "microbatch", op->mb);
			cJSON_AddNumberToObject(args, "chunk", op->chunk);
			cJSON_AddNumberToObject(args, "vstage",
						schedule_vstage(s, st, op->chunk));
			if (tid == TID_SEND) {
				cJSON_AddNumberToObject(args, "peer", op->peer);
				cJSON_AddNumberToObject(args, "bytes",
							(double)op->bytes);
			}
		}
		for (int k = 0; r->dp_start_s && k < r->dp_buckets_per_stage; k++) {
			long j = (long)st * r->dp_buckets_per_stage + k;
			cJSON *args;
			if (r->dp_end_s[j] <= r->dp_start_s[j])
				continue;
			snprintf(name, sizeof name, "dp bucket %d", k);
			args = span_event(events, name, "dp", st, TID_DP,
					  r->dp_start_s[j], r->dp_end_s[j]);
			if (!args)
				goto nomem;
		}
		if (r->optimizer_s > 0 &&
		    !span_event(events, "optimizer", "compute", st, TID_COMPUTE,
				o->dp_end_s, o->end_s))
			goto nomem;
	}
	return doc;
nomem:
	cJSON_Delete(doc);
	perr_set(e, PPLAN_ENOMEM, "trace: out of memory");
	return NULL;
}

enum pplan_status trace_write(const char *path, const struct pipe_schedule *s,
			      const struct des_result *r, struct perr *e)
{
	enum pplan_status st;
	cJSON *doc = trace_build(s, r, e);
	if (!doc)
		return r->op_start_s ? PPLAN_ENOMEM : PPLAN_EINPUT;
	st = json_write_atomic(path, doc, e);
	cJSON_Delete(doc);
	return st;
}

static char op_glyph(enum op_kind k, int mb)
{
	switch (k) {
	case OP_FWD: return (char)('0' + mb % 10);
	case OP_BWD:
	case OP_BWD_INPUT: return (char)('a' + mb % 10);
	case OP_BWD_WEIGHT: return (char)('A' + mb % 10);
	default: return '?';
	}
}

void trace_timeline_print(FILE *f, const struct pipe_schedule *s,
			  const struct des_result *r, int max_cols)
{
	double q = INFINITY, span = r->pipeline_span_s;
	long cols;
	char *row;

	if (!r->op_start_s || !(span > 0) || max_cols < 1)
		return;
	for (long i = 0; i < s->nops; i++) {
		double d = r->op_end_s[i] - r->op_start_s[i];
		if (op_is_compute((enum op_kind)s->ops[i].kind) && d > 0 && d < q)
			q = d;
	}
	cols = (long)ceil(span / q - 1e-9);
	if (cols > max_cols) {
		cols = max_cols;
		q = span / max_cols;
	}
	row = malloc((size_t)cols + 1);
	if (!row)
		return;
	fprintf(f, "# timeline: one column = %.3f ms; 0-9 forward of microbatch (mod 10), a-j backward%s, '.' idle\n",
		q * 1e3, s->kind == SCHED_ZB_H1 ? " (input gradient B), A-J weight gradient W" : "");
	for (int st = 0; st < s->pp; st++) {
		memset(row, '.', (size_t)cols);
		row[cols] = '\0';
		for (long i = s->first[st]; i < s->first[st + 1]; i++) {
			enum op_kind k = (enum op_kind)s->ops[i].kind;
			long c0, c1;
			if (!op_is_compute(k))
				continue;
			c0 = lround(r->op_start_s[i] / q);
			c1 = lround(r->op_end_s[i] / q);
			if (c1 <= c0)
				c1 = c0 + 1;
			for (long c = c0; c < c1 && c < cols; c++)
				row[c] = op_glyph(k, s->ops[i].mb);
		}
		fprintf(f, "stage %2d |%s|\n", st, row);
	}
	free(row);
}
