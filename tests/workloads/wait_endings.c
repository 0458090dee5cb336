/*
 * wait_endings MODE N: waits whose ending is known, for the wake linker
 * (docs/waits.md; tests/integration/test_waits.c).  Each mode prints its
 * ground truth on one line: the tids involved and what its waits did.
 *
 *   hold N     the holder takes held_mutex in hold_long(), spins there at
 *              least 10 ms and until the waiter is blocked on it (the lock
 *              word reads 2: contended), and unlocks it there; the waiter
 *              blocks in pthread_mutex_lock each round.  Every blocking wait
 *              on held_mutex ends by the holder's pthread_mutex_unlock from
 *              hold_long, and the holder spent the wait in hold_long.
 *              "holder T waiter T rounds N"
 *   condvar N  the consumer waits in pthread_cond_wait on ready_cond; the
 *              producer, once the consumer is waiting, spends 2 ms in
 *              produce_item() and signals it.  "producer T consumer T rounds N"
 *   chain N    A holds first_mutex 10 ms in hold_first(), and until B
 *              and C are blocked; B, holding second_mutex, waits for first_mutex, then works 5 ms in
 *              work_second() and releases both; C waits for second_mutex.
 *              C's wait is ended by B, whose wait (ended by A) ended during
 *              it: the chain C <- B <- A.  "a T b T c T rounds N"
 *   timeout N  N FUTEX_WAITs with a 2 ms timeout on timeout_word, which
 *              nobody wakes.  "timeouts K" (ETIMEDOUT returns)
 *   signal N   a thread waits on signal_word (no timeout) and main sends it
 *              SIGUSR1 (a handler without SA_RESTART) once the thread
 *              sleeps.  "waiter T interrupted K" (EINTR returns)
 *   timer N    N nanosleeps of 2 ms in sleep_on_timer(): sleeps outside any
 *              futex call, each ended by the timer's interrupt.  "sleeps N"
 *   shared N   a child process wakes its parent's FUTEX_WAIT on a word in a
 *              MAP_SHARED mapping, after 5 ms in child_release().
 *              "parent P child C woken K" (wait calls that returned 0)
 *   pipe N     the reader blocks in read() on a pipe; the writer, after 2 ms
 *              in send_message(), writes a byte to it there and blocks
 *              reading the reader's reply.  Both run on one CPU, so the
 *              writer's switch-out is mostly the reader's switch-in.  Each
 *              of the reader's sleeps is ended by the writer's write(), a
 *              waking outside any futex call.  "writer T reader T rounds N"
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long rounds = 20;

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static long futex_call(_Atomic int *word, int op, int val, const struct timespec *timeout)
{
	return syscall(SYS_futex, word, op, val, timeout, NULL, 0);
}

static pid_t gettid_now(void)
{
	return (pid_t)syscall(SYS_gettid);
}

/* Whether a glibc mutex is locked with waiters (its lock word is 2). */
static bool contended(pthread_mutex_t *m)
{
	return __atomic_load_n(&m->__data.__lock, __ATOMIC_ACQUIRE) == 2;
}

/* Spin at least ms milliseconds and until done(m) holds. */
__attribute__((noinline)) static void spin_until(unsigned ms, pthread_mutex_t *m)
{
	uint64_t end = now_ns() + ms * 1000000ull;
	volatile unsigned long sink = 0;
	while (now_ns() < end || (m && !contended(m)))
		for (int i = 0; i < 1000; i++)
			sink += (unsigned long)i;
}

static void wait_until(_Atomic long *flag, long value)
{
	while (atomic_load(flag) < value)
		sched_yield();
}

/* ---- hold ---- */

static pthread_mutex_t held_mutex = PTHREAD_MUTEX_INITIALIZER;
static _Atomic long held_round, waited_round;
static _Atomic pid_t holder_tid, waiter_tid;

__attribute__((noinline)) static void hold_long(long r)
{
	pthread_mutex_lock(&held_mutex);
	atomic_store(&held_round, r);
	spin_until(10, &held_mutex);
	pthread_mutex_unlock(&held_mutex);
}

