# baseline.jq: summary.json (summarize.jq) -> the A/B table of bench/run with
# ACTIONLOOP_BENCH_BASELINE: for each server that has a base-<server> twin, at each wrk
# configuration, this build's and the baseline's medians (req/s; ETags/s for the monitor),
# their ratio, both ratios to nginx and to the Go proxy, and both CPU figures per request.
#   jq -r -f baseline.jq summary.json
def times: if . == null then "—"
    else (. * 100 | round) as $n | "\($n / 100 | floor).\(("0" + ($n % 100 | tostring))[-2:])×" end;
def num: if . == null then "—" else round | tostring end;
def rate: if .batch > 0 then .etags_s else .req_s end;

. as $all
| "| server | wrk | this build | baseline | this / baseline | × nginx (this · base) | × Go (this · base) | CPU µs/request (this · base) |",
  "|---|---|---:|---:|---:|---|---|---|",
  ($all[] | select(.server | startswith("base-") | not) | . as $a
   | ($all | map(select(.server == "base-" + $a.server and .threads == $a.threads
                        and .connections == $a.connections)) | first) as $b
   | select($b != null)
   | "| \($a.label) | -t\($a.threads) -c\($a.connections) | \($a | rate | num) | \($b | rate | num) | \(
       if ($b | rate) > 0 then ($a | rate) / ($b | rate) else null end | times) | \(
       $a.ratio_nginx | times) · \($b.ratio_nginx | times) | \($a.ratio_go | times) · \(
       $b.ratio_go | times) | \($a.cpu_us | num) · \($b.cpu_us | num) |")
