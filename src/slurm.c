/* slurm.c: Slurm batch jobs: job scripts from slurm/sweep.sbatch, sbatch, the runs of a job, job states. */
#include "slurm.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "exitcode.h"
#include "plan_db.h"
#include "spawn.h"
#include "spec.h"
#include "slurm_int.h"
#include "table.h"

/* What a Slurm query's output may be: scontrol's lines are long (about 1 kB a job), and an array has a
 * line per task. */
#define SLURM_QUERY_MAX (4 << 20)

static int count_row(const struct store_row *row, void *data)
{
	*(uint64_t *)data = (uint64_t)row->num[0];
	return 0;
}

/* Whether slurm_jobs has its command column (a table made before it was added has not). */
int slurm_has_command(struct store *st, uint64_t *have)
{
	*have = 0;
	return store_query(st, "SELECT count(*) FROM pragma_table_info('slurm_jobs') WHERE name = 'command'",
			   NULL, 0, 1, count_row, have);
}

static void slurm_query(char **argv, struct strbuf *out);

/* ---- rendering ---- */

/* The length of db without its ".db": shard i is that, ".shard-I" and ".db". */
static int shard_stem(const char *db)
{
	size_t len = strlen(db);

	return (int)(len > 3 && !strcmp(db + len - 3, ".db") ? len - 3 : len);
}

char *slurm_shard_db(const char *db, int i)
{
	return xasprintf("%.*s.shard-%d.db", shard_stem(db), db, i);
}

/* An sbatch option value goes on a #SBATCH line: no spaces, quotes or line breaks. */
int slurm_option_ok(const char *what, const char *v)
{
	for (const char *p = v; *p; p++)
		if (!isgraph((unsigned char)*p) || strchr("'\"\\`$", *p))
			return error("%s '%s': no spaces, quotes or '$' on an #SBATCH line", what, v);
	if (!*v)
		return error("%s is empty", what);
	return 0;
}

static void sbatch_lines(const struct slurm_job *j, struct strbuf *sb)
{
	sb_addf(sb, "#SBATCH --job-name=sweep-%s\n", j->name);
	sb_addf(sb, "#SBATCH --nodes=%d\n", j->nodes);
	sb_addf(sb, "#SBATCH --ntasks-per-node=%d\n", j->tasks_per_node);
	if (j->gpus_per_node > 0)
		sb_addf(sb, "#SBATCH --gpus-per-node=%d\n", j->gpus_per_node);
	/* A rank's cgroup holds its CPUs only: one CPU would starve OpenBLAS and hwloc's binding. */
	if (j->cpus_per_task > 0)
		sb_addf(sb, "#SBATCH --cpus-per-task=%d\n", j->cpus_per_task);
	/* Kernels measure the node: another job beside them would be measured too. */
	if (j->exclusive)
		sb_adds(sb, "#SBATCH --exclusive\n");
	if (j->time)
		sb_addf(sb, "#SBATCH --time=%s\n", j->time);
	if (j->partition)
		sb_addf(sb, "#SBATCH --partition=%s\n", j->partition);
	if (j->account)
		sb_addf(sb, "#SBATCH --account=%s\n", j->account);
	if (j->shards > 0)
		sb_addf(sb, "#SBATCH --array=0-%d\n", j->shards - 1);
	/* Requeued (preempted, node failure, scontrol requeue), the job runs again and the sweep resumes;
	 * its log goes on in the same file. */
	sb_adds(sb, j->requeue ? "#SBATCH --requeue\n" : "#SBATCH --no-requeue\n");
	sb_adds(sb, "#SBATCH --open-mode=append\n");
	sb_addf(sb, "#SBATCH --output=%s\n", j->log);
	for (int i = 0; i < j->n_extra; i++)
		sb_addf(sb, "#SBATCH %s\n", j->extra[i]);
}

static const char *const placeholders[] = {
	"sbatch", "sweep", "spec", "db", "shard_db", "shard_arg", "shards", "tasks", "workdir", "name", "run_args",
	NULL
};

