/* plan_db.c: a spec's grid planned into a database (plan.c's cells, store.c's rows). */
#include "plan_db.h"

#include "plan.h"

struct plan_counts {
	struct store *st;
	const struct spec *s;
	uint64_t added, existing;
	unsigned shard, nshards;
};

static int add_cell(const struct plan_cell *c, void *data)
{
	struct plan_counts *pc = data;
	int added;

	if (pc->nshards && store_shard(pc->s->name, c->params, c->pass, pc->nshards) != pc->shard)
		return 0;
	if (store_add_cell(pc->st, pc->s->name, c->key, c->params, c->pass, c->replica, c->ord,
			   pc->s->per == PER_ANY ? "planned" : "template", &added))
		return -1;
	if (added)
		pc->added++;
	else
		pc->existing++;
	return 0;
}

int plan_db(const struct spec *s, struct store *st, unsigned shard, unsigned nshards, uint64_t *added,
	    uint64_t *existing)
{
	struct plan_counts pc = { st, s, 0, 0, shard, nshards };

	if (store_begin(st))
		return -1;
	if (store_put_sweep(st, s) || plan_each(s, add_cell, &pc)) {
		store_rollback(st);
		return -1;
	}
	if (store_commit(st))
		return -1;
	*added = pc.added;
	*existing = pc.existing;
	return 0;
}
