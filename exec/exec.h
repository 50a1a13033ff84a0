/*
 * exec.h: the executor (`pplan exec`).  Runs one layout of one model for
 * real, one process per GPU or CPU slot under mpirun or srun, replaying
 * sim's per-stage op lists (sim/schedule.h) with real GEMMs, kernels and
 * collectives, and measures each op.  What it measures is plain data
 * (sim/run.h); the report is written by the CLI with reports/.
 *
 * Life of a run: exec_mpi_init (before anything else, so that only rank
 * 0 speaks), exec_open (bring-up: ranks, node-local rank, device,
 * groups from sim's rank map, the backend, the arena), exec_run (warm-up
 * and timed steps; results gathered on rank 0), exec_check (optional:
 * the same steps on one rank, compared), exec_close, exec_mpi_finalize.
 * A failure on any rank ends every rank (exec_abort) within the timeout.
 */
#ifndef PPLAN_EXEC_H
#define PPLAN_EXEC_H

#include <stdint.h>

#include "cluster.h"
#include "layout.h"
#include "model.h"
#include "run.h"
#include "status.h"

enum exec_backend { EXEC_BACKEND_AUTO = 0, EXEC_BACKEND_CPU, EXEC_BACKEND_CUDA };

/* --fault RANK:STEP:KIND (exec/fault.c): a failure or a wrong value on
 * purpose, on one rank in one step (from 1, warm-up included). */
enum exec_fault_kind { FAULT_NONE = 0, FAULT_EXIT, FAULT_CRASH, FAULT_KILL, FAULT_HANG,
		       FAULT_SLOW, FAULT_GEMM, FAULT_MESSAGE };
struct exec_fault {
	enum exec_fault_kind kind;
	int rank;
	long step;
	double value;                /* slow: ms; gemm, message: relative change */
};
/* Parses spec ("" or NULL: no fault); a sentence and PPLAN_EINPUT if bad. */
enum pplan_status exec_fault_parse(const char *spec, struct exec_fault *fault, struct perr *err);
/* Whether the run (size ranks, pp stages, steps with warm-up) has the
 * rank, the step and, for message:, a pipeline. */
enum pplan_status exec_fault_supported(const struct exec_fault *fault, int size, int pp,
				       long steps, struct perr *err);

struct exec_opts {
	struct model_spec model;
	struct layout layout;        /* complete (layout_complete) */
	struct rank_order order;
	long steps;                  /* timed steps, >= 1 */
	long warmup;                 /* steps before them, not timed */
	uint64_t seed;               /* weights and batches */
	enum exec_backend backend;
	enum precision precision;    /* fp32 (cpu), bf16 (cuda default) */
	double timeout_s;            /* no progress for this long ends the run */
	double lr;                   /* AdamW: lr, betas 0.9/0.95, eps 1e-8 */
	double weight_decay;
	double clip;                 /* global gradient-norm clip (0: none) */
	int fused_attention;         /* fused kernel (CUDA default) vs three steps */
	int force;                   /* run although the memory model says no */
	int check;                   /* --check: step 1's gradients kept on rank 0 */
	struct exec_fault fault;     /* --fault; kind FAULT_NONE without */
};

void exec_opts_default(struct exec_opts *opts);


/* Open MPI's all-reduce algorithms (ring), unless the environment says;
 * before MPI_Init (exec_mpi_init and calibrate call it). */
void exec_mpi_defaults(void);

/* Under a launcher (mpirun, mpiexec, srun) of two or more ranks, before
 * MPI starts: forks.  The child returns 0 and is the rank; the parent
 * waits for it and returns 1 with *exit_code its status, or 1 after a
 * sentence naming the rank, its process and the signal when a signal it
 * did not pass on killed it (SIGKILL: the out-of-memory killer).  Without
 * a launcher, or where fork fails, returns 0 at once (supervise.c). */
int exec_supervise(int *exit_code);
/* In a supervised rank: if its supervising process is stopped (SIGSTOP
 * sent to it alone; a suspended job stops the rank too), says so and
 * continues it, which would otherwise hold the launcher after the rank
 * ends.  Async-signal-safe; a no-op elsewhere.  Runs at the rank's exit
 * (atexit) and before a crash report's _exit. */
void exec_release_supervisor(void);

/* MPI_Init_thread; *rank and *size of the world.  Call first. */
enum pplan_status exec_mpi_init(int *argc, char ***argv, int *rank, int *size,
				struct perr *err);
void exec_mpi_finalize(void);
/* Every rank agrees on a status: the worst of all (PPLAN_OK if all are),
 * and rank 0's message is copied to every rank. */
enum pplan_status exec_agree(enum pplan_status st, struct perr *err);

/* Memory one rank may use on this host, bytes, where it is known before
 * a backend is opened (the CPU: physical memory / ranks on the host);
 * NAN where it is not (a GPU: its backend checks its allocations). */
double exec_rank_memory_bytes(const struct exec_opts *opts);

/* What the executor cannot run (yet), or what does not divide, for a
 * world of `size` ranks: PPLAN_EINPUT with a sentence (exec_open says
 * the same; the CLI asks before its memory check). */
enum pplan_status exec_supported(const struct exec_opts *opts, int size,
				 struct perr *err);

typedef struct exec exec_t;

/* Bring-up in one fixed order (exec/bringup.c).  A layout that does not
 * match the world size, one the executor cannot run (cp > 1, ep > 1,
 * zero > 1, ...), or a model that does not divide gives PPLAN_EINPUT with
 * the same sentence on every rank. */
enum pplan_status exec_open(const struct exec_opts *opts, exec_t **out,
			    struct perr *err);
/* Warm-up and timed steps; results on rank 0 (measured is zeroed elsewhere). */
enum pplan_status exec_run(exec_t *x, struct run_measured *measured, struct perr *err);
/* Every rank's ops of the last step, on rank 0: out->stage[r] is rank
 * r's (with its pipeline stage in .stage). */
enum pplan_status exec_trace(exec_t *x, struct run_timeline *out, struct perr *err);
/* The ranks of this rank's host. */
int exec_ranks_per_host(const exec_t *x);
/* The backend that exec_open took and why ("cpu: no GPU answered: ..."). */
const char *exec_backend_note(const exec_t *x);
void exec_close(exec_t *x);

/* The same seeded model and batches on one rank (rank 0, on
 * MPI_COMM_SELF), the same steps; compares step 1's gradients element by
 * element (within rounding's bound, exec/gradcheck.c) and the loss of
 * every step with `run` (rank 0's result of exec_run on x; x->opt.check
 * set before exec_open, so that x kept step 1's gradients).  The other
 * ranks wait.  The verdict and the worst errors come back on rank 0. */
enum pplan_status exec_check_run(exec_t *x, const struct run_measured *run,
				 struct run_check *out, struct perr *err);

/* Ends every rank now: prints the sentence on this rank's stderr (with
 * rank and host) and aborts the job with exit status `code`. */
void exec_abort(const char *msg, int code);

#endif
