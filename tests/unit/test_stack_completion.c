/*
 * test_stack_completion.c: stacks cut where a short copy ran out,
 * completed from long copies through the same frames
 * (profiler/model/stack_completion.c).
 *
 * Frames are unknown addresses (frame_unknown()): user frames at 0x1000 and
 * up, kernel frames at 0xffff0000 and up; U is the "[unwind: ...]" frame
 * the loader puts at the end of a cut stack.
 */
#include <criterion/criterion.h>

#include "sigprof/model/stack_completion.h"
#include "sigprof/model/stacks.h"
#include "sigprof/base/util.h"

TestSuite(stack_completion, .timeout = 60);

struct fixture {
	struct stack_table t;
	struct stack_completion *c;
	uint32_t k, leaf, a, b, c1, c2, main, x, y, u;
};

static void setup(struct fixture *f)
{
	stack_table_init(&f->t, NULL);
	f->c = stack_completion_new();
	f->k = frame_unknown(&f->t, 0xffff0000, true);
	f->leaf = frame_unknown(&f->t, 0x1000, false);
	f->a = frame_unknown(&f->t, 0x2000, false);
	f->b = frame_unknown(&f->t, 0x3000, false);
	f->c1 = frame_unknown(&f->t, 0x4000, false);
	f->c2 = frame_unknown(&f->t, 0x4800, false);
	f->main = frame_unknown(&f->t, 0x5000, false);
	f->x = frame_unknown(&f->t, 0x6000, false);
	f->y = frame_unknown(&f->t, 0x7000, false);
	f->u = frame_synthetic(&f->t, "[unwind: stack copy ends at 2048 bytes]", "[unwind]");
}

static void teardown(struct fixture *f)
{
	stack_completion_free(f->c);
	stack_table_free(&f->t);
}

static uint32_t add(struct fixture *f, uint32_t collector, const uint32_t *frames, uint32_t n)
{
	return stack_add(&f->t, collector, frames, n, 0, 0);
}

static void learn(struct fixture *f, uint32_t collector, const uint32_t *frames, uint32_t n)
{
	stack_completion_learn(f->c, &f->t, add(f, collector, frames, n));
}

/* Whether stack id's frames are want[0..n). */
static bool frames_are(const struct fixture *f, uint32_t id, const uint32_t *want, uint32_t n)
{
	const struct stack *s = &f->t.stacks[id];
	return s->nframes == n && memcmp(stack_frames(&f->t, s), want, n * sizeof(*want)) == 0;
}

Test(stack_completion, a_cut_stack_goes_on_as_the_long_copy_through_its_callers)
{
	struct fixture f;
	setup(&f);
	/* sampled in another leaf (x), with other kernel frames (none): the window is a, b */
	learn(&f, 0, (uint32_t[]){ f.x, f.a, f.b, f.c1, f.main }, 5);
	uint32_t cut = add(&f, 0, (uint32_t[]){ f.k, f.leaf, f.a, f.b, f.u }, 5);
	uint32_t whole = stack_completion_complete(f.c, &f.t, cut);
	cr_assert_neq(whole, cut);
	cr_assert(frames_are(&f, whole, (uint32_t[]){ f.k, f.leaf, f.a, f.b, f.c1, f.main }, 6),
		  "its own kernel frames, leaf and callers, then the long copy's frames past b");
	cr_assert_not(stack_is_cut(&f.t, whole));
	cr_assert_eq(f.t.stacks[whole].count, 0, "interned with no samples: the loader moves them");
	cr_assert_eq(stack_completion_complete(f.c, &f.t, cut), whole, "the same answer again");
	teardown(&f);
}

Test(stack_completion, long_copies_that_go_on_differently_leave_it_cut)
{
	struct fixture f;
	setup(&f);
	learn(&f, 0, (uint32_t[]){ f.x, f.a, f.b, f.c1, f.main }, 5);
	learn(&f, 0, (uint32_t[]){ f.y, f.a, f.b, f.c2, f.main }, 5);
	uint32_t cut = add(&f, 0, (uint32_t[]){ f.leaf, f.a, f.b, f.u }, 4);
	cr_assert_eq(stack_completion_complete(f.c, &f.t, cut), cut, "two callers of b: no way to tell which");
	teardown(&f);
}

Test(stack_completion, long_copies_that_go_on_the_same_way_complete_it)
{
	struct fixture f;
	setup(&f);
	learn(&f, 0, (uint32_t[]){ f.x, f.a, f.b, f.c1, f.main }, 5);
	learn(&f, 0, (uint32_t[]){ f.y, f.x, f.a, f.b, f.c1, f.main }, 6);
	learn(&f, 0, (uint32_t[]){ f.k, f.x, f.a, f.b, f.c1, f.main }, 6); /* only its kernel frames differ */
	uint32_t cut = add(&f, 0, (uint32_t[]){ f.leaf, f.a, f.b, f.u }, 4);
	uint32_t whole = stack_completion_complete(f.c, &f.t, cut);
	cr_assert(frames_are(&f, whole, (uint32_t[]){ f.leaf, f.a, f.b, f.c1, f.main }, 5));
	teardown(&f);
}

