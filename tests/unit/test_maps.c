/*
 * test_maps.c: the workload's processes and their mappings
 * (symbolize/maps.c, the proc_table part of symbolize.h).
 *
 * MMAP2, FORK and COMM records are replayed as the report does; the
 * expected mappings are worked out from mmap(2)'s rules (a new mapping
 * replaces the part of older ones it overlaps, the parts left keep their
 * file offsets).  The files named do not exist, so no symbol table is ever
 * loaded and addresses fall back to file offsets.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <criterion/criterion.h>

#include "sigprof/symbolize/symbolize.h"
#include "sigprof/base/util.h"

#define PROT_RX (PROT_READ | PROT_EXEC)

static void add_map(struct proc_table *pt, uint32_t pid, uint64_t start, uint64_t end, uint64_t pgoff,
		    const char *file)
{
	proc_table_mmap(pt, pid, start, end - start, pgoff, PROT_RX, MAP_PRIVATE, file);
}

/* addr in pid is covered by exactly [start, end) of file at pgoff. */
static void expect_map(struct proc_table *pt, uint32_t pid, uint64_t addr, uint64_t start, uint64_t end,
		       uint64_t pgoff, const char *file)
{
	const struct mapping *m = proc_table_find(pt, pid, addr);
	cr_assert_not_null(m, "pid %u: nothing at %#llx", pid, (unsigned long long)addr);
	cr_assert_eq(m->start, start, "pid %u %#llx: start %#llx", pid, (unsigned long long)addr,
		     (unsigned long long)m->start);
	cr_assert_eq(m->end, end, "pid %u %#llx: end %#llx", pid, (unsigned long long)addr,
		     (unsigned long long)m->end);
	cr_assert_eq(m->pgoff, pgoff, "pid %u %#llx: pgoff %#llx", pid, (unsigned long long)addr,
		     (unsigned long long)m->pgoff);
	cr_assert_str_eq(m->dso->name, file);
}

static void expect_none(struct proc_table *pt, uint32_t pid, uint64_t addr)
{
	const struct mapping *m = proc_table_find(pt, pid, addr);
	cr_assert_null(m, "pid %u: %#llx should be unmapped, found [%#llx, %#llx)", pid, (unsigned long long)addr,
		       m ? (unsigned long long)m->start : 0ull, m ? (unsigned long long)m->end : 0ull);
}

Test(maps, lookups_inside_and_outside_mappings)
{
	struct proc_table *pt = proc_table_new();
	expect_none(pt, 1, 0x1000); /* an unknown process */
	/* added out of order, with a gap */
	add_map(pt, 100, 0x7000, 0x9000, 0x3000, "/bin/c");
	add_map(pt, 100, 0x1000, 0x3000, 0, "/bin/a");
	add_map(pt, 100, 0x3000, 0x5000, 0x2000, "/bin/b");
	expect_none(pt, 100, 0);
	expect_none(pt, 100, 0xfff);
	expect_map(pt, 100, 0x1000, 0x1000, 0x3000, 0, "/bin/a");
	expect_map(pt, 100, 0x2fff, 0x1000, 0x3000, 0, "/bin/a");
	expect_map(pt, 100, 0x3000, 0x3000, 0x5000, 0x2000, "/bin/b");
	expect_map(pt, 100, 0x4fff, 0x3000, 0x5000, 0x2000, "/bin/b");
	expect_none(pt, 100, 0x5000);
	expect_none(pt, 100, 0x6fff);
	expect_map(pt, 100, 0x7000, 0x7000, 0x9000, 0x3000, "/bin/c");
	expect_map(pt, 100, 0x8fff, 0x7000, 0x9000, 0x3000, "/bin/c");
	expect_none(pt, 100, 0x9000);
	expect_none(pt, 100, UINT64_MAX);
	expect_none(pt, 101, 0x1000); /* mappings belong to their process */
	const struct mapping *m = proc_table_find(pt, 100, 0x7100);
	cr_assert_eq(m->prot, PROT_RX);
	cr_assert_eq(m->flags, MAP_PRIVATE);
	proc_table_free(pt);
}

