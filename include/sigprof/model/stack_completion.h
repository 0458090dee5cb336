/*
 * stack_completion.h: stacks cut where a short copy of the user stack ran
 * out, completed from the whole stack of a long copy that goes through the
 * same frames.
 *
 * The cpu collector copies a short part of the user stack at every sample
 * and a long one at a lower rate (collectors/cpu.c); the futex, sched and
 * signal collectors a short key at every hit and long copies while the
 * rate allows, lent to the keys of the same call site (stack_lender.h),
 * whose keys no copy was lent to, or a copy that ran out itself, are
 * completed here.  Every collector's whole copies teach every other's:
 * the callers of a call path are the thread's, whichever event copied them.  A short copy's
 * unwind that stops at the copy's end holds the leaf and the callers the
 * copy reached; a long copy's whole stack that holds the same callers, in
 * the same order, goes on with the frames the short one lacks.  The window
 * matched is every user frame the short unwind reached but its leaf (the
 * function sampled, which the long copies need not have been sampled in),
 * or the leaf alone when the unwind reached nothing past it.  Where the
 * long copies that hold the window go on in two ways (two callers of the
 * same frames), the stack is not completed: it stays cut.
 *
 * Frames are interned functions (stacks.h), so the window matches
 * functions, not return addresses: a call path that no long copy sampled,
 * whose window is a sampled path's and whose outer frames differ, is
 * completed as that path.  Uniqueness over every long copy is the guard;
 * the rarer a path, the likelier it is to be missed by the long copies.
 */
#ifndef SIGPROF_STACK_COMPLETION_H
#define SIGPROF_STACK_COMPLETION_H

#include <stdint.h>

#include "sigprof/model/stacks.h"

struct stack_completion;

struct stack_completion *stack_completion_new(void);
void stack_completion_free(struct stack_completion *c);
/* A long copy's stack in t: when whole (not cut), its frames may complete others.  Each stack once. */
void stack_completion_learn(struct stack_completion *c, const struct stack_table *t, uint32_t stack);
/*
 * Stack `stack` of t, cut where its copy ran out ("[unwind: ...]" last),
 * completed: its frames without the unwind frame, then those of the one
 * way the learned stacks go on past its window, interned in t (count 0)
 * on the path its new frames give, or on its own path where that is not
 * what its frames gave (its collector gave it from the event: a futex
 * entry's op).  Returns `stack` itself
 * when no learned stack holds the window or they go on in more than one
 * way.  The same stack gives the same answer every time.
 */
uint32_t stack_completion_complete(struct stack_completion *c, struct stack_table *t, uint32_t stack);

#endif
