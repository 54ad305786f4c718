/* hosts.c: `sweep hosts hostfile|list|label|probe|bind|unlock`: host inventories at work; how a host pins
 * ranks; the GPU clocks a killed run left locked. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../clocks.h"
#include "../hostinfo.h"
#include "../inventory.h"
#include "../json.h"
#include "../nvml.h"
#include "../probe.h"
#include "../run.h"
#include "../table.h"
#include "../topo.h"
#include "builtin.h"

static int hosts_hostfile(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "out", required_argument, NULL, 'o' }, { "label", required_argument, NULL, 'l' },
		{ NULL, 0, NULL, 0 },
	};
	struct inventory inv;
	struct strbuf sb = STRBUF_INIT;
	const char *out = NULL;
	char **want = NULL;
	int nwant = 0, opt, ret = FAIL_USAGE;

	while ((opt = getopt_long(argc, argv, "o:l:", opts, NULL)) != -1) {
		if (opt == 'o') {
			out = optarg;
		} else if (opt == 'l' && strchr(optarg, '=') && optarg[0] != '=') {
			want = xrealloc(want, (size_t)(nwant + 1) * sizeof(*want));
			want[nwant++] = optarg;
		} else {
			if (opt == 'l')
				error("--label takes NAME=VALUE, not '%s'", optarg);
			free(want);
			return SHOW_USAGE;
		}
	}
	if (optind != argc - 1) {
		free(want);
		return SHOW_USAGE;
	}
	if (inventory_load(argv[optind], &inv)) {
		free(want);
		return FAIL_USAGE;
	}
	inventory_keep(&inv, want, nwant);
	if (!inv.nhosts) {
		error("no host of '%s' has every label asked for", argv[optind]);
		goto out;
	}
	inventory_hostfile(&inv, &sb);
	if (out) {
		struct store_out w;

		if (store_out_open(&w, "--out", out, NULL, 0)) {
			ret = FAIL_UNSAFE;
			goto out;
		}
		fwrite(sb.buf, 1, sb.len, w.f);
		if (store_out_close(&w)) {
			ret = FAIL_IO;
			goto out;
		}
	} else {
		fputs(sb.buf, stdout);
	}
	ret = FAIL_OK;
out:
	sb_release(&sb);
	inventory_release(&inv);
	free(want);
	return ret;
}

static int hosts_list(int argc, char **argv)
{
	struct inventory inv;

	if (argc != 2)
		return SHOW_USAGE;
	if (inventory_load(argv[1], &inv))
		return FAIL_USAGE;
	printf("%-16s %-24s %-24s %5s  %s\n", "name", "hostname", "address", "slots", "labels");
	for (int i = 0; i < inv.nhosts; i++) {
		struct strbuf sb = STRBUF_INIT;

		json_obj_write(&sb, &inv.hosts[i].labels);
		printf("%-16s %-24s %-24s %5d  %s\n", inv.hosts[i].name, inv.hosts[i].hostname, inv.hosts[i].address,
		       inv.hosts[i].slots, sb.buf);
		sb_release(&sb);
	}
	inventory_release(&inv);
	return FAIL_OK;
}

static int hosts_label(int argc, char **argv)
{
	struct inventory inv;
	struct store *st;
	struct strbuf missing = STRBUF_INIT;
	int matched, unmatched, ret = FAIL_IO;

	if (argc != 3)
		return SHOW_USAGE;
	if (access(argv[1], F_OK))   /* a writer's open would make it */
		return (error("cannot open '%s': %s", argv[1], strerror(errno)), FAIL_MISSING);
	if (inventory_load(argv[2], &inv))
		return FAIL_USAGE;
	/* a writer as any other: the lock's kind (FAIL_BUSY while a run writes) as store_open's */
	if ((ret = store_open(argv[1], STORE_RW, &st)) || (ret = store_lock(st, "sweep hosts label"))) {
		store_close(st);
		inventory_release(&inv);
		return ret;
	}
	ret = FAIL_IO;
	if (!inventory_apply(&inv, st, &matched, &unmatched, &missing)) {
		printf("%s: labels of %d host%s written; %d hostname%s not in %s%s%s\n", argv[1], matched,
		       matched == 1 ? "" : "s", unmatched, unmatched == 1 ? "" : "s", argv[2],
		       unmatched ? ": " : "", unmatched ? missing.buf : "");
		ret = FAIL_OK;
	}
	sb_release(&missing);
	store_close(st);
	inventory_release(&inv);
	return ret;
}

