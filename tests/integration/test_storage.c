/*
 * test_storage.c: how recordings are stored (issue 13): zstd chunks by
 * default and their cut-short files, --switch-output pieces, and archives
 * reported elsewhere.  The workloads count what they do (signal_storm N
 * sends and handles N signals); the figures are checked against that.
 * Needs root (tracepoints); skipped, not passed, without.
 */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include <criterion/criterion.h>

#include "harness.h"

static void setup(void)
{
	require_perf_events();
	require_root();
}

TestSuite(storage, .init = setup);

/* `sigprof record -q OPTS -o DATA -- CMD`; skipped when the signal collector did not open. */
static void record_signals(const char *data, const char *opts, const char *cmd)
{
	char *out;
	int st = run_cmd(&out, true, "%s record -q %s -o %s -- %s", sigprof_bin(), opts, data, cmd);
	cr_assert_eq(st, 0, "recording %s exited %d: %s", cmd, st, out);
	free(out);
	if (json_number(data, ".meta.collectors[] | select(.name==\"signal\") | if .status==\"ok\" then 1 else 0 end") !=
	    1)
		collector_missing("signal", "the signal collector is unavailable here (see sigprof report -i %s)", data);
}

static double generated(const char *json)
{
	return jq_file(json, "[.signals[] | select(.name==\"SIGUSR1\") | .generated] | first // 0");
}

/* The file's header fields: version and flags. */
static void header_of(const char *path, uint32_t *version, uint32_t *flags)
{
	FILE *f = fopen(path, "rb");
	cr_assert_not_null(f, "%s", path);
	unsigned char h[24];
	cr_assert_eq(fread(h, 1, sizeof(h), f), sizeof(h));
	fclose(f);
	memcpy(version, h + 8, 4);
	memcpy(flags, h + 20, 4);
}

static unsigned char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	cr_assert_not_null(f, "%s", path);
	fseek(f, 0, SEEK_END);
	*len = (size_t)ftell(f);
	fseek(f, 0, SEEK_SET);
	unsigned char *b = malloc(*len ? *len : 1);
	cr_assert_eq(fread(b, 1, *len, f), *len);
	fclose(f);
	return b;
}

static void spill(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");
	cr_assert_not_null(f, "%s", path);
	cr_assert_eq(fwrite(data, 1, len, f), len);
	fclose(f);
}

Test(storage, default_recording_is_compressed_and_counts_what_no_compress_counts, .timeout = 120)
{
	const long n = 20000;
	char cmd[256];
	snprintf(cmd, sizeof(cmd), W "signal_storm %ld", n);
	const char *z = test_path("z.data"), *plain = test_path("plain.data");
	record_signals(z, "", cmd);
	record_signals(plain, "--no-compress", cmd);
	uint32_t version, flags;
	header_of(z, &version, &flags);
	cr_assert_eq(version, 2, "the default is format version 2");
	cr_assert_eq(flags, 1, "with its records in zstd chunks");
	header_of(plain, &version, &flags);
	cr_assert_eq(version, 1, "--no-compress writes version 1");
	cr_assert_eq(flags, 0);
	size_t zlen, plen;
	free(slurp(z, &zlen));
	free(slurp(plain, &plen));
	cr_assert_lt(zlen * 3, plen, "compressed %zu bytes, plain %zu: at least 3x smaller", zlen, plen);
	const char *zj = report_json_file(z, ""), *pj = report_json_file(plain, "");
	cr_assert_eq(generated(zj), n);
	cr_assert_eq(generated(pj), n);
	cr_assert_eq(jq_file(zj, ".meta.lost"), 0);
	cr_assert_eq(jq_file(zj, ".meta.truncated | if . then 1 else 0 end"), 0);
}

