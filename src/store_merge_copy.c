/* store_merge_copy.c: the copy of a checked input into the output, rows matched by what identifies them. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "store_merge_int.h"
#include "util.h"

/* ---- run identities ---- */

/* A run's identity across databases: a hash of its row and of its workers' ranks, hosts and GPUs. */
struct runprint {
	uint64_t print;
	int64_t id;
};

static uint64_t print_text(uint64_t h, const char *s)
{
	/* NULL and "" differ: NULL hashes a byte no text holds. */
	if (!s)
		return hash64(h, "\xff", 2);
	return hash64(h, s, strlen(s) + 1);
}

/* The identity of run id of db from f (its sweep, start, argv, spec hash and version), then for each
 * worker in rank order its rank, its host's hash and its GPU. -1 after error(). */
static int run_print(sqlite3 *db, const char *const f[5], int64_t id, uint64_t *out)
{
	static const char wsql[] = "SELECT w.rank, h.hash, w.gpu FROM workers w LEFT JOIN hosts h ON h.id = w.host"
		" WHERE w.run = ?1 ORDER BY w.rank, w.id";
	sqlite3_stmt *w = prep(db, wsql);
	uint64_t h = HASH64_INIT;
	int rc;

	if (!w)
		return error("cannot read workers: %s", sqlite3_errmsg(db));
	for (int i = 0; i < 5; i++)
		h = print_text(h, f[i]);
	sqlite3_bind_int64(w, 1, id);
	while ((rc = sqlite3_step(w)) == SQLITE_ROW)
		for (int i = 0; i < 3; i++)
			h = print_text(h, (const char *)sqlite3_column_text(w, i));
	sqlite3_finalize(w);
	if (rc != SQLITE_DONE)
		return error("cannot read workers: %s", sqlite3_errmsg(db));
	*out = h;
	return 0;
}

static const char run_print_sql[] =
	"SELECT sweep, started, argv, spec_hash, version, id FROM runs ORDER BY id";

int store_merge_copy_prints(struct merge *m)
{
	sqlite3_stmt *s = prep(m->out, run_print_sql);
	int rc;

	if (!s)
		return store_merge_output_err(m);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		const char *f[5] = { col_text(s, 0), col_text(s, 1), col_text(s, 2), col_text(s, 3), col_text(s, 4) };
		struct runprint rp;

		rp.id = sqlite3_column_int64(s, 5);
		if (run_print(m->out, f, rp.id, &rp.print)) {
			sqlite3_finalize(s);
			return -1;
		}
		ALLOC_GROW(m->prints, m->nprints + 1, m->alloc_prints);
		m->prints[m->nprints++] = rp;
	}
	sqlite3_finalize(s);
	return rc == SQLITE_DONE ? 0 : store_merge_output_err(m);
}

/* ---- copying ---- */

/* Read every row of table t of the input (ORDER BY tail) and hand it to fn. */
static int each_row(struct merge *m, struct input *in, int t, const char *tail,
		    int (*fn)(struct merge *, struct input *, sqlite3_stmt *))
{
	struct strbuf sb = STRBUF_INIT;
	sqlite3_stmt *s;
	int rc, ret = 0;

	store_merge_input_select(&sb, &store_merge_tables[t], in->lacks[t], tail);
	s = prep(in->db, sb.buf);
	sb_release(&sb);
	if (!s)
		return store_merge_input_err(in, "cannot read it");
	while (!ret && (rc = sqlite3_step(s)) == SQLITE_ROW)
		ret = store_merge_input_check_row(in, &store_merge_tables[t], s) || fn(m, in, s) ? -1 : 0;
	if (!ret && rc != SQLITE_DONE)
		ret = store_merge_input_err(in, "cannot read it");
	sqlite3_finalize(s);
	return ret;
}