static void *holder(void *arg)
{
	(void)arg;
	atomic_store(&holder_tid, gettid_now());
	for (long r = 1; r <= rounds; r++) {
		hold_long(r);
		wait_until(&waited_round, r);
	}
	return NULL;
}

__attribute__((noinline)) static void wait_for_holder(void)
{
	pthread_mutex_lock(&held_mutex);
	pthread_mutex_unlock(&held_mutex);
}

static void *waiter(void *arg)
{
	(void)arg;
	atomic_store(&waiter_tid, gettid_now());
	for (long r = 1; r <= rounds; r++) {
		wait_until(&held_round, r);
		wait_for_holder();
		atomic_store(&waited_round, r);
	}
	return NULL;
}

/* ---- condvar ---- */

static pthread_mutex_t queue_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ready_cond = PTHREAD_COND_INITIALIZER;
static long items, consumer_waiting;
static _Atomic pid_t producer_tid, consumer_tid;

__attribute__((noinline)) static void produce_item(void)
{
	spin_until(2, NULL);
	items++;
}

static void *producer(void *arg)
{
	(void)arg;
	atomic_store(&producer_tid, gettid_now());
	for (long r = 1; r <= rounds; r++) {
		pthread_mutex_lock(&queue_mutex);
		while (!consumer_waiting) {
			pthread_mutex_unlock(&queue_mutex);
			sched_yield();
			pthread_mutex_lock(&queue_mutex);
		}
		consumer_waiting = 0;
		pthread_mutex_unlock(&queue_mutex);
		/* the consumer sleeps in pthread_cond_wait (its mutex released) while this works */
		produce_item();
		pthread_mutex_lock(&queue_mutex);
		pthread_cond_signal(&ready_cond);
		pthread_mutex_unlock(&queue_mutex);
	}
	return NULL;
}

__attribute__((noinline)) static void consume_item(long r)
{
	pthread_mutex_lock(&queue_mutex);
	consumer_waiting = 1;
	while (items < r)
		pthread_cond_wait(&ready_cond, &queue_mutex);
	pthread_mutex_unlock(&queue_mutex);
}

static void *consumer(void *arg)
{
	(void)arg;
	atomic_store(&consumer_tid, gettid_now());
	for (long r = 1; r <= rounds; r++)
		consume_item(r);
	return NULL;
}

/* ---- chain ---- */

static pthread_mutex_t first_mutex = PTHREAD_MUTEX_INITIALIZER, second_mutex = PTHREAD_MUTEX_INITIALIZER;
static _Atomic long a_round, b_round, c_round;
static _Atomic pid_t a_tid, b_tid, c_tid;

__attribute__((noinline)) static void hold_first(long r)
{
	pthread_mutex_lock(&first_mutex);
	atomic_store(&a_round, r);
	/* B waits on first_mutex and C on second_mutex (held by B) before A lets go */
	spin_until(10, &first_mutex);
	spin_until(0, &second_mutex);
	pthread_mutex_unlock(&first_mutex);
}

static void *chain_a(void *arg)
{
	(void)arg;
	atomic_store(&a_tid, gettid_now());
	for (long r = 1; r <= rounds; r++) {
		wait_until(&c_round, r - 1);
		hold_first(r);
	}
	return NULL;
}

__attribute__((noinline)) static void work_second(void)
{
	spin_until(5, &second_mutex);
}

static void *chain_b(void *arg)
{
	(void)arg;
	atomic_store(&b_tid, gettid_now());
	for (long r = 1; r <= rounds; r++) {
		wait_until(&a_round, r);
		pthread_mutex_lock(&second_mutex);
		atomic_store(&b_round, r);
		pthread_mutex_lock(&first_mutex);
		work_second();
		pthread_mutex_unlock(&first_mutex);
		pthread_mutex_unlock(&second_mutex);
	}
	return NULL;
}

