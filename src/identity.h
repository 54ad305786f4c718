/* identity.h: the files a sweep's measurement runs and reads, by their content: part of a sweep's identity. */
#ifndef SWEEP_IDENTITY_H
#define SWEEP_IDENTITY_H

#include <stddef.h>
#include <stdint.h>
#include "spec.h"
#include "util.h"

/* A file larger than this is identified by its size and modification time, not read. */
#define IDENTITY_BIG ((int64_t)64 << 20)
/* A word whose placeholders have more fillings than this is left out of the identity (said). */
#define IDENTITY_MAX_FILLS 4096

/* One file: its name as the spec writes it (placeholders filled) and what identifies its content. */
struct identity_file {
	char *name;        /* the word of a command ("python3", "prog.py"), or an inputs path as written */
	char *path;        /* where it was found: a program on PATH, an inputs path in the spec's folder */
	char *hash;        /* "sha256:HEX", or "size:N mtime:S.NS" for a file over IDENTITY_BIG */
	int big;
};

/* The files of one spec, sorted by name, each once. Owns its strings (identity_release). */
struct identity {
	struct identity_file *f;
	size_t n, alloc;
	char *folder;          /* where relative names were found: spec_folder() (NULL: the working folder) */
};

/*
 * The files of s's measurement, each hashed once: for a command sweep, the first word of command, prepare
 * and cleanup resolved as spawn resolves it (a name without '/' on PATH, else the path from the folder the
 * commands run in, spec_folder) and every other word that names an existing regular file there,
 * placeholders filled with each
 * value of the axes (and items) they name (a word with {gpu}, {host} or {cell} is known only on its
 * worker, and a word that is a metrics from: file is the command's output: both left out); and every path
 * of inputs:, relative to that folder too. A file over
 * IDENTITY_BIG is said on stderr (as "sweep: NAME: ..."). 0, or -1 after error() when the folder or an
 * inputs file is
 * missing or unreadable (the spec must change: exit 2). identity_release frees *out.
 */
int identity_collect(const struct spec *s, struct identity *out);
void identity_release(struct identity *id);
/* id as a JSON object {name: hash}, in name order (what sweeps.inputs and runs.inputs hold). */
void identity_json(const struct identity *id, struct strbuf *sb);
/* The differences between two such objects (NULL: none recorded), each as "'NAME': OLD -> NEW" ((none)
 * for a file on one side only), joined by "; " onto what. Returns how many. */
int identity_changes(const char *old_json, const char *new_json, struct strbuf *what);
/* name resolved as posix_spawnp resolves a program started in dir (NULL: the working folder): a name with
 * '/' as it is, else the first executable regular file of that name in $PATH's folders (an empty or
 * relative entry within dir). A new string, or NULL when nothing is found. */
char *identity_program(const char *name, const char *dir);
/* Why this host cannot start s's commands, appended to why (nothing when it can): the first program of
 * command:, prepare: or cleanup: that is not on PATH or, a relative path, not an executable file in the
 * working folder (the executor's: the spec's folder). A program with a placeholder is known only when a
 * cell fills it, and is not looked at. */
void identity_missing(const struct spec *s, const char *host, struct strbuf *why);

#endif
