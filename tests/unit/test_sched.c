/*
 * test_sched.c: the sched collector's wait tracker and LKP key builder
 * (collectors/sched.c through sigprof/sched.h).
 *
 * Each test feeds a synthetic sequence of scheduler events for one or two
 * tasks, times in nanoseconds chosen so the expected figures can be worked
 * out by hand in the comment beside each check: wait = switch-in -
 * switch-out, delay = switch-in - ready (the first waking after the
 * switch-out; the switch-out itself for a runnable task), wait_and_delay =
 * wait + delay.  The key tests feed frame names shaped like the perf-sched
 * keys of an LKP report (seeds/002_*.txt).
 */
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "sigprof/collectors/sched.h"

#define TID 100
#define OTHER 200
#define STACK 3

static struct sched_tracker *tracker_with(uint32_t tid)
{
	struct sched_tracker *t = sched_tracker_new();
	sched_task_seen(t, tid);
	return t;
}

static void expect_figure(const struct sched_figure *f, uint64_t count, uint64_t total, uint64_t max,
			  const char *what)
{
	cr_expect_eq(f->count, count, "%s count %llu, expected %llu", what, (unsigned long long)f->count,
		     (unsigned long long)count);
	cr_expect_eq(f->total, total, "%s total %llu, expected %llu", what, (unsigned long long)f->total,
		     (unsigned long long)total);
	cr_expect_eq(f->max, max, "%s max %llu, expected %llu", what, (unsigned long long)f->max,
		     (unsigned long long)max);
}

Test(sched, sleep_wake_run)
{
	struct sched_tracker *t = tracker_with(TID);
	sched_switch_out(t, TID, 1000, STACK, SCHED_OUT_SLEEP);
	sched_waking(t, TID, 5000);
	sched_switch_in(t, TID, 6000);
	const struct sched_stack_stats *s = sched_stack_stats_of(t, STACK);
	cr_assert_not_null(s);
	expect_figure(&s->wait_time, 1, 5000, 5000, "wait");          /* 6000 - 1000 */
	expect_figure(&s->sch_delay, 1, 1000, 1000, "delay");         /* 6000 - 5000 */
	expect_figure(&s->wait_and_delay, 1, 6000, 6000, "w+d");      /* 5000 + 1000 */
	const struct sched_totals *tot = sched_tracker_totals(t);
	cr_expect_eq(tot->wait_time.count, 1);
	cr_expect_eq(tot->wait_time.total, 5000);
	cr_expect_eq(tot->sch_delay.total, 1000);
	cr_expect_eq(tot->wait_and_delay.total, 6000);
	cr_expect_eq(tot->without_waking, 0);
	sched_tracker_free(t);
}

Test(sched, waits_add_up_per_stack_and_in_totals)
{
	struct sched_tracker *t = tracker_with(TID);
	sched_task_seen(t, OTHER);
	/* TID: wait 100 delay 40 on STACK; then wait 300 delay 10 on STACK */
	sched_switch_out(t, TID, 1000, STACK, SCHED_OUT_SLEEP);
	sched_waking(t, TID, 1060);
	sched_switch_in(t, TID, 1100);
	sched_switch_out(t, TID, 2000, STACK, SCHED_OUT_SLEEP);
	sched_waking(t, TID, 2290);
	sched_switch_in(t, TID, 2300);
	/* OTHER: wait 50 delay 20 on stack 7, interleaved with nothing */
	sched_switch_out(t, OTHER, 3000, 7, SCHED_OUT_SLEEP);
	sched_waking(t, OTHER, 3030);
	sched_switch_in(t, OTHER, 3050);
	const struct sched_stack_stats *s = sched_stack_stats_of(t, STACK);
	expect_figure(&s->wait_time, 2, 400, 300, "wait");
	expect_figure(&s->sch_delay, 2, 50, 40, "delay");
	expect_figure(&s->wait_and_delay, 2, 450, 310, "w+d"); /* 140 and 310 */
	const struct sched_stack_stats *o = sched_stack_stats_of(t, 7);
	expect_figure(&o->wait_time, 1, 50, 50, "other wait");
	expect_figure(&o->sch_delay, 1, 20, 20, "other delay");
	cr_expect_null(sched_stack_stats_of(t, 5), "no wait was charged to stack 5");
	const struct sched_totals *tot = sched_tracker_totals(t);
	cr_expect_eq(tot->wait_time.count, 3);
	cr_expect_eq(tot->wait_time.total, 450);
	cr_expect_eq(tot->wait_time.max, 300);
	cr_expect_eq(tot->sch_delay.total, 70);
	cr_expect_eq(tot->wait_and_delay.total, 520);
	uint32_t *ids;
	size_t n = sched_stacks_with_waits(t, &ids);
	cr_assert_eq(n, 2);
	cr_expect((ids[0] == STACK && ids[1] == 7) || (ids[0] == 7 && ids[1] == STACK));
	free(ids);
	sched_tracker_free(t);
}