__attribute__((noinline)) static void wait_second(void)
{
	pthread_mutex_lock(&second_mutex);
	pthread_mutex_unlock(&second_mutex);
}

static void *chain_c(void *arg)
{
	(void)arg;
	atomic_store(&c_tid, gettid_now());
	for (long r = 1; r <= rounds; r++) {
		wait_until(&b_round, r);
		wait_second();
		atomic_store(&c_round, r);
	}
	return NULL;
}

/* ---- timeout, signal, timer ---- */

static _Atomic int timeout_word, signal_word;
static _Atomic long signal_armed;
static _Atomic pid_t signal_tid;
static _Atomic long interrupted;

static void on_signal(int sig)
{
	(void)sig;
}

static void *signal_waiter(void *arg)
{
	(void)arg;
	atomic_store(&signal_tid, gettid_now());
	for (long r = 1; r <= rounds; r++) {
		atomic_store(&signal_armed, r);
		if (futex_call(&signal_word, FUTEX_WAIT_PRIVATE, 0, NULL) < 0 && errno == EINTR)
			atomic_fetch_add(&interrupted, 1);
	}
	return NULL;
}

/* Whether thread tid of this process sleeps (state S in /proc). */
static bool thread_sleeps(pid_t tid)
{
	char path[64], buf[512];
	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	const char *paren = strrchr(buf, ')');
	return paren && paren[1] == ' ' && paren[2] == 'S';
}

__attribute__((noinline)) static void sleep_on_timer(void)
{
	struct timespec ts = { 0, 2000000 };
	nanosleep(&ts, NULL);
}

/* ---- shared ---- */

__attribute__((noinline)) static void child_release(_Atomic int *word)
{
	spin_until(5, NULL);
	atomic_store(word, 1);
	futex_call(word, FUTEX_WAKE, 1, NULL);
}

static int run_shared(void)
{
	_Atomic int *shared = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shared == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	long woken = 0;
	pid_t child = 0;
	for (long r = 1; r <= rounds; r++) {
		atomic_store(&shared[0], 0); /* the word */
		atomic_store(&shared[1], 0); /* the parent is about to wait */
		child = fork();
		if (child == 0) {
			while (!atomic_load(&shared[1]))
				sched_yield();
			child_release(&shared[0]);
			_exit(0);
		}
		atomic_store(&shared[1], 1);
		while (atomic_load(&shared[0]) == 0)
			if (futex_call(&shared[0], FUTEX_WAIT, 0, NULL) == 0)
				woken++;
		waitpid(child, NULL, 0);
	}
	printf("parent %d child %d woken %ld\n", (int)getpid(), (int)child, woken);
	return 0;
}

/* ---- pipe ---- */

static int to_reader[2], to_writer[2];
static _Atomic pid_t writer_tid, reader_tid;

/* Both threads on the CPU main runs on (main pins itself first): a blocking writer hands the CPU to the reader it woke. */
static void pin_to_first_cpu(void)
{
	static _Atomic int first_cpu = -1;
	int expected = -1;
	atomic_compare_exchange_strong(&first_cpu, &expected, sched_getcpu());
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(atomic_load(&first_cpu), &set);
	sched_setaffinity(0, sizeof(set), &set);
}

__attribute__((noinline)) static void send_message(void)
{
	spin_until(2, NULL);
	char byte = 'm';
	if (write(to_reader[1], &byte, 1) != 1)
		abort();
}

static void *pipe_writer(void *arg)
{
	(void)arg;
	atomic_store(&writer_tid, gettid_now());
	pin_to_first_cpu();
	char byte;
	for (long r = 1; r <= rounds; r++) {
		send_message();
		if (read(to_writer[0], &byte, 1) != 1)
			abort();
	}
	return NULL;
}

__attribute__((noinline)) static void receive_message(void)
{
	char byte;
	if (read(to_reader[0], &byte, 1) != 1)
		abort();
}

