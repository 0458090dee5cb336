/*
 * stacks.c: frame and stack interning (stacks.h).
 *
 * Three open-addressing tables: (dso, address) -> frame, frame key ->
 * frame, stack key -> stack.  The first is a cache in front of symbol
 * lookup; it is what keeps a report's cost per sample to a few hash probes.
 * Frame id lists of all stacks live in one arena, addressed by offset.
 * With --srcline a (dso, address) in inlined code resolves to a chain
 * link (stacks.h), which stack_add expands into the chain's frames.
 */
#include <stdlib.h>
#include <string.h>

#include "sigprof/model/stacks.h"
#include "sigprof/base/util.h"
#include "sigprof/base/string_pool.h"
#include "sigprof/base/hashmap.h"

struct addr_cache_entry {
	const struct dso *dso; /* NULL: empty slot */
	uint64_t addr;
	uint32_t frame;
};

void stack_table_init(struct stack_table *t, const struct path_rules *rules)
{
	memset(t, 0, sizeof(*t));
	t->rules = rules;
	t->strings = string_pool_new();
	t->frame_nslots = t->stack_nslots = t->addr_nslots = 1024;
	t->frame_slots = xcalloc(t->frame_nslots, sizeof(uint32_t));
	t->stack_slots = xcalloc(t->stack_nslots, sizeof(uint32_t));
	t->addr_cache = xcalloc(t->addr_nslots, sizeof(*t->addr_cache));
}

void stack_table_free(struct stack_table *t)
{
	free(t->frames);
	free(t->stacks);
	free(t->frame_slots);
	free(t->stack_slots);
	free(t->addr_cache);
	free(t->frame_arena);
	free(t->expanded);
	source_lines_free(t->source_lines);
	string_pool_free(t->strings);
	memset(t, 0, sizeof(*t));
}

static uint64_t frame_hash(const struct frame *f)
{
	uint64_t h = hash_u64((uintptr_t)f->sym ^ ((uintptr_t)f->dso << 1));
	if (f->srcfile || f->inlined_into)
		h = hash_u64(h ^ (uintptr_t)f->srcfile ^ ((uint64_t)f->line << 32) ^ f->inlined_into ^
			     ((uint64_t)f->inlined << 31));
	return f->sym ? h : hash_u64(h ^ f->addr);
}

static bool same_source(const struct frame *a, const struct frame *b)
{
	return a->srcfile == b->srcfile && a->line == b->line && a->inlined == b->inlined &&
	       a->inlined_into == b->inlined_into;
}

static bool frame_equal(const struct frame *a, const struct frame *b)
{
	return a->sym == b->sym && a->dso == b->dso && a->kernel == b->kernel && (a->sym || a->addr == b->addr) &&
	       same_source(a, b);
}

/* Rehash a table of ids (value = id + 1) into twice the slots. */
static void rehash_ids(uint32_t **slots, size_t *nslots, uint64_t (*hash_of)(void *ctx, uint32_t id), void *ctx)
{
	size_t n = *nslots * 2;
	uint32_t *fresh = xcalloc(n, sizeof(uint32_t));
	for (size_t i = 0; i < *nslots; i++) {
		uint32_t v = (*slots)[i];
		if (!v)
			continue;
		size_t j = hash_of(ctx, v - 1) & (n - 1);
		while (fresh[j])
			j = (j + 1) & (n - 1);
		fresh[j] = v;
	}
	free(*slots);
	*slots = fresh;
	*nslots = n;
}

static uint64_t frame_hash_of(void *ctx, uint32_t id)
{
	return frame_hash(&((struct stack_table *)ctx)->frames[id]);
}

static uint32_t frame_intern(struct stack_table *t, const struct frame *f)
{
	size_t mask = t->frame_nslots - 1;
	size_t i = frame_hash(f) & mask;
	for (; t->frame_slots[i]; i = (i + 1) & mask)
		if (frame_equal(&t->frames[t->frame_slots[i] - 1], f))
			return t->frame_slots[i] - 1;
	GROW(t->frames, t->frames_cap, t->nframes + 1);
	uint32_t id = (uint32_t)t->nframes++;
	t->frames[id] = *f;
	t->frames[id].path = path_rules_match(t->rules, f->sym);
	t->frame_slots[i] = id + 1;
	if (t->nframes * 2 > t->frame_nslots)
		rehash_ids(&t->frame_slots, &t->frame_nslots, frame_hash_of, t);
	return id;
}

static void addr_cache_grow(struct stack_table *t)
{
	size_t n = t->addr_nslots * 2;
	struct addr_cache_entry *fresh = xcalloc(n, sizeof(*fresh));
	for (size_t i = 0; i < t->addr_nslots; i++) {
		struct addr_cache_entry *e = &t->addr_cache[i];
		if (!e->dso)
			continue;
		size_t j = hash_u64(e->addr ^ (uintptr_t)e->dso) & (n - 1);
		while (fresh[j].dso)
			j = (j + 1) & (n - 1);
		fresh[j] = *e;
	}
	free(t->addr_cache);
	t->addr_cache = fresh;
	t->addr_nslots = n;
}