Test(maps, empty_and_wrapping_mappings_are_ignored)
{
	struct proc_table *pt = proc_table_new();
	proc_table_mmap(pt, 5, 0x1000, 0, 0, PROT_RX, MAP_PRIVATE, "/bin/zero");
	proc_table_mmap(pt, 5, UINT64_MAX - 0xfff, 0x2000, 0, PROT_RX, MAP_PRIVATE, "/bin/wrap");
	expect_none(pt, 5, 0x1000);
	expect_none(pt, 5, UINT64_MAX);
	expect_none(pt, 5, 0);
	/* one that ends exactly at the top of the address space is fine */
	proc_table_mmap(pt, 5, UINT64_MAX - 0xfff, 0xfff, 0, PROT_RX, MAP_PRIVATE, "/bin/top");
	expect_map(pt, 5, UINT64_MAX - 1, UINT64_MAX - 0xfff, UINT64_MAX, 0, "/bin/top");
	proc_table_free(pt);
}

Test(maps, new_mapping_inside_an_old_one_splits_it)
{
	struct proc_table *pt = proc_table_new();
	add_map(pt, 7, 0x10000, 0x20000, 0x100000, "/lib/a.so");
	add_map(pt, 7, 0x14000, 0x18000, 0x5000, "/lib/b.so");
	expect_map(pt, 7, 0x10000, 0x10000, 0x14000, 0x100000, "/lib/a.so");
	expect_map(pt, 7, 0x13fff, 0x10000, 0x14000, 0x100000, "/lib/a.so");
	expect_map(pt, 7, 0x14000, 0x14000, 0x18000, 0x5000, "/lib/b.so");
	expect_map(pt, 7, 0x17fff, 0x14000, 0x18000, 0x5000, "/lib/b.so");
	/* the right part keeps mapping the file where it did: pgoff moves by what was cut */
	expect_map(pt, 7, 0x18000, 0x18000, 0x20000, 0x100000 + 0x8000, "/lib/a.so");
	expect_map(pt, 7, 0x1ffff, 0x18000, 0x20000, 0x108000, "/lib/a.so");
	expect_none(pt, 7, 0x20000);

	uint64_t off;
	const struct mapping *right = proc_table_find(pt, 7, 0x18010);
	cr_assert(mapping_to_dso_addr(right, 0x18010, &off));
	cr_assert_eq(off, 0x108010, "the same file offset as before the split");
	proc_table_free(pt);
}

Test(maps, new_mapping_over_edges_and_over_whole_mappings)
{
	struct proc_table *pt = proc_table_new();
	add_map(pt, 8, 0x10000, 0x20000, 0, "/lib/a.so");
	add_map(pt, 8, 0x20000, 0x30000, 0x40000, "/lib/b.so");
	add_map(pt, 8, 0x30000, 0x38000, 0x1000, "/lib/c.so");
	add_map(pt, 8, 0x40000, 0x50000, 0, "/lib/d.so");
	/* covers the tail of a, all of b, the head of c */
	add_map(pt, 8, 0x1c000, 0x34000, 0x9000, "/lib/new.so");
	expect_map(pt, 8, 0x1bfff, 0x10000, 0x1c000, 0, "/lib/a.so");
	expect_map(pt, 8, 0x1c000, 0x1c000, 0x34000, 0x9000, "/lib/new.so");
	expect_map(pt, 8, 0x25000, 0x1c000, 0x34000, 0x9000, "/lib/new.so");
	expect_map(pt, 8, 0x33fff, 0x1c000, 0x34000, 0x9000, "/lib/new.so");
	expect_map(pt, 8, 0x34000, 0x34000, 0x38000, 0x1000 + 0x4000, "/lib/c.so");
	expect_map(pt, 8, 0x40000, 0x40000, 0x50000, 0, "/lib/d.so");
	/* exactly over an existing mapping: replaces it */
	add_map(pt, 8, 0x40000, 0x50000, 0x7000, "/lib/e.so");
	expect_map(pt, 8, 0x48000, 0x40000, 0x50000, 0x7000, "/lib/e.so");
	/* over the start of one: the rest keeps its offset into the file */
	add_map(pt, 8, 0x3f000, 0x41000, 0, "/lib/f.so");
	expect_map(pt, 8, 0x41000, 0x41000, 0x50000, 0x7000 + 0x1000, "/lib/e.so");
	expect_map(pt, 8, 0x3f000, 0x3f000, 0x41000, 0, "/lib/f.so");
	expect_none(pt, 8, 0x3efff);
	/* over everything */
	add_map(pt, 8, 0x1000, 0x100000, 0, "/lib/all.so");
	expect_map(pt, 8, 0x10000, 0x1000, 0x100000, 0, "/lib/all.so");
	expect_map(pt, 8, 0x4ffff, 0x1000, 0x100000, 0, "/lib/all.so");
	proc_table_free(pt);
}

