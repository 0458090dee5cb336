/*
 * stack_lender.c: keys lent the whole stacks of their copies
 * (include/sigprof/collectors/stack_lender.h).
 */
#include <stdlib.h>

#include "sigprof/collectors/stack_lender.h"
#include "sigprof/base/util.h"
#include "sigprof/base/hashmap.h"

#define STACK_AMBIGUOUS ((void *)UINTPTR_MAX)

/* What a thread's current hit brought: its key's stack and its copy's, ids + 1 (0: not seen). */
struct stack_join {
	uint32_t key_stack, copy_stack;
};

struct stack_lender {
	struct u64_map joins;    /* tid -> struct stack_join, since the thread's last hit ended */
	struct u64_map whole_of; /* key stack id + 1 -> copy's stack id + 1, or STACK_AMBIGUOUS */
	uint64_t joined;         /* keys whose hit had a copy of its own */
};

struct stack_lender *stack_lender_new(void)
{
	return xcalloc(1, sizeof(struct stack_lender));
}

void stack_lender_free(struct stack_lender *l)
{
	if (!l)
		return;
	u64_map_free_values(&l->joins, free);
	u64_map_free(&l->whole_of);
	free(l);
}

/* A key (copy false) or its copy (true) of thread tid: the second of the two teaches whole_of. */
static void join_stack(struct stack_lender *l, uint32_t tid, uint32_t stack, bool copy)
{
	struct stack_join *j = u64_map_get(&l->joins, tid);
	if (!j) {
		j = xcalloc(1, sizeof(*j));
		u64_map_put(&l->joins, tid, j);
	}
	if (copy)
		j->copy_stack = stack + 1;
	else
		j->key_stack = stack + 1;
	if (!j->copy_stack || !j->key_stack)
		return;
	l->joined++;
	void *known = u64_map_get(&l->whole_of, j->key_stack);
	void *learned = (void *)(uintptr_t)j->copy_stack;
	if (!known)
		u64_map_put(&l->whole_of, j->key_stack, learned);
	else if (known != learned)
		u64_map_put(&l->whole_of, j->key_stack, STACK_AMBIGUOUS);
	j->key_stack = j->copy_stack = 0;
}

void stack_lend_copy(struct stack_lender *l, uint32_t tid, uint32_t stack)
{
	join_stack(l, tid, stack, true);
}

uint32_t stack_lend_key(struct stack_lender *l, uint32_t tid, uint32_t stack)
{
	const struct stack_join *j = u64_map_get(&l->joins, tid);
	uint32_t own_copy = j ? j->copy_stack : 0;
	join_stack(l, tid, stack, false);
	return own_copy ? own_copy - 1 : stack_lent(l, stack);
}

void stack_lend_end(struct stack_lender *l, uint32_t tid)
{
	free(u64_map_remove(&l->joins, tid));
}

uint32_t stack_lent(void *lender, uint32_t stack)
{
	const struct stack_lender *l = lender;
	void *v = u64_map_get(&l->whole_of, (uint64_t)stack + 1);
	return v && v != STACK_AMBIGUOUS ? (uint32_t)((uintptr_t)v - 1) : stack;
}

void stack_lender_stats(const struct stack_lender *l, uint64_t *joined, size_t *learned)
{
	*joined = l->joined;
	*learned = l->whole_of.count;
}
