%% ractor-fanin peer: N Erlang processes sending to one receiver.
%%
%% Build: erlc -o DIR peers/erlang/fanin.erl
%% Usage: erl -noshell -pa DIR -run fanin main <N> <M>
%% Creates N sender processes, each waiting for a start message; then starts
%% the clock, starts them all, and each sends M div N numbers (0, 1, ...) with
%% `!` to the first process, which receives every one and checks their sum.
%% The VM keeps its default scheduler count (one per core), as Go keeps
%% GOMAXPROCS. Prints one line: "senders=<N> messages=<int> ns=<int>": the
%% messages received (N * (M div N)) and the monotonic wall time from the
%% first start message to the last message received.
-module(fanin).
-export([main/1]).

usage() ->
    io:format(standard_error, "usage: fanin <N> <M>   (1 <= N <= M, plain decimal integers)~n", []),
    halt(2).

count(Arg) ->
    case string:to_integer(Arg) of
        {N, ""} when N >= 1, hd(Arg) >= $0, hd(Arg) =< $9 -> N;
        _ -> usage()
    end.

main([NArg, MArg]) ->
    N = count(NArg),
    M = count(MArg),
    N =< M orelse usage(),
    Each = M div N,
    Self = self(),
    Senders = [spawn(fun() -> sender(Self, Each) end) || _ <- lists:seq(1, N)],
    T0 = erlang:monotonic_time(nanosecond),
    [S ! go || S <- Senders],
    Sum = receive_all(N * Each, 0),
    Elapsed = erlang:monotonic_time(nanosecond) - T0,
    case Sum =:= N * (Each * (Each - 1) div 2) of
        true -> ok;
        false ->
            io:format(standard_error, "the messages add up to ~b~n", [Sum]),
            halt(1)
    end,
    io:format("senders=~b messages=~b ns=~b~n", [N, N * Each, Elapsed]),
    halt(0);
main(_) ->
    usage().

sender(To, Each) ->
    receive
        go -> send(To, 0, Each)
    end.

send(_To, Each, Each) ->
    ok;
send(To, I, Each) ->
    To ! I,
    send(To, I + 1, Each).

receive_all(0, Sum) ->
    Sum;
receive_all(Left, Sum) ->
    receive
        I when is_integer(I) -> receive_all(Left - 1, Sum + I)
    end.