void stack_table_enable_srcline(struct stack_table *t)
{
	if (!t->source_lines)
		t->source_lines = source_lines_new();
}

static void set_source(struct stack_table *t, struct frame *f, const struct source_frame *level)
{
	f->srcfile = level->file ? string_intern(t->strings, level->file) : NULL;
	f->line = level->line;
	f->inlined = level->inlined;
}

/* More levels than any compiler nests inlined calls; deeper ones are cut off at the innermost. */
#define MAX_INLINE_DEPTH 64

/*
 * The frames of addr with --srcline, interned from the outside in: the
 * function compiled out of line keeps the symbol table's name (as it has
 * without --srcline), each inlined level DWARF's.  Each inlined level is a
 * frame (what stacks show) and a chain link to the levels outside it
 * (which frame_for_address() hands out).  Returns the innermost link, or
 * the frame itself when nothing is inlined at addr.
 */
static uint32_t frame_with_source_lines(struct stack_table *t, struct dso *dso, uint64_t addr,
					const struct frame *symbol_frame)
{
	struct source_frame levels[MAX_INLINE_DEPTH];
	size_t n = source_lines_lookup(t->source_lines, dso, addr, levels, ARRAY_SIZE(levels));
	if (n == 0)
		return frame_intern(t, symbol_frame);

	struct frame outer = *symbol_frame;
	if (!outer.sym && levels[n - 1].function)
		outer.sym = string_intern(t->strings, levels[n - 1].function);
	set_source(t, &outer, &levels[n - 1]);
	outer.inlined = false;
	uint32_t chain = frame_intern(t, &outer);
	for (size_t level = n - 1; level-- > 0;) {
		struct frame inlined = *symbol_frame;
		inlined.sym = levels[level].function ? string_intern(t->strings, levels[level].function) : NULL;
		set_source(t, &inlined, &levels[level]);
		uint32_t shown = frame_intern(t, &inlined);
		inlined.inlined_into = chain + 1;
		inlined.shown_as = shown + 1;
		chain = frame_intern(t, &inlined);
	}
	return chain;
}

/* The frames a stack shows for the frame or chain link id, innermost first, into out unless NULL; returns how many. */
static uint32_t shown_frames(const struct stack_table *t, uint32_t id, uint32_t *out)
{
	for (uint32_t n = 0;; n++) {
		const struct frame *f = &t->frames[id];
		if (out)
			out[n] = f->shown_as ? f->shown_as - 1 : id;
		if (!f->inlined_into)
			return n + 1;
		id = f->inlined_into - 1;
	}
}

/* With --srcline: frames with each chain link replaced by its chain's frames; frames itself when it has none. */
static const uint32_t *with_inlined_callers(struct stack_table *t, const uint32_t *frames, uint32_t *nframes)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < *nframes; i++)
		n += shown_frames(t, frames[i], NULL);
	if (n == *nframes)
		return frames; /* no chain link: nothing inlined */
	GROW(t->expanded, t->expanded_cap, n);
	n = 0;
	for (uint32_t i = 0; i < *nframes; i++)
		n += shown_frames(t, frames[i], t->expanded + n);
	*nframes = n;
	return t->expanded;
}

uint32_t frame_for_address(struct stack_table *t, struct dso *dso, uint64_t addr)
{
	size_t mask = t->addr_nslots - 1;
	size_t i = hash_u64(addr ^ (uintptr_t)dso) & mask;
	for (; t->addr_cache[i].dso; i = (i + 1) & mask)
		if (t->addr_cache[i].dso == dso && t->addr_cache[i].addr == addr)
			return t->addr_cache[i].frame;

	struct frame f = { .dso = dso->name, .kernel = dso->is_kernel, .addr = addr };
	struct symtab *tab = dso_symtab(dso);
	const struct sym *s = tab ? symtab_lookup(tab, SYM_FUNC, addr) : NULL;
	if (s) {
		f.sym = string_intern(t->strings, symtab_display_name(tab, SYM_FUNC, s));
		f.addr = s->start;
	}
	uint32_t id = t->source_lines && !dso->is_kernel ? frame_with_source_lines(t, dso, addr, &f)
							 : frame_intern(t, &f);
	t->addr_cache[i] = (struct addr_cache_entry){ dso, addr, id };
	if (++t->addr_count * 2 > t->addr_nslots)
		addr_cache_grow(t);
	return id;
}

