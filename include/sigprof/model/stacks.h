/*
 * stacks.h: interned frames and stacks, the report's unit of aggregation.
 *
 * A frame is a function in a dso ((dso, symbol)), or an address in a dso
 * when no symbol covers it.  A stack is a collector's list of frame ids,
 * leaf first.  Both are interned: the millions of samples of a recording
 * become a few thousand distinct stacks, each with a count, so the report's
 * memory grows with distinct stacks, not with the file.  Each frame carries
 * its path (a rule match, or -1) and each stack the path of its frame
 * nearest the leaf.
 *
 * With --srcline (stack_table_enable_srcline()) a frame's identity also
 * holds its source line, and an address inside inlined code gives a chain
 * of frames: the innermost inlined function, each function it was inlined
 * into, and the function compiled out of line.  frame_for_address() then
 * returns a chain link, a frame that stands for the whole chain and never
 * appears in a stack itself: stack_add() replaces it with the frames of
 * the chain, so every output (text, JSON, folded, the functions table, path
 * rules) sees inlined calls as frames of their own, and an inline function
 * inlined at several call sites is one frame per line, not one per site.
 */
#ifndef SIGPROF_STACKS_H
#define SIGPROF_STACKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sigprof/model/paths.h"
#include "sigprof/symbolize/symbolize.h"
#include "sigprof/base/string_pool.h"

struct frame {
	const char *sym;  /* function name, or NULL */
	const char *dso;  /* dso name: a path, [kernel], [vdso], [unknown] */
	uint64_t addr;    /* offset in the dso when sym is NULL, else the symbol's start */
	bool kernel;
	bool synthetic;   /* made by the report, not found at an address: [signal SIGPROF], [unwind: ...] */
	int path;         /* the rule this frame matches, or -1 */
	/* --srcline only (stack_table_enable_srcline); else NULL, 0, false, 0, 0 */
	const char *srcfile;   /* the source file of the frame's line, as DWARF names it, or NULL */
	unsigned line;         /* that line, 0 when unknown */
	bool inlined;          /* an inlined copy of sym: in a stack, the frame after it is where it was inlined */
	/* a chain link (frame_for_address() of inlined code), which stack_add() replaces; never in a stack */
	uint32_t inlined_into; /* id + 1 of the next link or frame of the chain, outward; 0: not a link */
	uint32_t shown_as;     /* id + 1 of the frame the stack shows for this link */
};

struct stack {
	uint32_t collector; /* index in the recording's collector list */
	uint32_t nframes;
	size_t frames_at;   /* its frame ids, leaf first, start here in the table's frame_arena */
	int path;
	uint64_t count;     /* samples */
	uint64_t weight;    /* sum of sample periods (ns of CPU for cpu-clock) */
	int counted_failure; /* why the DWARF unwinds of the samples counted on it stopped (an enum unwind_failure;
				UNWIND_COMPLETE: whole, or not known) */
};

struct stack_table {
	struct frame *frames;
	size_t nframes, frames_cap;
	struct stack *stacks;
	size_t nstacks, stacks_cap;
	/* interning indexes (open addressing; slot value = id + 1) */
	uint32_t *frame_slots;
	size_t frame_nslots;
	uint32_t *stack_slots;
	size_t stack_nslots;
	/* (dso, address) -> frame id, so each address is symbolized once */
	struct addr_cache_entry *addr_cache;
	size_t addr_nslots, addr_count;
	uint32_t *frame_arena; /* frame id lists of all stacks */
	size_t arena_used, arena_cap;
	const struct path_rules *rules;
	struct string_pool *strings;
	struct source_lines *source_lines; /* --srcline: DWARF of each dso; NULL without */
	uint32_t *expanded;                /* a stack with its inlined frames, being interned */
	size_t expanded_cap;
};

static inline const uint32_t *stack_frames(const struct stack_table *t, const struct stack *s)
{
	return t->frame_arena + s->frames_at;
}

void stack_table_init(struct stack_table *t, const struct path_rules *rules);
void stack_table_free(struct stack_table *t);
/* Give frames source lines and inlined frames from now on (--srcline). */
void stack_table_enable_srcline(struct stack_table *t);
/* The frame for addr in dso (addr in the dso's own address space); symbolizes on first sight. */
uint32_t frame_for_address(struct stack_table *t, struct dso *dso, uint64_t addr);
/* A frame that has no dso: "[unknown]" at a raw address. */
uint32_t frame_unknown(struct stack_table *t, uint64_t addr, bool kernel);
/*
 * A frame the report makes up to say something about the stack: a signal
 * frame ("[signal SIGPROF]", dso "[signal]"), why unwinding stopped
 * ("[unwind: ...]", dso "[unwind]").  Path rules see its name like any other.
 */
uint32_t frame_synthetic(struct stack_table *t, const char *name, const char *dso);
/* Whether f is the "[unwind: ...]" frame that ends a stack which stopped early. */
bool frame_is_unwind_stop(const struct frame *f);
/* The index of stack s's first frame that is not the kernel's (s->nframes when none). */
uint32_t stack_first_user_frame(const struct stack_table *t, const struct stack *s);
/* Whether stack id ends in such a frame. */
bool stack_is_cut(const struct stack_table *t, uint32_t id);
/* Intern a stack and add count/weight to it; returns its id.  Its path comes from its frames. */
uint32_t stack_add(struct stack_table *t, uint32_t collector, const uint32_t *frames, uint32_t nframes,
		   uint64_t count, uint64_t weight);
/*
 * The path frames[0..n) give: that of the matching frame nearest the leaf,
 * up to the first signal frame; PATH_OTHER when none matches.
 */
int stack_path_of_frames(const struct stack_table *t, const uint32_t *frames, uint32_t n);
/* The same with the path given (a collector that knows it from its event); path -1: from the frames. */
uint32_t stack_add_on_path(struct stack_table *t, uint32_t collector, const uint32_t *frames, uint32_t nframes,
			   uint64_t count, uint64_t weight, int path);

#endif
