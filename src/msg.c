/* msg.c: (de)serialisation of hello, task and result messages into flat byte buffers. */
#include "msg.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct cursor {
	const char *p, *end;
	int bad;
};

static void put_u32(struct strbuf *sb, uint32_t v)
{
	unsigned char b[4] = { v & 0xff, (v >> 8) & 0xff, (v >> 16) & 0xff, v >> 24 };

	sb_add(sb, b, 4);
}

static void put_i64(struct strbuf *sb, int64_t v)
{
	put_u32(sb, (uint32_t)((uint64_t)v & 0xffffffffu));
	put_u32(sb, (uint32_t)((uint64_t)v >> 32));
}

static void put_f64(struct strbuf *sb, double v)
{
	uint64_t u;

	memcpy(&u, &v, sizeof(u));
	put_i64(sb, (int64_t)u);
}

/* NULL is sent as length 0xffffffff so that it comes back as NULL. */
static void put_str(struct strbuf *sb, const char *s)
{
	if (!s) {
		put_u32(sb, 0xffffffffu);
		return;
	}
	put_u32(sb, (uint32_t)strlen(s));
	sb_adds(sb, s);
}

static uint32_t get_u32(struct cursor *c)
{
	const unsigned char *b = (const unsigned char *)c->p;

	if (c->bad || c->end - c->p < 4) {
		c->bad = 1;
		return 0;
	}
	c->p += 4;
	return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

static int64_t get_i64(struct cursor *c)
{
	uint64_t lo = get_u32(c), hi = get_u32(c);

	return (int64_t)(lo | hi << 32);
}

static double get_f64(struct cursor *c)
{
	uint64_t u = (uint64_t)get_i64(c);
	double v;

	memcpy(&v, &u, sizeof(v));
	return v;
}

static char *get_str(struct cursor *c)
{
	uint32_t n = get_u32(c);

	if (c->bad || n == 0xffffffffu)
		return NULL;
	if ((size_t)(c->end - c->p) < n || memchr(c->p, '\0', n)) {
		c->bad = 1;
		return NULL;
	}
	c->p += n;
	return xstrndup(c->p - n, n);
}

/* A count that the rest of the buffer can hold at min_size bytes per element. */
static uint32_t get_count(struct cursor *c, size_t min_size)
{
	uint32_t n = get_u32(c);

	if (!c->bad && (size_t)(c->end - c->p) / min_size < n)
		c->bad = 1;
	return c->bad ? 0 : n;
}

static int done(struct cursor *c)
{
	return c->bad || c->p != c->end ? -1 : 0;
}

void hello_release(struct hello *h)
{
	free(h->host);
	free(h->facts);
	free(h->gpu_uuid);
	free(h->binding);
	free(h->conditions);
	free(h->why);
	memset(h, 0, sizeof(*h));
}

void msg_put_hello(struct strbuf *sb, const struct hello *h)
{
	put_u32(sb, (uint32_t)h->rank);
	put_u32(sb, (uint32_t)h->local_rank);
	put_u32(sb, (uint32_t)h->gpu);
	put_str(sb, h->host);
	put_str(sb, h->facts);
	put_str(sb, h->gpu_uuid);
	put_str(sb, h->binding);
	put_str(sb, h->conditions);
	put_u32(sb, (uint32_t)h->cannot);
	put_str(sb, h->why ? h->why : "");
}

int msg_get_hello(const char *buf, size_t len, struct hello *h)
{
	struct cursor c = { buf, buf + len, 0 };

	memset(h, 0, sizeof(*h));
	h->rank = (int)get_u32(&c);
	h->local_rank = (int)get_u32(&c);
	h->gpu = (int)get_u32(&c);
	h->host = get_str(&c);
	h->facts = get_str(&c);
	h->gpu_uuid = get_str(&c);
	h->binding = get_str(&c);
	h->conditions = get_str(&c);
	h->cannot = (int)get_u32(&c);
	h->why = get_str(&c);
	if (done(&c) || !h->host || !h->facts || !h->why) {
		hello_release(h);
		return -1;
	}
	return 0;
}

void exec_init_release(struct exec_init *x)
{
	free(x->spec_path);
	free(x->spec_text);
	memset(x, 0, sizeof(*x));
}

void msg_put_init(struct strbuf *sb, const struct exec_init *x)
{
	put_u32(sb, (uint32_t)x->rank);
	put_u32(sb, (uint32_t)x->local_rank);
	put_u32(sb, (uint32_t)x->local_size);
	put_u32(sb, (uint32_t)x->bind);
	put_str(sb, x->spec_path);
	put_str(sb, x->spec_text);
}

int msg_get_init(const char *buf, size_t len, struct exec_init *x)
{
	struct cursor c = { buf, buf + len, 0 };

	memset(x, 0, sizeof(*x));
	x->rank = (int)get_u32(&c);
	x->local_rank = (int)get_u32(&c);
	x->local_size = (int)get_u32(&c);
	x->bind = (int)get_u32(&c);
	x->spec_path = get_str(&c);
	x->spec_text = get_str(&c);
	if (done(&c) || !x->spec_path || !x->spec_text || x->local_size < 1) {
		exec_init_release(x);
		return -1;
	}
	return 0;
}

void msg_put_task(struct strbuf *sb, const struct task *t)
{
	put_i64(sb, t->cell);
	put_str(sb, t->key);
	put_str(sb, t->params);
	put_u32(sb, (uint32_t)t->pass);
	put_str(sb, t->replica);
	put_u32(sb, (uint32_t)t->control);
	put_u32(sb, (uint32_t)(t->gang_size > 1 ? t->gang_size : 1));
	put_u32(sb, (uint32_t)t->gang_rank);
	put_u32(sb, (uint32_t)t->gang_id);
	for (int i = 0; i < t->gang_size && t->gang_size > 1; i++)
		put_u32(sb, (uint32_t)t->gang_ranks[i]);
}

int msg_get_task(const char *buf, size_t len, struct task *t)
{
	struct cursor c = { buf, buf + len, 0 };

	memset(t, 0, sizeof(*t));
	t->cell = get_i64(&c);
	t->key = get_str(&c);
	t->params = get_str(&c);
	t->pass = (int)get_u32(&c);
	t->replica = get_str(&c);
	t->control = (int)get_u32(&c);
	t->gang_size = (int)get_u32(&c);
	t->gang_rank = (int)get_u32(&c);
	t->gang_id = (int)get_u32(&c);
	if (t->gang_size > 1 && !c.bad) {
		/* The members' ranks follow: as many as the buffer can hold at most. */
		if ((size_t)(c.end - c.p) / 4 < (size_t)t->gang_size) {
			c.bad = 1;
		} else {
			t->gang_ranks = xcalloc((size_t)t->gang_size, sizeof(int));
			for (int i = 0; i < t->gang_size; i++)
				t->gang_ranks[i] = (int)get_u32(&c);
		}
	}
	if (done(&c) || !t->key || !t->params || !t->replica || t->gang_size < 1 ||
	    t->gang_rank >= t->gang_size) {
		task_release(t);
		return -1;
	}
	return 0;
}

void msg_put_tasks(struct strbuf *sb, const struct task *const *t, int n)
{
	put_u32(sb, (uint32_t)n);
	for (int i = 0; i < n; i++) {
		size_t at = sb->len;

		put_u32(sb, 0);   /* the length, filled in below */
		msg_put_task(sb, t[i]);
		for (int b = 0; b < 4; b++)
			sb->buf[at + b] = (char)(((sb->len - at - 4) >> (8 * b)) & 0xff);
	}
}

int msg_get_tasks(const char *buf, size_t len, struct task **out, int *n)
{
	struct cursor c = { buf, buf + len, 0 };
	uint32_t count = get_count(&c, 4);
	struct task *t;
	uint32_t i;

	if (c.bad || !count)
		return -1;
	t = xcalloc(count, sizeof(*t));
	for (i = 0; i < count; i++) {
		uint32_t size = get_u32(&c);

		if (c.bad || (size_t)(c.end - c.p) < size || msg_get_task(c.p, size, &t[i]))
			break;
		c.p += size;
	}
	if (i < count || done(&c)) {
		for (uint32_t j = 0; j < i && j < count; j++)
			task_release(&t[j]);
		free(t);
		return -1;
	}
	*out = t;
	*n = (int)count;
	return 0;
}

void msg_put_result(struct strbuf *sb, const struct result *r)
{
	put_i64(sb, r->cell);
	put_u32(sb, (uint32_t)r->worker);
	put_u32(sb, (uint32_t)r->status);
	put_str(sb, r->error);
	put_f64(sb, r->started);
	put_f64(sb, r->wall);
	put_u32(sb, (uint32_t)r->nsamples);
	for (int i = 0; i < r->nsamples; i++) {
		put_f64(sb, r->samples[i]);
		put_f64(sb, r->clocks[i]);
	}
	/* A command's runs: what each cost (a kernel's samples have no usage). */
	put_u32(sb, r->usage != NULL);
	for (int i = 0; r->usage && i < r->nsamples; i++) {
		put_f64(sb, r->usage[i].user);
		put_f64(sb, r->usage[i].sys);
		put_f64(sb, r->usage[i].rss);
	}
	put_u32(sb, (uint32_t)r->throttled);
	put_u32(sb, (uint32_t)r->noise_ok);
	put_u32(sb, (uint32_t)r->precise);
	put_u32(sb, (uint32_t)(r->settled + 1));
	put_u32(sb, (uint32_t)r->stop);
	put_u32(sb, (uint32_t)r->launches);
	put_f64(sb, r->warmup);
	put_f64(sb, r->sum.median);
	put_f64(sb, r->sum.mean);
	put_f64(sb, r->sum.min);
	put_f64(sb, r->sum.max);
	put_f64(sb, r->sum.stdev);
	put_f64(sb, r->sum.q1);
	put_f64(sb, r->sum.q3);
	put_f64(sb, r->sum.noise);
	put_f64(sb, r->sum.ci_lo);
	put_f64(sb, r->sum.ci_hi);
	put_u32(sb, (uint32_t)r->metrics.n);
	for (size_t i = 0; i < r->metrics.n; i++) {
		put_str(sb, r->metrics.v[i].key);
		put_str(sb, r->metrics.v[i].val);
		put_u32(sb, (uint32_t)r->metrics.v[i].type);
	}
	put_u32(sb, (uint32_t)r->nitems);
	for (size_t i = 0; i < r->nitems; i++) {
		put_str(sb, r->items[i].item);
		put_str(sb, r->items[i].metric);
		put_f64(sb, r->items[i].value);
	}
	put_str(sb, r->out);
	put_str(sb, r->err);
	put_str(sb, r->note);
}

int msg_get_result(const char *buf, size_t len, struct result *r)
{
	struct cursor c = { buf, buf + len, 0 };
	uint32_t n, usage, flags[3];

	result_init(r);
	r->cell = get_i64(&c);
	r->worker = (int)get_u32(&c);
	r->status = (enum result_status)get_u32(&c);
	if (r->status >= NRESULT)
		c.bad = 1;
	r->error = get_str(&c);
	r->started = get_f64(&c);
	r->wall = get_f64(&c);
	n = get_count(&c, 16);
	for (uint32_t i = 0; i < n && !c.bad; i++) {
		double s = get_f64(&c), clk = get_f64(&c);

		result_add_sample(r, s, clk);
	}
	usage = get_u32(&c);
	if (usage > 1 || (usage && (size_t)(c.end - c.p) / 24 < (size_t)r->nsamples))
		c.bad = 1;
	if (usage && !c.bad && r->nsamples) {
		r->usage = xcalloc(r->alloc_samples, sizeof(*r->usage));
		for (int i = 0; i < r->nsamples; i++) {
			r->usage[i].user = get_f64(&c);
			r->usage[i].sys = get_f64(&c);
			r->usage[i].rss = get_f64(&c);
		}
	}
	r->throttled = (int)get_u32(&c);
	flags[0] = get_u32(&c);
	flags[1] = get_u32(&c);
	flags[2] = get_u32(&c);
	if (flags[0] > 1 || flags[1] > 1 || flags[2] > 2)
		c.bad = 1;
	r->noise_ok = (int)flags[0];
	r->precise = (int)flags[1];
	r->settled = (int)flags[2] - 1;
	r->stop = (enum stop_rule)get_u32(&c);
	if (r->stop >= NSTOP)
		c.bad = 1;
	r->launches = (int)get_u32(&c);
	r->warmup = get_f64(&c);
	r->sum.n = (size_t)r->nsamples;
	r->sum.median = get_f64(&c);
	r->sum.mean = get_f64(&c);
	r->sum.min = get_f64(&c);
	r->sum.max = get_f64(&c);
	r->sum.stdev = get_f64(&c);
	r->sum.q1 = get_f64(&c);
	r->sum.q3 = get_f64(&c);
	r->sum.noise = get_f64(&c);
	r->sum.ci_lo = get_f64(&c);
	r->sum.ci_hi = get_f64(&c);
	n = get_count(&c, 12);
	for (uint32_t i = 0; i < n && !c.bad; i++) {
		char *k = get_str(&c), *v = get_str(&c);
		uint32_t type = get_u32(&c);

		if (k && v && type <= JSON_STR)
			json_obj_add(&r->metrics, k, v, (enum json_type)type);
		else
			c.bad = 1;
		free(k);
		free(v);
	}
	n = get_count(&c, 16);
	for (uint32_t i = 0; i < n && !c.bad; i++) {
		char *item = get_str(&c), *metric = get_str(&c);
		double v = get_f64(&c);

		if (item && metric)
			result_add_item(r, item, metric, v);
		else
			c.bad = 1;
		free(item);
		free(metric);
	}
	r->out = get_str(&c);
	r->err = get_str(&c);
	r->note = get_str(&c);
	if (done(&c)) {
		result_release(r);
		return -1;
	}
	return 0;
}

void msg_results_init(struct strbuf *sb)
{
	sb_reset(sb);
	put_u32(sb, 0);
}

int msg_results_count(const struct strbuf *sb)
{
	struct cursor c = { sb->buf, sb->buf + sb->len, 0 };

	return (int)get_u32(&c);
}

void msg_record_put(struct strbuf *sb, const struct result *r)
{
	size_t at = sb->len;

	put_u32(sb, 0);
	msg_put_result(sb, r);
	for (int b = 0; b < 4; b++)
		sb->buf[at + b] = (char)(((sb->len - at - 4) >> (8 * b)) & 0xff);
}

static void results_bump(struct strbuf *sb)
{
	uint32_t n = (uint32_t)msg_results_count(sb) + 1;

	for (int b = 0; b < 4; b++)
		sb->buf[b] = (char)((n >> (8 * b)) & 0xff);
}

void msg_results_add(struct strbuf *sb, const struct result *r)
{
	msg_record_put(sb, r);
	results_bump(sb);
}

void msg_results_add_record(struct strbuf *sb, const char *rec, size_t len)
{
	sb_add(sb, rec, len);
	results_bump(sb);
}

size_t msg_record_len(const char *buf, size_t avail)
{
	struct cursor c = { buf, buf + avail, 0 };
	size_t size = get_u32(&c);

	return c.bad || avail - 4 < size ? 0 : 4 + size;
}

int msg_record_peek(const char *rec, size_t len, int64_t *cell, enum result_status *status, double *started,
		    double *wall)
{
	struct cursor c = { rec, rec + len, 0 };
	uint32_t size = get_u32(&c), n;

	if (c.bad || size != len - 4)
		return -1;
	*cell = get_i64(&c);
	get_u32(&c);   /* worker */
	*status = (enum result_status)get_u32(&c);
	n = get_u32(&c);   /* the error's length */
	if (n != 0xffffffffu && !c.bad && (size_t)(c.end - c.p) >= n)
		c.p += n;
	else if (n != 0xffffffffu)
		c.bad = 1;
	*started = get_f64(&c);
	*wall = get_f64(&c);
	return c.bad || *status >= NRESULT ? -1 : 0;
}

int msg_results_get(const char *buf, size_t len, struct result **out, int *n)
{
	struct cursor c = { buf, buf + len, 0 };
	uint32_t count = get_count(&c, 4), i;
	struct result *r;

	if (c.bad || !count)
		return -1;
	/* Decode all first: a malformed message is refused whole, before any result is used. */
	r = xcalloc(count, sizeof(*r));
	for (i = 0; i < count; i++) {
		uint32_t size = get_u32(&c);

		if (c.bad || (size_t)(c.end - c.p) < size || msg_get_result(c.p, size, &r[i]))
			break;
		c.p += size;
	}
	if (i < count || done(&c)) {
		for (uint32_t j = 0; j < i && j < count; j++)
			result_release(&r[j]);
		free(r);
		return -1;
	}
	*out = r;
	*n = (int)count;
	return 0;
}

void msg_silence_start(struct msg_silence *m, double now)
{
	m->heard = m->looked = now;
	m->heard_once = 0;
}

void msg_silence_heard(struct msg_silence *m, double now)
{
	m->heard = now;
	m->heard_once = 1;
}

int msg_silence_over(struct msg_silence *m, double now)
{
	if (now - m->looked > MSG_LISTEN_GAP && m->heard < now)
		m->heard = now;
	m->looked = now;
	return now - m->heard >= (m->heard_once ? MSG_ORPHAN_SECONDS : MSG_FIRST_WAIT);
}
