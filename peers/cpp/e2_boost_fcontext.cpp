// E2 peer: the system calls behind a context switch, with boost.context's raw
// fcontext API (boost::context::detail::make_fcontext / jump_fcontext, as in
// e1_boost_fcontext.cpp), whose switch saves registers only, never the signal
// mask.
//
// Build: c++ -O2 -Wall -Wextra -o OUT peers/cpp/e2_boost_fcontext.cpp -lboost_context
// Usage: OUT <N>
// Prints one line: "switches=<int>", the exact number of jump_fcontext calls.
// Count the system calls with:  strace -f -c OUT <N>
//
// As e2_swapcontext.c: two "threads" (fcontext coroutines) each push one
// element onto their own array and pop it again, N times; after each push+pop
// a thread jumps straight to the other one. Main starts the first thread
// (1 switch), the threads then alternate (2*N - 1 switches), and the second
// thread's last jump goes back to main (1 switch): 2*N + 1 in all. Main then
// checks that both finished ("joined") with empty arrays.
#include <boost/context/detail/fcontext.hpp>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace ctx = boost::context::detail;

namespace {

constexpr std::size_t kStackSize = 64 * 1024;
constexpr int kArrayCap = 16;

// One green thread: its array (a small stack) and its state.
struct Thread {
    int array[kArrayCap];
    int len;
    long done; // iterations completed
};

Thread th[2];
long n_iter;        // N
long long switches; // jump_fcontext calls made

// Where each party is suspended: 0 = main, 1 = thread 0, 2 = thread 1. A
// handle is valid for one jump only, so every jump stores the one it gets back.
ctx::fcontext_t slot[3];

[[noreturn]] void usage() {
    std::fprintf(stderr, "usage: e2_boost_fcontext <N>   (N a positive integer)\n");
    std::exit(2);
}

// Every switch goes through here, so the count is exact: suspends party `from`
// and runs party `to`; returns when some party jumps back to `from`.
void switch_to(int from, int to) {
    switches++;
    ctx::transfer_t t = ctx::jump_fcontext(slot[to], reinterpret_cast<void *>(std::intptr_t{from}));
    slot[reinterpret_cast<std::intptr_t>(t.data)] = t.fctx;
}

// Body of thread k (0 or 1); `t` is the jump that started it.
void run(int k, ctx::transfer_t t) {
    slot[reinterpret_cast<std::intptr_t>(t.data)] = t.fctx;
    Thread *self = &th[k];
    for (long i = 0; i < n_iter; i++) {
        self->array[self->len++] = static_cast<int>(i);                  // push
        if (self->array[--self->len] != static_cast<int>(i)) std::abort(); // pop
        self->done = i + 1;
        // Thread 1's last switch ends the run: back to main.
        switch_to(k + 1, (k == 1 && i == n_iter - 1) ? 0 : 2 - k);
    }
    // Thread 0 gets here after its last switch; it is never resumed again,
    // because thread 1 finishes by switching to main.
    std::abort();
}
void run0(ctx::transfer_t t) { run(0, t); }
void run1(ctx::transfer_t t) { run(1, t); }

// A fresh context running fn on a heap stack (fcontext wants the stack top).
ctx::fcontext_t make(void (*fn)(ctx::transfer_t)) {
    char *stack = static_cast<char *>(std::malloc(kStackSize));
    if (stack == nullptr) { std::perror("malloc"); std::exit(1); }
    return ctx::make_fcontext(stack + kStackSize, kStackSize, fn);
}

} // namespace

int main(int argc, char **argv) {
    if (argc != 2) usage();
    char *end;
    errno = 0;
    n_iter = std::strtol(argv[1], &end, 10);
    if (argv[1][0] < '0' || argv[1][0] > '9' || *end != '\0' || errno != 0 || n_iter < 1 ||
        n_iter > 1000000000000L)
        usage();

    slot[1] = make(run0);
    slot[2] = make(run1);
    switch_to(0, 1);

    // "Join": both threads ran all their iterations and left their arrays empty.
    if (th[0].done != n_iter || th[1].done != n_iter || th[0].len != 0 || th[1].len != 0) {
        std::fprintf(stderr, "threads did not finish cleanly\n");
        return 1;
    }
    std::printf("switches=%lld\n", switches);
    return 0;
}