static int copy_sweep(struct merge *m, struct input *in, sqlite3_stmt *s)
{
	sqlite3_stmt *f = store_merge_output_stmt(m, O_SWEEP_FIND);
	sqlite3_stmt *a = store_merge_output_stmt(m, O_SWEEP_ADD);
	sqlite3_stmt *u = store_merge_output_stmt(m, O_SWEEP_NEWER);
	int rc, newer = 0;

	if (!f || !a || !u)
		return -1;
	bind_col(f, 1, s, 0);
	rc = sqlite3_step(f);
	if (rc == SQLITE_ROW) {
		const char *hash = (const char *)sqlite3_column_text(f, 0);
		const char *updated = (const char *)sqlite3_column_text(f, 1);

		/* Another spec under the same name (the grid grew, say): cells still match by key, and the
		 * sweep keeps the newer text. */
		if (hash && strcmp(hash, col_text(s, 5))) {
			char a[52];

			newer = updated && strcmp(col_text(s, 6), updated) > 0;
			warning("'%s': sweep '%s' has another spec than in '%s'; keeping the newer one, %s's",
				in->path, shown(a, col_text(s, 0)), m->out_path, newer ? in->path : m->out_path);
		}
		sqlite3_reset(f);
		if (!newer)
			return 0;
		for (int i = 0; i < 8; i++)
			bind_col(u, i + 1, s, i);
		return store_merge_output_step(m, u, NULL, NULL);
	}
	sqlite3_reset(f);
	if (rc != SQLITE_DONE)
		return store_merge_output_err(m);
	for (int i = 0; i < 8; i++)
		bind_col(a, i + 1, s, i);
	return store_merge_output_step(m, a, NULL, NULL);
}

/* Where a statement's parameter comes from: a column of the input's row, as it is (ID_NONE) or as the
 * output's id of the run, host or worker it names (NULL stays NULL). */
enum idmap_of { ID_NONE, ID_RUN, ID_HOST, ID_WORKER };
struct param {
	enum idmap_of map;
	int col;
};

static void bind_params(sqlite3_stmt *st, const struct param *p, int n, struct input *in, sqlite3_stmt *s)
{
	for (int i = 0; i < n; i++) {
		const struct idmap *map = p[i].map == ID_RUN ? &in->runs : p[i].map == ID_HOST ? &in->hosts :
					  &in->workers;

		if (p[i].map == ID_NONE)
			bind_col(st, i + 1, s, p[i].col);
		else
			store_bind_id(st, i + 1, sqlite3_column_type(s, p[i].col) == SQLITE_NULL ? 0 :
				      idmap_get(map, sqlite3_column_int64(s, p[i].col)));
	}
}

/* The output's row that find matches with the parameters fp (its id into *id when id is not NULL), else
 * the row add inserts with the parameters ap (*added = 1, its id into *id). 0, or -1 after error(). */
static int find_or_add(struct merge *m, struct input *in, sqlite3_stmt *s, enum ostmt find,
		       const struct param *fp, int nf, enum ostmt add, const struct param *ap, int na, int64_t *id,
		       int *added)
{
	sqlite3_stmt *f = store_merge_output_stmt(m, find), *a = store_merge_output_stmt(m, add);
	int found;

	if (!f || !a)
		return -1;
	bind_params(f, fp, nf, in, s);
	if (store_merge_output_step(m, f, &found, id))
		return -1;
	*added = !found;
	if (found)
		return 0;
	bind_params(a, ap, na, in, s);
	if (store_merge_output_step(m, a, NULL, NULL))
		return -1;
	if (id)
		*id = sqlite3_last_insert_rowid(m->out);
	return 0;
}

/* A host by its facts' hash; one already there takes the input's labels. */
static int copy_host(struct merge *m, struct input *in, sqlite3_stmt *s)
{
	static const struct param fp[] = { { ID_NONE, 3 } };
	static const struct param ap[] = { { ID_NONE, 1 }, { ID_NONE, 2 }, { ID_NONE, 3 }, { ID_NONE, 4 } };
	sqlite3_stmt *l = store_merge_output_stmt(m, O_HOST_LABELS);
	int64_t id;
	int added;

	if (!l || find_or_add(m, in, s, O_HOST_FIND, fp, 1, O_HOST_ADD, ap, 4, &id, &added))
		return -1;
	if (!added) {
		sqlite3_bind_int64(l, 1, id);
		bind_col(l, 2, s, 2);
		bind_col(l, 3, s, 4);
		if (store_merge_output_step(m, l, NULL, NULL))
			return -1;
	}
	in->st->hosts_new += added;
	idmap_put(&in->hosts, sqlite3_column_int64(s, 0), id);
	return 0;
}

