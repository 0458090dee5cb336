/*
 * test_trampoline.c: stripped libraries still name their signal return
 * trampoline.  Ground truth comes from the kernel: after sigaction(), the
 * action read back holds the sa_restorer that glibc installed, i.e. the
 * address of libc's __restore_rt in this process.
 */
#include <dlfcn.h>
#include <link.h>
#include <signal.h>
#include <string.h>

#include <criterion/criterion.h>

#include "sigprof/symbolize/symbolize.h"

static void on_usr1(int sig)
{
	(void)sig;
}

Test(trampoline, libc_restore_rt_is_named_even_when_stripped)
{
#if !defined(__x86_64__)
	cr_skip_test("environment: the trampoline pattern is x86-64's");
#endif
	struct sigaction sa = { 0 }, old;
	sa.sa_handler = on_usr1;
	cr_assert_eq(sigaction(SIGUSR1, &sa, NULL), 0);
	cr_assert_eq(sigaction(SIGUSR1, NULL, &old), 0);
	void *restorer = (void *)old.sa_restorer;
	cr_assert(restorer, "glibc installed no sa_restorer");

	Dl_info info;
	cr_assert(dladdr(restorer, &info) && info.dli_fname, "dladdr found no object for the restorer");
	struct symtab *tab;
	cr_assert_eq(symtab_from_elf_file(info.dli_fname, &tab), 0, "cannot load %s", info.dli_fname);
	uint64_t vaddr = (uint64_t)((uintptr_t)restorer - (uintptr_t)info.dli_fbase);
	const struct sym *at = symtab_lookup(tab, SYM_FUNC, vaddr);
	cr_assert(at, "no symbol covers the restorer at %s+0x%llx", info.dli_fname, (unsigned long long)vaddr);
	cr_assert_str_eq(at->name, "__restore_rt");
	/* a return address looked up one byte back still lands in it */
	const struct sym *before = symtab_lookup(tab, SYM_FUNC, vaddr - 1);
	cr_assert(before && strcmp(before->name, "__restore_rt") == 0, "vaddr-1 is %s",
		  before ? before->name : "(none)");
	/* and the IP after its syscall instruction (mov is 7 bytes, syscall 2) */
	const struct sym *after = symtab_lookup(tab, SYM_FUNC, vaddr + 9);
	cr_assert(after && strcmp(after->name, "__restore_rt") == 0, "vaddr+9 is %s", after ? after->name : "(none)");
	symtab_free(tab);
}