Test(sched, preempted_task_is_ready_at_its_switch_out)
{
	struct sched_tracker *t = tracker_with(TID);
	sched_switch_out(t, TID, 100, STACK, SCHED_OUT_RUNNABLE);
	sched_waking(t, TID, 200); /* cannot happen to a runnable task; ignored if it does */
	sched_switch_in(t, TID, 400);
	const struct sched_stack_stats *s = sched_stack_stats_of(t, STACK);
	expect_figure(&s->wait_time, 1, 300, 300, "wait");     /* 400 - 100 */
	expect_figure(&s->sch_delay, 1, 300, 300, "delay");    /* ready at 100 */
	expect_figure(&s->wait_and_delay, 1, 600, 600, "w+d");
	sched_tracker_free(t);
}

Test(sched, switch_record_marks_a_preemption)
{
	/* prev_state said sleeping, the SWITCH_OUT record says the task stayed runnable */
	struct sched_tracker *t = tracker_with(TID);
	sched_switch_out(t, TID, 100, STACK, SCHED_OUT_SLEEP);
	sched_switch_out_record(t, TID, 105, true);
	sched_switch_in(t, TID, 500);
	const struct sched_stack_stats *s = sched_stack_stats_of(t, STACK);
	expect_figure(&s->sch_delay, 1, 400, 400, "delay"); /* 500 - 100 */
	/* a SWITCH_OUT without the flag changes nothing */
	sched_switch_out(t, TID, 1000, STACK, SCHED_OUT_SLEEP);
	sched_switch_out_record(t, TID, 1005, false);
	sched_waking(t, TID, 1200);
	sched_switch_in(t, TID, 1250);
	expect_figure(&s->sch_delay, 2, 450, 400, "delay"); /* + 1250 - 1200 */
	expect_figure(&s->wait_time, 2, 650, 400, "wait");  /* 400 + 250 */
	sched_tracker_free(t);
}

Test(sched, prev_state_kinds)
{
	cr_expect_eq(sched_out_kind_of(0), SCHED_OUT_RUNNABLE, "R");
	cr_expect_eq(sched_out_kind_of(0x100), SCHED_OUT_RUNNABLE, "R+ (TASK_REPORT_MAX: preempted)");
	cr_expect_eq(sched_out_kind_of(0x1), SCHED_OUT_SLEEP, "S");
	cr_expect_eq(sched_out_kind_of(0x2), SCHED_OUT_SLEEP, "D");
	cr_expect_eq(sched_out_kind_of(0x80), SCHED_OUT_SLEEP, "I");
	cr_expect_eq(sched_out_kind_of(0x10), SCHED_OUT_DEAD, "X");
	cr_expect_eq(sched_out_kind_of(0x20), SCHED_OUT_DEAD, "Z");
}

Test(sched, migration_while_waiting)
{
	struct sched_tracker *t = tracker_with(TID);
	sched_migrate(t, TID, 50); /* running: counted in the totals only */
	sched_switch_out(t, TID, 100, STACK, SCHED_OUT_SLEEP);
	sched_waking(t, TID, 200);
	sched_migrate(t, TID, 210); /* woken onto another CPU */
	sched_switch_in(t, TID, 260);
	const struct sched_stack_stats *s = sched_stack_stats_of(t, STACK);
	expect_figure(&s->wait_time, 1, 160, 160, "wait");  /* 260 - 100: a migration does not end a wait */
	expect_figure(&s->sch_delay, 1, 60, 60, "delay");   /* 260 - 200 */
	cr_expect_eq(s->migrations, 1);
	cr_expect_eq(sched_tracker_totals(t)->migrations, 2);
	sched_migrate(t, OTHER, 300); /* not a workload task */
	cr_expect_eq(sched_tracker_totals(t)->migrations, 2);
	sched_tracker_free(t);
}

