/*
 * E1 peer: coroutine switch rate with glibc makecontext/swapcontext.
 *
 * Build: cc -O2 -Wall -Wextra -o OUT peers/c/e1_swapcontext.c
 * Usage: OUT <resume|transfer> <N>
 * Prints one line: "switches=<int> ns=<int>" (ns = CLOCK_MONOTONIC wall time
 * of the timed loop only).
 *
 * resume:   two coroutines loop forever swapping back to main at once; main
 *           switches to the first, then the second, N times: switches = 4*N.
 * transfer: two coroutines swap straight to each other, handing a counter
 *           along. The counter is the number of switches made so far,
 *           *including* the first one (main -> c1) and the last one
 *           (a coroutine -> main), so exactly N swapcontext calls happen in
 *           all and switches = N. N must therefore be at least 2.
 *
 * Note: glibc's swapcontext also saves and restores the signal mask, i.e.
 * makes one rt_sigprocmask system call per switch (see e2_swapcontext.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>

#define STACK_SIZE (64 * 1024)

static ucontext_t main_ctx, c1_ctx, c2_ctx;
static long n_target;   /* N */
static long count;      /* transfer: switches made so far (the handed counter) */

static void usage(void)
{
    fprintf(stderr, "usage: e1_swapcontext <resume|transfer> <N>   "
                    "(N a positive integer; >= 2 for transfer)\n");
    exit(2);
}

/* Parses a decimal count in [min, 10^15]; anything else is a usage error. */
static long parse_count(const char *s, long min)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (s[0] < '0' || s[0] > '9' || *end != '\0' || errno != 0 || v < min || v > 1000000000000000L)
        usage();
    return v;
}

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* resume: each coroutine yields back to main, forever. */
static void yielder1(void) { for (;;) swapcontext(&c1_ctx, &main_ctx); }
static void yielder2(void) { for (;;) swapcontext(&c2_ctx, &main_ctx); }

/* transfer: take the counter, count the next switch, and make it: to the
 * peer, or to main if it is the N-th. A coroutine is never resumed after its
 * switch to main, so it never returns. */
static void passer(ucontext_t *self, ucontext_t *peer)
{
    for (;;) {
        count++;
        swapcontext(self, count == n_target ? &main_ctx : peer);
    }
}
static void passer1(void) { passer(&c1_ctx, &c2_ctx); }
static void passer2(void) { passer(&c2_ctx, &c1_ctx); }

/* Set up ctx to run fn on a fresh heap stack. */
static void make(ucontext_t *ctx, void (*fn)(void))
{
    if (getcontext(ctx) != 0) { perror("getcontext"); exit(1); }
    ctx->uc_stack.ss_sp = malloc(STACK_SIZE);
    if (ctx->uc_stack.ss_sp == NULL) { perror("malloc"); exit(1); }
    ctx->uc_stack.ss_size = STACK_SIZE;
    ctx->uc_link = &main_ctx; /* unused: the functions never return */
    makecontext(ctx, fn, 0);
}

int main(int argc, char **argv)
{
    if (argc != 3)
        usage();
    int transfer;
    if (strcmp(argv[1], "resume") == 0) transfer = 0;
    else if (strcmp(argv[1], "transfer") == 0) transfer = 1;
    else usage();
    n_target = parse_count(argv[2], transfer ? 2 : 1);

    long long switches, t0, t1;
    if (!transfer) {
        make(&c1_ctx, yielder1);
        make(&c2_ctx, yielder2);
        t0 = now_ns();
        for (long i = 0; i < n_target; i++) {
            swapcontext(&main_ctx, &c1_ctx); /* main -> c1, c1 -> main */
            swapcontext(&main_ctx, &c2_ctx); /* main -> c2, c2 -> main */
        }
        t1 = now_ns();
        switches = 4LL * n_target;
    } else {
        make(&c1_ctx, passer1);
        make(&c2_ctx, passer2);
        t0 = now_ns();
        count = 1;                        /* switch no. 1: main -> c1 */
        swapcontext(&main_ctx, &c1_ctx);
        t1 = now_ns();
        if (count != n_target) { fprintf(stderr, "count %ld != N\n", count); return 1; }
        switches = count;
    }
    printf("switches=%lld ns=%lld\n", switches, t1 - t0);
    return 0;
}
