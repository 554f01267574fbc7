%% ractor-scale peer: N Erlang processes that each wait for one message.
%%
%% Build: erlc -o DIR peers/erlang/scale.erl
%% Usage: erl -noshell +P 2097152 -pa DIR -run scale main <N> <LIMIT_S>
%% Creates N processes, each blocked in `receive` (stopping early if creating
%% takes more than LIMIT_S seconds, or at the first refusal), waits until
%% every one is waiting (each bumps a shared counter first) and the memory has
%% settled, sends each its number, and collects every reply (the number plus
%% one) in the first process's mailbox. The VM keeps its default scheduler count (one per core),
%% as Go keeps GOMAXPROCS; `+P` lifts the default limit of 1,048,576
%% processes for the --full size.
%% Prints one line: "n=<N> created=<int> ns=<int> rss_before_kb=<int>
%% idle_kb=<int> peak_kb=<int>": the monotonic wall time of all of it but the
%% settle, VmRSS before the first process, VmRSS with all waiting once settled
%% (read every 10 ms until 10 reads in a row find no new low, at most 5 s: the
%% same in every ractor-scale program), and VmHWM (peak RSS) at the end, from
%% /proc/self/status.
-module(scale).
-export([main/1]).

usage() ->
    io:format(standard_error, "usage: scale <N> <LIMIT_S>   (N >= 1, plain decimal integers)~n", []),
    halt(2).

count(Arg) ->
    case string:to_integer(Arg) of
        {N, ""} when N >= 0, hd(Arg) >= $0, hd(Arg) =< $9 -> N;
        _ -> usage()
    end.

main([NArg, LimitArg]) ->
    N = count(NArg),
    Limit = count(LimitArg) * 1000000000,
    N >= 1 orelse usage(),
    Before = status_kb("VmRSS"),
    T0 = erlang:monotonic_time(nanosecond),
    Waiting = counters:new(1, [write_concurrency]),
    Self = self(),
    Pids = create(N, 0, T0, Limit, Waiting, Self, []),
    Created = length(Pids),
    wait_for(Waiting, Created),
    %% Every process alive and waiting: the idle figure, off the clock.
    Creating = erlang:monotonic_time(nanosecond) - T0,
    Idle = settled_kb(),
    T1 = erlang:monotonic_time(nanosecond),
    lists:foldl(fun(Pid, I) -> Pid ! I, I + 1 end, 0, Pids),
    Sum = collect(Created, 0),
    Elapsed = Creating + erlang:monotonic_time(nanosecond) - T1,
    case Sum =:= Created * (Created + 1) div 2 of
        true -> ok;
        false ->
            io:format(standard_error, "the replies add up to ~b~n", [Sum]),
            halt(1)
    end,
    io:format("n=~b created=~b ns=~b rss_before_kb=~b idle_kb=~b peak_kb=~b~n",
              [N, Created, Elapsed, Before, Idle, status_kb("VmHWM")]),
    halt(0);
main(_) ->
    usage().

%% Spawns up to N waiting processes; returns their pids, in order.
create(N, N, _T0, _Limit, _Waiting, _Parent, Pids) ->
    lists:reverse(Pids);
create(N, I, T0, Limit, Waiting, Parent, Pids) ->
    Late = I rem 1024 =:= 0 andalso erlang:monotonic_time(nanosecond) - T0 > Limit,
    case Late of
        true ->
            io:format(standard_error, "the time limit of ~b s~n", [Limit div 1000000000]),
            lists:reverse(Pids);
        false ->
            try spawn(fun() -> wait(Waiting, Parent) end) of
                Pid -> create(N, I + 1, T0, Limit, Waiting, Parent, [Pid | Pids])
            catch
                error:Why ->
                    io:format(standard_error, "spawn failed: ~p~n", [Why]),
                    lists:reverse(Pids)
            end
    end.

wait(Waiting, Parent) ->
    counters:add(Waiting, 1, 1),
    receive
        I -> Parent ! {reply, I + 1}
    end.

wait_for(Waiting, Created) ->
    case counters:get(Waiting, 1) < Created of
        true ->
            timer:sleep(1),
            wait_for(Waiting, Created);
        false ->
            ok
    end.

collect(0, Sum) ->
    Sum;
collect(Left, Sum) ->
    receive
        {reply, R} -> collect(Left - 1, Sum + R)
    end.

%% VmRSS once it has stopped falling: read every 10 ms until 10 reads in a
%% row find no new low (at most 5 s), the last read.
settled_kb() ->
    Start = erlang:monotonic_time(millisecond),
    Rss = status_kb("VmRSS"),
    settle(Start, Rss, Rss, 0).

settle(Start, Last, Low, Steady) ->
    case Steady < 10 andalso erlang:monotonic_time(millisecond) - Start < 5000 of
        false ->
            Last;
        true ->
            timer:sleep(10),
            case status_kb("VmRSS") of
                Rss when Rss < Low -> settle(Start, Rss, Rss, 0);
                Rss -> settle(Start, Rss, Low, Steady + 1)
            end
    end.

%% A "kB" field of /proc/self/status, e.g. VmHWM.
status_kb(Key) ->
    {ok, Status} = file:read_file("/proc/self/status"),
    Prefix = list_to_binary(Key ++ ":"),
    [Line] = [L || L <- binary:split(Status, <<"\n">>, [global]),
                   binary:longest_common_prefix([L, Prefix]) =:= byte_size(Prefix)],
    Rest = binary:part(Line, byte_size(Prefix), byte_size(Line) - byte_size(Prefix)),
    [Kb | _] = string:lexemes(binary_to_list(Rest), " \t"),
    list_to_integer(Kb).
