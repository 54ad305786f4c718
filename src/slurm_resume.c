/* slurm_resume.c: how a database's Slurm jobs go on when no run writes it: the job's state, its
 * resubmission (an array's, from a shard's database too) and what an array's shards have left. */
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "slurm.h"
#include "slurm_int.h"

static int count_row(const struct store_row *row, void *data)
{
	*(uint64_t *)data = (uint64_t)row->num[0];
	return 0;
}

/* A job and the command that submitted it, as the database holds them: for a run's job, the array task it
 * ran (-1: none); for a job submitted, its shards (0: not an array). */
struct job_row {
	char job[32];
	char *command;
	int64_t task, shards;
};

static int take_job(const struct store_row *row, void *data)
{
	struct job_row *j = data;

	/* Ids go on a command line: digits only (a merged database is not trusted to hold others). */
	if (!row->text[0] || !*row->text[0] || strspn(row->text[0], "0123456789") != strlen(row->text[0]) ||
	    strlen(row->text[0]) >= sizeof(j->job))
		return 0;
	snprintf(j->job, sizeof(j->job), "%s", row->text[0]);
	free(j->command);
	j->command = row->text[1] ? xstrdup(row->text[1]) : NULL;
	j->task = row->text[2] ? (int64_t)row->num[2] : -1;
	j->shards = row->text[3] ? (int64_t)row->num[3] : 0;
	return 0;
}

/* The database of the sweep whose shard db is (results/x.shard-3.db -> results/x.db), or NULL when db is
 * no shard's. Caller frees. */
static char *main_db(const char *db)
{
	const char *at = strstr(db, ".shard-"), *next;
	size_t digits;

	while (at && (next = strstr(at + 1, ".shard-")))
		at = next;
	if (!at || !(digits = strspn(at + 7, "0123456789")) || strcmp(at + 7 + digits, ".db"))
		return NULL;
	return xasprintf("%.*s.db", (int)(at - db), db);
}

/* The command that submitted job, as the sweep's database at path recorded it; NULL when it cannot be
 * read (no such database, or no such job there). Caller frees. */
static char *array_command(const char *path, const char *job)
{
	struct job_row j = { "", NULL, -1, 0 };
	const char *bind[] = { job };
	struct store *st;
	uint64_t have = 0, command = 0;

	if (access(path, F_OK) || store_open(path, STORE_RO, &st))
		return NULL;
	if (!store_query(st, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'slurm_jobs'",
			 NULL, 0, 1, count_row, &have) && have && !slurm_has_command(st, &command) && command)
		store_query(st, "SELECT job, command, NULL, shards FROM slurm_jobs WHERE job = ?1", bind, 1, 1,
			    take_job, &j);
	store_close(st);
	return j.command;
}

/* What the shards of an array over the database at db have left to do, as lines into out: those with cells
 * to do (the first few) or not made, and the total. */
static void shards_left(const char *db, int64_t shards, struct strbuf *out)
{
	uint64_t n[2], left = 0, all = 0, listed = 0, missing = 0;

	for (int64_t i = 0; i < shards && i < INT_MAX; i++) {
		char *path = slurm_shard_db(db, (int)i);
		struct store *st;

		if (access(path, F_OK) || store_open(path, STORE_RO, &st)) {
			missing++;
			if (listed++ < 8)
				sb_addf(out, "    shard %" PRId64 ": no database '%s'\n", i, path);
		} else {
			n[0] = n[1] = 0;
			if (!store_query(st, "SELECT coalesce(sum(planned + running), 0) FROM cell_counts", NULL, 0, 1,
					 count_row, &n[0]) &&
			    !store_query(st, "SELECT coalesce(sum(planned + running + ok + quarantined), 0)"
					 " FROM cell_counts", NULL, 0, 1, count_row, &n[1]) && n[0] && listed++ < 8)
				sb_addf(out, "    shard %" PRId64 ": %" PRIu64 " of %" PRIu64 " cells to do ('%s')\n",
					i, n[0], n[1], path);
			left += n[0];
			all += n[1];
			store_close(st);
		}
		free(path);
	}
	if (listed > 8)
		sb_addf(out, "    and %" PRIu64 " more shards\n", listed - 8);
	sb_addf(out, "  the array's %" PRId64 " shards have %" PRIu64 " of %" PRIu64 " cells to do", shards, left, all);
	if (missing)
		sb_addf(out, ", and %" PRIu64 " shards no database", missing);
	sb_adds(out, " (merge them into this database once they are done)\n");
}