static int hosts_probe(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "db", required_argument, NULL, 'd' }, { "cpu", no_argument, NULL, 'c' },
		{ "read-bytes", required_argument, NULL, 'r' }, { NULL, 0, NULL, 0 },
	};
	const char *db = "results/probes.db";
	double read_bytes = 0;
	struct comm *c;
	int opt, cpu = 0, ret;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "d:", opts, NULL)) != -1) {
		if (opt == 'd')
			db = optarg;
		else if (opt == 'c')
			cpu = 1;
		else if (opt != 'r')
			return SHOW_USAGE;
		else if (parse_bytes(optarg, &read_bytes) || read_bytes < 4096 || read_bytes > 1e12)
			return fail_usage("--read-bytes takes a size from 4K to 1T (such as 64M), not '%s'", optarg);
	}
	if (optind != argc)
		return SHOW_USAGE;
	if (comm_init(&argc, &argv, &c))
		return FAIL_IO;
	if (comm_rank(c) == 0) {
		struct strbuf args = STRBUF_INIT;

		for (int i = 0; i < argc; i++)
			sb_addf(&args, "%s%s", i ? " " : "", argv[i]);
		ret = probe_run(c, db, cpu ? 0 : hostinfo_gpu_count(), read_bytes, args.buf);
		sb_release(&args);
		if (!ret || ret == FAIL_CELLS)
			printf("probes stored in %s (table probes; the latest per host, GPU and name is current)\n", db);
	} else {
		ret = (run_worker(c), FAIL_OK);
	}
	comm_finish(c);
	return ret;
}

/* --gpus: "auto", or PCI bus ids separated by commas into *busid (normalised; replaces an earlier list). */
static int hosts_gpus(const char *arg, enum topo_gpus *which, char ***busid, int *n)
{
	char *list = xstrdup(arg), *id, *save = NULL, norm[TOPO_BUSID_LEN];
	int ret = 0;

	while (*n > 0)
		free((*busid)[--*n]);
	*which = strcmp(arg, "auto") ? TOPO_GPUS_LIST : TOPO_GPUS_AUTO;
	for (id = strtok_r(list, ",", &save); *which == TOPO_GPUS_LIST && id; id = strtok_r(NULL, ",", &save)) {
		if (topo_busid(id, norm)) {
			ret = error("--gpus takes auto or PCI bus ids such as 0000:1b:00.0, separated by commas, "
				    "not '%s'", id);
			break;
		}
		*busid = xrealloc(*busid, (size_t)(*n + 1) * sizeof(**busid));
		(*busid)[(*n)++] = xstrdup(norm);
	}
	if (*which == TOPO_GPUS_LIST && !*n && !ret)
		ret = error("--gpus takes auto or PCI bus ids such as 0000:1b:00.0, not '%s'", arg);
	free(list);
	return ret;
}

/* An array of {rank, gpu, cpus, numa, shared}, one object a line. */
static void hosts_bind_json(const struct topo_plan *p)
{
	struct strbuf sb = STRBUF_INIT;

	sb_addc(&sb, '[');
	for (int r = 0; r < p->nranks; r++) {
		const struct topo_rank *k = &p->rank[r];

		sb_addf(&sb, "%s{\"rank\":%d,\"gpu\":", r ? ",\n " : "", r);
		if (k->gpu)
			json_add_str(&sb, k->gpu);
		else
			sb_adds(&sb, "null");
		sb_adds(&sb, ",\"cpus\":");
		json_add_str(&sb, k->cpus);
		sb_adds(&sb, ",\"numa\":");
		json_add_str(&sb, k->numa);
		sb_addf(&sb, ",\"shared\":%d}", k->shared);
	}
	sb_adds(&sb, "]\n");
	fputs(sb.buf, stdout);
	sb_release(&sb);
}

