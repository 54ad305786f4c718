/* test_inventory.c: inventories: every field and default, each problem with its exact message and
 * file:line:col, remote paths, matching hostnames, hostfiles and labels as JSON. */
#include <stdlib.h>
#include <unistd.h>

#include "test.h"
#include "inventory.h"
#include "json.h"
#include "util.h"

static char shown_buf[8192];   /* test_shown output for messages */

static char errs[1 << 16];   /* what the last parse printed on stderr */



/* inventory_parse of text as "inv.yaml" with stderr captured into errs. */
static int parse(const char *text, struct inventory *inv)
{
	int rc;

	test_capture_start();
	rc = inventory_parse("inv.yaml", text, strlen(text), inv);
	capture_into(errs, sizeof(errs));
	return rc;
}

/* text fails to parse, printing exactly want (lines of "LINE:COL: message", each as
 * "sweep: inv.yaml:LINE:COL: message"), and the inventory is left empty. */
static void check_err(const char *text, const char *want, int line)
{
	struct inventory inv;
	struct strbuf w = STRBUF_INIT, e = STRBUF_INIT;
	int rc = parse(text, &inv);
	const char *p = want;

	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);

		sb_adds(&w, "sweep: inv.yaml:");
		sb_add(&w, p, n);
		sb_addc(&w, '\n');
		p += n + (nl != NULL);
	}
	CHECK(rc == -1 && !strcmp(errs, w.buf), "line %d: '%s'", line, test_shown(shown_buf, sizeof(shown_buf), want));
	if (rc != -1 || strcmp(errs, w.buf))
		printf("# rc %d, printed: %s\n", rc, test_shown(shown_buf, sizeof(shown_buf), errs));
	CHECK(inv.hosts == NULL && inv.nhosts == 0 && inv.path == NULL, "line %d: a failed inventory is empty", line);
	sb_release(&w);
	sb_release(&e);
}
#define CHECK_ERR(text, want) check_err(text, want, __LINE__)

static const char good[] =
	"# a comment line\n"
	"defaults:\n"
	"  slots: 2\n"
	"  labels: {provider: own, tier: 1}\n"
	"  user: bench\n"
	"  port: 2222\n"
	"  identity: ~/.ssh/id_bench\n"
	"  ssh_options: [StrictHostKeyChecking=no]\n"
	"  workdir: runs/sweep\n"
	"hosts:\n"
	"  - name: alpha\n"
	"    labels: {class: consumer, price_per_hour: 0.5, provider: rented, zip: \"02139\", code: 007,\n"
	"             hex: 0x1f, exp: 1e3, word: fast, flag: true, quote: 'say \"hi\"', uni: caf\xc3\xa9}\n"
	"    notes: under the desk\n"
	"  - name: beta.lab\n"
	"    hostname: beta.cluster.example\n"
	"    address: 192.0.2.7\n"
	"    slots: 8\n"
	"    user: root\n"
	"    port: 22\n"
	"    identity: /keys/beta\n"
	"    ssh_options: [ConnectTimeout=5, \"ProxyJump=gw.example\"]\n"
	"    workdir: /scratch/sweep\n"
	"    sweep_bin: /opt/sweep/bin/sweep\n"
	"  - {name: gamma, address: \"fe80::1\", slots: 1}\n";

static void check_label(const struct inventory_host *h, size_t i, const char *key, const char *val,
			enum json_type type)
{
	char name[96];

	snprintf(name, sizeof(name), "%s label %zu", h->name, i);
	if (i >= h->labels.n) {
		CHECK(0, "%s: only %zu labels", name, h->labels.n);
		return;
	}
	CHECK_STR(h->labels.v[i].key, key, name);
	CHECK_STR(h->labels.v[i].val, val, name);
	CHECK_INT(h->labels.v[i].type, type, name);
}

