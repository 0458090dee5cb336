/*
 * unwind_memo.c: walks remembered by what they read (unwind_internal.h).
 *
 * A walk's result rests on nothing but the sample's registers it read, the
 * bytes of the stack copy it read, and the files the process table maps
 * (read through the module views).  Samples of one call path repeat all
 * three: a thread in the same system call from the same place has the same
 * IP and SP, and its stack holds the same return addresses and saved
 * registers at the same offsets.  On stress-ng --timer's cpu recording
 * (table 1 of make bench) 11 264 samples had 199 distinct IP and SP.
 *
 * Each walk logs those reads (memo_log_*, from the accessors); its result
 * is kept in a set-associative table indexed by process, IP, SP, the copy's
 * length, the size asked for and the register mask, with the process
 * table's generation (any mapping added or removed since makes it a miss).
 * A later sample with the same index takes the result only when every
 * logged register and stack byte is the same in it: then the walk would
 * read the same values at every step and come to the same frames.  A walk
 * that read more than the log holds is not kept.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "sigprof/base/hashmap.h"
#include "sigprof/base/util.h"
#include "unwind_internal.h"

/* 2-way sets: two call paths that share an IP and SP (one function called from two places) both stay. */
#define MEMO_SETS 2048
#define MEMO_WAYS 2

struct memo_entry {
	bool used;
	uint64_t last_use;
	struct memo_index index;
	uint64_t generation;
	uint32_t regs_read;
	uint64_t reg_values[UNW_REGISTER_COUNT];
	uint32_t nreads, nbytes;
	struct memo_read *reads;
	unsigned char *bytes;
	size_t nframes;
	struct unwind_frame *frames;
	enum unwind_failure failure;
	char reason[sizeof(((struct unwind_result *)0)->reason)];
};

struct unwind_memo {
	struct memo_entry entries[MEMO_SETS * MEMO_WAYS];
	struct memo_log log;
	uint64_t clock;
	uint64_t hits, misses;
};

struct unwind_memo *unwind_memo_new(void)
{
	return xcalloc(1, sizeof(struct unwind_memo));
}

static void entry_clear(struct memo_entry *e)
{
	free(e->reads);
	free(e->bytes);
	free(e->frames);
	memset(e, 0, sizeof(*e));
}

void unwind_memo_free(struct unwind_memo *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < MEMO_SETS * MEMO_WAYS; i++)
		entry_clear(&m->entries[i]);
	free(m);
}

static bool same_index(const struct memo_index *a, const struct memo_index *b)
{
	return a->pid == b->pid && a->ip == b->ip && a->sp == b->sp && a->stack_bytes == b->stack_bytes &&
	       a->stack_size == b->stack_size && a->regs_mask == b->regs_mask;
}

static struct memo_entry *set_of(struct unwind_memo *m, const struct memo_index *x)
{
	uint64_t h = hash_u64(x->ip ^ hash_u64(x->sp ^ hash_u64(x->pid ^ (x->stack_bytes << 32) ^ x->regs_mask)));
	return &m->entries[(h & (MEMO_SETS - 1)) * MEMO_WAYS];
}

/* Whether the entry's logged reads are what this sample holds. */
static bool reads_match(const struct memo_entry *e, const uint64_t *regs, const unsigned char *stack)
{
	for (uint32_t r = 0; r < UNW_REGISTER_COUNT; r++)
		if ((e->regs_read & (1u << r)) && regs[r] != e->reg_values[r])
			return false;
	const unsigned char *b = e->bytes;
	for (uint32_t i = 0; i < e->nreads; i++) {
		if (memcmp(stack + e->reads[i].offset, b, e->reads[i].len) != 0)
			return false;
		b += e->reads[i].len;
	}
	return true;
}

bool unwind_memo_find(struct unwind_memo *m, const struct memo_index *x, uint64_t generation, const uint64_t *regs,
		      const unsigned char *stack, struct unwind_result *out)
{
	struct memo_entry *set = set_of(m, x);
	for (size_t w = 0; w < MEMO_WAYS; w++) {
		struct memo_entry *e = &set[w];
		if (!e->used || e->generation != generation || !same_index(&e->index, x) || !reads_match(e, regs, stack))
			continue;
		memcpy(out->frames, e->frames, e->nframes * sizeof(*e->frames));
		out->nframes = e->nframes;
		out->failure = e->failure;
		memcpy(out->reason, e->reason, sizeof(out->reason));
		e->last_use = ++m->clock;
		m->hits++;
		return true;
	}
	m->misses++;
	return false;
}

struct memo_log *unwind_memo_log(struct unwind_memo *m)
{
	memset(&m->log, 0, offsetof(struct memo_log, reads));
	return &m->log;
}

void memo_log_stack(struct memo_log *log, uint64_t offset, const void *bytes, size_t len)
{
	if (log->overflow)
		return;
	if (log->nreads == MEMO_MAX_READS || len > MEMO_MAX_BYTES - log->nbytes) {
		log->overflow = true;
		return;
	}
	log->reads[log->nreads].offset = (uint32_t)offset;
	log->reads[log->nreads].len = (uint32_t)len;
	log->nreads++;
	memcpy(log->bytes + log->nbytes, bytes, len);
	log->nbytes += (uint32_t)len;
}

void unwind_memo_keep(struct unwind_memo *m, const struct memo_index *x, uint64_t generation, const uint64_t *regs,
		      const struct unwind_result *r)
{
	const struct memo_log *log = &m->log;
	if (log->overflow)
		return;
	struct memo_entry *set = set_of(m, x), *e = &set[0];
	for (size_t w = 1; w < MEMO_WAYS; w++)
		if (!set[w].used || (e->used && set[w].last_use < e->last_use))
			e = &set[w];
	entry_clear(e);
	e->used = true;
	e->last_use = ++m->clock;
	e->index = *x;
	e->generation = generation;
	e->regs_read = log->regs_read;
	for (uint32_t reg = 0; reg < UNW_REGISTER_COUNT; reg++)
		if (log->regs_read & (1u << reg))
			e->reg_values[reg] = regs[reg];
	e->nreads = log->nreads;
	e->nbytes = log->nbytes;
	e->reads = xmalloc((log->nreads ? log->nreads : 1) * sizeof(*e->reads));
	memcpy(e->reads, log->reads, log->nreads * sizeof(*e->reads));
	e->bytes = xmalloc(log->nbytes ? log->nbytes : 1);
	memcpy(e->bytes, log->bytes, log->nbytes);
	e->nframes = r->nframes;
	e->frames = xmalloc((r->nframes ? r->nframes : 1) * sizeof(*e->frames));
	memcpy(e->frames, r->frames, r->nframes * sizeof(*r->frames));
	e->failure = r->failure;
	memcpy(e->reason, r->reason, sizeof(e->reason));
}

void unwind_memo_stats(const struct unwind_memo *m, uint64_t *hits, uint64_t *misses)
{
	*hits = m ? m->hits : 0;
	*misses = m ? m->misses : 0;
}
