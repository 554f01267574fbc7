# ractor-pingpong peer: message round trips between two Ractors (MRI >= 3.0).
#
# Usage: ruby peers/ruby/pingpong.rb <N>
# Prints one line: "round_trips=<N> ns=<int> p50_ns=<int> p99_ns=<int>": the
# monotonic wall time of N round trips, each a number sent from the main
# Ractor to the other with Ractor#send and sent back plus one the same way;
# each side takes it with Ractor.receive (push both ways, as a mailbox); and
# the median and 99th percentile of every 16th round trip, timed alone. An
# untimed round of N/10 round trips comes first. A Ruby without Ractor prints "unsupported" on
# stderr and exits 3.

def usage
  $stderr.puts "usage: pingpong.rb <N>   (N >= 1, a plain decimal integer)"
  exit 2
end

usage unless ARGV.size == 1 && ARGV[0] =~ /\A\d+\z/
n = Integer(ARGV[0], 10)
usage unless n >= 1
unless defined?(Ractor)
  $stderr.puts "unsupported: no Ractor in #{RUBY_ENGINE} #{RUBY_ENGINE_VERSION}"
  exit 3
end
# Ruby 3.x warns that Ractor is experimental; the warning is not an error.
Warning[:experimental] = false

def now_ns
  Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond)
end

# One round trip in this many is timed alone, for the percentiles.
SAMPLE_EVERY = 16

# Makes n round trips with pong; returns the last number back and the times
# of the sampled ones.
def play(pong, n)
  ball = 0
  samples = []
  n.times do |i|
    t0 = now_ns if (i % SAMPLE_EVERY).zero?
    pong.send(ball)
    ball = Ractor.receive
    samples << now_ns - t0 if (i % SAMPLE_EVERY).zero?
  end
  [ball, samples]
end

# The nearest-rank percentile p of sorted (0 when empty).
def percentile(sorted, p)
  return 0 if sorted.empty?

  sorted[[1, (p * sorted.size + 99) / 100].max - 1]
end

# nil ends pong's loop.
pong = Ractor.new(Ractor.current) do |ping|
  while (ball = Ractor.receive)
    ping.send(ball + 1)
  end
end
play(pong, n / 10)
t0 = now_ns
last, samples = play(pong, n)
elapsed = now_ns - t0
pong.send(nil)
pong.take
abort "the last ball came back as #{last}, not #{n}" unless last == n
samples.sort!
$stdout.puts "round_trips=#{n} ns=#{elapsed} p50_ns=#{percentile(samples, 50)} " \
             "p99_ns=#{percentile(samples, 99)}"
