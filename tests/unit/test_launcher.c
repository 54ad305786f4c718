/* test_launcher.c: the launcher's line, read from a parent named mpirun (bash under that name), words
 * quoted as a shell reads them; none without a launcher above; which names are launchers. */
#include <stdint.h>
#include <sys/wait.h>

#include "test.h"
#include "../../src/launcher.h"

/* Under --child: print this process's launcher line (or "none") and exit. */
static int child(void)
{
	struct strbuf sb = STRBUF_INIT;

	launcher_line_of(getpid(), &sb);
	printf("%s\n", sb.len ? sb.buf : "none");
	sb_release(&sb);
	return 0;
}

/* Run argv with stdout into out (one read: the line is short); its exit status. */
static int run(char *const argv[], char *out, size_t n)
{
	int fd[2], status = -1;
	ssize_t got;
	pid_t pid;

	if (pipe(fd))
		return -1;
	if (!(pid = fork())) {
		dup2(fd[1], 1);
		close(fd[0]);
		execv(argv[0], argv);
		_exit(127);
	}
	close(fd[1]);
	got = read(fd[0], out, n - 1);
	out[got > 0 ? got : 0] = '\0';
	close(fd[0]);
	waitpid(pid, &status, 0);
	return status;
}

int main(int argc, char **argv)
{
	char dir[] = "/tmp/test_launcher.XXXXXX", fake[64], self[4096], out[8192], *want;
	ssize_t n;

	if (argc > 1 && !strcmp(argv[1], "--child"))
		return child();
	CHECK(launcher_is("mpirun") && launcher_is("/usr/bin/mpiexec") && launcher_is("srun") &&
	      launcher_is("orterun") && launcher_is("prterun"), "launchers by name, any folder");
	CHECK(!launcher_is("bash") && !launcher_is("mpirun.sh") && !launcher_is("/opt/mpirun/sweep"),
	      "other programs are not launchers");
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	CHECK(n > 0 && mkdtemp(dir), "a folder for the fake launcher");
	self[n > 0 ? n : 0] = '\0';
	snprintf(fake, sizeof(fake), "%s/mpirun", dir);
	CHECK(!symlink("/bin/bash", fake), "mpirun as bash");
	{
		/* bash stays the parent ("; true"), as mpirun does; its options hold a space and a quote */
		char *const argv_fake[] = { fake, "-c", "\"$0\" --child; true", self, "--hostfile", "h f", "it's",
			NULL };
		char *const argv_plain[] = { "/bin/bash", "-c", "\"$0\" --child; true", self, NULL };

		CHECK_INT(run(argv_fake, out, sizeof(out)), 0, "the child under mpirun");
		want = xasprintf("%s -c '\"$0\" --child; true' %s --hostfile 'h f' 'it'\\''s'\n", fake, self);
		CHECK_STR(out, want, "the launcher's words, quoted");
		free(want);
		CHECK_INT(run(argv_plain, out, sizeof(out)), 0, "the child under bash");
		CHECK_STR(out, "none\n", "no launcher above");
	}
	unlink(fake);
	rmdir(dir);
	return test_done();
}
