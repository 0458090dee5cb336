/*
 * workload_image.c: the executable image of the workload spawner
 * (profiler/commands/spawner/workload_spawner.c), carried inside sigprof
 * so that there is no second file to install or find; workload.c runs it
 * from a memfd.  The build gives its path in WORKLOAD_SPAWNER_IMAGE; a
 * build without it (the fuzz targets) carries an empty image, and
 * workloads are then forked from sigprof itself.
 */
#ifdef WORKLOAD_SPAWNER_IMAGE
__asm__(".section .rodata\n"
	".balign 16\n"
	".globl workload_spawner_image\n"
	"workload_spawner_image:\n"
	".incbin \"" WORKLOAD_SPAWNER_IMAGE "\"\n"
	".globl workload_spawner_image_end\n"
	"workload_spawner_image_end:\n"
	".previous\n");
#else
__asm__(".section .rodata\n"
	".globl workload_spawner_image\n"
	"workload_spawner_image:\n"
	".globl workload_spawner_image_end\n"
	"workload_spawner_image_end:\n"
	".previous\n");
#endif
