/* clocks.c: locking a worker's GPU clocks at what its spec asks, recording them, and putting the driver's
 * defaults back at the worker's end, whichever way it ends. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "clocks.h"
#include "exitcode.h"
#include "msg.h"
#include "nvml.h"
#include "util.h"

int clocks_device(const char *uuid, int local_rank, void **dev, char *name, size_t n)
{
	unsigned count;

	if (nvml_open())
		return error("cannot lock the GPU clocks: NVML is not there (no driver, or no libnvidia-ml.so.1)");
	if (uuid && *uuid) {
		if (nvml_device(NULL, uuid, dev))
			return error("cannot lock the GPU clocks: NVML does not know GPU '%s'", uuid);
		snprintf(name, n, "%s", uuid);
		return 0;
	}
	if (nvml_count(&count) || !count)
		return error("cannot lock the GPU clocks: NVML sees no GPU");
	if (nvml_device_index((unsigned)local_rank % count, dev))
		return error("cannot lock the GPU clocks: NVML gives no handle for GPU %u", (unsigned)local_rank % count);
	snprintf(name, n, "NVML GPU %u", (unsigned)local_rank % count);
	return 0;
}

/* Lock one clock; -1 after error(). */
static int clocks_lock_one(void *dev, const char *name, enum nvml_clock which, int want)
{
	unsigned mhz = want == SPEC_CLOCK_BASE ? NVML_LOCK_BASE : (unsigned)want;
	const char *what = which == NVML_SM ? "SM" : "memory";
	char why[128];
	int denied;

	if (!nvml_lock(dev, which, mhz, why, sizeof(why), &denied))
		return 0;
	if (denied)
		return error("cannot lock the %s clock of %s: no permission (%s): locking clocks needs root, or "
			     "the driver's permission for this user", what, name, why);
	return error("cannot lock the %s clock of %s at %s: %s", what, name,
		     want == SPEC_CLOCK_BASE ? "base" : "the MHz asked", why);
}

/* Machines whose clocks must never change (shared or lent cards: the GPU checks set it) refuse here too,
 * whatever asked: sweep run refuses --lock-clocks first (clocks_forbidden). */
const char *clocks_forbidden(void)
{
	const char *v = getenv("SWEEP_NO_LOCK_CLOCKS");

	return v && *v && strcmp(v, "0") ? "SWEEP_NO_LOCK_CLOCKS is set: this machine's clocks are not to be changed" :
	       NULL;
}

int clocks_consent(const struct spec *s, const char *path, int lock)
{
	/* Locking changes the card's settings for everyone on it until the run puts them back: asked, never
	 * assumed. */
	if (lock && clocks_forbidden())
		return fail_usage("--lock-clocks is refused: %s", clocks_forbidden());
	if (spec_clocks_asked(s) && !lock)
		return fail_usage("%s: 'clocks:' locks the GPU clocks of every worker; give --lock-clocks to "
				  "consent (or remove 'clocks:')", path);
	return FAIL_OK;
}

int clocks_lock(const struct spec *s, void *dev, const char *name, struct clocks_held *h)
{
	memset(h, 0, sizeof(*h));
	if (clocks_forbidden())
		return error("cannot lock the clocks of %s: %s", name, clocks_forbidden());
	h->dev = dev;
	snprintf(h->gpu, sizeof(h->gpu), "%s", name);
	if (s->clock_sm) {
		if (clocks_lock_one(dev, name, NVML_SM, s->clock_sm))
			goto fail;
		h->sm = 1;
	}
	if (s->clock_mem) {
		if (clocks_lock_one(dev, name, NVML_MEM, s->clock_mem))
			goto fail;
		h->mem = 1;
	}
	return 0;
fail:
	clocks_restore(h);
	return -1;
}