static void test_good(void)
{
	struct inventory inv;
	const struct inventory_host *h;
	struct strbuf sb = STRBUF_INIT;
	int rc = parse(good, &inv);

	CHECK(rc == 0 && !*errs, "a good inventory parses without a word (%s)", test_shown(shown_buf, sizeof(shown_buf), errs));
	if (rc)
		return;
	CHECK_STR(inv.path, "inv.yaml", "path kept");
	CHECK_INT(inv.nhosts, 3, "three hosts");

	h = &inv.hosts[0];
	CHECK_STR(h->name, "alpha", "alpha: name");
	CHECK_STR(h->hostname, "alpha", "alpha: hostname defaults to the name");
	CHECK_STR(h->address, "alpha", "alpha: address defaults to the hostname");
	CHECK_INT(h->slots, 2, "alpha: slots from defaults");
	CHECK(h->line == 11 && h->col == 5, "alpha starts at 11:5 (got %d:%d)", h->line, h->col);
	CHECK_INT(h->labels.n, 13, "alpha: 13 labels");
	/* The defaults' labels first; a host's value of the same name replaces it in place; notes last.
	 * A plain scalar is a number only when it is one in JSON: 007 and 0x1f stay text. */
	check_label(h, 0, "provider", "rented", JSON_STR);
	check_label(h, 1, "tier", "1", JSON_NUM);
	check_label(h, 2, "class", "consumer", JSON_STR);
	check_label(h, 3, "price_per_hour", "0.5", JSON_NUM);
	check_label(h, 4, "zip", "02139", JSON_STR);
	check_label(h, 5, "code", "007", JSON_STR);
	check_label(h, 6, "hex", "0x1f", JSON_STR);
	check_label(h, 7, "exp", "1e3", JSON_NUM);
	check_label(h, 8, "word", "fast", JSON_STR);
	check_label(h, 9, "flag", "true", JSON_STR);
	check_label(h, 10, "quote", "say \"hi\"", JSON_STR);
	check_label(h, 11, "uni", "caf\xc3\xa9", JSON_STR);
	check_label(h, 12, "notes", "under the desk", JSON_STR);
	CHECK_STR(h->user, "bench", "alpha: user from defaults");
	CHECK_INT(h->port, 2222, "alpha: port from defaults");
	CHECK_STR(h->identity, "~/.ssh/id_bench", "alpha: identity from defaults");
	CHECK(h->nssh_options == 1 && !strcmp(h->ssh_options[0], "StrictHostKeyChecking=no"),
	      "alpha: the defaults' ssh option");
	CHECK_STR(h->workdir, "runs/sweep", "alpha: workdir from defaults");
	CHECK_STR(h->sweep_bin, "build/sweep", "alpha: sweep_bin's own default");

	h = &inv.hosts[1];
	CHECK_STR(h->name, "beta.lab", "beta: name");
	CHECK_STR(h->hostname, "beta.cluster.example", "beta: hostname");
	CHECK_STR(h->address, "192.0.2.7", "beta: address");
	CHECK_INT(h->slots, 8, "beta: slots");
	CHECK(h->line == 15 && h->col == 5, "beta starts at 15:5 (got %d:%d)", h->line, h->col);
	CHECK_INT(h->labels.n, 2, "beta: the defaults' two labels");
	check_label(h, 0, "provider", "own", JSON_STR);
	check_label(h, 1, "tier", "1", JSON_NUM);
	CHECK_STR(h->user, "root", "beta: user");
	CHECK_INT(h->port, 22, "beta: port");
	CHECK_STR(h->identity, "/keys/beta", "beta: identity");
	CHECK_INT(h->nssh_options, 3, "beta: two ssh options and the defaults' one");
	if (h->nssh_options == 3) {
		/* ssh takes an option's first value: the host's own come first. */
		CHECK_STR(h->ssh_options[0], "ConnectTimeout=5", "beta: ssh option 0");
		CHECK_STR(h->ssh_options[1], "ProxyJump=gw.example", "beta: ssh option 1");
		CHECK_STR(h->ssh_options[2], "StrictHostKeyChecking=no", "beta: ssh option 2");
	}
	CHECK_STR(h->workdir, "/scratch/sweep", "beta: workdir");
	CHECK_STR(h->sweep_bin, "/opt/sweep/bin/sweep", "beta: sweep_bin");

	h = &inv.hosts[2];
	CHECK_STR(h->name, "gamma", "gamma: name");
	CHECK_STR(h->hostname, "gamma", "gamma: hostname");
	CHECK_STR(h->address, "fe80::1", "gamma: an IPv6 address");
	CHECK_INT(h->slots, 1, "gamma: its slots over the defaults'");
	CHECK(h->line == 25 && h->col == 5, "gamma (a flow mapping) starts at 25:5 (got %d:%d)", h->line, h->col);

	inventory_hostfile(&inv, &sb);
	CHECK_TEXT(sb.buf, "# Open MPI hostfile written by 'sweep hosts hostfile inv.yaml'\n"
		  "# alpha\nalpha slots=2\n"
		  "# beta.lab\n192.0.2.7 slots=8\n"
		  "# gamma\nfe80::1 slots=1\n", "hostfile: a comment, then each host's address and slots");

	sb_reset(&sb);
	inventory_labels_json(&inv.hosts[0], &sb);
	CHECK_STR(sb.buf, "{\"name\":\"alpha\",\"provider\":\"rented\",\"tier\":1,\"class\":\"consumer\","
		  "\"price_per_hour\":0.5,\"zip\":\"02139\",\"code\":\"007\",\"hex\":\"0x1f\",\"exp\":1e3,"
		  "\"word\":\"fast\",\"flag\":\"true\",\"quote\":\"say \\\"hi\\\"\",\"uni\":\"caf\xc3\xa9\","
		  "\"notes\":\"under the desk\"}", "labels as JSON: name first, then in file order");
	{
		struct json_obj o;
		char err[128];

		rc = json_parse_flat(sb.buf, &o, 0, err, sizeof(err));
		CHECK(rc == 0 && o.n == 14, "the labels' JSON reads back (%s)", rc ? err : "ok");
		CHECK_STR(json_obj_get(&o, "quote"), "say \"hi\"", "a label with quotes reads back");
		json_obj_release(&o);
	}
	sb_reset(&sb);
	inventory_labels_json(&inv.hosts[2], &sb);
	CHECK_STR(sb.buf, "{\"name\":\"gamma\",\"provider\":\"own\",\"tier\":1}", "labels of a host with only defaults");

	inventory_release(&inv);
	CHECK(inv.hosts == NULL && inv.nhosts == 0 && inv.path == NULL, "release empties the inventory");
	sb_release(&sb);
}

