/* store_file.c: the database as a file: its one name, writer lock and side files; what may be written. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include "store_int.h"
#include "util.h"

/* The files SQLite and sweep keep beside a database, by the suffix of its name. */
static const char *const side_tails[] = { "-wal", "-shm", "-journal", "-writer" };

/*
 * The name path has once every symbolic link in it is followed: realpath() of the file, or of its folder
 * when the file does not exist yet (a database about to be made). 0 and *out (the caller frees it); 1
 * when path is a symbolic link to a missing file (SQLite would make the file it points to, a name no lock
 * of ours would follow); -1 with errno when it cannot be resolved (a missing folder).
 */
static int file_real(const char *path, char **out)
{
	const char *slash = strrchr(path, '/');
	char *dir, *rdir;
	struct stat sb;

	if ((*out = realpath(path, NULL)))
		return 0;
	if (errno != ENOENT)
		return -1;
	if (!lstat(path, &sb))
		return 1;
	dir = slash ? xstrndup(path, slash == path ? 1 : (size_t)(slash - path)) : xstrdup(".");
	rdir = realpath(dir, NULL);
	free(dir);
	if (!rdir)
		return -1;
	*out = xasprintf("%s/%s", strcmp(rdir, "/") ? rdir : "", slash ? slash + 1 : path);
	free(rdir);
	return 0;
}

int store_file_real(const char *path, char **out)
{
	int rc = file_real(path, out), e = errno;

	if (rc > 0)
		return (error("'%s' is a symbolic link to a missing file: name the database itself", path),
			FAIL_MISSING);
	if (rc < 0)
		return (error("cannot resolve '%s': %s", path, strerror(e)),
			e == ENOENT || e == ENOTDIR ? FAIL_MISSING : FAIL_IO);
	return 0;
}

int store_file_one_name(const char *path, const char *real)
{
	struct stat sb;

	/* (a folder's links are its entries: store_file_open refuses it as no regular file) */
	if (!stat(real, &sb) && S_ISREG(sb.st_mode) && sb.st_nlink > 1)
		return error("'%s' has %ju names (hard links): SQLite keeps one write-ahead log per name, so "
			     "writing it through two names corrupts it; not writing it (keep one name: find DIR "
			     "-samefile '%s' lists them)", path, (uintmax_t)sb.st_nlink, real);
	/* A log or journal with another name (a link) would be another database's, or shared with one. The
	 * -writer, last, is opened without following a link (lock_open). */
	for (size_t i = 0; i + 1 < ARRAY_SIZE(side_tails); i++) {
		char *p = xasprintf("%s%s", real, side_tails[i]);
		int bad = !lstat(p, &sb) && (S_ISLNK(sb.st_mode) || sb.st_nlink > 1);

		if (bad)
			error("'%s' beside '%s' is a %s: SQLite's %s must be the database's own; not writing it", p,
			      path, S_ISLNK(sb.st_mode) ? "symbolic link" : "file with several names",
			      side_tails[i] + 1);
		free(p);
		if (bad)
			return -1;
	}
	return 0;
}

/* ---- the writer lock ---- */

/* Room a writer keeps for recording how it stopped when its disk fills up (store_free_reserve): enough
 * for handing back the cells in flight of a large run (some thousands of cells' pages in the WAL). */
#define STORE_RESERVE (8 << 20)

/*
 * The byte of the database file the writer lock covers: in SQLite's lock page (the page at 1 GiB, which
 * SQLite never writes), past the bytes SQLite itself locks there (0x40000000 to 0x400001ff: its pending,
 * reserved and shared locks). An open-file-description lock (F_OFD_SETLK) on it conflicts with no lock
 * SQLite takes, is not dropped when SQLite closes one of its descriptors of the file (as a process's
 * POSIX locks are), and works over NFS (where flock() is emulated with a lock of the whole file, which
 * would stop every reader).
 */
#define LOCK_BYTE 0x40000400

static int lock_byte(int fd, int cmd, short type, short *held)
{
	struct flock fl = { .l_type = type, .l_whence = SEEK_SET, .l_start = LOCK_BYTE, .l_len = 1 };

	if (fcntl(fd, cmd, &fl))
		return -1;
	if (held)
		*held = fl.l_type;
	return 0;
}