static int copy_run(struct merge *m, struct input *in, sqlite3_stmt *s)
{
	const char *f[5] = { col_text(s, 1), col_text(s, 2), col_text(s, 4), col_text(s, 5), col_text(s, 6) };
	sqlite3_stmt *a = store_merge_output_stmt(m, O_RUN_ADD);
	sqlite3_stmt *e = store_merge_output_stmt(m, O_RUN_END);
	int64_t src = sqlite3_column_int64(s, 0), id = 0;
	uint64_t print;

	if (!a || !e || run_print(in->db, f, src, &print))
		return -1;
	for (size_t i = 0; i < m->nprints && !id; i++)
		if (m->prints[i].print == print)
			id = m->prints[i].id;
	if (id) {
		sqlite3_bind_int64(e, 1, id);
		bind_col(e, 2, s, 3);
		bind_col(e, 3, s, 7);
		if (store_merge_output_step(m, e, NULL, NULL))
			return -1;
	} else {
		for (int i = 1; i < 11; i++)
			bind_col(a, i, s, i);
		if (store_merge_output_step(m, a, NULL, NULL))
			return -1;
		id = sqlite3_last_insert_rowid(m->out);
		ALLOC_GROW(m->prints, m->nprints + 1, m->alloc_prints);
		m->prints[m->nprints].print = print;
		m->prints[m->nprints++].id = id;
		in->st->runs_new++;
	}
	idmap_put(&in->runs, src, id);
	return 0;
}

/* A worker by its run and rank. */
static int copy_worker(struct merge *m, struct input *in, sqlite3_stmt *s)
{
	static const struct param fp[] = { { ID_RUN, 1 }, { ID_NONE, 2 } };
	static const struct param ap[] = { { ID_RUN, 1 }, { ID_NONE, 2 }, { ID_HOST, 3 }, { ID_NONE, 4 },
					   { ID_NONE, 5 }, { ID_NONE, 6 }, { ID_NONE, 7 } };
	int64_t id;
	int added;

	if (!idmap_get(&in->runs, sqlite3_column_int64(s, 1)))
		BUG("worker of an unmapped run");
	if (find_or_add(m, in, s, O_WORKER_FIND, fp, 2, O_WORKER_ADD, ap, 7, &id, &added))
		return -1;
	idmap_put(&in->workers, sqlite3_column_int64(s, 0), id);
	return 0;
}

/* A control measurement by its run, worker, sweep, params and start. */
static int copy_control(struct merge *m, struct input *in, sqlite3_stmt *s)
{
	static const struct param fp[] = { { ID_RUN, 1 }, { ID_WORKER, 2 }, { ID_NONE, 3 }, { ID_NONE, 4 },
					   { ID_NONE, 5 } };
	static const struct param ap[] = { { ID_RUN, 1 }, { ID_WORKER, 2 }, { ID_NONE, 3 }, { ID_NONE, 4 },
					   { ID_NONE, 5 }, { ID_NONE, 6 }, { ID_NONE, 7 }, { ID_NONE, 8 },
					   { ID_NONE, 9 } };
	int added;

	if (find_or_add(m, in, s, O_CONTROL_FIND, fp, 5, O_CONTROL_ADD, ap, 9, NULL, &added))
		return -1;
	in->st->controls_new += added;
	return 0;
}

/* A probe by its host, GPU, name, run and when it was measured. */
static int copy_probe(struct merge *m, struct input *in, sqlite3_stmt *s)
{
	static const struct param fp[] = { { ID_HOST, 1 }, { ID_NONE, 2 }, { ID_NONE, 3 }, { ID_RUN, 6 },
					   { ID_NONE, 7 } };
	static const struct param ap[] = { { ID_HOST, 1 }, { ID_NONE, 2 }, { ID_NONE, 3 }, { ID_NONE, 4 },
					   { ID_NONE, 5 }, { ID_RUN, 6 }, { ID_NONE, 7 } };
	int added;

	if (find_or_add(m, in, s, O_PROBE_FIND, fp, 5, O_PROBE_ADD, ap, 7, NULL, &added))
		return -1;
	in->st->probes_new += added;
	return 0;
}

static int copy_prediction(struct merge *m, struct input *in, sqlite3_stmt *s)
{
	sqlite3_stmt *f = store_merge_output_stmt(m, O_PREDICTION_FIND);
	sqlite3_stmt *a = store_merge_output_stmt(m, O_PREDICTION_ADD);
	int rc;

	if (!f || !a)
		return -1;
	bind_col(f, 1, s, 1);
	bind_col(f, 2, s, 2);
	bind_col(f, 3, s, 3);
	rc = sqlite3_step(f);
	if (rc == SQLITE_ROW) {
		char a[52], b[52];

		/* A prediction is registered once, before the run: the output's stands. */
		if (sqlite3_column_double(f, 0) != sqlite3_column_double(s, 4))
			warning("'%s': prediction of %s for cell %s differs from the one in '%s'; keeping that one",
				in->path, shown(a, col_text(s, 3)), shown(b, col_text(s, 2)), m->out_path);
		sqlite3_reset(f);
		return 0;
	}
	sqlite3_reset(f);
	if (rc != SQLITE_DONE)
		return store_merge_output_err(m);
	for (int i = 1; i < 9; i++)
		bind_col(a, i, s, i);
	if (store_merge_output_step(m, a, NULL, NULL))
		return -1;
	in->st->predictions_new++;
	return 0;
}