/* Defaults are all optional: the built-in ones apply. */
static void test_minimal(void)
{
	struct inventory inv;
	const struct inventory_host *h;
	struct strbuf sb = STRBUF_INIT;
	int rc = parse("hosts:\n  - name: solo\n", &inv);

	CHECK(rc == 0 && inv.nhosts == 1, "one host with a name only (%s)", errs);
	if (rc)
		return;
	h = &inv.hosts[0];
	CHECK(!strcmp(h->hostname, "solo") && !strcmp(h->address, "solo") && h->slots == 1,
	      "hostname, address and slots default to name, name and 1");
	CHECK(h->hostname_line == 0 && h->hostname_col == 0, "a defaulted hostname has no place in the file");
	CHECK(h->labels.n == 0 && h->user == NULL && h->port == 0 && h->identity == NULL && h->nssh_options == 0,
	      "no labels, and ssh's own defaults");
	CHECK(!strcmp(h->workdir, "sweep") && !strcmp(h->sweep_bin, "build/sweep"),
	      "workdir 'sweep', sweep_bin 'build/sweep'");
	inventory_labels_json(h, &sb);
	CHECK_STR(sb.buf, "{\"name\":\"solo\"}", "labels JSON: the name alone");
	sb_release(&sb);
	inventory_release(&inv);
}