static void expand(const struct slurm_job *j, const char *name, struct strbuf *sb)
{
	char num[32];

	if (!strcmp(name, "sbatch")) {
		struct strbuf lines = STRBUF_INIT;

		sbatch_lines(j, &lines);
		sb_add(sb, lines.buf, lines.len - 1);   /* the template's line break follows */
		sb_release(&lines);
	} else if (!strcmp(name, "sweep")) {
		sb_add_word(sb, j->sweep);
	} else if (!strcmp(name, "spec")) {
		sb_add_word(sb, j->spec);
	} else if (!strcmp(name, "db")) {
		sb_add_word(sb, j->db);
	} else if (!strcmp(name, "shard_db")) {
		if (j->shards > 0) {
			char *stem = xasprintf("%.*s.shard-", shard_stem(j->db), j->db);

			/* The task's number comes from Slurm when the job runs. */
			sb_add_word(sb, stem);
			sb_adds(sb, "\"$SLURM_ARRAY_TASK_ID\".db");
			free(stem);
		} else {
			sb_add_word(sb, j->db);
		}
	} else if (!strcmp(name, "shard_arg")) {
		/* Nothing for a single job: the script holds no branch that cannot be taken. */
		if (j->shards > 0)
			sb_addf(sb, "--shard=\"$SLURM_ARRAY_TASK_ID\"/%d", j->shards);
	} else if (!strcmp(name, "shards")) {
		snprintf(num, sizeof(num), "%d", j->shards);
		sb_adds(sb, num);
	} else if (!strcmp(name, "tasks")) {
		snprintf(num, sizeof(num), "%d", j->nodes * j->tasks_per_node);
		sb_adds(sb, num);
	} else if (!strcmp(name, "workdir")) {
		sb_add_word(sb, j->workdir);
	} else if (!strcmp(name, "name")) {
		sb_add_word(sb, j->name);
	} else if (!strcmp(name, "run_args")) {
		sb_adds(sb, j->run_args ? j->run_args : "");
	} else {
		BUG("placeholder '%s'", name);
	}
}

/* One line of the template (without its line break) into out, placeholders replaced. */
static int render_line(const char *tpath, int line, const char *p, size_t len, const struct slurm_job *j,
		       struct strbuf *out)
{
	const char *end = p + len;

	while (p < end) {
		const char *open = memmem(p, (size_t)(end - p), "{{", 2), *close;
		char name[64];
		int known = 0;

		if (!open) {
			sb_add(out, p, (size_t)(end - p));
			break;
		}
		sb_add(out, p, (size_t)(open - p));
		close = memmem(open + 2, (size_t)(end - open - 2), "}}", 2);
		if (!close || close - open - 2 >= (long)sizeof(name))
			return error("%s:%d: '{{' without a closing '}}' on its line", tpath, line);
		snprintf(name, sizeof(name), "%.*s", (int)(close - open - 2), open + 2);
		for (int i = 0; placeholders[i]; i++)
			known |= !strcmp(placeholders[i], name);
		if (!known) {
			const char *near = closest_name(name, placeholders);

			return error("%s:%d: unknown placeholder '{{%s}}'%s%s%s", tpath, line, name,
				     near ? " (did you mean '{{" : "", near ? near : "", near ? "}}'?)" : "");
		}
		expand(j, name, out);
		p = close + 2;
	}
	return 0;
}

int slurm_render(const char *tpath, const char *text, const struct slurm_job *j, struct strbuf *out)
{
	int line = 0;

	sb_adds(out, "");
	for (const char *p = text; *p;) {
		size_t len = strcspn(p, "\n");

		line++;
		/* "##" lines speak to whoever edits the template: the job script does without them. */
		if (strncmp(p, "##", 2)) {
			if (render_line(tpath, line, p, len, j, out))
				return -1;
			if (p[len])
				sb_addc(out, '\n');
		}
		p += len + (p[len] != '\0');
	}
	return 0;
}