Test(maps, many_mappings_stay_sorted)
{
	struct proc_table *pt = proc_table_new();
	enum { N = 500 };
	char name[64];
	/* the even slots backwards, then the odd ones forwards, so that each lands between two others */
	for (int pass = 0; pass < 2; pass++)
		for (unsigned k = 0; k < N; k++) {
			unsigned i = pass == 0 ? N - 1 - k : k;
			if (i % 2 != (unsigned)pass)
				continue;
			snprintf(name, sizeof(name), "/lib/m%u.so", i);
			add_map(pt, 9, 0x100000 + i * 0x2000ull, 0x100000 + i * 0x2000ull + 0x1000, i * 0x10ull, name);
		}
	for (unsigned i = 0; i < N; i++) {
		uint64_t start = 0x100000 + i * 0x2000ull;
		snprintf(name, sizeof(name), "/lib/m%u.so", i);
		expect_map(pt, 9, start + 0x800, start, start + 0x1000, i * 0x10ull, name);
		expect_none(pt, 9, start + 0x1800);
	}
	proc_table_free(pt);
}

/*
 * Random mappings over 64 pages checked page by page against a model that
 * keeps, for each page, the last mapping that covered it and that
 * mapping's file offset there: the in-place hole punching and insertion
 * must give the same answers as the obvious algorithm.
 */
Test(maps, random_overlapping_mappings_match_a_page_model)
{
	enum { PAGES = 64, PAGE = 0x1000, BASE = 0x400000, ROUNDS = 3000 };
	static const char *const names[] = { "/a", "/b", "/c", "//anon" };
	struct { const char *name; uint64_t pgoff; bool mapped; } model[PAGES] = { { 0 } };
	struct proc_table *pt = proc_table_new();
	srand(42);
	for (int round = 0; round < ROUNDS; round++) {
		uint64_t first = (uint64_t)rand() % PAGES, count = 1 + (uint64_t)rand() % 8;
		if (first + count > PAGES)
			count = PAGES - first;
		const char *name = names[rand() % 4];
		uint64_t pgoff = (uint64_t)(rand() % 16) * PAGE;
		proc_table_mmap(pt, 1, BASE + first * PAGE, count * PAGE, pgoff, PROT_READ, MAP_PRIVATE, name);
		for (uint64_t i = 0; i < count; i++) {
			model[first + i].name = name;
			model[first + i].pgoff = pgoff + i * PAGE;
			model[first + i].mapped = true;
		}
		for (uint64_t page = 0; page < PAGES; page++) {
			const struct mapping *m = proc_table_find(pt, 1, BASE + page * PAGE + 8);
			cr_assert_eq(m != NULL, model[page].mapped, "round %d page %llu", round, (unsigned long long)page);
			if (!m)
				continue;
			cr_assert_str_eq(m->dso->name, model[page].name, "round %d page %llu", round, (unsigned long long)page);
			cr_assert_eq(m->pgoff + (BASE + page * PAGE - m->start), model[page].pgoff, "round %d page %llu", round,
				     (unsigned long long)page);
		}
	}
	proc_table_free(pt);
}

Test(maps, same_file_is_one_dso)
{
	struct proc_table *pt = proc_table_new();
	add_map(pt, 1, 0x1000, 0x2000, 0, "/lib/shared.so");
	add_map(pt, 2, 0x5000, 0x6000, 0, "/lib/shared.so");
	add_map(pt, 2, 0x6000, 0x7000, 0, "/lib/other.so");
	const struct mapping *a = proc_table_find(pt, 1, 0x1000);
	const struct mapping *b = proc_table_find(pt, 2, 0x5000);
	const struct mapping *c = proc_table_find(pt, 2, 0x6000);
	cr_assert_eq(a->dso, b->dso);
	cr_assert_neq(a->dso, c->dso);
	proc_table_free(pt);
}