Test(sched, task_exits_while_waiting)
{
	struct sched_tracker *t = tracker_with(TID);
	sched_switch_out(t, TID, 100, STACK, SCHED_OUT_SLEEP);
	sched_waking(t, TID, 150);
	sched_task_exit(t, TID); /* EXIT record: the switch-in was never seen */
	sched_switch_in(t, TID, 400); /* a new task that reuses the tid: not the old wait */
	cr_expect_null(sched_stack_stats_of(t, STACK));
	const struct sched_totals *tot = sched_tracker_totals(t);
	cr_expect_eq(tot->ended_by_exit, 1);
	cr_expect_eq(tot->wait_time.count, 0);
	/* a task's last switch-out (Z) opens no wait */
	sched_switch_out(t, TID, 500, STACK, SCHED_OUT_DEAD);
	cr_expect_not(sched_task_known(t, TID));
	sched_tracker_finish(t);
	cr_expect_eq(tot->open_at_end, 0);
	sched_tracker_free(t);
}

Test(sched, waking_before_the_switch_out_completes)
{
	/* the waker's sched_waking is stamped while the sleeper is still inside __schedule */
	struct sched_tracker *t = tracker_with(TID);
	sched_waking(t, TID, 90);
	sched_switch_out(t, TID, 100, STACK, SCHED_OUT_SLEEP);
	sched_switch_in(t, TID, 130);
	const struct sched_stack_stats *s = sched_stack_stats_of(t, STACK);
	expect_figure(&s->wait_time, 1, 30, 30, "wait");
	expect_figure(&s->sch_delay, 1, 30, 30, "delay"); /* ready when its switch-out completed: 130 - 100 */
	cr_expect_eq(sched_tracker_totals(t)->without_waking, 0);
	/* an early waking that did not stop the sleep: the waking after the switch-out wins */
	sched_waking(t, TID, 1090);
	sched_switch_out(t, TID, 1100, STACK, SCHED_OUT_SLEEP);
	sched_waking(t, TID, 1150);
	sched_switch_in(t, TID, 1170);
	expect_figure(&s->sch_delay, 2, 50, 30, "delay"); /* + 1170 - 1150 */
	/* a waking while running does not outlive the next switch-in */
	sched_waking(t, TID, 2000);
	sched_switch_out(t, TID, 2100, STACK, SCHED_OUT_RUNNABLE);
	sched_switch_in(t, TID, 2110);
	sched_switch_out(t, TID, 3000, STACK, SCHED_OUT_SLEEP);
	sched_switch_in(t, TID, 3500);
	expect_figure(&s->sch_delay, 3, 60, 30, "delay"); /* + 10 for the preemption; none for the last */
	cr_expect_eq(sched_tracker_totals(t)->without_waking, 1);
	sched_tracker_free(t);
}

Test(sched, first_of_two_wakings_counts)
{
	struct sched_tracker *t = tracker_with(TID);
	sched_switch_out(t, TID, 100, STACK, SCHED_OUT_SLEEP);
	sched_waking(t, TID, 150);
	sched_waking(t, TID, 160);
	sched_switch_in(t, TID, 200);
	const struct sched_stack_stats *s = sched_stack_stats_of(t, STACK);
	expect_figure(&s->sch_delay, 1, 50, 50, "delay"); /* 200 - 150 */
	expect_figure(&s->wait_and_delay, 1, 150, 150, "w+d");
	sched_tracker_free(t);
}

Test(sched, no_waking_seen_leaves_the_delay_unknown)
{
	struct sched_tracker *t = tracker_with(TID);
	sched_switch_out(t, TID, 100, STACK, SCHED_OUT_SLEEP);
	sched_switch_in(t, TID, 300);
	const struct sched_stack_stats *s = sched_stack_stats_of(t, STACK);
	expect_figure(&s->wait_time, 1, 200, 200, "wait");
	expect_figure(&s->sch_delay, 0, 0, 0, "delay");
	expect_figure(&s->wait_and_delay, 1, 200, 200, "w+d"); /* delay counts 0 */
	cr_expect_eq(sched_tracker_totals(t)->without_waking, 1);
	sched_tracker_free(t);
}