static void test_errors(void)
{
	/* The document. */
	CHECK_ERR("", "1:1: empty inventory: expected a mapping with 'hosts:'");
	CHECK_ERR("# only a comment\n", "1:1: empty inventory: expected a mapping with 'hosts:'");
	CHECK_ERR("- a\n", "1:1: expected a mapping for the inventory");
	CHECK_ERR("defaults: {slots: 2}\n", "1:1: no 'hosts:' list");
	CHECK_ERR("hostz:\n  - name: a\n",
		  "1:1: unknown key 'hostz' in the inventory (did you mean 'hosts'?)\n"
		  "1:1: no 'hosts:' list");
	CHECK_ERR("hosts: {a: 1}\n", "1:8: expected a list of hosts for 'hosts'");
	CHECK_ERR("hosts: []\n", "1:8: the 'hosts' list is empty");
	CHECK_ERR("hosts:\n", "1:7: expected a list of hosts for 'hosts'");
	CHECK_ERR("hosts:\n  - just-a-name\n", "2:5: expected a mapping for a host");
	CHECK_ERR("hosts:\n  - name: x\n---\nhosts: []\n", "4:1: a second YAML document: an inventory holds one");
	CHECK_ERR("hosts:\n  - name: x\n    slots: [1, 2\n",
		  "4:1: did not find expected ',' or ']' (while parsing a flow sequence at 3:12)");
	CHECK_ERR("hosts:\n  - name: x\n   bad: 1\n",
		  "3:4: did not find expected '-' indicator (while parsing a block collection at 2:3)");

	/* Keys. */
	CHECK_ERR("hosts:\n  - name: a\n    slot: 2\n", "3:5: unknown key 'slot' in a host (did you mean 'slots'?)");
	CHECK_ERR("hosts:\n  - name: a\n    adress: h\n",
		  "3:5: unknown key 'adress' in a host (did you mean 'address'?)");
	CHECK_ERR("hosts:\n  - name: a\n    colour: red\n", "3:5: unknown key 'colour' in a host");
	CHECK_ERR("defaults:\n  label: {a: 1}\nhosts:\n  - name: a\n",
		  "2:3: unknown key 'label' in 'defaults' (did you mean 'labels'?)");
	CHECK_ERR("defaults:\n  address: x\nhosts:\n  - name: a\n", "2:3: unknown key 'address' in 'defaults'");
	CHECK_ERR("hosts:\n  - name: a\n    slots: 2\n    slots: 3\n", "4:5: duplicate key 'slots' in a host");
	CHECK_ERR("defaults: [1]\nhosts:\n  - name: a\n", "1:11: expected a mapping for 'defaults'");

	/* Names, hostnames, addresses. */
	CHECK_ERR("hosts:\n  - hostname: x\n", "2:5: a host needs a 'name'");
	CHECK_ERR("hosts:\n  - name: b c\n", "2:11: name 'b c': letters, digits, '.', '-' and '_' only");
	CHECK_ERR("hosts:\n  - name: 'a;b'\n", "2:11: name 'a;b': letters, digits, '.', '-' and '_' only");
	CHECK_ERR("hosts:\n  - name: ''\n", "2:11: name '': letters, digits, '.', '-' and '_' only");
	CHECK_ERR("hosts:\n  - name: [a]\n", "2:11: expected a scalar for 'name'");
	CHECK_ERR("hosts:\n  - name: \"a\\0b\"\n", "2:11: NUL byte in 'name'");
	/* The file's text is quoted with control characters as '?': none reaches the terminal. */
	CHECK_ERR("hosts:\n  - name: \"\\e[31mred\"\n", "2:11: name '?[31mred': letters, digits, '.', '-' and '_' only");
	CHECK_ERR("hosts:\n  - name: a\n  - name: a\n", "3:11: host 'a' is listed twice (first at 2:5)");
	CHECK_ERR("hosts:\n  - name: a\n    hostname: h\n  - name: b\n    hostname: h\n",
		  "4:5: hostname 'h' belongs to two hosts, 'a' (at 2:5) and 'b'");
	CHECK_ERR("hosts:\n  - name: a\n    hostname: b\n  - name: b\n",
		  "4:5: hostname 'b' belongs to two hosts, 'a' (at 2:5) and 'b'");
	CHECK_ERR("hosts:\n  - name: a\n    hostname: a b\n", "3:15: hostname 'a b' is not a host name");
	CHECK_ERR("hosts:\n  - name: a\n    address: -oFoo\n",
		  "3:14: address '-oFoo' is not a host name or IP address");
	CHECK_ERR("hosts:\n  - name: a\n    address: 'h;id'\n",
		  "3:14: address 'h;id' is not a host name or IP address");

	/* Slots. */
	CHECK_ERR("hosts:\n  - name: a\n    slots: 0\n", "3:12: slots must be a whole number from 1 to 4096, not '0'");
	CHECK_ERR("hosts:\n  - name: a\n    slots: 4097\n",
		  "3:12: slots must be a whole number from 1 to 4096, not '4097'");
	CHECK_ERR("hosts:\n  - name: a\n    slots: -1\n", "3:12: slots must be a whole number from 1 to 4096, not '-1'");
	CHECK_ERR("hosts:\n  - name: a\n    slots: 1.5\n",
		  "3:12: slots must be a whole number from 1 to 4096, not '1.5'");
	CHECK_ERR("hosts:\n  - name: a\n    slots: two\n",
		  "3:12: slots must be a whole number from 1 to 4096, not 'two'");
	CHECK_ERR("hosts:\n  - name: a\n    slots:\n", "3:11: slots must be a whole number from 1 to 4096, not ''");
	CHECK_ERR("hosts:\n  - name: a\n    slots: [1]\n", "3:12: expected a scalar for 'slots'");
	CHECK_ERR("defaults: {slots: 0}\nhosts:\n  - name: a\n",
		  "1:19: slots must be a whole number from 1 to 4096, not '0'");

	/* Labels. */
	CHECK_ERR("hosts:\n  - name: a\n    labels: [a]\n", "3:13: expected a mapping of label: value for 'labels'");
	CHECK_ERR("hosts:\n  - name: a\n    labels: {bad-name: 1}\n",
		  "3:14: label name 'bad-name': letters, digits and '_' only, not starting with a digit");
	CHECK_ERR("hosts:\n  - name: a\n    labels: {1x: 1}\n",
		  "3:14: label name '1x': letters, digits and '_' only, not starting with a digit");
	CHECK_ERR("hosts:\n  - name: a\n    labels: {'': 1}\n",
		  "3:14: label name '': letters, digits and '_' only, not starting with a digit");
	CHECK_ERR("hosts:\n  - name: a\n    labels: {name: x}\n",
		  "3:14: the label 'name' is the host's name: set 'name' instead");
	CHECK_ERR("defaults:\n  labels: {name: x}\nhosts:\n  - name: a\n",
		  "2:12: the label 'name' is the host's name: set 'name' instead");
	CHECK_ERR("hosts:\n  - name: a\n    labels: {a: [1]}\n", "3:17: expected a scalar for 'a'");
	CHECK_ERR("hosts:\n  - name: a\n    notes: {a: 1}\n", "3:12: expected a scalar for 'notes'");

	/* ssh fields. */
	CHECK_ERR("hosts:\n  - name: a\n    user: -x\n", "3:11: user '-x': letters, digits, '.', '_' and '-' only");
	CHECK_ERR("hosts:\n  - name: a\n    user: a b\n", "3:11: user 'a b': letters, digits, '.', '_' and '-' only");
	CHECK_ERR("hosts:\n  - name: a\n    user: 'a@b'\n",
		  "3:11: user 'a@b': letters, digits, '.', '_' and '-' only");
	CHECK_ERR("hosts:\n  - name: a\n    port: 0\n", "3:11: port must be a whole number from 1 to 65535, not '0'");
	CHECK_ERR("hosts:\n  - name: a\n    port: 65536\n",
		  "3:11: port must be a whole number from 1 to 65535, not '65536'");
	CHECK_ERR("hosts:\n  - name: a\n    port: ssh\n", "3:11: port must be a whole number from 1 to 65535, not 'ssh'");
	CHECK_ERR("hosts:\n  - name: a\n    identity: -i\n", "3:15: identity must name a key file");
	CHECK_ERR("hosts:\n  - name: a\n    identity: \"k\\tey\"\n", "3:15: identity must name a key file");
	CHECK_ERR("hosts:\n  - name: a\n    identity: ''\n", "3:15: identity must name a key file");
	CHECK_ERR("hosts:\n  - name: a\n    ssh_options: A=b\n", "3:18: expected a list of Name=value for 'ssh_options'");
	CHECK_ERR("hosts:\n  - name: a\n    ssh_options: [A=b, NoEquals, '=x', C=, 1A=x, \"T=a\\tb\"]\n",
		  "3:24: ssh option 'NoEquals': expected Name=value (as for ssh -o)\n"
		  "3:34: ssh option '=x': expected Name=value (as for ssh -o)\n"
		  "3:40: ssh option 'C=': expected Name=value (as for ssh -o)\n"
		  "3:44: ssh option '1A=x': expected Name=value (as for ssh -o)\n"
		  "3:50: ssh option 'T=a?b': expected Name=value (as for ssh -o)");
	CHECK_ERR("hosts:\n  - name: a\n    workdir: a b\n",
		  "3:14: workdir 'a b': letters, digits and ._/+@,=- only (and a leading ~/)");
	CHECK_ERR("hosts:\n  - name: a\n    workdir: ../x;rm\n",
		  "3:14: workdir '../x;rm': letters, digits and ._/+@,=- only (and a leading ~/)");
	CHECK_ERR("hosts:\n  - name: a\n    sweep_bin: 'x$(id)'\n",
		  "3:16: sweep_bin 'x$(id)': letters, digits and ._/+@,=- only (and a leading ~/)");
	CHECK_ERR("hosts:\n  - name: a\n    sweep_bin: -h\n",
		  "3:16: sweep_bin '-h': letters, digits and ._/+@,=- only (and a leading ~/)");
	/* A bad default is one problem, not one per host. */
	CHECK_ERR("defaults: {user: 'a b'}\nhosts:\n  - name: a\n  - name: b\n",
		  "1:18: user 'a b': letters, digits, '.', '_' and '-' only");

	/* Every problem, in file order. */
	CHECK_ERR("hosts:\n  - name: a\n    slot: 2\n    labels: {name: x, bad-name: 1}\n  - {name: a}\n"
		  "  - name: b c\n  - name: d\n    slots: 0\n",
		  "3:5: unknown key 'slot' in a host (did you mean 'slots'?)\n"
		  "4:14: the label 'name' is the host's name: set 'name' instead\n"
		  "4:23: label name 'bad-name': letters, digits and '_' only, not starting with a digit\n"
		  "5:12: host 'a' is listed twice (first at 2:5)\n"
		  "6:11: name 'b c': letters, digits, '.', '-' and '_' only\n"
		  "8:12: slots must be a whole number from 1 to 4096, not '0'");
}

