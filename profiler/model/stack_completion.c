/*
 * stack_completion.c: cut stacks completed from long copies through the
 * same frames (include/sigprof/model/stack_completion.h).
 */
#include <stdlib.h>
#include <string.h>

#include "sigprof/model/stack_completion.h"
#include "sigprof/base/hashmap.h"
#include "sigprof/base/util.h"

/* A learned stack that holds a frame: the stack, the frame's index, the index of its first user frame. */
struct place {
	uint32_t stack, at, first_user;
};

struct places {
	struct place *v;
	size_t n, cap;
};

struct stack_completion {
	struct u64_map by_frame;   /* frame id -> struct places: where learned stacks hold it */
	struct u64_map learned;    /* stack id -> (void *)1: learned once */
	struct u64_map by_user;    /* hash of a learned stack's user frames -> its id + 1: one place per user part */
	struct u64_map completed;  /* cut stack id -> what it completes as, id + 1 */
	uint32_t *frames;          /* a completed stack being built */
	size_t frames_cap;
};

struct stack_completion *stack_completion_new(void)
{
	return xcalloc(1, sizeof(struct stack_completion));
}

static void free_places(void *value)
{
	struct places *p = value;
	free(p->v);
	free(p);
}

void stack_completion_free(struct stack_completion *c)
{
	if (!c)
		return;
	u64_map_free_values(&c->by_frame, free_places);
	u64_map_free(&c->learned);
	u64_map_free(&c->by_user);
	u64_map_free(&c->completed);
	free(c->frames);
	free(c);
}

/* Whether learned stacks a and b have the same user frames (from their first user frames on). */
static bool same_user_frames(const struct stack_table *t, uint32_t a, uint32_t b)
{
	const struct stack *sa = &t->stacks[a], *sb = &t->stacks[b];
	uint32_t ua = stack_first_user_frame(t, sa), ub = stack_first_user_frame(t, sb);
	return sa->nframes - ua == sb->nframes - ub &&
	       memcmp(stack_frames(t, sa) + ua, stack_frames(t, sb) + ub, (sa->nframes - ua) * sizeof(uint32_t)) == 0;
}

void stack_completion_learn(struct stack_completion *c, const struct stack_table *t, uint32_t stack)
{
	if (stack >= t->nstacks || u64_map_get(&c->learned, stack) || stack_is_cut(t, stack))
		return;
	u64_map_put(&c->learned, stack, (void *)1);
	const struct stack *s = &t->stacks[stack];
	uint32_t first = stack_first_user_frame(t, s);
	if (first + 1 >= s->nframes)
		return; /* no user frame with a caller: nothing to go on with */
	const uint32_t *f = stack_frames(t, s);
	/* stacks that differ only in their kernel frames hold the same windows: the first stands for them */
	uint64_t h = hash_bytes(f + first, (s->nframes - first) * sizeof(*f), s->collector);
	uintptr_t seen = (uintptr_t)u64_map_get(&c->by_user, h);
	if (seen && same_user_frames(t, (uint32_t)(seen - 1), stack))
		return;
	if (!seen)
		u64_map_put(&c->by_user, h, (void *)(uintptr_t)(stack + 1));
	for (uint32_t i = first; i + 1 < s->nframes; i++) {
		struct places *p = u64_map_get(&c->by_frame, f[i]);
		if (!p) {
			p = xcalloc(1, sizeof(*p));
			u64_map_put(&c->by_frame, f[i], p);
		}
		GROW(p->v, p->cap, p->n + 1);
		p->v[p->n++] = (struct place){ .stack = stack, .at = i, .first_user = first };
	}
}

/*
 * The one place whose stack holds window[0..w) ending at its frame and
 * goes on past it in one way over every match; NULL when none matches or
 * two go on differently.
 */
static const struct place *only_way_on(const struct stack_completion *c, const struct stack_table *t,
				       const uint32_t *window, uint32_t w)
{
	const struct places *p = u64_map_get(&c->by_frame, window[w - 1]);
	const struct place *found = NULL;
	const uint32_t *found_rest = NULL;
	uint32_t found_n = 0;
	for (size_t k = 0; p && k < p->n; k++) {
		const struct place *pl = &p->v[k];
		const struct stack *s = &t->stacks[pl->stack];
		if (pl->at + 1 - pl->first_user < w)
			continue;
		const uint32_t *f = stack_frames(t, s);
		if (memcmp(f + pl->at + 1 - w, window, w * sizeof(*window)) != 0)
			continue;
		const uint32_t *rest = f + pl->at + 1;
		uint32_t rest_n = s->nframes - pl->at - 1;
		if (!found) {
			found = pl;
			found_rest = rest;
			found_n = rest_n;
		} else if (rest_n != found_n || memcmp(rest, found_rest, rest_n * sizeof(*rest)) != 0) {
			return NULL;
		}
	}
	return found;
}

uint32_t stack_completion_complete(struct stack_completion *c, struct stack_table *t, uint32_t stack)
{
	if (stack >= t->nstacks || !stack_is_cut(t, stack))
		return stack;
	uintptr_t known = (uintptr_t)u64_map_get(&c->completed, stack);
	if (known)
		return (uint32_t)(known - 1);
	uint32_t result = stack;
	const struct stack *s = &t->stacks[stack];
	uint32_t first = stack_first_user_frame(t, s), end = s->nframes - 1; /* frames[end]: the unwind frame */
	if (first < end) {
		uint32_t from = end - first >= 2 ? first + 1 : first; /* past the leaf, unless it is all there is */
		const struct place *pl = only_way_on(c, t, stack_frames(t, s) + from, end - from);
		if (pl) {
			/* a path its event gave (a futex entry's op) stays; one its frames gave, the completed frames give */
			int path = s->path == stack_path_of_frames(t, stack_frames(t, s), s->nframes) ? -1 : s->path;
			const struct stack *l = &t->stacks[pl->stack];
			uint32_t rest = l->nframes - pl->at - 1;
			GROW(c->frames, c->frames_cap, end + rest);
			memcpy(c->frames, stack_frames(t, s), end * sizeof(*c->frames));
			memcpy(c->frames + end, stack_frames(t, l) + pl->at + 1, rest * sizeof(*c->frames));
			/* s and l point into the table, which interning may move: nothing reads them after */
			result = stack_add_on_path(t, s->collector, c->frames, end + rest, 0, 0, path);
		}
	}
	u64_map_put(&c->completed, stack, (void *)(uintptr_t)(result + 1));
	return result;
}