/* A real recording cut at every chunk boundary and inside chunks: each cut reports what its whole chunks hold. */
Test(storage, recording_cut_at_every_chunk_boundary_reports_up_to_it, .timeout = 300)
{
	const long n = 20000;
	char cmd[256];
	snprintf(cmd, sizeof(cmd), W "signal_storm %ld", n);
	const char *data = test_path("cut-src.data");
	/* 512-byte copies: the 4096-byte default leaf copy made 5 times the chunks, each reported twice */
	record_signals(data, "--call-graph dwarf,512", cmd);
	size_t len;
	unsigned char *file = slurp(data, &len);
	/* the file ends in its trailer's footer (format.h): the kernel symbols its samples name, in chunks of their own */
	cr_assert_gt(len, 64 + 24);
	uint64_t footer[3];
	memcpy(footer, file + len - 24, sizeof(footer));
	cr_assert_eq(footer[2], 0x524c494152545053ull, "the file ends in a trailer footer");
	size_t body_end = len - 24, trailer_at = (size_t)footer[0];
	cr_assert_eq(footer[1], body_end - trailer_at);
	size_t bounds[4096], nb = 0;
	for (size_t off = 64; off < body_end && nb < 4096;) {
		uint32_t h[4];
		cr_assert_leq(off + 16, len);
		memcpy(h, file + off, 16);
		cr_assert_eq(h[0], 0x4b4e4843u, "a chunk at %zu", off);
		off += 16 + ((h[1] + 7u) & ~7u);
		bounds[nb++] = off;
	}
	cr_assert_eq(bounds[nb - 1], body_end, "the chunks end at the footer");
	cr_assert_geq(nb, 2);
	bool trailer_on_a_bound = false;
	for (size_t k = 0; k < nb; k++)
		trailer_on_a_bound |= bounds[k] == trailer_at;
	cr_assert(trailer_on_a_bound, "the trailer begins a chunk (at %zu)", trailer_at);
	bounds[nb++] = len; /* and the whole file */
	double last = -1;
	const char *cut = test_path("cut.data");
	for (size_t k = 0; k < nb; k++) {
		size_t at[2] = { bounds[k], k + 2 < nb ? (bounds[k] + bounds[k + 1]) / 2 : 0 };
		for (int i = 0; i < 2 && at[i]; i++) {
			spill(cut, file, at[i]);
			char *out;
			int st = run_cmd(&out, false, "%s report --json -i %s 2>/dev/null > %s.json", sigprof_bin(), cut, cut);
			cr_assert_eq(st, 0, "report of the file cut at %zu exits 0: %s", at[i], out);
			free(out);
			char json[512];
			snprintf(json, sizeof(json), "%s.json", cut);
			double g = generated(json);
			/* every record of the body is there from the trailer's start on (a cut trailer is a warning) */
			bool whole = at[i] >= trailer_at;
			cr_assert_eq(jq_file(json, ".meta.truncated | if . then 1 else 0 end"), whole ? 0 : 1,
				     "cut at %zu of %zu", at[i], len);
			cr_assert(g >= 0 && g <= n, "cut at %zu: %.0f generated", at[i], g);
			if (i == 0) {
				cr_assert_geq(g, last, "a later cut holds at least as much");
				last = g;
			}
			if (i == 1) {
				/* inside chunk k+1: what chunk k's cut held */
				cr_assert_eq(g, last, "cut at %zu inside a chunk reads up to its start", at[i]);
			}
		}
	}
	cr_assert_eq(last, n, "the whole file holds every signal");
	free(file);
}

/* The names of the pieces of base in dir (sorted: in order, up to 9 pieces in one hundredth of a second), and whether any other file is there. */
static size_t pieces_of(const char *dir, const char *base, char names[][1024], size_t max, bool *stray)
{
	DIR *d = opendir(dir);
	cr_assert_not_null(d);
	size_t n = 0;
	*stray = false;
	struct dirent *e;
	size_t blen = strlen(base);
	while ((e = readdir(d))) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		/* BASE.YYYYmmddHHMMSScc, and .N after it for a second piece of one hundredth of a second */
		const char *suffix = e->d_name + blen + 17;
		if (strncmp(e->d_name, base, blen) == 0 && e->d_name[blen] == '.' &&
		    strspn(e->d_name + blen + 1, "0123456789") == 16 &&
		    (!*suffix || (suffix[0] == '.' && suffix[1] && !suffix[1 + strspn(suffix + 1, "0123456789")]))) {
			cr_assert_lt(n, max);
			snprintf(names[n++], 1024, "%.500s/%.500s", dir, e->d_name);
		} else if (!strstr(e->d_name, ".json")) {
			*stray = true;
		}
	}
	closedir(d);
	qsort(names, n, 1024, (int (*)(const void *, const void *))strcmp);
	return n;
}