uint32_t frame_unknown(struct stack_table *t, uint64_t addr, bool kernel)
{
	struct frame f = { .dso = string_intern(t->strings, "[unknown]"), .addr = addr, .kernel = kernel };
	return frame_intern(t, &f);
}

uint32_t frame_synthetic(struct stack_table *t, const char *name, const char *dso)
{
	struct frame f = { .sym = string_intern(t->strings, name), .dso = string_intern(t->strings, dso),
			   .synthetic = true };
	return frame_intern(t, &f);
}

bool frame_is_unwind_stop(const struct frame *f)
{
	return f->synthetic && f->dso && strcmp(f->dso, "[unwind]") == 0;
}

bool stack_is_cut(const struct stack_table *t, uint32_t id)
{
	const struct stack *s = &t->stacks[id];
	return s->nframes && frame_is_unwind_stop(&t->frames[stack_frames(t, s)[s->nframes - 1]]);
}

static uint64_t stack_hash(uint32_t collector, const uint32_t *frames, uint32_t n)
{
	return hash_bytes(frames, n * sizeof(uint32_t), collector);
}

static uint64_t stack_hash_of(void *ctx, uint32_t id)
{
	struct stack_table *t = ctx;
	const struct stack *s = &t->stacks[id];
	return stack_hash(s->collector, stack_frames(t, s), s->nframes);
}

/*
 * Whether frames[i] is a signal frame: the synthetic one an unwound stack
 * shows ("[signal SIGUSR1]", "[signal SIGRTMIN] (stack from delivery)"),
 * or, in a frame-pointer walk, libc's trampoline as a handler's return
 * address (a user frame after another: not the sampled IP).
 */
static bool signal_frame_at(const struct stack_table *t, const uint32_t *frames, uint32_t i)
{
	const struct frame *f = &t->frames[frames[i]];
	if (f->synthetic)
		return strcmp(f->dso, "[signal]") == 0;
	return i > 0 && !f->kernel && !t->frames[frames[i - 1]].kernel && f->sym && strcmp(f->sym, "__restore_rt") == 0;
}

/*
 * The path of the matching frame nearest the leaf, up to the first signal
 * frame: past it is the code the signal interrupted, not what a handler's
 * sample was doing (a handler that interrupted kill() or a futex wait is
 * neither signal-generate nor futex-wait, nor sigreturn: docs/paths.md).
 */
int stack_path_of_frames(const struct stack_table *t, const uint32_t *frames, uint32_t n)
{
	for (uint32_t i = 0; i < n && !signal_frame_at(t, frames, i); i++)
		if (t->frames[frames[i]].path >= 0)
			return t->frames[frames[i]].path;
	return PATH_OTHER;
}

uint32_t stack_first_user_frame(const struct stack_table *t, const struct stack *s)
{
	const uint32_t *f = stack_frames(t, s);
	uint32_t i = 0;
	while (i < s->nframes && t->frames[f[i]].kernel)
		i++;
	return i;
}

uint32_t stack_add(struct stack_table *t, uint32_t collector, const uint32_t *frames, uint32_t nframes,
		   uint64_t count, uint64_t weight)
{
	return stack_add_on_path(t, collector, frames, nframes, count, weight, -1);
}

uint32_t stack_add_on_path(struct stack_table *t, uint32_t collector, const uint32_t *frames, uint32_t nframes,
			   uint64_t count, uint64_t weight, int path)
{
	if (t->source_lines)
		frames = with_inlined_callers(t, frames, &nframes);
	if (path < 0 || path >= PATH_COUNT)
		path = stack_path_of_frames(t, frames, nframes);
	size_t mask = t->stack_nslots - 1;
	size_t i = stack_hash(collector, frames, nframes) & mask;
	for (; t->stack_slots[i]; i = (i + 1) & mask) {
		struct stack *s = &t->stacks[t->stack_slots[i] - 1];
		if (s->collector == collector && s->nframes == nframes && s->path == path &&
		    (!nframes || memcmp(stack_frames(t, s), frames, nframes * sizeof(uint32_t)) == 0)) {
			s->count += count;
			s->weight += weight;
			return t->stack_slots[i] - 1;
		}
	}
	GROW(t->frame_arena, t->arena_cap, t->arena_used + nframes + 1);
	if (nframes)
		memcpy(t->frame_arena + t->arena_used, frames, nframes * sizeof(uint32_t));
	GROW(t->stacks, t->stacks_cap, t->nstacks + 1);
	uint32_t id = (uint32_t)t->nstacks++;
	t->stacks[id] = (struct stack){ .collector = collector, .nframes = nframes, .frames_at = t->arena_used,
					.path = path, .count = count, .weight = weight };
	t->arena_used += nframes;
	t->stack_slots[i] = id + 1;
	if (t->nstacks * 2 > t->stack_nslots)
		rehash_ids(&t->stack_slots, &t->stack_nslots, stack_hash_of, t);
	return id;
}
