// E1 peer: coroutine switch rate with boost.context's raw fcontext API
// (boost::context::detail::make_fcontext / jump_fcontext, Boost >= 1.61;
// written against Debian 12's Boost 1.74).
//
// Build: c++ -O2 -Wall -Wextra -o OUT peers/cpp/e1_boost_fcontext.cpp -lboost_context
// Usage: OUT <resume|transfer> <N>
// Prints one line: "switches=<int> ns=<int>" (ns = steady_clock wall time of
// the timed loop only). Every switch is one jump_fcontext call.
//
// The API: jump_fcontext(to, data) suspends the caller and runs `to`; when
// somebody later jumps back, it returns {fctx, data} where fctx is the
// suspended context of whoever jumped to us. A context handle is valid for
// one jump only, so every receiver must store the fctx it gets back.
//
// resume:   two coroutines jump back to main at once, forever; main jumps to
//           the first, then the second, N times: switches = 4*N.
// transfer: two coroutines jump straight to each other, handing a counter
//           along in `data`. The counter is the number of jumps made so far,
//           *including* the first one (main -> c1) and the last one
//           (a coroutine -> main), so exactly N jumps happen in all and
//           switches = N. N must therefore be at least 2.
#include <boost/context/detail/fcontext.hpp>

#include <chrono>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace ctx = boost::context::detail;

namespace {

constexpr std::size_t kStackSize = 64 * 1024;

long n_target; // N

[[noreturn]] void usage() {
    std::fprintf(stderr, "usage: e1_boost_fcontext <resume|transfer> <N>   "
                         "(N a positive integer; >= 2 for transfer)\n");
    std::exit(2);
}

// Parses a decimal count in [min, 10^15]; anything else is a usage error.
long parse_count(const char *s, long min) {
    char *end;
    errno = 0;
    long v = std::strtol(s, &end, 10);
    if (s[0] < '0' || s[0] > '9' || *end != '\0' || errno != 0 || v < min ||
        v > 1000000000000000L)
        usage();
    return v;
}

long long now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

// A fresh context running fn on a heap stack (fcontext wants the stack top).
ctx::fcontext_t make(void (*fn)(ctx::transfer_t)) {
    char *stack = static_cast<char *>(std::malloc(kStackSize));
    if (stack == nullptr) { std::perror("malloc"); std::exit(1); }
    return ctx::make_fcontext(stack + kStackSize, kStackSize, fn);
}

// ---- resume ----------------------------------------------------------------

// Jumps back to whoever jumped here (always main), forever.
void yielder(ctx::transfer_t t) {
    for (;;) t = ctx::jump_fcontext(t.fctx, nullptr);
}

// ---- transfer --------------------------------------------------------------

// Where each party is suspended: 0 = main, 1 = c1, 2 = c2.
ctx::fcontext_t slot[3];

// Body of coroutine `self` (1 or 2). Its first entry comes from main (c1) or
// from c1 (c2); after that it is only ever entered by its peer.
void passer(int self, ctx::transfer_t t) {
    const int peer = 3 - self;
    slot[self == 1 ? 0 : 1] = t.fctx;
    for (;;) {
        // t.data = jumps made so far; make the next one, to the peer or, if
        // it is the N-th, to main. A coroutine that jumps to main is never
        // entered again.
        long count = static_cast<long>(reinterpret_cast<std::intptr_t>(t.data)) + 1;
        int dest = count == n_target ? 0 : peer;
        t = ctx::jump_fcontext(slot[dest], reinterpret_cast<void *>(static_cast<std::intptr_t>(count)));
        slot[peer] = t.fctx;
    }
}
void passer1(ctx::transfer_t t) { passer(1, t); }
void passer2(ctx::transfer_t t) { passer(2, t); }

} // namespace

int main(int argc, char **argv) {
    if (argc != 3) usage();
    bool transfer;
    if (std::strcmp(argv[1], "resume") == 0) transfer = false;
    else if (std::strcmp(argv[1], "transfer") == 0) transfer = true;
    else usage();
    n_target = parse_count(argv[2], transfer ? 2 : 1);

    long long switches, t0, t1;
    if (!transfer) {
        ctx::fcontext_t c1 = make(yielder), c2 = make(yielder);
        t0 = now_ns();
        for (long i = 0; i < n_target; i++) {
            c1 = ctx::jump_fcontext(c1, nullptr).fctx; // main -> c1, c1 -> main
            c2 = ctx::jump_fcontext(c2, nullptr).fctx; // main -> c2, c2 -> main
        }
        t1 = now_ns();
        switches = 4LL * n_target;
    } else {
        slot[1] = make(passer1);
        slot[2] = make(passer2);
        t0 = now_ns();
        // Jump no. 1: main -> c1; we get back the counter from jump no. N.
        ctx::transfer_t t = ctx::jump_fcontext(slot[1], reinterpret_cast<void *>(std::intptr_t{1}));
        t1 = now_ns();
        switches = static_cast<long>(reinterpret_cast<std::intptr_t>(t.data));
        if (switches != n_target) {
            std::fprintf(stderr, "count %lld != N\n", switches);
            return 1;
        }
    }
    std::printf("switches=%lld ns=%lld\n", switches, t1 - t0);
    return 0;
}