void clocks_restore(struct clocks_held *h)
{
	char why[128];

	if (h->dev && h->sm && nvml_unlock(h->dev, NVML_SM, why, sizeof(why)))
		warning("cannot put back the SM clock of %s: %s (sweep hosts unlock)", h->gpu, why);
	if (h->dev && h->mem && nvml_unlock(h->dev, NVML_MEM, why, sizeof(why)))
		warning("cannot put back the memory clock of %s: %s (sweep hosts unlock)", h->gpu, why);
	memset(h, 0, sizeof(*h));
}

int clocks_reset(void *dev, const char *name)
{
	char why[128];

	if (clocks_forbidden())
		return error("cannot reset the clocks of %s: %s", name, clocks_forbidden());
	if (nvml_unlock(dev, NVML_SM, why, sizeof(why)))
		return error("cannot reset the SM clock of %s: %s", name, why);
	if (nvml_unlock(dev, NVML_MEM, why, sizeof(why)))
		return error("cannot reset the memory clock of %s: %s", name, why);
	return 0;
}

static void clocks_num(struct json_obj *o, const char *name, double v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%.17g", v);
	json_obj_add(o, name, buf, JSON_NUM);
}

void clocks_describe(const struct spec *s, void *dev, int as_text, struct json_obj *o)
{
	unsigned mhz;

	if (!spec_clocks_asked(s))
		return;
	/* NVML gives no reading of the base clock it locks at: locked_sm says where it went. */
	if (s->clock_sm == SPEC_CLOCK_BASE && as_text)
		json_obj_add(o, "lock_sm", "base", JSON_STR);
	else if (s->clock_sm > 0)
		clocks_num(o, "lock_sm", s->clock_sm);
	if (s->clock_mem > 0)
		clocks_num(o, "lock_mem", s->clock_mem);
	if (dev && s->clock_sm && !nvml_clock(dev, NVML_SM, 0, &mhz))
		clocks_num(o, "locked_sm", mhz);
	if (dev && s->clock_mem && !nvml_clock(dev, NVML_MEM, 0, &mhz))
		clocks_num(o, "locked_mem", mhz);
}

void clocks_result(const struct spec *s, void *dev, struct result *r)
{
	struct json_obj o = JSON_OBJ_INIT;
	double v;

	clocks_describe(s, dev, 0, &o);
	for (size_t i = 0; i < o.n; i++)
		if (!parse_double(o.v[i].val, &v))
			result_set_metric(r, o.v[i].key, v);
	json_obj_release(&o);
}

/* The hello's conditions with what the lock asked and reached added (as text: "base" stays a word). */
static int clocks_hello(const struct spec *s, void *dev, struct strbuf *hello)
{
	struct json_obj cond = JSON_OBJ_INIT;
	struct strbuf cj = STRBUF_INIT;
	struct hello h;
	char err[128];
	int ret = -1;

	if (msg_get_hello(hello->buf, hello->len, &h))
		return error("cannot read the executor's hello");
	if (json_parse_flat(h.conditions && *h.conditions ? h.conditions : "{}", &cond, 1, err, sizeof(err))) {
		error("the executor's conditions: %s", err);
		goto out;
	}
	clocks_describe(s, dev, 1, &cond);
	json_obj_write(&cj, &cond);
	free(h.conditions);
	h.conditions = xstrdup(cj.buf);
	sb_reset(hello);
	msg_put_hello(hello, &h);
	ret = 0;
out:
	hello_release(&h);
	json_obj_release(&cond);
	sb_release(&cj);
	return ret;
}

int clocks_worker_start(const struct spec *s, struct strbuf *hello, struct clocks_held *h)
{
	struct hello me;
	char name[64];
	void *dev;
	int ret;

	memset(h, 0, sizeof(*h));
	if (!spec_clocks_asked(s))
		return 0;
	if (msg_get_hello(hello->buf, hello->len, &me))
		return error("cannot read the executor's hello");
	ret = clocks_device(me.gpu_uuid, me.local_rank, &dev, name, sizeof(name)) ||
	      clocks_lock(s, dev, name, h);
	hello_release(&me);
	if (ret)
		return -1;
	if (clocks_hello(s, dev, hello)) {
		clocks_restore(h);
		return -1;
	}
	return 0;
}
