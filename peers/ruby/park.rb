# park-scale peer: N fibers, each resumed once and suspended, all alive at once.
#
# Usage: ruby peers/ruby/park.rb <N> <LIMIT_S>
# Creates N fibers (Fiber.new { Fiber.yield }) and resumes each once, so that
# it runs to its Fiber.yield and stays suspended there; they are kept in an
# array. Creating stops early where Ruby refuses one more fiber (Ruby 3.1 maps
# each fiber stack with a guard page of its own, so it meets the kernel's
# vm.max_map_count near 32,000 fibers) or after LIMIT_S seconds; the reason is
# printed on stderr, led by the number of memory maps when they are near that
# limit. Prints one line: "n=<N> created=<int> ns=<int> rss_before_kb=<int>
# rss_kb=<int>": the monotonic wall time from the first Fiber.new until the
# last fiber is suspended, VmRSS before the first one and VmRSS with all of
# them suspended, from /proc/self/status.

def usage
  $stderr.puts "usage: park.rb <N> <LIMIT_S>   (N >= 1, plain decimal integers)"
  exit 2
end

usage unless ARGV.size == 2 && ARGV.all? { |a| a =~ /\A\d+\z/ }
n = Integer(ARGV[0], 10)
limit = Integer(ARGV[1], 10)
usage unless n >= 1

def status_kb(key)
  File.read("/proc/self/status")[/^#{key}:\s*(\d+) kB/, 1].to_i
end

def now_ns
  Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond)
end

def grouped(n)
  n.to_s.reverse.scan(/\d{1,3}/).join(",").reverse
end

# Why Ruby refused one more fiber, led by the map count when this process
# holds at least 90 % of the memory maps the kernel allows it (as fibra-bench
# says it of the Rust crates).
def explain(why)
  maps = File.foreach("/proc/self/maps").count
  max = File.read("/proc/sys/vm/max_map_count").to_i
  return why if maps * 10 < max * 9
  "the vm.max_map_count wall (#{grouped(maps)} of #{grouped(max)} maps): #{why}"
end

fibers = []
stopped = nil
before = status_kb("VmRSS")
t0 = now_ns
begin
  n.times do |i|
    if i % 1024 == 0 && now_ns - t0 > limit * 1_000_000_000
      stopped = "the time limit of #{limit} s"
      break
    end
    fiber = Fiber.new { Fiber.yield }
    fiber.resume
    fibers << fiber
  end
rescue StandardError, NoMemoryError => e
  stopped = explain("#{e.class}: #{e.message}")
end
elapsed = now_ns - t0
rss = status_kb("VmRSS")
$stderr.puts stopped if stopped
$stdout.puts "n=#{n} created=#{fibers.size} ns=#{elapsed} rss_before_kb=#{before} rss_kb=#{rss}"