int store_file_open(const char *path, int writer)
{
	int fd = open(path, writer ? O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW : O_RDONLY | O_NONBLOCK | O_CLOEXEC,
		      0644);
	struct stat sb;

	if (fd >= 0 && (fstat(fd, &sb) || !S_ISREG(sb.st_mode))) {
		close(fd);
		errno = EINVAL;
		return -1;
	}
	return fd;
}

/* The holder a lock file names ("host H pid P since T: CMD"), as read; "" when empty. */
static void lock_read(int fd, char *buf, size_t n)
{
	ssize_t got = pread(fd, buf, n - 1, 0);

	buf[got > 0 ? got : 0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
}

/* The holder named in the note beside real (lock_read), "" when there is none. */
static void note_read(const char *real, char *who, size_t n)
{
	char *lp = xasprintf("%s-writer", real);
	/* Non-blocking: beside a merge's untrusted input, a FIFO of that name would hold an open. */
	int fd = open(lp, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	struct stat sb;

	*who = '\0';
	if (fd >= 0 && !fstat(fd, &sb) && S_ISREG(sb.st_mode))
		lock_read(fd, who, n);
	if (fd >= 0)
		close(fd);
	free(lp);
}

/* Open the note: never through a symbolic link (we empty and write it), a plain file of one name. */
static int lock_open(const char *lp)
{
	struct stat sb;
	int fd = open(lp, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);

	if (fd < 0)
		return error("cannot open the writer lock '%s': %s", lp, errno == ELOOP ? "a symbolic link" :
			     strerror(errno));
	if (fstat(fd, &sb) || !S_ISREG(sb.st_mode) || sb.st_nlink > 1) {
		close(fd);
		return error("cannot open the writer lock '%s': not a regular file of one name", lp);
	}
	return fd;
}

/* The note beside real, under the lock: who writes (for the message that refuses the next writer), and
 * the reserve. Older sweeps locked the note itself (flock): it is taken too, so they are refused. */
static int note_take(const char *path, const char *real, const char *what, int *out)
{
	char *lp = xasprintf("%s-writer", real), who[512], host[256] = "?";
	struct strbuf sb = STRBUF_INIT;
	int fd;

	if ((fd = lock_open(lp)) < 0)
		goto fail;
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		lock_read(fd, who, sizeof(who));
		error("'%s' is being written by an older sweep (%s); one writer at a time: wait for it to end "
		      "or stop it", path, *who ? who : "which has not said who it is");
		close(fd);
		goto fail;
	}
	/* A clean end empties the file: a name left in it is a writer that died holding the lock. */
	lock_read(fd, who, sizeof(who));
	if (*who)
		fprintf(stderr, "sweep: '%s': taking over the writer lock of a sweep that is gone (%s)\n", path, who);
	gethostname(host, sizeof(host) - 1);
	iso_time(now_wall(), who, sizeof(who));
	sb_addf(&sb, "host %s pid %ld since %s: %s\n", host, (long)getpid(), who, what);
	if (ftruncate(fd, 0) || pwrite(fd, sb.buf, sb.len, 0) != (ssize_t)sb.len)
		warning("cannot write '%s': %s", lp, strerror(errno));
	/* The reserve: blocks allocated to the file past its end (readers still see the one line). A file
	 * system without fallocate, or a disk already full, leaves the writer without one. */
	if (fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, STORE_RESERVE)) {
		/* nothing to do: store_free_reserve has nothing to give then */
	}
	sb_release(&sb);
	free(lp);
	*out = fd;
	return 0;
fail:
	free(lp);
	return -1;
}

int store_file_lock(const char *path, const char *real, int fd, const char *what, int *note)
{
	char who[512];
	short held;
	int e;

	*note = -1;
	if (lock_byte(fd, F_OFD_SETLK, F_WRLCK, NULL)) {
		e = errno;
		if (e != EAGAIN && e != EACCES)
			return error("cannot lock '%s': %s", path, strerror(e));
		note_read(real, who, sizeof(who));
		return (error("'%s' is being written by another sweep (%s); one writer at a time: wait for it to "
			      "end or stop it (status, sql, report and snapshot can read it meanwhile)", path,
			      *who ? who : "which has not said who it is yet"), FAIL_BUSY);
	}
	/* The file locked must be the one the name leads to now (not one moved away meanwhile). */
	if (store_file_moved(fd, real, NULL, 0))
		error("'%s' was moved or replaced while it was being opened: not writing it", path);
	else if (!note_take(path, real, what, note))
		return 0;
	lock_byte(fd, F_OFD_SETLK, F_UNLCK, &held);
	return -1;
}