Test(storage, switch_output_cuts_pieces_that_each_report_and_add_up_exactly, .timeout = 300)
{
	const long n = 150000;
	char cmd[256], opts[64];
	snprintf(cmd, sizeof(cmd), W "signal_storm %ld", n);
	char dir[512];
	snprintf(dir, sizeof(dir), "%s/pieces", test_dir());
	cr_assert_eq(run_cmd(NULL, true, "mkdir -p %s", dir), 0);
	char base[600];
	snprintf(base, sizeof(base), "%s/sw.data", dir);
	snprintf(opts, sizeof(opts), "--switch-output 1s");
	char *out;
	int st = run_cmd(&out, true, "%s record %s -o %s -- %s", sigprof_bin(), opts, base, cmd);
	cr_assert_eq(st, 0, "%s", out);
	char names[64][1024];
	bool stray;
	size_t np = pieces_of(dir, "sw.data", names, 64, &stray);
	cr_assert_geq(np, 2, "a run of more than 1 s is cut in pieces: %zu (%s)", np, out);
	cr_assert(!stray, "nothing but the pieces is left (no temporary file, no sw.data)");
	/* one line per piece closed, the closing line names the last */
	for (size_t i = 0; i + 1 < np; i++) {
		char want[400];
		snprintf(want, sizeof(want), "sigprof: piece %zu: ", i + 1);
		cr_assert(strstr(out, want) && strstr(out, names[i]), "piece %zu announced: %s", i + 1, out);
	}
	cr_assert(strstr(out, names[np - 1]) != NULL);
	free(out);
	double sum = 0, sum_totals = 0, others = 0, sigreturns = 0;
	for (size_t i = 0; i < np; i++) {
		const char *json = report_json_file(names[i], "");
		double g = generated(json);
		cr_assert_geq(g, 0, "%s has the signal figures", names[i]);
		sum += g;
		/* a handler that spans a piece's start returns there unattributed: counted apart, never lost */
		sigreturns += jq_file(json, "([.signals[] | select(.name==\"SIGUSR1\") | .sigreturns] | first // 0) + "
					    ".signals_unattributed_sigreturns");
		sum_totals += jq_file(json, "[.signals[] | select(.name==\"SIGUSR1\") | .totals.signal_generate] | first // 0");
		/* the tracepoint counts every signal generated while the workload ran: a timer of another process too */
		others += jq_file(json, "([.signals[] | select(.name!=\"SIGUSR1\") | .generated] | add // 0) + "
					".meta.unsampled_hits + (.signals_other_tasks_generated // 0)");
		cr_assert_eq(jq_file(json, ".meta.piece"), (double)(i + 1));
		cr_assert_eq(jq_file(json, ".meta.lost"), 0);
		cr_assert_eq(jq_file(json, ".meta.truncated | if . then 1 else 0 end"), 0, "%s is whole", names[i]);
		bool last = i + 1 == np;
		cr_assert_eq(jq_file(json, ".meta.switched | if . then 1 else 0 end"), last ? 0 : 1, "%s", names[i]);
		if (last)
			cr_assert_eq(jq_file(json, ".meta.exit_status"), 0);
		if (i > 0 && g > 0) {
			/* the workload's mappings came from an earlier piece: synthesized here, its frames are named */
			double named = stack_samples(json, "signal", "signal-generate", "any(.[]; .sym == \"main\")");
			cr_assert_geq(named, 0.99 * g, "piece %zu names the sender's main in its sending stacks: %.0f of %.0f (%s)",
				      i + 1, named, g, names[i]);
		}
	}
	cr_assert_eq(sum, n, "the pieces' signals add up to the %ld sent", n);
	cr_assert_eq(sigreturns, n, "the pieces' sigreturns add up to the %ld handled", n);
	/* each piece's exact totals are its window's growth: over the pieces, the run's total */
	cr_assert(sum_totals >= n && sum_totals <= n + others, "the pieces' totals add up to %.0f: %ld sent, %.0f others",
		  sum_totals, n, others);
}

/*
 * A piece that begins after the workload exited, its last records still in
 * the rings (--switch-output 1B cuts one at every drain): its head cannot
 * read the workload's mappings from /proc any more (a zombie's maps are
 * empty) and takes them as the previous piece's head found them, so every
 * piece names the sender's main in its sending stacks.
 */
