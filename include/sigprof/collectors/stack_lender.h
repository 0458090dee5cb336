/*
 * stack_lender.h: a short key stack per hit, lent the whole stack of its
 * call site's rate-bounded copies (the futex entries', the sched
 * collector's switch-outs).
 *
 * An event that fires often takes a cheap key on every hit: the
 * frame-pointer chain, or in a program without frame pointers a DWARF
 * unwind of a short copy (KEY_STACK_USER_SIZE), enough to tell call sites
 * apart.  A sibling event on the same tracepoint copies the whole user
 * stack while the rate allows (rate_bound_add_stack_copies()).  The lender
 * joins a copy to the key of the same hit (the same thread, in either
 * order, before the hit's end) and learns that the key is that call
 * site's whole stack.  A key that copies of two stacks were joined to (two
 * callers the short copy does not tell apart) is ambiguous: it stays
 * itself.  Stacks are interned stack ids.  Fed in time order, per thread.
 */
#ifndef SIGPROF_STACK_LENDER_H
#define SIGPROF_STACK_LENDER_H

#include <stddef.h>
#include <stdint.h>

struct stack_lender;

struct stack_lender *stack_lender_new(void);
void stack_lender_free(struct stack_lender *l);
/* A copy of thread tid's user stack for its current hit, interned as stack. */
void stack_lend_copy(struct stack_lender *l, uint32_t tid, uint32_t stack);
/*
 * The key of thread tid's current hit, interned as stack.  Returns the
 * stack it counts on: its own hit's copy when that came first, else what
 * the copies of its key taught so far, else stack.
 */
uint32_t stack_lend_key(struct stack_lender *l, uint32_t tid, uint32_t stack);
/* Thread tid's hit is over (its system call returned, it ran again): its key and copy were joined or never will be. */
void stack_lend_end(struct stack_lender *l, uint32_t tid);
/* What the copies taught about a key (l is the lender: a remap for the trackers' *_remap_stacks). */
uint32_t stack_lent(void *l, uint32_t stack);
/* Keys whose hit had a copy of its own, and keys with a whole stack learned. */
void stack_lender_stats(const struct stack_lender *l, uint64_t *joined, size_t *learned);

#endif