Test(maps, fork_copies_mappings_without_sharing_later_changes)
{
	struct proc_table *pt = proc_table_new();
	proc_table_comm(pt, 10, 10, "parent", true);
	add_map(pt, 10, 0x1000, 0x3000, 0, "/bin/app");
	add_map(pt, 10, 0x10000, 0x20000, 0x2000, "/lib/libc.so");
	proc_table_fork(pt, 10, 11);
	cr_assert_str_eq(proc_table_comm_of(pt, 11), "parent");
	expect_map(pt, 11, 0x2000, 0x1000, 0x3000, 0, "/bin/app");
	expect_map(pt, 11, 0x15000, 0x10000, 0x20000, 0x2000, "/lib/libc.so");
	cr_assert_neq(proc_table_find(pt, 11, 0x2000), proc_table_find(pt, 10, 0x2000), "the child has its own copy");

	/* the child maps something over part of libc; the parent does not see it */
	add_map(pt, 11, 0x12000, 0x14000, 0, "/lib/child-only.so");
	expect_map(pt, 11, 0x13000, 0x12000, 0x14000, 0, "/lib/child-only.so");
	expect_map(pt, 10, 0x13000, 0x10000, 0x20000, 0x2000, "/lib/libc.so");
	/* and the other way round */
	add_map(pt, 10, 0x40000, 0x41000, 0, "/lib/parent-only.so");
	expect_map(pt, 10, 0x40000, 0x40000, 0x41000, 0, "/lib/parent-only.so");
	expect_none(pt, 11, 0x40000);
	/* renaming the child does not rename the parent */
	proc_table_comm(pt, 11, 11, "child", false);
	cr_assert_str_eq(proc_table_comm_of(pt, 11), "child");
	cr_assert_str_eq(proc_table_comm_of(pt, 10), "parent");
	proc_table_free(pt);
}

/* A thread's own name (pthread_setname_np's COMM), inherited by the threads it makes; the process keeps its own. */
Test(maps, threads_have_their_own_names)
{
	struct proc_table *pt = proc_table_new();
	proc_table_comm(pt, 10, 10, "app", true);
	proc_table_thread_start(pt, 12, 10); /* pthread_create from the main thread */
	cr_assert_str_eq(proc_table_thread_comm_of(pt, 10, 12), "app");
	proc_table_comm(pt, 10, 12, "my-worker", false);
	cr_assert_str_eq(proc_table_thread_comm_of(pt, 10, 12), "my-worker");
	cr_assert_str_eq(proc_table_thread_comm_of(pt, 10, 10), "app");
	cr_assert_str_eq(proc_table_comm_of(pt, 10), "app", "a thread's name is not its process's");
	proc_table_thread_start(pt, 13, 12); /* made by the named thread */
	cr_assert_str_eq(proc_table_thread_comm_of(pt, 10, 13), "my-worker");
	/* tid 12 reused by a new process whose maker is unknown: its process's name, not the old thread's */
	proc_table_fork(pt, 10, 12);
	proc_table_thread_start(pt, 12, 99);
	cr_assert_str_eq(proc_table_thread_comm_of(pt, 12, 12), "app");
	cr_assert_null(proc_table_thread_comm_of(pt, 50, 50), "an unknown task has no name");
	proc_table_free(pt);
}

Test(maps, fork_of_a_thread_and_of_an_unknown_parent)
{
	struct proc_table *pt = proc_table_new();
	add_map(pt, 20, 0x1000, 0x2000, 0, "/bin/app");
	proc_table_fork(pt, 20, 20); /* a new thread: nothing changes */
	expect_map(pt, 20, 0x1000, 0x1000, 0x2000, 0, "/bin/app");
	proc_table_fork(pt, 999, 21); /* a parent we never saw: the child starts empty */
	expect_none(pt, 21, 0x1000);
	proc_table_free(pt);
}

/* A parent known only by its COMM (no MMAP2 yet, or a damaged file): the child starts, or becomes, empty. */
Test(maps, fork_of_a_parent_without_mappings)
{
	struct proc_table *pt = proc_table_new();
	proc_table_comm(pt, 40, 40, "parent", false);
	proc_table_fork(pt, 40, 41);
	expect_none(pt, 41, 0x1000);
	cr_assert_str_eq(proc_table_comm_of(pt, 41), "parent");
	add_map(pt, 42, 0x1000, 0x2000, 0, "/bin/early");
	proc_table_fork(pt, 40, 42);
	expect_none(pt, 42, 0x1000);
	proc_table_free(pt);
}

/*
 * Records from different CPUs' buffers are not in time order, so a child's
 * own MMAP2 can come before its FORK; the FORK then replaces the child's
 * mappings with a copy of its parent's, however many more the parent has.
 */
