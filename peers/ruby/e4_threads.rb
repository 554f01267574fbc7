# frozen_string_literal: true

# E4 and http-throughput peer: a TCPServer whose connections are each served
# by a Thread of its own (MRI: one global lock, so the threads take turns on
# the CPU but sleep at once). A thread per connection rather than a fixed
# pool: wrk holds 1,000 keep-alive connections open at once, so a pool would
# need 1,000 threads anyway. Command line and routes: see e4_http.rb.

require_relative "e4_http"

work, server = E4Http.start(ARGV)
loop do
  Thread.new(server.accept) { |conn| E4Http.serve(conn, work) }
end