static void hosts_bind_table(const struct topo_plan *p)
{
	static const char *const head[] = { "rank", "gpu", "cpus", "numa", "shared" };
	struct table t;

	table_init(&t, 5, head);
	for (int r = 0; r < p->nranks; r++) {
		const struct topo_rank *k = &p->rank[r];
		char rank[16], shared[16];
		const char *row[] = { rank, k->gpu ? k->gpu : "-", k->cpus, k->numa, shared };

		snprintf(rank, sizeof(rank), "%d", r);
		snprintf(shared, sizeof(shared), "%d", k->shared);
		table_add(&t, row);
	}
	table_print(&t, stdout, &table_text);
	table_release(&t);
}

/* The plan, then its notes: after the table, or on stderr where stdout must stay one JSON array. */
static void hosts_bind_print(const struct topo_plan *p, int json)
{
	char *notes = xstrdup(p->notes.buf ? p->notes.buf : ""), *line, *save = NULL;

	if (json)
		hosts_bind_json(p);
	else
		hosts_bind_table(p);
	for (line = strtok_r(notes, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		if (json)
			warning("%s", line);
		else
			printf("note: %s\n", line);
	free(notes);
}

static int hosts_bind(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "topology", required_argument, NULL, 't' }, { "ranks-per-node", required_argument, NULL, 'n' },
		{ "gpus", required_argument, NULL, 'g' }, { "json", no_argument, NULL, 'j' }, { NULL, 0, NULL, 0 },
	};
	enum topo_gpus which = TOPO_GPUS_RUN;
	struct topo_plan plan;
	const char *xml = NULL;
	char **busid = NULL;
	long nranks = 0;
	int nbusid = 0, opt, json = 0, ret = FAIL_USAGE;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (opt == 't') {
			xml = optarg;
		} else if (opt == 'j') {
			json = 1;
		} else if (opt == 'g') {
			if (hosts_gpus(optarg, &which, &busid, &nbusid))
				goto out;
		} else if (opt != 'n') {
			ret = SHOW_USAGE;
			goto out;
		} else if (parse_long(optarg, &nranks) || nranks < 1 || nranks > 4096) {
			error("--ranks-per-node takes a number from 1 to 4096, not '%s'", optarg);
			goto out;
		}
	}
	if (optind != argc || !nranks) {
		if (!nranks)
			error("'sweep hosts bind' needs --ranks-per-node N");
		ret = SHOW_USAGE;
		goto out;
	}
	if (topo_plan(xml, which, busid, nbusid, (int)nranks, &plan)) {
		ret = xml ? FAIL_USAGE : FAIL_IO;   /* a file the user named, or this machine */
		goto out;
	}
	hosts_bind_print(&plan, json);
	topo_plan_release(&plan);
	ret = FAIL_OK;
out:
	while (nbusid > 0)
		free(busid[--nbusid]);
	free(busid);
	return ret;
}

/* The driver's default clocks back on every GPU of this host (or the one --gpu names, in NVML's order):
 * what a worker killed outright (SIGKILL, a node's reboot aside) could not put back itself. */
static int hosts_unlock(int argc, char **argv)
{
	static const struct option opts[] = { { "gpu", required_argument, NULL, 'g' }, { NULL, 0, NULL, 0 } };
	unsigned count, from = 0, to;
	long gpu = -1;
	int opt, ret = FAIL_OK;

	while ((opt = getopt_long(argc, argv, "g:", opts, NULL)) != -1)
		if (opt != 'g' || parse_long(optarg, &gpu) || gpu < 0)
			return opt == 'g' ? fail_usage("--gpu takes a GPU's NVML index, not '%s'", optarg) : SHOW_USAGE;
	if (optind != argc)
		return SHOW_USAGE;
	if (nvml_count(&count))
		return error("cannot reset the GPU clocks: NVML is not there (no driver, or no libnvidia-ml.so.1)"),
		       FAIL_IO;
	if (gpu >= (long)count)
		return fail_usage("--gpu %ld: NVML sees %u GPUs", gpu, count);
	if (gpu >= 0)
		from = (unsigned)gpu;
	to = gpu >= 0 ? from + 1 : count;
	for (unsigned i = from; i < to; i++) {
		char name[32];
		void *dev;

		snprintf(name, sizeof(name), "NVML GPU %u", i);
		if (nvml_device_index(i, &dev) || clocks_reset(dev, name)) {
			if (!ret)
				error("cannot reset the clocks of %s", name);
			ret = FAIL_IO;
			continue;
		}
		printf("%s: SM and memory clocks back to the driver's defaults\n", name);
	}
	return ret;
}

