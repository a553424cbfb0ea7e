# columns.jq: summary.json -> a gnuplot table, header "config <labels...>", then one row per
# wrk configuration with $field of each server (NaN, not drawn, when missing, 0, or
# from a server that crashed or hung in a run). $batches: only the servers
# that take ETag batches (the monitor).
[.[] | select(if $batches then .batch > 0 else true end)] as $rows
| ($rows | unique_by(.order) | map(.label)) as $labels
| (["config"] + ($labels | map("\"\(.)\"")) | join(" ")),
  ($rows | group_by([.threads, .connections])[]
   | . as $g
   | (["\"-t\(.[0].threads) -c\(.[0].connections)\""]
      + ($labels | map(. as $l | ($g | map(select(.label == $l)) | first)
                       | if . != null and (.state // "ok") == "ok" and .[$field] > 0
                         then .[$field] | tostring else "NaN" end)))
   | join(" "))
