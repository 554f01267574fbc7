# ractor-scale peer: N Ractors that each wait for one message (MRI >= 3.0).
#
# Usage: ruby peers/ruby/scale.rb <N> <LIMIT_S>
# Creates N Ractors, each waiting in Ractor.receive, lets the memory settle,
# then sends each its number and takes every reply (the number plus one). Ruby 3.1 gives every
# Ractor an OS thread, so creating stops early where the system refuses one
# more thread (or after LIMIT_S seconds of creating); the Ractors made so far
# are then messaged and taken all the same, and the reason it stopped is
# printed on stderr. Prints one line: "n=<N> created=<int> ns=<int>
# rss_before_kb=<int> idle_kb=<int> peak_kb=<int>": the monotonic wall time of
# all of it but the settle, VmRSS before the first Ractor, VmRSS once settled
# after the last was created (read every 10 ms until 10 reads in a row find no
# new low, at most 5 s: the same in every ractor-scale program; Ruby has no
# cheap way to know that every Ractor has reached its receive) and VmHWM (peak
# RSS) at the end, from /proc/self/status. A Ruby without Ractor prints "unsupported" on stderr and
# exits 3.

def usage
  $stderr.puts "usage: scale.rb <N> <LIMIT_S>   (N >= 1, plain decimal integers)"
  exit 2
end

usage unless ARGV.size == 2 && ARGV.all? { |a| a =~ /\A\d+\z/ }
n = Integer(ARGV[0], 10)
limit = Integer(ARGV[1], 10)
usage unless n >= 1
unless defined?(Ractor)
  $stderr.puts "unsupported: no Ractor in #{RUBY_ENGINE} #{RUBY_ENGINE_VERSION}"
  exit 3
end
# Ruby 3.x warns that Ractor is experimental; the warning is not an error.
Warning[:experimental] = false

def status_kb(key)
  File.read("/proc/self/status")[/^#{key}:\s*(\d+) kB/, 1].to_i
end

# VmRSS once it has stopped falling: read every 10 ms until 10 reads in a row
# find no new low (at most 5 s), the last read.
def settled_kb
  start = now_ns
  last = low = status_kb("VmRSS")
  steady = 0
  while steady < 10 && now_ns - start < 5_000_000_000
    sleep 0.01
    last = status_kb("VmRSS")
    if last < low
      low = last
      steady = 0
    else
      steady += 1
    end
  end
  last
end

def now_ns
  Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond)
end

before = status_kb("VmRSS")
t0 = now_ns
ractors = []
stopped = nil
begin
  n.times do |i|
    if i % 256 == 0 && now_ns - t0 > limit * 1_000_000_000
      stopped = "the time limit of #{limit} s"
      break
    end
    ractors << Ractor.new { Ractor.receive + 1 }
  end
rescue => e
  stopped = "#{e.class}: #{e.message}"
end
# The idle figure, off the clock.
creating = now_ns - t0
idle = settled_kb
t1 = now_ns
ractors.each_with_index { |r, i| r.send(i) }
sum = ractors.sum(&:take)
elapsed = creating + now_ns - t1
created = ractors.size
abort "the replies add up to #{sum}" unless sum == created * (created + 1) / 2
$stderr.puts stopped if stopped
$stdout.puts "n=#{n} created=#{created} ns=#{elapsed} rss_before_kb=#{before} idle_kb=#{idle} peak_kb=#{status_kb("VmHWM")}"
