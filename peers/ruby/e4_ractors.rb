# frozen_string_literal: true

# E4 and http-throughput peer: a TCPServer whose connections are dealt in turn
# to a pool of Ractors, one per core (moved with `send(conn, move: true)`);
# each Ractor serves each connection it gets in a Thread of its own. One
# Ractor per core, because Ractors are what run Ruby in parallel and there is
# no more parallelism than cores; threads inside each Ractor, because a
# Ractor serving one connection at a time would serve only as many sleeps, or
# keep-alive connections (wrk holds 1,000), at once as there are Ractors.
# Command line and routes: see e4_http.rb.

require "etc"
require_relative "e4_http"

# Ruby 3.x warns that Ractor is experimental; the warning is not an error.
Warning[:experimental] = false
work, server = E4Http.start(ARGV)
workers = Array.new(Etc.nprocessors) do
  Ractor.new(work) do |work|
    loop do
      Thread.new(Ractor.receive) { |conn| E4Http.serve(conn, work) }
    end
  end
end
workers.cycle { |worker| worker.send(server.accept, move: true) }
