# sweep plot of tok_s against budget, sweep decode-grid: render with 'gnuplot THIS_FILE'
set terminal pngcairo noenhanced size 900,560 font 'Sans,11'
set output 'lines.png'
set datafile separator '\t'
set grid
set xlabel 'budget'
set ylabel 'tok_s (tokens/s), median over passes and host, model'
set logscale x 2
set offsets graph 0.03, graph 0.03, 0, 0
set xtics ('256' 256, '1024' 1024, '4096' 4096)
set yrange [0:*]
set title 'decode-grid'
set key at screen 0.5, character 0.4 center bottom horizontal Left reverse box samplen 2 maxcols 2 maxrows 2
set bmargin 7
plot 'lines.dat' index 0 using 1:2:5:6 with yerrorbars lt 1 lw 1.5 pt 0 notitle, 'lines.dat' index 0 using 1:2 with linespoints pt 7 ps 1.2 lw 2 lt 1 title 'system=cache', 'lines.dat' index 1 using 1:2:5:6 with yerrorbars lt 2 lw 1.5 pt 0 notitle, 'lines.dat' index 1 using 1:2 with linespoints pt 7 ps 1.2 lw 2 lt 2 title 'system=baseline', keyentry with yerrorbars lc 'black' lw 1.5 pt 0 title 'bars: min-max over passes and host, model'
