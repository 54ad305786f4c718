/* merge.c: `sweep merge OUT.db IN.db...`: databases of other hosts or shards, checked, into one. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "../remote.h"
#include "../store.h"
#include "builtin.h"

static int print_conflict(const struct store_row *row, void *data)
{
	int *n = data;
	char a[52];

	if (!(*n)++)
		printf("\nconflicts (the output keeps its own result; at most 50 shown):\n");
	printf("  %s %s: kept median %s, %s has %s (run %s)\n", printable(a, row->text[0], 48), row->text[1],
	       row->text[2] ? row->text[2] : "NULL", row->text[3], row->text[4] ? row->text[4] : "NULL",
	       row->text[5] ? row->text[5] : "-");
	return 0;
}

static int merge_fn(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "quiet", no_argument, NULL, 'q' }, { NULL, 0, NULL, 0 },
	};
	struct store_merge_stats *stats;
	struct store *st;
	uint64_t conflicts = 0;
	int opt, quiet = 0, n, listed = 0, rc;

	while ((opt = getopt_long(argc, argv, "q", opts, NULL)) != -1) {
		if (opt == 'q')
			quiet = 1;
		else
			return cmd_usage(&cmd_merge);
	}
	if (argc - optind < 2)
		return cmd_usage(&cmd_merge);
	n = argc - optind - 1;
	stats = xcalloc((size_t)n, sizeof(*stats));
	if ((rc = store_merge(argv[optind], (const char *const *)argv + optind + 1, n, NULL, stats))) {
		free(stats);
		error("nothing was merged; '%s' is as it was", argv[optind]);
		return exitcode_of(rc);
	}
	for (int i = 0; i < n; i++) {
		const struct store_merge_stats *s = &stats[i];

		conflicts += s->conflicts;
		if (!quiet)
			printf("%s: %" PRIu64 " cells (%" PRIu64 " new), %" PRIu64 " results new, %" PRIu64
			       " already there, %" PRIu64 " conflicts; %" PRIu64 " runs, %" PRIu64 " hosts new\n",
			       argv[optind + 1 + i], s->cells, s->cells_new, s->results_new, s->results_same,
			       s->conflicts, s->runs_new, s->hosts_new);
		if (!quiet && s->cells_decided)
			printf("%s: %" PRIu64 " cells took its newer decision (sweep retry, run --force, --replan):"
			       " state, attempts and ok results as there\n", argv[optind + 1 + i], s->cells_decided);
		if (!quiet && s->results_hosts)
			printf("%s: %" PRIu64 " results measured by another host than the output's kept in that"
			       " host's own cells\n", argv[optind + 1 + i], s->results_hosts);
	}
	free(stats);
	if (conflicts) {
		struct strbuf note = STRBUF_INIT, word = STRBUF_INIT;

		remote_quote(&word, argv[optind]);
		store_merge_conflicts_note(word.buf, conflicts, &note);
		printf("%s: %s\n", argv[optind], note.buf);
		sb_release(&note);
		sb_release(&word);
	}
	if (conflicts && !quiet && !store_open(argv[optind], STORE_RO, &st)) {
		store_query(st, "SELECT c.sweep, c.key, r.median, x.source, x.median, x.run FROM conflicts x"
			    " JOIN cells c ON c.id = x.cell LEFT JOIN results r ON r.id = x.kept"
			    " ORDER BY x.id LIMIT 50", NULL, 0, 1, print_conflict, &listed);
		store_close(st);
	}
	return EXIT_OK;
}

const struct cmd cmd_merge = { "merge", merge_fn,
	"sweep merge OUT.db IN.db... [--quiet]",
	"Combine sweep databases (one per rented host, or the shards of an array job) into OUT.db, made\n"
	"when missing. Cells are matched by key, results and the rest by what identifies them: merging a\n"
	"file again adds nothing. A result belongs to the host that measured it: one of another host than\n"
	"the cell's ok result goes to that host's own cell (per: host's replica), so every host's results\n"
	"are kept. Only an ok result of the same host for a cell that has one is kept apart in the table\n"
	"conflicts (and listed), never written over it. A cell retried or forced (sweep retry, run\n"
	"--force) in one database more lately than in the other takes that database's state and ok\n"
	"results, so a shard seeded again runs it and an older copy undoes nothing. An input a run writes\n"
	"now is merged as it is, with a warning; the runs of Slurm jobs come over too. Every input is\n"
	"untrusted: opened read-only with SQLite's defensive settings, checked (integrity, schema, types,\n"
	"keys) before anything is written; a bad one is refused with the reason and OUT.db is left as it\n"
	"was." };