/* ---- sweep submit ---- */

/* The template: --template, else slurm/sweep.sbatch here, else beside the binary (BIN/../slurm). */
static char *find_template(const char *given, const char *exe)
{
	char *path, *dir;

	if (given)
		return xstrdup(given);
	if (!access("slurm/sweep.sbatch", R_OK))
		return xstrdup("slurm/sweep.sbatch");
	dir = xstrdup(exe);
	path = xasprintf("%s/../slurm/sweep.sbatch", dirname(dir));
	free(dir);
	if (!access(path, R_OK))
		return path;
	free(path);
	return NULL;
}

/* The CPUs of the smallest node of partition (the default one when NULL), as sinfo tells; -1 when it
 * does not. Ten seconds at most. */
static long node_cpus(const char *partition)
{
	char *argv[] = { "sinfo", "-h", "-o", "%c", partition ? "-p" : NULL, (char *)partition, NULL };
	struct strbuf out = STRBUF_INIT;
	long min = -1;

	slurm_query(argv, &out);
	for (char *p = out.buf; p && *p;) {
		char *end;
		long v = strtol(p, &end, 10);

		if (end == p)
			break;
		if (v > 0 && (min < 0 || v < min))
			min = v;
		p = end + strspn(end, "+ \n");
	}
	sb_release(&out);
	return min;
}

/* path made absolute (from the current folder): the job runs elsewhere. It need not exist. */
static char *abs_path(const char *path)
{
	char buf[PATH_MAX];

	if (path[0] == '/')
		return xstrdup(path);
	if (!getcwd(buf, sizeof(buf))) {
		error("cannot find the current folder: %s", strerror(errno));
		return NULL;
	}
	while (path[0] == '.' && path[1] == '/')
		path += 2;
	return !strcmp(path, ".") ? xstrdup(buf) : xasprintf("%s/%s", buf, path);
}

/* Run sbatch --parsable with script on its stdin; the job id into id. -1 after error(). */
static int sbatch(const char *script, char *id, size_t n)
{
	char *argv[] = { "sbatch", "--parsable", NULL };
	/* sbatch's stderr is the user's: its message explains a failure. In our process group, as a
	 * command typed at the terminal would be; no deadline (sbatch has its own timeouts). An sbatch that
	 * exits early (bad option) closes its stdin: that is its error to report, not a SIGPIPE to die of. */
	struct spawn_opts o = {
		.argv = argv,
		.in = SPAWN_CAPTURE,
		.in_data = script,
		.in_len = strlen(script),
		.out = { .to = SPAWN_CAPTURE, .cap = 255 },
		.err = { .to = SPAWN_INHERIT },
		.same_group = 1,
		.linger = 1.0,
	};
	struct spawn_result res;
	const char *buf;
	size_t len;
	int ret = 0;

	if (spawn_run(&o, &res)) {
		error("cannot run sbatch: %s", strerror(res.exec_errno));
		ret = error("sbatch failed (its message is above)");
		goto out;
	}
	if (!WIFEXITED(res.status) || WEXITSTATUS(res.status)) {
		ret = error("sbatch failed (its message is above)");
		goto out;
	}
	/* --parsable prints "jobid" or "jobid;cluster". */
	buf = res.out.buf ? res.out.buf : "";
	len = strspn(buf, "0123456789");
	if (!len || len >= n) {
		ret = error("sbatch printed no job id: '%.100s'", buf);
		goto out;
	}
	snprintf(id, n, "%.*s", (int)len, buf);
out:
	spawn_result_release(&res);
	return ret;
}

/* Plan the spec into the sweep's database, and for an array each shard's own database from it. A kind of
 * failure (exitcode.h) after error(). */
