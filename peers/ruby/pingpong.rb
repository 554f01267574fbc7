# ractor-pingpong peer: message round trips between two Ractors (MRI >= 3.0).
#
# Usage: ruby peers/ruby/pingpong.rb <N>
# Prints one line: "round_trips=<N> ns=<int>": the monotonic wall time of N
# round trips, each a number sent from the main Ractor to the other with
# Ractor#send and sent back plus one the same way; each side takes it with
# Ractor.receive (push both ways, as a mailbox). An untimed round of N/10
# round trips comes first. A Ruby without Ractor prints "unsupported" on
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

# Makes n round trips with pong and returns the last number back.
def play(pong, n)
  ball = 0
  n.times do
    pong.send(ball)
    ball = Ractor.receive
  end
  ball
end

# nil ends pong's loop.
pong = Ractor.new(Ractor.current) do |ping|
  while (ball = Ractor.receive)
    ping.send(ball + 1)
  end
end
play(pong, n / 10)
t0 = now_ns
last = play(pong, n)
elapsed = now_ns - t0
pong.send(nil)
pong.take
abort "the last ball came back as #{last}, not #{n}" unless last == n
$stdout.puts "round_trips=#{n} ns=#{elapsed}"
