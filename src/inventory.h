/* inventory.h: a host inventory (YAML in hosts/): names, addresses, MPI slots and labels of machines. */
#ifndef SWEEP_INVENTORY_H
#define SWEEP_INVENTORY_H

#include "json.h"
#include "store.h"

/*
 * One machine. hostname is what the machine's `hostname` says (workers report it); address is how
 * mpirun and ssh reach it. labels are the inventory's scalars (class, provider, price_per_hour, notes,
 * anything else), written into hosts.facts as {"labels": {...}} so that reports group by label.NAME;
 * the label "name" is always the inventory name.
 */
struct inventory_host {
	char *name;
	char *hostname;        /* default: name */
	int hostname_line, hostname_col;   /* where the file gives hostname; 0 when it is the default */
	char *address;         /* default: hostname */
	int slots;             /* MPI ranks to start there (its GPUs), default 1 */
	struct json_obj labels;
	int line, col;         /* where the entry starts in the file */
	/* How ssh and scp reach it (sweep launch, status --hosts, pull); NULL or 0: ssh's own default
	 * (from ~/.ssh/config and the like). */
	char *user;
	int port;
	char *identity;        /* a private key file (ssh -i) */
	char **ssh_options;    /* "Name=value" for ssh -o: the host's, then those of defaults */
	int nssh_options;
	/* Where sweep runs there: workdir is the folder (relative: under the remote home; default "sweep"),
	 * sweep_bin the binary, relative to workdir unless absolute (default "build/sweep"). */
	char *workdir;
	char *sweep_bin;
};

/* Owns every string; inventory_release frees them. */
struct inventory {
	char *path;
	struct inventory_host *hosts;
	int nhosts;
	size_t alloc;
};

/*
 * Read and check an inventory: a mapping with "hosts:" (a list of mappings) and optional "defaults:"
 * (slots, labels and the ssh fields user, port, identity, ssh_options, workdir and sweep_bin every host
 * starts from). Each problem is printed as "path:line:col: message";
 * returns -1 after them (inv holds nothing), else 0.
 */
int inventory_load(const char *path, struct inventory *inv);
int inventory_parse(const char *path, const char *text, size_t len, struct inventory *inv);
void inventory_release(struct inventory *inv);

/* A path on a host (workdir, sweep_bin, a file sweep launch copies there) goes into shell commands and
 * scp arguments: 1 when it holds only letters, digits and ._/+@,=- (and "~" or a leading "~/" for the
 * home) and does not start with '-'. */
int inventory_remote_path_ok(const char *s);

/* The entry a worker's hostname belongs to: equal to its hostname or name, or equal up to the first dot
 * of either (node7 matches node7.cluster.example). NULL when none. */
const struct inventory_host *inventory_find(const struct inventory *inv, const char *hostname);

/* a and b name the same machine: equal, or equal up to the first dot when one of them has none. */
int inventory_same_host(const char *a, const char *b);

/* The labels of h as a JSON object: {"name": ..., then its labels in file order}. Appends to sb. */
void inventory_labels_json(const struct inventory_host *h, struct strbuf *sb);

/* Keep only the hosts whose label (or name, for "name") has the value of every want[i] = "NAME=VALUE". */
void inventory_keep(struct inventory *inv, char *const *want, int nwant);

/* An Open MPI hostfile: "ADDRESS slots=N" per host (a comment line names it). */
void inventory_hostfile(const struct inventory *inv, struct strbuf *sb);

/*
 * Write the labels of every host of st whose hostname the inventory knows into hosts.facts ($.labels,
 * replacing labels from an earlier inventory; hosts.hash keeps naming the facts as measured). *matched
 * and *unmatched count hostnames (either may be NULL); missing (when not NULL) gets the unmatched ones,
 * quoted and comma-separated. Returns 0, or -1 after error().
 */
int inventory_apply(const struct inventory *inv, struct store *st, int *matched, int *unmatched,
		    struct strbuf *missing);

#endif