static int prepare_dbs(const struct spec *s, const char *db, int shards)
{
	struct store *st;
	uint64_t added, existing;
	int ret;

	if ((ret = store_open(db, STORE_RW, &st)))
		return ret;
	if (!(ret = store_lock(st, "sweep submit")))   /* FAIL_BUSY while a run writes it */
		ret = plan_db(s, st, 0, 0, &added, &existing);
	store_close(st);
	if (ret)
		return ret;
	fprintf(stderr, "sweep: %s: %" PRIu64 " cells in %s (%" PRIu64 " new)\n", s->name, added + existing, db,
		added);
	for (int i = 0; i < shards; i++) {
		struct store_merge_opts o = { (unsigned)i, (unsigned)shards, NULL };
		char *shard = slurm_shard_db(db, i);
		const char *in[1] = { db };

		/* A merge, so that a shard starts with what the sweep has: its ok cells are not run again. */
		ret = store_merge(shard, in, 1, &o, NULL);
		free(shard);
		if (ret)
			return ret;
	}
	return FAIL_OK;
}

static int record_job(const char *db, const char *id, const struct slurm_job *j, const char *script,
		      const char *command)
{
	struct store *st;
	char now[32], nodes[16], gpus[16], shards[16];
	const char *bind[8] = { id, j->name, now, nodes, gpus, shards, script, command };
	int ret;

	iso_time(now_wall(), now, sizeof(now));
	snprintf(nodes, sizeof(nodes), "%d", j->nodes);
	snprintf(gpus, sizeof(gpus), "%d", j->gpus_per_node);
	snprintf(shards, sizeof(shards), "%d", j->shards);
	if ((ret = store_open(db, STORE_RW, &st)))
		return ret;
	ret = store_put_slurm_job(st, bind);
	store_close(st);
	return ret;
}

