# summarize.jq: raw.csv (one row per wrk run, header first) -> summary.json, one object per
# (server, wrk configuration), in the run's order: medians across repetitions, min–max, the
# ratios to nginx's, the Go proxy's and the bare server's medians at the same configuration
# (null when that peer was not measured, or when a run of it crashed, hung or erred),
# summed errors, the state ("ok", or the states of the runs that were not, e.g. "crashed"),
# the CPU the server and its action used (cpu_us: per request; cores: per second of the run,
# medians), and the peak RSS of the server and of its action process ($rss: [{server, proxy_kb,
# action_kb}]).
def median: sort | if length == 0 then null
    elif length % 2 == 1 then .[length / 2 | floor]
    else (.[length / 2 - 1] + .[length / 2]) / 2 end;

split("\n") | map(select(length > 0) | split(",")) | .[0] as $head
| .[1:] | map([$head, map(tonumber? // .)] | transpose | map({(.[0]): .[1]}) | add)
| . as $rows
| [group_by([.order, .threads, .connections])[]
   | . as $g | $g[0] as $f
   | {server: $f.server, label: $f.label, order: $f.order, batch: $f.batch,
      threads: $f.threads, connections: $f.connections, reps: length,
      req_s: (map(.req_s) | median), req_s_min: (map(.req_s) | min),
      req_s_max: (map(.req_s) | max),
      etags_s: (map(.req_s * .batch) | median),
      etags_s_min: (map(.req_s * .batch) | min), etags_s_max: (map(.req_s * .batch) | max),
      errors: (map(.socket_errors + .status_errors) | add),
      requests: (map(.requests) | add),
      cpu_us: (map(select(.requests > 0 and (.cpu_s // 0) > 0) | .cpu_s * 1e6 / .requests)
               | median),
      cores: (map(select((.cpu_s // 0) > 0) | .cpu_s / .duration_s) | median),
      state: (map(.state // "ok" | select(. != "ok")) | unique
              | if length == 0 then "ok" else join(", ") end),
      bad_runs: (map(select((.state // "ok") != "ok")) | length)}
   + ([["min_us", "p1_us", "p10_us", "p25_us", "p50_us", "p75_us", "p90_us", "p99_us",
        "p999_us", "max_us"][] as $k | {($k): ($g | map(.[$k]) | median)}] | add)
   + (($rss | map(select(.server == $f.server)) | first) // {} | {proxy_kb, action_kb})]
| sort_by([.threads, .connections, .order])
| . as $all
# ratio($peer): this row's median req/s over $peer's at the same configuration, or null when
# $peer was not measured there or did not get through cleanly (crashed, hung, or any error: a
# Go proxy whose connections stall behind a lost answer still answers the check afterwards).
| def ratio($peer): . as $r
    | ($all | map(select(.server == $peer and .threads == $r.threads
                         and .connections == $r.connections and .state == "ok"
                         and .errors == 0 and .req_s > 0)) | first) as $p
    | if $p then $r.req_s / $p.req_s else null end;
  map(. + {ratio_nginx: ratio("nginx"), ratio_go: ratio("go"), ratio_bare: ratio("bare")})
| sort_by([.order, .connections])