Test(sched, unknown_tasks_and_lost_records)
{
	struct sched_tracker *t = sched_tracker_new();
	cr_expect_not(sched_task_known(t, OTHER));
	sched_waking(t, OTHER, 10); /* someone else's waking: nothing */
	cr_expect_not(sched_task_known(t, OTHER));
	/* two switch-outs without a switch-in between: the first wait is dropped */
	sched_switch_out(t, TID, 100, STACK, SCHED_OUT_SLEEP);
	cr_expect(sched_task_known(t, TID), "a switch-out makes the task known");
	sched_switch_out(t, TID, 200, STACK, SCHED_OUT_SLEEP);
	sched_waking(t, TID, 240);
	sched_switch_in(t, TID, 250);
	const struct sched_stack_stats *s = sched_stack_stats_of(t, STACK);
	expect_figure(&s->wait_time, 1, 50, 50, "wait");
	cr_expect_eq(sched_tracker_totals(t)->unmatched, 1);
	/* a switch-in without a wait (a task's first run) charges nothing */
	sched_switch_in(t, OTHER, 300);
	cr_expect_eq(sched_tracker_totals(t)->wait_time.count, 1);
	/* still waiting when the recording ends */
	sched_switch_out(t, OTHER, 400, STACK, SCHED_OUT_SLEEP);
	sched_tracker_finish(t);
	cr_expect_eq(sched_tracker_totals(t)->open_at_end, 1);
	cr_expect_eq(sched_tracker_totals(t)->wait_time.count, 1);
	sched_tracker_free(t);
}

Test(sched, new_task_delay)
{
	struct sched_tracker *t = tracker_with(TID);
	sched_wakeup_new(t, 300, 900); /* not a workload task (no FORK record): ignored */
	cr_expect_not(sched_task_known(t, 300));
	sched_task_seen(t, OTHER); /* its FORK record */
	sched_wakeup_new(t, OTHER, 1000);
	sched_switch_in(t, OTHER, 1500);
	sched_switch_in(t, OTHER, 1700); /* a second switch-in is no first run */
	const struct sched_totals *tot = sched_tracker_totals(t);
	cr_expect_eq(tot->new_task_delay.count, 1);
	cr_expect_eq(tot->new_task_delay.total, 500);
	cr_expect_eq(tot->wait_time.count, 0, "a first run is no wait");
	sched_tracker_free(t);
}

Test(sched, merge_stats)
{
	struct sched_stack_stats a = { { 2, 300, 200 }, { 1, 50, 50 }, { 2, 350, 250 }, 1 };
	struct sched_stack_stats b = { { 1, 400, 400 }, { 1, 10, 10 }, { 1, 410, 410 }, 2 };
	sched_stack_stats_merge(&a, &b);
	expect_figure(&a.wait_time, 3, 700, 400, "wait");
	expect_figure(&a.sch_delay, 2, 60, 50, "delay");
	expect_figure(&a.wait_and_delay, 3, 760, 410, "w+d");
	cr_expect_eq(a.migrations, 3);
}

/* ---- LKP keys ---- */

static const char *key_of(const char *const *names, size_t n)
{
	static char buf[512];
	sched_lkp_key(names, n, buf, sizeof(buf));
	return buf;
}

Test(sched, lkp_keys_of_the_seed_report)
{
	/* perf-sched.wait_and_delay.max.ms.schedule_timeout.__wait_for_common.wait_for_completion_state.kernel_clone */
	const char *clone[] = { "__schedule", "schedule", "schedule_timeout", "__wait_for_common",
				"wait_for_completion_state", "kernel_clone" };
	cr_expect_str_eq(key_of(clone, 6), "schedule_timeout.__wait_for_common.wait_for_completion_state.kernel_clone");
	/* perf-sched.wait_and_delay.count.irqentry_exit_to_user_mode.asm_sysvec_call_function_single.[unknown].[unknown] */
	const char *irq[] = { "__schedule", "schedule", "irqentry_exit_to_user_mode", "asm_sysvec_call_function_single",
			      NULL, NULL };
	cr_expect_str_eq(key_of(irq, 6), "irqentry_exit_to_user_mode.asm_sysvec_call_function_single.[unknown].[unknown]");
}

Test(sched, lkp_keys_keep_five_parts_of_seven_frames)
{
	/* as perf sched timehist -g printed it on this kernel: do_nanosleep <- hrtimer_nanosleep <- ... */
	const char *sleep[] = { "__schedule",	     "schedule",      "do_nanosleep",
				"hrtimer_nanosleep", "common_nsleep", "__x64_sys_clock_nanosleep",
				"do_syscall_64",     "entry_SYSCALL_64_after_hwframe", "clock_nanosleep", "main" };
	cr_expect_str_eq(key_of(sleep, 10),
			 "do_nanosleep.hrtimer_nanosleep.common_nsleep.__x64_sys_clock_nanosleep.do_syscall_64");
	/* one skipped frame: timehist prints six, LKP keeps five */
	const char *exit_chain[] = { "__schedule",	    "do_task_dead", "do_exit",	     "do_group_exit",
				     "__x64_sys_exit_group", "x64_sys_call", "do_syscall_64" };
	cr_expect_str_eq(key_of(exit_chain, 7), "do_task_dead.do_exit.do_group_exit.__x64_sys_exit_group.x64_sys_call");
	/* three skipped frames inside the seven timehist resolves leave four */
	const char *preempt[] = { "__schedule", "schedule", "preempt_schedule", "a", "b", "c", "d", "e", "f" };
	cr_expect_str_eq(key_of(preempt, 9), "a.b.c.d");
}

