# E2 peer: the system calls behind a context switch, with Ruby Fibers (MRI >= 3.0).
#
# Usage: ruby peers/ruby/e2.rb <N>
# Prints one line: "switches=<int>", the exact number of Fiber#transfer calls.
# Count the system calls with:  strace -f -c ruby peers/ruby/e2.rb <N>
#
# As peers/c/e2_swapcontext.c: two fibers each push one element onto their own
# array and pop it again, N times; after each push+pop a fiber transfers
# straight to the other one. Main starts the first fiber (1 switch), the
# fibers then alternate (2*N - 1 switches), and the second fiber's last
# transfer goes back to main (1 switch): 2*N + 1 in all. Main then checks that
# both finished ("joined") with empty arrays.
#
# The seed's Ruby 1.8 switched green threads with getcontext/setcontext, one
# rt_sigprocmask per switch; MRI 3's fibers switch with a few instructions of
# assembly of their own, so the count should not grow with N. The interpreter's
# start-up makes a few thousand system calls, the same at any N.

require "fiber"

def usage
  $stderr.puts "usage: e2.rb <N>   (N a positive integer)"
  exit 2
end

usage unless ARGV.size == 1 && ARGV[0] =~ /\A\d+\z/
n = Integer(ARGV[0], 10)
usage if n < 1

main = Fiber.current
switches = 0
arrays = [[], []]
done = [0, 0]
fibers = []
# Ruby 3 rule: a fiber that is transferred to may only ever be transferred to,
# so every hand-over, the first and the last included, uses #transfer.
2.times do |k|
  fibers << Fiber.new do
    array = arrays[k]
    i = 0
    while i < n
      array.push(i)
      raise "popped the wrong element" unless array.pop == i
      i += 1
      done[k] = i
      switches += 1
      # Fiber 1's last switch ends the run: back to main.
      (k == 1 && i == n ? main : fibers[1 - k]).transfer
    end
    # Fiber 0 gets here after its last switch; it is never resumed again,
    # because fiber 1 finishes by switching to main.
    raise "fiber 0 was resumed after its last switch"
  end
end

switches += 1
fibers[0].transfer

# "Join": both fibers ran all their iterations and left their arrays empty.
raise "fibers did not finish cleanly" unless done == [n, n] && arrays.all?(&:empty?)
$stdout.puts "switches=#{switches}"