int slurm_prepare(struct slurm_submit *x, const struct spec *s, const char *spec_path, const char *db,
		  const char *tmpl, const char *inventory)
{
	struct slurm_job *j = &x->job;
	struct strbuf text = STRBUF_INIT;
	char exe[PATH_MAX];
	ssize_t n;
	int ret = -1;

	if (!j->tasks_per_node)
		j->tasks_per_node = j->gpus_per_node > 0 ? j->gpus_per_node : 1;
	if (j->exclusive < 0)
		j->exclusive = s->kernel != NULL;
	if (!j->cpus_per_task) {
		long cpus = node_cpus(j->partition);

		long per = cpus / j->tasks_per_node;

		j->cpus_per_task = cpus > 0 ? (int)(per > 1 ? per : 1) : -1;
		if (cpus <= 0)
			warning("sinfo told no CPUs per node: no --cpus-per-task in the script"
				" (give --cpus-per-task N)");
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return error("cannot find this program's path: %s", strerror(errno));
	exe[n] = '\0';
	x->exe = xstrdup(exe);
	if (!(x->spec = abs_path(spec_path)) || !(x->db = abs_path(db ? db : s->db)) ||
	    !(x->workdir = abs_path(".")))
		goto out;
	if (inventory) {
		char *inv = abs_path(inventory);

		if (!inv)
			goto out;
		sb_adds(&x->args, "--inventory ");
		sb_add_word(&x->args, inv);
		free(inv);
	}
	/* The log sits beside the database, one file per job (and array task), appended to on requeue. */
	{
		char *d = xstrdup(x->db);

		x->log = xasprintf("%s/%s-%s.log", dirname(d), s->name, j->shards ? "%A_%a" : "%j");
		free(d);
	}
	if (slurm_option_ok("the log path", x->log))
		goto out;
	j->name = s->name;
	j->sweep = x->exe;
	j->spec = x->spec;
	j->db = x->db;
	j->workdir = x->workdir;
	j->log = x->log;
	j->run_args = x->args.buf ? x->args.buf : "";
	if (!(x->tmpl = find_template(tmpl, exe))) {
		error("no job template: slurm/sweep.sbatch is not here nor beside %s; give --template FILE", exe);
		goto out;
	}
	if (sb_read_file(&text, x->tmpl) || slurm_render(x->tmpl, text.buf, j, &x->script))
		goto out;
	ret = 0;
out:
	sb_release(&text);
	return ret;
}

int slurm_submit(struct slurm_submit *x, const struct spec *s, char *id, size_t n)
{
	int shards = x->job.shards, ret = -1;
	/* What was there before: a failed submit removes only what it made. */
	char *had = xcalloc((size_t)shards + 1, 1);

	had[shards] = !access(x->db, F_OK);
	for (int i = 0; i < shards; i++) {
		char *p = slurm_shard_db(x->db, i);

		had[i] = !access(p, F_OK);
		free(p);
	}
	if (mkdir_parent(x->db) || (ret = prepare_dbs(s, x->db, shards)) || (ret = sbatch(x->script.buf, id, n))) {
		for (int i = 0; i < shards; i++) {
			char *p = slurm_shard_db(x->db, i);

			if (!had[i])
				store_remove_files(p);
			free(p);
		}
		if (!had[shards])
			store_remove_files(x->db);
		goto out;
	}
	ret = record_job(x->db, id, &x->job, x->script.buf, x->command.buf);
out:
	free(had);
	return ret;
}

void slurm_submit_release(struct slurm_submit *x)
{
	free(x->exe);
	free(x->spec);
	free(x->db);
	free(x->workdir);
	free(x->log);
	free(x->tmpl);
	sb_release(&x->args);
	sb_release(&x->script);
	sb_release(&x->command);
}

/* ---- runs and states ---- */

int slurm_note_run(struct store *st, int64_t run)
{
	const char *job = getenv("SLURM_ARRAY_JOB_ID"), *task = getenv("SLURM_ARRAY_TASK_ID");
	const char *restarts = getenv("SLURM_RESTART_COUNT"), *node = getenv("SLURMD_NODENAME");
	const char *bind[5];
	char id[32];

	if (!job || !*job)
		job = getenv("SLURM_JOB_ID");
	if (!job || !*job)
		return 0;
	snprintf(id, sizeof(id), "%" PRId64, run);
	bind[0] = id;
	bind[1] = job;
	bind[2] = task && *task ? task : NULL;
	bind[3] = restarts && *restarts ? restarts : "0";
	bind[4] = node;
	if (store_put_slurm_run(st, bind))
		return error("cannot note the Slurm job of run %" PRId64, run);
	return 0;
}

struct states {
	char **v;
	size_t n, alloc;
};

/* Note "ID STATE", without the id when it is the job's own. */
static void add_state(struct states *st, const char *job, const char *id, size_t idlen, const char *state,
		      size_t statelen)
{
	ALLOC_GROW(st->v, st->n + 1, st->alloc);
	if (idlen == strlen(job) && !strncmp(id, job, idlen))
		st->v[st->n++] = xstrndup(state, statelen);
	else
		st->v[st->n++] = xasprintf("%.*s %.*s", (int)idlen, id, (int)statelen, state);
}

/* Array tasks in task order: 5_2 before 5_10. */
static int cmp_state(const void *a, const void *b)
{
	return strverscmp(*(char *const *)a, *(char *const *)b);
}

/* Run a Slurm query: stdout, capped, into out ("" when it could not run or failed). Ten seconds at most,
 * then SIGTERM (and SIGKILL 2 s later) to its process group: a slurmctld that does not answer must not
 * hang `sweep status`. Its stderr is dropped: the caller says "unknown" when it learns nothing. */
static void slurm_query(char **argv, struct strbuf *out)
{
	struct spawn_opts o = {
		.argv = argv,
		.out = { .to = SPAWN_CAPTURE, .cap = SLURM_QUERY_MAX },
		.deadline = now_mono() + 10,
		.term_grace = 2,
		.linger = 1,
	};
	struct spawn_result res;

	if (!spawn_run(&o, &res) && res.out.len)
		sb_add(out, res.out.buf, res.out.len);
	spawn_result_release(&res);
}

void slurm_job_state(const char *id, struct strbuf *out)
{
	char *squeue[] = { "squeue", "-h", "-j", (char *)id, "-o", "%i %T", NULL };
	char *scontrol[] = { "scontrol", "-o", "show", "job", (char *)id, NULL };
	struct states st = { 0 };
	struct strbuf text = STRBUF_INIT;
	char *line, *next;

	/* scontrol knows every task of an array, those finished less than MinJobAge ago too (squeue only those
	 * still queued); squeue is asked when scontrol says nothing. */
	slurm_query(scontrol, &text);
	for (line = text.buf; line && *line; line = next) {
		char *state, *task, *aj, tid[64];

		next = line + strcspn(line, "\n");
		if (*next)
			*next++ = '\0';
		state = strstr(line, " JobState=");
		task = strstr(line, " ArrayTaskId=");
		aj = strstr(line, " ArrayJobId=");
		if (!state)
			continue;
		if (task && aj)
			snprintf(tid, sizeof(tid), "%.*s_%.*s", (int)strcspn(aj + 12, " "), aj + 12,
				 (int)strcspn(task + 13, " "), task + 13);
		else
			snprintf(tid, sizeof(tid), "%s", id);
		add_state(&st, id, tid, strlen(tid), state + 10, strcspn(state + 10, " "));
	}
	if (!st.n) {
		sb_reset(&text);
		slurm_query(squeue, &text);
		for (line = text.buf; line && *line; line = next) {
			size_t n;

			next = line + strcspn(line, "\n");
			if (*next)
				*next++ = '\0';
			n = strcspn(line, " ");
			if (line[n])
				add_state(&st, id, line, n, line + n + 1, strlen(line + n + 1));
		}
	}
	sb_release(&text);
	if (st.n)
		qsort(st.v, st.n, sizeof(*st.v), cmp_state);
	for (size_t i = 0; i < st.n; i++) {
		sb_addf(out, "%s%s", i ? ", " : "", st.v[i]);
		free(st.v[i]);
	}
	free(st.v);
	if (!st.n)
		sb_adds(out, "unknown to Slurm now (ended long ago?)");
}

/* Ids go on a command line: digits only (a merged database is not trusted to hold others). */
static int add_job_row(const struct store_row *row, void *data)
{
	struct table *t = data;
	struct strbuf state = STRBUF_INIT;
	const char *cells[6];

	if (!row->text[0] || strspn(row->text[0], "0123456789") != strlen(row->text[0]))
		return 0;
	slurm_job_state(row->text[0], &state);
	for (int i = 0; i < 5; i++)
		cells[i] = row->text[i];
	cells[5] = state.buf;
	table_add(t, cells);
	sb_release(&state);
	return 0;
}

int slurm_status(struct store *st)
{
	static const char *const head[] = { "job", "sweep", "submitted", "shards", "runs", "slurm state" };
	struct table t;
	uint64_t have = 0;
	int ret;

	if (store_query(st, "SELECT count(*) FROM sqlite_master WHERE type = 'table'"
			" AND name IN ('slurm_jobs', 'slurm_runs')", NULL, 0, 1, count_row, &have))
		return -1;
	if (have != 2)
		return 0;
	table_init(&t, 6, head);
	/* Jobs sweep submit sent, then those that ran sweep without it (a script of the user's own). */
	ret = store_query(st, "SELECT j.job, j.sweep, j.submitted, j.shards, (SELECT count(*) FROM slurm_runs r"
			  " WHERE r.job = j.job) FROM slurm_jobs j UNION ALL"
			  " SELECT r.job, min(u.sweep), '-', '-', count(*) FROM slurm_runs r JOIN runs u ON u.id = r.run"
			  " WHERE r.job NOT IN (SELECT job FROM slurm_jobs) GROUP BY r.job ORDER BY 3, 1",
			  NULL, 0, 1, add_job_row, &t);
	if (!ret && t.nrows) {
		printf("\nslurm jobs:\n");
		table_print(&t, stdout, &table_text);
	}
	table_release(&t);
	return ret;
}
