# frozen_string_literal: true

# What the E4 and http-throughput Ruby peers (e4_threads.rb, e4_ractors.rb)
# share: the command line, the listening socket, and serving one connection.
# They differ only in what runs the connections.
#
# Usage: ruby peers/ruby/e4_<threads|ractors>.rb [--port N] [--fib N] [--sleep-ms MS]
# Listens on 127.0.0.1:N (0, the default: any free port), prints one line
# "listening on 127.0.0.1:PORT" once it accepts connections, and serves until
# killed:
#   GET /io      sleeps MS milliseconds (default 2000), answers "io\n"
#   GET /cpu     computes fib(N) (default 43) by naive double recursion,
#                answers its value and "\n"
#   GET /io-cpu  both: sleeps, then computes, answers the value
#   GET /hello   answers "Hello, world!\n" at once
# HTTP/1.1 connections are kept alive unless the client asks to close them;
# HTTP/1.0 ones (ab's) are closed after one response unless it asks for
# keep-alive.

require "optparse"
require "socket"

module E4Http
  # The work the routes do; frozen, so that Ractors can share it.
  Work = Struct.new(:fib, :sleep_s)

  module_function

  # Parses the command line (usage and exit 2 on a bad one), listens, and
  # prints the line that says where; returns the work and the server socket.
  def start(argv)
    port = 0
    fib = 43
    sleep_ms = 2000
    parser = OptionParser.new do |o|
      o.banner = "usage: #{File.basename($PROGRAM_NAME)} [--port N] [--fib N] [--sleep-ms MS]"
      o.on("--port N", Integer) { |v| port = v }
      o.on("--fib N", Integer) { |v| fib = v }
      o.on("--sleep-ms MS", Integer) { |v| sleep_ms = v }
    end
    begin
      rest = parser.parse(argv)
      raise OptionParser::InvalidArgument, rest.join(" ") unless rest.empty?
      negative = [port, fib, sleep_ms].find(&:negative?)
      raise OptionParser::InvalidArgument, negative.to_s if negative
    rescue OptionParser::ParseError => e
      warn e.message, parser.banner
      exit 2
    end
    server = TCPServer.new("127.0.0.1", port)
    $stdout.puts "listening on 127.0.0.1:#{server.addr[1]}"
    $stdout.flush
    [Work.new(fib, sleep_ms / 1000.0).freeze, server]
  end

  # The naive doubly recursive Fibonacci function: the CPU-bound work.
  def fib(n)
    n < 2 ? n : fib(n - 1) + fib(n - 2)
  end

  # The status line and body for `path`.
  def respond(path, work)
    case path
    when "/io"
      sleep(work.sleep_s)
      ["200 OK", "io\n"]
    when "/cpu" then ["200 OK", "#{fib(work.fib)}\n"]
    when "/io-cpu"
      sleep(work.sleep_s)
      ["200 OK", "#{fib(work.fib)}\n"]
    when "/hello" then ["200 OK", "Hello, world!\n"]
    else ["404 Not Found", "not found\n"]
    end
  end

  # Answers the requests of `conn` until the client closes it, or until a
  # response that closes it.
  def serve(conn, work)
    conn.setsockopt(Socket::IPPROTO_TCP, Socket::TCP_NODELAY, 1)
    while (line = conn.gets)
      _method, path, version = line.split
      keep_alive = version == "HTTP/1.1"
      while (header = conn.gets) && header != "\r\n"
        name, value = header.split(":", 2)
        keep_alive = value.strip.casecmp?("keep-alive") if name.casecmp?("connection")
      end
      status, body = respond(path, work)
      conn.write("HTTP/1.1 #{status}\r\nContent-Type: text/plain\r\n" \
                 "Content-Length: #{body.bytesize}\r\n" \
                 "Connection: #{keep_alive ? "keep-alive" : "close"}\r\n\r\n#{body}")
      break unless keep_alive
    end
  rescue SystemCallError, IOError
    # The client went away (wrk drops its connections at the end of a run).
  ensure
    conn.close
  end
end