Test(storage, pieces_after_the_workload_exited_name_its_frames, .timeout = 300)
{
	require_perf_events();
	require_root();
	const long n = 3000;
	char dir[512];
	snprintf(dir, sizeof(dir), "%s/pieces-exit", test_dir());
	cr_assert_eq(run_cmd(NULL, true, "mkdir -p %s", dir), 0);
	char *out;
	int st = run_cmd(&out, true, "%s record -q --switch-output 1B -o %s/se.data -- " W "signal_storm %ld", sigprof_bin(),
			 dir, n);
	cr_assert_eq(st, 0, "%s", out);
	free(out);
	static char names[128][1024];
	bool stray;
	size_t np = pieces_of(dir, "se.data", names, 128, &stray);
	cr_assert_geq(np, 3, "--switch-output 1B cuts a piece at every drain: %zu", np);
	cr_assert(!stray, "nothing but the pieces is left");
	double sum = 0;
	for (size_t i = 0; i < np; i++) {
		const char *json = report_json_file(names[i], "");
		double g = generated(json);
		sum += g;
		double named = stack_samples(json, "signal", "signal-generate", "any(.[]; .sym == \"main\")");
		cr_expect_geq(named, 0.99 * g, "piece %zu of %zu names main in its sending stacks: %.0f of %.0f (%s)", i + 1,
			      np, named, g, names[i]);
	}
	cr_assert_eq(sum, n, "the pieces' signals add up to the %ld sent", n);
}

Test(storage, switch_output_refuses_a_pipe_and_a_bad_spec)
{
	char *out;
	int st = run_cmd(&out, false, "%s record --switch-output 1s -o - -- true 2>&1 >/dev/null", sigprof_bin());
	cr_assert_eq(st, 2);
	cr_assert(strstr(out, "--switch-output writes files: it cannot go with -o -"), "%s", out);
	free(out);
	st = run_cmd(&out, true, "%s record --switch-output 10x -o %s -- true", sigprof_bin(), test_path("x.data"));
	cr_assert_eq(st, 2);
	cr_assert(strstr(out, "--switch-output '10x': expected a size") || strstr(out, "--switch-output 10x: expected"),
		  "%s", out);
	free(out);
	cr_assert_neq(access(test_path("x.data"), F_OK), 0, "nothing written");
}

/* ---- portable recordings: sigprof archive, --symfs, debuginfod ---- */

/* The sending stacks' count whose frames name main, in a report of data with opts. */
static double sends_from_main(const char *data, const char *opts, const char *env)
{
	char *out;
	int st = run_cmd(&out, false, "%s %s report --json %s -i %s > %s.json", env ? env : "", sigprof_bin(), opts,
			 data, data);
	cr_assert_eq(st, 0, "report %s: %s", opts, out);
	free(out);
	char json[700];
	snprintf(json, sizeof(json), "%s.json", data);
	return stack_samples(json, "signal", "signal-generate", "any(.[]; .sym == \"main\")");
}

static double missing_note(const char *data, const char *opts, const char *file)
{
	char filter[700];
	snprintf(filter, sizeof(filter), "[.meta.notes[] | select(contains(\"could not be read\") and contains(\"%s\"))] | length",
		 file);
	char json[700];
	snprintf(json, sizeof(json), "%s.json", data);
	(void)opts;
	return jq_file(json, filter);
}

/*
 * The program at prog (a copy of signal_storm) recorded, archived, moved
 * away: its frames are named from the archive, and from the archive
 * unpacked by tar(1).  data, tar and symfs are made in dir.
 */