Test(maps, fork_over_a_child_that_already_has_mappings)
{
	struct proc_table *pt = proc_table_new();
	add_map(pt, 31, 0x100000, 0x200000, 0, "/lib/early.so");
	add_map(pt, 31, 0x140000, 0x150000, 0, "/lib/split.so"); /* the child's table was split once */
	for (unsigned i = 0; i < 5; i++)
		add_map(pt, 30, 0x1000 + i * 0x1000ull, 0x1800 + i * 0x1000ull, i, "/bin/parent");
	proc_table_fork(pt, 30, 31);
	for (unsigned i = 0; i < 5; i++)
		expect_map(pt, 31, 0x1000 + i * 0x1000ull, 0x1000 + i * 0x1000ull, 0x1800 + i * 0x1000ull, i,
			   "/bin/parent");
	expect_none(pt, 31, 0x100000);
	proc_table_free(pt);
}

Test(maps, exec_clears_mappings_and_sets_the_name)
{
	struct proc_table *pt = proc_table_new();
	proc_table_comm(pt, 40, 40, "sh", false);
	add_map(pt, 40, 0x1000, 0x2000, 0, "/bin/sh");
	proc_table_comm(pt, 40, 41, "worker", false); /* a thread's name does not rename the process */
	cr_assert_str_eq(proc_table_comm_of(pt, 40), "sh");
	proc_table_comm(pt, 40, 40, "workload", true);
	cr_assert_str_eq(proc_table_comm_of(pt, 40), "workload");
	expect_none(pt, 40, 0x1000);
	add_map(pt, 40, 0x1000, 0x4000, 0x1000, "/usr/bin/workload");
	expect_map(pt, 40, 0x1000, 0x1000, 0x4000, 0x1000, "/usr/bin/workload");
	/* exec from a thread (the kernel makes it the leader) also clears */
	proc_table_comm(pt, 40, 42, "again", true);
	cr_assert_str_eq(proc_table_comm_of(pt, 40), "again");
	expect_none(pt, 40, 0x1000);
	cr_assert_null(proc_table_comm_of(pt, 12345));
	proc_table_free(pt);
}

Test(maps, exit_keeps_mappings_for_late_samples)
{
	struct proc_table *pt = proc_table_new();
	add_map(pt, 50, 0x1000, 0x2000, 0, "/bin/app");
	proc_table_exit(pt, 50, 50);
	expect_map(pt, 50, 0x1000, 0x1000, 0x2000, 0, "/bin/app");
	proc_table_free(pt);
}

Test(maps, unloadable_dso_falls_back_to_the_file_offset)
{
	struct proc_table *pt = proc_table_new();
	add_map(pt, 60, 0x555555554000ull, 0x555555556000ull, 0x3000, "/nonexistent/dir/app");
	add_map(pt, 60, 0x7fff0000ull, 0x7fff2000ull, 0, "//anon");
	const struct mapping *m = proc_table_find(pt, 60, 0x555555555123ull);
	uint64_t off = 0;
	cr_assert(mapping_to_dso_addr(m, 0x555555555123ull, &off));
	cr_assert_eq(off, 0x555555555123ull - 0x555555554000ull + 0x3000);
	cr_assert(m->dso->load_tried);
	cr_assert_eq(m->dso->load_error, -ENOENT);
	cr_assert_null(m->dso->symtab);
	cr_assert_null(dso_symtab(m->dso), "tried once, still nothing");
	/* outside the mapping */
	off = 77;
	cr_assert_not(mapping_to_dso_addr(m, 0x555555556000ull, &off));
	cr_assert_not(mapping_to_dso_addr(m, 0x555555553fffull, &off));
	cr_assert_eq(off, 77, "untouched when outside");
	/* anonymous memory is never loaded from a file */
	m = proc_table_find(pt, 60, 0x7fff0010ull);
	cr_assert(mapping_to_dso_addr(m, 0x7fff0010ull, &off));
	cr_assert_eq(off, 0x10);
	cr_assert_null(m->dso->symtab);
	proc_table_free(pt);
}

