/*
 * hostile_symbol.c: a busy loop in a function whose symbol is markup and
 * terminal escapes, "</script><p id=pwned-sym>" then ESC [31m and the
 * UTF-8 C1 control c2 9b (CSI): what a hostile binary's symbol table can
 * hold.  The tests copy this program under a hostile file name too and
 * check that no output (text report, script, the HTML page in a browser)
 * lets any of it act (its comm, the file name's first 15 bytes, too).
 * argv[1]: iterations (default 1e8); further arguments are ignored (the
 * tests pass hostile ones).
 */
#include <stdlib.h>

#define HOSTILE "\"</script><p id=pwned-sym>\x1b[31m\xc2\x9b\""

/* x * 1000003 ^ 7, in a function that only assembly can name so */
__asm__(".text\n"
	".globl " HOSTILE "\n"
	".type " HOSTILE ", @function\n"
	HOSTILE ":\n"
	"	mov %rdi, %rax\n"
	"	imul $1000003, %rax, %rax\n"
	"	xor $7, %rax\n"
	"	ret\n"
	".size " HOSTILE ", .-" HOSTILE "\n");

static unsigned long (*volatile hostile)(unsigned long);

int main(int argc, char **argv)
{
	__asm__("lea " HOSTILE "(%%rip), %0" : "=r"(hostile));
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 100000000ul, x = 1;
	for (unsigned long i = 0; i < n; i++)
		x = hostile(x + i);
	return (int)(x & 1) * 0;
}