static void archive_round_trip(const char *prog)
{
	const char *dir = test_dir();
	char data[600], tar[600], symfs[600];
	snprintf(data, sizeof(data), "%s/ar.data", dir);
	snprintf(tar, sizeof(tar), "%s/ar.data.tar", dir);
	snprintf(symfs, sizeof(symfs), "%s/symfs", dir);
	cr_assert_eq(run_cmd(NULL, true, "mkdir -p \"$(dirname '%s')\" && cp %ssignal_storm '%s'", prog, W, prog), 0);
	char cmd[1200];
	snprintf(cmd, sizeof(cmd), "'%s' 3000", prog);
	record_signals(data, "", cmd);
	cr_assert_eq(sends_from_main(data, "", NULL), 3000, "with the binary in place, every send names main");

	char *out;
	int st = run_cmd(&out, true, "%s archive %s", sigprof_bin(), data);
	cr_assert_eq(st, 0, "%s", out);
	cr_assert(strstr(out, "written to ") && strstr(out, tar), "%s", out);
	cr_assert_null(strstr(out, "could not be packed"), "%s", out);
	free(out);
	/* a real tar: tar(1) lists the program at its path and the manifest */
	st = run_cmd(&out, true, "tar -tf %s", tar);
	cr_assert_eq(st, 0, "%s", out);
	cr_assert(strstr(out, prog + 1) && strstr(out, "sigprof-archive.txt"), "%s", out);
	free(out);

	/* the original gone: the report names it as missing, never silently */
	cr_assert_eq(run_cmd(NULL, true, "mv '%s' '%s.renamed'", prog, prog), 0);
	cr_assert_eq(sends_from_main(data, "", NULL), 0);
	cr_assert_eq(missing_note(data, "", prog), 1, "the header names %s", prog);
	/* from the archive, and from the archive unpacked by tar(1) as a --symfs directory */
	char opts[700];
	snprintf(opts, sizeof(opts), "--symfs %s", tar);
	char env[700];
	snprintf(env, sizeof(env), "TMPDIR=%s/unpack", dir);
	cr_assert_eq(run_cmd(NULL, true, "mkdir -p %s/unpack", dir), 0);
	cr_assert_eq(sends_from_main(data, opts, env), 3000, "--symfs ARCHIVE names main again");
	cr_assert_eq(missing_note(data, opts, prog), 0);
	cr_assert_eq(run_cmd(NULL, true, "mkdir -p %s && tar -xf %s -C %s", symfs, tar, symfs), 0);
	snprintf(opts, sizeof(opts), "--symfs %s", symfs);
	cr_assert_eq(sends_from_main(data, opts, NULL), 3000, "--symfs DIR names main again");
	/* an archive unpacks into a private directory that is gone after the report */
	st = run_cmd(&out, false, "ls -A %s/unpack | wc -l", dir);
	cr_assert_eq(atoi(out), 0, "no unpacked archive left: %s", out);
	free(out);
}

Test(storage, archive_reports_with_the_original_binary_gone, .timeout = 120)
{
	char prog[600], data[600];
	snprintf(prog, sizeof(prog), "%s/storm", test_dir());
	archive_round_trip(prog);
	/* a file that is no archive is one error line */
	snprintf(data, sizeof(data), "%s/ar.data", test_dir());
	char *out;
	int st = run_cmd(&out, true, "%s report -i %s --symfs %s", sigprof_bin(), data, data);
	cr_assert_eq(st, 2);
	cr_assert(strstr(out, "not a sigprof archive"), "%s", out);
	free(out);
}

/*
 * A program whose path is over 255 characters (more than ustar's name and
 * prefix fields hold) is packed under a pax header, read back by tar(1) and
 * by report --symfs.
 */
Test(storage, archive_of_a_program_with_a_path_over_255_characters, .timeout = 120)
{
	char prog[1024];
	snprintf(prog, sizeof(prog), "%s", test_dir());
	for (int i = 0; strlen(prog) <= 300; i++)
		snprintf(prog + strlen(prog), sizeof(prog) - strlen(prog), "/%070d", i);
	snprintf(prog + strlen(prog), sizeof(prog) - strlen(prog), "/storm");
	archive_round_trip(prog);
}

/* The GNU build-id of an ELF file, as readelf(1) prints it (the ground truth), into id. */
static void readelf_build_id(const char *path, char *id, size_t len)
{
	char *out;
	cr_assert_eq(run_cmd(&out, false, "readelf -n %s | sed -n 's/.*Build ID: *//p'", path), 0);
	out[strcspn(out, "\n")] = '\0';
	cr_assert_gt(strlen(out), 8, "%s has a build-id", path);
	snprintf(id, len, "%s", out);
	free(out);
}