int store_file_moved(int fd, const char *real, char *where, size_t n)
{
	struct stat sf, sp;
	char link[64];
	ssize_t got;

	if (where && n)
		*where = '\0';
	if (fstat(fd, &sf))
		return 0;     /* cannot tell */
	if (!sf.st_nlink || stat(real, &sp) || sp.st_dev != sf.st_dev || sp.st_ino != sf.st_ino) {
		/* Where it is now, as the kernel knows it ("... (deleted)" when it has no name left). */
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		if (where && n > 1 && sf.st_nlink && (got = readlink(link, where, n - 1)) > 0)
			where[got] = '\0';
		return 1;
	}
	return 0;
}

int store_file_open_fail(const char *path)
{
	int e = errno;

	error("cannot open '%s': %s", path, e == EINVAL ? "not a regular file" : strerror(e));
	return e == ENOENT || e == ENOTDIR ? FAIL_MISSING : e == EINVAL || e == EISDIR ? FAIL_NOT_SWEEP : FAIL_IO;
}

int store_lock_path(const char *path, const char *what, struct store_lock *lk)
{
	char *real;
	struct stat sb;
	int ret = -1;

	lk->file = lk->note = -1;
	lk->made = 0;
	/* Beside the file itself, whatever links lead to it; a file with two names is not written at all. */
	if ((ret = store_file_real(path, &real)))
		return ret;
	if ((ret = store_file_one_name(path, real)))
		goto out;
	ret = FAIL_IO;
	lk->made = stat(real, &sb) != 0;
	if ((lk->file = store_file_open(real, 1)) < 0) {
		ret = store_file_open_fail(path);
		goto out;
	}
	if (!(ret = store_file_lock(path, real, lk->file, what, &lk->note)))
		goto out;
	close(lk->file);
	lk->file = -1;
	if (lk->made)
		unlink(real);
out:
	free(real);
	return ret;
}

void store_unlock(struct store_lock *lk)
{
	store_unlock_fd(lk->note);
	if (lk->file >= 0)
		close(lk->file);
	lk->file = lk->note = -1;
}

/* The names whose file went away under a writer of this process (store_file_gone): what has them now is
 * not that writer's, so store_remove_files leaves them. Freed at exit with the process. */
static struct {
	char **name;
	size_t n;
} gone;

void store_file_gone(const char *real)
{
	gone.name = xrealloc(gone.name, (gone.n + 1) * sizeof(*gone.name));
	gone.name[gone.n++] = xstrdup(real);
}

void store_remove_files(const char *path)
{
	char *real = NULL;

	/* The files SQLite made are beside the file itself (it was opened by that name). */
	if (file_real(path, &real))
		real = xstrdup(path);
	for (size_t i = 0; i < gone.n; i++)
		if (!strcmp(gone.name[i], real)) {
			free(real);
			return;
		}
	unlink(real);
	for (size_t i = 0; i < ARRAY_SIZE(side_tails); i++) {
		char *p = xasprintf("%s%s", real, side_tails[i]);

		unlink(p);
		free(p);
	}
	free(real);
}

