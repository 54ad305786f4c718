/* probe.c: `sweep hosts probe`: measured ceilings (device copy, host to device, host read, GEMM peak) on
 * every GPU (or host) of the job, stored in probes so that reports can divide by what this host can do. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kernels/kernel.h"
#include "exitcode.h"
#include "probe.h"
#include "run.h"
#include "store.h"
#include "util.h"

/* One probe: a one-cell sweep, and which of its metrics becomes which probe. */
struct probe {
	const char *name;      /* probes.name */
	const char *unit;
	const char *metric;    /* metrics.name of the cell's result */
	double scale;          /* probe value = metric * scale */
	int gpu;               /* needs a GPU (and a CUDA build) */
	double target;         /* the noise a quiet machine gives: above it, a warning */
	const char *spec;      /* YAML after the sweep: line; %s: the bytes of the host read probe */
};

/*
 * A probe samples for a fixed budget (min_samples and min_time) and stops: its noise target is checked
 * afterwards, not waited for (max_noise: 1e9 in its timing, as a busy host's noise passes 100 %). On a
 * busy host the target is out of reach, and waiting for it sat every probe at its timeout (10 s a host)
 * to store the same median; the noise is reported instead, naming the host, so the user knows which
 * ceilings were measured under load.
 */

static const struct probe probes[] = {
	{ "hbm_copy_gbs", "GB/s", "gbs", 1, 1, 0.01,
	  "kernel: copy\nparams: {bytes: 4G, method: memcpy}\nper: gpu\n"
	  "timing: {min_samples: 20, min_time: 0.3, max_noise: 1e9, timeout: 5}\n" },
	{ "h2d_gbs", "GB/s", "gbs", 1, 1, 0.01,
	  "kernel: h2d\nparams: {bytes: 256M}\nper: gpu\n"
	  "timing: {min_samples: 20, min_time: 0.3, max_noise: 1e9, timeout: 5}\n" },
	{ "gemm_bf16_tflops", "TFLOP/s", "gflops", 1e-3, 1, 0.02,
	  "kernel: gemm\nparams: {M: 8192, N: 8192, K: 8192, dtype: bf16}\nper: gpu\n"
	  "timing: {min_samples: 50, min_time: 0.05, max_noise: 1e9, timeout: 5}\n" },
	{ "host_read_gbs", "GB/s", "gbs", 1, 0, 0.02,
	  "kernel: cpu.read\nparams: {bytes: %s}\nper: host\n"
	  "timing: {min_samples: 10, min_time: 0.5, max_noise: 1e9, timeout: 10}\n" },
};

static int want(const struct probe *p, int gpus)
{
	return !p->gpu || (gpus > 0 && kernel_find("gemm"));
}

static int warn_noisy(const struct store_row *row, void *data)
{
	const struct probe *p = data;
	char host[52];

	warning("probe %s on %s%s%s: noise %.1f %% over the %g %% of a quiet machine (busy?); stored the median"
		" of its %s samples", p->name, row->text[0] ? printable(host, row->text[0], 48) : "?",
		row->text[1] && row->num[1] >= 0 ? " GPU " : "", row->text[1] && row->num[1] >= 0 ? row->text[1] : "",
		row->num[2] * 100, p->target * 100, row->text[3] ? row->text[3] : "?");
	return 0;
}

/* Copy the probe's ok results of this run into probes: one row per worker's host and GPU; warn of those
 * noisier than the probe's target. */
static int store_probe(const struct probe *p, const char *sweep, const char *db, int64_t run)
{
	struct store *st;
	char runs[32];
	int ret;

	snprintf(runs, sizeof(runs), "%lld", (long long)run);
	if ((ret = store_open(db, STORE_RW, &st)) || (ret = store_lock(st, "sweep hosts probe"))) {
		store_close(st);
		return ret;   /* the kind as the store says it (FAIL_BUSY while a run writes it) */
	}
	ret = store_put_probes(st, sweep, run, p->name, p->unit, p->metric, p->scale);
	if (!ret) {
		char target[32];
		const char *nb[] = { sweep, runs, target };

		snprintf(target, sizeof(target), "%.17g", p->target);
		ret = store_query(st, "SELECT h.hostname, w.gpu, r.noise, r.n FROM results r"
				  " JOIN cells c ON c.id = r.cell JOIN workers w ON w.id = r.worker"
				  " LEFT JOIN hosts h ON h.id = w.host WHERE c.sweep = ?1 AND r.status = 'ok'"
				  " AND r.run = ?2 AND r.noise > ?3 ORDER BY 1, 2", nb, 3, 1, warn_noisy, (void *)p);
	}
	store_close(st);
	return ret;
}

int probe_run(struct comm *c, const char *db, int gpus, double read_bytes, const char *args)
{
	struct strbuf text = STRBUF_INIT, name = STRBUF_INIT;
	char stamp[32], bytes[32];
	int n = 0, done = 0, bad = 0, ret = FAIL_OK;

	for (size_t i = 0; i < ARRAY_SIZE(probes); i++)
		n += want(&probes[i], gpus);
	snprintf(bytes, sizeof(bytes), read_bytes > 0 ? "%.0f" : "1G", read_bytes);
	/* Each session has its own sweeps, so that probing again measures again. */
	iso_time(now_wall(), stamp, sizeof(stamp));
	for (size_t i = 0; i < ARRAY_SIZE(probes) && !ret; i++) {
		const struct probe *p = &probes[i];
		struct master_opts o = { 0 };
		struct run_extra x = { 0 };
		struct run_result res;
		struct spec s;
		if (!want(p, gpus))
			continue;
		sb_reset(&name);
		sb_addf(&name, "probe.%s.%.19s", p->name, stamp);
		for (char *q = name.buf; *q; q++)
			if (*q == ':')
				*q = '-';
		sb_reset(&text);
		sb_addf(&text, "sweep: %s\n", name.buf);
		sb_addf(&text, p->spec, bytes);
		if (spec_parse("(probe)", text.buf, text.len, &s))
			BUG("probe spec '%s' does not parse", p->name);
		o.local_worker = 1;
		o.progress_every = 1;
		o.hello_timeout = 120;
		o.keep_workers = ++done < n;
		ret = run_spec(c, &s, db, &o, &x, args, &res);
		if (!ret && (res.quarantined || res.not_run))
			bad++;
		else if (!ret)
			ret = store_probe(p, s.name, db, res.run);
		spec_release(&s);
	}
	sb_release(&text);
	sb_release(&name);
	return ret ? ret : bad ? FAIL_CELLS : FAIL_OK;
}