/*
 * The recording names each file's build-id (MMAP2 with attr.build_id): a
 * program rebuilt since is never read for it.  Its frames stay unnamed and
 * the header says why, with both build-ids; the debug file of the recorded
 * build, found by build-id, stands in; the archive made before the rebuild
 * names them again; an archive made after it leaves the other build out.
 */
Test(storage, a_rebuilt_program_is_never_read_for_the_recording, .timeout = 120)
{
	const char *dir = test_dir();
	char prog[600], data[600], tar[600], later[600];
	snprintf(prog, sizeof(prog), "%s/storm", dir);
	snprintf(data, sizeof(data), "%s/rebuilt.data", dir);
	snprintf(tar, sizeof(tar), "%s/before.tar", dir);
	snprintf(later, sizeof(later), "%s/after.tar", dir);
	cr_assert_eq(run_cmd(NULL, true, "cp %ssignal_storm %s", W, prog), 0);
	char recorded[128], other[128];
	readelf_build_id(prog, recorded, sizeof(recorded));
	char cmd[700];
	snprintf(cmd, sizeof(cmd), "%s 3000", prog);
	record_signals(data, "", cmd);
	cr_assert_eq(sends_from_main(data, "", NULL), 3000);
	char *out;
	cr_assert_eq(run_cmd(&out, true, "%s archive -o %s %s", sigprof_bin(), tar, data), 0, "%s", out);
	free(out);

	/* "rebuilt": another program at the same path */
	cr_assert_eq(run_cmd(NULL, true, "cp %scpu_burner %s", W, prog), 0);
	readelf_build_id(prog, other, sizeof(other));
	cr_assert_str_neq(recorded, other);
	cr_assert_eq(sends_from_main(data, "", NULL), 0, "nothing is named from the other build");
	char filter[1024];
	snprintf(filter, sizeof(filter),
		 "[.meta.notes[] | select(contains(\"%s\") and contains(\"another build\") and contains(\"%s\") and "
		 "contains(\"%s\"))] | length",
		 prog, recorded, other);
	char json[700];
	snprintf(json, sizeof(json), "%s.json", data);
	cr_assert_eq(jq_file(json, filter), 1, "the header names %s with both build-ids", prog);

	/* the recorded build's debug file under a debug root, by build-id: it stands in, and says so */
	char root[600];
	snprintf(root, sizeof(root), "%s/debugroot", dir);
	cr_assert_eq(run_cmd(NULL, true, "mkdir -p %s/.build-id/%.2s && objcopy --only-keep-debug %ssignal_storm "
					 "%s/.build-id/%.2s/%s.debug",
			     root, recorded, W, root, recorded, recorded + 2),
		     0);
	char opts[700];
	snprintf(opts, sizeof(opts), "--debug-dirs %s", root);
	/* (its symbols, not its code: the unwinding stops in the program, at send_signals) */
	sends_from_main(data, opts, NULL);
	cr_assert_eq(stack_samples(json, "signal", "signal-generate", "any(.[]; .sym == \"send_signals\")"), 3000,
		     "the recorded build's debug file names the program's frame");
	snprintf(filter, sizeof(filter),
		 "[.meta.notes[] | select(contains(\"another build\") and contains(\"debug file\") and "
		 "contains(\"%s\"))] | length",
		 prog);
	cr_assert_eq(jq_file(json, filter), 1, "the header says the debug file stood in");

	/* the archive made before the rebuild has the recorded build */
	snprintf(opts, sizeof(opts), "--symfs %s", tar);
	cr_assert_eq(sends_from_main(data, opts, NULL), 3000);
	/* one made after it leaves the other build out, and says so */
	int st = run_cmd(&out, true, "%s archive -o %s %s", sigprof_bin(), later, data);
	cr_assert_eq(st, 0, "%s", out);
	cr_assert(strstr(out, "another build") && strstr(out, recorded) && strstr(out, other), "%s", out);
	free(out);
	st = run_cmd(&out, true, "tar -tf %s", later);
	cr_assert_eq(st, 0, "%s", out);
	cr_assert_null(strstr(out, prog + 1), "the other build is not packed: %s", out);
	free(out);
}