int store_file_writer(int fd, const char *real, char *who, size_t n)
{
	short held = F_UNLCK;
	int alive;
	char *lp;

	if (who && n)
		*who = '\0';
	/* A writer's lock is refused to no one's test; SQLite's own locks are on other bytes. */
	if (lock_byte(fd, F_OFD_GETLK, F_WRLCK, &held))
		return -1;
	alive = held != F_UNLCK;
	if (!alive) {
		/* An older sweep locked only the note (flock, a namespace of its own). */
		int nfd;

		lp = xasprintf("%s-writer", real);
		nfd = open(lp, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
		free(lp);
		if (nfd < 0)
			return -1;   /* no note: a copy (a snapshot), or a database no locking sweep wrote */
		alive = flock(nfd, LOCK_SH | LOCK_NB) && errno == EWOULDBLOCK;
		close(nfd);
	}
	if (alive && who && n > 1)
		note_read(real, who, n);
	return alive;
}

int store_free_reserve(struct store *st)
{
	char who[512];
	size_t len;

	if (st->note_fd < 0)
		return error("'%s': no room kept: not a writer", st->path);
	/* Shrinking the file frees every block it has, those past its end too; the line goes back after. */
	lock_read(st->note_fd, who, sizeof(who));
	len = strlen(who);
	who[len] = '\n';
	if (ftruncate(st->note_fd, 0) || pwrite(st->note_fd, who, len + 1, 0) != (ssize_t)(len + 1))
		return error("cannot free the room kept beside '%s': %s", st->path, strerror(errno));
	return 0;
}

void store_unlock_fd(int fd)
{
	if (fd < 0)
		return;
	if (ftruncate(fd, 0))
		warning("cannot empty the writer lock file: %s", strerror(errno));
	close(fd);
}

/* ---- outputs ---- */

/* What SQLite made a file as, from its first bytes: NULL when none of its kinds. */
static const char *sqlite_kind(const unsigned char *h, size_t n)
{
	static const unsigned char journal[] = { 0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7 };
	uint32_t v0, v48;

	if (n >= 16 && !memcmp(h, "SQLite format 3", 16))
		return "an SQLite database";
	if (n >= 4 && h[0] == 0x37 && h[1] == 0x7f && h[2] == 0x06 && (h[3] & 0xfe) == 0x82)
		return "an SQLite write-ahead log";
	if (n >= 8 && !memcmp(h, journal, sizeof(journal)))
		return "an SQLite rollback journal";
	/* The index of a log (-shm) has no magic: its header, twice, starts with the version 3007000 in the
	 * machine's byte order. */
	if (n >= 52) {
		memcpy(&v0, h, 4);
		memcpy(&v48, h + 48, 4);
		if (v0 == 3007000 && v48 == 3007000)
			return "an SQLite shared-memory index";
	}
	return NULL;
}

/* Whether the file at path is a database: SQLite's header, or empty (a database not written yet). */
static int is_database(const char *path)
{
	unsigned char h[16];
	struct stat sb;
	ssize_t n;
	int fd;

	if (stat(path, &sb) || !S_ISREG(sb.st_mode))
		return 0;
	if (!sb.st_size)
		return 1;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return 0;
	n = read(fd, h, sizeof(h));
	close(fd);
	return n == (ssize_t)sizeof(h) && !memcmp(h, "SQLite format 3", 16);
}

/* The side file of a database that real names (path as given), or 0: "-wal" of an existing x for x-wal. */
static int side_of_database(const char *what, const char *path, const char *real)
{
	size_t len = strlen(real);

	for (size_t i = 0; i < ARRAY_SIZE(side_tails); i++) {
		size_t tl = strlen(side_tails[i]);
		char *stem;
		int db;

		if (len <= tl || strcmp(real + len - tl, side_tails[i]))
			continue;
		stem = xstrndup(real, len - tl);
		db = is_database(stem);
		if (db)
			error("%s '%s' is the %s file of the database '%s': not overwriting it", what, path,
			      side_tails[i] + 1, stem);
		free(stem);
		if (db)
			return -1;
	}
	return 0;
}

/* Which of the databases dbs (NULL-terminated) the file so is (its side file tail into *tail: "" for the
 * database itself, "-wal", ...): by device and inode, so through any link. NULL when none. */
static const char *known_file(const struct stat *so, const char *const *dbs, const char **tail)
{
	struct stat sd;

	for (size_t i = 0; dbs && dbs[i]; i++)
		for (size_t t = 0; t <= ARRAY_SIZE(side_tails); t++) {
			char *p = t ? xasprintf("%s%s", dbs[i], side_tails[t - 1]) : xstrdup(dbs[i]);
			int same = !stat(p, &sd) && so->st_dev == sd.st_dev && so->st_ino == sd.st_ino;

			free(p);
			*tail = t ? side_tails[t - 1] : "";
			if (same)
				return dbs[i];
		}
	return NULL;
}

/*
 * Whether the file open on fd, by the name real (path as given), may be replaced or written by the
 * output named what: not a database dbs names (NULL-terminated; NULL for none) or one of its side files
 * (same device and inode: any link to them), not a file SQLite made (by its first bytes; with
 * STORE_OUT_DB a database is what the command writes into), not named as the side file of a database,
 * not a file of several names (a hard link to a file sweep or SQLite keeps). 0, or -1 after error().
 */
static int out_check_fd(const char *what, const char *path, const char *real, int fd, const char *const *dbs,
			int flags)
{
	unsigned char head[64];
	const char *kind, *db, *tail;
	struct stat so;
	ssize_t n;

	if (fstat(fd, &so))
		return error("cannot check '%s' before writing it: %s", path, strerror(errno));
	if ((db = known_file(&so, dbs, &tail)) && !*tail)
		return error("%s '%s' is the database being read: not overwriting it", what, path);
	if (!S_ISREG(so.st_mode))
		return 0;      /* /dev/stdout, a pipe */
	n = pread(fd, head, sizeof(head), 0);
	kind = n > 0 ? sqlite_kind(head, (size_t)n) : NULL;
	/* A database is what a merge writes into; its log or journal never is. */
	if (kind && !(flags & STORE_OUT_DB && !strcmp(kind, "an SQLite database")))
		return error("%s '%s' is %s: not overwriting it", what, path, kind);
	if (side_of_database(what, path, real))
		return -1;
	if (db)
		return error("%s '%s' is the %s file of the database '%s': not overwriting it", what, path,
			     tail + 1, db);
	/* A database's names are store_file_one_name's to refuse, with its own message. */
	if (so.st_nlink > 1 && !(flags & STORE_OUT_DB))
		return error("%s '%s' has %ju names (hard links), perhaps a file SQLite or sweep keeps: not "
			     "overwriting it", what, path, (uintmax_t)so.st_nlink);
	return 0;
}

/* The same for the name real (path as given), links followed: a file that exists is opened and its
 * descriptor checked; a new name must not be the side file of a database. */
static int out_check_name(const char *what, const char *path, const char *real, const char *const *dbs,
			  int flags)
{
	int fd = open(real, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC), ret;

	if (fd < 0 && errno == ENOENT)
		return side_of_database(what, path, real);   /* a new file */
	if (fd < 0)
		return error("cannot read '%s' to check it before overwriting: %s", path, strerror(errno));
	ret = out_check_fd(what, path, real, fd, dbs, flags);
	close(fd);
	return ret;
}

int store_output_check(const char *what, const char *path, const char *reading, int flags)
{
	const char *dbs[] = { reading, NULL };
	char *real;
	int rc = file_real(path, &real);

	if (rc > 0)
		return error("%s '%s' is a symbolic link to a missing file: not writing through it", what, path);
	if (rc < 0)
		return 0;      /* no such folder: writing it fails with its own message */
	rc = out_check_name(what, path, real, dbs, flags);
	free(real);
	return rc;
}

/* ---- writing an output: a temporary file beside it, renamed into place ---- */

/* The mode a new file gets from open(0666) under this process's umask. */
static mode_t out_mode(void)
{
	mode_t mask = umask(022);

	umask(mask);
	return 0666 & ~mask;
}

/* A device or pipe (/dev/stdout, a FIFO) is written as it is: it has nothing to replace. */
static int out_open_device(struct store_out *w)
{
	const char *const *dbs = (const char *const *)w->dbs;
	struct stat sb;
	int fd = open(w->real, O_WRONLY | O_NOCTTY | O_CLOEXEC);

	if (fd < 0)
		return error("cannot write '%s': %s", w->path, strerror(errno));
	if (fstat(fd, &sb) || S_ISREG(sb.st_mode) || out_check_fd(w->what, w->path, w->real, fd, dbs, w->flags)) {
		close(fd);
		return error("cannot write '%s': it changed while it was being opened", w->path);
	}
	w->f = fdopen(fd, "w");
	return 0;
}

/* The temporary file beside w->real, with the mode the output has (or a new file gets), and what the
 * output holds when appending. */
static int out_open_temp(struct store_out *w, const struct stat *old)
{
	const char *slash = strrchr(w->real, '/');
	int fd, in;
	char buf[65536];
	ssize_t n;

	w->tmp = xasprintf("%.*s.%s.XXXXXX", (int)(slash - w->real + 1), w->real, slash + 1);
	if ((fd = mkostemp(w->tmp, O_CLOEXEC)) < 0) {
		error("cannot write '%s': cannot make a file beside it: %s", w->path, strerror(errno));
		free(w->tmp);
		w->tmp = NULL;
		return -1;
	}
	if (fchmod(fd, old ? old->st_mode & 07777 : out_mode()))
		warning("cannot set the mode of '%s': %s", w->tmp, strerror(errno));
	w->f = fdopen(fd, "w");
	if (!(w->flags & STORE_OUT_APPEND) || !old)
		return 0;
	if ((in = open(w->real, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return error("cannot read '%s' to add to it: %s", w->path, strerror(errno));
	while ((n = read(in, buf, sizeof(buf))) > 0)
		fwrite(buf, 1, (size_t)n, w->f);
	close(in);
	return n < 0 ? error("cannot read '%s' to add to it: %s", w->path, strerror(errno)) : 0;
}

int store_out_open(struct store_out *w, const char *what, const char *path, const char *const *dbs, int flags)
{
	struct stat sb;
	int rc;

	memset(w, 0, sizeof(*w));
	w->what = what;
	w->path = path;
	/* Kept for the check before the rename: the caller's list may be gone by then. */
	while (dbs && dbs[w->ndbs])
		w->ndbs++;
	w->dbs = xcalloc(w->ndbs + 1, sizeof(*w->dbs));
	for (size_t i = 0; i < w->ndbs; i++)
		w->dbs[i] = xstrdup(dbs[i]);
	w->flags = flags;
	if ((rc = file_real(path, &w->real)) > 0)
		return error("%s '%s' is a symbolic link to a missing file: not writing through it", what, path);
	if (rc < 0)
		return error("cannot write '%s': %s", path, strerror(errno));
	if (flags & STORE_OUT_NEW && !lstat(w->real, &sb))
		rc = error("'%s' exists: %s is written to a new file", path, what);
	else if (!(rc = out_check_name(what, path, w->real, (const char *const *)w->dbs, flags)))
		rc = !stat(w->real, &sb) && !S_ISREG(sb.st_mode) ? out_open_device(w) :
			out_open_temp(w, stat(w->real, &sb) ? NULL : &sb);
	if (rc)
		store_out_abort(w);
	return rc;
}

/* Put the finished temporary file in place: checked first by what the name opens now (a link swapped
 * in meanwhile is replaced, never written through), never over an existing file with STORE_OUT_NEW. */
static int out_place(struct store_out *w)
{
	if (out_check_name(w->what, w->path, w->real, (const char *const *)w->dbs, w->flags))
		return -1;
	if (w->flags & STORE_OUT_NEW) {
		if (renameat2(AT_FDCWD, w->tmp, AT_FDCWD, w->real, RENAME_NOREPLACE))
			return error("cannot write '%s': %s", w->path, errno == EEXIST ?
				     "it exists now (a snapshot is written to a new file)" : strerror(errno));
	} else if (rename(w->tmp, w->real)) {
		return error("cannot write '%s': %s", w->path, strerror(errno));
	}
	free(w->tmp);
	w->tmp = NULL;
	return 0;
}

/* fsync the file at path; -1 with errno when it fails. */
static int sync_file(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret;

	if (fd < 0)
		return -1;
	ret = fsync(fd);
	close(fd);
	return ret;
}

int store_out_close(struct store_out *w)
{
	int ret = 0, was_open = w->f != NULL;

	/* Every byte on the disk before the name moves: a full disk fails here, the old file intact. */
	if (w->f && (ferror(w->f) | fflush(w->f) | (w->tmp && fsync(fileno(w->f)))))
		ret = error("cannot write '%s': %s", w->path, strerror(errno));
	if (w->f && fclose(w->f) && !ret)
		ret = error("cannot write '%s': %s", w->path, strerror(errno));
	w->f = NULL;
	/* One another program wrote (SQLite's VACUUM INTO) is synced here. */
	if (!ret && !was_open && w->tmp && sync_file(w->tmp))
		ret = error("cannot write '%s': %s", w->path, strerror(errno));
	if (!ret && w->tmp)
		ret = out_place(w);
	store_out_abort(w);
	return ret;
}

void store_out_abort(struct store_out *w)
{
	if (w->f)
		fclose(w->f);
	w->f = NULL;
	if (w->tmp)
		unlink(w->tmp);
	free(w->tmp);
	free(w->real);
	w->tmp = w->real = NULL;
	for (size_t i = 0; i < w->ndbs; i++)
		free(w->dbs[i]);
	free(w->dbs);
	w->dbs = NULL;
	w->ndbs = 0;
}
