/*
 * touch_memory MB: writes MB megabytes of fresh memory, then prints its
 * own peak resident set as the kernel keeps it for this program's
 * address space (VmHWM in /proc/self/status, in KB): the ground truth of
 * the maximum resident set size a profiler reports for it.  Unlike
 * getrusage(), VmHWM starts at the exec: nothing of the process that
 * forked this one is in it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	size_t mb = argc > 1 ? strtoul(argv[1], NULL, 10) : 32;
	char *p = malloc(mb << 20);
	if (!p)
		return 1;
	memset(p, 1, mb << 20);
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long hwm = -1;
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmHWM: %ld kB", &hwm) == 1)
			break;
	if (f)
		fclose(f);
	printf("touch_memory: %zu MB touched, VmHWM %ld kB\n", mb, hwm);
	free(p);
	return hwm > 0 ? 0 : 1;
}