Test(sched, lkp_keys_skip_only_the_exact_names)
{
	const char *variants[] = { "__schedule", "schedule_idle", "preempt_schedule_irq", "schedule_timeout",
				   "preempt_schedule_common", "x" };
	cr_expect_str_eq(key_of(variants, 6),
			 "schedule_idle.preempt_schedule_irq.schedule_timeout.preempt_schedule_common.x");
}

Test(sched, lkp_keys_split_dotted_names_like_lkp)
{
	/* LKP joins with '.' and keeps the first five '.'-parts: a clone suffix takes parts */
	const char *dotted[] = { "__schedule", "schedule", "rwsem_down_read_slowpath.constprop.0", "down_read",
				 "do_user_addr_fault", "exc_page_fault" };
	cr_expect_str_eq(key_of(dotted, 6), "rwsem_down_read_slowpath.constprop.0.down_read.do_user_addr_fault");
	/* a module symbol loses kallsyms' " [module]", as perf prints it */
	const char *module[] = { "__schedule", "schedule", "nfs_wait_bit_killable [nfs]", "__wait_on_bit" };
	cr_expect_str_eq(key_of(module, 4), "nfs_wait_bit_killable.__wait_on_bit");
}

Test(sched, lkp_key_edges)
{
	const char *only_schedule[] = { "__schedule", "schedule" };
	cr_expect_str_eq(key_of(only_schedule, 2), "[unknown]");
	cr_expect_str_eq(key_of(NULL, 0), "[unknown]");
	const char *chain[] = { "__schedule", "schedule", "do_nanosleep", "hrtimer_nanosleep" };
	char small[8];
	size_t len = sched_lkp_key(chain, 4, small, sizeof(small));
	cr_expect_eq(len, 7);
	cr_expect_str_eq(small, "do_nano");
}

/*
 * A switch-out's key stack (3) whose call site's whole stack (9) was
 * learned after its wait closed: the remap charges that wait to 9, beside
 * the wait already charged there; stack 7, learned to be itself, stays.
 */
static uint32_t key_3_is_9(void *ctx, uint32_t stack)
{
	(void)ctx;
	return stack == 3 ? 9 : stack;
}

Test(sched, remapped_keys_charge_their_waits_to_the_whole_stack)
{
	struct sched_tracker *t = tracker_with(TID);
	sched_switch_out(t, TID, 1000, 3, SCHED_OUT_SLEEP); /* wait 100, delay 40 */
	sched_waking(t, TID, 1060);
	sched_switch_in(t, TID, 1100);
	sched_switch_out(t, TID, 2000, 9, SCHED_OUT_SLEEP); /* wait 300, delay 10 */
	sched_waking(t, TID, 2290);
	sched_switch_in(t, TID, 2300);
	sched_switch_out(t, TID, 3000, 7, SCHED_OUT_SLEEP); /* wait 50, delay 20 */
	sched_waking(t, TID, 3030);
	sched_switch_in(t, TID, 3050);
	sched_tracker_finish(t);
	sched_tracker_remap_stacks(t, key_3_is_9, NULL);
	cr_expect_null(sched_stack_stats_of(t, 3), "the key's waits moved");
	const struct sched_stack_stats *s = sched_stack_stats_of(t, 9);
	cr_assert_not_null(s);
	expect_figure(&s->wait_time, 2, 400, 300, "wait");
	expect_figure(&s->sch_delay, 2, 50, 40, "delay");
	expect_figure(&s->wait_and_delay, 2, 450, 310, "w+d");
	const struct sched_stack_stats *o = sched_stack_stats_of(t, 7);
	cr_assert_not_null(o);
	expect_figure(&o->wait_time, 1, 50, 50, "stack 7's wait");
	cr_expect_eq(sched_tracker_totals(t)->wait_time.total, 450, "the totals do not move");
	sched_tracker_free(t);
}
