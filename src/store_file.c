/* store_file.c: the database as a file: its one name, its writer lock, its side files. */
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
	int rc = file_real(path, out);

	if (rc > 0)
		return error("'%s' is a symbolic link to a missing file: name the database itself", path);
	if (rc < 0)
		return error("cannot resolve '%s': %s", path, strerror(errno));
	return 0;
}

int store_file_one_name(const char *path, const char *real)
{
	struct stat sb;

	if (!stat(real, &sb) && sb.st_nlink > 1)
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

/* The holder a lock file names ("host H pid P since T: CMD"), as read; "" when empty. */
static void lock_read(int fd, char *buf, size_t n)
{
	ssize_t got = pread(fd, buf, n - 1, 0);

	buf[got > 0 ? got : 0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
}

/* Open the lock file: never through a symbolic link (we empty and write it), and a plain file. */
static int lock_open(const char *lp)
{
	struct stat sb;
	int fd = open(lp, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);

	if (fd < 0)
		return error("cannot open the writer lock '%s': %s", lp, errno == ELOOP ? "a symbolic link" :
			     strerror(errno));
	if (fstat(fd, &sb) || !S_ISREG(sb.st_mode)) {
		close(fd);
		return error("cannot open the writer lock '%s': not a regular file", lp);
	}
	return fd;
}

int store_lock_path(const char *path, const char *what, int *out)
{
	char *real, *lp, who[512], host[256] = "?", now[32];
	struct strbuf sb = STRBUF_INIT;
	int fd;

	*out = -1;
	/* Beside the file itself, whatever links lead to it; a file with two names is not written at all. */
	if (store_file_real(path, &real))
		return -1;
	if (store_file_one_name(path, real)) {
		free(real);
		return -1;
	}
	lp = xasprintf("%s-writer", real);
	free(real);
	if ((fd = lock_open(lp)) < 0) {
		free(lp);
		return -1;
	}
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		int e = errno;

		lock_read(fd, who, sizeof(who));
		close(fd);
		if (e == EWOULDBLOCK)
			error("'%s' is being written by another sweep (%s); one writer at a time: wait for it to end "
			      "or stop it (status, sql, report and snapshot can read it meanwhile)", path,
			      *who ? who : "which has not said who it is yet");
		else
			error("cannot lock '%s': %s", lp, strerror(e));
		free(lp);
		return -1;
	}
	/* A clean end empties the file: a name left in it is a writer that died holding the lock. */
	lock_read(fd, who, sizeof(who));
	if (*who)
		fprintf(stderr, "sweep: '%s': taking over the writer lock of a sweep that is gone (%s)\n", path, who);
	gethostname(host, sizeof(host) - 1);
	iso_time(now_wall(), now, sizeof(now));
	sb_addf(&sb, "host %s pid %ld since %s: %s\n", host, (long)getpid(), now, what);
	if (ftruncate(fd, 0) || pwrite(fd, sb.buf, sb.len, 0) != (ssize_t)sb.len)
		warning("cannot write '%s': %s", lp, strerror(errno));
	sb_release(&sb);
	free(lp);
	*out = fd;
	return 0;
}

void store_remove_files(const char *path)
{
	char *real = NULL;

	/* The files SQLite made are beside the file itself (it was opened by that name). */
	if (file_real(path, &real))
		real = xstrdup(path);
	unlink(real);
	for (size_t i = 0; i < ARRAY_SIZE(side_tails); i++) {
		char *p = xasprintf("%s%s", real, side_tails[i]);

		unlink(p);
		free(p);
	}
	free(real);
}

int store_writer_alive(const struct store *st)
{
	char *real, *lp;
	int fd, alive;

	if (file_real(st->path, &real))
		return -1;
	lp = xasprintf("%s-writer", real);
	fd = open(lp, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	free(real);
	free(lp);
	if (fd < 0)
		return -1;   /* no lock file: a copy (a snapshot), or a database no locking sweep wrote */
	/* A shared lock is refused only while a writer holds its exclusive one; ours goes with the close. */
	alive = flock(fd, LOCK_SH | LOCK_NB) && errno == EWOULDBLOCK;
	close(fd);
	return alive;
}

void store_unlock_fd(int fd)
{
	if (fd < 0)
		return;
	if (ftruncate(fd, 0))
		warning("cannot empty the writer lock file: %s", strerror(errno));
	close(fd);
}
