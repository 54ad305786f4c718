/* test_identity.c: the files of a sweep's identity (a program found on PATH as posix_spawnp finds it, the
 * words that name files once filled, inputs: from the spec's folder, big files by size and mtime), their
 * differences; and the differences of two sets of results' conditions (report_conditions.c). */
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "identity.h"
#include "report_conditions.h"
#include "test.h"
#include "test_report_rows.h"

#define ABC "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"

static void write_file(const char *path, const char *text, int mode)
{
	FILE *f = fopen(path, "w");

	fputs(text, f);
	fclose(f);
	chmod(path, mode);
}

/* A name without '/' is looked for in PATH's folders in order, skipping what is not an executable regular
 * file; an empty entry is the working directory; a name with '/' is taken as it is. */
static void test_program(void)
{
	char *p;

	mkdir("a", 0755);
	mkdir("b", 0755);
	mkdir("c", 0755);
	mkdir("c/prog", 0755);
	write_file("a/prog", "not executable", 0644);
	write_file("b/prog", "abc", 0755);
	write_file("here", "x", 0755);
	setenv("PATH", "c:a:b", 1);
	p = identity_program("prog", NULL);
	CHECK_STR(p, "b/prog", "a folder and a file that cannot be run are passed over");
	free(p);
	setenv("PATH", "a::b", 1);
	p = identity_program("here", NULL);
	CHECK_STR(p, "here", "an empty PATH entry is the working directory");
	free(p);
	CHECK(!identity_program("missing", NULL), "a program found nowhere is NULL");
	p = identity_program("./a/prog", NULL);
	CHECK_STR(p, "./a/prog", "a name with a slash is the path itself");
	free(p);
}

static int ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), t = strlen(tail);

	return n >= t && !strcmp(s + n - t, tail);
}

static int parse(const char *text, struct spec *s)
{
	return spec_parse("sub/t.yaml", text, strlen(text), s);
}

/* What a spec's files are: the program by PATH, words naming files for each value of the axes they name
 * (missing ones and runtime placeholders left out), prepare's program, inputs from the spec's folder. */
static void test_collect(void)
{
	struct identity id;
	struct strbuf sb = STRBUF_INIT;
	struct spec s;

	/* The spec's folder is sub/: its relative paths mean files there, a relative PATH entry too. */
	mkdir("sub", 0755);
	mkdir("sub/b", 0755);
	write_file("sub/x1.txt", "abc", 0644);
	write_file("sub/in.dat", "abc", 0644);
	write_file("sub/b/prog", "abc", 0755);
	setenv("PATH", "b", 1);
	CHECK_INT(parse("sweep: t\ncommand: [prog, 'x{x}.txt', '{gpu}.txt', b/prog]\nparams: {x: [1, 2]}\n"
			"inputs: [in.dat]\nprepare: [prog]\n", &s), 0, "spec");
	CHECK_INT(identity_collect(&s, &id), 0, "collected");
	identity_json(&id, &sb);
	CHECK_TEXT(sb.buf, "{\"b/prog\":\"" ABC "\",\"in.dat\":\"" ABC "\",\"prog\":\"" ABC "\",\"x1.txt\":\"" ABC "\"}",
		   "each file once, by name: x2.txt missing, {gpu} known only on a worker");
	CHECK_INT(id.n, 4, "four files");
	CHECK(id.n == 4 && ends_with(id.f[1].path, "/sub/in.dat"), "an input is found in the spec's folder: %s",
	      id.n == 4 ? id.f[1].path : "");
	CHECK(id.n == 4 && ends_with(id.f[2].path, "/sub/b/prog"), "the program where PATH finds it, from the "
	      "spec's folder: %s", id.n == 4 ? id.f[2].path : "");
	identity_release(&id);
	spec_release(&s);

	/* 65 MiB, sparse: identified by size and mtime without being read */
	CHECK_INT(truncate("sub/in.dat", ((off_t)65) << 20), 0, "a big input");
	CHECK_INT(parse("sweep: t\ncommand: [true]\ninputs: [in.dat]\n", &s), 0, "spec with a big input");
	CHECK_INT(identity_collect(&s, &id), 0, "collected");
	CHECK(id.n == 1 && id.f[0].big && !strncmp(id.f[0].hash, "size:68157440 mtime:", 20),
	      "a file over 64 MiB: '%s'", id.n == 1 ? id.f[0].hash : "");
	identity_release(&id);
	spec_release(&s);

	/* the file the metrics are read from is what the command writes */
	CHECK_INT(parse("sweep: t\ncommand: [b/prog, x1.txt]\nmetrics: {t: {regex: 't=([0-9]+)', from: x1.txt}}\n", &s),
		  0, "spec reading its metrics from x1.txt");
	CHECK_INT(identity_collect(&s, &id), 0, "collected");
	CHECK(id.n == 1 && !strcmp(id.f[0].name, "b/prog"), "the output x1.txt is left out (%zu files)", id.n);
	identity_release(&id);
	spec_release(&s);

	CHECK_INT(parse("sweep: t\ncommand: [true]\ninputs: [gone.dat]\n", &s), 0, "spec with a missing input");
	CHECK_INT(identity_collect(&s, &id), -1, "a missing input is an error");
	spec_release(&s);
	sb_release(&sb);
}

