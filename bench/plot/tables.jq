# tables.jq: summary.json (summarize.jq) -> the Markdown tables bench/run prints:
#   1. side by side: one row per server (the hello servers and the monitor at $batch ETags per
#      request), one column per wrk configuration; each cell the median req/s, its ratios to
#      nginx and to the Go proxy, p50 / p99 and errors, or "crashed/hung" for a server that
#      did not survive a run;
#   2. every row with min–max, the three ratios and the peak RSS;
#   3. the monitor at every batch size (ETags/s);
#   4. the targets of issue 10, measured as ratios in this run.
#   jq -r --arg batch 1000 -f tables.jq summary.json

def commas: round
    | if . < 0 then "-" + (- . | commas)
      elif . >= 1000 then ((. / 1000 | floor) | commas) + "," + ("00" + (. % 1000 | tostring))[-3:]
      else tostring end;
def times: if . == null then "—"
    else (. * 100 | round) as $n | "\($n / 100 | floor).\(("0" + ($n % 100 | tostring))[-2:])×" end;
def verdict(ok): if ok then "met" else "**missed**" end;
def wrk: "-t\(.threads) -c\(.connections)";

. as $all
| ($all | any(.server == "go")) as $has_go
| ($all | map({threads, connections}) | unique | sort_by([.threads, .connections])) as $configs
| def at($s; $t; $c): $all | map(select(.server == $s and .threads == $t and .connections == $c))
                      | first;
  def ratios: "\(.ratio_nginx | times) nginx" + if $has_go then " · \(.ratio_go | times) Go" else "" end;
  def cell: if . == null then "—"
    elif .state != "ok" then
      "**crashed/hung** (\(.state) in \(.bad_runs) of \(.reps) runs) · \(.req_s | commas) req/s"
      + " · \(.errors | commas) errors"
    else "\(.req_s | commas) req/s · \(ratios) · p50 \(.p50_us | commas) / p99 \(.p99_us | commas) µs"
      + " · \(.errors | commas) errors"
      + if .batch > 0 then " · \(.etags_s | commas) ETags/s" else "" end
    end;
  def cpu: if .cpu_us == null then "—"
    else "\(.cpu_us * 10 | round / 10) (\(.cores * 100 | round / 100))" end;
  def rss: "\((.proxy_kb // 0) / 1024 | round) + \((.action_kb // 0) / 1024 | round) MB";

  "Side by side (median req/s · ratio to nginx" + (if $has_go then " and to the Go proxy" else "" end)
  + " at the same configuration · latency · errors summed over the runs):",
  "",
  "| server | " + ($configs | map(wrk) | join(" | ")) + " |",
  "|---|" + ($configs | map("---|") | join("")),
  ($all | map(select(.batch == 0 or .batch == ($batch | tonumber))) | unique_by(.order)[]
   | . as $row
   | "| \(.label) | "
     + ($configs | map(at($row.server; .threads; .connections) | cell) | join(" | ")) + " |"),
  "",
  "Every row:",
  "",
  "| server | wrk | median req/s | min–max req/s | × nginx | × Go | × bare | p50 µs | p99 µs | errors | state | CPU µs/request (cores) | peak RSS proxy + action |",
  "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|",
  ($all[] | select(.batch == 0)
   | "| \(.label) | \(wrk) | \(.req_s | commas) | \(.req_s_min | commas)–\(.req_s_max | commas) | \(
       .ratio_nginx | times) | \(.ratio_go | times) | \(.ratio_bare | times) | \(.p50_us | commas) | \(
       .p99_us | commas) | \(.errors | commas) | \(.state) | \(cpu) | \(rss) |"),
  "",
  "The `monitor` action, 10,000 devices, the generator's mix (13 ETags/device/minute):",
  "",
  "| batch | wrk | median req/s | median ETags/s | min–max ETags/s | × nginx | p50 µs | p99 µs | errors | state | peak RSS proxy + action |",
  "|---:|---|---:|---:|---:|---:|---:|---:|---:|---|---:|",
  ($all[] | select(.batch > 0)
   | "| \(.batch) | \(wrk) | \(.req_s | commas) | \(.etags_s | commas) | \(.etags_s_min | commas)–\(
       .etags_s_max | commas) | \(.ratio_nginx | times) | \(.p50_us | commas) | \(.p99_us | commas) | \(
       .errors | commas) | \(.state) | \(rss) |"),
  "",
  "Targets (issue 10, ratios of medians in this run):",
  "",
  (at("cpp"; 1; 1) as $c1 | at("cpp"; 1; 8) as $c8 | at("cpp"; 2; 64) as $c64
   | at("c"; 1; 1) as $ours_c | at("go"; 1; 1) as $go1
   | def vs_go: if $c1.ratio_go == null
         then if $has_go then "n/a (the Go proxy crashed, hung or erred at -c1)" else "n/a (Go not measured)" end
         else "\($c1.ratio_go | times) Go (≥ 1.15×: \(verdict($c1.ratio_go >= 1.15)))" end;
     def vs_nginx($r; $min): if $r.ratio_nginx == null then "n/a"
         else "\($r.ratio_nginx | times) nginx (≥ \($min)×: \(verdict($r.ratio_nginx >= $min)))" end;
     "targets: C++ hello at -c1 \(vs_go), \(vs_nginx($c1; 0.85)); at -c8 \(vs_nginx($c8; 0.5));"
       + " at -c64 \(vs_nginx($c64; 0.5))",
     "",
     ([$c8, $c64][] | "- C++ hello at \(wrk): \(.ratio_nginx | times) nginx, \(.errors | commas) errors, p99 \(
         .p99_us | commas) µs (target ≥ 0.5×, 0 errors): \(
         verdict(.ratio_nginx != null and .ratio_nginx >= 0.5 and .errors == 0 and .state == "ok"))"),
     (at("cpp-nopoll"; 1; 1) as $n1 | at("cpp-nopoll"; 1; 8) as $n8
      | at("cpp-nopoll"; 2; 64) as $n64
      | if $n1 == null then empty else
          "- the same without the idle poll (OW_SPIN_US=0): -c1 \($n1.ratio_go | times) Go, \(
            $n1.ratio_nginx | times) nginx; -c8 \($n8.ratio_nginx | times) nginx; -c64 \(
            $n64.ratio_nginx | times) nginx. CPU of proxy + action per request, with the poll" +
          " and without: -c1 \($c1.cpu_us | round) / \($n1.cpu_us | round) µs, -c8 \($c8.cpu_us |
            round) / \($n8.cpu_us | round) µs, -c64 \($c64.cpu_us | round) / \($n64.cpu_us | round) µs"
        end),
     (if $has_go and $ours_c != null and $ours_c.ratio_go != null then
        "- the proxies alone (the same C hello behind each) at -t1 -c1: ours \($ours_c.ratio_go | times) Go"
      else empty end),
     (at("monitor-\($batch)"; 1; 8) // empty
      | "- monitor ×\($batch) at -t1 -c8: \(.etags_s | commas) ETags/s, \(.errors | commas) errors" +
        " (issue 10: no worse than 1.4 M ETags/s on a quiet machine)"),
     "- errors in the whole run, ours and nginx: \($all | map(select(.server != "go") | .errors) | add | commas)"
       + (if $has_go then "; the Go proxy: \($all | map(select(.server == "go"))
             | map("\(wrk) \(.state), \(.errors | commas) errors") | join("; "))" else "" end))