Test(stack_completion, every_caller_of_the_window_must_match)
{
	struct fixture f;
	setup(&f);
	learn(&f, 0, (uint32_t[]){ f.x, f.a, f.b, f.c1, f.main }, 5);
	uint32_t cut = add(&f, 0, (uint32_t[]){ f.leaf, f.y, f.b, f.u }, 4);
	cr_assert_eq(stack_completion_complete(f.c, &f.t, cut), cut, "y, b is not a, b");
	/* the window reaching past the long copy's first user frame */
	uint32_t longer = add(&f, 0, (uint32_t[]){ f.leaf, f.y, f.x, f.a, f.u }, 5);
	cr_assert_eq(stack_completion_complete(f.c, &f.t, longer), longer);
	teardown(&f);
}

Test(stack_completion, a_leaf_alone_matches_the_leaf)
{
	struct fixture f;
	setup(&f);
	learn(&f, 0, (uint32_t[]){ f.leaf, f.c1, f.main }, 3);
	uint32_t cut = add(&f, 0, (uint32_t[]){ f.k, f.leaf, f.u }, 3);
	uint32_t whole = stack_completion_complete(f.c, &f.t, cut);
	cr_assert(frames_are(&f, whole, (uint32_t[]){ f.k, f.leaf, f.c1, f.main }, 4));
	uint32_t kernel_only = add(&f, 0, (uint32_t[]){ f.k, f.u }, 2);
	cr_assert_eq(stack_completion_complete(f.c, &f.t, kernel_only), kernel_only, "no user frame: no window");
	teardown(&f);
}

Test(stack_completion, cut_copies_teach_nothing)
{
	struct fixture f;
	setup(&f);
	learn(&f, 0, (uint32_t[]){ f.x, f.a, f.b, f.c1, f.u }, 5); /* itself cut */
	uint32_t cut = add(&f, 0, (uint32_t[]){ f.leaf, f.a, f.b, f.u }, 4);
	cr_assert_eq(stack_completion_complete(f.c, &f.t, cut), cut);
	uint32_t whole = add(&f, 0, (uint32_t[]){ f.leaf, f.a, f.b, f.c1, f.main }, 5);
	cr_assert_eq(stack_completion_complete(f.c, &f.t, whole), whole, "a whole stack stays itself");
	teardown(&f);
}

/*
 * The callers of a call path are the thread's, whichever event copied its
 * stack: another collector's whole copy completes a cut one (a switch-out
 * in a program deeper than the sched collector's copies, from the cpu
 * collector's longer ones), and uniqueness holds over every collector's.
 */
Test(stack_completion, other_collectors_whole_copies_teach_and_must_agree)
{
	struct fixture f;
	setup(&f);
	learn(&f, 1, (uint32_t[]){ f.x, f.a, f.b, f.c2, f.main }, 5);
	uint32_t cut = add(&f, 0, (uint32_t[]){ f.leaf, f.a, f.b, f.u }, 4);
	uint32_t whole = stack_completion_complete(f.c, &f.t, cut);
	cr_assert(frames_are(&f, whole, (uint32_t[]){ f.leaf, f.a, f.b, f.c2, f.main }, 5));
	cr_assert_eq(f.t.stacks[whole].collector, 0, "the completed stack stays its collector's");
	struct fixture g;
	setup(&g);
	learn(&g, 0, (uint32_t[]){ g.x, g.a, g.b, g.c1, g.main }, 5);
	learn(&g, 1, (uint32_t[]){ g.x, g.a, g.b, g.c2, g.main }, 5);
	cut = add(&g, 0, (uint32_t[]){ g.leaf, g.a, g.b, g.u }, 4);
	cr_assert_eq(stack_completion_complete(g.c, &g.t, cut), cut, "two collectors' copies go on two ways");
	teardown(&g);
	teardown(&f);
}

Test(stack_completion, a_path_the_event_gave_stays_and_one_the_frames_gave_is_theirs)
{
	struct fixture f;
	setup(&f);
	learn(&f, 0, (uint32_t[]){ f.x, f.a, f.b, f.c1, f.main }, 5);
	const uint32_t frames[] = { f.leaf, f.a, f.b, f.u };
	uint32_t given = stack_add_on_path(&f.t, 0, frames, 4, 0, 0, PATH_FUTEX_WAIT);
	uint32_t whole = stack_completion_complete(f.c, &f.t, given);
	cr_assert_neq(whole, given);
	cr_assert_eq(f.t.stacks[whole].path, PATH_FUTEX_WAIT, "a futex entry's key stays on its op's path");
	uint32_t by_frames = add(&f, 0, frames, 4);
	cr_assert_eq(f.t.stacks[by_frames].path, PATH_OTHER);
	whole = stack_completion_complete(f.c, &f.t, by_frames);
	cr_assert_neq(whole, by_frames);
	cr_assert_eq(f.t.stacks[whole].path, PATH_OTHER, "no frame names a path: the completed frames give it");
	teardown(&f);
}