static void test_changes(void)
{
	struct strbuf sb = STRBUF_INIT;

	CHECK_INT(identity_changes("{\"a\":\"sha256:1\",\"b\":\"sha256:2\"}", "{\"a\":\"sha256:1\",\"b\":\"sha256:2\"}",
				   &sb), 0, "the same files");
	CHECK_INT(identity_changes("{\"a\":\"sha256:1\",\"b\":\"sha256:2\"}", "{\"a\":\"sha256:9\",\"c\":\"sha256:3\"}",
				   &sb), 3, "one changed, one new, one gone");
	CHECK_TEXT(sb.buf, "'a': sha256:1 -> sha256:9; 'c': (none) -> sha256:3; 'b': sha256:2 -> (none)",
		   "old -> new for each");
	sb_release(&sb);
}

/* Two sets of results as report_query_ledger's rows (no row key), and the lines that say what differs. */
static void test_conds_diff(void)
{
	static const char *const a_rows[] = {
		"1", "'k1", "'{}", "1.5", "'0.1.0", "'abc", "'{\"p\":\"sha256:1\"}", "'h1", NULL,
		"'{\"aslr\":2,\"loadavg\":0.5,\"driver\":\"580\"}",
		"'{\"hostname\":\"h1\",\"cores\":8,\"driver\":\"570\",\"labels\":{\"class\":\"server\"}}",
		"'{\"class\":\"server\"}",
		"2", "'k2", "'{}", "2.5", "'0.1.0", "'abc", "'{\"p\":\"sha256:1\"}", "'h1", NULL,
		"'{\"aslr\":2,\"loadavg\":0.7,\"driver\":\"580\"}",
		"'{\"hostname\":\"h1\",\"cores\":8,\"driver\":\"570\",\"labels\":{\"class\":\"server\"}}",
		"'{\"class\":\"server\"}",
	};
	static const char *const b_rows[] = {
		"3", "'k1", "'{}", "1.6", "'0.1.0", "'def", "'{\"p\":\"sha256:2\"}", "'h1", NULL,
		"'{\"aslr\":2,\"loadavg\":0.5}", "'{\"hostname\":\"h1\",\"cores\":8}", NULL,
	};
	struct report_rows ra, rb;
	struct report_conds a, b;
	struct strbuf sb = STRBUF_INIT;

	test_rows(&ra, 12, a_rows, 2);
	test_rows(&rb, 12, b_rows, 1);
	report_conds_init(&a);
	report_conds_init(&b);
	report_conds_read(&ra, 0, &a);
	report_conds_read(&rb, 0, &b);
	/* the host's facts after the worker's conditions: its driver is the worker's; hostname is host's */
	CHECK_INT(a.nnames, 9, "names of a: version, commit, host, file p, aslr, loadavg, driver, cores, "
		  "label.class (no gpu: NULL)");
	CHECK_STR(json_obj_get(&a.res[0], "driver"), "580", "the worker's driver, not the host fact's");
	CHECK_INT(report_conds_values(&a, "loadavg", 0, 2, &sb), 2, "two load averages in a");
	CHECK_STR(sb.buf, "0.5, 0.7", "in the order met");
	sb_reset(&sb);
	CHECK_INT(report_conds_diff(&a, &a, &sb), 0, "a set has the conditions of itself");
	CHECK_INT(report_conds_diff(&a, &b, &sb), 5, "five differ");
	CHECK_TEXT(sb.buf, "sweep_commit: abc -> def\nfile p: sha256:1 -> sha256:2\nloadavg: 0.5, 0.7 -> 0.5\n"
		   "driver: 580 -> -\nlabel.class: server -> -\n", "a line each, unknown as -");
	report_conds_release(&a);
	report_conds_release(&b);
	report_rows_release(&ra);
	report_rows_release(&rb);
	sb_release(&sb);
}

int main(void)
{
	char dir[] = "/tmp/test_identity.XXXXXX", *old = getenv("PATH") ? xstrdup(getenv("PATH")) : NULL;

	if (!mkdtemp(dir) || chdir(dir))
		return 1;
	test_program();
	test_collect();
	test_changes();
	test_conds_diff();
	if (old)
		setenv("PATH", old, 1);
	free(old);
	if (!chdir("/")) {
		char *rm = xasprintf("rm -rf -- '%s'", dir);

		if (system(rm))
			printf("# could not remove %s\n", dir);
		free(rm);
	}
	return test_done();
}
