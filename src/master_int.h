/* master_int.h: the master's state, shared by master.c (the loop), queue.c (its cells) and gang.c (gangs).
 * Not a public API. */
#ifndef SWEEP_MASTER_INT_H
#define SWEEP_MASTER_INT_H

#include "../kernels/kernel.h"
#include "msg.h"
#include "master.h"

/*
 * Cells in flight per worker: the one it runs and at least one prefetched, so that no worker waits on the
 * master. When cells are short the depth grows so that each worker holds about PREFETCH_SECONDS of work:
 * then one commit covers many results and the master is not the bottleneck. Long cells keep the depth at
 * 2, which keeps the schedule dynamic (a slow cell never holds cells that others could run).
 */
#define MIN_INFLIGHT 2
#define MAX_INFLIGHT 512
#define PREFETCH_SECONDS 0.005
#define DRAIN_MAX 4096         /* messages handled per transaction at most */


/* A FIFO of tasks. */
struct tlist {
	struct task *v;
	size_t head, n, alloc;
};

/*
 * The pending cells one group of workers may run: all of them (per: any), one host's, or one GPU's, read
 * from the database a window at a time in run order (queue_fill) as the workers take them. Gang cells
 * wait apart: they need several workers at once. A failed cell to try again waits in later until every
 * pending cell is loaded, so it runs after them all, as if the whole queue were in memory.
 */
struct tqueue {
	char *replica;
	struct tlist cells, gangs, later;
	struct store_cursor next;  /* where the next window starts */
	int drained;               /* a window came short: every pending cell of the replica is loaded */
};

struct wstate {
	int rank;
	struct hello hello;
	int active;                /* said hello and may get cells */
	int reserved;              /* held idle for the gang being formed: gets no other cells */
	struct tqueue *q;
	struct task fly[MAX_INFLIGHT];   /* in flight: a ring, oldest at fhead; the first nsent have been sent */
	int fhead, nfly, nsent;
	int depth;                 /* how many to keep in flight, from avg_wall */
	double avg_wall;           /* moving average of the worker's cell times (seconds) */
	int since_control;         /* real cells since the last control */
	uint64_t done;
	double since;              /* when the head of fly became the running cell (now_mono) */
	double heard;              /* when its last message came (now_mono): see MSG_LOST_SECONDS */
};

/* A gang cell whose members' results are coming in. */
struct gang_acc {
	struct task t;             /* the leader's copy */
	struct result *r;          /* one per member, by gang rank */
	int *got;
	int ngot;
};

/* A set of workers that has run gang cells together: members cache communicators by its id. */
struct gang_set {
	int size, id;
	int *ranks;
};

struct master {
	struct comm *c;
	const struct master_opts *o;
	const struct kernel_ops *kernel;   /* NULL for command sweeps */
	struct master_stats *stats;
	struct wstate *w;
	int nw;                    /* ranks 0..nw-1; w[0] is the local worker when there is one */
	struct tqueue **queues;    /* each allocated apart: workers point at them */
	size_t nqueues, alloc_queues;
	struct gang_acc *accs;
	size_t naccs, alloc_accs;
	struct gang_set *sets;
	size_t nsets, alloc_sets;
	int next_gang_id;
	struct strbuf buf, out;
	double t0, last_progress;
	int dispatched;            /* dispatch began: cells may be in flight */
	double last_recv;          /* when the master last looked for messages */
	double listening;          /* since when it has looked at least every LISTEN_GAP seconds */
	double beat_at;            /* when the workers are due their next MSG_BEAT (msg.h) */
	struct task *batch[MAX_INFLIGHT];   /* send_tasks' list of one worker's new cells */
};

/* The i-th cell in flight on w (0: the one it runs). */
static inline struct task *fly_at(struct wstate *w, int i)
{
	return &w->fly[(w->fhead + i) % MAX_INFLIGHT];
}

/* master.c */
/* After every worker's hello is in m->w: store hosts and workers, make the per-host or per-GPU replicas,
 * give each active worker its queue and count the pending cells (m->stats: those of the queues, those
 * that wait for replicas not in this run) from the database's counts. */
int master_assign(struct master *m);
/* Frees everything the master holds, m->w included (hellos too). */
void master_release(struct master *m);

/* queue.c */
/* The queue of replica ("" for per: any): found, or made when create (else NULL). */
struct tqueue *queue_get(struct master *m, const char *replica, int create);
void queue_task_copy(struct task *dst, const struct task *src);
void queue_push(struct tlist *l, const struct task *t);
void queue_list_release(struct tlist *l);
/* Load q's next windows of pending cells while fewer are loaded than its workers may take soon (two
 * prefetches each, and 1024); once none are left in the database, the cells waiting in later follow. */
int queue_fill(struct master *m, struct tqueue *q);
/* Whether q may still give cells: loaded ones, or more in the database. */
int queue_has_work(const struct tqueue *q);
/* Mark w's head running and count its attempt (control cells and non-leading gang members excepted). */
int queue_mark_head(struct master *m, struct wstate *w);
/* Put t in flight on w (marking the cell running when it becomes w's head). */
int queue_fly(struct master *m, struct wstate *w, const struct task *t);
/* Store the result of task t (a whole gang's, combined) and requeue (behind every pending cell) or
 * count it. */
int queue_store_result(struct master *m, struct wstate *w, struct task *t, struct result *r);

/* gang.c: the master's side */
/* Form what gangs can be formed now: reserve idle workers, dispatch a gang once all its members are. */
int gang_form(struct master *m);
/* A member's result for gang task t: kept until every member's is in, then combined and stored. */
int gang_result(struct master *m, struct wstate *w, struct task *t, struct result *r);
/* The leader's bootstrap blob: forwarded to the other members of its gang. */
int gang_forward_blob(struct master *m, int peer, const char *buf, size_t len);
/*
 * A cell that failed on worker `rank` (a gang's or its own) may have broken its communicators or cost it
 * its executor, and with it every communicator it held: every set of members with that worker opens anew.
 * A set kept would send its other members to a communicator only they still hold, while the new executor
 * waited for them in vain (a gang cell errored after a minute instead of running).
 */
void gang_forget(struct master *m, int rank);
void gang_release(struct master *m);
/*
 * One result for gang cell t (the leader's copy: t->gang_size members, world ranks in t->gang_ranks)
 * from members[i], gang rank i's result; a pure function, so that it is tested without MPI. Each sample
 * is the slowest member's time of that launch (the collective is done when its last member is) with the
 * lowest known SM clock of that launch, over the samples every member has; the summary, noise_ok and
 * precise come from those samples against timing's max_noise and precision; throttled, wall and errors are the members' largest (no
 * errors metric when none counted any), started the earliest. A failed member fails the cell: status is
 * the first failure's (in gang order), error names every failed member (gang rank and world rank) with
 * its reason, and no sample is kept. The leader's numeric metrics are carried over (its rates, gflops
 * and gbs, put over the combined median: left out when it sent no seconds), seconds is the combined
 * median and k->derive (k may be NULL) adds the metrics that depend on the gang (bus bandwidth) from it
 * and the cell's params with k's defaults filled in. Initialises c (the caller releases it); members are
 * not changed.
 */
void gang_combine(const struct kernel_ops *k, const struct task *t, const struct result *members,
		  const struct spec_timing *timing, struct result *c);

#endif