Test(storage, archive_in_a_clean_mount_namespace, .timeout = 120)
{
	if (run_cmd(NULL, true, "unshare -m true") != 0)
		skip_environment("unshare -m does not work here: no mount namespace for the test");
	const char *dir = test_dir();
	char bin[600], data[600], tar[600];
	snprintf(bin, sizeof(bin), "%s/bin", dir);
	snprintf(data, sizeof(data), "%s/ns.data", dir);
	snprintf(tar, sizeof(tar), "%s/ns.tar", dir);
	cr_assert_eq(run_cmd(NULL, true, "mkdir -p %s %s/empty && cp %ssignal_storm %s/storm", bin, dir, W, bin), 0);
	char cmd[700];
	snprintf(cmd, sizeof(cmd), "%s/storm 2000", bin);
	record_signals(data, "", cmd);
	char *out;
	cr_assert_eq(run_cmd(&out, true, "%s archive -o %s %s", sigprof_bin(), tar, data), 0, "%s", out);
	free(out);
	/* the program's directory hidden by an empty one: only the archive has it */
	char *both;
	int st = run_cmd(&both, true,
			 "unshare -m sh -c 'mount --bind %s/empty %s && %s report --json -i %s > %s.plain.json && "
			 "%s report --json --symfs %s -i %s > %s.ar.json'",
			 dir, bin, sigprof_bin(), data, data, sigprof_bin(), tar, data, data);
	cr_assert_eq(st, 0, "%s", both);
	free(both);
	char plain[700], ar[700];
	snprintf(plain, sizeof(plain), "%s.plain.json", data);
	snprintf(ar, sizeof(ar), "%s.ar.json", data);
	cr_assert_eq(stack_samples(plain, "signal", "signal-generate", "any(.[]; .sym == \"main\")"), 0);
	cr_assert_eq(stack_samples(ar, "signal", "signal-generate", "any(.[]; .sym == \"main\")"), 2000);
	cr_assert_eq(access(data, F_OK), 0, "outside the namespace the recording is untouched");
}

/*
 * A stripped program whose debug file only a local debuginfod serves: with
 * DEBUGINFOD_URLS the report fetches it by build-id and names main; without,
 * it cannot.  Debian's debuginfod package is the server (no network).
 */
Test(storage, debuginfod_fetches_a_missing_debug_file_by_build_id, .timeout = 120)
{
	if (run_cmd(NULL, true, "command -v debuginfod && command -v debuginfod-find && command -v objcopy") != 0)
		skip_environment("debuginfod (Debian's debuginfod package) or objcopy is not installed: no local server");
	const char *dir = test_dir();
	char srv[600], prog[600], data[600];
	snprintf(srv, sizeof(srv), "%s/srv", dir);
	snprintf(prog, sizeof(prog), "%s/stripped", dir);
	snprintf(data, sizeof(data), "%s/di.data", dir);
	cr_assert_eq(run_cmd(NULL, true, "mkdir -p %s && cp %ssignal_storm %s && objcopy --only-keep-debug %s %s/d.debug "
				      "&& strip --strip-all %s", srv, W, prog, prog, srv, prog), 0);
	int port = 20000 + getpid() % 20000;
	char *out;
	cr_assert_eq(run_cmd(&out, false, "debuginfod -F %s -p %d -d %s/db.sqlite > %s/dlog 2>&1 & echo $!", srv, port, dir,
			     dir), 0);
	int server = atoi(out);
	free(out);
	cr_assert_gt(server, 0);
	char bid[128] = "";
	cr_assert_eq(run_cmd(&out, false, "readelf -n %s | awk '/Build ID/ {print $3}'", prog), 0);
	snprintf(bid, sizeof(bid), "%.*s", (int)strcspn(out, "\n"), out);
	free(out);
	bool ready = false;
	for (int i = 0; i < 60 && !ready; i++) {
		/* a cache of its own each time: debuginfod's client remembers a miss (the server still indexing) */
		ready = run_cmd(NULL, true, "DEBUGINFOD_URLS=http://127.0.0.1:%d DEBUGINFOD_CACHE_PATH=%s/probe%d "
					    "debuginfod-find debuginfo %s", port, dir, i, bid) == 0;
		if (!ready)
			usleep(250000);
	}
	char cmd[700];
	snprintf(cmd, sizeof(cmd), "%s 2000", prog);
	if (ready)
		record_signals(data, "", cmd);
	double without = ready ? sends_from_main(data, "", "DEBUGINFOD_URLS=") : -1;
	char env[700];
	snprintf(env, sizeof(env), "DEBUGINFOD_URLS=http://127.0.0.1:%d DEBUGINFOD_CACHE_PATH=%s/cache", port, dir);
	double with = ready ? sends_from_main(data, "", env) : -1;
	kill(server, SIGTERM);
	cr_assert(ready, "the local debuginfod did not serve %s within 15 s (see %s/dlog)", bid, dir);
	cr_assert_eq(without, 0, "stripped, without its debug file: main is not named");
	cr_assert_eq(with, 2000, "fetched by build-id from the local server: every send names main");
}