/* Whether Slurm's states of a job say it is not over: it runs, or will (requeued, held, pending). */
static int states_live(const char *states)
{
	static const char *const live[] = { "PENDING", "RUNNING", "CONFIGURING", "COMPLETING", "REQUEUE",
		"RESIZING", "SUSPENDED", "SIGNALING", "STAGE_OUT", NULL };

	for (int i = 0; live[i]; i++)
		if (strstr(states, live[i]))
			return 1;
	return 0;
}

/* After the state of job j: how to resubmit it (the command recorded with it, or for an array task the
 * array's, from the sweep's database), and what an array's shards have left. 2 for an array task (no
 * local command resumes it), else 0. */
static int say_resubmit(struct store *st, const struct job_row *j, struct strbuf *out)
{
	char shown[512], *main = NULL, *command = NULL;
	int ret = 0;

	if (j->command) {
		sb_addf(out, "; resubmit it: %s", printable(shown, j->command, 500));
	} else if (j->task >= 0) {
		/* a shard's database: the array was submitted from the sweep's, which holds the command */
		main = main_db(store_path(st));
		command = main ? array_command(main, j->job) : NULL;
		sb_addf(out, "; this database is its array task %" PRId64 "'s", j->task);
		if (command)
			sb_addf(out, ": resubmit the array: %s", printable(shown, command, 500));
		else if (main)
			sb_addf(out, ": 'sweep status %s' says how to resubmit the array", printable(shown, main, 300));
		ret = 2;
	}
	sb_addc(out, '\n');
	if (j->shards > 0)
		shards_left(store_path(st), j->shards, out);
	free(main);
	free(command);
	return ret;
}

int slurm_resume(struct store *st, int64_t run, struct strbuf *out)
{
	struct job_row newest = { "", NULL, -1, 0 }, mine = { "", NULL, -1, 0 };
	struct job_row *const jobs[] = { &newest, &mine };
	struct strbuf state = STRBUF_INIT;
	uint64_t have = 0, command = 0;
	char id[32], *sql = NULL, shown[512];
	const char *bind[] = { id };
	int ret = -1;

	if (store_query(st, "SELECT count(*) FROM sqlite_master WHERE type = 'table'"
			" AND name IN ('slurm_jobs', 'slurm_runs')", NULL, 0, 1, count_row, &have) ||
	    (have == 2 && slurm_has_command(st, &command)))
		return -1;
	if (have != 2)
		return 0;
	snprintf(id, sizeof(id), "%" PRId64, run);
	sql = xasprintf("SELECT r.job, %s, r.task, j.shards FROM slurm_runs r LEFT JOIN slurm_jobs j ON j.job = r.job"
			" WHERE r.run = ?1", command ? "j.command" : "NULL");
	/* The newest job submitted (it may not have started), and the job the latest run ran in. */
	if (store_query(st, command ? "SELECT job, command, NULL, shards FROM slurm_jobs ORDER BY submitted DESC"
			" LIMIT 1" : "SELECT job, NULL, NULL, shards FROM slurm_jobs ORDER BY submitted DESC LIMIT 1",
			NULL, 0, 1, take_job, &newest) ||
	    store_query(st, sql, bind, 1, 1, take_job, &mine))
		goto out;
	/* The state of the last one asked stays in state: the job the line below names. */
	for (size_t i = 0; i < ARRAY_SIZE(jobs); i++) {
		if (!jobs[i]->job[0] || (i && !strcmp(jobs[i]->job, newest.job)))
			continue;
		sb_reset(&state);
		slurm_job_state(jobs[i]->job, &state);
		if (states_live(state.buf)) {
			sb_addf(out, "  Slurm job %s is %s: it goes on with the sweep by itself\n", jobs[i]->job,
				printable(shown, state.buf, 200));
			ret = 1;
			goto out;
		}
	}
	ret = 0;
	if (!mine.job[0] && !newest.job[0])
		goto out;
	/* Over: the job the latest run ran in, else the newest one submitted. */
	sb_addf(out, "  Slurm job %s is %s", mine.job[0] ? mine.job : newest.job, printable(shown, state.buf, 200));
	ret = say_resubmit(st, mine.job[0] ? &mine : &newest, out);
out:
	free(sql);
	free(newest.command);
	free(mine.command);
	sb_release(&state);
	return ret;
}
