# throughput.gp: req/s per server vs wrk configuration, and the monitor's ETags/s.
#   gnuplot -e "req='…/throughput.dat'; req_columns=8; etags='…/etags.dat'; etags_columns=5;
#               out='…/throughput.png'" throughput.gp
# Both files: a header "config <labels…>", then one row per wrk configuration (*_columns: the
# number of columns, labels included).
set terminal pngcairo size 1200, 600 font "DejaVu Sans,10"
set output out
set multiplot layout 1, 2 title "Throughput vs concurrency (median of the repetitions)" font ",12"
set logscale y
set format y "%.0s%c"
set grid ytics mytics xtics lc rgb "#dddddd"
set key below horizontal
array colors[8] = [0x4C72B0, 0xDD8452, 0x55A868, 0xC44E52, 0x8172B3, 0x937860, 0xDA8BC3, 0x8C8C8C]
color(i) = colors[int(i) % 8 + 1]  # the same colors as latency.gp, by server order
set xrange [-0.3:2.3]
set style data linespoints
set title "requests/s"
set ylabel "requests/s"
plot for [i = 2:req_columns] req using 0:i:xticlabels(1) title columnheader(i) \
    lw 2 pt 7 ps 1.2 lc rgb color(i - 2)
set title "ETags/s (monitor: req/s × batch size)"
set ylabel "ETags/s"
first = req_columns - etags_columns  # the batch servers come last
plot for [i = 2:etags_columns] etags using 0:i:xticlabels(1) title columnheader(i) \
    lw 2 pt 7 ps 1.2 lc rgb color(first + i - 2)
unset multiplot
