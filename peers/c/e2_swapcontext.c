/*
 * E2 peer: the system calls behind a context switch, with glibc
 * makecontext/swapcontext (the mechanism behind Ruby 1.8's pthread-enabled
 * green threads in the seed experiment).
 *
 * Build: cc -O2 -Wall -Wextra -o OUT peers/c/e2_swapcontext.c
 * Usage: OUT <N>
 * Prints one line: "switches=<int>", the exact number of swapcontext calls.
 * Count the system calls with:  strace -f -c OUT <N>
 *
 * Two "threads" (ucontext coroutines) each push one element onto their own
 * array and pop it again, N times; after each push+pop a thread switches
 * straight to the other one with swapcontext. Main starts the first thread
 * (1 switch), the threads then alternate (2*N - 1 switches), and the second
 * thread's last switch goes back to main (1 switch): 2*N + 1 in all. Main
 * then checks that both finished ("joined") with empty arrays.
 *
 * glibc's swapcontext saves and restores the signal mask, i.e. makes one
 * rt_sigprocmask system call per switch, so strace shows about 2*N + 1 of
 * them (plus the few the C start-up makes).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

#define STACK_SIZE (64 * 1024)
#define ARRAY_CAP 16

/* One green thread: its context, its array (a small stack) and its state. */
struct thread {
    ucontext_t ctx;
    int array[ARRAY_CAP];
    int len;
    long done; /* iterations completed */
};

static ucontext_t main_ctx;
static struct thread th[2];
static long n_iter;          /* N */
static long long switches;   /* swapcontext calls made */

static void usage(void)
{
    fprintf(stderr, "usage: e2_swapcontext <N>   (N a positive integer)\n");
    exit(2);
}

/* Every switch goes through here, so the count is exact. */
static void switch_to(ucontext_t *from, ucontext_t *to)
{
    switches++;
    if (swapcontext(from, to) != 0) { perror("swapcontext"); exit(1); }
}

/* Body of thread k (0 or 1). */
static void run(int k)
{
    struct thread *self = &th[k], *other = &th[1 - k];
    for (long i = 0; i < n_iter; i++) {
        self->array[self->len++] = (int)i;            /* push */
        if (self->array[--self->len] != (int)i) abort(); /* pop */
        self->done = i + 1;
        /* Thread 1's last switch ends the run: back to main. */
        switch_to(&self->ctx, (k == 1 && i == n_iter - 1) ? &main_ctx : &other->ctx);
    }
    /* Thread 0 gets here after its last switch; it is never resumed again,
     * because thread 1 finishes by switching to main. */
    abort();
}
static void run0(void) { run(0); }
static void run1(void) { run(1); }

static void make(struct thread *t, void (*fn)(void))
{
    if (getcontext(&t->ctx) != 0) { perror("getcontext"); exit(1); }
    t->ctx.uc_stack.ss_sp = malloc(STACK_SIZE);
    if (t->ctx.uc_stack.ss_sp == NULL) { perror("malloc"); exit(1); }
    t->ctx.uc_stack.ss_size = STACK_SIZE;
    t->ctx.uc_link = NULL; /* the bodies never return */
    makecontext(&t->ctx, fn, 0);
}

int main(int argc, char **argv)
{
    if (argc != 2) usage();
    char *end;
    errno = 0;
    n_iter = strtol(argv[1], &end, 10);
    if (argv[1][0] < '0' || argv[1][0] > '9' || *end != '\0' || errno != 0 ||
        n_iter < 1 || n_iter > 1000000000000L)
        usage();

    make(&th[0], run0);
    make(&th[1], run1);
    switch_to(&main_ctx, &th[0].ctx);

    /* "Join": both threads ran all their iterations and left their arrays empty. */
    if (th[0].done != n_iter || th[1].done != n_iter || th[0].len != 0 || th[1].len != 0) {
        fprintf(stderr, "threads did not finish cleanly\n");
        return 1;
    }
    printf("switches=%lld\n", switches);
    return 0;
}