static int copy_slurm_job(struct merge *m, struct input *in, sqlite3_stmt *s)
{
	sqlite3_stmt *a = store_merge_output_stmt(m, O_SLURM_JOB_ADD);

	(void)in;
	if (!a)
		return -1;
	for (int i = 0; i < 8; i++)
		bind_col(a, i + 1, s, i);
	return store_merge_output_step(m, a, NULL, NULL);
}

static int copy_slurm_run(struct merge *m, struct input *in, sqlite3_stmt *s)
{
	sqlite3_stmt *a = store_merge_output_stmt(m, O_SLURM_RUN_ADD);
	int64_t run = idmap_get(&in->runs, sqlite3_column_int64(s, 0));

	if (!a)
		return -1;
	if (!run)
		BUG("slurm run of an unmapped run");
	sqlite3_bind_int64(a, 1, run);
	for (int i = 1; i < 5; i++)
		bind_col(a, i + 1, s, i);
	return store_merge_output_step(m, a, NULL, NULL);
}

static int copy_rows(struct merge *m, struct input *in)
{
	sqlite3_stmt *s;
	int before, added;

	if (!(s = prep(m->out, "INSERT INTO merges(source, merged, cells, results, conflicts)"
			       " VALUES(?1, ?2, 0, 0, 0)")))
		return store_merge_output_err(m);
	sqlite3_bind_text(s, 1, in->path, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(s, 2, m->now, -1, SQLITE_TRANSIENT);
	if (sqlite3_step(s) != SQLITE_DONE) {
		sqlite3_finalize(s);
		return store_merge_output_err(m);
	}
	sqlite3_finalize(s);
	in->merge = sqlite3_last_insert_rowid(m->out);
	before = sqlite3_total_changes(m->out);
	if (each_row(m, in, T_SWEEPS, " ORDER BY name", copy_sweep) ||
	    each_row(m, in, T_HOSTS, " ORDER BY id", copy_host) ||
	    each_row(m, in, T_RUNS, " ORDER BY id", copy_run) ||
	    each_row(m, in, T_WORKERS, " ORDER BY id", copy_worker) ||
	    each_row(m, in, T_CELLS, " ORDER BY id", store_merge_cells_copy) ||
	    each_row(m, in, T_RESULTS, " ORDER BY id", store_merge_cells_copy_result) ||
	    store_merge_cells_drop_empty(m, in) ||
	    each_row(m, in, T_CONTROLS, " ORDER BY id", copy_control) ||
	    each_row(m, in, T_PROBES, " ORDER BY id", copy_probe) ||
	    each_row(m, in, T_PREDICTIONS, " ORDER BY id", copy_prediction) ||
	    (in->has[T_SLURM_JOBS] && each_row(m, in, T_SLURM_JOBS, " ORDER BY job", copy_slurm_job)) ||
	    (in->has[T_SLURM_RUNS] && each_row(m, in, T_SLURM_RUNS, " ORDER BY run", copy_slurm_run)))
		return -1;
	/* The log names inputs that changed something: merging a file again leaves no trace. */
	added = sqlite3_total_changes(m->out) != before;
	if (!(s = prep(m->out, added ? "UPDATE merges SET cells = ?2, results = ?3, conflicts = ?4 WHERE id = ?1"
				     : "DELETE FROM merges WHERE id = ?1")))
		return store_merge_output_err(m);
	sqlite3_bind_int64(s, 1, in->merge);
	if (added) {
		sqlite3_bind_int64(s, 2, (sqlite3_int64)in->st->cells_new);
		sqlite3_bind_int64(s, 3, (sqlite3_int64)in->st->results_new);
		sqlite3_bind_int64(s, 4, (sqlite3_int64)in->st->conflicts);
	}
	if (sqlite3_step(s) != SQLITE_DONE) {
		sqlite3_finalize(s);
		return store_merge_output_err(m);
	}
	sqlite3_finalize(s);
	return 0;
}

int store_merge_copy_input(struct merge *m, struct input *in)
{
	int ret = copy_rows(m, in);

	/* The maps serve the copy of this input only. */
	idmap_release(&in->runs);
	idmap_release(&in->hosts);
	idmap_release(&in->workers);
	idmap_release(&in->cells);
	idmap_release(&in->decided);
	idmap_release(&in->others);
	return ret;
}