Test(maps, many_processes)
{
	struct proc_table *pt = proc_table_new();
	enum { PIDS = 5000 };
	char name[32];
	for (uint32_t pid = 1; pid <= PIDS; pid++) {
		snprintf(name, sizeof(name), "proc-%u", pid);
		proc_table_comm(pt, pid * 7, pid * 7, name, true);
		add_map(pt, pid * 7, 0x1000 * (uint64_t)pid, 0x1000 * (uint64_t)pid + 0x800, pid, "/bin/many");
		if (pid % 500 == 0)
			proc_table_fork(pt, pid * 7, pid * 7 + 1); /* forks while the table grows */
	}
	for (uint32_t pid = 1; pid <= PIDS; pid++) {
		snprintf(name, sizeof(name), "proc-%u", pid);
		cr_assert_str_eq(proc_table_comm_of(pt, pid * 7), name);
		uint64_t start = 0x1000 * (uint64_t)pid;
		expect_map(pt, pid * 7, start + 0x10, start, start + 0x800, pid, "/bin/many");
		expect_none(pt, pid * 7, start + 0x1000);
		if (pid % 500 == 0)
			expect_map(pt, pid * 7 + 1, start, start, start + 0x800, pid, "/bin/many");
	}
	proc_table_free(pt);
}

/*
 * A shared futex's key: a MAP_SHARED mapping's object (device and inode)
 * and the offset in it, the same in a forked child and in an unrelated
 * process that maps the object elsewhere; private memory, and a shared
 * mapping whose object the recording does not name, have none.
 */
Test(maps, shared_mappings_key_words_by_object_and_offset)
{
	struct proc_table *pt = proc_table_new();
	proc_table_mmap(pt, 10, 0x7000, 0x2000, 0, PROT_READ | PROT_WRITE, MAP_SHARED, "/dev/zero (deleted)");
	proc_table_mmap_object(pt, 10, 0x7000, 0, 1, 4242);
	proc_table_mmap(pt, 10, 0x20000, 0x1000, 0, PROT_READ | PROT_WRITE, MAP_PRIVATE, "//anon");
	proc_table_mmap(pt, 10, 0x30000, 0x1000, 0, PROT_READ | PROT_WRITE, MAP_SHARED, "/dev/zero (deleted)");
	proc_table_fork(pt, 10, 11);
	/* an unrelated process maps the same object, one page in, at another address */
	proc_table_mmap(pt, 12, 0x90000, 0x1000, 0x1000, PROT_READ | PROT_WRITE, MAP_SHARED, "/dev/zero (deleted)");
	proc_table_mmap_object(pt, 12, 0x90000, 0, 1, 4242);
	/* another object of the same name */
	proc_table_mmap(pt, 12, 0xa0000, 0x1000, 0, PROT_READ | PROT_WRITE, MAP_SHARED, "/dev/zero (deleted)");
	proc_table_mmap_object(pt, 12, 0xa0000, 0, 1, 4343);

	uint64_t obj10, off10, obj11, off11, obj12, off12, other, off;
	cr_assert(proc_table_shared_offset(pt, 10, 0x8010, &obj10, &off10));
	cr_assert(proc_table_shared_offset(pt, 11, 0x8010, &obj11, &off11), "the child inherits the mapping");
	cr_assert(proc_table_shared_offset(pt, 12, 0x90010, &obj12, &off12));
	cr_assert(obj10 == obj11 && obj11 == obj12);
	cr_assert(off10 == 0x1010 && off11 == 0x1010 && off12 == 0x1010);
	cr_assert(proc_table_shared_offset(pt, 12, 0xa0010, &other, &off));
	cr_assert_neq(other, obj10, "two objects of one name are two keys");
	cr_assert_not(proc_table_shared_offset(pt, 10, 0x20010, &other, &off), "private memory");
	cr_assert_not(proc_table_shared_offset(pt, 10, 0x30010, &other, &off), "a shared mapping of no known object");
	cr_assert_not(proc_table_shared_offset(pt, 10, 0x50000, &other, &off), "no mapping");
	/* a shared file mapping named by its build-id (no inode given) is keyed by its path */
	proc_table_mmap(pt, 10, 0x60000, 0x1000, 0x3000, PROT_READ | PROT_WRITE, MAP_SHARED, "/var/tmp/words");
	proc_table_mmap(pt, 12, 0x61000, 0x1000, 0x3000, PROT_READ | PROT_WRITE, MAP_SHARED, "/var/tmp/words");
	cr_assert(proc_table_shared_offset(pt, 10, 0x60008, &obj10, &off10));
	cr_assert(proc_table_shared_offset(pt, 12, 0x61008, &obj12, &off12));
	cr_assert(obj10 == obj12 && off10 == 0x3008 && off12 == 0x3008);
	proc_table_free(pt);
}
