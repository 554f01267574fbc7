# E3 peer: IO-bound work under Ruby Threads (MRI >= 3.0 and JRuby).
#
# Usage: ruby peers/ruby/e3.rb io <ms> [<ms>...]
# Prints one line: "sequential_ns=<int> threaded_ns=<int>": the wall time
# (monotonic clock) of the sleeps one after another, then of the same sleeps
# in a Thread each, all joined. MRI releases its global lock in `sleep`, so the
# threads sleep at once.

def usage
  $stderr.puts "usage: e3.rb io <ms> [<ms>...]   (each a non-negative integer)"
  exit 2
end

usage unless ARGV.size >= 2 && ARGV[0] == "io" && ARGV[1..].all? { |a| a =~ /\A\d+\z/ }
sleeps = ARGV[1..].map { |a| Integer(a, 10) / 1000.0 }

def now_ns
  Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond)
end

t0 = now_ns
sleeps.each { |s| sleep(s) }
t1 = now_ns
threads = sleeps.map { |s| Thread.new { sleep(s) } }
threads.each(&:join)
t2 = now_ns

$stdout.puts "sequential_ns=#{t1 - t0} threaded_ns=#{t2 - t1}"