/* Entries in dir (not . and ..). */
static int entries_in(const char *dir)
{
	DIR *d = opendir(dir);
	int n = 0;
	for (struct dirent *e; d && (e = readdir(d));)
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	if (d)
		closedir(d);
	return n;
}

/* Wait up to 20 s for dir to hold some entries (at_least_one) or none; whether it did. */
static bool wait_entries(const char *dir, bool at_least_one)
{
	for (int i = 0; i < 400; i++) {
		int n = entries_in(dir);
		if (at_least_one ? n > 0 : n == 0)
			return true;
		usleep(50000);
	}
	return false;
}

/*
 * report --symfs ARCHIVE unpacks into a private temporary directory that
 * must not outlive the report, however it ends: SIGPIPE (report | head),
 * SIGINT, SIGTERM, SIGHUP, SIGKILL each sent while the report runs (its
 * directory exists: the premise, waited for).
 */
Test(storage, symfs_archive_unpacked_directory_is_removed_whatever_ends_the_report, .timeout = 240)
{
	require_perf_events();
	require_root();
	const char *dir = test_dir();
	char data[600], tar[600], unpack[600];
	snprintf(data, sizeof(data), "%s/sym.data", dir);
	snprintf(tar, sizeof(tar), "%s/sym.tar", dir);
	snprintf(unpack, sizeof(unpack), "%s/unpack-signals", dir);
	free(record_workload(data, "-e cpu", W "signal_storm 2000 >/dev/null"));
	cr_assert_eq(run_cmd(NULL, true, "%s archive -q -o %s %s && mkdir -p %s", sigprof_bin(), tar, data, unpack), 0);
	static const int signals[] = { SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGKILL };
	for (size_t i = 0; i < sizeof(signals) / sizeof(signals[0]); i++) {
		/*
		 * The report writes into a pipe of one page that nobody reads: it unpacks, then blocks in its
		 * first writes, its directory there, until the signal (SIGPIPE: the reader closes, as head does).
		 */
		int pipe_fds[2];
		cr_assert_eq(pipe(pipe_fds), 0);
		fcntl(pipe_fds[1], F_SETPIPE_SZ, 4096);
		pid_t pid = fork();
		cr_assert_geq(pid, 0);
		if (pid == 0) {
			for (int s = 1; s < NSIG; s++)
				signal(s, SIG_DFL);
			setenv("TMPDIR", unpack, 1);
			dup2(pipe_fds[1], STDOUT_FILENO);
			close(pipe_fds[0]);
			close(pipe_fds[1]);
			execl(sigprof_bin(), sigprof_bin(), "report", "-i", data, "--symfs", tar, "--stacks", "100000",
			      (char *)NULL);
			_exit(127);
		}
		close(pipe_fds[1]);
		bool unpacked = wait_entries(unpack, true);
		if (signals[i] == SIGPIPE)
			close(pipe_fds[0]);
		else
			kill(pid, signals[i]);
		int status;
		waitpid(pid, &status, 0);
		if (signals[i] != SIGPIPE)
			close(pipe_fds[0]);
		if (!unpacked)
			skip_premise("the report ended before its directory appeared: cannot test signal %d", signals[i]);
		cr_expect(WIFSIGNALED(status) && WTERMSIG(status) == signals[i], "the report did not end by signal %d (%s)",
			  signals[i], strsignal(signals[i]));
		cr_assert(wait_entries(unpack, false), "after signal %d (%s), %s still holds %d entries", signals[i],
			  strsignal(signals[i]), unpack, entries_in(unpack));
	}
}