/* More than 100 problems: the first 100, then a count of the rest. */
static void test_many(void)
{
	struct strbuf text = STRBUF_INIT;
	struct inventory inv;
	int rc, lines = 0;

	sb_adds(&text, "hosts:\n");
	for (int i = 0; i < 150; i++)
		sb_addf(&text, "  - name: 'bad %d'\n", i);
	rc = parse(text.buf, &inv);
	for (const char *p = errs; *p; p++)
		lines += *p == '\n';
	CHECK(rc == -1 && lines == 101, "150 problems: 101 lines (got %d)", lines);
	CHECK(strstr(errs, "sweep: inv.yaml:101:11: name 'bad 99'") && !strstr(errs, "'bad 100'"),
	      "the first 100 problems shown");
	CHECK(lines && strstr(errs, "\nsweep: inv.yaml: 50 more problems not shown\n"), "then the count of the rest");
	sb_release(&text);
}

static void test_remote_path(void)
{
	static const char *const ok[] = { "sweep", "build/sweep", "/abs/path", "/", "~", "~/", "~/x/y", "../up",
		"a/../b", "runs/v1.2+cu12", "a@b,c=d", "x-y_z.", "A1/b2" };
	static const char *const bad[] = { "", "-x", "--help", "a b", "a;b", "a|b", "a&b", "$HOME", "a`id`",
		"$(id)", "a>b", "a<b", "*", "a?", "[a]", "{a,b}", "'a'", "\"a\"", "a\\b", "!x", "#x", "a\nb",
		"a\tb", "host:path", "~user/x", "a~", "~~/x", "caf\xc3\xa9", "%x", "a^b", "~-x" };
	char longp[1100];

	for (size_t i = 0; i < ARRAY_SIZE(ok); i++)
		CHECK(inventory_remote_path_ok(ok[i]) == 1, "remote path '%s' accepted", ok[i]);
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		struct strbuf sb = STRBUF_INIT;

		sb_add_printable(&sb, bad[i], 20);
		CHECK(inventory_remote_path_ok(bad[i]) == 0, "remote path '%s' (printable) refused", sb.buf);
		sb_release(&sb);
	}
	memset(longp, 'a', sizeof(longp));
	longp[1024] = '\0';
	CHECK(inventory_remote_path_ok(longp) == 1, "1024 characters accepted");
	longp[1024] = 'a';
	longp[1025] = '\0';
	CHECK(inventory_remote_path_ok(longp) == 0, "1025 characters refused");
}