/* Each subcommand returns a kind of failure (exitcode.h) or SHOW_USAGE: turned into the exit code here. */
static int hosts_fn(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(int argc, char **argv);
	} sub[] = {
		{ "hostfile", hosts_hostfile }, { "list", hosts_list }, { "label", hosts_label },
		{ "probe", hosts_probe }, { "bind", hosts_bind }, { "unlock", hosts_unlock },
	};
	size_t i, n = sizeof(sub) / sizeof(sub[0]);
	int ret;

	if (argc < 2)
		return cmd_usage(&cmd_hosts);
	for (i = 0; i < n && strcmp(argv[1], sub[i].name); i++)
		;
	if (i == n) {
		error("unknown 'sweep hosts' command '%s' (hostfile, list, label, probe, bind or unlock)", argv[1]);
		return cmd_usage(&cmd_hosts);
	}
	ret = sub[i].fn(argc - 1, argv + 1);
	return ret == SHOW_USAGE ? cmd_usage(&cmd_hosts) : exitcode_of(ret);
}

const struct cmd cmd_hosts = { "hosts", hosts_fn,
	"sweep hosts hostfile|list|label|probe|bind|unlock ...",
	"A host inventory (hosts/*.yaml: name, hostname, address, slots, labels, notes; see\n"
	"hosts/example.yaml) at work.\n"
	"  sweep hosts hostfile FILE.yaml [--out PATH] [--label NAME=VALUE ...]: an Open MPI hostfile\n"
	"    (\"ADDRESS slots=N\" per host), of the hosts with every label given, for mpirun --hostfile.\n"
	"  sweep hosts list FILE.yaml: the hosts, checked, one a line.\n"
	"  sweep hosts label DB FILE.yaml: write the labels of every host of DB whose hostname the\n"
	"    inventory knows into its facts, so that reports group by label.NAME ('sweep run --inventory'\n"
	"    does the same at the end of a run).\n"
	"  sweep hosts probe [--db PATH] [--cpu] [--read-bytes SIZE]: measure the ceilings of every GPU\n"
	"    (and host) of the job (under mpirun: every rank's): hbm_copy_gbs, h2d_gbs, gemm_bf16_tflops\n"
	"    per GPU, host_read_gbs per host, into the probes table of PATH (default results/probes.db; give\n"
	"    your sweep's database so that reports can use them in --limit). --cpu: the host probe only.\n"
	"    --read-bytes: the host read buffer (default 1G, past any last-level cache; less only where\n"
	"    many ranks share a machine, as in tests).\n"
	"  sweep hosts bind --ranks-per-node N [--topology FILE.xml] [--gpus auto|BUSID,...] [--json]: the\n"
	"    binding 'sweep run' gives each of N ranks on a machine: its GPU (PCI bus id; rank k gets GPU\n"
	"    k mod G), its cpus (as Linux numbers them, taskset's), their NUMA nodes, and how many ranks'\n"
	"    cpus meet them, then notes (no GPU, a GPU without locality, cpus shared, ranks left unbound).\n"
	"    --topology: the machine FILE.xml describes ('lstopo --of xml > FILE.xml' there), else this one.\n"
	"    --gpus: auto, the NVIDIA display and 3D controllers of the topology in PCI bus order (the\n"
	"    default for a file; on this machine the default is CUDA's devices), or the bus ids given.\n"
	"    --json: an array of {rank, gpu, cpus, numa, shared}; the notes go to stderr.\n"
	"  sweep hosts unlock [--gpu N]: put the driver's default SM and memory clocks back on every GPU of\n"
	"    this host (N: only NVML's GPU N), for a run whose worker was killed outright while it held\n"
	"    them locked ('sweep run --lock-clocks'; a worker that ends any other way puts them back\n"
	"    itself). Needs what locking needed: root or the driver's permission." };
