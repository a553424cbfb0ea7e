# latency.gp: box charts of latency per server, one panel per wrk configuration.
#   gnuplot -e "dir='…'; configs='1 1 1 8 2 64'; ymin=50; ymax=2e6; out='…/latency.png'" latency.gp
# Each dir/latency-t<T>-c<C>.dat row: "label" p1 p25 p50 p75 p99 (µs).
# Box p25–p75, black bar at the median, whiskers p1–p99.
n = words(configs) / 2
set terminal pngcairo size 460 * n + 80, 560 font "DejaVu Sans,10"
set output out
set multiplot layout 1, n \
    title "Latency per request (wrk --latency; box p25–p75, bar p50, whiskers p1–p99)" font ",12"
set logscale y
set yrange [ymin:ymax]  # shared by the panels
set format y "%.0s%c"
set grid ytics mytics lc rgb "#dddddd"
set style fill solid 0.55 border lc rgb "#333333"
set boxwidth 0.6
set xtics rotate by -35 left nomirror
set ytics nomirror
set bmargin 8
set key off
set xrange [-0.7:*]
set offsets 0, 0.7, 0, 0
array colors[8] = [0x4C72B0, 0xDD8452, 0x55A868, 0xC44E52, 0x8172B3, 0x937860, 0xDA8BC3, 0x8C8C8C]
box_color(i) = colors[int(i) % 8 + 1]
do for [i = 1:n] {
    t = word(configs, 2 * i - 1)
    c = word(configs, 2 * i)
    f = sprintf("%s/latency-t%s-c%s.dat", dir, t, c)
    set title sprintf("wrk -t%s -c%s", t, c)
    set ylabel (i == 1 ? "latency (µs)" : "")
    plot f using 0:3:2:6:5:(box_color($0)):xticlabels(1) \
             with candlesticks whiskerbars 0.5 lc rgb variable, \
         f using 0:4:4:4:4 with candlesticks lc rgb "black" lw 2
}
unset multiplot