static void test_find(void)
{
	struct inventory inv;
	static const struct {
		const char *hostname, *want;
	} cases[] = {
		{ "alpha", "alpha" },                        /* equal to the hostname (and name) */
		{ "alpha.lab.example", "alpha" },            /* a full name of a short hostname */
		{ "beta.cluster.example", "beta.lab" },      /* equal to the hostname */
		{ "beta", "beta.lab" },                      /* the short name of a full hostname */
		{ "beta.lab", "beta.lab" },                  /* equal to the name */
		{ "beta.other", NULL },                      /* two full names that differ */
		{ "gamma", "gamma" },
		{ "alph", NULL },
		{ "alpha1", NULL },
		{ "", NULL },
		{ "ALPHA", NULL },
	};
	int rc = parse(good, &inv);

	CHECK(rc == 0, "the good inventory parses");
	for (size_t i = 0; !rc && i < ARRAY_SIZE(cases); i++) {
		const struct inventory_host *h = inventory_find(&inv, cases[i].hostname);

		CHECK(cases[i].want ? h && !strcmp(h->name, cases[i].want) : !h, "find '%s': got %s, want %s",
		      cases[i].hostname, h ? h->name : "none", cases[i].want ? cases[i].want : "none");
	}
	inventory_release(&inv);

	/* An exact hostname wins over a short one listed earlier. */
	rc = parse("hosts:\n  - {name: a, hostname: node1.a}\n  - {name: b, hostname: node1}\n", &inv);
	CHECK(rc == 0, "node1.a and node1 both listed");
	if (!rc) {
		const struct inventory_host *h1 = inventory_find(&inv, "node1"), *h2 = inventory_find(&inv, "node1.a"),
					    *h3 = inventory_find(&inv, "node1.b");

		CHECK(h1 && !strcmp(h1->name, "b"), "node1 is b, not a (got %s)", h1 ? h1->name : "none");
		CHECK(h2 && !strcmp(h2->name, "a"), "node1.a is a (got %s)", h2 ? h2->name : "none");
		CHECK(h3 && !strcmp(h3->name, "b"), "node1.b is b, the short one (got %s)", h3 ? h3->name : "none");
		/* Where the file gives it: launch names that place when the host says another. */
		CHECK(inv.hosts[1].hostname_line == 3 && inv.hosts[1].hostname_col == 25,
		      "b's hostname at 3:25 (got %d:%d)", inv.hosts[1].hostname_line, inv.hosts[1].hostname_col);
		inventory_release(&inv);
	}
	{
		static const struct {
			const char *a, *b;
			int want;
		} same[] = {
			{ "node1", "node1", 1 }, { "node1", "node1.lab", 1 }, { "node1.lab", "node1", 1 },
			{ "node1.lab", "node1.other", 0 }, { "node1", "node2", 0 }, { "node1", "node10", 0 },
			{ "C.1234", "C", 1 },   /* a rental's dotted hostname: its short form */
		};

		for (size_t i = 0; i < ARRAY_SIZE(same); i++)
			CHECK(inventory_same_host(same[i].a, same[i].b) == same[i].want, "same host '%s' '%s': want %d",
			      same[i].a, same[i].b, same[i].want);
	}
}

static void test_load(void)
{
	char path[] = "/tmp/sweep-inv-XXXXXX";
	int fd = mkstemp(path), rc;
	struct inventory inv;
	struct strbuf sb = STRBUF_INIT;

	CHECK(fd >= 0 && write(fd, good, strlen(good)) == (ssize_t)strlen(good), "wrote an inventory file");
	close(fd);
	rc = inventory_load(path, &inv);
	CHECK(rc == 0 && inv.nhosts == 3 && !strcmp(inv.path, path), "inventory_load reads the file");
	if (!rc)
		inventory_release(&inv);
	unlink(path);

	test_capture_start();
	rc = inventory_load("/nonexistent/inv.yaml", &inv);
	capture_into(errs, sizeof(errs));
	CHECK(rc == -1 && strstr(errs, "cannot open '/nonexistent/inv.yaml'"), "a missing file: %s", test_shown(shown_buf, sizeof(shown_buf), errs));
	CHECK(inv.hosts == NULL && inv.path == NULL, "a missing file leaves the inventory empty");
	sb_release(&sb);
}

int main(void)
{
	test_good();
	test_minimal();
	test_errors();
	test_many();
	test_remote_path();
	test_find();
	test_load();
	return test_done();
}
