# E1 peer: coroutine switch rate with Ruby Fibers (MRI >= 3.0 and JRuby).
#
# Usage: ruby peers/ruby/e1.rb <resume|transfer> <N>
#        jruby peers/ruby/e1.rb <resume|transfer> <N>
# Prints one line: "switches=<int> ns=<int>" (ns = wall time of the timed
# loop, from the monotonic clock).
#
# resume:   two fibers loop forever calling Fiber.yield; the main loop resumes
#           the first, then the second, N times: switches = 4*N.
# transfer: two fibers pass control straight to each other with
#           Fiber#transfer, handing a counter along. The counter is the number
#           of transfers made so far, *including* the first one (main -> f1)
#           and the last one (a fiber -> main), so exactly N transfers happen
#           in all and switches = N. N must therefore be at least 2.
#
# Only portable core APIs are used (Fiber, Process.clock_gettime), so the
# script runs unchanged under JRuby (Debian's 9.3 implements Ruby 2.6, where
# Fiber.current and Fiber#transfer still need `require "fiber"`; on MRI 3.1
# that require is a harmless no-op).

require "fiber"

def usage
  $stderr.puts "usage: e1.rb <resume|transfer> <N>   (N a positive integer; >= 2 for transfer)"
  exit 2
end

usage unless ARGV.size == 2 && ARGV[1] =~ /\A\d+\z/
variant = ARGV[0]
n = Integer(ARGV[1], 10)
usage unless %w[resume transfer].include?(variant)
usage if n < 1 || (variant == "transfer" && n < 2)

def now_ns
  Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond)
end

if variant == "resume"
  body = proc { while true; Fiber.yield; end }
  f1 = Fiber.new(&body)
  f2 = Fiber.new(&body)

  t0 = now_ns
  i = 0
  while i < n
    f1.resume # main -> f1, f1 -> main
    f2.resume # main -> f2, f2 -> main
    i += 1
  end
  t1 = now_ns
  switches = 4 * n
else
  # Ruby 3 rule: a fiber that is transferred to may only ever be transferred
  # to (never resumed), so every hand-over here, the first and the last
  # included, uses #transfer. The main (root) fiber is given control back
  # with main.transfer; it is not resuming anything, so that is allowed.
  main = Fiber.current
  f1 = f2 = nil # assigned below, before either fiber first runs
  # Each fiber receives `count`, the number of transfers made so far, and
  # makes the next one: to its peer, or to main if that one is the N-th.
  f1 = Fiber.new do |count|
    while true
      count += 1
      count = (count == n ? main : f2).transfer(count)
    end
  end
  f2 = Fiber.new do |count|
    while true
      count += 1
      count = (count == n ? main : f1).transfer(count)
    end
  end

  t0 = now_ns
  switches = f1.transfer(1) # transfer no. 1: main -> f1
  t1 = now_ns
  raise "transfer count #{switches} != #{n}" unless switches == n
  # f1 and f2 stay suspended; they are dropped at exit.
end

$stdout.puts "switches=#{switches} ns=#{t1 - t0}"