static void *pipe_reader(void *arg)
{
	(void)arg;
	atomic_store(&reader_tid, gettid_now());
	pin_to_first_cpu();
	char byte = 'r';
	for (long r = 1; r <= rounds; r++) {
		receive_message();
		if (write(to_writer[1], &byte, 1) != 1)
			abort();
	}
	return NULL;
}

static int run_threads(void *(*a)(void *), void *(*b)(void *), void *(*c)(void *))
{
	pthread_t t[3];
	void *(*fn[3])(void *) = { a, b, c };
	int n = 0;
	for (int i = 0; i < 3 && fn[i]; i++, n++)
		if (pthread_create(&t[i], NULL, fn[i], NULL)) {
			fprintf(stderr, "pthread_create failed\n");
			return 1;
		}
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	if (argc > 2)
		rounds = atol(argv[2]);
	if (rounds < 1 || rounds > 100000) {
		fprintf(stderr, "wait_endings: N must be 1-100000\n");
		return 2;
	}
	if (strcmp(mode, "hold") == 0) {
		if (run_threads(holder, waiter, NULL))
			return 1;
		printf("holder %d waiter %d rounds %ld\n", (int)holder_tid, (int)waiter_tid, rounds);
	} else if (strcmp(mode, "condvar") == 0) {
		if (run_threads(producer, consumer, NULL))
			return 1;
		printf("producer %d consumer %d rounds %ld\n", (int)producer_tid, (int)consumer_tid, rounds);
	} else if (strcmp(mode, "chain") == 0) {
		if (run_threads(chain_a, chain_b, chain_c))
			return 1;
		printf("a %d b %d c %d rounds %ld\n", (int)a_tid, (int)b_tid, (int)c_tid, rounds);
	} else if (strcmp(mode, "timeout") == 0) {
		long timeouts = 0;
		struct timespec ts = { 0, 2000000 };
		for (long r = 0; r < rounds; r++)
			if (futex_call(&timeout_word, FUTEX_WAIT_PRIVATE, 0, &ts) < 0 && errno == ETIMEDOUT)
				timeouts++;
		printf("timeouts %ld\n", timeouts);
	} else if (strcmp(mode, "signal") == 0) {
		struct sigaction sa = { .sa_handler = on_signal }; /* no SA_RESTART: the wait returns EINTR */
		sigaction(SIGUSR1, &sa, NULL);
		pthread_t t;
		if (pthread_create(&t, NULL, signal_waiter, NULL))
			return 1;
		for (long r = 1; r <= rounds; r++) {
			wait_until(&signal_armed, r);
			while (!atomic_load(&signal_tid) || !thread_sleeps(atomic_load(&signal_tid)))
				sched_yield();
			pthread_kill(t, SIGUSR1);
			while (atomic_load(&interrupted) < r && atomic_load(&signal_armed) == r)
				sched_yield();
		}
		pthread_join(t, NULL);
		printf("waiter %d interrupted %ld\n", (int)signal_tid, (long)interrupted);
	} else if (strcmp(mode, "timer") == 0) {
		for (long r = 0; r < rounds; r++)
			sleep_on_timer();
		printf("sleeps %ld\n", rounds);
	} else if (strcmp(mode, "shared") == 0) {
		return run_shared();
	} else if (strcmp(mode, "pipe") == 0) {
		/*
		 * main pins itself first: its threads start on that CPU with its
		 * mask, so their own pinning moves nothing.  A thread started on
		 * the other CPU slept in sched_setaffinity() until the stopper
		 * (migration/0) moved it: a sleep no write ended.
		 */
		pin_to_first_cpu();
		if (pipe(to_reader) || pipe(to_writer) || run_threads(pipe_reader, pipe_writer, NULL))
			return 1;
		printf("writer %d reader %d rounds %ld\n", (int)writer_tid, (int)reader_tid, rounds);
	} else {
		fprintf(stderr, "usage: wait_endings hold|condvar|chain|timeout|signal|timer|shared|pipe [N]\n");
		return 2;
	}
	return 0;
}
