# E3 peer: IO-bound and CPU-bound work under Ruby Threads and Ractors (MRI >= 3.0
# and JRuby).
#
# Usage: ruby peers/ruby/e3.rb io <ms> [<ms>...]
#        ruby peers/ruby/e3.rb cpu <jobs> <bytes> threads|ractors
# Prints one line: "sequential_ns=<int> threaded_ns=<int>": the wall time
# (monotonic clock) of the work one job after another, then of the same jobs
# in a Thread (or Ractor) each, all joined.
#
# io: each job sleeps the given milliseconds. MRI releases its global lock in
# `sleep`, so the threads sleep at once.
# cpu: each job deflates (Zlib, default level) the same <bytes> of random hex
# text: the digits of xorshift32 outputs from seed 2463534242, each output
# written as 4 little-endian bytes, high nibble first (the same text
# fibra-bench and the Go peer deflate). <bytes> must be a multiple of 8.
# Under MRI's global lock the threads take as long as the loop; Ractors need
# the input made shareable (frozen). A Ruby without Ractor (JRuby 9.3) prints
# "unsupported" on stderr and exits 3 for `ractors`.

def usage
  $stderr.puts "usage: e3.rb io <ms> [<ms>...]   (each a non-negative integer)\n" \
               "       e3.rb cpu <jobs> <bytes> threads|ractors   (jobs >= 1, bytes a multiple of 8)"
  exit 2
end

def now_ns
  Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond)
end

def io(args)
  usage unless args.size >= 1 && args.all? { |a| a =~ /\A\d+\z/ }
  sleeps = args.map { |a| Integer(a, 10) / 1000.0 }
  t0 = now_ns
  sleeps.each { |s| sleep(s) }
  t1 = now_ns
  threads = sleeps.map { |s| Thread.new { sleep(s) } }
  threads.each(&:join)
  t2 = now_ns
  [t1 - t0, t2 - t1]
end

# The hex text every runtime deflates (see the header).
def random_hex(bytes)
  x = 2463534242
  words = Array.new(bytes / 8) do
    x ^= (x << 13) & 0xffffffff
    x ^= x >> 17
    x ^= (x << 5) & 0xffffffff
  end
  words.pack("V*").unpack1("H*")
end

def cpu(args)
  usage unless args.size == 3 && args[0..1].all? { |a| a =~ /\A\d+\z/ } &&
               %w[threads ractors].include?(args[2])
  jobs = Integer(args[0], 10)
  bytes = Integer(args[1], 10)
  usage unless jobs >= 1 && bytes % 8 == 0
  mode = args[2]
  if mode == "ractors" && !defined?(Ractor)
    $stderr.puts "unsupported: no Ractor in #{RUBY_ENGINE} #{RUBY_ENGINE_VERSION}"
    exit 3
  end
  require "zlib"
  text = random_hex(bytes).freeze
  t0 = now_ns
  lengths = Array.new(jobs) { Zlib::Deflate.deflate(text).bytesize }
  t1 = now_ns
  if mode == "threads"
    workers = Array.new(jobs) { Thread.new { Zlib::Deflate.deflate(text).bytesize } }
    lengths += workers.map(&:value)
  else
    Ractor.make_shareable(text)
    workers = Array.new(jobs) { Ractor.new(text) { |t| Zlib::Deflate.deflate(t).bytesize } }
    lengths += workers.map(&:take)
  end
  t2 = now_ns
  abort "deflates of the same input differ in length: #{lengths.uniq}" if lengths.uniq.size != 1
  [t1 - t0, t2 - t1]
end

sequential, threaded =
  case ARGV[0]
  when "io" then io(ARGV[1..])
  when "cpu"
    # Ruby 3.x warns that Ractor is experimental; the warning is not an error.
    Warning[:experimental] = false if Warning.respond_to?(:[]=)
    cpu(ARGV[1..])
  else usage
  end

$stdout.puts "sequential_ns=#{sequential} threaded_ns=#{threaded}"
