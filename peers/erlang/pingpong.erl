%% ractor-pingpong peer: message round trips between two Erlang processes.
%%
%% Build: erlc -o DIR peers/erlang/pingpong.erl
%% Usage: erl -noshell +S 2:2 -pa DIR -run pingpong main <N>
%% Prints one line: "round_trips=<N> ns=<int> p50_ns=<int> p99_ns=<int>": the
%% monotonic wall time of N round trips, each a number sent (`!`) from the
%% first process to the other and sent back plus one (`receive`), and the
%% median and 99th percentile of every 16th round trip, timed alone. An
%% untimed round of N/10 round trips comes first. `+S 2:2` gives the VM two
%% schedulers, as the Go peer has GOMAXPROCS=2.
-module(pingpong).
-export([main/1]).

%% One round trip in this many is timed alone, for the percentiles.
-define(SAMPLE_EVERY, 16).

usage() ->
    io:format(standard_error, "usage: pingpong <N>   (N >= 1, a plain decimal integer)~n", []),
    halt(2).

count(Arg) ->
    case string:to_integer(Arg) of
        {N, ""} when N >= 1, hd(Arg) >= $0, hd(Arg) =< $9 -> N;
        _ -> usage()
    end.

main([Arg]) ->
    N = count(Arg),
    Pong = spawn(fun pong/0),
    play(Pong, N div 10, 0, 0, []),
    T0 = erlang:monotonic_time(nanosecond),
    {Last, Samples} = play(Pong, N, 0, 0, []),
    Elapsed = erlang:monotonic_time(nanosecond) - T0,
    Pong ! stop,
    case Last of
        N -> ok;
        _ ->
            io:format(standard_error, "the last ball came back as ~b, not ~b~n", [Last, N]),
            halt(1)
    end,
    Sorted = lists:sort(Samples),
    io:format("round_trips=~b ns=~b p50_ns=~b p99_ns=~b~n",
              [N, Elapsed, percentile(Sorted, 50), percentile(Sorted, 99)]),
    halt(0);
main(_) ->
    usage().

pong() ->
    receive
        {From, Ball} ->
            From ! Ball + 1,
            pong();
        stop ->
            ok
    end.

%% Makes N round trips; returns the last number back and the times of the
%% sampled ones.
play(_Pong, 0, _I, Ball, Samples) ->
    {Ball, Samples};
play(Pong, N, I, Ball, Samples) when I rem ?SAMPLE_EVERY =:= 0 ->
    T0 = erlang:monotonic_time(nanosecond),
    Back = round_trip(Pong, Ball),
    T = erlang:monotonic_time(nanosecond) - T0,
    play(Pong, N - 1, I + 1, Back, [T | Samples]);
play(Pong, N, I, Ball, Samples) ->
    play(Pong, N - 1, I + 1, round_trip(Pong, Ball), Samples).

round_trip(Pong, Ball) ->
    Pong ! {self(), Ball},
    receive
        Back when is_integer(Back) -> Back
    end.

%% The nearest-rank percentile P of the sorted list Sorted (0 when empty).
percentile([], _P) ->
    0;
percentile(Sorted, P) ->
    Rank = max(1, (P * length(Sorted) + 99) div 100),
    lists:nth(Rank, Sorted).
