/*
 * results_capture.c: relay the workload's output unchanged and read its
 * result lines on the way (results_capture.h says how record and stat use
 * it).  One thread polls the two pipes; every read goes straight to the
 * target descriptor, then its complete lines to the parser.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sigprof/base/options.h"
#include "sigprof/base/util.h"
#include "sigprof/commands/results_capture.h"

#define LINE_MAX_BYTES 1024 /* a longer line reaches the parser as its first LINE_MAX_BYTES */

struct capture_stream {
	int read_fd, write_fd;   /* the pipe */
	int target;              /* a copy of the descriptor the workload would have written to */
	char line[LINE_MAX_BYTES];
	size_t len;
	bool overlong;           /* the current line passed LINE_MAX_BYTES: the rest is not parsed */
};

struct result_capture {
	struct capture_stream streams[2]; /* the workload's 1 and 2 */
	int child_fds[2];
	int stop[2];                       /* a byte here: drain what is there and stop */
	struct result_parser *parser;
	pthread_t thread;
	bool running;
};

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

int result_capture_open(struct result_capture **out, struct result_parser *parser)
{
	struct result_capture *c = xcalloc(1, sizeof(*c));
	c->parser = parser;
	c->stop[0] = c->stop[1] = -1;
	for (int i = 0; i < 2; i++)
		c->streams[i] = (struct capture_stream){ .read_fd = -1, .write_fd = -1, .target = -1 };
	int err = 0;
	for (int i = 0; i < 2 && !err; i++) {
		struct capture_stream *s = &c->streams[i];
		int fds[2];
		if (pipe2(fds, O_CLOEXEC) < 0 || (s->target = fcntl(i + 1, F_DUPFD_CLOEXEC, 3)) < 0) {
			err = -errno;
			break;
		}
		s->read_fd = fds[0];
		s->write_fd = fds[1];
		c->child_fds[i] = fds[1];
	}
	if (!err && pipe2(c->stop, O_CLOEXEC) < 0)
		err = -errno;
	if (err) {
		result_capture_finish(c);
		return err;
	}
	*out = c;
	return 0;
}

const int *result_capture_child_fds(const struct result_capture *c)
{
	return c->child_fds;
}

static void write_all(struct capture_stream *s, const char *buf, size_t n)
{
	while (n && s->target >= 0) {
		ssize_t w = write(s->target, buf, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			/* the reader went away (| head): the workload gets its EPIPE from the closed pipe, as it would have */
			close_fd(&s->target);
			close_fd(&s->read_fd);
			return;
		}
		buf += w;
		n -= (size_t)w;
	}
}

static void parse_bytes(struct result_capture *c, struct capture_stream *s, const char *buf, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (buf[i] == '\n') {
			result_parser_line(c->parser, s->line, s->len);
			s->len = 0;
			s->overlong = false;
		} else if (s->len < sizeof(s->line)) {
			s->line[s->len++] = buf[i];
		} else if (!s->overlong) {
			result_parser_line(c->parser, s->line, s->len);
			s->overlong = true;
		}
	}
}

/* Read what one pipe holds now; false at its end. */
static bool relay_once(struct result_capture *c, struct capture_stream *s)
{
	char buf[65536];
	ssize_t n = read(s->read_fd, buf, sizeof(buf));
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return true;
	if (n <= 0)
		return false;
	write_all(s, buf, (size_t)n);
	parse_bytes(c, s, buf, (size_t)n);
	return s->read_fd >= 0;
}

static void *relay_thread(void *arg)
{
	struct result_capture *c = arg;
	for (;;) {
		struct pollfd fds[3];
		int map[3], n = 0;
		for (int i = 0; i < 2; i++)
			if (c->streams[i].read_fd >= 0) {
				fds[n] = (struct pollfd){ .fd = c->streams[i].read_fd, .events = POLLIN };
				map[n++] = i;
			}
		if (!n)
			break;
		fds[n] = (struct pollfd){ .fd = c->stop[0], .events = POLLIN };
		if (poll(fds, (nfds_t)n + 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (fds[n].revents) {
			/* told to stop: take what the pipes hold now, without waiting for their writers */
			for (int i = 0; i < 2; i++) {
				struct capture_stream *s = &c->streams[i];
				if (s->read_fd < 0)
					continue;
				fcntl(s->read_fd, F_SETFL, O_NONBLOCK);
				struct pollfd one = { .fd = s->read_fd, .events = POLLIN };
				while (s->read_fd >= 0 && poll(&one, 1, 0) > 0 && (one.revents & POLLIN)) {
					char buf[65536];
					ssize_t got = read(s->read_fd, buf, sizeof(buf));
					if (got <= 0)
						break;
					write_all(s, buf, (size_t)got);
					parse_bytes(c, s, buf, (size_t)got);
				}
			}
			break;
		}
		for (int k = 0; k < n; k++)
			if (fds[k].revents && !relay_once(c, &c->streams[map[k]]))
				close_fd(&c->streams[map[k]].read_fd);
	}
	/* a last line without its newline */
	for (int i = 0; i < 2; i++)
		if (c->streams[i].len && !c->streams[i].overlong)
			result_parser_line(c->parser, c->streams[i].line, c->streams[i].len);
	return NULL;
}

int result_capture_start(struct result_capture *c)
{
	for (int i = 0; i < 2; i++)
		close_fd(&c->streams[i].write_fd);
	int err = pthread_create(&c->thread, NULL, relay_thread, c);
	if (err)
		return -err;
	c->running = true;
	return 0;
}

void result_capture_finish(struct result_capture *c)
{
	if (!c)
		return;
	for (int i = 0; i < 2; i++)
		close_fd(&c->streams[i].write_fd);
	if (c->running) {
		struct timespec deadline;
		clock_gettime(CLOCK_REALTIME, &deadline);
		deadline.tv_sec += 1;
		if (pthread_timedjoin_np(c->thread, NULL, &deadline) != 0) {
			/* something the workload left running holds the pipes: stop at what they hold */
			char stop = 's';
			ssize_t written = write(c->stop[1], &stop, 1); /* an empty pipe of our own: room for a byte */
			(void)written;
			pthread_join(c->thread, NULL);
		}
	}
	for (int i = 0; i < 2; i++) {
		close_fd(&c->streams[i].read_fd);
		close_fd(&c->streams[i].target);
	}
	close_fd(&c->stop[0]);
	close_fd(&c->stop[1]);
	free(c);
}

int result_metric_option(const struct option_spec *s, void *field, const char *metric, char *err, size_t errlen)
{
	(void)s;
	struct result_parser **parser = field;
	if (!*parser)
		*parser = result_parser_new();
	char why[256];
	if (result_parser_add_metric(*parser, metric, why, sizeof(why)) < 0) {
		snprintf(err, errlen, "--metric %s: %s", QUOTED(metric), why);
		return -1;
	}
	return 0;
}

struct result_parser *result_parser_for_run(struct result_parser **parser, bool no_results, bool attached)
{
	if (no_results || attached)
		return NULL;
	if (!*parser)
		*parser = result_parser_new();
	result_parser_reset(*parser);
	return *parser;
}
